/*
 * taint.c — a session's taint kept in the store (through the sink) or,
 * with storage off, in the session's state in memory (taint.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "taint.h"
#include "core.h"
#include "turns.h"
#include "events.h"

static void copy(char *dst, size_t cap, const char *src) {
  snprintf(dst, cap, "%s", src ? src : "");
}

void tg__taint_fill(tg_taint *t, int level, const char *reason,
                    const char *call_id, const char *tool, int64_t ts_ms) {
  memset(t, 0, sizeof *t);
  t->level = level;
  copy(t->reason, sizeof t->reason, reason);
  copy(t->call_id, sizeof t->call_id, call_id);
  copy(t->tool, sizeof t->tool, tool);
  t->ts_ms = ts_ms;
}

/* A session_tainted event: the session, its new level, why, and the call
 * that caused it (the event's call_id). */
static void tell(tg_core *core, const char *session, const tg_taint *t) {
  cJSON *d = tg__event_data(core, NULL);
  if (d) {
    cJSON_AddStringToObject(d, "session", session);
    cJSON_AddNumberToObject(d, "level", t->level);
    cJSON_AddStringToObject(d, "reason", t->reason);
    if (*t->tool) cJSON_AddStringToObject(d, "tool", t->tool);
  }
  tg__emit(core, NULL, "session_tainted", *t->call_id ? t->call_id : NULL, d);
}

/* What a raise would do, for the dry run's or the test's report. */
static void seen(tg_core *core, const char *session, const tg_taint *t) {
  cJSON *o = core->taint_seen ? cJSON_CreateObject() : NULL;
  if (!o) return;
  cJSON_AddStringToObject(o, "session", session);
  cJSON_AddNumberToObject(o, "level", t->level);
  cJSON_AddStringToObject(o, "reason", t->reason);
  if (*t->call_id) cJSON_AddStringToObject(o, "call", t->call_id);
  if (*t->tool) cJSON_AddStringToObject(o, "tool", t->tool);
  cJSON_AddItemToArray(core->taint_seen, o);
}

int tg__taint_raise(tg_core *core, const char *session, const tg_taint *t,
                    char err[TG_ERRMSG]) {
  if (!session || !*session || t->level < 1 || t->level > TG_TAINT_LEVEL_MAX) {
    snprintf(err, TG_ERRMSG, "a taint needs a session and a level from 1 "
             "to %d", TG_TAINT_LEVEL_MAX);
    return -EINVAL;
  }
  seen(core, session, t);
  if (core->taint_dry) return 0; /* explain: said, not done */
  if (core->sink.taint_raise && !core->taint_memory) {
    /* already as high: no write (a read takes no lock; the write waits
     * for the store's writer) */
    tg_taint now;
    if (core->sink.taint_read &&
        core->sink.taint_read(core->sink.ud, session, &now, err) > 0 &&
        now.level >= t->level)
      return 0;
    int rc = core->sink.taint_raise(core->sink.ud, session, t, err);
    if (rc > 0) tell(core, session, t);
    return rc < 0 ? rc : 0;
  }
  tg_session_state *s = tg__session_state(core, session, 1);
  if (!s || (!s->taint && !(s->taint = calloc(1, sizeof *s->taint)))) {
    snprintf(err, TG_ERRMSG, "out of memory");
    return -ENOMEM;
  }
  if (t->level > s->taint->level) {
    *s->taint = *t;
    tell(core, session, t);
  }
  return 0;
}

int tg__taint_read(tg_core *core, const char *session, tg_taint *out,
                   char err[TG_ERRMSG]) {
  memset(out, 0, sizeof *out);
  if (!session || !*session) return 0;
  if (core->sink.taint_read && !core->taint_memory)
    return core->sink.taint_read(core->sink.ud, session, out, err);
  tg_session_state *s = tg__session_state(core, session, 0);
  if (!s || !s->taint || s->taint->level < 1) return 0;
  *out = *s->taint;
  return 1;
}

int tg__taint_seed(tg_core *core, const char *session, const tg_taint *t) {
  tg_session_state *s = tg__session_state(core, session, 1);
  if (!s || (!s->taint && !(s->taint = calloc(1, sizeof *s->taint))))
    return -ENOMEM;
  *s->taint = *t;
  return 0;
}

int tg__taint_forget(tg_core *core, const char *session) {
  tg_session_state *s = session ? tg__session_state(core, session, 0) : NULL;
  if (!s || !s->taint || s->taint->level < 1) return -ENOENT;
  free(s->taint);
  s->taint = NULL;
  return 0;
}
