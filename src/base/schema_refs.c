/*
 * schema_refs.c — identifiers and references: $schema, $id, $anchor,
 * $dynamicAnchor, $ref and $dynamicRef.
 *
 * While a document compiles, every $id makes a schema resource (an
 * absolute URI naming a sub-schema) and every anchor a name within its
 * resource; $refs are resolved against their base URI and queued. When the
 * whole document is known the queue is worked off: a URI names a resource
 * of this schema, the built-in draft-07 meta-schema, or a document the
 * caller's fetch hands over (the test suite's remotes) — anything else is
 * refused, here, at compile time. A fragment is a JSON pointer into the
 * resource (compiling what it reaches if nothing compiled it yet) or an
 * anchor. Last, $ref loops that never look into the value ({"$ref": "#"}
 * at the root) are refused: validating would never end.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "schema_int.h"

/* ---- cJSON* -> node --------------------------------------------------- */

static size_t slot_of(const void *p, size_t cap) {
  uint64_t h = (uint64_t)(uintptr_t)p * 0x9E3779B97F4A7C15ull;
  return (size_t)(h >> 17) & (cap - 1);
}

static int map_grow(sc_map *m) {
  sc_map g = {0};
  g.cap = m->cap ? m->cap * 2 : 64;
  g.keys = calloc(g.cap, sizeof *g.keys);
  g.vals = calloc(g.cap, sizeof *g.vals);
  if (!g.keys || !g.vals) {
    free(g.keys);
    free(g.vals);
    return -1;
  }
  for (size_t i = 0; i < m->cap; i++)
    if (m->keys[i]) tg__sc_map_put(&g, m->keys[i], m->vals[i]);
  free(m->keys);
  free(m->vals);
  *m = g;
  return 0;
}

int tg__sc_map_put(sc_map *m, const cJSON *k, sc_node *v) {
  if ((m->n + 1) * 2 > m->cap && map_grow(m) < 0) return -1;
  size_t i = slot_of(k, m->cap);
  while (m->keys[i] && m->keys[i] != k) i = (i + 1) & (m->cap - 1);
  if (!m->keys[i]) m->n++;
  m->keys[i] = k;
  m->vals[i] = v;
  return 0;
}

sc_node *tg__sc_map_get(const sc_map *m, const cJSON *k) {
  if (!m->cap) return NULL;
  for (size_t i = slot_of(k, m->cap); m->keys[i]; i = (i + 1) & (m->cap - 1))
    if (m->keys[i] == k) return m->vals[i];
  return NULL;
}

/* ---- $schema ------------------------------------------------------------ */

int tg__sc_draft_of(const char *uri) {
  static const struct {
    const char *uri;
    int draft;
  } known[] = {
      {"http://json-schema.org/draft-07/schema", SC_DRAFT7},
      {"https://json-schema.org/draft-07/schema", SC_DRAFT7},
      {"https://json-schema.org/draft/2020-12/schema", SC_DRAFT2020},
      {"http://json-schema.org/draft/2020-12/schema", SC_DRAFT2020},
  };
  size_t n = strlen(uri);
  if (n && uri[n - 1] == '#') n--; /* "...schema#" is the same */
  for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
    if (strlen(known[i].uri) == n && !strncmp(known[i].uri, uri, n))
      return known[i].draft;
  return 0;
}

static int read_draft(sc_compiler *c, const cJSON *j, const seg *at,
                      sc_scope *sc) {
  const cJSON *d = cJSON_GetObjectItemCaseSensitive(j, "$schema");
  if (!d) return 0;
  if (!cJSON_IsString(d)) return tg__sc_bad_kw(c, at, "$schema", "must be a string");
  int draft = tg__sc_draft_of(d->valuestring);
  if (!draft) {
    sc_out *o = tg__sc_bad_at(c, at);
    tg__sc_str(o, "'$schema' ");
    tg__sc_quoted(o, d->valuestring);
    tg__sc_str(o, " is not a draft toolgate knows (draft 2020-12: "
                  "https://json-schema.org/draft/2020-12/schema, draft-07: "
                  "http://json-schema.org/draft-07/schema#)");
    return -1;
  }
  sc->draft = draft;
  return 0;
}

/* ---- resources and anchors --------------------------------------------- */

static sc_resource *find_resource(const tg_schema *s, const char *uri,
                                  size_t n) {
  for (sc_resource *r = s->resources; r; r = r->next)
    if (strlen(r->uri) == n && !strncmp(r->uri, uri, n)) return r;
  return NULL;
}

