/*
 * patch.c — unified diff parsing and in-memory application (patch.h).
 *
 * The parser works on a list of lines (our own copy of the text, with a
 * final '\n' added when missing, so every line ends with one). Text
 * outside file sections and hunks is ignored, as patch(1) does with a
 * mail's prose; anything inside a hunk must be a hunk line, and the line
 * counts of the @@ header must add up.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "patch.h"

typedef struct {
  const char *s;   /* the line; s[len] == '\n' */
  size_t len;      /* without the '\n' */
} pline;

/* A file section while it is parsed. */
typedef struct {
  tg_patch_file *f;
  char *minus, *plus;        /* raw paths of the ---/+++ lines */
  char *git_a, *git_b;       /* from "diff --git a/X b/Y" */
  char *rename_from, *rename_to;
  int git, has_minus, mode_new, mode_deleted;
  unsigned mode;             /* from new file mode / new mode; 0: none */
} section;

static int failf(char *err, size_t n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int failf(char *err, size_t n, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, n, fmt, ap);
  va_end(ap);
  return -1;
}

static int starts(const pline *l, const char *p) {
  size_t n = strlen(p);
  return l->len >= n && memcmp(l->s, p, n) == 0;
}

static pline *split_lines(char *buf, size_t len, size_t *n) {
  size_t cap = 1;
  for (size_t i = 0; i < len; i++) cap += buf[i] == '\n';
  pline *v = malloc(cap * sizeof *v);
  if (!v) return NULL;
  size_t k = 0;
  for (char *s = buf, *end = buf + len; s < end;) {
    char *nl = memchr(s, '\n', (size_t)(end - s));
    v[k].s = s;
    v[k].len = (size_t)(nl - s);
    k++;
    s = nl + 1;
  }
  *n = k;
  return v;
}

/* ---- paths ------------------------------------------------------------ */

/* git's C-style quoting of a name ("b/\303\251t\303\251 x"): the escapes
 * git writes (quote_c_style) are decoded, anything else is refused — the
 * name the tool touches must be the one the rules read, so a name the
 * parser would have to guess at is no name. s[0] is the opening quote.
 * Returns the name (malloc'd) and the bytes read in *used, or NULL with
 * *why set. */
static char *unquote(const char *s, size_t n, size_t *used, const char **why) {
  char *out = malloc(n), *o = out;
  if (!out) {
    *why = "out of memory";
    return NULL;
  }
  for (size_t i = 1; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '"') {
      *o = '\0';
      *used = i + 1;
      return out;
    }
    if (c == '\\') {
      if (++i >= n) break;
      const char *from = "abfnrtv\\\"", *to = "\a\b\f\n\r\t\v\\\"";
      const char *k = strchr(from, s[i]);
      if (k && *k) c = (unsigned char)to[k - from];
      else if (i + 2 < n && s[i] >= '0' && s[i] <= '3' && s[i + 1] >= '0' &&
               s[i + 1] <= '7' && s[i + 2] >= '0' && s[i + 2] <= '7') {
        c = (unsigned char)((s[i] - '0') * 64 + (s[i + 1] - '0') * 8 +
                            (s[i + 2] - '0'));
        i += 2;
      } else {
        free(out);
        *why = "a quoted name has an escape git does not write (\\a \\b \\f "
               "\\n \\r \\t \\v \\\\ \\\" or three octal digits)";
        return NULL;
      }
      if (c == '\0') {
        free(out);
        *why = "a quoted name holds a NUL byte (\\000)";
        return NULL;
      }
    }
    *o++ = (char)c;
  }
  free(out);
  *why = "a quoted name has no closing '\"'";
  return NULL;
}

/* The path of a ---/+++ (or rename from/to) line: up to a tab (a
 * timestamp follows), without a trailing '\r' or blanks; a "..." quoted
 * path (git) is unquoted, and may be followed only by a tab and a
 * timestamp. NULL with err filled when the name cannot be read. */
