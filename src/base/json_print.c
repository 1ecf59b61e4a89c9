/*
 * json_print.c — JSON text out of toolgate: values (tg_json_print),
 * numbers and paths (json.h).
 *
 * Not cJSON_Print: it writes a double with 15 digits when they read back
 * "close enough" (9007199254740991 becomes 9.00719925474099e+15, -0 becomes
 * 0), and copies string bytes as they are, invalid UTF-8 included. Here a
 * number gets the fewest digits (15, 16 or 17) that read back as exactly
 * the same double, and a byte that is not UTF-8 becomes U+FFFD.
 */
#include <locale.h>
#include <stdarg.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "json.h"
#include "sha256.h"

/* Deeper trees are not printed (no tree toolgate accepts comes near). */
#define PRINT_MAX_DEPTH 1000

/* Text being written: grows (grow 1) or is cut at a character boundary
 * when the caller's buffer is full (grow 0). */
typedef struct {
  char *s;
  size_t len, cap;
  int grow;
  int failed; /* out of memory, or cut */
} sbuf;

static int reserve(sbuf *b, size_t n) {
  if (n < b->cap - b->len) return 1;
  if (!b->grow) return 0;
  size_t cap = b->cap ? b->cap : 256;
  while (n >= cap - b->len) {
    if (cap > (size_t)-1 / 2) return 0;
    cap *= 2;
  }
  char *s = realloc(b->s, cap);
  if (!s) return 0;
  b->s = s;
  b->cap = cap;
  return 1;
}

static void put_slow(sbuf *b, const char *p, size_t n) {
  if (b->failed) return;
  if (!reserve(b, n)) {
    b->failed = 1;
    if (b->grow || !b->cap) return;
    /* what fits, without half a character or half an escape */
    n = p[0] == '\\' ? 0 : b->cap - 1 - b->len;
    while (n > 0 && ((unsigned char)p[n] & 0xC0) == 0x80) n--;
  }
  memcpy(b->s + b->len, p, n);
  b->len += n;
  b->s[b->len] = '\0';
}

/* The common case inline: room for n bytes and their NUL (a failed
 * buffer has none: its cap is 0, or it was cut full). Every message of a
 * gateway call is printed once or twice, a few dozen pieces each. */
static inline void put(sbuf *b, const char *p, size_t n) {
  if (b->failed || n >= b->cap - b->len) {
    put_slow(b, p, n);
    return;
  }
  memcpy(b->s + b->len, p, n);
  b->len += n;
  b->s[b->len] = '\0';
}

static inline void put1(sbuf *b, char c) {
  if (b->failed || 1 >= b->cap - b->len) {
    put_slow(b, &c, 1);
    return;
  }
  b->s[b->len++] = c;
  b->s[b->len] = '\0';
}

static void puts_(sbuf *b, const char *s) { put(b, s, strlen(s)); }

/* ---- UTF-8 ------------------------------------------------------------- */

size_t tg__utf8_seq(const unsigned char *s, size_t n) {
  unsigned c = s[0];
  if (c >= 0x01 && c < 0x80) return 1;
  size_t len = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3
             : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
  if (!len || len > n) return 0;
  for (size_t i = 1; i < len; i++)
    if ((s[i] & 0xC0) != 0x80) return 0;
  if (c == 0xE0 && s[1] < 0xA0) return 0; /* overlong */
  if (c == 0xED && s[1] > 0x9F) return 0; /* a surrogate */
  if (c == 0xF0 && s[1] < 0x90) return 0; /* overlong */
  if (c == 0xF4 && s[1] > 0x8F) return 0; /* past U+10FFFF */
  return len;
}

size_t tg__utf8_invalid_at(const char *s, size_t n) {
  const unsigned char *u = (const unsigned char *)s;
  size_t i = 0;
  while (i < n) {
    if (u[i] >= 0x01 && u[i] < 0x80) { /* the common case, inline */
      i++;
      continue;
    }
    size_t k = tg__utf8_seq(u + i, n - i);
    if (!k) return i;
    i += k;
  }
  return n;
}

