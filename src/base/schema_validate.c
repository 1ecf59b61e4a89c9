/*
 * schema_validate.c — a value against a compiled node: the assertions on
 * its type, its value, numbers, strings, arrays and objects. The
 * applicators ($ref, allOf, if, unevaluated*, ...) are in schema_apply.c.
 *
 * A failure names the JSON path of the value and the keyword, in the
 * words of the old validator ("$.files[2].name: expected string, got
 * number"). Validating for the chain stops at the first failure; the
 * error list (tg_schema_errors) goes on through the other keywords and
 * members, up to its bound. Branches whose own failures are not told
 * (anyOf, oneOf, not, if, contains) run "quiet" and stop at their first.
 * A path is a chain of segments on the C stack and is only formatted when
 * a failure is told, so a passing validation builds no strings.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "schema_int.h"

/* ---- telling failures -------------------------------------------------- */

sc_out *tg__sc_fail(sc_vctx *c, const seg *at, const char *kw) {
  c->at = at;
  c->kw = kw;
  if (c->quiet || c->oom || c->over_budget || c->told >= c->max_told) {
    c->out = tg__sc_out_make(NULL, 0);
    return &c->out;
  }
  c->out = tg__sc_out_make(c->msg, sizeof c->msg);
  if (c->name_of) tg__sc_str(&c->out, "property name ");
  return &c->out;
}

int tg__sc_fail_end(sc_vctx *c) {
  if (!c->out.cap) return 0;
  if (c->emit(c->emit_ud, c->at, c->kw, c->msg) < 0) c->oom = 1;
  c->told++;
  return 0;
}

int tg__sc_fail_msg(sc_vctx *c, const seg *at, const char *kw,
                    const char *msg) {
  tg__sc_str(tg__sc_fail(c, at, kw), msg);
  return tg__sc_fail_end(c);
}

int tg__sc_stop(const sc_vctx *c) {
  return c->quiet || c->oom || c->over_budget || c->max_told <= 1 ||
         c->told >= c->max_told;
}

/* ok &= step, and whether to go on: `if (!more(c, &ok, step)) return 0` */
static int more(const sc_vctx *c, int *ok, int step) {
  *ok &= step;
  return *ok || !tg__sc_stop(c);
}

/* ---- type, enum, const ------------------------------------------------- */

static const char *type_of(const cJSON *v) {
  switch (v->type & 0xFF) {
    case cJSON_False:
    case cJSON_True: return "boolean";
    case cJSON_NULL: return "null";
    case cJSON_Number: return "number";
    case cJSON_String: return "string";
    case cJSON_Array: return "array";
    case cJSON_Object: return "object";
    default: return "invalid";
  }
}

static unsigned type_bits(const cJSON *v) {
  switch (v->type & 0xFF) {
    case cJSON_False:
    case cJSON_True: return SC_T_BOOLEAN;
    case cJSON_NULL: return SC_T_NULL;
    case cJSON_Number:
      return SC_T_NUMBER |
             (tg__sc_is_integer(v->valuedouble) ? SC_T_INTEGER : 0u);
    case cJSON_String: return SC_T_STRING;
    case cJSON_Array: return SC_T_ARRAY;
    case cJSON_Object: return SC_T_OBJECT;
    default: return 0;
  }
}

static int v_type(sc_vctx *c, const sc_node *n, const cJSON *v,
                  const seg *at) {
  if (n->types & type_bits(v)) return 1;
  /* "expected string or null, got number", in the schema's order */
  const cJSON *t = cJSON_GetObjectItemCaseSensitive(n->src, "type");
  sc_out *o = tg__sc_fail(c, at, "type");
  tg__sc_str(o, "expected ");
  if (cJSON_IsString(t)) tg__sc_str(o, t->valuestring);
  for (const cJSON *e = cJSON_IsArray(t) ? t->child : NULL; e; e = e->next) {
    if (e != t->child) tg__sc_str(o, " or ");
    tg__sc_str(o, e->valuestring);
  }
  tg__sc_str(o, ", got ");
  tg__sc_str(o, type_of(v));
  return tg__sc_fail_end(c);
}

