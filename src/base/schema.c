/*
 * validate.c — the JSON Schema subset tool arguments are checked against
 * (draft 2020-12 semantics): type, enum, const, minimum, maximum,
 * exclusiveMinimum, exclusiveMaximum, minLength, maxLength, pattern, items,
 * minItems, maxItems, properties, required, additionalProperties, allOf,
 * anyOf, oneOf, and the boolean schemas true/false. Other keywords are
 * ignored.
 *
 * A path is a chain of segments on the C stack, each pointing at its
 * parent, and is only formatted when a failure is reported, so a passing
 * validation builds no strings. Recursion is bounded: tg__schema_validate
 * first runs the schema check (sub-schemas at most MAX_DEPTH deep) and a
 * depth check of the instance, and validation descends one sub-schema per
 * call, so it can never go deeper than MAX_DEPTH.
 */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "schema.h"
#include "json.h"

#define MAX_DEPTH 64
#define MAX_DEPTH_TEXT "64"
/* Instances may nest as deep as the chain lets args nest
 * (TG_JSON_MAX_DEPTH): validation follows the schema, never deeper. */
#define INSTANCE_MAX_DEPTH 128
#define INSTANCE_MAX_DEPTH_TEXT "128"

/* ---- bounded output ------------------------------------------------ */

/* Text written into the caller's buffer; cap 0 discards everything (used
 * for the anyOf/oneOf branches, whose own failures are not reported). */
typedef struct {
  char *buf;
  size_t cap, len;
  int full;
} out_t;

static out_t out_make(char *buf, size_t cap) {
  out_t o = {buf, buf ? cap : 0, 0, 0};
  if (o.cap) buf[0] = '\0';
  return o;
}

/* Appends n bytes. What does not fit is cut at a UTF-8 sequence boundary,
 * and nothing is appended after a cut, so the text never resumes past a
 * hole. The buffer stays NUL-terminated throughout. */
static void out_put(out_t *o, const char *s, size_t n) {
  if (!o->cap || o->full) return;
  size_t room = o->cap - 1 - o->len;
  if (n > room) {
    n = room;
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80) n--;
    o->full = 1;
  }
  memcpy(o->buf + o->len, s, n);
  o->len += n;
  o->buf[o->len] = '\0';
}

static void out_str(out_t *o, const char *s) { out_put(o, s, strlen(s)); }

static void out_size(out_t *o, size_t n) {
  char b[32];
  snprintf(b, sizeof b, "%zu", n);
  out_str(o, b);
}

/* As JSON prints it (base/json.h): the number reads back exactly. */
static void out_num(out_t *o, double d) {
  char b[TG_JSON_NUMBER_MAX];
  out_str(o, tg_json_number_text(d, b));
}

/* Writes s as a JSON string literal. Plain runs go out in one piece so a
 * cut can respect their UTF-8 boundaries. */
static void out_quoted(out_t *o, const char *s) {
  if (!o->cap) return;
  out_put(o, "\"", 1);
  while (*s) {
    size_t run = 0;
    while (s[run] && s[run] != '"' && s[run] != '\\' &&
           (unsigned char)s[run] >= 0x20)
      run++;
    out_put(o, s, run);
    s += run;
    if (!*s) break;
    char esc[8];
    if (*s == '"' || *s == '\\')
      snprintf(esc, sizeof esc, "\\%c", *s);
    else
      snprintf(esc, sizeof esc, "\\u%04x", (unsigned)(unsigned char)*s);
    out_str(o, esc);
    s++;
  }
  out_put(o, "\"", 1);
}

/* Writes j as compact JSON (enum/const values in messages). */
static void out_json(out_t *o, const cJSON *j) {
  if (!o->cap) return;
  char *t = tg_json_print(j, 0);
  out_str(o, t ? t : "?");
  free(t);
}

/* ---- paths --------------------------------------------------------- */

/* One step of a path, as base/json.h spells paths for every JSON error
 * (one source: "$.a.b[1][\"not an ident\"]"). NULL is the root "$". */
typedef tg_json_seg seg;

static seg key_seg(const seg *up, const char *key) {
  seg s = {up, key, strlen(key), 0};
  return s;
}

static seg index_seg(const seg *up, size_t i) {
  seg s = {up, NULL, 0, i};
  return s;
}

static void out_path(out_t *o, const seg *s) {
  char p[512];
  out_str(o, tg__json_path_text(s, p, sizeof p));
}

