/*
 * schema_int.h — the compiled form of a JSON Schema, shared by the files
 * of the validator (schema*.c) and by nothing else.
 *
 * A tg_schema is a set of schema documents (the one compiled, plus the
 * documents its $refs reached: the built-in meta-schema, or ones a fetch
 * callback handed over) turned into nodes, one per schema object or
 * boolean. A node holds each keyword in the form validation wants: type
 * as a bit mask, bounds as doubles, patterns compiled, properties sorted
 * for binary search, sub-schemas and $ref targets as node pointers. The
 * keyword values that are compared as JSON (enum, const) point into the
 * documents, which the set keeps. Everything is allocated from the set's
 * arena and freed with it, in one go.
 */
#ifndef TG_SCHEMA_INT_H
#define TG_SCHEMA_INT_H

#include <stddef.h>
#include <stdint.h>
#include <cjson/cJSON.h>
#include "json.h"
#include "schema.h"

/* Sub-schemas nest at most this deep within one document. */
#define SC_MAX_DEPTH 64
#define SC_MAX_DEPTH_TEXT "64"
/* Instances may nest as deep as the chain lets args nest
 * (TG_JSON_MAX_DEPTH): validation follows the schema, never deeper. */
#define SC_INSTANCE_MAX_DEPTH 128
#define SC_INSTANCE_MAX_DEPTH_TEXT "128"
/* Nested validations of one value: bounds recursion through $dynamicRef
 * (static $ref loops are refused when the schema compiles). */
#define SC_VALIDATE_MAX_DEPTH 400
#define SC_VALIDATE_MAX_DEPTH_TEXT "400"

typedef tg_json_seg seg;

/* ---- bounded output (schema_out.c) ----------------------------------- */

/* Text written into a caller's buffer; cap 0 discards everything. What
 * does not fit is cut at a UTF-8 boundary and nothing follows the cut. */
typedef struct {
  char *buf;
  size_t cap, len;
  int full;
} sc_out;

sc_out tg__sc_out_make(char *buf, size_t cap);
void tg__sc_put(sc_out *o, const char *s, size_t n);
void tg__sc_str(sc_out *o, const char *s);
void tg__sc_size(sc_out *o, size_t n);
void tg__sc_num(sc_out *o, double d);        /* as tg_json_print does */
void tg__sc_quoted(sc_out *o, const char *s); /* a JSON string literal */
void tg__sc_json(sc_out *o, const cJSON *j);  /* compact JSON */
void tg__sc_path(sc_out *o, const seg *s);    /* "$.a[1]" */

seg tg__sc_key(const seg *up, const char *key);
seg tg__sc_index(const seg *up, size_t i);

/* ---- the arena (schema.c) -------------------------------------------- */

typedef struct sc_chunk sc_chunk;
typedef struct {
  sc_chunk *head;
  size_t used, cap;
} sc_arena;

/* Zeroed memory that lives as long as the arena; NULL when out of memory. */
void *tg__sc_alloc(sc_arena *a, size_t n);
char *tg__sc_strdup(sc_arena *a, const char *s);
char *tg__sc_strndup(sc_arena *a, const char *s, size_t n);
void tg__sc_arena_free(sc_arena *a);

/* ---- regular expressions (schema_regex.c) ---------------------------- */

typedef struct sc_regex sc_regex;
typedef struct sc_matcher sc_matcher; /* per validation: match data */

/* Compiles an ECMA-262 pattern (see docs/json-schema.md). NULL
 * with why in err when it does not compile or is not ECMA-262. */
sc_regex *tg__sc_regex_new(const char *pattern, char *err, size_t errlen);
void tg__sc_regex_free(sc_regex *re);
const char *tg__sc_regex_source(const sc_regex *re);

enum { SC_MATCH = 1, SC_NO_MATCH = 0, SC_MATCH_LIMIT = -1,
       SC_MATCH_BAD_UTF8 = -2, SC_MATCH_NOMEM = -3, SC_MATCH_BUDGET = -4 };
/* The time all the matches of one validation may take together. */
#define SC_MATCH_BUDGET_MS 500
#define SC_MATCH_BUDGET_TEXT "500 ms"
/* Searches s (unanchored, as JSON Schema does). *m is made on first use
 * (it holds the budget's clock) and freed with tg__sc_matcher_free. */