sc_resource *tg__sc_add_resource(sc_compiler *c, const char *uri,
                                 const cJSON *json, const seg *at) {
  if (find_resource(c->s, uri, strlen(uri))) {
    sc_out *o = tg__sc_bad_at(c, at);
    tg__sc_str(o, "'$id' ");
    tg__sc_quoted(o, uri);
    tg__sc_str(o, " names two schemas");
    return NULL;
  }
  sc_resource *r = tg__sc_alloc(&c->s->arena, sizeof *r);
  if (!r || !(r->uri = tg__sc_strdup(&c->s->arena, uri))) {
    tg__sc_nomem(c);
    return NULL;
  }
  r->json = json;
  r->next = c->s->resources;
  c->s->resources = r;
  return r;
}

static sc_anchor *find_anchor(const sc_resource *r, const char *name) {
  for (sc_anchor *a = r->anchors; a; a = a->next)
    if (!strcmp(a->name, name)) return a;
  return NULL;
}

/* $anchor's syntax (2020-12), which draft-07's "#name" ids follow too. */
static int anchor_name_ok(const char *s) {
  if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_'))
    return 0;
  for (s++; *s; s++)
    if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') ||
          (*s >= '0' && *s <= '9') || strchr("-._:", *s)))
      return 0;
  return 1;
}

static int add_anchor(sc_compiler *c, sc_node *n, const char *kw,
                      const char *name, const seg *at, int dynamic) {
  if (!anchor_name_ok(name)) {
    sc_out *o = tg__sc_bad_at(c, at);
    tg__sc_str(o, "'");
    tg__sc_str(o, kw);
    tg__sc_str(o, "' ");
    tg__sc_quoted(o, name);
    tg__sc_str(o, " is not a valid anchor name (a letter or _, then "
                  "letters, digits, - _ . :)");
    return -1;
  }
  sc_anchor *a = find_anchor(n->res, name);
  if (a && a->node == n) {
    a->dynamic |= dynamic;
    return 0;
  }
  if (a) {
    sc_out *o = tg__sc_bad_at(c, at);
    tg__sc_str(o, "anchor ");
    tg__sc_quoted(o, name);
    tg__sc_str(o, " is defined twice in the same schema resource");
    return -1;
  }
  if (!(a = tg__sc_alloc(&c->s->arena, sizeof *a)) ||
      !(a->name = tg__sc_strdup(&c->s->arena, name)))
    return tg__sc_nomem(c);
  a->node = n;
  a->dynamic = dynamic;
  a->next = n->res->anchors;
  n->res->anchors = a;
  return 0;
}

/* A new base URI (and resource) for uri, unless it is the current one. */
static int enter_resource(sc_compiler *c, sc_node *n, const char *uri,
                          const cJSON *j, const seg *at, sc_scope *sc) {
  if (sc->res && !strcmp(sc->res->uri, uri)) return 0;
  sc_resource *r = tg__sc_add_resource(c, uri, j, at);
  if (!r) return -1;
  r->root = n;
  sc->res = r;
  sc->base = r->uri;
  return 0;
}

/* $id: a new base URI; in draft-07 it may carry (or be) a "#name". */
static int read_id(sc_compiler *c, sc_node *n, const cJSON *id,
                   const cJSON *j, const seg *at, sc_scope *sc) {
  if (!cJSON_IsString(id)) return tg__sc_bad_kw(c, at, "$id", "must be a string");
  char *abs = tg__sc_uri_resolve(&c->s->arena, sc->base, id->valuestring);
  size_t len;
  char *frag = abs ? tg__sc_uri_fragment(&c->s->arena, abs, &len) : NULL;
  if (!abs || (strchr(abs, '#') && !frag)) return tg__sc_nomem(c);
  if (frag && *frag && sc->draft == SC_DRAFT2020)
    return tg__sc_bad_kw(c, at, "$id", "must not have a fragment in draft "
                                        "2020-12 (name the place with "
                                        "$anchor)");
  abs[len] = '\0';
  if (!(id->valuestring[0] == '#') &&
      enter_resource(c, n, abs, j, at, sc) < 0)
    return -1;
  n->res = sc->res;
  return frag && *frag ? add_anchor(c, n, "$id", frag, at, 0) : 0;
}

static int read_anchors(sc_compiler *c, sc_node *n, const cJSON *j,
                        const seg *at) {
  static const char *const kws[] = {"$anchor", "$dynamicAnchor"};
  for (int dyn = 0; dyn < 2; dyn++) {
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(j, kws[dyn]);
    if (!a) continue;
    if (!cJSON_IsString(a)) return tg__sc_bad_kw(c, at, kws[dyn], "must be a string");
    if (add_anchor(c, n, kws[dyn], a->valuestring, at, dyn) < 0) return -1;
  }
  return 0;
}

