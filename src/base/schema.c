/*
 * schema.c — JSON Schema's entry points: compile a document into a
 * tg_schema (schema_compile.c, schema_refs.c), validate values against it
 * (schema_validate.c, schema_apply.c), free it; and the arena every part
 * of a compiled schema lives in.
 */
#include <errno.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "schema_int.h"

/* The base URI of a schema that has no $id of its own: relative $refs
 * and $ids resolve against it. */
#define DEFAULT_BASE "urn:toolgate:schema"
/* tg_schema_errors' list, when the caller sets no bound. */
#define DEFAULT_MAX_ERRORS 100

/* ---- arena ------------------------------------------------------------ */

struct sc_chunk {
  sc_chunk *next;
  size_t cap;
  max_align_t data[];
};

void *tg__sc_alloc(sc_arena *a, size_t n) {
  n = (n + alignof(max_align_t) - 1) & ~(alignof(max_align_t) - 1);
  if (!a->head || a->cap - a->used < n) {
    size_t cap = n > 4096 ? n : 4096;
    sc_chunk *c = malloc(sizeof *c + cap);
    if (!c) return NULL;
    c->next = a->head;
    c->cap = cap;
    a->head = c;
    a->used = 0;
    a->cap = cap;
  }
  void *p = (char *)a->head->data + a->used;
  a->used += n;
  memset(p, 0, n);
  return p;
}

char *tg__sc_strndup(sc_arena *a, const char *s, size_t n) {
  char *d = tg__sc_alloc(a, n + 1);
  if (!d) return NULL;
  memcpy(d, s, n);
  d[n] = '\0';
  return d;
}

char *tg__sc_strdup(sc_arena *a, const char *s) {
  return tg__sc_strndup(a, s, strlen(s));
}

void tg__sc_arena_free(sc_arena *a) {
  for (sc_chunk *c = a->head, *next; c; c = next) {
    next = c->next;
    free(c);
  }
  a->head = NULL;
}

/* ---- compile / free --------------------------------------------------- */

void tg_schema_free(tg_schema *s) {
  if (!s) return;
  for (sc_regex_ref *r = s->regexes; r; r = r->next) tg__sc_regex_free(r->re);
  for (sc_doc *d = s->docs; d; d = d->next) cJSON_Delete(d->json);
  tg__sc_arena_free(&s->arena);
  free(s);
}

int tg__sc_keep_doc(tg_schema *s, cJSON *json) {
  sc_doc *d = tg__sc_alloc(&s->arena, sizeof *d);
  if (!d) {
    cJSON_Delete(json);
    return -1;
  }
  d->json = json;
  d->next = s->docs;
  s->docs = d;
  return 0;
}

static int compile_root(sc_compiler *c, const cJSON *doc, int draft) {
  sc_scope sc = {DEFAULT_BASE, NULL, draft};
  c->s->root = tg__sc_compile_node(c, doc, NULL, &sc, 0);
  if (!c->s->root || tg__sc_resolve_refs(c) < 0) return -1;
  return 0;
}

tg_schema *tg__schema_compile(const cJSON *doc, int copy,
                              const tg__schema_opts *opts, char *err,
                              size_t errlen) {
  static const tg__schema_opts none = {NULL, NULL, 0};
  if (!opts) opts = &none;
  sc_out o = tg__sc_out_make(err, errlen);
  tg_schema *s = calloc(1, sizeof *s);
  sc_compiler c = {.s = s, .fetch = opts->fetch, .fetch_ud = opts->fetch_ud,
                   .err = &o};
  if (!doc) {
    tg__sc_str(&o, "no schema");
    goto fail;
  }
  if (!s) goto nomem;
  if (copy) {
    cJSON *dup = cJSON_Duplicate(doc, 1);
    if (!dup || tg__sc_keep_doc(s, dup) < 0) goto nomem;
    doc = dup;
  }
  if (compile_root(&c, doc, opts->draft7 ? SC_DRAFT7 : SC_DRAFT2020) < 0)
    goto fail;
  free(c.map.keys);
  free(c.map.vals);
  return s;
nomem:
  tg__sc_str(&o, "out of memory");
fail:
  if (c.oom && !o.len) tg__sc_str(&o, "out of memory");
  free(c.map.keys);
  free(c.map.vals);
  tg_schema_free(s);
  return NULL;
}