static char *header_path(const pline *l, size_t skip, size_t ln, char *err,
                         size_t errlen) {
  const char *s = l->s + skip;
  size_t n = l->len - skip;
  if (n && s[0] == '"') {
    const char *why = NULL;
    size_t used = 0;
    char *out = unquote(s, n, &used, &why);
    if (out && used < n && s[used] != '\t' &&
        strspn(s + used, " \r") != n - used) {
      free(out);
      out = NULL;
      why = "a quoted name is followed by more than a tab and a timestamp";
    }
    if (!out) failf(err, errlen, "patch line %zu: %s", ln, why);
    return out;
  }
  const char *tab = memchr(s, '\t', n);
  if (tab) n = (size_t)(tab - s);
  while (n && (s[n - 1] == '\r' || s[n - 1] == ' ')) n--;
  char *p = malloc(n + 1);
  if (!p) {
    failf(err, errlen, "out of memory");
    return NULL;
  }
  memcpy(p, s, n);
  p[n] = '\0';
  return p;
}

/* One name of a "diff --git" line at s (quoted or not, up to `end` for an
 * unquoted one). */
static char *git_name(const char *s, size_t n, size_t *used) {
  const char *why;
  if (n && s[0] == '"') return unquote(s, n, used, &why);
  *used = n;
  return strndup(s, n);
}

/* "diff --git a/X b/Y" -> "a/X", "b/Y": fallback names for sections with
 * no ---/+++, such as an empty new file or a mode change, where git
 * writes the same name twice. Unquoted names with blanks are split where
 * both halves name the same file; a line that splits no single way gives
 * no names (the section is then refused for naming no file rather than
 * applied to a guess). */
static void git_names(section *sec, const pline *l) {
  const char *s = l->s + 11;
  size_t n = l->len - 11, used = 0;
  while (n && s[n - 1] == '\r') n--;
  if (n && s[0] == '"') {
    char *a = git_name(s, n, &used);
    if (!a || used + 1 >= n || s[used] != ' ') {
      free(a);
      return;
    }
    size_t rest = n - used - 1;
    char *b = git_name(s + used + 1, rest, &used);
    if (!b || used != rest) {
      free(a);
      free(b);
      return;
    }
    sec->git_a = a;
    sec->git_b = b;
    return;
  }
  const char *q = memchr(s, '"', n);
  if (q && q > s && q[-1] == ' ') { /* a/X "b/Y" */
    size_t rest = (size_t)(s + n - q);
    char *b = git_name(q, rest, &used);
    if (!b || used != rest) {
      free(b);
      return;
    }
    sec->git_a = strndup(s, (size_t)(q - s - 1));
    sec->git_b = b;
    return;
  }
  if (n >= 5 && (n - 5) % 2 == 0) { /* a/X b/X */
    size_t x = (n - 5) / 2;
    if (!memcmp(s, "a/", 2) && !memcmp(s + 2 + x, " b/", 3) &&
        !memcmp(s + 2, s + 5 + x, x)) {
      sec->git_a = strndup(s, 2 + x);
      sec->git_b = strndup(s + 3 + x, 2 + x);
      return;
    }
  }
  const char *at = NULL; /* a/X b/Y: only where " b/" occurs once */
  for (size_t i = 0; i + 3 <= n; i++)
    if (memcmp(s + i, " b/", 3) == 0) {
      if (at) return;
      at = s + i;
    }
  if (!at) return;
  sec->git_a = strndup(s, (size_t)(at - s));
  sec->git_b = strndup(at + 1, (size_t)(s + n - at - 1));
}

static int is_null(const char *p) { return p && strcmp(p, "/dev/null") == 0; }

static char *strip(const char *p, const char *prefix, int do_strip) {
  if (!p || is_null(p)) return NULL;
  size_t n = strlen(prefix);
  if (do_strip && strncmp(p, prefix, n) == 0) p += n;
  return strdup(p);
}

/* ---- sections ---------------------------------------------------------- */

