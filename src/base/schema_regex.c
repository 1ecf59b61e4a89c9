/*
 * schema_regex.c — `pattern` and `patternProperties`: ECMA-262 regular
 * expressions, as JSON Schema means them, run by PCRE2.
 *
 * PCRE2 is close to ECMA-262 with the right options: UTF (code points,
 * as with the u flag), not UCP (so \d \w \b stay ASCII, as in ECMA-262),
 * ALT_BSUX (\uHHHH, \u{H...}, \xHH), ALLOW_EMPTY_CLASS ([] and [^]),
 * DOLLAR_ENDONLY ($ only at the very end), MATCH_UNSET_BACKREF (a
 * reference to a group that has not matched matches empty). What options
 * cannot say, the pattern is rewritten for before PCRE2 sees it: `.` and
 * \s/\S get ECMA-262's line terminators and white space, \v is U+000B,
 * and `[` inside a class is a plain character. Escapes and group syntax
 * that ECMA-262 does not have (\A, \z, \h, (?i), (?>...), (*VERB)...)
 * are refused rather than given PCRE2's meaning.
 *
 * Agents supply the strings matched, so every match is bounded: a match
 * limit, a depth limit and a heap limit stop catastrophic backtracking
 * (^(a|aa)+$ against a long run of a's) within milliseconds; the value
 * then fails validation with a message saying so. And since many matches
 * just under the limit (a long array, an object with many keys) would add
 * up, one validation's matching as a whole has a time budget too.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "schema_int.h"
#include "util.h"

/* A few milliseconds of backtracking at most per match (docs/json-schema.md). */
#define MATCH_LIMIT 200000
#define DEPTH_LIMIT 10000
#define HEAP_LIMIT_KIB 16384
/* Every so many matches, the time since the first of the validation is
 * checked against the budget (a clock read per match would cost more
 * than most matches). */
#define BUDGET_EVERY 16

struct sc_regex {
  pcre2_code *code;
  pcre2_match_context *mctx;
  char *source;
};

struct sc_matcher {
  pcre2_match_data *md;
  double start_ms;
  unsigned matches;
  int spent;
};

/* ---- ECMA-262 -> PCRE2 ------------------------------------------------- */

/* ECMA-262 white space and line terminators (\s). */
#define WS_MEMBERS "\\t\\n\\x0b\\f\\r\\p{Zs}\\u2028\\u2029\\ufeff"

/* The rewritten pattern, with the source offset of every byte so PCRE2's
 * error offsets can be told in the pattern the schema wrote. */
typedef struct {
  char *s;
  size_t *from;
  size_t len, cap;
  int oom;
} xbuf;

static void xput(xbuf *b, const char *s, size_t n, size_t src) {
  if (b->oom) return;
  if (b->len + n + 1 > b->cap) {
    size_t cap = (b->len + n + 1) * 2;
    char *ns = realloc(b->s, cap);
    if (ns) b->s = ns;
    size_t *nf = ns ? realloc(b->from, cap * sizeof *nf) : NULL;
    if (!ns || !nf) {
      b->oom = 1;
      return;
    }
    b->from = nf;
    b->cap = cap;
  }
  memcpy(b->s + b->len, s, n);
  for (size_t i = 0; i < n; i++) b->from[b->len + i] = src;
  b->len += n;
  b->s[b->len] = '\0';
}

static void xputs(xbuf *b, const char *s, size_t src) {
  xput(b, s, strlen(s), src);
}

/* The letters ECMA-262 gives a meaning after a backslash (u flag). */
static int ecma_letter_escape(char c) {
  return c && strchr("bBcdDfknpPrsStuvwWx", c) != NULL;
}

static int is_ascii_letter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* ECMA-262's long General_Category names, which PCRE2 10.42 does not
 * know, by the short ones it does. */
static const char *const gc_names[][2] = {
    {"Letter", "L"}, {"Cased_Letter", "L&"}, {"Uppercase_Letter", "Lu"},
    {"Lowercase_Letter", "Ll"}, {"Titlecase_Letter", "Lt"},
    {"Modifier_Letter", "Lm"}, {"Other_Letter", "Lo"}, {"Mark", "M"},
    {"Combining_Mark", "M"}, {"Nonspacing_Mark", "Mn"},
    {"Spacing_Mark", "Mc"}, {"Enclosing_Mark", "Me"}, {"Number", "N"},
    {"Decimal_Number", "Nd"}, {"digit", "Nd"}, {"Letter_Number", "Nl"},
    {"Other_Number", "No"}, {"Punctuation", "P"}, {"punct", "P"},
    {"Connector_Punctuation", "Pc"}, {"Dash_Punctuation", "Pd"},
    {"Open_Punctuation", "Ps"}, {"Close_Punctuation", "Pe"},
    {"Initial_Punctuation", "Pi"}, {"Final_Punctuation", "Pf"},
    {"Other_Punctuation", "Po"}, {"Symbol", "S"}, {"Math_Symbol", "Sm"},
    {"Currency_Symbol", "Sc"}, {"Modifier_Symbol", "Sk"},
    {"Other_Symbol", "So"}, {"Separator", "Z"}, {"Space_Separator", "Zs"},
    {"Line_Separator", "Zl"}, {"Paragraph_Separator", "Zp"}, {"Other", "C"},
    {"Control", "Cc"}, {"cntrl", "Cc"}, {"Format", "Cf"},
    {"Surrogate", "Cs"}, {"Private_Use", "Co"}, {"Unassigned", "Cn"},
};

