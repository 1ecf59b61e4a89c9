/*
 * lmodule_tool.c — rt:tool{name, run = function(args, ctx) ... end}: tools
 * written in the host's own Lua (a Neovim plugin's tool that uses
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
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lua/luacompat.h"
#include "lua/luajson.h"
#include "lua/luaoutcome.h"
#include "lua/luaraw.h"
#include "lua/luaarg.h" /* after lauxlib: argument errors name the function */
#include <uv.h>
#include <cjson/cJSON.h>
#include "toolgate.h"
#include "lmodule.h"

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
} wake;

static char *dup_str(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

/* ---- the attempt's end ---------------------------------------------------- */

static void set_error(hrun *h, const char *code, const char *message,
                      int retryable) {
  free(h->code);
  free(h->message);
  cJSON_Delete(h->result);
  h->result = NULL;
  h->code = dup_str(code); /* NULL when out of memory: TOOL_ERROR then */
  h->message = dup_str(message);
  h->retryable = retryable;
  h->outcome = OUT_ERROR;
}

static void set_errorf(hrun *h, tg_error_code code, int retryable,
                       const char *fmt, const char *a, const char *b) {
  char m[2 * TG_ERRMSG]; /* the tool's error text and our words around it */
  snprintf(m, sizeof m, fmt, a, b);
  set_error(h, tg_error_code_name(code), m, retryable);
}

static void maybe_free(hrun *h) {
  if (!(h->flags & RUN_CLOSED) || (h->flags & RUN_NESTED)) return;
  cJSON_Delete(h->partial);
  cJSON_Delete(h->result);
  cJSON_Delete(h->call_args);
  free(h->call_tool);
  free(h->call_id);
  free(h->code);
  free(h->message);
  free(h);
}

static void timer_closed(uv_handle_t *hd) {
  hrun *h = hd->data;
  h->flags |= RUN_CLOSED;
  maybe_free(h);
}

static void unlink_run(hrun *h) {
  for (hrun **p = &h->t->runs; *p; p = &(*p)->next)
    if (*p == h) {
      *p = h->next;
      return;
    }
}

/* Lets go of the coroutine and the ctx. L may be NULL (the runtime is
 * closing): the anchors then go with the state table. Raises nothing: the
 * anchor's slot exists, and setting it to nil allocates nothing. */
static void drop_anchors(hrun *h, lua_State *L) {
  int anchored = h->co != NULL; /* the runs table exists then */
  if (h->box) *h->box = NULL;
  h->box = NULL;
  h->co = NULL;
  if (!L || !anchored) return;
  tg__lm_push_state(L, h->t->r, RUNS_FIELD);
  lua_pushlightuserdata(L, h);
  lua_pushnil(L);
  lua_rawset(L, -3);
  lua_pop(L, 1);
}

static void finish(hrun *h, tg_exec *ex) {
  if (h->outcome == OUT_OK) {
    cJSON *r = h->result;
    h->result = NULL;
    tg_exec_finish_ok(ex, r);
    return;
  }
  cJSON *partial = h->partial;
  h->partial = NULL;
  tg_exec_finish_error(ex, partial, h->code, h->message ? h->message
                       : "the host tool failed (out of memory)", h->retryable);
}

/* Hands the outcome to the chain and lets go of everything else; h is
 * freed now or once its timer has closed and its nested call ended. */
static void end_run(hrun *h) {
  tg_exec *ex = h->ex;
  h->flags |= RUN_ENDED;
  h->flags &= ~RUN_WAITING;
  h->ex = NULL;
  unlink_run(h);
  drop_anchors(h, tg__lm_thread(h->t->r));
  if (h->flags & RUN_NESTED) tg_exec_call_cancel(ex, h->call_id);
  finish(h, ex);
  if (h->flags & RUN_TIMER) {
    uv_timer_stop(&h->timer);
    uv_close((uv_handle_t *)&h->timer, timer_closed);
    return;
  }
  h->flags |= RUN_CLOSED;
  maybe_free(h);
}

/* After a resume (or a failure to resume): ends the attempt if the
 * resume gave it an outcome. */
static void settle(hrun *h) {
  if (!(h->flags & RUN_ENDED) && h->outcome != OUT_NONE) end_run(h);
}

/* ---- what run gave back ----------------------------------------------------- */

/* `nil, err` returned by run: err is a string or {code, message,
 * retryable} (read raw), as for a policy's Lua tool. */
static void take_returned_error(hrun *h, lua_State *L, int idx) {
  const char *code = NULL, *msg = NULL;
  int retry = 1;
  if (lua_type(L, idx) == LUA_TTABLE) {
    code = tg__rawgetstring(L, idx, "code");
    msg = tg__rawgetstring(L, idx, "message");
    if (tg__rawgetfield(L, idx, "retryable") != LUA_TNIL)
      retry = lua_toboolean(L, -1);
    lua_pop(L, 1);
  } else if (lua_type(L, idx) == LUA_TSTRING) {
    msg = lua_tostring(L, idx);
  }
  char m[TG_ERRMSG];
  if (!msg) { /* say which tool, since the tool did not */
    snprintf(m, sizeof m, "host tool '%s' failed without a message",
             h->t->name);
    msg = m;
  }
  set_error(h, code ? code : tg_error_code_name(TG_E_TOOL_ERROR), msg, retry);
}

/* run returned the values at base..top of L. */
static void take_results(hrun *h, lua_State *L, int base, int nres) {
  if (nres >= 2 && lua_isnil(L, base)) {
    take_returned_error(h, L, base + 1);
    return;
  }
  if (nres == 0) lua_pushnil(L); /* returned nothing: the result is null */
  char why[TG_ERRMSG / 2];
  cJSON *j = tg__json_from_lua(L, base, why, sizeof why);
  if (!j) {
    set_errorf(h, TG_E_BAD_RESULT, 0, "host tool '%s' returned a value that "
               "is not JSON: %s", h->t->name, why);
    return;
  }
  cJSON_Delete(h->result);
  h->result = j;
  h->outcome = OUT_OK;
}

static void take_raise(hrun *h, lua_State *L) {
  const char *e = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1)
                                                 : luaL_typename(L, -1);
  set_errorf(h, TG_E_TOOL_RAISED, 0, "host tool '%s' raised an error: %s",
             h->t->name, e);
}