static void section_clear(section *s) {
  free(s->minus);
  free(s->plus);
  free(s->git_a);
  free(s->git_b);
  free(s->rename_from);
  free(s->rename_to);
  memset(s, 0, sizeof *s);
}

/* A rename the section describes two ways, or half of: git writes
 * `rename from` and `rename to` together, and ---/+++ (when there are
 * hunks) with the same two names. Which name would the tool take when
 * they differ? Neither: the section is refused. */
static const char *rename_mismatch(const section *s, const char *a,
                                   const char *b, int strip_ab) {
  if (!s->rename_from != !s->rename_to)
    return "'rename from' and 'rename to' come together; this section has "
           "only one of them";
  if (!s->rename_from || !s->has_minus) return NULL;
  const char *sa = a && strip_ab && !strncmp(a, "a/", 2) ? a + 2 : a;
  const char *sb = b && strip_ab && !strncmp(b, "b/", 2) ? b + 2 : b;
  if (!sa || !sb || strcmp(sa, s->rename_from) || strcmp(sb, s->rename_to))
    return "the ---/+++ names of a renamed file differ from its 'rename "
           "from'/'rename to' names; give the same two names";
  return NULL;
}

static int finish_section(tg_patch *p, section *s, char *err, size_t n) {
  tg_patch_file *f = s->f;
  if (!f) return 0;
  size_t ln = f->patch_line;
  const char *a = s->minus ? s->minus : s->git_a;
  const char *b = s->plus ? s->plus : s->git_b;
  int strip_ab = s->git || ((!a || is_null(a) || !strncmp(a, "a/", 2)) &&
                            (!b || is_null(b) || !strncmp(b, "b/", 2)));
  const char *bad = rename_mismatch(s, a, b, strip_ab);
  if (bad) {
    section_clear(s);
    p->nfiles++;
    return failf(err, n, "patch line %zu: %s", ln, bad);
  }
  if (s->rename_from && s->rename_to) {
    f->op = TG_PATCH_RENAME;
    f->old_path = strdup(s->rename_from);
    f->new_path = strdup(s->rename_to);
  } else {
    f->old_path = strip(a, "a/", strip_ab);
    f->new_path = strip(b, "b/", strip_ab);
    if (is_null(a) || s->mode_new) f->op = TG_PATCH_CREATE;
    else if (is_null(b) || s->mode_deleted) f->op = TG_PATCH_DELETE;
    else f->op = TG_PATCH_MODIFY;
  }
  f->mode = f->op == TG_PATCH_DELETE ? 0 : s->mode;
  section_clear(s);
  p->nfiles++; /* counted now, so a refused section is freed with p */
  if (f->op == TG_PATCH_CREATE && !f->new_path)
    return failf(err, n, "patch line %zu: a new file needs a name (+++ b/NAME)", ln);
  if (f->op == TG_PATCH_DELETE && !f->old_path)
    return failf(err, n, "patch line %zu: a deleted file needs a name (--- a/NAME)", ln);
  if (f->op == TG_PATCH_MODIFY && (!f->new_path || !f->old_path))
    return failf(err, n, "patch line %zu: this section names no file "
                 "(expected --- a/NAME and +++ b/NAME)", ln);
  if (f->op == TG_PATCH_MODIFY && f->nhunks == 0 && !f->mode)
    return failf(err, n, "patch line %zu: no hunks (@@ ... @@) and no new "
                 "mode for '%s'", ln, f->new_path);
  return 0;
}

static int begin_section(tg_patch *p, section *s, size_t line, char *err,
                         size_t n) {
  if (finish_section(p, s, err, n) < 0) return -1;
  tg_patch_file *v = realloc(p->files, (p->nfiles + 1) * sizeof *v);
  if (!v) return failf(err, n, "out of memory");
  p->files = v;
  memset(&v[p->nfiles], 0, sizeof *v);
  v[p->nfiles].patch_line = line;
  s->f = &v[p->nfiles];
  return 0;
}

