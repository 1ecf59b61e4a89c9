/*
 * capture.c — one output stream of a command, kept within a cap (see
 * capture.h). The bytes are stored once, in one buffer: no copy per read
 * beyond the one into it, and at most cap bytes whatever the command
 * prints.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "capture.h"
#include "base/json.h"

void tg__capture_init(tg_capture *c, size_t cap) {
  memset(c, 0, sizeof *c);
  c->cap = cap ? cap : 1;
}

void tg__capture_free(tg_capture *c) {
  free(c->buf);
  c->buf = NULL;
}

int tg__capture_truncated(const tg_capture *c) { return c->total > c->len; }

/* ---- head + tail ---------------------------------------------------------- */

/* The first cap bytes fill buf in order. Past that, buf[0, cap/2) stays the
 * head and buf[cap/2, cap) becomes a ring holding the latest bytes: at the
 * moment it starts, it holds exactly the latest cap - cap/2 bytes. */
static void keep(tg_capture *c, const char *d, size_t n) {
  size_t cap = c->cap;
  if (c->len < cap) {
    size_t take = n < cap - c->len ? n : cap - c->len;
    if (c->len + take > c->alloc) {
      size_t a = c->alloc ? c->alloc : 4096;
      while (a < c->len + take) a *= 2;
      if (a > cap) a = cap;
      char *grown = realloc(c->buf, a);
      if (!grown) return; /* out of memory: the bytes count as cut */
      c->buf = grown;
      c->alloc = a;
    }
    memcpy(c->buf + c->len, d, take);
    c->len += take;
    d += take;
    n -= take;
  }
  size_t h = cap / 2, r = cap - h;
  if (!n || !r || c->len < cap) return;
  if (n > r) { /* only the last r bytes can stay */
    d += n - r;
    n = r;
  }
  size_t first = n < r - c->ring ? n : r - c->ring;
  memcpy(c->buf + h + c->ring, d, first);
  memcpy(c->buf + h, d + first, n - first);
  c->ring = (c->ring + n) % r;
}

/* ---- the last line ---------------------------------------------------------- */

static int is_sep(char ch) { return ch == '\n' || ch == '\r'; }

static void line_append(tg_capture *c, const char *d, size_t n) {
  size_t room = TG_CAPTURE_LINE - c->line_len;
  if (n > room) n = room; /* a long line keeps its beginning */
  memcpy(c->line + c->line_len, d, n);
  c->line_len += n;
  c->line[c->line_len] = '\0';
}

static void set_last(tg_capture *c, const char *d, size_t n) {
  if (n > TG_CAPTURE_LINE) n = TG_CAPTURE_LINE;
  memcpy(c->last, d, n);
  c->last[n] = '\0';
  c->last_len = n;
}

/* Looks only at the end of each chunk: 64 KiB of short lines cost one
 * line. "\r" ends a line too, so a progress bar shows its latest state. */
static void track_lines(tg_capture *c, const char *d, size_t n) {
  size_t end = n;
  while (end > 0 && !is_sep(d[end - 1])) end--;
  if (end == 0) { /* no line ends in this chunk */
    line_append(c, d, n);
    return;
  }
  size_t e = end - 1; /* a separator; the segment before it ends a line */
  for (;;) {
    size_t b = e;
    while (b > 0 && !is_sep(d[b - 1])) b--;
    if (b == 0) { /* the segment finishes the line begun before */
      line_append(c, d, e);
      if (c->line_len) set_last(c, c->line, c->line_len);
      break;
    }
    if (e > b) {
      set_last(c, d + b, e - b);
      break;
    }
    e = b - 1; /* an empty line: look further back */
  }
  c->line_len = 0;
  c->line[0] = '\0';
  line_append(c, d + end, n - end);
}

void tg__capture_add(tg_capture *c, const char *d, size_t n) {
  c->total += n;
  keep(c, d, n);
  track_lines(c, d, n);
}

/* ---- UTF-8 ---------------------------------------------------------------- */

/* Writes d[0, n) to dst (room for 3n bytes) as valid UTF-8: each invalid
 * byte becomes U+FFFD. Returns the bytes written. */
static size_t utf8_clean(char *dst, const char *d, size_t n) {
  const unsigned char *s = (const unsigned char *)d;
  size_t o = 0;
  for (size_t i = 0; i < n;) {
    size_t k = tg__utf8_seq(s + i, n - i);
    if (k) {
      memcpy(dst + o, s + i, k);
      o += k;
      i += k;
    } else {
      memcpy(dst + o, "\xEF\xBF\xBD", 3);
      o += 3;
      i++;
    }
  }
  return o;
}

/* ---- what is handed out --------------------------------------------------------- */

/* The length of s[0, n) without a sequence cut short at its end. */
static size_t utf8_whole(const char *s, size_t n) {
  size_t j = n;
  while (j > 0 && ((unsigned char)s[j - 1] & 0xC0) == 0x80 && n - j < 3) j--;
  if (j == 0) return n;
  unsigned ch = (unsigned char)s[j - 1];
  if (ch < 0xC2 || ch > 0xF4) return n; /* not a lead byte: nothing cut */
  size_t len = ch >= 0xF0 ? 4 : ch >= 0xE0 ? 3 : 2;
  return n - (j - 1) < len ? j - 1 : n;
}

/* The ring's bytes, oldest first, without continuation bytes at the start
 * (their character began in the part that was cut). malloc'd, or NULL. */
static char *ring_text(const tg_capture *c, size_t *n) {
  size_t h = c->cap / 2, r = c->cap - h;
  char *t = malloc(r + 1);
  if (!t) return NULL;
  memcpy(t, c->buf + h + c->ring, r - c->ring);
  memcpy(t + r - c->ring, c->buf + h, c->ring);
  size_t skip = 0;
  while (skip < r && ((unsigned char)t[skip] & 0xC0) == 0x80) skip++;
  memmove(t, t + skip, r - skip);
  *n = r - skip;
  return t;
}

/* The cut never splits a character. */
cJSON *tg__capture_text(const tg_capture *c) {
  size_t head = c->len, tail_n = 0;
  char *tail = NULL, marker[64] = "";
  if (c->total > c->len && c->len == c->cap) { /* head + tail */
    head = utf8_whole(c->buf, c->cap / 2);
    tail = ring_text(c, &tail_n);
  }
  if (c->total > c->len) /* (with no tail when memory ran out) */
    snprintf(marker, sizeof marker, "\n...[%zu bytes cut]...\n",
             c->total - head - tail_n);
  size_t ml = strlen(marker);
  char *t = malloc((head + tail_n) * 3 + ml + 1);
  cJSON *j = NULL;
  if (t) {
    size_t o = utf8_clean(t, c->buf ? c->buf : "", head);
    memcpy(t + o, marker, ml);
    o += ml;
    o += utf8_clean(t + o, tail ? tail : "", tail_n);
    t[o] = '\0';
    j = cJSON_CreateString(t);
  }
  free(t);
  free(tail);
  return j ? j : cJSON_CreateString("");
}

const char *tg__capture_last_line(const tg_capture *c, char *out) {
  const char *l = c->line_len ? c->line : c->last;
  size_t n = c->line_len ? c->line_len : c->last_len;
  out[utf8_clean(out, l, utf8_whole(l, n))] = '\0'; /* a cut line: no U+FFFD */
  return out;
}