static void arm(hrun *h, int kind, uint64_t ms);

/* The coroutine yielded (its values already popped). */
static void take_yield(hrun *h) {
  if (h->flags & RUN_CANCELLED) { /* it had its chance to see the cancel */
    set_error(h, tg_error_code_name(TG_E_CANCELLED), "cancelled", 0);
    return;
  }
  if (!(h->flags & RUN_WAITING)) arm(h, WAIT_YIELD, 0); /* a bare yield */
}

/* Moves what the resume ended with from the coroutine to L and reads it. */
static void take(hrun *h, lua_State *L, int st, int nres) {
  lua_State *co = h->co;
  if (st == LUA_YIELD) {
    lua_pop(co, nres);
    take_yield(h);
    return;
  }
  if (st != LUA_OK) nres = 1; /* the error value */
  if (!lua_checkstack(L, nres + LUA_MINSTACK))
    luaL_error(L, "host tool '%s' returned too many values", h->t->name);
  int base = lua_gettop(L) + 1;
  lua_xmove(co, L, nres);
  if (st == LUA_OK) {
    take_results(h, L, base, nres);
    return;
  }
#if TG_LUA54
  lua_resetthread(co); /* closes its pending to-be-closed variables */
#endif
  take_raise(h, L);
}

/* ---- ctx ---------------------------------------------------------------------- */

static hrun *ctx_run(lua_State *L, const char *fn) {
  hrun **box = lua_touserdata(L, lua_upvalueindex(1));
  if (!*box)
    luaL_error(L, "ctx.%s: this tool attempt has ended; ctx cannot be "
                  "used after run returns", fn);
  return *box;
}

/* Raises unless L is the attempt's own coroutine: only run itself may
 * wait (a nested coroutine's yield would come back to run, not to us). */
static void only_from_run(lua_State *L, hrun *h, const char *fn) {
  if (L != h->co)
    luaL_error(L, "ctx.%s: call it from the tool's run function itself, "
                  "not from a nested coroutine", fn);
}

