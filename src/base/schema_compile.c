/*
 * schema_compile.c — a schema object's keywords into its node: each value
 * checked (right JSON type, patterns that compile), sub-schemas compiled,
 * $refs queued (schema_refs.c). One table says which keywords exist in
 * which draft; a keyword of the other draft is refused with what to write
 * instead, rather than silently meaning nothing. Keywords the table does
 * not know are annotations (title, description, default, examples,
 * format, $comment, x-...) and are ignored.
 */
#include <stdlib.h>
#include <string.h>
#include "schema_int.h"

/* ---- messages ---------------------------------------------------------- */

sc_out *tg__sc_bad_at(sc_compiler *c, const seg *at) {
  sc_out *o = c->err;
  tg__sc_str(o, "schema ");
  if (c->doc_label) {
    tg__sc_str(o, c->doc_label);
    tg__sc_str(o, " ");
  }
  tg__sc_str(o, "at ");
  if (c->prefix) {
    char p[512];
    tg__sc_str(o, c->prefix);
    tg__sc_str(o, tg__json_path_text(at, p, sizeof p) + 1); /* no "$" */
  } else {
    tg__sc_path(o, at);
  }
  tg__sc_str(o, ": ");
  return o;
}

int tg__sc_bad(sc_compiler *c, const seg *at, const char *msg) {
  tg__sc_str(tg__sc_bad_at(c, at), msg);
  return -1;
}

/* "'<kw>' <msg>" */
int tg__sc_bad_kw(sc_compiler *c, const seg *at, const char *kw,
                  const char *msg) {
  sc_out *o = tg__sc_bad_at(c, at);
  tg__sc_str(o, "'");
  tg__sc_str(o, kw);
  tg__sc_str(o, "' ");
  tg__sc_str(o, msg);
  return -1;
}

int tg__sc_nomem(sc_compiler *c) {
  c->oom = 1;
  return -1;
}

/* ---- sub-schemas ------------------------------------------------------- */

typedef int (*kw_fn)(sc_compiler *c, sc_node *n, const cJSON *v,
                     const seg *at, const sc_scope *sc, int depth);

static sc_node *sub(sc_compiler *c, const cJSON *v, const seg *at,
                    const sc_scope *sc, int depth) {
  seg ks = tg__sc_key(at, v->string);
  return tg__sc_compile_node(c, v, &ks, sc, depth + 1);
}

static size_t count_of(const cJSON *v) {
  size_t n = 0;
  for (const cJSON *e = v->child; e; e = e->next) n++;
  return n;
}

static int sub_list(sc_compiler *c, const cJSON *v, const seg *at,
                    const sc_scope *sc, int depth, sc_list *out) {
  if (!cJSON_IsArray(v) || !v->child)
    return tg__sc_bad_kw(c, at, v->string,
                         "must be a non-empty array of schemas");
  out->n = count_of(v);
  if (!(out->v = tg__sc_alloc(&c->s->arena, out->n * sizeof *out->v)))
    return tg__sc_nomem(c);
  seg ks = tg__sc_key(at, v->string);
  size_t i = 0;
  for (const cJSON *e = v->child; e; e = e->next, i++) {
    seg es = tg__sc_index(&ks, i);
    if (!(out->v[i] = tg__sc_compile_node(c, e, &es, sc, depth + 1)))
      return -1;
  }
  return 0;
}

/* An object of schemas; each compiled into *out[i] when out is not NULL. */
static int sub_map(sc_compiler *c, const cJSON *v, const seg *at,
                   const sc_scope *sc, int depth, sc_node ***out) {
  if (!cJSON_IsObject(v))
    return tg__sc_bad_kw(c, at, v->string, "must be an object of schemas");
  sc_node **nodes = NULL;
  if (out && v->child &&
      !(nodes = tg__sc_alloc(&c->s->arena, count_of(v) * sizeof *nodes)))
    return tg__sc_nomem(c);
  seg ks = tg__sc_key(at, v->string);
  size_t i = 0;
  for (const cJSON *e = v->child; e; e = e->next, i++) {
    seg es = tg__sc_key(&ks, e->string ? e->string : "");
    sc_node *s = tg__sc_compile_node(c, e, &es, sc, depth + 1);
    if (!s) return -1;
    if (nodes) nodes[i] = s;
  }
  if (out) *out = nodes;
  return 0;
}