/* ---- strings and numbers ------------------------------------------------ */

/* s[0, n) as a JSON string literal. Runs that need no escape go out in
 * one piece. */
/* The bytes a string literal takes as they are: printable ASCII but '"'
 * and '\\' (the rest are escaped, or checked as UTF-8). */
static const unsigned char plain[256] = {
#define R16(v) v, v, v, v, v, v, v, v, v, v, v, v, v, v, v, v
    R16(0), R16(0), /* controls */
    1, 1, 0 /* '"' */, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    R16(1), R16(1), 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0 /* '\\' */, 1, 1, 1,
    R16(1), R16(1),
    R16(0), R16(0), R16(0), R16(0), R16(0), R16(0), R16(0), R16(0) /* >= 0x80 */
#undef R16
};

static void put_string(sbuf *b, const char *s, size_t n) {
  const unsigned char *u = (const unsigned char *)s;
  put1(b, '"');
  size_t run = 0, i = 0;
  while (i < n) {
    while (i < n && plain[u[i]]) i++;
    if (i == n) break;
    unsigned c = u[i];
    size_t k = c >= 0x80 ? tg__utf8_seq(u + i, n - i) : 1;
    if (k && c >= 0x80) {
      i += k;
      continue;
    }
    put(b, s + run, i - run);
    char esc[8];
    if (!k) puts_(b, "\xEF\xBF\xBD"); /* U+FFFD */
    else if (c == '"' || c == '\\') snprintf(esc, sizeof esc, "\\%c", c);
    else if (c == '\n') strcpy(esc, "\\n");
    else if (c == '\t') strcpy(esc, "\\t");
    else if (c == '\r') strcpy(esc, "\\r");
    else if (c == '\b') strcpy(esc, "\\b");
    else if (c == '\f') strcpy(esc, "\\f");
    else snprintf(esc, sizeof esc, "\\u%04x", c);
    if (k) puts_(b, esc);
    run = ++i;
  }
  put(b, s + run, i - run);
  put1(b, '"');
}

/* Does text (in the current locale, as snprintf wrote it) read back as
 * exactly d, sign of zero included? */
static int reads_back(const char *text, double d) {
  double back = strtod(text, NULL);
  return back == d && signbit(back) == signbit(d);
}

/* snprintf and strtod follow LC_NUMERIC, which a host may have set (a
 * decimal comma); JSON has a point. */
static void to_decimal_point(char *buf) {
  const char *dp = localeconv()->decimal_point;
  if (!dp || !*dp || strcmp(dp, ".") == 0) return;
  char *at = strstr(buf, dp);
  if (!at) return;
  size_t n = strlen(dp);
  *at = '.';
  memmove(at + 1, at + n, strlen(at + n) + 1);
}

/* An integer of at most 15 digits (not -0), in decimal — what "%.15g"
 * writes for it, and what ids, counts and sizes mostly are — without the
 * snprintf/strtod round trip. */
static int integer_text(double d, char *buf) {
  if (!(d > -1e15 && d < 1e15) || d != (double)(int64_t)d ||
      (d == 0 && signbit(d)))
    return 0;
  int64_t v = (int64_t)d;
  char tmp[24];
  int n = 0;
  uint64_t u = v < 0 ? (uint64_t)-v : (uint64_t)v;
  do tmp[n++] = (char)('0' + u % 10); while ((u /= 10));
  char *p = buf;
  if (v < 0) *p++ = '-';
  while (n) *p++ = tmp[--n];
  *p = 0;
  return 1;
}

char *tg_json_number_text(double d, char *buf) {
  if (!isfinite(d)) {
    strcpy(buf, "null");
    return buf;
  }
  if (integer_text(d, buf)) return buf;
  for (int digits = 15; digits <= 17; digits++) {
    snprintf(buf, TG_JSON_NUMBER_MAX, "%.*g", digits, d);
    if (reads_back(buf, d)) break; /* 17 digits always do */
  }
  to_decimal_point(buf);
  return buf;
}