int tg__sc_regex_search(const sc_regex *re, const char *s, size_t len,
                        sc_matcher **m);
void tg__sc_matcher_free(sc_matcher *m);

/* ---- nodes ------------------------------------------------------------ */

enum { SC_DRAFT7 = 7, SC_DRAFT2020 = 2020 };
enum { SC_KIND_TRUE, SC_KIND_FALSE, SC_KIND_OBJECT };

/* type keyword bits */
enum {
  SC_T_NULL = 1, SC_T_BOOLEAN = 2, SC_T_OBJECT = 4, SC_T_ARRAY = 8,
  SC_T_NUMBER = 16, SC_T_STRING = 32, SC_T_INTEGER = 64
};

/* Which groups of keywords a node has, so validation skips the rest. */
enum {
  SC_G_TYPE = 1 << 0, SC_G_ENUM = 1 << 1, SC_G_NUMBER = 1 << 2,
  SC_G_STRING = 1 << 3, SC_G_ARRAY = 1 << 4, SC_G_OBJECT = 1 << 5,
  SC_G_APPLY = 1 << 6, SC_G_UNEVAL = 1 << 7
};

/* Numeric bounds, in the order they are checked. */
enum { SC_B_MIN, SC_B_MAX, SC_B_XMIN, SC_B_XMAX, SC_B__COUNT };

typedef struct sc_node sc_node;
typedef struct sc_resource sc_resource;

/* A lower and an upper count (minLength/maxLength, ...). */
typedef struct {
  double lo, hi;
  unsigned char has_lo, has_hi;
} sc_count;

typedef struct {
  sc_node **v;
  size_t n;
} sc_list;

typedef struct {
  const char *name;
  size_t len;
  sc_node *node;
} sc_prop;

typedef struct {
  sc_regex *re;
  sc_node *node;
} sc_pprop;

typedef struct {
  const char *name;
  const cJSON *names; /* array of strings (or {} from Lua: none) */
} sc_depreq;

typedef struct {
  const char *name;
  sc_node *node;
} sc_depsch;

struct sc_node {
  const cJSON *src;
  sc_resource *res;    /* the schema resource it is in (dynamic scope) */
  unsigned groups;     /* SC_G_* */
  unsigned char kind, types, has_bound[SC_B__COUNT], unique;
  short draft;
  /* numbers */
  double bound[SC_B__COUNT], multiple_of; /* multiple_of 0: none */
  /* strings */
  sc_count length;
  sc_regex *pattern;
  /* arrays: prefixItems (07: items as an array), then `rest` for the
   * items after them (items; 07: additionalItems, or items as a schema) */
  sc_list prefix;
  sc_node *rest, *add_items; /* add_items: 07's additionalItems, read */
  const char *rest_kw;        /* when the node is done */
  sc_node *contains;
  sc_count items, contains_count;
  sc_node *uneval_items;
  /* objects */
  sc_prop *props;      /* sorted by name */
  size_t nprops;
  sc_pprop *pprops;
  size_t npprops;
  sc_node *additional, *prop_names, *uneval_props;
  const cJSON *required; /* array of strings, or NULL */
  sc_count nprops_count;
  sc_depreq *dep_req;
  size_t ndep_req;
  sc_depsch *dep_sch;
  size_t ndep_sch;
  /* applicators */
  sc_list all_of, any_of, one_of;
  sc_node *not_, *if_, *then_, *else_;
  sc_node *ref, *dyn_ref;
  const char *dyn_anchor; /* $dynamicRef's name when it may go dynamic */
  const char *ref_written, *ref_where; /* for the message of a $ref loop */
  unsigned char mark;     /* scratch of the loop check */
  sc_node *next_compiled; /* every node, in the order compiled */
  /* enum / const: values in the document */
  const cJSON *enum_, *const_;
};

/* An $anchor or $dynamicAnchor (or a draft-07 "$id": "#name"). */
typedef struct sc_anchor {
  const char *name;
  sc_node *node;
  int dynamic;
  struct sc_anchor *next;
} sc_anchor;

/* A schema resource: a document root or a sub-schema with $id. */
struct sc_resource {
  const char *uri;  /* absolute, without fragment */
  const cJSON *json;
  sc_node *root;
  sc_anchor *anchors;
  sc_resource *next;
};