/* ---- simple keywords --------------------------------------------------- */

static const struct {
  const char *name;
  unsigned bit;
} type_names[] = {{"null", SC_T_NULL},     {"boolean", SC_T_BOOLEAN},
                  {"object", SC_T_OBJECT}, {"array", SC_T_ARRAY},
                  {"number", SC_T_NUMBER}, {"string", SC_T_STRING},
                  {"integer", SC_T_INTEGER}};

static int type_name(sc_compiler *c, sc_node *n, const cJSON *t,
                     const seg *at) {
  if (!cJSON_IsString(t))
    return tg__sc_bad_kw(c, at, "type", "must be a string or an array of strings");
  for (size_t i = 0; i < sizeof type_names / sizeof type_names[0]; i++)
    if (!strcmp(t->valuestring, type_names[i].name)) {
      n->types |= (unsigned char)type_names[i].bit;
      return 0;
    }
  sc_out *o = tg__sc_bad_at(c, at);
  tg__sc_str(o, "'type' names an unknown type ");
  tg__sc_quoted(o, t->valuestring);
  tg__sc_str(o, " (known: string, number, integer, boolean, object, array, "
                "null)");
  return -1;
}

static int k_type(sc_compiler *c, sc_node *n, const cJSON *v, const seg *at,
                  const sc_scope *sc, int depth) {
  n->groups |= SC_G_TYPE;
  if (!cJSON_IsArray(v)) return type_name(c, n, v, at);
  /* An empty list would reject every value; surely a mistake. */
  if (!v->child) return tg__sc_bad_kw(c, at, "type", "must not be an empty array");
  for (const cJSON *e = v->child; e; e = e->next)
    if (type_name(c, n, e, at) < 0) return -1;
  return 0;
}

static int k_enum(sc_compiler *c, sc_node *n, const cJSON *v, const seg *at,
                  const sc_scope *sc, int depth) {
  if (!cJSON_IsArray(v)) return tg__sc_bad_kw(c, at, "enum", "must be an array");
  n->enum_ = v;
  n->groups |= SC_G_ENUM;
  return 0;
}

static int k_const(sc_compiler *c, sc_node *n, const cJSON *v, const seg *at,
                   const sc_scope *sc, int depth) {
  n->const_ = v;
  n->groups |= SC_G_ENUM;
  return 0;
}

static int is_number(const cJSON *v) {
  return cJSON_IsNumber(v) && v->valuedouble - v->valuedouble == 0;
}

static int k_bound(sc_compiler *c, sc_node *n, const cJSON *v, const seg *at,
                   const sc_scope *sc, int depth) {
  static const char *const names[SC_B__COUNT] = {
      "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"};
  if (!is_number(v)) return tg__sc_bad_kw(c, at, v->string, "must be a number");
  for (int i = 0; i < SC_B__COUNT; i++)
    if (!strcmp(v->string, names[i])) {
      n->bound[i] = v->valuedouble;
      n->has_bound[i] = 1;
    }
  n->groups |= SC_G_NUMBER;
  return 0;
}

static int k_multiple(sc_compiler *c, sc_node *n, const cJSON *v,
                      const seg *at, const sc_scope *sc, int depth) {
  if (!is_number(v) || v->valuedouble <= 0)
    return tg__sc_bad_kw(c, at, "multipleOf", "must be a number above 0");
  n->multiple_of = v->valuedouble;
  n->groups |= SC_G_NUMBER;
  return 0;
}

/* minLength ... maxContains: which count, which end, which group. */
static const struct {
  const char *name;
  size_t count; /* offset of the sc_count in sc_node */
  int hi;
  unsigned group;
} counts[] = {
    {"minLength", offsetof(sc_node, length), 0, SC_G_STRING},
    {"maxLength", offsetof(sc_node, length), 1, SC_G_STRING},
    {"minItems", offsetof(sc_node, items), 0, SC_G_ARRAY},
    {"maxItems", offsetof(sc_node, items), 1, SC_G_ARRAY},
    {"minProperties", offsetof(sc_node, nprops_count), 0, SC_G_OBJECT},
    {"maxProperties", offsetof(sc_node, nprops_count), 1, SC_G_OBJECT},
    {"minContains", offsetof(sc_node, contains_count), 0, 0},
    {"maxContains", offsetof(sc_node, contains_count), 1, 0},
};