static void timer_cb(uv_timer_t *tm);

static void arm(hrun *h, int kind, uint64_t ms) {
  uv_loop_t *loop = tg_runtime_loop(tg__lm_runtime(h->t->r));
  if (!(h->flags & RUN_TIMER)) {
    uv_timer_init(loop, &h->timer);
    h->timer.data = h;
    h->flags |= RUN_TIMER;
  }
  uv_update_time(loop); /* the tool may have computed for a while */
  h->wait_kind = kind;
  h->flags |= RUN_WAITING;
  uv_timer_start(&h->timer, timer_cb, ms, 0);
}

static int ctx_sleep(lua_State *L) {
  hrun *h = ctx_run(L, "sleep");
  lua_Number ms = luaL_checknumber(L, 1);
  if (!(ms >= 0 && ms <= 9e15)) /* NaN fails too */
    return luaL_argerror(L, 1, "milliseconds must be >= 0");
  only_from_run(L, h, "sleep");
  if (h->flags & RUN_CANCELLED) { /* stopping: no more waiting */
    lua_pushboolean(L, 0);
    return 1;
  }
  arm(h, WAIT_SLEEP, (uint64_t)ms);
  return lua_yield(L, 0);
}

static int ctx_progress(lua_State *L) {
  hrun *h = ctx_run(L, "progress");
  if (lua_type(L, 1) == LUA_TSTRING) { /* ctx.progress("message") */
    tg_exec_progress(h->ex, h->cur, h->total, lua_tostring(L, 1));
    return 0;
  }
  h->cur = luaL_checknumber(L, 1);
  h->total = luaL_optnumber(L, 2, -1);
  tg_exec_progress(h->ex, h->cur, h->total, luaL_optstring(L, 3, NULL));
  return 0;
}

static int ctx_cancelled(lua_State *L) {
  lua_pushboolean(L, (ctx_run(L, "cancelled")->flags & RUN_CANCELLED) != 0);
  return 1;
}

static int ctx_partial(lua_State *L) {
  hrun *h = ctx_run(L, "partial");
  char why[TG_ERRMSG / 2];
  cJSON *v = tg__json_from_lua(L, 1, why, sizeof why);
  if (!v) return luaL_error(L, "ctx.partial: the value is not JSON: %s", why);
  cJSON_Delete(h->partial);
  h->partial = v;
  return 0;
}

/* Takes args (owned) as the call ctx.call / ctx.exec will start from the
 * loop, and yields until it has ended. */
static int start_call(lua_State *L, hrun *h, const char *tool, cJSON *args,
                      int as_exec) {
  char *name = dup_str(tool);
  if (!name) {
    cJSON_Delete(args);
    return luaL_error(L, "ctx.call: out of memory");
  }
  h->call_tool = name;
  h->call_args = args;
  h->flags = as_exec ? h->flags | RUN_AS_EXEC : h->flags & ~RUN_AS_EXEC;
  arm(h, WAIT_CALL, 0);
  return lua_yield(L, 0);
}

/* nil, "ctx.<fn>: the tool is being cancelled" when it is: a tool that
 * stops starts nothing new. 0 when it is not. */
static int refuse_when_cancelled(lua_State *L, hrun *h, const char *fn) {
  if (!(h->flags & RUN_CANCELLED)) return 0;
  lua_pushnil(L);
  lua_pushfstring(L, "ctx.%s: the tool is being cancelled", fn);
  return 2;
}

/* ctx.call(tool, args?) -> outcome | nil, message */
static int ctx_call(lua_State *L) {
  hrun *h = ctx_run(L, "call");
  luaL_checkstring(L, 1);
  const char *tool = tg__checknonul(L, 1, "ctx.call", "the tool name");
  if (!lua_isnoneornil(L, 2)) luaL_checktype(L, 2, LUA_TTABLE);
  only_from_run(L, h, "call");
  int n = refuse_when_cancelled(L, h, "call");
  if (n) return n;
  char why[TG_ERRMSG / 2];
  cJSON *args = lua_isnoneornil(L, 2) ? cJSON_CreateObject()
                                      : tg__json_from_lua(L, 2, why, sizeof why);
  if (!args) return luaL_error(L, "ctx.call: the args are not JSON: %s", why);
  if (!cJSON_IsObject(args)) {
    cJSON_Delete(args);
    return luaL_error(L, "ctx.call: the args must be a table with keys");
  }
  return start_call(L, h, tool, args, 0);
}