/* A compiled regex kept for freeing. */
typedef struct sc_regex_ref {
  sc_regex *re;
  struct sc_regex_ref *next;
} sc_regex_ref;

typedef struct sc_doc {
  cJSON *json;   /* owned (a copy, or fetched) */
  struct sc_doc *next;
} sc_doc;

struct tg_schema {
  sc_arena arena;
  sc_node *root;
  sc_resource *resources;
  sc_regex_ref *regexes;
  sc_doc *docs;
  int uses_patterns; /* validation needs a matcher */
};

/* ---- compiling (schema_compile.c, schema_refs.c) ---------------------- */

/* A $ref or $dynamicRef to resolve once every document is read. */
typedef struct sc_pending {
  sc_node *from;
  const char *uri;     /* absolute, fragment kept */
  const char *written; /* as the schema wrote it */
  const char *where;   /* "schema at $.a.b" for messages */
  int dynamic;
  struct sc_pending *next;
} sc_pending;

/* cJSON node -> compiled node, while compiling. */
typedef struct {
  const cJSON **keys;
  sc_node **vals;
  size_t cap, n;
} sc_map;

typedef struct {
  tg_schema *s;
  sc_map map;
  sc_pending *pending;
  sc_node *first, *last; /* every node, in the order compiled */
  tg__schema_fetch_fn fetch;
  void *fetch_ud;
  sc_out *err;
  const char *doc_label; /* NULL: the schema itself; else the URI */
  const char *prefix;    /* path text of an unvisited $ref target */
  int oom;
} sc_compiler;

/* What a sub-schema inherits from where it sits. */
typedef struct {
  const char *base; /* base URI */
  sc_resource *res;
  int draft;
} sc_scope;

int tg__sc_map_put(sc_map *m, const cJSON *k, sc_node *v);
sc_node *tg__sc_map_get(const sc_map *m, const cJSON *k);

/* Compiles the schema at j (a boolean or an object) found at `at`. */
sc_node *tg__sc_compile_node(sc_compiler *c, const cJSON *j, const seg *at,
                             const sc_scope *sc, int depth);
/* Reports "schema at $.path: " and returns the stream for the rest. */
sc_out *tg__sc_bad_at(sc_compiler *c, const seg *at);
int tg__sc_bad(sc_compiler *c, const seg *at, const char *msg);
int tg__sc_bad_kw(sc_compiler *c, const seg *at, const char *kw,
                  const char *msg);
int tg__sc_nomem(sc_compiler *c);

/* $id / $anchor / $dynamicAnchor / $schema of the object j; fills the
 * scope its keywords see. 0 or -1 (reported). */
int tg__sc_identify(sc_compiler *c, sc_node *n, const cJSON *j,
                    const seg *at, sc_scope *sc);
/* Queues the $ref (or $dynamicRef) string r of node n. */
int tg__sc_add_ref(sc_compiler *c, sc_node *n, const cJSON *r, const seg *at,
                   const sc_scope *sc, int dynamic);
/* Resolves every queued reference (compiling what they reach), then
 * refuses $ref loops that never look into the value. 0 or -1. */
int tg__sc_resolve_refs(sc_compiler *c);
/* A new resource for a document root or an $id. */
sc_resource *tg__sc_add_resource(sc_compiler *c, const char *uri,
                                 const cJSON *json, const seg *at);

/* $schema's draft, or 0 when unknown. */
int tg__sc_draft_of(const char *uri);

/* URIs (schema_uri.c): ref resolved against base into a new arena
 * string; NULL when out of memory. */
char *tg__sc_uri_resolve(sc_arena *a, const char *base, const char *ref);
/* The fragment of uri (after '#', percent-decoded into the arena), or
 * NULL when it has none; *len gets the length before it. */
char *tg__sc_uri_fragment(sc_arena *a, const char *uri, size_t *len);
/* The JSON pointer p ("/a/b~1c") applied to root; NULL when it does not
 * lead anywhere. *last_seen (may be NULL) gets the last node on the way
 * that the map knows. */
const cJSON *tg__sc_pointer(const cJSON *root, const char *p,
                            const sc_map *m, sc_node **last_seen);
