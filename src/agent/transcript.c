/*
 * transcript.c — what a turn cost: on Stop, the model and tokens the agent
 * wrote to its transcript since the last Stop, so budgets see real spend.
 *
 * Claude Code: JSON lines; each assistant message carries
 * message.{id, model, usage{input_tokens, output_tokens,
 * cache_creation_input_tokens, cache_read_input_tokens}}, repeated on
 * every line of that message (one per content block): a message counts
 * once, with the largest numbers its lines show.
 * Codex: JSON lines; event_msg lines with payload.type "token_count" carry
 * info.last_token_usage{input_tokens (cache reads included),
 * cached_input_tokens, output_tokens} and info.total_token_usage, which
 * repeats when the same count is written twice (counted once); the model
 * is the last turn_context's payload.model, else the hook event's.
 *
 * The transcript path comes from the event: hostile. Only a regular file
 * is read (not a FIFO, not /dev/zero), at most `max` bytes per Stop, whole
 * lines only (a partial last line waits for the next Stop); a file that
 * shrank or was replaced is read from its start; a line that is not JSON
 * or holds numbers that are not token counts is skipped.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cjson/cJSON.h>
#include "protocol.h"

typedef struct {
  tg_hook_usage *u;
  int n;
  tg_hook_mark *mark;
  const char *event_model;
  char codex_model[128];
  /* Claude Code: the message being read (its lines come together) */
  char id[128];
  tg_hook_usage msg;
  int has_msg;
} reading;

static const cJSON *at(const cJSON *o, const char *k) {
  return cJSON_GetObjectItemCaseSensitive(o, k);
}

/* A token count: a whole number in [0, 1e12]; else -1 (the line is not
 * believed). Absent: 0. */
static int64_t count(const cJSON *o, const char *k) {
  const cJSON *v = at(o, k);
  if (!v) return 0;
  if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0 ||
      v->valuedouble > 1e12 || v->valuedouble != floor(v->valuedouble))
    return -1;
  return (int64_t)v->valuedouble;
}

static tg_hook_usage *slot_for(reading *r, const char *model) {
  for (int i = 0; i < r->n; i++)
    if (!strcmp(r->u[i].model, model)) return &r->u[i];
  if (r->n == TG_HOOK_MAX_USAGE_MODELS) return &r->u[r->n - 1]; /* the rest */
  tg_hook_usage *u = &r->u[r->n++];
  memset(u, 0, sizeof *u);
  snprintf(u->model, sizeof u->model, "%s", model);
  return u;
}

/* A stop's count per model, at most (a line's is at most 1e12): far past
 * any real turn, and far from overflowing the ledger's sums, which a
 * hostile transcript could otherwise push past 2^63 — a sum that fails
 * reads as nothing spent. */
#define STOP_MAX 1000000000000LL

static void add_to(int64_t *sum, int64_t n) {
  *sum = *sum > STOP_MAX - n ? STOP_MAX : *sum + n;
}

static void add(reading *r, const tg_hook_usage *m) {
  tg_hook_usage *u = slot_for(r, m->model[0] ? m->model : "unknown");
  add_to(&u->input_tokens, m->input_tokens);
  add_to(&u->output_tokens, m->output_tokens);
  add_to(&u->cache_creation_input_tokens, m->cache_creation_input_tokens);
  add_to(&u->cache_read_input_tokens, m->cache_read_input_tokens);
  u->messages += 1;
}

static void commit_msg(reading *r) {
  if (r->has_msg) add(r, &r->msg);
  r->has_msg = 0;
}

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

static void claude_line(reading *r, const cJSON *j) {
  const char *type = cJSON_GetStringValue(at(j, "type"));
  const cJSON *msg = at(j, "message");
  const cJSON *usage = at(msg, "usage");
  const char *model = cJSON_GetStringValue(at(msg, "model"));
  const char *id = cJSON_GetStringValue(at(msg, "id"));
  if (!type || strcmp(type, "assistant") || !cJSON_IsObject(usage)) return;
  if (model && !strcmp(model, "<synthetic>")) return; /* no model ran */
  tg_hook_usage m;
  memset(&m, 0, sizeof m);
  m.input_tokens = count(usage, "input_tokens");
  m.output_tokens = count(usage, "output_tokens");
  m.cache_creation_input_tokens = count(usage, "cache_creation_input_tokens");
  m.cache_read_input_tokens = count(usage, "cache_read_input_tokens");
  if (m.input_tokens < 0 || m.output_tokens < 0 ||
      m.cache_creation_input_tokens < 0 || m.cache_read_input_tokens < 0)
    return;
  snprintf(m.model, sizeof m.model, "%s", model ? model : "unknown");
  if (id && !strcmp(id, r->mark->last_id) && !r->has_msg)
    return; /* its first lines were counted at the last Stop */
  if (id && r->has_msg && !strcmp(id, r->id)) { /* the same message again */
    r->msg.input_tokens = max64(r->msg.input_tokens, m.input_tokens);
    r->msg.output_tokens = max64(r->msg.output_tokens, m.output_tokens);
    r->msg.cache_creation_input_tokens = max64(
        r->msg.cache_creation_input_tokens, m.cache_creation_input_tokens);
    r->msg.cache_read_input_tokens =
        max64(r->msg.cache_read_input_tokens, m.cache_read_input_tokens);
    return;
  }
  commit_msg(r);
  r->msg = m;
  r->has_msg = 1;
  snprintf(r->id, sizeof r->id, "%s", id ? id : "");
  snprintf(r->mark->last_id, sizeof r->mark->last_id, "%s", id ? id : "");
}