static int v_enum(sc_vctx *c, const sc_node *n, const cJSON *v,
                  const seg *at) {
  int ok = 1;
  if (n->enum_) {
    const cJSON *x = n->enum_->child;
    while (x && !tg__sc_equal(x, v)) x = x->next;
    if (!x) {
      sc_out *o = tg__sc_fail(c, at, "enum");
      tg__sc_str(o, "must be one of ");
      for (x = n->enum_->child; x; x = x->next) {
        if (x != n->enum_->child) tg__sc_str(o, ", ");
        tg__sc_json(o, x);
      }
      ok = tg__sc_fail_end(c);
      if (tg__sc_stop(c)) return 0;
    }
  }
  if (n->const_ && !tg__sc_equal(n->const_, v)) {
    sc_out *o = tg__sc_fail(c, at, "const");
    tg__sc_str(o, "must equal ");
    tg__sc_json(o, n->const_);
    ok = tg__sc_fail_end(c);
  }
  return ok;
}

/* ---- numbers ------------------------------------------------------------ */

static const struct {
  const char *kw;
  int upper, exclusive;
  const char *what;
} bounds[SC_B__COUNT] = {
    {"minimum", 0, 0, " is below the minimum "},
    {"maximum", 1, 0, " is above the maximum "},
    {"exclusiveMinimum", 0, 1, " is not above the exclusive minimum "},
    {"exclusiveMaximum", 1, 1, " is not below the exclusive maximum "},
};

static int v_number(sc_vctx *c, const sc_node *n, const cJSON *v,
                    const seg *at) {
  double d = v->valuedouble;
  int ok = 1;
  for (int i = 0; i < SC_B__COUNT; i++) {
    if (!n->has_bound[i]) continue;
    double x = n->bound[i];
    int outside = bounds[i].upper ? (bounds[i].exclusive ? d >= x : d > x)
                                  : (bounds[i].exclusive ? d <= x : d < x);
    if (!outside) continue;
    sc_out *o = tg__sc_fail(c, at, bounds[i].kw);
    tg__sc_num(o, d);
    tg__sc_str(o, bounds[i].what);
    tg__sc_num(o, x);
    if (!more(c, &ok, tg__sc_fail_end(c))) return 0;
  }
  if (n->multiple_of && !tg__sc_multiple_of(d, n->multiple_of)) {
    sc_out *o = tg__sc_fail(c, at, "multipleOf");
    tg__sc_num(o, d);
    tg__sc_str(o, " is not a multiple of ");
    tg__sc_num(o, n->multiple_of);
    ok = tg__sc_fail_end(c);
  }
  return ok;
}

/* ---- counts (lengths, items, properties) -------------------------------- */

/* Checks count against k: "is 2 characters long, fewer than minLength 3",
 * "has 5 items, more than maxItems 3". */
static int v_count(sc_vctx *c, const sc_count *k, size_t count,
                   const seg *at, const char *lo, const char *hi,
                   const char *verb, const char *unit) {
  int below = k->has_lo && (double)count < k->lo;
  int above = k->has_hi && (double)count > k->hi;
  if (!below && !above) return 1;
  sc_out *o = tg__sc_fail(c, at, below ? lo : hi);
  tg__sc_str(o, verb);
  tg__sc_size(o, count);
  tg__sc_str(o, unit);
  tg__sc_str(o, below ? ", fewer than " : ", more than ");
  tg__sc_str(o, below ? lo : hi);
  tg__sc_str(o, " ");
  tg__sc_num(o, below ? k->lo : k->hi);
  return tg__sc_fail_end(c);
}

/* ---- strings ------------------------------------------------------------ */

/* Code points: every byte that is not a continuation byte. */
static size_t utf8_length(const char *s) {
  size_t n = 0;
  for (; *s; s++)
    if (((unsigned char)*s & 0xC0) != 0x80) n++;
  return n;
}

int tg__sc_search(sc_vctx *c, const sc_regex *re, const char *s,
                  const seg *at, const char *kw, int *found) {
  int rc = tg__sc_regex_search(re, s, strlen(s), &c->matcher);
  *found = rc == SC_MATCH;
  if (rc >= 0) return 1;
  if (rc == SC_MATCH_NOMEM) {
    c->oom = 1;
    return 0;
  }
  if (rc == SC_MATCH_BUDGET) { /* told even inside a quiet branch, once */
    if (c->over_budget) return 0;
    int q = c->quiet;
    c->quiet = 0;
    tg__sc_fail_msg(c, at, kw, "matching patterns took over "
                               SC_MATCH_BUDGET_TEXT " on this value in all; "
                               "validation stopped here");
    c->quiet = q;
    c->over_budget = 1;
    return 0;
  }
  sc_out *o = tg__sc_fail(c, at, kw);
  tg__sc_str(o, rc == SC_MATCH_BAD_UTF8 ? "is not valid UTF-8, so it cannot "
                                          "be matched against pattern "
                                        : "is too costly to match against "
                                          "pattern ");
  tg__sc_quoted(o, tg__sc_regex_source(re));
  if (rc == SC_MATCH_LIMIT)
    tg__sc_str(o, " (the match limit stops runaway backtracking)");
  return tg__sc_fail_end(c);
}

