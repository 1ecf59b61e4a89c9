/*
 * limit.c — the opt-in result limit: when a tool's result serializes to
 * more than max_result_bytes, the longest strings in it are cut, keeping
 * their head and tail around a marker, until it fits. A result with no
 * strings to cut becomes the head and tail of its JSON text.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "call.h"
#include "base/json.h"

static size_t json_size(const cJSON *j) {
  char *s = tg_json_print(j, 0);
  size_t n = s ? strlen(s) : 0;
  free(s);
  return n;
}

static cJSON *longest_string(cJSON *j, cJSON *best) {
  if (cJSON_IsString(j) && (!best || strlen(j->valuestring) >
                                         strlen(best->valuestring)))
    best = j;
  for (cJSON *c = j->child; c; c = c->next) best = longest_string(c, best);
  return best;
}

/* Steps back to the start of a UTF-8 sequence so a cut never splits one. */
static size_t utf8_floor(const char *s, size_t i) {
  while (i > 0 && ((unsigned char)s[i] & 0xC0) == 0x80) i--;
  return i;
}

/* Returns s cut to about keep bytes: head, marker, tail (malloc'd). */
static char *cut_text(const char *s, size_t keep) {
  size_t len = strlen(s);
  char marker[80];
  snprintf(marker, sizeof marker, "\n...[truncated %zu bytes]...\n",
           len > keep ? len - keep : 0);
  size_t head = utf8_floor(s, keep * 2 / 3);
  size_t tail_start = utf8_floor(s, len - (keep - keep * 2 / 3));
  if (tail_start < head) tail_start = head;
  size_t out_len = head + strlen(marker) + (len - tail_start);
  char *out = malloc(out_len + 1);
  if (!out) return NULL;
  memcpy(out, s, head);
  memcpy(out + head, marker, strlen(marker));
  memcpy(out + head + strlen(marker), s + tail_start, len - tail_start);
  out[out_len] = '\0';
  return out;
}

static int shrink_once(cJSON *r, size_t over) {
  cJSON *s = longest_string(r, NULL);
  size_t len = s ? strlen(s->valuestring) : 0;
  if (!s || len < 64) return -1; /* nothing worth cutting */
  size_t keep = len > over + 48 ? len - over - 48 : len / 4;
  char *cut = cut_text(s->valuestring, keep);
  if (!cut || strlen(cut) >= len) {
    free(cut);
    return -1;
  }
  cJSON_SetValuestring(s, cut);
  free(cut);
  return 0;
}

tg_step tg__stage_limit(tg_call *c) {
  size_t limit = c->tool ? c->tool->max_result_bytes : 0;
  if (!limit || !c->result) return TG_NEXT;
  size_t size = json_size(c->result), original = size;
  if (size <= limit) return TG_NEXT;
  for (int i = 0; i < 64 && size > limit; i++) {
    if (shrink_once(c->result, size - limit) < 0) break;
    size = json_size(c->result);
  }
  if (size > limit) { /* no strings left to cut: keep the JSON text's ends */
    char *text = tg_json_print(c->result, 0);
    char *cut = text ? cut_text(text, limit > 96 ? limit - 64 : limit / 2) : NULL;
    if (cut) {
      cJSON_Delete(c->result);
      c->result = cJSON_CreateString(cut);
    }
    free(text);
    free(cut);
  }
  c->truncated = 1;
  cJSON *d = tg__call_event_data(c); /* NULL: nobody listens */
  if (d) {
    cJSON_AddNumberToObject(d, "original_bytes", (double)original);
    cJSON_AddNumberToObject(d, "limit_bytes", (double)limit);
  }
  tg__call_emit(c, "result_truncated", d);
  return TG_NEXT;
}
