/*
 * host_taint.c — a session's taint from the program that embeds the
 * runtime (front_api.h: tg_runtime_taint, _taint_of, _untaint), for the
 * Lua module's rt:taint, rt:session_taint and rt:untaint. The same store
 * as the policies' tg.taint (core/taint.h): the database, or memory.
 * And a taint read from a database copied into a runtime without one
 * (tg__runtime_taint_seed), for explain --event.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "runtime.h"
#include "runtime/front_api.h"
#include "core/taint.h"
#include "store/store_api.h"
#include "base/util.h"

/* The cause a host's taint records: no call, the host as its tool. */
#define HOST_CAUSE "host"

int tg_runtime_taint(tg_runtime *rt, const char *session, int level,
                     const char *reason, char err[TG_ERRMSG]) {
  if (!reason || !*reason || strlen(reason) >= TG_TAINT_REASON_MAX) {
    snprintf(err, TG_ERRMSG, "a taint needs a reason (1 to %d bytes)",
             TG_TAINT_REASON_MAX - 1);
    return -EINVAL;
  }
  if (session && strlen(session) >= TG_SESSION_ID_MAX) {
    snprintf(err, TG_ERRMSG, "the session id is longer than %d bytes",
             TG_SESSION_ID_MAX - 1);
    return -EINVAL;
  }
  tg_taint t;
  tg__taint_fill(&t, level, reason, NULL, HOST_CAUSE, (int64_t)tg__wall_ms());
  return tg__taint_raise(&rt->core, session, &t, err);
}

int tg_runtime_taint_of(tg_runtime *rt, const char *session, tg_taint *out,
                        char err[TG_ERRMSG]) {
  if (!session || !*session || strlen(session) >= TG_SESSION_ID_MAX) {
    snprintf(err, TG_ERRMSG, "a session id is 1 to %d bytes",
             TG_SESSION_ID_MAX - 1);
    return -EINVAL;
  }
  return tg__taint_read(&rt->core, session, out, err);
}

int tg_runtime_untaint(tg_runtime *rt, const char *session,
                       char err[TG_ERRMSG]) {
  if (!session || !*session || strlen(session) >= TG_SESSION_ID_MAX) {
    snprintf(err, TG_ERRMSG, "a session id is 1 to %d bytes",
             TG_SESSION_ID_MAX - 1);
    return -EINVAL;
  }
  if (rt->store) return tg_store_taint_clear(rt->store, session, err);
  int rc = tg__taint_forget(&rt->core, session);
  if (rc == -ENOENT) snprintf(err, TG_ERRMSG, "session %s is not tainted", session);
  return rc;
}

int tg__runtime_taint_seed(tg_runtime *rt, const char *session,
                           const tg_taint *t, char err[TG_ERRMSG]) {
  if (rt->store) {
    snprintf(err, TG_ERRMSG, "this runtime keeps its taints in its database");
    return -EINVAL;
  }
  if (!session || !*session || strlen(session) >= TG_SESSION_ID_MAX ||
      t->level < 1 || t->level > TG_TAINT_LEVEL_MAX) {
    snprintf(err, TG_ERRMSG, "a taint needs a session id of 1 to %d bytes "
             "and a level from 1 to %d", TG_SESSION_ID_MAX - 1,
             TG_TAINT_LEVEL_MAX);
    return -EINVAL;
  }
  if (tg__taint_seed(&rt->core, session, t) < 0) {
    snprintf(err, TG_ERRMSG, "out of memory");
    return -ENOMEM;
  }
  return 0;
}

const char *tg__runtime_session(const tg_runtime *rt) {
  return rt->core.cfg.session;
}
