/*
 * glob.c — the path globs of file-change subscriptions (tg_glob_match).
 *
 *   *      any run of characters within one path segment (not '/')
 *   **     any run of characters, '/' included (crosses segments)
 *   ** + / a whole "**" segment followed by '/' also matches no segment at
 *          all, so the glob src/ ** /x.c (without the spaces) matches
 *          "src/x.c" as well as "src/a/b/x.c", as in .gitignore
 *   ?      one character, not '/'
 *   [abc] [a-z] [!a-z]   one character of (or not of) a set, not '/'
 *   {a,b}  either alternative (each may hold any of the above, and
 *          braces nest): *.{c,h}, {src,lib}/ **.c. A glob expands to at
 *          most TG_GLOB_MAX_ALTERNATIVES globs, or tg_glob_check refuses it
 *   \c     the character c itself
 *
 * Matching is dynamic programming over (glob token, path position), so its
 * cost is O(tokens x path length) whatever the pattern: no backtracking
 * blow-up from a glob like "**a**a**a**b".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "glob.h"

/* The most globs one glob's braces may expand to: {a,b}{c,d}... doubles
 * with each group, so a bound keeps both the memory and the matching time
 * of a short glob small. */
#define TG_GLOB_MAX_ALTERNATIVES 256

typedef enum { T_CHAR, T_ANY, T_STAR, T_STARSTAR, T_DIRS, T_SET } tok_kind;

typedef struct {
  tok_kind kind;
  char c;              /* T_CHAR */
  const char *set;     /* T_SET: points after '[' (and after '!') */
  int negate;
} tok;

/* Length of a set starting after '[' up to (not including) its ']', or -1
 * when it is not closed. A ']' right after '[' or '[!' is a member. */
static int set_len(const char *s) {
  int i = 0;
  if (s[i] == ']') i++;
  while (s[i] && s[i] != ']') i++;
  return s[i] == ']' ? i : -1;
}

static int in_set(const tok *t, char c) {
  const char *s = t->set;
  int n = set_len(s), hit = 0;
  for (int i = 0; i < n; i++) {
    if (i + 2 < n && s[i + 1] == '-') {
      if ((unsigned char)c >= (unsigned char)s[i] &&
          (unsigned char)c <= (unsigned char)s[i + 2])
        hit = 1;
      i += 2;
    } else if (s[i] == c) {
      hit = 1;
    }
  }
  return hit != t->negate;
}

/* Reads the next token at g; returns the number of glob bytes used, 0 at
 * the end, -1 for a malformed glob. */
static int next_tok(const char *g, int seg_start, tok *t) {
  if (!*g) return 0;
  if (g[0] == '*' && g[1] == '*') {
    int whole = seg_start && (g[2] == '/' || g[2] == '\0');
    if (whole && g[2] == '/') {
      t->kind = T_DIRS;
      return 3;
    }
    t->kind = T_STARSTAR;
    int n = 2;
    while (g[n] == '*') n++;
    return n;
  }
  if (g[0] == '*') {
    t->kind = T_STAR;
    return 1;
  }
  if (g[0] == '?') {
    t->kind = T_ANY;
    return 1;
  }
  if (g[0] == '[') {
    int neg = g[1] == '!' || g[1] == '^';
    int n = set_len(g + 1 + neg);
    if (n < 0) return -1;
    t->kind = T_SET;
    t->negate = neg;
    t->set = g + 1 + neg;
    return 1 + neg + n + 1;
  }
  if (g[0] == '\\') {
    if (!g[1]) return -1;
    t->kind = T_CHAR;
    t->c = g[1];
    return 2;
  }
  t->kind = T_CHAR;
  t->c = g[0];
  return 1;
}

/* One token's step: from the positions `cur` the glob so far can end at,
 * the positions `nxt` it can end at after this token. */
