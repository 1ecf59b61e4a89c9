/*
 * exec.h — one attempt of a tool. The chain starts it and is told when it
 * finishes through tg__exec_done; the attempt may outlive the chain's
 * interest (a cancelled C tool that has no cancel function): then the call
 * pointer is cleared and the attempt frees itself when the tool finishes.
 */
#ifndef TG_EXEC_H
#define TG_EXEC_H

#include "../chain/call.h"

struct tg_exec {
  tg_call *call;               /* NULL once abandoned */
  tg_runtime *rt;
  tg_generation *gen;          /* ref held while the attempt runs */
  const tg_tool *tool;         /* not valid after release: see kind */
  tg_tool_kind kind;           /* the tool's, copied: a detached C tool may
                                  finish after the runtime freed its tools */
  const char *call_id;         /* the call's; copied if the attempt is detached */
  char *own_call_id;
  int attempt;
  int finished;                /* the chain has the attempt's outcome */
  int tool_finished;           /* a C tool has called tg_exec_finish_* */
  int released;                /* execute.c is done with it */
  int cancelled;               /* cancel asked (timeout or cancel) */
  int timed_out;               /* ... because the deadline passed */
  double start_ms;
  uv_timer_t *timeout_timer;   /* lazily made */
  uv_timer_t *progress_timer;
  double progress_current, progress_total; /* < 0: not reported */
  char *progress_message;
  int progress_output;         /* current is bytes of output and message
                                  the last line (exec, ctx.exec) */
  uint64_t timeout_ms;         /* set by a tool's start: overrides the
                                  tool's and runtime's (exec's timeout_ms) */
  struct tg_proc *proc;        /* the process it waits for (process.c) */
  int pending_closes;
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