static int k_count(sc_compiler *c, sc_node *n, const cJSON *v, const seg *at,
                   const sc_scope *sc, int depth) {
  if (!is_number(v) || v->valuedouble < 0 || !tg__sc_is_integer(v->valuedouble))
    return tg__sc_bad_kw(c, at, v->string, "must be a non-negative integer");
  for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
    if (strcmp(v->string, counts[i].name)) continue;
    sc_count *k = (sc_count *)((char *)n + counts[i].count);
    if (counts[i].hi) {
      k->hi = v->valuedouble;
      k->has_hi = 1;
    } else {
      k->lo = v->valuedouble;
      k->has_lo = 1;
    }
    n->groups |= counts[i].group;
  }
  return 0;
}

static sc_regex *regex(sc_compiler *c, const char *kw, const char *pattern,
                       const seg *at) {
  char why[256];
  sc_regex *re = tg__sc_regex_new(pattern, why, sizeof why);
  sc_regex_ref *keep = re ? tg__sc_alloc(&c->s->arena, sizeof *keep) : NULL;
  if (re && !keep) {
    tg__sc_regex_free(re);
    tg__sc_nomem(c);
    return NULL;
  }
  if (!re) {
    sc_out *o = tg__sc_bad_at(c, at);
    tg__sc_str(o, kw);
    tg__sc_quoted(o, pattern);
    tg__sc_str(o, " does not compile: ");
    tg__sc_str(o, why);
    return NULL;
  }
  keep->re = re;
  keep->next = c->s->regexes;
  c->s->regexes = keep;
  c->s->uses_patterns = 1;
  return re;
}

static int k_pattern(sc_compiler *c, sc_node *n, const cJSON *v,
                     const seg *at, const sc_scope *sc, int depth) {
  if (!cJSON_IsString(v)) return tg__sc_bad_kw(c, at, "pattern", "must be a string");
  n->groups |= SC_G_STRING;
  return (n->pattern = regex(c, "'pattern' ", v->valuestring, at)) ? 0 : -1;
}

static int k_format(sc_compiler *c, sc_node *n, const cJSON *v,
                    const seg *at, const sc_scope *sc, int depth) {
  /* an annotation only (docs/json-schema.md) */
  return cJSON_IsString(v) ? 0 : tg__sc_bad_kw(c, at, "format", "must be a string");
}

static int k_unique(sc_compiler *c, sc_node *n, const cJSON *v,
                    const seg *at, const sc_scope *sc, int depth) {
  if (!cJSON_IsBool(v)) return tg__sc_bad_kw(c, at, "uniqueItems", "must be a boolean");
  n->unique = cJSON_IsTrue(v);
  n->groups |= SC_G_ARRAY;
  return 0;
}

/* A list of names, as `required` and dependentRequired hold them. A Lua
 * schema's `{}` arrives as an empty object; it means the empty list. */
static int is_name_list(const cJSON *v) {
  if (cJSON_IsObject(v)) return !v->child;
  if (!cJSON_IsArray(v)) return 0;
  for (const cJSON *e = v->child; e; e = e->next)
    if (!cJSON_IsString(e)) return 0;
  return 1;
}

static int k_required(sc_compiler *c, sc_node *n, const cJSON *v,
                      const seg *at, const sc_scope *sc, int depth) {
  if (!is_name_list(v))
    return tg__sc_bad_kw(c, at, "required", "must be an array of strings");
  if (cJSON_IsArray(v) && v->child) n->required = v;
  n->groups |= SC_G_OBJECT;
  return 0;
}

/* ---- arrays ------------------------------------------------------------ */