int tg__sc_identify(sc_compiler *c, sc_node *n, const cJSON *j,
                    const seg *at, sc_scope *sc) {
  int obj = cJSON_IsObject(j);
  if (obj && read_draft(c, j, at, sc) < 0) return -1;
  n->draft = (short)sc->draft;
  if (!sc->res && enter_resource(c, n, sc->base, j, at, sc) < 0) return -1;
  n->res = sc->res;
  if (!obj) return 0;
  const cJSON *id = cJSON_GetObjectItemCaseSensitive(j, "$id");
  /* draft-07: every keyword beside $ref is ignored, $id too */
  if (sc->draft == SC_DRAFT7 && cJSON_GetObjectItemCaseSensitive(j, "$ref"))
    id = NULL;
  if (id && read_id(c, n, id, j, at, sc) < 0) return -1;
  return sc->draft == SC_DRAFT2020 ? read_anchors(c, n, j, at) : 0;
}

/* ---- $ref -------------------------------------------------------------- */

/* "schema at $.a.b" as a string, for messages about the $ref there. */
static char *where_text(sc_compiler *c, const seg *at) {
  char buf[600];
  sc_out o = tg__sc_out_make(buf, sizeof buf);
  sc_out *saved = c->err;
  c->err = &o;
  tg__sc_bad_at(c, at);
  c->err = saved;
  if (o.len >= 2) buf[o.len - 2] = '\0'; /* the ": " */
  return tg__sc_strdup(&c->s->arena, buf);
}

int tg__sc_add_ref(sc_compiler *c, sc_node *n, const cJSON *r, const seg *at,
                   const sc_scope *sc, int dynamic) {
  const char *kw = dynamic ? "$dynamicRef" : "$ref";
  if (!cJSON_IsString(r)) return tg__sc_bad_kw(c, at, kw, "must be a string");
  sc_pending *p = tg__sc_alloc(&c->s->arena, sizeof *p);
  if (!p || !(p->uri = tg__sc_uri_resolve(&c->s->arena, sc->base,
                                          r->valuestring)) ||
      !(p->where = where_text(c, at)))
    return tg__sc_nomem(c);
  p->from = n;
  p->written = r->valuestring;
  p->dynamic = dynamic;
  p->next = c->pending;
  c->pending = p;
  return 0;
}

static int bad_ref(sc_compiler *c, const sc_pending *p, const char *msg) {
  sc_out *o = c->err;
  tg__sc_str(o, p->where);
  tg__sc_str(o, p->dynamic ? ": '$dynamicRef' " : ": '$ref' ");
  tg__sc_quoted(o, p->written);
  tg__sc_str(o, msg);
  return -1;
}

/* Compiles document doc (now owned by the schema), found at uri. */
static sc_resource *load(sc_compiler *c, cJSON *doc, const char *uri,
                         int draft) {
  if (tg__sc_keep_doc(c->s, doc) < 0) {
    tg__sc_nomem(c);
    return NULL;
  }
  sc_scope sc = {uri, NULL, draft};
  const char *label = c->doc_label;
  c->doc_label = uri;
  sc_node *root = tg__sc_compile_node(c, doc, NULL, &sc, 0);
  c->doc_label = label;
  return root ? find_resource(c->s, uri, strlen(uri)) : NULL;
}

/* The resource at uri: known, built in, or fetched. */
static sc_resource *resource_for(sc_compiler *c, const sc_pending *p,
                                 const char *uri) {
  sc_resource *r = find_resource(c->s, uri, strlen(uri));
  if (r) return r;
  const char *text = tg__sc_builtin(uri);
  cJSON *doc = text ? tg_json_parse(text, strlen(text), NULL, NULL, 0)
               : c->fetch ? c->fetch(c->fetch_ud, uri) : NULL;
  if (doc) return load(c, doc, uri, p->from->draft);
  if (text) {
    tg__sc_nomem(c);
    return NULL;
  }
  bad_ref(c, p, " points outside this schema: remote references are not "
                "supported (only the schema's own $id, $anchor and "
                "#/json/pointer places, and the draft-07 meta-schema)");
  return NULL;
}

/* The node the pointer frag reaches in r, compiled now if need be. */
static sc_node *at_pointer(sc_compiler *c, const sc_pending *p,
                           const sc_resource *r, const char *frag) {
  sc_node *seen = r->root;
  const cJSON *j = tg__sc_pointer(r->json, frag, &c->map, &seen);
  if (!j) {
    bad_ref(c, p, " points at nothing in the schema");
    return NULL;
  }
  sc_node *n = tg__sc_map_get(&c->map, j);
  if (n) return n;
  char buf[512];
  sc_out o = tg__sc_out_make(buf, sizeof buf);
  tg__sc_pointer_path(&o, r->json, frag);
  const char *prefix = c->prefix;
  if (!(c->prefix = tg__sc_strdup(&c->s->arena, buf))) {
    tg__sc_nomem(c);
    return NULL;
  }
  sc_scope sc = {seen->res->uri, seen->res, seen->draft};
  n = tg__sc_compile_node(c, j, NULL, &sc, 0);
  c->prefix = prefix;
  return n;
}