/* The JSON path text ("$.a.b[0]") of pointer p into root, into o. */
void tg__sc_pointer_path(sc_out *o, const cJSON *root, const char *p);
/* Keeps json (owned) with the schema; frees it when that fails. */
int tg__sc_keep_doc(tg_schema *s, cJSON *json);

/* The built-in meta-schemas (schema_meta.c): the text for uri, or NULL. */
const char *tg__sc_builtin(const char *uri);

/* ---- validating (schema_validate.c, schema_apply.c) ------------------- */

/* Which properties or items of one value have been evaluated, for
 * unevaluatedProperties / unevaluatedItems: one bit per member. */
typedef struct {
  size_t n;
  uint64_t *bits;
  uint64_t inline_bits[2];
} sc_evalset;

/* The schema resources entered on the way to the current node, innermost
 * first: the dynamic scope $dynamicRef searches. */
typedef struct sc_scope_link {
  const sc_resource *res;
  const struct sc_scope_link *up;
} sc_scope_link;

/* Tells one failure; -1 when out of memory. */
typedef int (*sc_emit_fn)(void *ud, const seg *at, const char *kw,
                          const char *msg);

typedef struct {
  sc_emit_fn emit;
  void *emit_ud;
  size_t told, max_told; /* failures told; 1: stop at the first */
  int quiet;          /* > 0: inside a branch whose failures are not told */
  int oom;
  int over_budget;    /* the patterns' time budget is spent: stop */
  int depth;
  const char *name_of; /* inside propertyNames: messages say so */
  const sc_scope_link *scope;
  sc_matcher *matcher;
  char msg[1024];
  sc_out out;
  const seg *at;
  const char *kw;
} sc_vctx;

/* Validates v (at `at`) against n. ev, when not NULL, receives the
 * members n evaluated. 1 valid, 0 invalid (told through c->emit). */
int tg__sc_validate(sc_vctx *c, const sc_node *n, const cJSON *v,
                    const seg *at, sc_evalset *ev);
/* The applicators and unevaluated* of n (schema_apply.c). */
int tg__sc_apply(sc_vctx *c, const sc_node *n, const cJSON *v, const seg *at,
                 sc_evalset *ev);

/* Starts a failure of keyword kw at `at`; write the message into the
 * stream returned (a discarding one when quiet), then call tg__sc_fail_end.
 * Returns 0, for `return tg__sc_fail_end(c)`. */
sc_out *tg__sc_fail(sc_vctx *c, const seg *at, const char *kw);
int tg__sc_fail_end(sc_vctx *c);
int tg__sc_fail_msg(sc_vctx *c, const seg *at, const char *kw,
                    const char *msg);
/* Searches s for re: 1 when the search ran (*found says how it went),
 * 0 when it could not (the match limit, bad UTF-8: told as a failure of
 * kw at `at`; out of memory). */
int tg__sc_search(sc_vctx *c, const sc_regex *re, const char *s,
                  const seg *at, const char *kw, int *found);
/* Stop validating more keywords after a failure? */
int tg__sc_stop(const sc_vctx *c);

int tg__sc_evalset_init(sc_vctx *c, sc_evalset *e, size_t n);
void tg__sc_evalset_free(sc_evalset *e);
void tg__sc_evalset_mark(sc_evalset *e, size_t i);
void tg__sc_evalset_mark_from(sc_evalset *e, size_t from);
int tg__sc_evalset_has(const sc_evalset *e, size_t i);
void tg__sc_evalset_merge(sc_evalset *dst, const sc_evalset *src);
size_t tg__sc_count_children(const cJSON *v);

/* ---- JSON values (schema_equal.c) -------------------------------------- */

/* Deep equality as JSON Schema means it: 1 == 1.0, objects unordered. */
int tg__sc_equal(const cJSON *a, const cJSON *b);
/* The first pair of equal items of the array a: 1 with their indices,
 * 0 when all are distinct, -1 when out of memory. */
int tg__sc_duplicate(const cJSON *a, size_t *i, size_t *j);
/* Is v a multiple of m (m > 0), as the decimals they print as? */
int tg__sc_multiple_of(double v, double m);
/* A finite number with no fractional part. */
int tg__sc_is_integer(double d);

#endif