/* The segment leading from container to its child c (the i-th). */
static seg child_seg(const seg *up, const cJSON *container, const cJSON *c,
                     size_t i) {
  if (cJSON_IsObject(container) && c->string) return key_seg(up, c->string);
  return index_seg(up, i);
}

/* ---- shared helpers ------------------------------------------------ */

static const cJSON *kw(const cJSON *schema, const char *name) {
  return cJSON_GetObjectItemCaseSensitive(schema, name);
}

/* A finite number with no fractional part. Every double of magnitude 2^53
 * or more is integral; below that the cast is exact. (No libm needed.) */
static int is_integer(double d) {
  if (d != d || d - d != 0) return 0; /* NaN, infinity */
  double a = d < 0 ? -d : d;
  return a >= 9007199254740992.0 || (double)(long long)d == d;
}

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

static int is_type_name(const char *t) {
  static const char *const names[] = {"string", "number", "integer",
                                      "boolean", "object", "array", "null"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcmp(t, names[i]) == 0) return 1;
  return 0;
}

/* Counts code points: every byte that is not a continuation byte. */
static size_t utf8_length(const char *s) {
  size_t n = 0;
  for (; *s; s++)
    if (((unsigned char)*s & 0xC0) != 0x80) n++;
  return n;
}

/* Numeric bounds, shared by the check and the validation. */
static const struct {
  const char *kw;
  int upper, exclusive;
  const char *what;
} bounds[] = {
    {"minimum", 0, 0, " is below the minimum "},
    {"maximum", 1, 0, " is above the maximum "},
    {"exclusiveMinimum", 0, 1, " is not above the exclusive minimum "},
    {"exclusiveMaximum", 1, 1, " is not below the exclusive maximum "},
};

static const char *const count_kws[] = {"minLength", "maxLength", "minItems",
                                        "maxItems"};
static const char *const combinators[] = {"allOf", "anyOf", "oneOf"};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* ---- schema check -------------------------------------------------- */

typedef struct {
  out_t *out;
  const char *prefix; /* "schema at " or "invalid schema at " */
} sctx;

/* Starts "<prefix>$.path: " and returns the stream for the rest. */
static out_t *bad_at(const sctx *c, const seg *at) {
  out_str(c->out, c->prefix);
  out_path(c->out, at);
  out_str(c->out, ": ");
  return c->out;
}

static int bad(const sctx *c, const seg *at, const char *msg) {
  out_str(bad_at(c, at), msg);
  return -1;
}

/* "'<kw>' <msg>" */
static int bad_kw(const sctx *c, const seg *at, const char *name,
                  const char *msg) {
  out_t *o = bad_at(c, at);
  out_str(o, "'");
  out_str(o, name);
  out_str(o, "' ");
  out_str(o, msg);
  return -1;
}

static int check_node(const sctx *c, const cJSON *s, const seg *at,
                      int depth);

static int check_type_name(const sctx *c, const seg *at, const cJSON *t) {
  if (!cJSON_IsString(t))
    return bad_kw(c, at, "type", "must be a string or an array of strings");
  if (is_type_name(t->valuestring)) return 0;
  out_t *o = bad_at(c, at);
  out_str(o, "'type' names an unknown type ");
  out_quoted(o, t->valuestring);
  out_str(o, " (known: string, number, integer, boolean, object, array, "
             "null)");
  return -1;
}

static int check_type(const sctx *c, const cJSON *s, const seg *at) {
  const cJSON *t = kw(s, "type");
  if (!t || cJSON_IsString(t)) return t ? check_type_name(c, at, t) : 0;
  if (!cJSON_IsArray(t))
    return bad_kw(c, at, "type", "must be a string or an array of strings");
  /* An empty list would reject every value; surely a mistake. */
  if (!t->child) return bad_kw(c, at, "type", "must not be an empty array");
  for (const cJSON *e = t->child; e; e = e->next)
    if (check_type_name(c, at, e)) return -1;
  return 0;
}

static int check_numbers(const sctx *c, const cJSON *s, const seg *at) {
  for (size_t i = 0; i < COUNT(bounds); i++) {
    const cJSON *b = kw(s, bounds[i].kw);
    if (b && !cJSON_IsNumber(b))
      return bad_kw(c, at, bounds[i].kw, "must be a number");
  }
  for (size_t i = 0; i < COUNT(count_kws); i++) {
    const cJSON *b = kw(s, count_kws[i]);
    if (b && !(cJSON_IsNumber(b) && b->valuedouble >= 0 &&
               is_integer(b->valuedouble)))
      return bad_kw(c, at, count_kws[i], "must be a non-negative integer");
  }
  return 0;
}