/* ---- hunks ----------------------------------------------------------- */

/* Line numbers and counts of a hunk header: no file the tools can read
 * has more lines (file_max_bytes is far below), and keeping them small
 * keeps every sum of them far from overflowing. */
#define TG_PATCH_MAX_NUM 1000000000L

/* A number of the header: digits only (no sign, no blanks), at most
 * TG_PATCH_MAX_NUM. Advances *s; -1 when there is none or it is too big. */
static int header_num(const char **s, long *out) {
  const char *p = *s;
  long v = 0;
  if (*p < '0' || *p > '9') return -1;
  for (; *p >= '0' && *p <= '9'; p++) {
    v = v * 10 + (*p - '0');
    if (v > TG_PATCH_MAX_NUM) return -1;
  }
  *out = v;
  *s = p;
  return 0;
}

/* "START[,COUNT]" after the '-' or '+'; COUNT is 1 when absent. */
static int header_range(const char **s, long *start, long *count) {
  *count = 1;
  if (header_num(s, start) < 0) return -1;
  if (**s != ',') return 0;
  (*s)++;
  return header_num(s, count);
}

/* "@@ -a[,b] +c[,d] @@" */
static int hunk_header(const pline *l, tg_hunk *h) {
  char buf[128];
  size_t n = l->len < sizeof buf - 1 ? l->len : sizeof buf - 1;
  memcpy(buf, l->s, n);
  buf[n] = '\0';
  const char *s = buf + 3;
  if (*s++ != '-' || header_range(&s, &h->old_start, &h->old_count) < 0)
    return -1;
  if (*s++ != ' ' || *s++ != '+' ||
      header_range(&s, &h->new_start, &h->new_count) < 0)
    return -1;
  if (strncmp(s, " @@", 3) != 0) return -1;
  snprintf(h->header, sizeof h->header, "%.*s", (int)(s + 3 - buf), buf);
  return 0;
}

/* Checks the header's counts against the patch itself, before anything is
 * sized from them: the hunk needs at least max(old, new) lines (a context
 * line counts for both) and there are `left` lines after the header. */
static int header_fits(const tg_hunk *h, const char *name, size_t left,
                       char *err, size_t n) {
  long need = h->old_count > h->new_count ? h->old_count : h->new_count;
  if (need == 0)
    return failf(err, n, "patch line %zu: hunk %s of '%s' has no lines (a "
                 "hunk changes at least one line)", h->patch_line, h->header,
                 name);
  if ((unsigned long)need > left)
    return failf(err, n, "patch line %zu: hunk %s of '%s' promises %ld old "
                 "and %ld new lines, but the patch has only %zu line%s after "
                 "it (fix the @@ counts or the lines)", h->patch_line,
                 h->header, name, h->old_count, h->new_count, left,
                 left == 1 ? "" : "s");
  return 0;
}

/* "\ No newline at end of file" after hunk line hl: hl loses its '\n'.
 * Once only, and only after a line that has one. */
static int no_newline(tg_hunk_line *hl, size_t at, char *err, size_t n) {
  if (!hl || hl->len == 0 || hl->text[hl->len - 1] != '\n')
    return failf(err, n, "patch line %zu: '\\ No newline at end of file' "
                 "must follow a hunk line, once", at + 1);
  hl->len--;
  return 0;
}