static void step(const tok *t, const char *p, size_t len, const char *cur,
                 char *nxt) {
  memset(nxt, 0, len + 1);
  int seen = 0; /* T_DIRS: some position before this one matched */
  for (size_t j = 0; j <= len; j++) {
    char c = j ? p[j - 1] : 0;
    switch (t->kind) {
      case T_CHAR: nxt[j] = j && cur[j - 1] && c == t->c; break;
      case T_ANY: nxt[j] = j && cur[j - 1] && c != '/'; break;
      case T_SET: nxt[j] = j && cur[j - 1] && c != '/' && in_set(t, c); break;
      case T_STAR: nxt[j] = cur[j] || (j && nxt[j - 1] && c != '/'); break;
      case T_STARSTAR: nxt[j] = cur[j] || (j && nxt[j - 1]); break;
      case T_DIRS: nxt[j] = cur[j] || (seen && c == '/'); break;
    }
    if (cur[j]) seen = 1;
  }
}

/* Matches one brace-free glob against path. */
static int match_one(const char *glob, const char *path) {
  if (glob[0] == '.' && glob[1] == '/') glob += 2;
  size_t len = strlen(path);
  char small[2][256];
  char *cur = small[0], *nxt = small[1], *heap = NULL;
  if (len + 1 > sizeof small[0]) {
    heap = malloc(2 * (len + 1));
    if (!heap) return 0;
    cur = heap;
    nxt = heap + len + 1;
  }
  memset(cur, 0, len + 1);
  cur[0] = 1;
  const char *g = glob;
  int seg_start = 1, n;
  tok t;
  while ((n = next_tok(g, seg_start, &t)) > 0) {
    step(&t, path, len, cur, nxt);
    char *tmp = cur;
    cur = nxt;
    nxt = tmp;
    seg_start = t.kind == T_DIRS || (t.kind == T_CHAR && t.c == '/');
    g += n;
  }
  int ok = cur[len] != 0;
  free(heap);
  return ok;
}

/* ---- braces --------------------------------------------------------------
 * {a,b} is expanded before matching: the glob becomes the list of its
 * brace-free alternatives, each matched by the machine above. */

/* Index of the first top-level '{' of g (outside sets, not quoted), or
 * -1; *close gets its matching '}' (-1: not closed). */
static long find_brace(const char *g, long *close) {
  long open = -1;
  int depth = 0;
  for (long i = 0; g[i]; i++) {
    if (g[i] == '\\' && g[i + 1]) {
      i++;
    } else if (g[i] == '[') {
      int neg = g[i + 1] == '!' || g[i + 1] == '^';
      int n = set_len(g + i + 1 + neg);
      if (n >= 0) i += neg + n + 1; /* a bad set is next_tok's to report */
    } else if (g[i] == '{') {
      if (depth++ == 0) open = i;
    } else if (g[i] == '}' && depth > 0 && --depth == 0) {
      *close = i;
      return open;
    }
  }
  *close = -1;
  return open;
}

typedef struct {
  char *v[TG_GLOB_MAX_ALTERNATIVES];
  size_t n;
  unsigned steps;     /* expand() calls: bounds the work of nested groups */
  const char *failed; /* why the expansion stopped, or NULL */
} alternatives;

static void add_alternative(alternatives *a, const char *g, size_t len) {
  if (a->n == TG_GLOB_MAX_ALTERNATIVES) {
    a->failed = "its {,} alternatives expand to more than 256 globs; use "
                "fewer groups";
    return;
  }
  if (!(a->v[a->n] = malloc(len + 1))) {
    a->failed = "out of memory";
    return;
  }
  memcpy(a->v[a->n], g, len);
  a->v[a->n++][len] = '\0';
}

/* Adds the brace-free alternatives of g (len bytes) to a: the first group
 * is replaced by each of its alternatives in turn, and the result
 * expanded again (for nested groups and the groups after it). */
