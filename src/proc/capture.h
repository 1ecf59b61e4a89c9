/*
 * capture.h — what is kept of one output stream of a command: at most cap
 * bytes (the first cap/2 and the last cap - cap/2, with the count of what
 * was cut between) and the last line, for progress. What it hands out is
 * valid UTF-8 (invalid bytes and NUL become U+FFFD): it goes into JSON.
 */
#ifndef TG_CAPTURE_H
#define TG_CAPTURE_H

#include <stddef.h>
#include <cjson/cJSON.h>

#define TG_CAPTURE_LINE 200   /* bytes of the last line kept */

typedef struct {
  size_t cap;
  char *buf;                  /* up to cap bytes: see capture.c */
  size_t len, alloc;
  size_t ring;                /* once total > cap: next write in the tail */
  size_t total;               /* bytes seen */
  char line[TG_CAPTURE_LINE + 1]; /* the line being written (no newline yet) */
  size_t line_len;
  char last[TG_CAPTURE_LINE + 1]; /* the last complete non-empty line */
  size_t last_len;
} tg_capture;

void tg__capture_init(tg_capture *c, size_t cap);
void tg__capture_free(tg_capture *c);

/* Takes n more bytes of the stream. */
void tg__capture_add(tg_capture *c, const char *d, size_t n);

/* Whether bytes were cut. */
int tg__capture_truncated(const tg_capture *c);

/* The text kept: everything, or head + "\n...[N bytes cut]...\n" + tail. */
cJSON *tg__capture_text(const tg_capture *c);

/* Writes the last line ("" before any; a line still being written, or
 * ended by "\r", counts) into out, which has room for
 * TG_CAPTURE_LINE_VIEW bytes. Returns out. */
#define TG_CAPTURE_LINE_VIEW (TG_CAPTURE_LINE * 3 + 1)
const char *tg__capture_last_line(const tg_capture *c, char *out);

#endif