/* Reads the hunk at lines[*i]; advances *i past it. */
static int parse_hunk(tg_patch_file *f, const char *name, const pline *lines,
                      size_t nlines, size_t *i, char *err, size_t n) {
  size_t at = *i;
  tg_hunk h;
  memset(&h, 0, sizeof h);
  h.patch_line = at + 1;
  if (!name) name = "(file)";
  if (hunk_header(&lines[at], &h) < 0)
    return failf(err, n, "patch line %zu: malformed hunk header '%.*s' "
                 "(expected @@ -START,COUNT +START,COUNT @@, numbers of at "
                 "most %ld)", at + 1, lines[at].len > 60 ? 60 : (int)lines[at].len,
                 lines[at].s, TG_PATCH_MAX_NUM);
  size_t left = nlines - at - 1;
  if (header_fits(&h, name, left, err, n) < 0) return -1;
  long old_left = h.old_count, new_left = h.new_count;
  size_t cap = (size_t)(old_left + new_left); /* both <= left, no overflow */
  h.lines = calloc((cap < left ? cap : left) + 1, sizeof *h.lines);
  if (!h.lines) return failf(err, n, "out of memory");
  size_t j = at + 1;
  while (old_left > 0 || new_left > 0) {
    const pline *l = j < nlines ? &lines[j] : NULL;
    char op = !l ? 0 : l->len == 0 ? ' ' : l->s[0];
    if (op == '\\' && h.nlines) {
      if (no_newline(&h.lines[h.nlines - 1], j, err, n) < 0) goto fail;
      j++;
      continue;
    }
    int bad = !(op == ' ' || op == '-' || op == '+') ||
              (op != '+' && old_left == 0) || (op != '-' && new_left == 0);
    if (bad) {
      failf(err, n, "patch line %zu: hunk %s of '%s' %s; the header "
            "promises %ld more old and %ld more new lines (fix the "
            "@@ counts or the lines)",
            j + 1, h.header, name,
            !l ? "ends at the end of the patch"
               : "has a line that does not fit",
            old_left, new_left);
      goto fail;
    }
    tg_hunk_line *hl = &h.lines[h.nlines++];
    hl->op = op;
    hl->text = l->len == 0 ? l->s : l->s + 1; /* an empty line: context "" */
    hl->len = l->len == 0 ? 1 : l->len; /* text plus its '\n' */
    if (op != '+') old_left--;
    if (op != '-') new_left--;
    j++;
  }
  if (j < nlines && lines[j].len && lines[j].s[0] == '\\') {
    if (no_newline(&h.lines[h.nlines - 1], j, err, n) < 0) goto fail;
    j++;
  }
  tg_hunk *v = realloc(f->hunks, (f->nhunks + 1) * sizeof *v);
  if (!v) {
    failf(err, n, "out of memory");
    goto fail;
  }
  f->hunks = v;
  v[f->nhunks++] = h;
  *i = j;
  return 0;
fail:
  free(h.lines);
  return -1;
}

/* ---- the parser -------------------------------------------------------- */

/* The mode of a "new file mode 100755" line (after the words): a regular
 * file's, executable or not. Git's others (120000 a symlink, 160000 a
 * submodule) are refused: the file tools make regular files only.
 * Returns the mode, or 0 with err filled. */
static unsigned git_mode(const pline *l, size_t skip, size_t ln, char *err,
                         size_t n) {
  unsigned long m = 0;
  size_t i = skip, digits = 0;
  for (; i < l->len && l->s[i] >= '0' && l->s[i] <= '7' && digits < 7;
       i++, digits++)
    m = m * 8 + (unsigned long)(l->s[i] - '0');
  while (i < l->len && (l->s[i] == ' ' || l->s[i] == '\r')) i++;
  if (!digits || i != l->len) {
    failf(err, n, "patch line %zu: '%.*s': expected an octal file mode such "
          "as 100644 or 100755", ln, (int)(l->len > 60 ? 60 : l->len), l->s);
    return 0;
  }
  if (m == 0120000 || m == 0160000) {
    failf(err, n, "patch line %zu: mode %lo is a %s; apply_patch writes "
          "regular files only (100644, 100755)", ln, m,
          m == 0120000 ? "symlink" : "submodule");
    return 0;
  }
  if ((m & 0170000) != 0100000) {
    failf(err, n, "patch line %zu: mode %lo is not a regular file's "
          "(100644 or 100755)", ln, m);
    return 0;
  }
  return (unsigned)m;
}

