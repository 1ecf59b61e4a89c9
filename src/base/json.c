/*
 * json.c — JSON text into toolgate (tg_json_parse) and trees from C hosts
 * held to the same rules (tg__json_check); see json.h for why.
 *
 * A strict RFC 8259 parser of its own rather than cJSON_Parse plus
 * checks: cJSON keeps both members of {"a":1,"a":2} (cJSON_GetObjectItem
 * finds the first, Lua tables keep the last), turns \u0000 into the end of
 * a C string ("rm x\u0000" reads as "rm x", {"path\u0000":1} as a second
 * "path"), takes 1e400 as infinity and copies any bytes into strings. Only
 * the parser sees the escapes and the byte offsets, so it is the place to
 * refuse all that, with the path and the byte of the problem.
 *
 * It builds the cJSON tree directly (strings and keys in buffers cJSON
 * frees), recursing once per container level, at most TG_JSON_MAX_DEPTH.
 */
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "json.h"

#define PRINTF_LIKE(f, a) __attribute__((format(printf, f, a)))

/* ---- duplicate keys ------------------------------------------------------ */

/* A member of an object being checked: its key and where it was (a byte
 * offset when parsing, the member's index in a tree). */
typedef struct {
  const char *key;
  size_t pos;
} member;

/* The members of one object; the first few live on the C stack. */
typedef struct {
  member small[16];
  member *m;
  size_t n, cap;
} members;

static void members_init(members *ms) {
  ms->m = ms->small;
  ms->n = 0;
  ms->cap = sizeof ms->small / sizeof *ms->small;
}

static void members_free(members *ms) {
  if (ms->m != ms->small) free(ms->m);
}

static int members_add(members *ms, const char *key, size_t pos) {
  if (ms->n == ms->cap) {
    size_t cap = ms->cap * 2;
    member *m = malloc(cap * sizeof *m);
    if (!m) return -1;
    memcpy(m, ms->m, ms->n * sizeof *m);
    members_free(ms);
    ms->m = m;
    ms->cap = cap;
  }
  ms->m[ms->n].key = key;
  ms->m[ms->n].pos = pos;
  ms->n++;
  return 0;
}

static int member_cmp(const void *a, const void *b) {
  const member *x = a, *y = b;
  int c = strcmp(x->key, y->key);
  return c ? c : (x->pos > y->pos) - (x->pos < y->pos);
}

/* The first member (by pos) whose key an earlier member has, or NULL.
 * Sorting keeps a hostile object of many keys O(n log n); it reorders
 * ms, which is done with then. */
static const member *first_duplicate(members *ms) {
  if (ms->n <= 16) {
    for (size_t j = 1; j < ms->n; j++)
      for (size_t i = 0; i < j; i++)
        if (ms->m[i].key[0] == ms->m[j].key[0] && /* most differ there */
            strcmp(ms->m[i].key, ms->m[j].key) == 0)
          return &ms->m[j];
    return NULL;
  }
  qsort(ms->m, ms->n, sizeof *ms->m, member_cmp);
  const member *first = NULL;
  for (size_t i = 1; i < ms->n; i++)
    if (strcmp(ms->m[i - 1].key, ms->m[i].key) == 0 &&
        (!first || ms->m[i].pos < first->pos))
      first = &ms->m[i];
  return first;
}

/* ---- errors -------------------------------------------------------------- */

typedef struct {
  const unsigned char *start, *p, *end;
  char *err;
  size_t errlen;
  size_t at;
} parser;

/* "$.path: what (byte N)"; returns NULL for the caller to return. */
static void *fail_at(parser *ps, const tg_json_seg *path,
                     const unsigned char *where, const char *fmt, ...)
    PRINTF_LIKE(4, 5);
static void *fail_at(parser *ps, const tg_json_seg *path,
                     const unsigned char *where, const char *fmt, ...) {
  char what[200];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  ps->at = (size_t)(where - ps->start);
  tg__json_path_error(ps->err, ps->errlen, path, "%s (byte %zu)", what, ps->at);
  return NULL;
}

/* What is at q, for "found ...": 'x', byte 0xNN, or the end. */
static const char *found(parser *ps, const unsigned char *q, char buf[24]) {
  if (q >= ps->end) return "the end of the text";
  if (*q >= 0x20 && *q < 0x7F) snprintf(buf, 24, "'%c'", *q);
  else snprintf(buf, 24, "byte 0x%02x", *q);
  return buf;
}