static int k_items(sc_compiler *c, sc_node *n, const cJSON *v, const seg *at,
                   const sc_scope *sc, int depth) {
  n->groups |= SC_G_ARRAY;
  if (cJSON_IsArray(v) && n->draft == SC_DRAFT7)
    return sub_list(c, v, at, sc, depth, &n->prefix);
  if (cJSON_IsArray(v))
    return tg__sc_bad_kw(c, at, "items",
                         "must be a schema in draft 2020-12: list the "
                         "schemas of the first items in 'prefixItems', or "
                         "declare \"$schema\": "
                         "\"http://json-schema.org/draft-07/schema#\"");
  n->rest_kw = "items";
  return (n->rest = sub(c, v, at, sc, depth)) ? 0 : -1;
}

static int k_prefix_items(sc_compiler *c, sc_node *n, const cJSON *v,
                          const seg *at, const sc_scope *sc, int depth) {
  n->groups |= SC_G_ARRAY;
  return sub_list(c, v, at, sc, depth, &n->prefix);
}

static int k_additional_items(sc_compiler *c, sc_node *n, const cJSON *v,
                              const seg *at, const sc_scope *sc, int depth) {
  return (n->add_items = sub(c, v, at, sc, depth)) ? 0 : -1;
}

static int k_contains(sc_compiler *c, sc_node *n, const cJSON *v,
                      const seg *at, const sc_scope *sc, int depth) {
  n->groups |= SC_G_ARRAY;
  return (n->contains = sub(c, v, at, sc, depth)) ? 0 : -1;
}

/* ---- objects ----------------------------------------------------------- */

static int prop_cmp(const void *a, const void *b) {
  return strcmp(((const sc_prop *)a)->name, ((const sc_prop *)b)->name);
}

static int k_properties(sc_compiler *c, sc_node *n, const cJSON *v,
                        const seg *at, const sc_scope *sc, int depth) {
  sc_node **nodes;
  if (sub_map(c, v, at, sc, depth, &nodes) < 0) return -1;
  n->groups |= SC_G_OBJECT;
  n->nprops = count_of(v);
  if (!n->nprops) return 0;
  if (!(n->props = tg__sc_alloc(&c->s->arena, n->nprops * sizeof *n->props)))
    return tg__sc_nomem(c);
  size_t i = 0;
  for (const cJSON *e = v->child; e; e = e->next, i++)
    n->props[i] = (sc_prop){e->string, strlen(e->string), nodes[i]};
  qsort(n->props, n->nprops, sizeof *n->props, prop_cmp);
  return 0;
}

static int k_pattern_properties(sc_compiler *c, sc_node *n, const cJSON *v,
                                const seg *at, const sc_scope *sc, int depth) {
  sc_node **nodes;
  if (sub_map(c, v, at, sc, depth, &nodes) < 0) return -1;
  n->groups |= SC_G_OBJECT;
  n->npprops = count_of(v);
  if (!n->npprops) return 0;
  if (!(n->pprops = tg__sc_alloc(&c->s->arena, n->npprops * sizeof *n->pprops)))
    return tg__sc_nomem(c);
  size_t i = 0;
  for (const cJSON *e = v->child; e; e = e->next, i++) {
    n->pprops[i].node = nodes[i];
    if (!(n->pprops[i].re = regex(c, "'patternProperties' key ", e->string, at)))
      return -1;
  }
  return 0;
}

static int k_additional(sc_compiler *c, sc_node *n, const cJSON *v,
                        const seg *at, const sc_scope *sc, int depth) {
  n->groups |= SC_G_OBJECT;
  return (n->additional = sub(c, v, at, sc, depth)) ? 0 : -1;
}

static int k_property_names(sc_compiler *c, sc_node *n, const cJSON *v,
                            const seg *at, const sc_scope *sc, int depth) {
  n->groups |= SC_G_OBJECT;
  return (n->prop_names = sub(c, v, at, sc, depth)) ? 0 : -1;
}

/* Room for every member was made by the caller. */
static void add_dep_req(sc_node *n, const cJSON *e) {
  n->dep_req[n->ndep_req++] = (sc_depreq){e->string, e};
  n->groups |= SC_G_OBJECT;
}