/* git's extended header lines; 1 when l was one (and handled). */
static int git_meta(section *s, const pline *l, char *err, size_t n, size_t ln,
                    int *failed) {
  const char *mode_line = starts(l, "new file mode ") ? "new file mode "
                          : starts(l, "deleted file mode ") ? "deleted file mode "
                          : starts(l, "old mode ") ? "old mode "
                          : starts(l, "new mode ") ? "new mode " : NULL;
  unsigned mode = 0;
  if (mode_line && !(mode = git_mode(l, strlen(mode_line), ln, err, n))) {
    *failed = -1;
    return 1;
  }
  if (starts(l, "new file mode ")) {
    s->mode_new = 1;
    s->mode = mode;
  } else if (starts(l, "deleted file mode ")) s->mode_deleted = 1;
  else if (starts(l, "new mode ")) s->mode = mode;
  else if (starts(l, "rename from ") || starts(l, "rename to ")) {
    int from = starts(l, "rename from ");
    char **slot = from ? &s->rename_from : &s->rename_to;
    if (*slot) { /* which of two would the tool take? neither */
      *failed = failf(err, n, "patch line %zu: a second 'rename %s' line in "
                      "one file section", ln, from ? "from" : "to");
      return 1;
    }
    if (!(*slot = header_path(l, from ? 12 : 10, ln, err, n))) *failed = -1;
  }
  else if (starts(l, "copy from ") || starts(l, "copy to "))
    *failed = failf(err, n, "patch line %zu: copies are not supported; write "
                    "the new file as a creation (--- /dev/null)", ln);
  else if (starts(l, "GIT binary patch"))
    *failed = failf(err, n, "patch line %zu: binary patches are not supported",
                    ln);
  else if (!(starts(l, "index ") || starts(l, "similarity index") ||
             starts(l, "dissimilarity index") || mode_line))
    return 0;
  return 1;
}

static int parse_lines(tg_patch *p, const pline *lines, size_t nl, char *err,
                       size_t n) {
  section s;
  memset(&s, 0, sizeof s);
  for (size_t i = 0; i < nl;) {
    const pline *l = &lines[i];
    size_t ln = i + 1;
    int failed = 0;
    if (starts(l, "diff --git ")) {
      if (begin_section(p, &s, ln, err, n) < 0) goto fail;
      s.git = 1;
      git_names(&s, l);
      i++;
    } else if (s.f && s.git && !s.has_minus && git_meta(&s, l, err, n, ln, &failed)) {
      if (failed) goto fail;
      i++;
    } else if (starts(l, "--- ") && i + 1 < nl && starts(&lines[i + 1], "+++ ")) {
      if ((!s.f || !s.git || s.has_minus) && begin_section(p, &s, ln, err, n) < 0)
        goto fail;
      s.minus = header_path(l, 4, ln, err, n);
      s.plus = s.minus ? header_path(&lines[i + 1], 4, ln + 1, err, n) : NULL;
      s.has_minus = 1;
      if (!s.plus) goto fail;
      i += 2;
    } else if (starts(l, "@@ ")) {
      if (!s.f || !s.has_minus) {
        failf(err, n, "patch line %zu: a hunk (@@) before its file header "
              "(--- a/NAME and +++ b/NAME)", ln);
        goto fail;
      }
      if (parse_hunk(s.f, s.plus, lines, nl, &i, err, n) < 0) goto fail;
    } else if (starts(l, "Binary files ")) {
      failf(err, n, "patch line %zu: binary patches are not supported", ln);
      goto fail;
    } else {
      i++; /* prose around the diff */
    }
  }
  if (finish_section(p, &s, err, n) < 0) goto fail;
  if (p->nfiles == 0)
    return failf(err, n, "the patch has no file sections; expected a unified "
                 "diff (--- a/NAME, +++ b/NAME, @@ -1,2 +1,3 @@ ...)");
  return 0;
fail:
  if (s.f && s.f == &p->files[p->nfiles]) p->nfiles++; /* freed with p */
  section_clear(&s);
  return -1;
}