static void *unexpected(parser *ps, const tg_json_seg *path, const char *want) {
  char b[24];
  return fail_at(ps, path, ps->p, "expected %s, found %s", want,
                 found(ps, ps->p, b));
}

static void skip_space(parser *ps) {
  while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' ||
                             *ps->p == '\n' || *ps->p == '\r'))
    ps->p++;
}

/* The same message from the parser (ps) and the tree check (ck). */
typedef struct checker checker;
static int check_fail(checker *ck, const tg_json_seg *path, const char *fmt,
                      ...) PRINTF_LIKE(3, 4);

static int duplicate(parser *ps, checker *ck, const tg_json_seg *path,
                     const unsigned char *at, const char *key) {
  char q[80];
  tg_json_seg s = {path, key, strlen(key), 0};
  tg__json_quote(key, strlen(key), q, sizeof q);
  if (ps) fail_at(ps, &s, at, "duplicate key %s (a key may appear once in "
                  "an object)", q);
  else check_fail(ck, &s, "duplicate key %s (a key may appear once in an "
                  "object)", q);
  return -1;
}

/* ---- strings ------------------------------------------------------------- */

static int hex4(const unsigned char *q, unsigned *out) {
  unsigned v = 0;
  for (int i = 0; i < 4; i++) {
    unsigned c = q[i], d = c >= '0' && c <= '9' ? c - '0'
                       : c >= 'a' && c <= 'f' ? c - 'a' + 10
                       : c >= 'A' && c <= 'F' ? c - 'A' + 10 : 16;
    if (d == 16) return 0;
    v = v * 16 + d;
  }
  *out = v;
  return 1;
}