/* ctx.exec(command | {command=, cwd=, env=, stdin=, timeout_ms=}) ->
 * exec's result | nil, message: a call of the `exec` tool through the
 * chain, judged like any other (the host has its own ways to run a
 * command it does not want judged). */
static int ctx_exec(lua_State *L) {
  hrun *h = ctx_run(L, "exec");
  int ty = lua_type(L, 1);
  if (ty != LUA_TSTRING && ty != LUA_TTABLE)
    return luaL_error(L, "ctx.exec: exec: expects a command string or an "
                         "options table (got %s)", luaL_typename(L, 1));
  only_from_run(L, h, "exec");
  int n = refuse_when_cancelled(L, h, "exec");
  if (n) return n;
  char why[TG_ERRMSG / 2];
  cJSON *args;
  if (ty == LUA_TSTRING) {
    const char *cmd = tg__checknonul(L, 1, "ctx.exec", "the command");
    args = cJSON_CreateObject();
    if (args && !cJSON_AddStringToObject(args, "command", cmd)) {
      cJSON_Delete(args);
      args = NULL;
    }
    snprintf(why, sizeof why, "out of memory");
  } else {
    args = tg__json_from_lua(L, 1, why, sizeof why);
    if (args && !cJSON_IsObject(args)) {
      cJSON_Delete(args);
      args = NULL;
      snprintf(why, sizeof why, "must be a table with keys");
    }
  }
  if (!args) return luaL_error(L, "ctx.exec: exec: the options: %s", why);
  return start_call(L, h, "exec", args, 1);
}

static const luaL_Reg ctx_fns[] = {{"sleep", ctx_sleep},
                                   {"progress", ctx_progress},
                                   {"cancelled", ctx_cancelled},
                                   {"partial", ctx_partial},
                                   {"call", ctx_call},
                                   {"exec", ctx_exec},
                                   {NULL, NULL}};

static void set_field_str(lua_State *L, const char *k, const char *v) {
  if (!v) return;
  lua_pushstring(L, v);
  lua_setfield(L, -2, k);
}

/* Pushes ctx = {call_id, tool, attempt, session, sleep, progress, ...};
 * the box (the upvalue of its functions) is at box_idx. */
static void push_ctx(lua_State *L, hrun *h, int box_idx) {
  lua_createtable(L, 0, 10);
  int ctx = lua_gettop(L);
  for (const luaL_Reg *f = ctx_fns; f->name; f++) {
    lua_pushvalue(L, box_idx);
    lua_pushcclosure(L, f->func, 1);
    tg__arg_name(L, -1, f->name);
    lua_setfield(L, ctx, f->name);
  }
  set_field_str(L, "call_id", tg_exec_call_id(h->ex));
  set_field_str(L, "tool", h->t->name);
  lua_pushinteger(L, tg_exec_attempt(h->ex));
  lua_setfield(L, ctx, "attempt");
  set_field_str(L, "session", tg_exec_session(h->ex));
}

/* ---- resuming ---------------------------------------------------------------- */

/* ctx.exec's answer: exec's result table when the command ran (whatever
 * its exit code), else nil and why it did not (as a policy's ctx.exec). */
static int push_exec_answer(lua_State *L, const tg_outcome *o) {
  if (o->status == TG_STATUS_OK && o->result && tg__json_push(L, o->result) == 0)
    return 1;
  lua_pushnil(L);
  lua_pushfstring(L, "ctx.exec: the command did not run (%s): %s",
                  tg_status_name(o->status),
                  o->error.message ? o->error.message : "no result");
  return 2;
}

/* A new coroutine for the attempt, anchored with its ctx box; pushes
 * run, args and ctx. Returns how many values follow run (2). */
