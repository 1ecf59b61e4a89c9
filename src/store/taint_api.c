/*
 * taint_api.c — a session's taint in the store (store.h): the session id
 * checked like every session id and the reason masked like every text
 * that is kept, before the backend is called.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include "store.h"
#include "core/redact.h"

int tg__store_taint_raise(tg_store *st, const char *id, const tg_taint *t,
                          char err[TG_ERRMSG]) {
  if (tg__session_id_check(id, err) < 0) return -EINVAL;
  if (t->level < 1 || t->level > TG_TAINT_LEVEL_MAX) {
    snprintf(err, TG_ERRMSG, "a taint's level is from 1 to %d",
             TG_TAINT_LEVEL_MAX);
    return -EINVAL;
  }
  tg_taint c = *t;
  tg_redactor *r = tg__store_redactor(st);
  char *masked = r ? tg__redact_str(r, t->reason) : tg__redact_builtin(t->reason);
  if (masked) {
    snprintf(c.reason, sizeof c.reason, "%s", masked);
    free(masked);
  }
  return st->be->taint_raise(st, id, &c, err);
}

int tg__store_taint_read(tg_store *st, const char *id, tg_taint *out,
                         char err[TG_ERRMSG]) {
  if (tg__session_id_check(id, err) < 0) return -EINVAL;
  return st->be->taint_read(st, id, out, err);
}

cJSON *tg_store_taint(tg_store *st, const char *session, char err[TG_ERRMSG]) {
  tg_taint t;
  int rc = tg__store_taint_read(st, session, &t, err);
  if (rc < 0) return NULL;
  if (rc == 0) return cJSON_CreateNull();
  cJSON *o = cJSON_CreateObject();
  if (o && (!cJSON_AddStringToObject(o, "session", session) ||
            !cJSON_AddNumberToObject(o, "level", t.level) ||
            !cJSON_AddStringToObject(o, "reason", t.reason) ||
            !(*t.call_id ? cJSON_AddStringToObject(o, "call", t.call_id)
                         : cJSON_AddNullToObject(o, "call")) ||
            !(*t.tool ? cJSON_AddStringToObject(o, "tool", t.tool)
                      : cJSON_AddNullToObject(o, "tool")) ||
            !cJSON_AddNumberToObject(o, "at", (double)t.ts_ms))) {
    cJSON_Delete(o);
    o = NULL;
  }
  if (!o) snprintf(err, TG_ERRMSG, "out of memory");
  return o;
}

int tg_store_taint_clear(tg_store *st, const char *session,
                         char err[TG_ERRMSG]) {
  if (tg__session_id_check(session, err) < 0) return -EINVAL;
  return st->be->taint_clear(st, session, err);
}