/* ---- values ----------------------------------------------------------- */

static void put_value(sbuf *b, const cJSON *v, int pretty, int depth);

static void newline(sbuf *b, int depth) {
  put(b, "\n", 1);
  for (int i = 0; i < depth; i++) put(b, "  ", 2);
}

static int is_container(const cJSON *v) {
  return cJSON_IsArray(v) || cJSON_IsObject(v);
}

/* Pretty: an object one member a line; an array of plain values on one
 * line, an array holding containers one element a line. */
static void put_container(sbuf *b, const cJSON *v, int pretty, int depth) {
  int object = cJSON_IsObject(v);
  int lines = pretty && object;
  for (const cJSON *c = v->child; pretty && !lines && c; c = c->next)
    lines = is_container(c);
  put1(b, object ? '{' : '[');
  for (const cJSON *c = v->child; c && !b->failed; c = c->next) {
    if (lines) newline(b, depth + 1);
    if (object) {
      const char *k = c->string ? c->string : "";
      put_string(b, k, strlen(k));
      if (pretty) put(b, ": ", 2);
      else put1(b, ':');
    }
    put_value(b, c, pretty, depth + 1);
    if (c->next && pretty && !lines) put(b, ", ", 2);
    else if (c->next) put1(b, ',');
  }
  if (lines && v->child) newline(b, depth);
  put1(b, object ? '}' : ']');
}

static void put_value(sbuf *b, const cJSON *v, int pretty, int depth) {
  char num[TG_JSON_NUMBER_MAX];
  if (depth > PRINT_MAX_DEPTH) {
    b->failed = 1;
    return;
  }
  switch (v->type & 0xFF) {
    case cJSON_False: puts_(b, "false"); break;
    case cJSON_True: puts_(b, "true"); break;
    case cJSON_Number:
      puts_(b, tg_json_number_text(v->valuedouble, num));
      break;
    case cJSON_String:
      if (v->valuestring) put_string(b, v->valuestring, strlen(v->valuestring));
      else puts_(b, "null");
      break;
    case cJSON_Array:
    case cJSON_Object: put_container(b, v, pretty, depth); break;
    default: puts_(b, "null"); /* null; raw and invalid nodes too */
  }
}

char *tg_json_print(const cJSON *v, int pretty) {
  sbuf b = {NULL, 0, 0, 1, 0};
  if (!v) return NULL;
  put_value(&b, v, pretty, 0);
  if (b.failed || !b.s) {
    free(b.s);
    return NULL;
  }
  return b.s;
}

int tg_json_print_append(const cJSON *v, char **buf, size_t *len,
                         size_t *cap) {
  sbuf b = {*buf, *len, *cap, 1, 0};
  if (!v) return -1;
  put_value(&b, v, 0, 0);
  *buf = b.s; /* moved, perhaps, even when it failed */
  *cap = b.cap;
  if (b.failed || !b.s) {
    if (b.s) b.s[*len] = '\0';
    return -1;
  }
  *len = b.len;
  return 0;
}

static int key_cmp(const void *a, const void *b) {
  const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;
  return strcmp(x->string ? x->string : "", y->string ? y->string : "");
}

/* Sorts every object's members by key, in place. Out of memory, an object
 * stays as it was (and the text is then not canonical; callers compare
 * texts, so that only ever misses a match). */