static int push_start(lua_State *L, hrun *h, const cJSON *args) {
  tg__lm_push_state(L, h->t->r, RUNS_FIELD);
  lua_pushlightuserdata(L, h);
  lua_createtable(L, 2, 0);                   /* runs, key, anchor */
  h->co = lua_newthread(L);
  lua_rawseti(L, -2, 1);
  hrun **box = lua_newuserdatauv(L, sizeof *box, 0);
  *box = NULL;
  lua_pushvalue(L, -1);
  lua_rawseti(L, -3, 2);                      /* runs, key, anchor, box */
  lua_insert(L, -4);                          /* box, runs, key, anchor */
  lua_rawset(L, -3);
  lua_pop(L, 1);                              /* box */
  int box_idx = lua_gettop(L);
  *box = h;
  h->box = box;
  tg__lm_push_state(L, h->t->r, TOOLS_FIELD);
  lua_getfield(L, -1, h->t->name);
  if (!lua_istable(L, -1)) return luaL_error(L, "its run function is gone");
  lua_rawgeti(L, -1, 2);                      /* box, tools, entry, run */
  lua_replace(L, box_idx + 1);
  lua_pop(L, 1);                              /* box, run */
  if (tg__json_push(L, args) < 0)
    luaL_error(L, "the args are nested too deeply");
  push_ctx(L, h, box_idx);                    /* box, run, args, ctx */
  lua_remove(L, box_idx);
  return 2;
}

/* Pushes what the coroutine receives; returns how many values. */
static int push_wake(lua_State *L, wake *w) {
  switch (w->kind) {
  case WAKE_START: return 1 + push_start(L, w->h, w->args);
  case WAKE_TRUE: lua_pushboolean(L, 1); return 1;
  case WAKE_FALSE: lua_pushboolean(L, 0); return 1;
  case WAKE_OUTCOME:
    if (w->h->flags & RUN_AS_EXEC) return push_exec_answer(L, w->o);
    tg__push_outcome(L, w->o);
    return 1;
  case WAKE_FAILED:
    lua_pushnil(L);
    lua_pushstring(L, w->message);
    return 2;
  default: return 0;
  }
}

static int resume_body(lua_State *L) {
  wake *w = lua_touserdata(L, 1);
  hrun *h = w->h;
  int n = push_wake(L, w);
  lua_State *co = h->co;
  if (!lua_checkstack(co, n + LUA_MINSTACK))
    return luaL_error(L, "out of stack space");
  lua_xmove(L, co, n);
  int nres = 0;
  h->flags |= RUN_RESUMED;
  int st = tg__resume(co, L, w->kind == WAKE_START ? n - 1 : n, &nres);
  h->flags &= ~RUN_RESUMED;
  take(h, L, st, nres);
  return 0;
}

/* Runs body(arg) in a protected call on L; -1 with the error in err. */
static int pcall_body(lua_State *L, lua_CFunction body, void *arg, char *err,
                      size_t n) {
  int top = lua_gettop(L), rc;
  if (!lua_checkstack(L, 4)) {
    snprintf(err, n, "out of stack space");
    return -1;
  }
#if TG_LUA54
  lua_pushcfunction(L, body); /* a light C function: no allocation */
  lua_pushlightuserdata(L, arg);
  rc = lua_pcall(L, 1, 0, 0);
#else
  rc = lua_cpcall(L, body, arg);
#endif
  if (rc != LUA_OK)
    snprintf(err, n, "%s", lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1)
                                                          : "out of memory");
  lua_settop(L, top);
  return rc == LUA_OK ? 0 : -1;
}

/* Resumes the attempt's coroutine with what w says, on the host thread
 * inside toolgate now, then ends the attempt if that gave it an
 * outcome. */
static void resume_with(hrun *h, wake *w) {
  lua_State *L = tg__lm_thread(h->t->r);
  char err[TG_ERRMSG];
  if (!L) { /* the loop turned outside the host's call: cannot be */
    set_error(h, tg_error_code_name(TG_E_TOOL_ERROR), "the host is not "
              "inside toolgate: a host tool runs only while the host turns "
              "the loop (rt:run, rt:run_once, handle:wait, ...)", 0);
  } else if (pcall_body(L, resume_body, w, err, sizeof err) < 0) {
    h->flags &= ~RUN_RESUMED;
    set_errorf(h, TG_E_TOOL_ERROR, 0, "host tool '%s': %s", h->t->name, err);
  }
  settle(h);
}

