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

int tg__store_taint_clear(tg_store *st, const char *id, char err[TG_ERRMSG]) {
  if (tg__session_id_check(id, err) < 0) return -EINVAL;
  return st->be->taint_clear(st, id, err);
}