static int resolve(sc_compiler *c, const sc_pending *p) {
  size_t len;
  char *frag = tg__sc_uri_fragment(&c->s->arena, p->uri, &len);
  char *uri = tg__sc_strndup(&c->s->arena, p->uri, len);
  if (!uri || (strchr(p->uri, '#') && !frag)) return tg__sc_nomem(c);
  sc_resource *r = resource_for(c, p, uri);
  if (!r) return -1;
  sc_node *target = r->root;
  sc_anchor *a = NULL;
  if (frag && frag[0] == '/') {
    target = at_pointer(c, p, r, frag);
  } else if (frag && *frag) {
    a = find_anchor(r, frag);
    target = a ? a->node : NULL;
    if (!a) bad_ref(c, p, " names an anchor the schema does not define");
  }
  if (!target) return -1;
  sc_node *n = p->from;
  if (!p->dynamic) {
    n->ref = target;
    n->ref_written = p->written;
    n->ref_where = p->where;
  } else {
    n->dyn_ref = target;
    if (a && a->dynamic) n->dyn_anchor = a->name;
  }
  return 0;
}

/* ---- loops -------------------------------------------------------------- */

/* The k-th sub-schema n applies to the same value in *out (NULL: that
 * keyword is absent); 0 past the last. ($dynamicRef is left out: its
 * target depends on the path taken, and validation bounds its depth.) */
static int inplace(const sc_node *n, size_t k, sc_node **out) {
  const sc_list *lists[] = {&n->all_of, &n->any_of, &n->one_of};
  sc_node *single[] = {n->ref, n->not_, n->if_, n->then_, n->else_};
  if (k < 5) {
    *out = single[k];
    return 1;
  }
  k -= 5;
  for (int i = 0; i < 3; i++) {
    if (k < lists[i]->n) {
      *out = lists[i]->v[k];
      return 1;
    }
    k -= lists[i]->n;
  }
  *out = k < n->ndep_sch ? n->dep_sch[k].node : NULL;
  return k < n->ndep_sch;
}

enum { WHITE, GREY, BLACK };

typedef struct {
  sc_node *n;
  size_t k;
} frame;

/* Reports the loop that runs through the frames from `from` on. */
static int report_loop(sc_compiler *c, const frame *st, size_t from,
                       size_t top) {
  for (size_t i = from; i <= top; i++) {
    const sc_node *n = st[i].n;
    if (!n->ref || !n->ref_where) continue;
    tg__sc_str(c->err, n->ref_where);
    tg__sc_str(c->err, ": '$ref' ");
    tg__sc_quoted(c->err, n->ref_written);
    tg__sc_str(c->err, " leads back to itself without looking into the "
                       "value: validating would never end");
    return -1;
  }
  return tg__sc_bad(c, NULL, "a $ref loop never looks into the value");
}

/* Depth-first from root over in-place edges, with a stack of our own (a
 * long $ref chain must not exhaust the C stack). */
static int check_from(sc_compiler *c, sc_node *root, frame **st,
                      size_t *cap) {
  size_t top = 0;
  (*st)[0] = (frame){root, 0};
  root->mark = GREY;
  for (;;) {
    frame *f = &(*st)[top];
    sc_node *next;
    if (!inplace(f->n, f->k++, &next)) {
      f->n->mark = BLACK;
      if (top-- == 0) return 0;
      continue;
    }
    if (!next || next->mark == BLACK) continue;
    if (next->mark == GREY) {
      size_t i = top;
      while ((*st)[i].n != next) i--;
      return report_loop(c, *st, i, top);
    }
    if (top + 1 == *cap) {
      frame *g = realloc(*st, *cap * 2 * sizeof *g);
      if (!g) return tg__sc_nomem(c);
      *st = g;
      *cap *= 2;
    }
    next->mark = GREY;
    (*st)[++top] = (frame){next, 0};
  }
}

static int check_loops(sc_compiler *c) {
  size_t cap = 64;
  frame *st = malloc(cap * sizeof *st);
  if (!st) return tg__sc_nomem(c);
  int rc = 0;
  /* in the order compiled: the loop told is the same on every run */
  for (sc_node *n = c->first; n && rc == 0; n = n->next_compiled)
    if (n->mark == WHITE) rc = check_from(c, n, &st, &cap);
  free(st);
  return rc;
}

int tg__sc_resolve_refs(sc_compiler *c) {
  /* the queue is a stack; reverse it so messages follow document order */
  while (c->pending) {
    sc_pending *todo = NULL;
    while (c->pending) {
      sc_pending *p = c->pending;
      c->pending = p->next;
      p->next = todo;
      todo = p;
    }
    for (; todo; todo = todo->next)
      if (resolve(c, todo) < 0) return -1;
  }
  return check_loops(c);
}