static void expand(alternatives *a, const char *g, size_t len) {
  if (++a->steps > 16 * TG_GLOB_MAX_ALTERNATIVES) {
    a->failed = "too many {,} groups; use fewer";
    return;
  }
  long close, open = find_brace(g, &close);
  if (open < 0) {
    add_alternative(a, g, len);
    return;
  }
  if (close < 0) {
    a->failed = "a '{' is not closed by '}'";
    return;
  }
  char *buf = malloc(len + 1); /* prefix + one alternative + suffix */
  if (!buf) {
    a->failed = "out of memory";
    return;
  }
  memcpy(buf, g, (size_t)open);
  size_t rest = len - (size_t)close - 1;
  int depth = 0;
  for (long i = open + 1, from = i; i <= close && !a->failed; i++) {
    if (g[i] == '\\') { /* the quoted character is never a brace or comma */
      i++;
      continue;
    }
    if (g[i] == '[') { /* nor is one in a set (find_brace skipped it too) */
      int neg = g[i + 1] == '!' || g[i + 1] == '^';
      int n = set_len(g + i + 1 + neg);
      if (n >= 0) i += neg + n + 1;
      continue;
    }
    if (g[i] == '{') depth++;
    if (g[i] == '}' && i < close) depth--;
    if ((g[i] == ',' && depth == 0) || i == close) {
      size_t k = (size_t)open, m = (size_t)(i - from);
      memcpy(buf + k, g + from, m);
      memcpy(buf + k + m, g + close + 1, rest);
      buf[k + m + rest] = '\0';
      expand(a, buf, k + m + rest);
      from = i + 1;
    }
  }
  free(buf);
}

static void alternatives_free(alternatives *a) {
  for (size_t i = 0; i < a->n; i++) free(a->v[i]);
  a->n = 0;
}

/* Checks one brace-free glob's tokens. */
static int check_tokens(const char *glob, const char *alt, char *err,
                        size_t errlen) {
  const char *g = alt;
  int seg_start = 1;
  tok t;
  int n;
  while ((n = next_tok(g, seg_start, &t)) > 0) {
    seg_start = t.kind == T_DIRS || (t.kind == T_CHAR && t.c == '/');
    g += n;
  }
  if (n < 0 && err)
    snprintf(err, errlen, "bad glob '%s': %s", glob,
             *g == '\\' ? "it ends with a lone '\\'"
                         : "a '[' is not closed by ']'");
  return n < 0 ? -EINVAL : 0;
}

/* Expands glob into a and checks every alternative. 0, or -EINVAL with
 * err (may be NULL) filled and nothing left to free. */
static int expand_checked(const char *glob, alternatives *a, char *err,
                          size_t errlen) {
  if (!glob || !*glob) {
    if (err) snprintf(err, errlen, "the glob is empty (use \"**\" for every path)");
    return -EINVAL;
  }
  if (strlen(glob) > TG_GLOB_MAX) {
    if (err) snprintf(err, errlen, "the glob is longer than %d bytes", TG_GLOB_MAX);
    return -EINVAL;
  }
  a->n = a->steps = 0;
  a->failed = NULL;
  expand(a, glob, strlen(glob));
  int rc = 0;
  if (a->failed) {
    if (err) snprintf(err, errlen, "bad glob '%s': %s", glob, a->failed);
    rc = -EINVAL;
  }
  for (size_t i = 0; rc == 0 && i < a->n; i++)
    rc = check_tokens(glob, a->v[i], err, errlen);
  if (rc < 0) alternatives_free(a);
  return rc;
}

int tg_glob_check(const char *glob, char *err, size_t errlen) {
  alternatives a;
  if (expand_checked(glob, &a, err, errlen) < 0) return -EINVAL;
  alternatives_free(&a);
  return 0;
}

int tg_glob_match(const char *glob, const char *path) {
  if (!glob || !path) return 0;
  if (path[0] == '.' && path[1] == '/') path += 2;
  long close;
  if (find_brace(glob, &close) < 0) /* the common case: nothing to copy */
    return *glob && strlen(glob) <= TG_GLOB_MAX &&
           check_tokens(glob, glob, NULL, 0) == 0 && match_one(glob, path);
  alternatives a;
  if (expand_checked(glob, &a, NULL, 0) < 0) return 0;
  int ok = 0;
  for (size_t i = 0; !ok && i < a.n; i++) ok = match_one(a.v[i], path);
  alternatives_free(&a);
  return ok;
}