static void resume(hrun *h, int kind) {
  wake w = {h, kind, NULL, NULL, NULL};
  resume_with(h, &w);
}

/* ---- nested calls (ctx.call, ctx.exec) --------------------------------------- */

static void nested_done(tg_runtime *rt, const tg_outcome *o, void *ud) {
  hrun *h = ud;
  h->flags &= ~RUN_NESTED;
  free(h->call_id);
  h->call_id = NULL;
  if (h->flags & RUN_ENDED) { /* nobody waits now */
    maybe_free(h);
    return;
  }
  wake w = {h, WAKE_OUTCOME, NULL, o, NULL};
  resume_with(h, &w);
}

/* From the loop, not from inside the coroutine: the nested call's own
 * tools (host tools among them) then never run while run is on the C
 * stack. */
static void start_nested(hrun *h) {
  char *tool = h->call_tool;
  cJSON *args = h->call_args;
  h->call_tool = NULL;
  h->call_args = NULL;
  const char *parent = tg_exec_call_id(h->ex);
  size_t n = strlen(parent) + 16;
  char err[TG_ERRMSG] = "out of memory";
  int rc = -ENOMEM;
  h->call_id = malloc(n);
  if (h->call_id) {
    snprintf(h->call_id, n, "%s.%d", parent, ++h->calls);
    h->flags |= RUN_NESTED;
    rc = tg_exec_call(h->ex, h->call_id, tool, args, nested_done, h, err);
  }
  free(tool);
  cJSON_Delete(args);
  if (rc == 0) return; /* nested_done resumes it, maybe already has */
  h->flags &= ~RUN_NESTED;
  free(h->call_id);
  h->call_id = NULL;
  char m[TG_ERRMSG + 16];
  snprintf(m, sizeof m, "ctx.%s: %s", h->flags & RUN_AS_EXEC ? "exec" : "call",
           err);
  wake w = {h, WAKE_FAILED, NULL, NULL, m};
  resume_with(h, &w);
}

static void timer_cb(uv_timer_t *tm) {
  hrun *h = tm->data;
  if (h->flags & RUN_ENDED || !(h->flags & RUN_WAITING)) return;
  h->flags &= ~RUN_WAITING;
  if (h->wait_kind == WAIT_CALL) start_nested(h);
  else resume(h, h->wait_kind == WAIT_SLEEP ? WAKE_TRUE : WAKE_NONE);
}

/* ---- the C tool's side ---------------------------------------------------------- */

static void tool_start(tg_exec *ex, const cJSON *args, void *ud) {
  htool *t = ud;
  hrun *h = calloc(1, sizeof *h);
  if (!h) {
    tg_exec_finish_error(ex, NULL, tg_error_code_name(TG_E_NOMEM),
                         "out of memory starting a host tool", 0);
    return;
  }
  h->t = t;
  h->ex = ex;
  h->cur = h->total = -1;
  h->next = t->runs;
  t->runs = h;
  wake w = {h, WAKE_START, args, NULL, NULL};
  resume_with(h, &w);
}

/* A timeout or a cancel: run gets to see it (see the top comment). */
static void tool_cancel(tg_exec *ex, void *ud) {
  htool *t = ud;
  hrun *h = t->runs;
  while (h && h->ex != ex) h = h->next;
  if (!h || (h->flags & (RUN_CANCELLED | RUN_ENDED))) return;
  h->flags |= RUN_CANCELLED;
  if (h->flags & RUN_RESUMED) return; /* it ends when run returns or yields */
  if (!tg__lm_thread(t->r)) { /* closing: no host code runs now */
    set_error(h, tg_error_code_name(TG_E_CANCELLED), "cancelled", 0);
    end_run(h);
    return;
  }
  if (h->flags & RUN_NESTED) { /* its (cancelled) outcome resumes run */
    tg_exec_call_cancel(ex, h->call_id);
    return;
  }
  if (!(h->flags & RUN_WAITING)) return; /* a resume under way ends it */
  uv_timer_stop(&h->timer);
  int kind = h->wait_kind;
  h->flags &= ~RUN_WAITING;
  if (kind == WAIT_CALL) { /* the call was not started: it will not be */
    free(h->call_tool);
    cJSON_Delete(h->call_args);
    h->call_tool = NULL;
    h->call_args = NULL;
    wake w = {h, WAKE_FAILED, NULL, NULL,
              h->flags & RUN_AS_EXEC ? "ctx.exec: the tool is being cancelled"
                                     : "ctx.call: the tool is being cancelled"};
    resume_with(h, &w);
    return;
  }
  resume(h, kind == WAIT_SLEEP ? WAKE_FALSE : WAKE_NONE);
}

