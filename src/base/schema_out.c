/*
 * schema_out.c — the validator's messages: bounded text that never
 * splits a UTF-8 character, JSON paths, numbers and values as JSON.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "schema_int.h"

sc_out tg__sc_out_make(char *buf, size_t cap) {
  sc_out o = {buf, buf ? cap : 0, 0, 0};
  if (o.cap) buf[0] = '\0';
  return o;
}

/* Appends n bytes. What does not fit is cut at a UTF-8 sequence boundary,
 * and nothing is appended after a cut, so the text never resumes past a
 * hole. The buffer stays NUL-terminated throughout. */
void tg__sc_put(sc_out *o, const char *s, size_t n) {
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

void tg__sc_str(sc_out *o, const char *s) { tg__sc_put(o, s, strlen(s)); }

void tg__sc_size(sc_out *o, size_t n) {
  char b[32];
  snprintf(b, sizeof b, "%zu", n);
  tg__sc_str(o, b);
}

void tg__sc_num(sc_out *o, double d) {
  char b[TG_JSON_NUMBER_MAX];
  tg__sc_str(o, tg_json_number_text(d, b));
}

/* Plain runs go out in one piece so a cut can respect their UTF-8
 * boundaries. */
void tg__sc_quoted(sc_out *o, const char *s) {
  if (!o->cap) return;
  tg__sc_put(o, "\"", 1);
  while (*s) {
    size_t run = 0;
    while (s[run] && s[run] != '"' && s[run] != '\\' &&
           (unsigned char)s[run] >= 0x20)
      run++;
    tg__sc_put(o, s, run);
    s += run;
    if (!*s) break;
    char esc[8];
    if (*s == '"' || *s == '\\')
      snprintf(esc, sizeof esc, "\\%c", *s);
    else
      snprintf(esc, sizeof esc, "\\u%04x", (unsigned)(unsigned char)*s);
    tg__sc_str(o, esc);
    s++;
  }
  tg__sc_put(o, "\"", 1);
}

void tg__sc_json(sc_out *o, const cJSON *j) {
  if (!o->cap) return;
  char *t = tg_json_print(j, 0);
  tg__sc_str(o, t ? t : "?");
  free(t);
}

void tg__sc_path(sc_out *o, const seg *s) {
  char p[512];
  tg__sc_str(o, tg__json_path_text(s, p, sizeof p));
}

seg tg__sc_key(const seg *up, const char *key) {
  seg s = {up, key, strlen(key), 0};
  return s;
}

seg tg__sc_index(const seg *up, size_t i) {
  seg s = {up, NULL, 0, i};
  return s;
}