static int v_pattern(sc_vctx *c, const sc_node *n, const char *s,
                     const seg *at) {
  int found;
  if (!tg__sc_search(c, n->pattern, s, at, "pattern", &found)) return 0;
  if (found) return 1;
  sc_out *o = tg__sc_fail(c, at, "pattern");
  tg__sc_str(o, "does not match pattern ");
  tg__sc_quoted(o, tg__sc_regex_source(n->pattern));
  return tg__sc_fail_end(c);
}

static int v_string(sc_vctx *c, const sc_node *n, const cJSON *v,
                    const seg *at) {
  int ok = 1;
  const char *s = v->valuestring ? v->valuestring : "";
  if ((n->length.has_lo || n->length.has_hi) &&
      !more(c, &ok, v_count(c, &n->length, utf8_length(s), at, "minLength",
                            "maxLength", "is ", " characters long")))
    return 0;
  if (n->pattern) ok &= v_pattern(c, n, s, at);
  return ok;
}

/* ---- arrays ------------------------------------------------------------- */

static int v_unique(sc_vctx *c, const cJSON *v, const seg *at) {
  size_t i, j;
  int dup = tg__sc_duplicate(v, &i, &j);
  if (dup < 0) c->oom = 1;
  if (!dup) return 1;
  sc_out *o = tg__sc_fail(c, at, "uniqueItems");
  tg__sc_str(o, "items [");
  tg__sc_size(o, i);
  tg__sc_str(o, "] and [");
  tg__sc_size(o, j);
  tg__sc_str(o, "] are equal (uniqueItems)");
  return tg__sc_fail_end(c);
}

/* prefixItems, then items (07: items as a list, then additionalItems). */
static int v_items(sc_vctx *c, const sc_node *n, const cJSON *v,
                   const seg *at, sc_evalset *ev) {
  int ok = 1;
  size_t i = 0;
  for (const cJSON *e = v->child; e; e = e->next, i++) {
    const sc_node *s = i < n->prefix.n ? n->prefix.v[i] : n->rest;
    if (!s) break;
    seg es = tg__sc_index(at, i);
    int step;
    if (s->kind == SC_KIND_FALSE && s == n->rest && n->prefix.n) {
      sc_out *o = tg__sc_fail(c, &es, n->rest_kw);
      tg__sc_str(o, "item not allowed (");
      tg__sc_str(o, n->rest_kw);
      tg__sc_str(o, " is false)");
      step = tg__sc_fail_end(c);
    } else {
      step = tg__sc_validate(c, s, e, &es, NULL);
    }
    if (ev) tg__sc_evalset_mark(ev, i);
    if (!more(c, &ok, step)) return 0;
  }
  return ok;
}

static int v_contains(sc_vctx *c, const sc_node *n, const cJSON *v,
                      const seg *at, sc_evalset *ev) {
  const sc_count *k = &n->contains_count;
  size_t matches = 0, i = 0;
  c->quiet++;
  for (const cJSON *e = v->child; e; e = e->next, i++) {
    seg es = tg__sc_index(at, i);
    if (!tg__sc_validate(c, n->contains, e, &es, NULL)) continue;
    matches++;
    if (ev) tg__sc_evalset_mark(ev, i);
    else if (!k->has_hi && (double)matches >= k->lo) break; /* enough */
  }
  c->quiet--;
  if (matches == 0 && k->lo == 1 && !c->oom)
    return tg__sc_fail_msg(c, at, "contains", "has no item that matches "
                                              "'contains'");
  return v_count(c, k, matches, at, "minContains", "maxContains", "has ",
                 " items that match 'contains'");
}