/* ---- rt:tool{...} ---------------------------------------------------------------- */

static const char *const tool_opt_names[] = {
    "name", "description", "schema", "read_only", "timeout_ms",
    "max_result_bytes", "retry", "run", NULL};
static const char *const retry_opt_names[] = {
    "attempts", "initial_ms", "max_ms", "multiplier", "jitter", NULL};

/* A number option within lo..hi (whole when whole is set); dflt when
 * absent. */
static double opt_num(lua_State *L, int o, const char *k, double dflt,
                      double lo, double hi, int whole) {
  lua_getfield(L, o, k);
  double v = dflt;
  if (!lua_isnil(L, -1)) {
    int isnum = 0;
    v = (double)lua_tonumberx(L, -1, &isnum);
    if (!isnum || !(v >= lo && v <= hi) || (whole && v != floor(v))) {
      char range[64]; /* lua_pushfstring has no %g */
      snprintf(range, sizeof range, "from %g to %g", lo, hi);
      luaL_error(L, "rt:tool: '%s' must be a %s %s", k,
                 whole ? "whole number" : "number", range);
    }
  }
  lua_pop(L, 1);
  return v;
}

/* The string option k (NULL when absent); the copied options keep it. */
static const char *opt_str(lua_State *L, int o, const char *k) {
  lua_getfield(L, o, k);
  int ty = lua_type(L, -1);
  if (ty != LUA_TNIL && ty != LUA_TSTRING)
    luaL_error(L, "rt:tool: '%s' must be a string (got %s)", k,
               luaL_typename(L, -1));
  char what[64];
  snprintf(what, sizeof what, "'%s'", k);
  const char *s = ty == LUA_TSTRING ? tg__checknonul(L, -1, "rt:tool", what)
                                    : NULL;
  lua_pop(L, 1);
  return s;
}

static void opt_type(lua_State *L, int o, const char *k, int type,
                     const char *what) {
  lua_getfield(L, o, k);
  if (!lua_isnil(L, -1) && lua_type(L, -1) != type)
    luaL_error(L, "rt:tool: '%s' must be %s (got %s)", k, what,
               luaL_typename(L, -1));
  lua_pop(L, 1);
}

static void read_retry(lua_State *L, int o, tg_tool_def *def) {
  lua_getfield(L, o, "retry");
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    return;
  }
  if (!lua_istable(L, -1))
    luaL_error(L, "rt:tool: 'retry' must be a table {attempts=, initial_ms=, "
                  "max_ms=, multiplier=, jitter=}");
  int ro = tg__lm_copy_opts(L, -1, "rt:tool retry", retry_opt_names);
  def->retry_attempts = (int)opt_num(L, ro, "attempts", 1, 1, 100, 1);
  def->retry_initial_ms = (uint64_t)opt_num(L, ro, "initial_ms", 200, 0, 9e15, 1);
  def->retry_max_ms = (uint64_t)opt_num(L, ro, "max_ms", 10000, 0, 9e15, 1);
  def->retry_multiplier = opt_num(L, ro, "multiplier", 2, 1, 100, 0);
  def->retry_jitter = opt_num(L, ro, "jitter", 0, 0, 1, 0);
  lua_pop(L, 2);
}