static int k_dependent_required(sc_compiler *c, sc_node *n, const cJSON *v,
                                const seg *at, const sc_scope *sc, int depth) {
  const char *msg = "must be an object of arrays of strings";
  if (!cJSON_IsObject(v)) return tg__sc_bad_kw(c, at, v->string, msg);
  if (v->child && !(n->dep_req = tg__sc_alloc(
                        &c->s->arena, count_of(v) * sizeof *n->dep_req)))
    return tg__sc_nomem(c);
  for (const cJSON *e = v->child; e; e = e->next) {
    if (!is_name_list(e)) return tg__sc_bad_kw(c, at, v->string, msg);
    add_dep_req(n, e);
  }
  return 0;
}

static int k_dependent_schemas(sc_compiler *c, sc_node *n, const cJSON *v,
                               const seg *at, const sc_scope *sc, int depth) {
  sc_node **nodes;
  if (sub_map(c, v, at, sc, depth, &nodes) < 0) return -1;
  size_t k = count_of(v), i = 0;
  if (k && !(n->dep_sch = tg__sc_alloc(&c->s->arena, k * sizeof *n->dep_sch)))
    return tg__sc_nomem(c);
  for (const cJSON *e = v->child; e; e = e->next, i++)
    n->dep_sch[n->ndep_sch++] = (sc_depsch){e->string, nodes[i]};
  n->groups |= SC_G_APPLY;
  return 0;
}

/* draft-07: a list of names (dependentRequired) or a schema
 * (dependentSchemas), member by member. */
static int k_dependencies(sc_compiler *c, sc_node *n, const cJSON *v,
                          const seg *at, const sc_scope *sc, int depth) {
  if (!cJSON_IsObject(v))
    return tg__sc_bad_kw(c, at, "dependencies",
                         "must be an object of schemas or arrays of strings");
  size_t k = count_of(v);
  if (k && (!(n->dep_req = tg__sc_alloc(&c->s->arena, k * sizeof *n->dep_req)) ||
            !(n->dep_sch = tg__sc_alloc(&c->s->arena, k * sizeof *n->dep_sch))))
    return tg__sc_nomem(c);
  seg ks = tg__sc_key(at, "dependencies");
  for (const cJSON *e = v->child; e; e = e->next) {
    if (cJSON_IsArray(e)) {
      if (!is_name_list(e))
        return tg__sc_bad_kw(c, at, "dependencies",
                             "must be an object of schemas or arrays of "
                             "strings");
      add_dep_req(n, e);
      continue;
    }
    seg es = tg__sc_key(&ks, e->string);
    sc_node *s = tg__sc_compile_node(c, e, &es, sc, depth + 1);
    if (!s) return -1;
    n->dep_sch[n->ndep_sch++] = (sc_depsch){e->string, s};
    n->groups |= SC_G_APPLY;
  }
  return 0;
}

/* ---- applicators ------------------------------------------------------- */

static int k_combinator(sc_compiler *c, sc_node *n, const cJSON *v,
                        const seg *at, const sc_scope *sc, int depth) {
  sc_list *l = !strcmp(v->string, "allOf")   ? &n->all_of
               : !strcmp(v->string, "anyOf") ? &n->any_of
                                             : &n->one_of;
  n->groups |= SC_G_APPLY;
  return sub_list(c, v, at, sc, depth, l);
}

static int k_single(sc_compiler *c, sc_node *n, const cJSON *v,
                    const seg *at, const sc_scope *sc, int depth) {
  static const struct {
    const char *name;
    size_t slot;
    unsigned group;
  } slots[] = {
      {"not", offsetof(sc_node, not_), SC_G_APPLY},
      {"if", offsetof(sc_node, if_), SC_G_APPLY},
      {"then", offsetof(sc_node, then_), 0},
      {"else", offsetof(sc_node, else_), 0},
      {"unevaluatedItems", offsetof(sc_node, uneval_items), SC_G_UNEVAL},
      {"unevaluatedProperties", offsetof(sc_node, uneval_props), SC_G_UNEVAL},
  };
  sc_node *s = sub(c, v, at, sc, depth);
  if (!s) return -1;
  for (size_t i = 0; i < sizeof slots / sizeof slots[0]; i++)
    if (!strcmp(v->string, slots[i].name)) {
      *(sc_node **)((char *)n + slots[i].slot) = s;
      n->groups |= slots[i].group;
    }
  return 0;
}