/* Sorts every object's members by key, in place. -1 when out of memory. */
static int sort_keys(cJSON *j) {
  size_t n = 0;
  for (cJSON *c = j->child; c; c = c->next) {
    if (sort_keys(c) < 0) return -1;
    n++;
  }
  if (!cJSON_IsObject(j) || n < 2) return 0;
  cJSON **v = malloc(n * sizeof *v);
  if (!v) return -1;
  n = 0;
  for (cJSON *c = j->child; c; c = c->next) v[n++] = c;
  qsort(v, n, sizeof *v, key_cmp);
  for (size_t i = 0; i < n; i++) { /* relink; cJSON's head->prev is the tail */
    v[i]->next = i + 1 < n ? v[i + 1] : NULL;
    v[i]->prev = i > 0 ? v[i - 1] : v[n - 1];
  }
  j->child = v[0];
  free(v);
  return 0;
}

char *tg_json_print_sorted(const cJSON *v) {
  cJSON *copy = v ? cJSON_Duplicate(v, 1) : NULL;
  if (!copy) return NULL;
  /* out of memory part way, the text would not be canonical: none */
  char *s = sort_keys(copy) == 0 ? tg_json_print(copy, 0) : NULL;
  cJSON_Delete(copy);
  return s;
}

int tg_json_digest(const cJSON *v, unsigned char out[TG_SHA256_SIZE]) {
  char *t = v ? tg_json_print_sorted(v) : NULL;
  if (v && !t) return -1;
  tg_sha256(t ? t : "null", strlen(t ? t : "null"), out);
  free(t);
  return 0;
}

/* ---- paths -------------------------------------------------------------- */

/* ASCII only on purpose: the locale must not change how paths look. */
static int is_ident(const char *k, size_t n) {
  if (!n || (k[0] >= '0' && k[0] <= '9')) return 0;
  for (size_t i = 0; i < n; i++) {
    char c = k[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
          (c >= '0' && c <= '9') || c == '_'))
      return 0;
  }
  return 1;
}

static void put_path(sbuf *b, const tg_json_seg *s) {
  if (!s) {
    put(b, "$", 1);
    return;
  }
  put_path(b, s->up);
  if (!s->key) {
    char i[32];
    snprintf(i, sizeof i, "[%zu]", s->index);
    puts_(b, i);
  } else if (is_ident(s->key, s->keylen)) {
    put(b, ".", 1);
    put(b, s->key, s->keylen);
  } else {
    put(b, "[", 1);
    put_string(b, s->key, s->keylen);
    put(b, "]", 1);
  }
}

char *tg__json_quote(const char *s, size_t n, char *buf, size_t size) {
  if (size < 8) {
    if (size) buf[0] = '\0';
    return buf;
  }
  sbuf b = {buf, 0, size - 4, 0, 0}; /* room kept for ...", if cut */
  buf[0] = '\0';
  put_string(&b, s, n);
  if (b.failed) strcpy(buf + b.len, "...\"");
  return buf;
}

void tg__utf8_trim(char *s) {
  size_t n = strlen(s), lead = n;
  while (lead > 0 && n - lead < 4 &&
         ((unsigned char)s[lead - 1] & 0xC0) == 0x80)
    lead--;
  if (lead == 0 || (unsigned char)s[lead - 1] < 0xC0) return; /* no lead byte */
  if (tg__utf8_seq((const unsigned char *)s + lead - 1, n - lead + 1) == 0)
    s[lead - 1] = '\0'; /* a sequence cut short */
}

char *tg__json_path_text(const tg_json_seg *s, char *buf, size_t size) {
  sbuf b = {buf, 0, size, 0, 0};
  if (size) buf[0] = '\0';
  put_path(&b, s);
  return buf;
}

void tg__json_path_verror(char *err, size_t errlen, const tg_json_seg *path,
                         const char *fmt, va_list ap) {
  char p[160], what[200];
  vsnprintf(what, sizeof what, fmt, ap);
  snprintf(err, errlen, "%s: %s", tg__json_path_text(path, p, sizeof p), what);
  tg__utf8_trim(err);
}

void tg__json_path_error(char *err, size_t errlen, const tg_json_seg *path,
                        const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tg__json_path_verror(err, errlen, path, fmt, ap);
  va_end(ap);
}