static size_t put_utf8(char *o, unsigned cp) {
  if (cp < 0x80) {
    o[0] = (char)cp;
    return 1;
  }
  if (cp < 0x800) {
    o[0] = (char)(0xC0 | cp >> 6);
    o[1] = (char)(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    o[0] = (char)(0xE0 | cp >> 12);
    o[1] = (char)(0x80 | (cp >> 6 & 0x3F));
    o[2] = (char)(0x80 | (cp & 0x3F));
    return 3;
  }
  o[0] = (char)(0xF0 | cp >> 18);
  o[1] = (char)(0x80 | (cp >> 12 & 0x3F));
  o[2] = (char)(0x80 | (cp >> 6 & 0x3F));
  o[3] = (char)(0x80 | (cp & 0x3F));
  return 4;
}

/* A \uXXXX escape at ps->p (after the backslash and 'u'), with the low
 * half of a surrogate pair when it is the high one. Returns the code
 * point, or 0 after reporting (\u0000 is refused too). */
static unsigned unicode_escape(parser *ps, const tg_json_seg *path,
                               const char *what) {
  const unsigned char *esc = ps->p - 2;
  unsigned cp, lo;
  if (ps->end - ps->p < 4 || !hex4(ps->p, &cp)) {
    fail_at(ps, path, esc, "\\u in %s is not followed by 4 hex digits", what);
    return 0;
  }
  ps->p += 4;
  if (cp == 0) {
    fail_at(ps, path, esc, "\\u0000 (NUL) in %s: toolgate cannot carry NUL "
            "characters", what);
    return 0;
  }
  if (cp >= 0xDC00 && cp <= 0xDFFF) {
    fail_at(ps, path, esc, "\\u%04x in %s is a lone low surrogate, not a "
            "character", cp, what);
    return 0;
  }
  if (cp < 0xD800 || cp > 0xDBFF) return cp;
  if (ps->end - ps->p < 6 || ps->p[0] != '\\' || ps->p[1] != 'u' ||
      !hex4(ps->p + 2, &lo) || lo < 0xDC00 || lo > 0xDFFF) {
    fail_at(ps, path, esc, "\\u%04x in %s is a high surrogate not followed "
            "by a low one (\\udc00-\\udfff)", cp, what);
    return 0;
  }
  ps->p += 6;
  return 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
}

/* One escape after the backslash at ps->p - 1; appends to o. Returns the
 * bytes written, 0 after reporting. */
static size_t escape(parser *ps, const tg_json_seg *path, const char *what,
                     char *o) {
  const unsigned char *at = ps->p - 1;
  if (ps->p >= ps->end) return 0; /* the closing quote was found: cannot be */
  unsigned char c = *ps->p++;
  switch (c) {
    case '"': case '\\': case '/': *o = (char)c; return 1;
    case 'b': *o = '\b'; return 1;
    case 'f': *o = '\f'; return 1;
    case 'n': *o = '\n'; return 1;
    case 'r': *o = '\r'; return 1;
    case 't': *o = '\t'; return 1;
    case 'u': {
      unsigned cp = unicode_escape(ps, path, what);
      return cp ? put_utf8(o, cp) : 0;
    }
    default: {
      char b[24];
      fail_at(ps, path, at, "an invalid escape in %s: '\\' followed by %s "
              "(JSON has \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)", what,
              found(ps, at + 1, b));
      return 0;
    }
  }
}

/* The string at ps->p (its opening quote), decoded into a new buffer cJSON
 * can free; NULL after reporting. what: "a string" or "a key". */
static char *parse_string(parser *ps, const tg_json_seg *path,
                          const char *what) {
  const unsigned char *q = ps->p + 1;
  while (q < ps->end && *q != '"') q += *q == '\\' ? 2 : 1;
  if (q >= ps->end)
    return fail_at(ps, path, ps->p, "%s is not closed (no ending '\"')", what);
  char *out = cJSON_malloc((size_t)(q - ps->p)); /* never longer decoded */
  if (!out) return fail_at(ps, path, ps->p, "out of memory");
  size_t n = 0;
  int bad = 0;
  ps->p++;
  while (!bad && ps->p < q) {
    const unsigned char *run = ps->p; /* plain ASCII goes over in one copy */
    while (ps->p < q && *ps->p >= 0x20 && *ps->p < 0x80 && *ps->p != '\\')
      ps->p++;
    memcpy(out + n, run, (size_t)(ps->p - run));
    n += (size_t)(ps->p - run);
    if (ps->p == q) break;
    unsigned c = *ps->p;
    size_t k = c >= 0x80 ? tg__utf8_seq(ps->p, (size_t)(q - ps->p)) : 0;
    if (c == '\\') {
      ps->p++;
      k = escape(ps, path, what, out + n);
      bad = !k;
    } else if (c < 0x20) {
      fail_at(ps, path, ps->p, "a raw control character (0x%02x) in %s: "
              "write it escaped (\\n, \\t, \\u00XX)", c, what);
      bad = 1;
    } else if (!k) {
      fail_at(ps, path, ps->p, "%s is not valid UTF-8 (byte 0x%02x)", what, c);
      bad = 1;
    } else {
      memcpy(out + n, ps->p, k);
      ps->p += k;
    }
    n += bad ? 0 : k;
  }
  if (bad) {
    cJSON_free(out);
    return NULL;
  }
  out[n] = '\0';
  ps->p = q + 1;
  return out;
}

static cJSON *string_node(char *owned) {
  cJSON *v = cJSON_CreateNull();
  if (!v) {
    cJSON_free(owned);
    return NULL;
  }
  v->type = cJSON_String; /* owned is cJSON's to free now */
  v->valuestring = owned;
  return v;
}

/* ---- numbers ------------------------------------------------------------ */

static const unsigned char *digits(const unsigned char *q,
                                   const unsigned char *end) {
  while (q < end && *q >= '0' && *q <= '9') q++;
  return q;
}

/* strtod of the number's text q[0, n), with JSON's point changed to the
 * locale's decimal point (LC_NUMERIC may be a host's). */
static double to_double(const unsigned char *q, size_t n, int *ok) {
  const char *dp = localeconv()->decimal_point;
  size_t dpn = dp && *dp ? strlen(dp) : 1;
  char small[64], *buf = n + dpn < sizeof small ? small : malloc(n + dpn + 1);
  *ok = buf != NULL;
  if (!buf) return 0;
  size_t o = 0;
  for (size_t i = 0; i < n; i++) {
    if (q[i] == '.' && dp && *dp) {
      memcpy(buf + o, dp, dpn);
      o += dpn;
    } else {
      buf[o++] = (char)q[i];
    }
  }
  buf[o] = '\0';
  char *end = NULL;
  double d = strtod(buf, &end);
  *ok = end == buf + o;
  if (buf != small) free(buf);
  return d;
}

/* The common case without strtod or the locale: an integer of at most 15
 * digits, which a double holds exactly. */
static int small_integer(const unsigned char *s, const unsigned char *end,
                         double *out) {
  int neg = *s == '-';
  if (end - s - neg > 15) return 0;
  long long v = 0;
  for (const unsigned char *q = s + neg; q < end; q++) {
    if (*q < '0' || *q > '9') return 0;
    v = v * 10 + (*q - '0');
  }
  *out = neg ? -(double)v : (double)v; /* "-0" is -0.0 */
  return 1;
}

static cJSON *parse_number(parser *ps, const tg_json_seg *path) {
  const unsigned char *s = ps->p, *q = s, *end = ps->end;
  if (*q == '-') q++;
  if (q < end && *q == '0') {
    q++;
    if (q < end && *q >= '0' && *q <= '9')
      return fail_at(ps, path, s, "a number may not start with 0 (%.*s)",
                     (int)(digits(q, end) - s), (const char *)s);
  } else if (q < end && *q >= '1' && *q <= '9') {
    q = digits(q, end);
  } else {
    ps->p = q;
    return unexpected(ps, path, "a digit");
  }
  if (q < end && *q == '.') {
    if (digits(q + 1, end) == q + 1) {
      ps->p = q + 1;
      return unexpected(ps, path, "a digit after the decimal point");
    }
    q = digits(q + 1, end);
  }
  if (q < end && (*q == 'e' || *q == 'E')) {
    q++;
    if (q < end && (*q == '+' || *q == '-')) q++;
    if (digits(q, end) == q) {
      ps->p = q;
      return unexpected(ps, path, "a digit in the exponent");
    }
    q = digits(q, end);
  }
  int ok = 1;
  double d;
  if (!small_integer(s, q, &d)) d = to_double(s, (size_t)(q - s), &ok);
  int shown = q - s > 40 ? 40 : (int)(q - s);
  const char *more = q - s > 40 ? "..." : "";
  if (!ok)
    return fail_at(ps, path, s, "the number %.*s%s cannot be read", shown,
                   (const char *)s, more);
  if (!isfinite(d))
    return fail_at(ps, path, s, "the number %.*s%s is out of range (JSON "
                   "numbers must fit a double: at most about 1.8e308)",
                   shown, (const char *)s, more);
  ps->p = q;
  cJSON *v = cJSON_CreateNumber(d);
  return v ? v : fail_at(ps, path, s, "out of memory");
}

/* ---- values -------------------------------------------------------------- */

static cJSON *parse_value(parser *ps, const tg_json_seg *path, int depth);

static cJSON *too_deep(parser *ps, const tg_json_seg *path) {
  return fail_at(ps, path, ps->p, "nested deeper than %d levels",
                 TG_JSON_MAX_DEPTH);
}

/* After a member or element: ',' (more follow) returns 1, the closer
 * returns 0, anything else -1 after reporting. */
static int next_or_close(parser *ps, const tg_json_seg *path, char closer,
                         const char *want) {
  skip_space(ps);
  if (ps->p < ps->end && *ps->p == ',') {
    ps->p++;
    return 1;
  }
  if (ps->p < ps->end && *ps->p == (unsigned char)closer) {
    ps->p++;
    return 0;
  }
  unexpected(ps, path, want);
  return -1;
}

/* One "key": value of the object o (ps->p after the whitespace before
 * the key). Returns 0, or -1 after reporting. */
/* The keys every JSON-RPC message and tool call has: taken as constants
 * (cJSON_StringIsConst, never freed) when written plainly, so that the
 * messages of a call allocate no key of these. */
static const char *const common_keys[] = {
    "jsonrpc", "id", "method", "params", "result", "error", "code",
    "message", "data", "name", "arguments", "_meta", "progressToken",
    "content", "type", "text", "isError", "structuredContent"};

/* The constant for the key at p (its opening quote), or NULL. */
static const char *common_key(const unsigned char *p, const unsigned char *end) {
  const unsigned char *q = p + 1;
  size_t n = 0;
  while (n < 20 && q + n < end && q[n] != '"' && q[n] != '\\') n++;
  if (q + n >= end || q[n] != '"') return NULL;
  for (size_t i = 0; i < sizeof common_keys / sizeof *common_keys; i++)
    if (common_keys[i][0] == q[0] && strlen(common_keys[i]) == n &&
        memcmp(common_keys[i], q, n) == 0)
      return common_keys[i];
  return NULL;
}

static void free_key(char *key, const char *constant) {
  if (!constant) cJSON_free(key);
}

static int parse_member(parser *ps, const tg_json_seg *path, int depth,
                        cJSON *o, members *ms) {
  if (ps->p >= ps->end || *ps->p != '"') {
    unexpected(ps, path, "a key in double quotes");
    return -1;
  }
  const unsigned char *at = ps->p;
  const char *constant = common_key(ps->p, ps->end);
  char *key = (char *)constant;
  if (constant) ps->p += strlen(constant) + 2;
  else key = parse_string(ps, path, "a key");
  if (!key) return -1;
  if (members_add(ms, key, (size_t)(at - ps->start)) < 0) {
    free_key(key, constant);
    fail_at(ps, path, at, "out of memory");
    return -1;
  }
  tg_json_seg s = {path, key, strlen(key), 0};
  skip_space(ps);
  if (ps->p >= ps->end || *ps->p != ':') {
    unexpected(ps, &s, "':' after the key");
    free_key(key, constant);
    return -1;
  }
  ps->p++;
  cJSON *v = parse_value(ps, &s, depth);
  if (!v) {
    free_key(key, constant);
    return -1;
  }
  v->string = key; /* cJSON frees it with the member (not a constant) */
  if (constant) v->type |= cJSON_StringIsConst;
  cJSON_AddItemToArray(o, v); /* appends; keeps v->string */
  return 0;
}

/* Duplicates are looked for when the object is complete: the error names
 * the first repeated key, at its second place. */
static cJSON *parse_object(parser *ps, const tg_json_seg *path, int depth) {
  if (depth > TG_JSON_MAX_DEPTH) return too_deep(ps, path);
  cJSON *o = cJSON_CreateObject();
  if (!o) return fail_at(ps, path, ps->p, "out of memory");
  members ms;
  members_init(&ms);
  ps->p++;
  skip_space(ps);
  int more = ps->p < ps->end && *ps->p == '}' ? (ps->p++, 0) : 1;
  while (more > 0) {
    skip_space(ps);
    if (parse_member(ps, path, depth, o, &ms) < 0) more = -1;
    else more = next_or_close(ps, path, '}', "',' or '}' after a member");
  }
  const member *dup = more == 0 ? first_duplicate(&ms) : NULL;
  if (dup) duplicate(ps, NULL, path, ps->start + dup->pos, dup->key);
  members_free(&ms);
  if (more == 0 && !dup) return o;
  cJSON_Delete(o);
  return NULL;
}

static cJSON *parse_array(parser *ps, const tg_json_seg *path, int depth) {
  if (depth > TG_JSON_MAX_DEPTH) return too_deep(ps, path);
  cJSON *a = cJSON_CreateArray();
  if (!a) return fail_at(ps, path, ps->p, "out of memory");
  ps->p++;
  skip_space(ps);
  int more = ps->p < ps->end && *ps->p == ']' ? (ps->p++, 0) : 1;
  for (size_t i = 0; more > 0; i++) {
    tg_json_seg s = {path, NULL, 0, i};
    cJSON *v = parse_value(ps, &s, depth);
    if (!v) {
      more = -1;
      break;
    }
    cJSON_AddItemToArray(a, v);
    more = next_or_close(ps, path, ']', "',' or ']' after an element");
  }
  if (more == 0) return a;
  cJSON_Delete(a);
  return NULL;
}

static cJSON *parse_literal(parser *ps, const tg_json_seg *path) {
  static const struct { const char *text; int type; } lits[] = {
      {"true", cJSON_True}, {"false", cJSON_False}, {"null", cJSON_NULL}};
  for (size_t i = 0; i < 3; i++) {
    size_t n = strlen(lits[i].text);
    if ((size_t)(ps->end - ps->p) >= n && memcmp(ps->p, lits[i].text, n) == 0) {
      cJSON *v = lits[i].type == cJSON_NULL
                     ? cJSON_CreateNull()
                     : cJSON_CreateBool(lits[i].type == cJSON_True);
      if (!v) return fail_at(ps, path, ps->p, "out of memory");
      ps->p += n;
      return v;
    }
  }
  return unexpected(ps, path, "a JSON value");
}

/* depth: how many containers enclose the value. */
static cJSON *parse_value(parser *ps, const tg_json_seg *path, int depth) {
  skip_space(ps);
  if (ps->p >= ps->end) return unexpected(ps, path, "a JSON value");
  switch (*ps->p) {
    case '{': return parse_object(ps, path, depth + 1);
    case '[': return parse_array(ps, path, depth + 1);
    case '"': {
      char *s = parse_string(ps, path, "a string");
      cJSON *v = s ? string_node(s) : NULL;
      return v || !s ? v : fail_at(ps, path, ps->p, "out of memory");
    }
    case '-': case '0': case '1': case '2': case '3': case '4':
    case '5': case '6': case '7': case '8': case '9':
      return parse_number(ps, path);
    default: return parse_literal(ps, path);
  }
}

cJSON *tg_json_parse(const char *text, size_t len, size_t *at, char *err,
                     size_t errlen) {
  char dummy[8];
  const unsigned char *t = (const unsigned char *)(text ? text : "");
  parser ps = {t, t, t + (text ? len : 0), err ? err : dummy,
               err ? errlen : sizeof dummy, 0};
  cJSON *v = parse_value(&ps, NULL, 0);
  if (v) {
    skip_space(&ps);
    if (ps.p < ps.end) {
      char b[24];
      fail_at(&ps, NULL, ps.p, "text after the JSON value: %s",
              found(&ps, ps.p, b));
      cJSON_Delete(v);
      v = NULL;
    }
  }
  if (at) *at = v ? 0 : ps.at;
  return v;
}

/* ---- trees built in C ---------------------------------------------------- */

struct checker {
  char *err;
  size_t errlen;
};

static int check_fail(checker *ck, const tg_json_seg *path, const char *fmt,
                      ...) {
  va_list ap;
  va_start(ap, fmt);
  tg__json_path_verror(ck->err, ck->errlen, path, fmt, ap);
  va_end(ap);
  return -1;
}

static int check_value(checker *ck, const cJSON *v, const tg_json_seg *path,
                       int depth);

static int check_utf8(checker *ck, const tg_json_seg *path, const char *s,
                      const char *what) {
  size_t n = strlen(s), bad = tg__utf8_invalid_at(s, n);
  if (bad == n) return 0;
  return check_fail(ck, path, "%s is not valid UTF-8 (byte 0x%02x at offset "
                    "%zu)", what, (unsigned char)s[bad], bad);
}

static int check_container(checker *ck, const cJSON *v,
                           const tg_json_seg *path, int depth) {
  int object = cJSON_IsObject(v), rc = 0;
  if (depth > TG_JSON_MAX_DEPTH)
    return check_fail(ck, path, "nested deeper than %d levels",
                      TG_JSON_MAX_DEPTH);
  members ms;
  members_init(&ms);
  size_t i = 0;
  for (const cJSON *c = v->child; c && !rc; c = c->next, i++) {
    tg_json_seg s = {path, object ? c->string : NULL,
                     object && c->string ? strlen(c->string) : 0, i};
    if (object && !c->string) rc = check_fail(ck, path, "a member has no key");
    else if (object && check_utf8(ck, path, c->string, "a key")) rc = -1;
    else if (object && members_add(&ms, c->string, i) < 0)
      rc = check_fail(ck, path, "out of memory");
    else rc = check_value(ck, c, &s, depth);
  }
  const member *dup = !rc && object ? first_duplicate(&ms) : NULL;
  if (dup) rc = duplicate(NULL, ck, path, NULL, dup->key);
  members_free(&ms);
  return rc;
}

static int check_value(checker *ck, const cJSON *v, const tg_json_seg *path,
                       int depth) {
  switch (v->type & 0xFF) {
    case cJSON_False: case cJSON_True: case cJSON_NULL: return 0;
    case cJSON_Number:
      return isfinite(v->valuedouble)
                 ? 0 : check_fail(ck, path, "a number is not finite");
    case cJSON_String:
      if (!v->valuestring) return check_fail(ck, path, "a string has no text");
      return check_utf8(ck, path, v->valuestring, "a string");
    case cJSON_Array: case cJSON_Object:
      return check_container(ck, v, path, depth + 1);
    default:
      return check_fail(ck, path, "not a JSON value (a raw or invalid cJSON "
                        "node)");
  }
}

static int deeper_than_max(const cJSON *j, int depth) {
  if (depth > TG_JSON_MAX_DEPTH) return 1;
  for (const cJSON *c = j->child; c; c = c->next)
    if ((c->child || cJSON_IsArray(c) || cJSON_IsObject(c)) &&
        deeper_than_max(c, depth + 1))
      return 1;
  return 0;
}

int tg__json_too_deep(const cJSON *v) { return v && deeper_than_max(v, 1); }

int tg__json_check(const cJSON *v, char *err, size_t errlen) {
  char dummy[8];
  checker ck = {err ? err : dummy, err ? errlen : sizeof dummy};
  if (!v) return check_fail(&ck, NULL, "no value");
  return check_value(&ck, v, NULL, 0);
}