/* \p{Name}, \P{gc=Name} at p[i]: the short name when Name is a long
 * General_Category name, gc= / General_Category= dropped. Returns the
 * bytes consumed; 0 when there is nothing to change (PCRE2 reads the
 * rest: \p{L}, \p{Greek}, \p{Script=Greek}). */
static size_t rewrite_property(xbuf *b, const char *p, size_t i) {
  static const char *const prefixes[] = {"gc=", "General_Category="};
  /* p[i + 2] first: a pattern may end right after \p (name would then
   * start past its NUL) */
  if (p[i + 2] != '{') return 0;
  const char *name = p + i + 3, *end = strchr(name, '}');
  if (!end) return 0;
  for (size_t k = 0; k < 2; k++)
    if (!strncmp(name, prefixes[k], strlen(prefixes[k])))
      name += strlen(prefixes[k]);
  const char *to = NULL;
  size_t len = (size_t)(end - name);
  for (size_t k = 0; k < sizeof gc_names / sizeof gc_names[0] && !to; k++)
    if (strlen(gc_names[k][0]) == len && !strncmp(name, gc_names[k][0], len))
      to = gc_names[k][1];
  if (!to && name == p + i + 3) return 0;
  xput(b, p + i, 3, i); /* \p{ */
  xput(b, to ? to : name, to ? strlen(to) : len, i + 3);
  xput(b, "}", 1, (size_t)(end - p));
  return (size_t)(end - (p + i)) + 1;
}

/* One escape at p[i] == '\\'; returns the bytes consumed, 0 when refused
 * (why in err). */
static size_t rewrite_escape(xbuf *b, const char *p, size_t i, int in_class,
                             char *err, size_t errlen) {
  char c = p[i + 1];
  size_t n;
  if ((c == 'p' || c == 'P') && (n = rewrite_property(b, p, i))) {
    return n;
  } else if (c == 'v') {
    xputs(b, "\\x0b", i);
  } else if (c == 's') {
    xputs(b, in_class ? WS_MEMBERS : "[" WS_MEMBERS "]", i);
  } else if (c == 'S') {
    /* Inside a class only PCRE2's own \P{Xsp} can say "not space"; it
     * differs from ECMA-262 on U+FEFF alone. */
    xputs(b, in_class ? "\\P{Xsp}" : "[^" WS_MEMBERS "]", i);
  } else if (is_ascii_letter(c) && !ecma_letter_escape(c)) {
    snprintf(err, errlen, "\\%c is not an ECMA-262 escape", c);
    return 0;
  } else if (!c) {
    snprintf(err, errlen, "it ends with a lone backslash");
    return 0;
  } else {
    xput(b, p + i, 2, i); /* the rest of \x41, \u{..}, \p{..} follows */
  }
  return 2;
}

/* "(?" and "(*" start PCRE2 extensions unless followed by what ECMA-262
 * has: (?: (?= (?! (?<= (?<! (?<name>. Returns 1 when allowed. */
static int ecma_group(const char *p) {
  if (p[1] == '*') return 0;
  if (p[1] != '?') return 1;
  const char *q = p + 2;
  if (*q == ':' || *q == '=' || *q == '!') return 1;
  if (*q != '<') return 0;
  if (q[1] == '=' || q[1] == '!') return 1;
  return is_ascii_letter(q[1]) || q[1] == '_' || q[1] == '$' ||
         (unsigned char)q[1] >= 0x80;
}

/* Rewrites p for PCRE2 (see the top comment). 0, or -1 with why in err. */
static int rewrite(xbuf *b, const char *p, char *err, size_t errlen) {
  int in_class = 0;
  for (size_t i = 0; p[i];) {
    char c = p[i];
    if (c == '\\') {
      size_t n = rewrite_escape(b, p, i, in_class, err, errlen);
      if (!n) return -1;
      i += n;
      continue;
    }
    if (in_class) {
      if (c == ']') in_class = 0;
      xputs(b, c == '[' ? "\\[" : (char[]){c, 0}, i);
    } else if (c == '[') {
      in_class = 1;
      size_t n = p[i + 1] == '^' ? 2 : 1;
      xput(b, p + i, n, i);
      i += n;
      continue;
    } else if (c == '.') {
      xputs(b, "[^\\n\\r\\u2028\\u2029]", i);
    } else if (c == '(' && !ecma_group(p + i)) {
      int n = p[i + 2] && (unsigned char)p[i + 2] < 0x80 ? 3 : 2;
      snprintf(err, errlen, "\"%.*s\" at offset %zu is not ECMA-262 syntax",
               n, p + i, i);
      return -1;
    } else {
      xput(b, p + i, 1, i);
    }
    i++;
  }
  xput(b, "", 0, 0);
  if (b->oom) snprintf(err, errlen, "out of memory");
  return b->oom ? -1 : 0;
}

