/*
 * tool.h — what the host tool files share: a tool (htool), an attempt
 * (hrun) and its wakes. tools.c registers the tool and is its C side,
 * tool_run.c runs an attempt, tool_ctx.c is the ctx its run receives.
 *
 * rt:tool{name, run = function(args, ctx) ... end}: tools written in the
 * host's own Lua (a Neovim plugin's tool that uses
 * vim.api), served through the same chain as every tool — rules, hooks,
 * validation, approval, retry, timeout — on the public C tool API
 * (tg_tool_register, tg_exec_finish_*, tg_exec_progress, tg_exec_call).
 *
 * The host's code is trusted: it runs in the host's lua_State, with no
 * sandbox, time limit or memory cap. Each attempt runs `run` in a new
 * coroutine of the host state, resumed from the loop, so a tool that
 * waits (ctx.sleep, ctx.call, ctx.exec, a bare coroutine.yield) gives the
 * loop back and other calls go on. ctx mirrors a policy Lua tool's
 * (src/exec/luatool.c): the same names, returns and errors.
 *
 * Unlike a policy's tool, a host tool sees its cancel or timeout: the
 * coroutine is resumed once more — a ctx.sleep returns false early, a
 * ctx.call returns the nested call's (cancelled) outcome, ctx.cancelled()
 * is true — so it can put its editor state back. From then on ctx.sleep
 * returns false at once and ctx.call / ctx.exec return nil, message; the
 * attempt ends when run returns or yields again (the coroutine is then
 * dropped, never resumed).
 *
 * Ownership:
 *   - a tool (htool) is a plain userdata in the runtime's state table
 *     `host_tools` (name -> {htool, run}): the C side calls it until
 *     tg_runtime_free returns, and the state outlives that;
 *   - an attempt (hrun) is malloc'd at start and freed once it has ended,
 *     its timer (made only if it waits) has closed and no nested call of it
 *     runs; its coroutine and ctx box are anchored in the state table
 *     `host_runs` until it ends;
 *   - ctx reaches its attempt through that box, emptied when the attempt
 *     ends: a ctx kept past the end raises instead of touching freed
 *     memory;
 *   - Lua work the loop's callbacks do runs in a protected call on the
 *     host thread (tg__lm_thread); the attempt is finished after it, never
 *     from inside it, so a raise can neither finish twice nor never.
 */
#ifndef TG_LUA_MODULE_TOOL_H
#define TG_LUA_MODULE_TOOL_H

#include <uv.h>
#include "lua_module.h"

#define TOOLS_FIELD "host_tools" /* name -> {htool userdata, run} */
#define RUNS_FIELD "host_runs"   /* lightuserdata hrun -> {co, box} */

typedef struct hrun hrun;

typedef struct {
  lrt *r;
  hrun *runs;        /* its running attempts: cancel is given the tg_exec */
  char name[];
} htool;

/* An attempt's state, one bit each. */
enum {
  RUN_WAITING = 1 << 0,   /* the timer will wake it (wait_kind says why) */
  RUN_NESTED = 1 << 1,    /* a ctx.call runs: its done callback will come */
  RUN_CANCELLED = 1 << 2, /* cancel or timeout asked */
  RUN_RESUMED = 1 << 3,   /* its coroutine runs now */
  RUN_ENDED = 1 << 4,     /* it has its outcome; the tg_exec is let go */
  RUN_CLOSED = 1 << 5,    /* the timer is closed (or was never made) */
  RUN_AS_EXEC = 1 << 6,   /* the nested call is ctx.exec's */
  RUN_TIMER = 1 << 7      /* the timer was made: it must be closed */
};

enum { WAIT_SLEEP = 1, WAIT_YIELD, WAIT_CALL };

/* What an attempt ended with, set by the resume that ended it. */
enum { OUT_NONE = 0, OUT_OK, OUT_ERROR };

struct hrun {
  hrun *next;
  htool *t;
  tg_exec *ex;          /* NULL once ended */
  lua_State *co;
  hrun **box;           /* ctx's box */
  uv_timer_t timer;     /* ctx.sleep, a bare yield, starting a ctx.call;
                           made on first use: most tools never wait */
  unsigned flags;       /* RUN_* */
  int wait_kind;        /* WAIT_*, while RUN_WAITING */
  double cur, total;    /* the last progress reported */
  cJSON *partial;       /* ctx.partial's value */
  char *call_tool;      /* a ctx.call waiting for the loop to start it */
  cJSON *call_args;
  char *call_id;        /* the ctx.call running (RUN_NESTED) */
  int calls;            /* ctx.calls made, for their ids */
  int outcome;          /* OUT_* */
  cJSON *result;
  char *code, *message; /* OUT_ERROR */
  int retryable;
};

/* What a resume pushes for the coroutine to receive. */
enum { WAKE_START = 1, WAKE_TRUE, WAKE_FALSE, WAKE_NONE, WAKE_OUTCOME,
       WAKE_FAILED };

typedef struct {
  hrun *h;
  int kind;             /* WAKE_* */
  const cJSON *args;    /* WAKE_START */
  const tg_outcome *o;  /* WAKE_OUTCOME */
  const char *message;  /* WAKE_FAILED: nil, message */
} run_wake;

/* tool_run.c: one attempt. */
char *tg__lm_dup_str(const char *s);
void tg__lm_run_set_error(hrun *h, const char *code, const char *message,
                          int retryable);
/* Hands the outcome to the chain and lets go of everything else. */
void tg__lm_run_end(hrun *h);
/* Resumes the attempt's coroutine with what w says (or kind), then ends
 * the attempt if that gave it an outcome. */
void tg__lm_run_resume_with(hrun *h, run_wake *w);
void tg__lm_run_resume(hrun *h, int kind);
/* The attempt waits (WAIT_*) for its timer, ms from now. */
void tg__lm_run_arm(hrun *h, int kind, uint64_t ms);

/* tool_ctx.c: pushes ctx; the box (its functions' upvalue) at box_idx. */
void tg__lm_push_ctx(lua_State *L, hrun *h, int box_idx);

#endif