int tg__patch_parse(const char *text, size_t len, tg_patch *p, char *err,
                    size_t errlen) {
  memset(p, 0, sizeof *p);
  p->buf = malloc(len + 2);
  if (!p->buf) return failf(err, errlen, "out of memory");
  memcpy(p->buf, text, len);
  if (len == 0 || text[len - 1] != '\n') p->buf[len++] = '\n';
  p->buf[len] = '\0';
  size_t nl = 0;
  pline *lines = split_lines(p->buf, len, &nl);
  if (!lines) return failf(err, errlen, "out of memory");
  int rc = parse_lines(p, lines, nl, err, errlen);
  free(lines);
  return rc;
}

void tg__patch_free(tg_patch *p) {
  for (size_t i = 0; i < p->nfiles; i++) {
    tg_patch_file *f = &p->files[i];
    for (size_t k = 0; k < f->nhunks; k++) free(f->hunks[k].lines);
    free(f->hunks);
    free(f->old_path);
    free(f->new_path);
  }
  free(p->files);
  free(p->buf);
  memset(p, 0, sizeof *p);
}

const char *tg__patch_file_name(const tg_patch_file *f) {
  return f->new_path ? f->new_path : f->old_path ? f->old_path : "(unnamed)";
}

/* ---- applying -------------------------------------------------------- */

typedef struct {
  const char *s;
  size_t len;      /* with its '\n' when it has one */
} fline;

static fline *file_lines(const char *c, size_t len, size_t *n) {
  size_t cap = 1;
  for (size_t i = 0; i < len; i++) cap += c[i] == '\n';
  fline *v = malloc(cap * sizeof *v);
  if (!v) return NULL;
  size_t k = 0;
  for (const char *s = c, *end = c + len; s < end;) {
    const char *nl = memchr(s, '\n', (size_t)(end - s));
    const char *stop = nl ? nl + 1 : end;
    v[k++] = (fline){s, (size_t)(stop - s)};
    s = stop;
  }
  *n = k;
  return v;
}

static int block_at(const tg_hunk *h, const fline *fl, size_t k) {
  for (size_t i = 0, t = 0; i < h->nlines; i++) {
    const tg_hunk_line *hl = &h->lines[i];
    if (hl->op == '+') continue;
    const fline *x = &fl[k + t++];
    if (x->len != hl->len || memcmp(x->s, hl->text, hl->len) != 0) return 0;
  }
  return 1;
}

/* Where the hunk's old lines (m of them) match, at or after pos, closest
 * to the line its header names; -1 when nowhere. */
static long find_block(const tg_hunk *h, size_t m, const fline *fl, size_t n,
                       size_t pos) {
  if (m > n || pos > n - m) return -1;
  long want = h->old_count ? h->old_start - 1 : h->old_start;
  long lo = (long)pos, hi = (long)(n - m);
  if (want < lo) want = lo;
  if (want > hi) want = hi;
  for (long d = 0; want - d >= lo || want + d <= hi; d++) {
    if (want + d <= hi && block_at(h, fl, (size_t)(want + d))) return want + d;
    if (d && want - d >= lo && block_at(h, fl, (size_t)(want - d)))
      return want - d;
  }
  return -1;
}

/* The old lines of h, in order, for the diagnosis below. */
static size_t old_line(const tg_hunk *h, size_t t) {
  for (size_t i = 0, k = 0; i < h->nlines; i++)
    if (h->lines[i].op != '+' && k++ == t) return i;
  return 0;
}

/* How many of h's first old lines match the file from line k. */
static size_t prefix_at(const tg_hunk *h, size_t m, const fline *fl, size_t n,
                        size_t k) {
  size_t t = 0;
  while (t < m && k + t < n) {
    const tg_hunk_line *hl = &h->lines[old_line(h, t)];
    if (fl[k + t].len != hl->len || memcmp(fl[k + t].s, hl->text, hl->len))
      break;
    t++;
  }
  return t;
}