static int check_pattern(const sctx *c, const cJSON *s, const seg *at) {
  const cJSON *p = kw(s, "pattern");
  if (!p) return 0;
  if (!cJSON_IsString(p)) return bad_kw(c, at, "pattern", "must be a string");
  regex_t re;
  int rc = regcomp(&re, p->valuestring, REG_EXTENDED | REG_NOSUB);
  if (rc == 0) {
    regfree(&re);
    return 0;
  }
  char why[128];
  /* No regfree: a failed regcomp leaves nothing allocated. */
  regerror(rc, &re, why, sizeof why);
  out_t *o = bad_at(c, at);
  out_str(o, "'pattern' ");
  out_quoted(o, p->valuestring);
  out_str(o, " does not compile: ");
  out_str(o, why);
  return -1;
}

/* A Lua schema's `required = {}` arrives as an empty object; it means the
 * empty list, so it is accepted as one. */
static int check_required(const sctx *c, const cJSON *s, const seg *at) {
  const cJSON *r = kw(s, "required");
  if (!r || (cJSON_IsObject(r) && !r->child)) return 0;
  if (cJSON_IsArray(r)) {
    const cJSON *e = r->child;
    while (e && cJSON_IsString(e)) e = e->next;
    if (!e) return 0;
  }
  return bad_kw(c, at, "required", "must be an array of strings");
}

static int check_properties(const sctx *c, const cJSON *s, const seg *at,
                            int depth) {
  const cJSON *p = kw(s, "properties");
  if (!p) return 0;
  if (!cJSON_IsObject(p))
    return bad_kw(c, at, "properties", "must be an object of schemas");
  seg ps = key_seg(at, "properties");
  for (const cJSON *e = p->child; e; e = e->next) {
    seg es = key_seg(&ps, e->string ? e->string : "");
    if (check_node(c, e, &es, depth + 1)) return -1;
  }
  return 0;
}

/* items and additionalProperties: a single sub-schema. */
static int check_sub(const sctx *c, const cJSON *s, const seg *at,
                     const char *name, int depth) {
  const cJSON *sub = kw(s, name);
  if (!sub) return 0;
  seg ss = key_seg(at, name);
  return check_node(c, sub, &ss, depth + 1);
}

static int check_combinators(const sctx *c, const cJSON *s, const seg *at,
                             int depth) {
  for (size_t i = 0; i < COUNT(combinators); i++) {
    const cJSON *a = kw(s, combinators[i]);
    if (!a) continue;
    if (!cJSON_IsArray(a) || !a->child)
      return bad_kw(c, at, combinators[i],
                    "must be a non-empty array of schemas");
    seg as = key_seg(at, combinators[i]);
    size_t n = 0;
    for (const cJSON *e = a->child; e; e = e->next, n++) {
      seg es = index_seg(&as, n);
      if (check_node(c, e, &es, depth + 1)) return -1;
    }
  }
  return 0;
}

static int check_node(const sctx *c, const cJSON *s, const seg *at,
                      int depth) {
  if (depth > MAX_DEPTH)
    return bad(c, at, "schema nested deeper than " MAX_DEPTH_TEXT " levels");
  if (cJSON_IsBool(s)) return 0;
  if (!cJSON_IsObject(s))
    return bad(c, at, "a schema must be an object or a boolean");
  const cJSON *e = kw(s, "enum");
  if (e && !cJSON_IsArray(e)) return bad_kw(c, at, "enum", "must be an array");
  if (check_type(c, s, at) || check_numbers(c, s, at) ||
      check_pattern(c, s, at) || check_required(c, s, at) ||
      check_properties(c, s, at, depth) ||
      check_sub(c, s, at, "items", depth) ||
      check_sub(c, s, at, "additionalProperties", depth) ||
      check_combinators(c, s, at, depth))
    return -1;
  return 0;
}

int tg__schema_check(const cJSON *schema, char *err, size_t errlen) {
  out_t o = out_make(err, errlen);
  sctx c = {&o, "schema at "};
  return check_node(&c, schema, NULL, 0);
}

/* ---- validation ---------------------------------------------------- */

/* Starts "$.path: " and returns the stream for the rest. */
static out_t *fail_at(out_t *o, const seg *at) {
  out_path(o, at);
  out_str(o, ": ");
  return o;
}

static int fail(out_t *o, const seg *at, const char *msg) {
  out_str(fail_at(o, at), msg);
  return 0;
}

static int validate(const cJSON *s, const cJSON *v, const seg *at,
                    out_t *o);

