/*
 * exec.h — one attempt of a tool. Its owner (the chain) makes it with
 * tg__exec_new, giving the callbacks through which the attempt reaches
 * back — libuv style: the attempt never calls its owner by name. The
 * attempt may outlive the owner's interest (a cancelled C tool that has
 * no cancel function): then the owner is cleared and the attempt frees
 * itself when the tool finishes.
 */
#ifndef TG_EXEC_H
#define TG_EXEC_H

#include "base/closer.h"
#include "core/core.h"
#include "core/error.h"
#include "base/util.h"
#include "lua/luaraw.h"
#include "policy/generation.h"

typedef struct tg_exec tg_exec;

/* What an attempt asks of its owner. */
typedef struct {
  /* The attempt ended (once): the owner takes its outcome. */
  void (*done)(tg_exec *ex);
  /* Starts call `id` of tool with args (borrowed), made by the attempt's
   * tool (ctx.call): one level deeper than the owner's call. Returns 0
   * (done will be called), or an error with a message in err. */
  int (*call)(tg_exec *ex, const char *id, const char *tool,
              const cJSON *args, tg_done_cb done, void *ud,
              char err[TG_ERRMSG]);
  /* Cancels call `id` (one the attempt started); may outlive the owner. */
  void (*cancel)(tg_exec *ex, const char *id);
} tg_exec_ops;

struct tg_exec {
  void *owner;                 /* the call; NULL once abandoned */
  const tg_exec_ops *ops;
  void *ops_ud;                /* the owner's side, outliving the owner */
  tg_core *core;
  tg_generation *gen;          /* ref held while the attempt runs */
  const tg_tool *tool;         /* not valid after release: see kind */
  tg_tool_kind kind;           /* the tool's, copied: a detached C tool may
                                  finish after the runtime freed its tools */
  const char *call_id;         /* the call's; copied if the attempt is detached */
  const char *session;         /* the call's (borrowed: read while owned) */
  const tg_listener *listen;   /* the call's own listener (idem) */
  char *own_call_id;
  int attempt;
  int finished;                /* the chain has the attempt's outcome */
  int tool_finished;           /* a C tool has called tg_exec_finish_* */
  int released;                /* execute.c is done with it */
  int cancelled;               /* cancel asked (timeout or cancel) */
  int timed_out;               /* ... because the deadline passed */
  double start_ms;
  uv_timer_t *timer;           /* lazily made: the deadline and the
                                  heartbeat, whichever is due first */
  uint64_t deadline_at, beat_at; /* due, on the loop's clock (ms) */
  double progress_current, progress_total; /* < 0: not reported */
  char *progress_message;
  int progress_output;         /* current is bytes of output and message
                                  the last line (exec, ctx.exec) */
  uint64_t timeout_ms;         /* set by a tool's start: overrides the
                                  tool's and runtime's (exec's timeout_ms) */
  struct tg_proc *proc;        /* the process it waits for (process.c) */
  tg_closer closer;            /* its timers (base/closer.h) */
  /* Lua tools */
  int co_ref;                  /* the coroutine, in gen->L's registry */
  lua_State *co;
  int box_ref;                 /* the ctx box, emptied on release */
  int waiting;                 /* a ctx.sleep timer will resume it */
  uv_timer_t *sleep_timer;
  struct tg_nested *nested;    /* a ctx.call in flight (luatool_call.c) */
  int nested_count;            /* ctx.calls made, for their ids */
  /* outcome of the attempt */
  cJSON *result;
  tg_err error;
};

/* A new attempt `attempt` of tool for call `call_id` (borrowed while the
 * owner holds it), owned by owner. NULL when out of memory. */
tg_exec *tg__exec_new(tg_core *core, tg_generation *gen, const tg_tool *tool,
                      const char *call_id, const char *session, int attempt,
                      const tg_listener *listen, void *owner,
                      const tg_exec_ops *ops, void *ops_ud);
/* Has the attempt ended (its outcome is ready)? */
int tg__exec_finished(const tg_exec *ex);
/* Starts the attempt. It may finish before this returns. */
void tg__exec_start(tg_exec *ex, const cJSON *args);
/* Asks the tool to stop (timeout/cancel). */
void tg__exec_cancel(tg_exec *ex);
/* Called by executors when the attempt ends (once). */
void tg__exec_done(tg_exec *ex);
/* Frees the attempt once its handles are closed. */
void tg__exec_release(tg_exec *ex);
/* Sets the attempt's error to TIMEOUT or CANCEL (whichever stopped it);
 * detail is appended to the message. */
void tg__exec_stop_error(tg_exec *ex, const char *detail);
/* Closes one of the attempt's lazily made timers (NULL: nothing); the
 * attempt is freed only after its close callback. */
void tg__exec_close_timer(tg_exec *ex, uv_timer_t **t);
/* Frees the attempt if it is released and nothing refers to it. */
void tg__exec_maybe_free(tg_exec *ex);
/* Output callback of a process an attempt runs (the exec tool, ctx.exec):
 * the bytes so far and the last line become the attempt's progress. ud
 * is the tg_exec. */
void tg__exec_output_progress(struct tg_proc *p, void *ud);

/* tg_exec_finish_error with one of the runtime's codes: how the built-in
 * tools fail. */
void tg__exec_fail(tg_exec *ex, cJSON *partial_result, tg_error_code code,
                   const char *message, int retryable);

/* Lua tool executor (luatool.c). */
void tg__luatool_start(tg_exec *ex, const cJSON *args);
void tg__luatool_cancel(tg_exec *ex);
void tg__luatool_release(tg_exec *ex);    /* drops the coroutine */
/* For ctx functions that wait (luatool_call.c): the attempt behind ctx
 * (raises if it ended), arming the wait timer with a callback, resuming
 * the coroutine with nargs values pushed on it. */
tg_exec *tg__luatool_ctx(lua_State *L, const char *fn);
void tg__luatool_wait(tg_exec *ex, uint64_t ms, uv_timer_cb cb);
void tg__luatool_resume(tg_exec *ex, int nargs);
/* ctx.call (luatool_call.c) and what cancel/release must do about it. */
int tg__ctx_call(lua_State *L);
/* Starts a nested call of tool with args (owned) and yields; as_exec:
 * answer as ctx.exec does (the result, or nil, message). */
int tg__ctx_call_tool(lua_State *L, tg_exec *ex, const char *tool,
                      cJSON *args, int as_exec);
void tg__nested_abandon(tg_exec *ex);
/* ctx.exec (luatool_exec.c): stops and lets go of its process. */
int tg__ctx_exec(lua_State *L);
void tg__ctx_exec_abandon(tg_exec *ex);

#endif