/* Prints at most 80 bytes of a line, without its newline. */
static int shown(const char *s, size_t len) {
  if (len && s[len - 1] == '\n') len--;
  return (int)(len > 80 ? 80 : len);
}

/* Says where the hunk came closest to applying and which line differed. */
static void no_match(const tg_patch_file *f, size_t hi, size_t m,
                     const fline *fl, size_t n, size_t pos, char *err,
                     size_t errlen) {
  const tg_hunk *h = &f->hunks[hi];
  size_t best = 0, at = pos;
  for (size_t k = pos; k < n; k++) {
    size_t t = prefix_at(h, m, fl, n, k);
    if (t > best) {
      best = t;
      at = k;
    }
  }
  int no_nl = n && fl[n - 1].s[fl[n - 1].len - 1] != '\n';
  const char *hint = no_nl ? " The file does not end with a newline: mark its "
                             "last line with '\\ No newline at end of file'."
                           : "";
  int w = snprintf(err, errlen, "hunk %zu of '%s' (%s) does not apply: ", hi + 1,
                   tg__patch_file_name(f), h->header);
  if (w < 0 || (size_t)w >= errlen) return;
  const tg_hunk_line *want = &h->lines[old_line(h, best)];
  if (best == 0)
    snprintf(err + w, errlen - (size_t)w, "its first line \"%.*s\" is not in "
             "the file%s. Read the file again and make the patch from its "
             "current content.%s", shown(want->text, want->len), want->text,
             pos ? " after the previous hunk" : "", hint);
  else if (at + best >= n)
    snprintf(err + w, errlen - (size_t)w, "it matches from line %zu but the "
             "file ends before \"%.*s\". Read the file again and make the "
             "patch from its current content.%s", at + 1,
             shown(want->text, want->len), want->text, hint);
  else
    snprintf(err + w, errlen - (size_t)w, "it matches from line %zu, but line "
             "%zu is \"%.*s\" where the patch expects \"%.*s\". Read the file "
             "again and make the patch from its current content.%s", at + 1,
             at + best + 1, shown(fl[at + best].s, fl[at + best].len),
             fl[at + best].s, shown(want->text, want->len), want->text, hint);
}

int tg__patch_apply(const tg_patch_file *f, const char *content, size_t len,
                    char **out, size_t *outlen, char *err, size_t errlen) {
  size_t n = 0, cap = len + 1;
  for (size_t i = 0; i < f->nhunks; i++)
    for (size_t k = 0; k < f->hunks[i].nlines; k++)
      if (f->hunks[i].lines[k].op == '+') cap += f->hunks[i].lines[k].len;
  fline *fl = file_lines(content, len, &n);
  char *buf = malloc(cap);
  if (!fl || !buf) {
    free(fl);
    free(buf);
    return failf(err, errlen, "out of memory");
  }
  size_t o = 0, pos = 0;
  for (size_t hi = 0; hi < f->nhunks; hi++) {
    const tg_hunk *h = &f->hunks[hi];
    size_t m = 0;
    for (size_t i = 0; i < h->nlines; i++) m += h->lines[i].op != '+';
    long at = find_block(h, m, fl, n, pos);
    if (at < 0) {
      no_match(f, hi, m, fl, n, pos, err, errlen);
      free(fl);
      free(buf);
      return -1;
    }
    for (; pos < (size_t)at; pos++) {
      memcpy(buf + o, fl[pos].s, fl[pos].len);
      o += fl[pos].len;
    }
    for (size_t i = 0; i < h->nlines; i++) {
      const tg_hunk_line *hl = &h->lines[i];
      if (hl->op != '-') {
        memcpy(buf + o, hl->text, hl->len);
        o += hl->len;
      }
      if (hl->op != '+') pos++;
    }
  }
  for (; pos < n; pos++) {
    memcpy(buf + o, fl[pos].s, fl[pos].len);
    o += fl[pos].len;
  }
  free(fl);
  buf[o] = '\0';
  *out = buf;
  *outlen = o;
  return 0;
}