static int k_ref(sc_compiler *c, sc_node *n, const cJSON *v, const seg *at,
                 const sc_scope *sc, int depth) {
  n->groups |= SC_G_APPLY;
  return tg__sc_add_ref(c, n, v, at, sc, v->string[1] == 'd');
}

static int k_defs(sc_compiler *c, sc_node *n, const cJSON *v, const seg *at,
                  const sc_scope *sc, int depth) {
  return sub_map(c, v, at, sc, depth, NULL);
}

static int k_none(sc_compiler *c, sc_node *n, const cJSON *v, const seg *at,
                  const sc_scope *sc, int depth) {
  return 0; /* read by tg__sc_identify */
}

static int k_2019(sc_compiler *c, sc_node *n, const cJSON *v, const seg *at,
                  const sc_scope *sc, int depth) {
  return tg__sc_bad_kw(c, at, v->string,
                       "is a draft 2019-09 keyword; toolgate validates draft "
                       "2020-12 (use $dynamicRef / $dynamicAnchor) and "
                       "draft-07");
}

/* ---- the table --------------------------------------------------------- */

enum { D7 = 1, D2020 = 2, BOTH = 3 };

static const struct {
  const char *name;
  kw_fn fn;
  int drafts;
  const char *instead; /* for the other draft: what to write */
} keywords[] = {
    {"$schema", k_none, BOTH, NULL},
    {"$id", k_none, BOTH, NULL},
    {"$anchor", k_none, D2020, NULL},
    {"$dynamicAnchor", k_none, D2020, NULL},
    {"$ref", k_ref, BOTH, NULL},
    {"$dynamicRef", k_ref, D2020, NULL},
    {"$defs", k_defs, BOTH, NULL},
    {"definitions", k_defs, BOTH, NULL},
    {"$recursiveRef", k_2019, BOTH, NULL},
    {"$recursiveAnchor", k_2019, BOTH, NULL},
    {"type", k_type, BOTH, NULL},
    {"enum", k_enum, BOTH, NULL},
    {"const", k_const, BOTH, NULL},
    {"minimum", k_bound, BOTH, NULL},
    {"maximum", k_bound, BOTH, NULL},
    {"exclusiveMinimum", k_bound, BOTH, NULL},
    {"exclusiveMaximum", k_bound, BOTH, NULL},
    {"multipleOf", k_multiple, BOTH, NULL},
    {"minLength", k_count, BOTH, NULL},
    {"maxLength", k_count, BOTH, NULL},
    {"pattern", k_pattern, BOTH, NULL},
    {"format", k_format, BOTH, NULL},
    {"items", k_items, BOTH, NULL},
    {"prefixItems", k_prefix_items, D2020, NULL},
    {"additionalItems", k_additional_items, D7,
     "write 'items' (it applies after 'prefixItems')"},
    {"contains", k_contains, BOTH, NULL},
    {"minContains", k_count, D2020, NULL},
    {"maxContains", k_count, D2020, NULL},
    {"minItems", k_count, BOTH, NULL},
    {"maxItems", k_count, BOTH, NULL},
    {"uniqueItems", k_unique, BOTH, NULL},
    {"unevaluatedItems", k_single, D2020, NULL},
    {"properties", k_properties, BOTH, NULL},
    {"patternProperties", k_pattern_properties, BOTH, NULL},
    {"additionalProperties", k_additional, BOTH, NULL},
    {"propertyNames", k_property_names, BOTH, NULL},
    {"required", k_required, BOTH, NULL},
    {"minProperties", k_count, BOTH, NULL},
    {"maxProperties", k_count, BOTH, NULL},
    {"dependentRequired", k_dependent_required, D2020, NULL},
    {"dependentSchemas", k_dependent_schemas, D2020, NULL},
    {"dependencies", k_dependencies, D7,
     "write 'dependentRequired' (lists of names) and 'dependentSchemas' "
     "(schemas)"},
    {"unevaluatedProperties", k_single, D2020, NULL},
    {"allOf", k_combinator, BOTH, NULL},
    {"anyOf", k_combinator, BOTH, NULL},
    {"oneOf", k_combinator, BOTH, NULL},
    {"not", k_single, BOTH, NULL},
    {"if", k_single, BOTH, NULL},
    {"then", k_single, BOTH, NULL},
    {"else", k_single, BOTH, NULL},
};