static int v_array(sc_vctx *c, const sc_node *n, const cJSON *v,
                   const seg *at, sc_evalset *ev) {
  int ok = 1;
  if ((n->items.has_lo || n->items.has_hi) &&
      !more(c, &ok, v_count(c, &n->items, tg__sc_count_children(v), at,
                            "minItems", "maxItems", "has ", " items")))
    return 0;
  if (n->unique && !more(c, &ok, v_unique(c, v, at))) return 0;
  if ((n->prefix.n || n->rest) && !more(c, &ok, v_items(c, n, v, at, ev)))
    return 0;
  if (n->contains) ok &= v_contains(c, n, v, at, ev);
  return ok;
}

/* ---- objects ------------------------------------------------------------ */

static const sc_prop *find_prop(const sc_node *n, const char *name) {
  size_t lo = 0, hi = n->nprops;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int d = strcmp(name, n->props[mid].name);
    if (!d) return &n->props[mid];
    if (d < 0) hi = mid;
    else lo = mid + 1;
  }
  return NULL;
}

static int v_required(sc_vctx *c, const sc_node *n, const cJSON *v,
                      const seg *at) {
  int ok = 1;
  for (const cJSON *r = n->required ? n->required->child : NULL; r;
       r = r->next) {
    if (cJSON_GetObjectItemCaseSensitive(v, r->valuestring)) continue;
    sc_out *o = tg__sc_fail(c, at, "required");
    tg__sc_str(o, "missing required property ");
    tg__sc_quoted(o, r->valuestring);
    if (!more(c, &ok, tg__sc_fail_end(c))) return 0;
  }
  return ok;
}

static int v_dependent_required(sc_vctx *c, const sc_node *n, const cJSON *v,
                                const seg *at) {
  int ok = 1;
  for (size_t d = 0; d < n->ndep_req; d++) {
    if (!cJSON_GetObjectItemCaseSensitive(v, n->dep_req[d].name)) continue;
    for (const cJSON *r = n->dep_req[d].names->child; r; r = r->next) {
      if (!cJSON_IsString(r) ||
          cJSON_GetObjectItemCaseSensitive(v, r->valuestring))
        continue;
      const char *kw = n->draft == SC_DRAFT7 ? "dependencies"
                                             : "dependentRequired";
      sc_out *o = tg__sc_fail(c, at, kw);
      tg__sc_str(o, "missing property ");
      tg__sc_quoted(o, r->valuestring);
      tg__sc_str(o, ", required when ");
      tg__sc_quoted(o, n->dep_req[d].name);
      tg__sc_str(o, " is present");
      if (!more(c, &ok, tg__sc_fail_end(c))) return 0;
    }
  }
  return ok;
}

static int v_property_names(sc_vctx *c, const sc_node *n, const cJSON *v,
                            const seg *at) {
  int ok = 1;
  for (const cJSON *e = v->child; e; e = e->next) {
    if (!e->string) continue;
    cJSON name = {0};
    name.type = cJSON_String;
    name.valuestring = e->string;
    seg es = tg__sc_key(at, e->string);
    const char *saved = c->name_of;
    c->name_of = e->string;
    int step = tg__sc_validate(c, n->prop_names, &name, &es, NULL);
    c->name_of = saved;
    if (!more(c, &ok, step)) return 0;
  }
  return ok;
}

/* The schemas for member e (properties, patternProperties, else
 * additionalProperties), each validated. */
static int v_member(sc_vctx *c, const sc_node *n, const cJSON *e,
                    const seg *es, int *evaluated) {
  int ok = 1, found;
  const sc_prop *p = n->nprops ? find_prop(n, e->string) : NULL;
  if (p) {
    *evaluated = 1;
    if (!more(c, &ok, tg__sc_validate(c, p->node, e, es, NULL))) return 0;
  }
  for (size_t i = 0; i < n->npprops; i++) {
    if (!more(c, &ok, tg__sc_search(c, n->pprops[i].re, e->string, es,
                                    "patternProperties", &found)))
      return 0;
    if (!found) continue;
    *evaluated = 1;
    if (!more(c, &ok, tg__sc_validate(c, n->pprops[i].node, e, es, NULL)))
      return 0;
  }
  if (*evaluated || !n->additional) return ok;
  *evaluated = 1;
  /* Said plainly rather than as the generic "schema is false". */
  if (n->additional->kind == SC_KIND_FALSE)
    return tg__sc_fail_msg(c, es, "additionalProperties",
                           "property not allowed (additionalProperties is "
                           "false)");
  return tg__sc_validate(c, n->additional, e, es, NULL) && ok;
}