static void codex_line(reading *r, const cJSON *j) {
  const char *type = cJSON_GetStringValue(at(j, "type"));
  const cJSON *p = at(j, "payload");
  if (!type) return;
  if (!strcmp(type, "turn_context")) {
    const char *model = cJSON_GetStringValue(at(p, "model"));
    if (model) snprintf(r->codex_model, sizeof r->codex_model, "%s", model);
    return;
  }
  const char *ptype = cJSON_GetStringValue(at(p, "type"));
  if (strcmp(type, "event_msg") || !ptype || strcmp(ptype, "token_count"))
    return;
  const cJSON *info = at(p, "info");
  const cJSON *last = at(info, "last_token_usage");
  if (!cJSON_IsObject(last)) return;
  const cJSON *total = at(at(info, "total_token_usage"), "total_tokens");
  if (cJSON_IsNumber(total)) {
    if (total->valuedouble == r->mark->last_total) return; /* written twice */
    r->mark->last_total = total->valuedouble;
  }
  int64_t in = count(last, "input_tokens"), cached = count(last, "cached_input_tokens");
  int64_t out = count(last, "output_tokens");
  int64_t wrote = count(last, "cache_write_input_tokens");
  if (in < 0 || cached < 0 || out < 0 || wrote < 0) return;
  tg_hook_usage m;
  memset(&m, 0, sizeof m);
  m.input_tokens = in > cached ? in - cached : 0;
  m.cache_read_input_tokens = cached;
  m.cache_creation_input_tokens = wrote;
  m.output_tokens = out; /* reasoning tokens are part of them */
  snprintf(m.model, sizeof m.model, "%s",
           r->codex_model[0] ? r->codex_model
                             : r->event_model ? r->event_model : "unknown");
  add(r, &m);
}

static void lines(reading *r, const char *agent, const char *b, size_t n) {
  int codex = !strcmp(agent, "codex");
  for (size_t i = 0; i < n;) {
    const char *nl = memchr(b + i, '\n', n - i);
    size_t len = nl ? (size_t)(nl - (b + i)) : n - i;
    cJSON *j = len ? tg_json_parse(b + i, len, NULL, NULL, 0) : NULL;
    if (cJSON_IsObject(j)) {
      if (codex) codex_line(r, j);
      else claude_line(r, j);
    }
    cJSON_Delete(j);
    i += len + 1;
  }
  commit_msg(r);
}

int tg__hook_transcript_usage(const char *agent, const char *path,
                              const char *event_model, tg_hook_mark *mark,
                              size_t max, tg_hook_usage *u, int *n,
                              char err[TG_ERRMSG]) {
  *n = 0;
  struct stat st;
  /* a device is never opened (opening some has effects): only a regular
   * file, checked before and again after (it may have been swapped) */
  if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
    snprintf(err, TG_ERRMSG, "the transcript '%.300s' is not a regular file", path);
    return -EINVAL;
  }
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0 || fstat(fd, &st) < 0) {
    int e = errno;
    snprintf(err, TG_ERRMSG, "cannot read the transcript '%.300s': %s", path,
             strerror(e));
    if (fd >= 0) close(fd);
    return -e;
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    snprintf(err, TG_ERRMSG, "the transcript '%.300s' is not a regular file", path);
    return -EINVAL;
  }
  if ((uint64_t)st.st_dev != mark->dev || (uint64_t)st.st_ino != mark->ino ||
      (uint64_t)st.st_size < mark->offset) { /* another file, or cut short */
    memset(mark, 0, sizeof *mark);
    mark->dev = (uint64_t)st.st_dev;
    mark->ino = (uint64_t)st.st_ino;
  }
  uint64_t left = (uint64_t)st.st_size - mark->offset;
  size_t want = left > max ? max : (size_t)left;
  char *b = want ? malloc(want) : NULL;
  ssize_t got = b ? pread(fd, b, want, (off_t)mark->offset) : 0;
  close(fd);
  if (want && (!b || got < 0)) {
    free(b);
    snprintf(err, TG_ERRMSG, "cannot read the transcript '%.300s'", path);
    return -EIO;
  }
  size_t have = (size_t)got, use = have;
  while (use && b[use - 1] != '\n') use--;
  if (!use && have == max) use = have; /* one line longer than max: skipped */
  reading r;
  memset(&r, 0, sizeof r);
  r.u = u;
  r.mark = mark;
  r.event_model = event_model;
  if (use) lines(&r, agent, b, use);
  mark->offset += use;
  *n = r.n;
  free(b);
  return 0;
}