static int has_type(const cJSON *v, const char *t) {
  if (strcmp(t, "integer") == 0)
    return cJSON_IsNumber(v) && is_integer(v->valuedouble);
  return strcmp(t, type_of(v)) == 0;
}

static int v_type(const cJSON *s, const cJSON *v, const seg *at, out_t *o) {
  const cJSON *t = kw(s, "type");
  if (!t) return 1;
  if (cJSON_IsString(t) && has_type(v, t->valuestring)) return 1;
  for (const cJSON *e = cJSON_IsArray(t) ? t->child : NULL; e; e = e->next)
    if (has_type(v, e->valuestring)) return 1;
  /* "expected string or null, got number" */
  out_str(fail_at(o, at), "expected ");
  if (cJSON_IsString(t)) out_str(o, t->valuestring);
  for (const cJSON *e = cJSON_IsArray(t) ? t->child : NULL; e; e = e->next) {
    if (e != t->child) out_str(o, " or ");
    out_str(o, e->valuestring);
  }
  out_str(o, ", got ");
  out_str(o, type_of(v));
  return 0;
}

static int v_enum_const(const cJSON *s, const cJSON *v, const seg *at,
                        out_t *o) {
  const cJSON *e = kw(s, "enum");
  if (e) {
    const cJSON *x = e->child;
    while (x && !cJSON_Compare(x, v, 1)) x = x->next;
    if (!x) {
      out_str(fail_at(o, at), "must be one of ");
      for (x = e->child; x; x = x->next) {
        if (x != e->child) out_str(o, ", ");
        out_json(o, x);
      }
      return 0;
    }
  }
  const cJSON *k = kw(s, "const");
  if (k && !cJSON_Compare(k, v, 1)) {
    out_str(fail_at(o, at), "must equal ");
    out_json(o, k);
    return 0;
  }
  return 1;
}

static int v_number(const cJSON *s, const cJSON *v, const seg *at, out_t *o) {
  if (!cJSON_IsNumber(v)) return 1;
  double d = v->valuedouble;
  for (size_t i = 0; i < COUNT(bounds); i++) {
    const cJSON *b = kw(s, bounds[i].kw);
    if (!b) continue;
    double x = b->valuedouble;
    int outside = bounds[i].upper ? (bounds[i].exclusive ? d >= x : d > x)
                               : (bounds[i].exclusive ? d <= x : d < x);
    if (outside) {
      out_num(fail_at(o, at), d);
      out_str(o, bounds[i].what);
      out_num(o, x);
      return 0;
    }
  }
  return 1;
}

/* Checks n against the keywords lo/hi: "is 2 characters long, fewer than
 * minLength 3", "has 5 items, more than maxItems 3". */
static int v_count(const cJSON *s, size_t n, const seg *at, out_t *o,
                   const char *lo, const char *hi, const char *verb,
                   const char *unit) {
  const cJSON *l = kw(s, lo), *h = kw(s, hi);
  int below = l && (double)n < l->valuedouble;
  int above = h && (double)n > h->valuedouble;
  if (!below && !above) return 1;
  out_str(fail_at(o, at), verb);
  out_size(o, n);
  out_str(o, unit);
  out_str(o, below ? ", fewer than " : ", more than ");
  out_str(o, below ? lo : hi);
  out_str(o, " ");
  out_num(o, (below ? l : h)->valuedouble);
  return 0;
}

/* Unanchored search, as in JSON Schema; compiled per use, nothing cached. */
static int v_pattern(const cJSON *s, const cJSON *v, const seg *at,
                     out_t *o) {
  const cJSON *p = kw(s, "pattern");
  if (!p) return 1;
  regex_t re;
  if (regcomp(&re, p->valuestring, REG_EXTENDED | REG_NOSUB) != 0) {
    out_str(fail_at(o, at), "invalid pattern ");
    out_quoted(o, p->valuestring);
    return 0;
  }
  int match = regexec(&re, v->valuestring, 0, NULL, 0) == 0;
  regfree(&re);
  if (match) return 1;
  out_str(fail_at(o, at), "does not match pattern ");
  out_quoted(o, p->valuestring);
  return 0;
}

static int v_string(const cJSON *s, const cJSON *v, const seg *at, out_t *o) {
  if (!cJSON_IsString(v)) return 1;
  return v_count(s, utf8_length(v->valuestring), at, o, "minLength",
                 "maxLength", "is ", " characters long") &&
         v_pattern(s, v, at, o);
}