static int wrong_draft(sc_compiler *c, const seg *at, size_t k, int draft) {
  sc_out *o = tg__sc_bad_at(c, at);
  tg__sc_str(o, "'");
  tg__sc_str(o, keywords[k].name);
  if (draft == SC_DRAFT7) {
    tg__sc_str(o, "' is a draft 2020-12 keyword, but this schema is "
                  "draft-07 (its $schema)");
    return -1;
  }
  tg__sc_str(o, "' is a draft-07 keyword; in draft 2020-12 (the default) ");
  tg__sc_str(o, keywords[k].instead);
  tg__sc_str(o, ", or declare \"$schema\": "
                "\"http://json-schema.org/draft-07/schema#\"");
  return -1;
}

static int keyword(sc_compiler *c, sc_node *n, const cJSON *v, const seg *at,
                   const sc_scope *sc, int depth) {
  int mine = n->draft == SC_DRAFT7 ? D7 : D2020;
  for (size_t k = 0; k < sizeof keywords / sizeof keywords[0]; k++) {
    if (strcmp(v->string, keywords[k].name)) continue;
    if (!(keywords[k].drafts & mine)) return wrong_draft(c, at, k, n->draft);
    return keywords[k].fn(c, n, v, at, sc, depth);
  }
  return 0; /* an annotation, or a keyword of someone's own */
}

/* What depends on more than one keyword. */
static void finish(sc_node *n) {
  if (n->draft == SC_DRAFT7 && n->prefix.n) {
    n->rest = n->add_items;
    n->rest_kw = "additionalItems";
  }
  if (n->contains) {
    if (!n->contains_count.has_lo) {
      n->contains_count.lo = 1;
      n->contains_count.has_lo = 1;
    }
  } else {
    n->contains_count = (sc_count){0, 0, 0, 0};
  }
  if (!n->if_) n->then_ = n->else_ = NULL;
}

static int compile_keywords(sc_compiler *c, sc_node *n, const cJSON *j,
                            const seg *at, const sc_scope *sc, int depth) {
  const cJSON *ref = cJSON_GetObjectItemCaseSensitive(j, "$ref");
  if (n->draft == SC_DRAFT7 && ref) /* the rest is ignored in draft-07 */
    return k_ref(c, n, ref, at, sc, depth);
  for (const cJSON *v = j->child; v; v = v->next)
    if (v->string && keyword(c, n, v, at, sc, depth) < 0) return -1;
  finish(n);
  return 0;
}

sc_node *tg__sc_compile_node(sc_compiler *c, const cJSON *j, const seg *at,
                             const sc_scope *parent, int depth) {
  sc_node *n = tg__sc_map_get(&c->map, j);
  if (n) return n;
  if (depth > SC_MAX_DEPTH) {
    tg__sc_bad(c, at, "schema nested deeper than " SC_MAX_DEPTH_TEXT " levels");
    return NULL;
  }
  if (!cJSON_IsBool(j) && !cJSON_IsObject(j)) {
    tg__sc_bad(c, at, "a schema must be an object or a boolean");
    return NULL;
  }
  if (!(n = tg__sc_alloc(&c->s->arena, sizeof *n)) ||
      tg__sc_map_put(&c->map, j, n) < 0) {
    tg__sc_nomem(c);
    return NULL;
  }
  n->src = j;
  if (c->last) c->last->next_compiled = n;
  else c->first = n;
  c->last = n;
  sc_scope sc = *parent;
  if (tg__sc_identify(c, n, j, at, &sc) < 0) return NULL;
  n->kind = cJSON_IsTrue(j) ? SC_KIND_TRUE
            : cJSON_IsFalse(j) ? SC_KIND_FALSE : SC_KIND_OBJECT;
  if (n->kind == SC_KIND_OBJECT &&
      compile_keywords(c, n, j, at, &sc, depth) < 0)
    return NULL;
  return n;
}