tg_schema *tg_schema_compile(const cJSON *schema, char err[TG_ERRMSG]) {
  return tg__schema_compile(schema, 1, NULL, err, TG_ERRMSG);
}

/* ---- validate --------------------------------------------------------- */

/* Rejects an instance nested deeper than SC_INSTANCE_MAX_DEPTH; the walk
 * itself stops one level past the limit. */
static int too_deep(sc_vctx *c, const cJSON *v, const seg *at, int depth) {
  if (depth > SC_INSTANCE_MAX_DEPTH) {
    tg__sc_fail_msg(c, at, "limit",
                    "value nested deeper than " SC_INSTANCE_MAX_DEPTH_TEXT
                    " levels");
    return 1;
  }
  size_t i = 0;
  for (const cJSON *k = v->child; k; k = k->next, i++) {
    seg ks = cJSON_IsObject(v) && k->string ? tg__sc_key(at, k->string)
                                            : tg__sc_index(at, i);
    if (too_deep(c, k, &ks, depth + 1)) return 1;
  }
  return 0;
}

/* 1 valid, 0 invalid, -1 out of memory. */
static int run(const tg_schema *s, const cJSON *v, sc_vctx *c) {
  int ok = !too_deep(c, v, NULL, 0) && tg__sc_validate(c, s->root, v, NULL,
                                                       NULL);
  tg__sc_matcher_free(c->matcher);
  return c->oom ? -1 : ok;
}

typedef struct {
  sc_out out;
  int told;
} first_sink;

/* "$.path: message", for the first failure only. */
static int emit_first(void *ud, const seg *at, const char *kw,
                      const char *msg) {
  first_sink *f = ud;
  (void)kw;
  if (f->told++) return 0;
  tg__sc_path(&f->out, at);
  tg__sc_str(&f->out, ": ");
  tg__sc_str(&f->out, msg);
  return 0;
}

int tg_schema_validate(const tg_schema *s, const cJSON *value, char *err,
                       size_t errlen) {
  first_sink f = {tg__sc_out_make(err, errlen), 0};
  if (!s || !value) {
    tg__sc_str(&f.out, s ? "$: no value" : "$: no schema");
    return -EINVAL;
  }
  sc_vctx c = {.emit = emit_first, .emit_ud = &f, .max_told = 1};
  int ok = run(s, value, &c);
  if (ok < 0) {
    f.out = tg__sc_out_make(err, errlen);
    tg__sc_str(&f.out, "out of memory validating the value");
    return -ENOMEM;
  }
  return ok ? 0 : -EINVAL;
}

/* {path, keyword, message} appended to the list. */
static int emit_list(void *ud, const seg *at, const char *kw,
                     const char *msg) {
  cJSON *list = ud;
  char path[512];
  cJSON *e = cJSON_CreateObject();
  if (!e || !cJSON_AddStringToObject(e, "path",
                                     tg__json_path_text(at, path, sizeof path)) ||
      !cJSON_AddStringToObject(e, "keyword", kw) ||
      !cJSON_AddStringToObject(e, "message", msg)) {
    cJSON_Delete(e);
    return -1;
  }
  cJSON_AddItemToArray(list, e);
  return 0;
}

cJSON *tg_schema_errors(const tg_schema *s, const cJSON *value, size_t max) {
  cJSON *list = cJSON_CreateArray();
  if (!list || !s || !value) {
    cJSON_Delete(list);
    return NULL;
  }
  sc_vctx c = {.emit = emit_list, .emit_ud = list,
               .max_told = max ? max : DEFAULT_MAX_ERRORS};
  if (run(s, value, &c) < 0) {
    cJSON_Delete(list);
    return NULL;
  }
  return list;
}
