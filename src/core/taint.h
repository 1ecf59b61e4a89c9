/*
 * taint.h — a session's taint: once a call of the session read something
 * secret (a policy said so with tg.taint, or a redaction rule matched in a
 * tool's input or result), the session is *sensitive* and the policies
 * may refuse it what could carry the secret away (the network). The
 * level, why, and the call that caused it are kept with the session: in
 * the store through the sink (core/sink.h: taint_raise, taint_read), so
 * that a resident instance, an in-process hook answer and a restart see
 * one taint; in this runtime's memory when storage is off. A taint only
 * rises: a lower or equal level leaves the first cause in place; only a
 * person clears it (toolgate approvals clear-taint).
 */
#ifndef TG_TAINT_H
#define TG_TAINT_H

#include <stdint.h>
#include "toolgate.h"

struct tg_core;

#define TG_TAINT_LEVEL_MAX 100
#define TG_TAINT_REASON_MAX 512
#define TG_TAINT_NAME_MAX 256
#define TG_TAINT_SESSION_MAX 128 /* bytes of a session id a policy or host names */

typedef struct tg_taint {
  int level;                           /* 0: clean; 1..TG_TAINT_LEVEL_MAX */
  char reason[TG_TAINT_REASON_MAX];    /* why, as the policy said it */
  char call_id[TG_TAINT_NAME_MAX];     /* the call that caused it, or "" */
  char tool[TG_TAINT_NAME_MAX];        /* that call's tool, or "" */
  int64_t ts_ms;                       /* when (wall clock) */
} tg_taint;

/* Fills t (strings cut to their buffers; NULL: ""). */
void tg__taint_fill(tg_taint *t, int level, const char *reason,
                    const char *call_id, const char *tool, int64_t ts_ms);

/* Raises session's taint to t (kept when t->level is not above the level
 * it has). 0, or a negative errno with err. While a dry run or a policy
 * test runs (core.h: taint_seen, taint_dry, taint_memory), the raise is
 * also listed, and kept nowhere (explain) or in memory only (test): they
 * judge calls that never ran, and must not mark the user's sessions. */
int tg__taint_raise(struct tg_core *core, const char *session,
                    const tg_taint *t, char err[TG_ERRMSG]);
/* The session's taint into out: 1 tainted, 0 clean, a negative errno with
 * err (the caller treats a failure as tainted: fail closed). */
int tg__taint_read(struct tg_core *core, const char *session, tg_taint *out,
                   char err[TG_ERRMSG]);

/* Puts t as the session's taint in this runtime's memory, as it is (its
 * cause, its time), telling nobody: a taint kept elsewhere, copied into a
 * runtime without storage so that its policies see it (explain --event
 * reads the database's). 0, or -ENOMEM. */
int tg__taint_seed(struct tg_core *core, const char *session,
                   const tg_taint *t);

/* Clears the session's taint kept in this runtime's memory (storage
 * off): 0, -ENOENT when it has none. With storage on, the store clears
 * it (store_api.h: tg_store_taint_clear). */
int tg__taint_forget(struct tg_core *core, const char *session);

#endif