/* ---- compile and match ------------------------------------------------ */

static pcre2_code *compile(const xbuf *b, char *err, size_t errlen) {
  pcre2_compile_context *cc = pcre2_compile_context_create(NULL);
  if (!cc) {
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  pcre2_set_compile_extra_options(cc, PCRE2_EXTRA_ALT_BSUX);
  int code;
  PCRE2_SIZE off;
  pcre2_code *re = pcre2_compile(
      (PCRE2_SPTR)b->s, b->len,
      PCRE2_UTF | PCRE2_ALT_BSUX | PCRE2_ALLOW_EMPTY_CLASS |
          PCRE2_DOLLAR_ENDONLY | PCRE2_MATCH_UNSET_BACKREF |
          PCRE2_NEVER_BACKSLASH_C | PCRE2_NEVER_UCP,
      &code, &off, cc);
  pcre2_compile_context_free(cc);
  if (re) return re;
  PCRE2_UCHAR why[160];
  if (pcre2_get_error_message(code, why, sizeof why) < 0)
    snprintf((char *)why, sizeof why, "error %d", code);
  size_t at = off < b->len ? b->from[off] : (b->len ? b->from[b->len - 1] + 1 : 0);
  snprintf(err, errlen, "%s (at offset %zu)", (char *)why, at);
  return NULL;
}

static pcre2_match_context *match_context(void) {
  pcre2_match_context *m = pcre2_match_context_create(NULL);
  if (!m) return NULL;
  pcre2_set_match_limit(m, MATCH_LIMIT);
  pcre2_set_depth_limit(m, DEPTH_LIMIT);
  pcre2_set_heap_limit(m, HEAP_LIMIT_KIB);
  return m;
}

sc_regex *tg__sc_regex_new(const char *pattern, char *err, size_t errlen) {
  xbuf b = {0};
  sc_regex *re = NULL;
  if (rewrite(&b, pattern, err, errlen) < 0) goto out;
  re = calloc(1, sizeof *re);
  if (!re || !(re->source = strdup(pattern)) ||
      !(re->mctx = match_context())) {
    snprintf(err, errlen, "out of memory");
    goto fail;
  }
  if (!(re->code = compile(&b, err, errlen))) goto fail;
  goto out;
fail:
  tg__sc_regex_free(re);
  re = NULL;
out:
  free(b.s);
  free(b.from);
  return re;
}

void tg__sc_regex_free(sc_regex *re) {
  if (!re) return;
  pcre2_code_free(re->code);
  pcre2_match_context_free(re->mctx);
  free(re->source);
  free(re);
}

const char *tg__sc_regex_source(const sc_regex *re) { return re->source; }

int tg__sc_regex_search(const sc_regex *re, const char *s, size_t len,
                        sc_matcher **m) {
  if (!*m) {
    *m = calloc(1, sizeof **m);
    if (!*m || !((*m)->md = pcre2_match_data_create(1, NULL)))
      return SC_MATCH_NOMEM;
    (*m)->start_ms = tg__now_ms();
  }
  if ((*m)->spent ||
      (++(*m)->matches % BUDGET_EVERY == 0 &&
       tg__now_ms() - (*m)->start_ms > SC_MATCH_BUDGET_MS)) {
    (*m)->spent = 1;
    return SC_MATCH_BUDGET;
  }
  int rc = pcre2_match(re->code, (PCRE2_SPTR)s, len, 0, 0, (*m)->md,
                       re->mctx);
  if (rc >= 0) return SC_MATCH; /* 0: a match, the ovector too small */
  switch (rc) {
    case PCRE2_ERROR_NOMATCH: return SC_NO_MATCH;
    case PCRE2_ERROR_MATCHLIMIT:
    case PCRE2_ERROR_DEPTHLIMIT:
    case PCRE2_ERROR_HEAPLIMIT: return SC_MATCH_LIMIT;
    case PCRE2_ERROR_NOMEMORY: return SC_MATCH_NOMEM;
    default: return rc <= PCRE2_ERROR_UTF8_ERR1 && rc >= PCRE2_ERROR_UTF8_ERR21
                        ? SC_MATCH_BAD_UTF8 : SC_MATCH_LIMIT;
  }
}

void tg__sc_matcher_free(sc_matcher *m) {
  if (!m) return;
  pcre2_match_data_free(m->md);
  free(m);
}