/* Reads every option but the schema; raises on a wrong one. */
static void read_def(lua_State *L, int o, tg_tool_def *def) {
  def->name = opt_str(L, o, "name");
  if (!def->name || !*def->name)
    luaL_error(L, "rt:tool: 'name' must be a non-empty string");
  opt_type(L, o, "run", LUA_TFUNCTION, "a function");
  lua_getfield(L, o, "run");
  if (lua_isnil(L, -1))
    luaL_error(L, "rt:tool '%s': 'run' must be a function (got nil)",
               def->name);
  lua_pop(L, 1);
  def->description = opt_str(L, o, "description");
  opt_type(L, o, "read_only", LUA_TBOOLEAN, "a boolean");
  opt_type(L, o, "schema", LUA_TTABLE, "a table (a JSON Schema)");
  lua_getfield(L, o, "read_only");
  def->read_only = lua_toboolean(L, -1);
  lua_pop(L, 1);
  def->timeout_ms = (uint64_t)opt_num(L, o, "timeout_ms", 0, 0, 9e15, 1);
  def->max_result_bytes =
      (size_t)opt_num(L, o, "max_result_bytes", 0, 0, 9e15, 1);
  read_retry(L, o, def);
  def->start = tool_start;
  def->cancel = tool_cancel;
}

/* state.host_tools[name] = {htool, run}; returns the htool. */
static htool *anchor_tool(lua_State *L, lrt *r, int o, const char *name) {
  size_t n = strlen(name) + 1;
  tg__lm_push_state(L, r, TOOLS_FIELD);
  lua_createtable(L, 2, 0);
  htool *t = lua_newuserdatauv(L, sizeof *t + n, 0);
  memset(t, 0, sizeof *t);
  t->r = r;
  memcpy(t->name, name, n);
  lua_rawseti(L, -2, 1);
  lua_getfield(L, o, "run");
  lua_rawseti(L, -2, 2);
  lua_setfield(L, -2, name);
  lua_pop(L, 1);
  return t;
}

static void unanchor_tool(lua_State *L, lrt *r, const char *name) {
  tg__lm_push_state(L, r, TOOLS_FIELD);
  lua_pushnil(L);
  lua_setfield(L, -2, name);
  lua_pop(L, 1);
}

/* rt:tool{name, run, description?, schema?, read_only?, timeout_ms?,
 * max_result_bytes?, retry?} -> true | nil, message, code */
int tg__lm_tool(lua_State *L) {
  lrt *r = tg__lm_check_rt(L, 1);
  luaL_checktype(L, 2, LUA_TTABLE);
  int o = tg__lm_copy_opts(L, 2, "rt:tool", tool_opt_names);
  tg_tool_def def;
  memset(&def, 0, sizeof def);
  read_def(L, o, &def);
  tg_runtime *rt = tg__lm_runtime(r);
  char err[TG_ERRMSG];
  if (tg_tool_exists(rt, def.name)) {
    snprintf(err, sizeof err, "rt:tool: a tool named '%s' already exists "
             "(host tools live as long as the runtime)", def.name);
    return tg__lm_fail(L, err, "EEXIST");
  }
  def.ud = anchor_tool(L, r, o, def.name);
  lua_getfield(L, o, "schema");
  cJSON *schema = NULL;
  if (!lua_isnil(L, -1)) { /* last: from here nothing raises until freed */
    char why[TG_ERRMSG / 2];
    schema = tg__json_from_lua(L, -1, why, sizeof why);
    if (!schema || !cJSON_IsObject(schema)) {
      cJSON_Delete(schema);
      unanchor_tool(L, r, def.name);
      return luaL_error(L, "rt:tool '%s': the schema must be a JSON object%s%s",
                        def.name, schema ? "" : ": ", schema ? "" : why);
    }
  }
  def.schema = schema;
  int rc = tg_tool_register(rt, &def, err);
  cJSON_Delete(schema);
  if (rc == 0) {
    lua_pushboolean(L, 1);
    return 1;
  }
  unanchor_tool(L, r, def.name);
  if (rc == -EINVAL) return luaL_error(L, "rt:tool: %s", err);
  char code[32];
  return tg__lm_fail(L, err, uv_err_name_r(rc, code, sizeof code));
}