static int v_array(const cJSON *s, const cJSON *v, const seg *at, out_t *o) {
  if (!cJSON_IsArray(v)) return 1;
  size_t n = 0;
  for (const cJSON *e = v->child; e; e = e->next) n++;
  if (!v_count(s, n, at, o, "minItems", "maxItems", "has ", " items"))
    return 0;
  const cJSON *items = kw(s, "items");
  if (!items) return 1;
  size_t i = 0;
  for (const cJSON *e = v->child; e; e = e->next, i++) {
    seg es = index_seg(at, i);
    if (!validate(items, e, &es, o)) return 0;
  }
  return 1;
}

static int v_object(const cJSON *s, const cJSON *v, const seg *at, out_t *o) {
  if (!cJSON_IsObject(v)) return 1;
  const cJSON *req = kw(s, "required");
  for (const cJSON *r = cJSON_IsArray(req) ? req->child : NULL; r;
       r = r->next) {
    if (cJSON_GetObjectItemCaseSensitive(v, r->valuestring)) continue;
    out_str(fail_at(o, at), "missing required property ");
    out_quoted(o, r->valuestring);
    return 0;
  }
  const cJSON *props = kw(s, "properties");
  const cJSON *extra = kw(s, "additionalProperties");
  for (const cJSON *e = v->child; e; e = e->next) {
    if (!e->string) continue;
    seg es = key_seg(at, e->string);
    const cJSON *sub = props ? kw(props, e->string) : NULL;
    if (!sub) sub = extra;
    if (!sub) continue;
    /* Said plainly rather than as the generic "schema is false". */
    if (sub == extra && cJSON_IsFalse(extra))
      return fail(o, &es,
                  "property not allowed (additionalProperties is false)");
    if (!validate(sub, e, &es, o)) return 0;
  }
  return 1;
}

/* allOf reports the failing branch itself; anyOf/oneOf try each branch
 * quietly and report only the count. */
static int v_combinators(const cJSON *s, const cJSON *v, const seg *at,
                         out_t *o) {
  const cJSON *all = kw(s, "allOf"), *any = kw(s, "anyOf"),
              *one = kw(s, "oneOf");
  for (const cJSON *e = all ? all->child : NULL; e; e = e->next)
    if (!validate(e, v, at, o)) return 0;
  out_t quiet = out_make(NULL, 0);
  if (any) {
    const cJSON *e = any->child;
    while (e && !validate(e, v, at, &quiet)) e = e->next;
    if (!e) return fail(o, at, "matches none of anyOf");
  }
  if (one) {
    size_t n = 0;
    for (const cJSON *e = one->child; e; e = e->next)
      n += (size_t)validate(e, v, at, &quiet);
    if (n == 0) return fail(o, at, "matches none of oneOf");
    if (n > 1) {
      out_str(fail_at(o, at), "matches ");
      out_size(o, n);
      out_str(o, " of oneOf (exactly one expected)");
      return 0;
    }
  }
  return 1;
}

/* Assumes a checked schema (keywords of the right JSON types). */
static int validate(const cJSON *s, const cJSON *v, const seg *at,
                    out_t *o) {
  if (cJSON_IsBool(s))
    return cJSON_IsTrue(s) ? 1 : fail(o, at, "not allowed (schema is false)");
  return v_type(s, v, at, o) && v_enum_const(s, v, at, o) &&
         v_number(s, v, at, o) && v_string(s, v, at, o) &&
         v_array(s, v, at, o) && v_object(s, v, at, o) &&
         v_combinators(s, v, at, o);
}

/* Rejects an instance nested deeper than INSTANCE_MAX_DEPTH; the walk
 * itself stops one level past the limit. */
static int too_deep(const cJSON *v, const seg *at, int depth, out_t *o) {
  if (depth > INSTANCE_MAX_DEPTH) {
    fail(o, at, "value nested deeper than " INSTANCE_MAX_DEPTH_TEXT " levels");
    return 1;
  }
  size_t i = 0;
  for (const cJSON *c = v->child; c; c = c->next, i++) {
    seg cs = child_seg(at, v, c, i);
    if (too_deep(c, &cs, depth + 1, o)) return 1;
  }
  return 0;
}

int tg__schema_validate(const cJSON *schema, const cJSON *instance, char *err,
                       size_t errlen) {
  out_t o = out_make(err, errlen);
  /* The schema passed tg__schema_check when its tool was registered. */
  if (!schema) return fail(&o, NULL, "no schema");
  if (!instance) return fail(&o, NULL, "no value");
  if (too_deep(instance, NULL, 0, &o)) return 0;
  return validate(schema, instance, NULL, &o);
}