static int v_members(sc_vctx *c, const sc_node *n, const cJSON *v,
                     const seg *at, sc_evalset *ev) {
  int ok = 1;
  size_t i = 0;
  for (const cJSON *e = v->child; e; e = e->next, i++) {
    if (!e->string) continue;
    seg es = tg__sc_key(at, e->string);
    int evaluated = 0;
    int step = v_member(c, n, e, &es, &evaluated);
    if (ev && evaluated) tg__sc_evalset_mark(ev, i);
    if (!more(c, &ok, step)) return 0;
  }
  return ok;
}

static int v_object(sc_vctx *c, const sc_node *n, const cJSON *v,
                    const seg *at, sc_evalset *ev) {
  int ok = 1;
  if (n->required && !more(c, &ok, v_required(c, n, v, at))) return 0;
  if ((n->nprops_count.has_lo || n->nprops_count.has_hi) &&
      !more(c, &ok, v_count(c, &n->nprops_count, tg__sc_count_children(v),
                            at, "minProperties", "maxProperties", "has ",
                            " properties")))
    return 0;
  if (n->ndep_req && !more(c, &ok, v_dependent_required(c, n, v, at)))
    return 0;
  if (n->prop_names && !more(c, &ok, v_property_names(c, n, v, at)))
    return 0;
  if (n->nprops || n->npprops || n->additional)
    ok &= v_members(c, n, v, at, ev);
  return ok;
}

/* ---- a node ------------------------------------------------------------- */

/* The assertions of n, in the order failures are told. */
static int assertions(sc_vctx *c, const sc_node *n, const cJSON *v,
                      const seg *at, sc_evalset *ev) {
  unsigned g = n->groups;
  int ok = 1, t = v->type & 0xFF;
  if ((g & SC_G_TYPE) && !more(c, &ok, v_type(c, n, v, at))) return 0;
  if ((g & SC_G_ENUM) && !more(c, &ok, v_enum(c, n, v, at))) return 0;
  if ((g & SC_G_NUMBER) && t == cJSON_Number &&
      !more(c, &ok, v_number(c, n, v, at)))
    return 0;
  if ((g & SC_G_STRING) && t == cJSON_String &&
      !more(c, &ok, v_string(c, n, v, at)))
    return 0;
  if ((g & SC_G_ARRAY) && t == cJSON_Array &&
      !more(c, &ok, v_array(c, n, v, at, ev)))
    return 0;
  if ((g & SC_G_OBJECT) && t == cJSON_Object &&
      !more(c, &ok, v_object(c, n, v, at, ev)))
    return 0;
  return ok;
}

/* Runs n's keywords with the dynamic scope and the evaluated set it
 * needs. */
static int keywords(sc_vctx *c, const sc_node *n, const cJSON *v,
                    const seg *at, sc_evalset *ev) {
  sc_evalset own;
  sc_evalset *mine = ev;
  if ((n->groups & SC_G_UNEVAL) &&
      tg__sc_evalset_init(c, mine = &own, tg__sc_count_children(v)) < 0)
    return 0;
  int ok = assertions(c, n, v, at, mine);
  if ((ok || !tg__sc_stop(c)) && (n->groups & (SC_G_APPLY | SC_G_UNEVAL)))
    ok &= tg__sc_apply(c, n, v, at, mine);
  if (mine == &own) {
    if (ok && ev) tg__sc_evalset_merge(ev, &own);
    tg__sc_evalset_free(&own);
  }
  return ok;
}

int tg__sc_validate(sc_vctx *c, const sc_node *n, const cJSON *v,
                    const seg *at, sc_evalset *ev) {
  if (n->kind == SC_KIND_TRUE) return 1;
  if (n->kind == SC_KIND_FALSE)
    return tg__sc_fail_msg(c, at, "false", "not allowed (schema is false)");
  if (c->depth >= SC_VALIDATE_MAX_DEPTH)
    return tg__sc_fail_msg(c, at, "limit",
                           "schema recursion deeper than "
                           SC_VALIDATE_MAX_DEPTH_TEXT " levels");
  sc_scope_link link = {n->res, c->scope};
  const sc_scope_link *saved = c->scope;
  if (!saved || saved->res != n->res) c->scope = &link;
  c->depth++;
  int ok = keywords(c, n, v, at, ev);
  c->depth--;
  c->scope = saved;
  return ok && !c->oom && !c->over_budget;
}
