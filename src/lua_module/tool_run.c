/*
 * tool_run.c — one attempt of a host tool: run resumed in its coroutine
 * from the loop, what it gave back (results, `nil, err`, a raise, a
 * yield) read into an outcome, the nested calls ctx.call / ctx.exec start
 * from the loop, and the attempt's end (tool.h says who owns what).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tool.h"
#include "lua/luacall.h"
#include "lua/luajson.h"
#include "lua/luaoutcome.h"
#include "lua/luaraw.h"
#include "lua/luaarg.h" /* after lauxlib: argument errors name the method */

char *tg__lm_dup_str(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

/* ---- the attempt's end ---------------------------------------------------- */

void tg__lm_run_set_error(hrun *h, const char *code, const char *message,
                      int retryable) {
  free(h->code);
  free(h->message);
  cJSON_Delete(h->result);
  h->result = NULL;
  h->code = tg__lm_dup_str(code); /* NULL when out of memory: TOOL_ERROR then */
  h->message = tg__lm_dup_str(message);
  h->retryable = retryable;
  h->outcome = OUT_ERROR;
}

static void set_errorf(hrun *h, tg_error_code code, int retryable,
                       const char *fmt, const char *a, const char *b) {
  char m[2 * TG_ERRMSG]; /* the tool's error text and our words around it */
  snprintf(m, sizeof m, fmt, a, b);
  tg__lm_run_set_error(h, tg_error_code_name(code), m, retryable);
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
void tg__lm_run_end(hrun *h) {
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
  if (!(h->flags & RUN_ENDED) && h->outcome != OUT_NONE) tg__lm_run_end(h);
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
  tg__lm_run_set_error(h, code ? code : tg_error_code_name(TG_E_TOOL_ERROR),
                       msg, retry);
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

/* The coroutine yielded (its values already popped). */
static void take_yield(hrun *h) {
  if (h->flags & RUN_CANCELLED) { /* it had its chance to see the cancel */
    tg__lm_run_set_error(h, tg_error_code_name(TG_E_CANCELLED), "cancelled", 0);
    return;
  }
  if (!(h->flags & RUN_WAITING))
    tg__lm_run_arm(h, WAIT_YIELD, 0); /* a bare yield */
}

/* Moves what the resume ended with from the coroutine to L and reads it. */
static void take_step(hrun *h, lua_State *L, int st, int nres) {
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

static void timer_cb(uv_timer_t *tm);

/* The attempt waits for its timer (made on first use). */

void tg__lm_run_arm(hrun *h, int kind, uint64_t ms) {
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
  tg__lm_push_ctx(L, h, box_idx);                    /* box, run, args, ctx */
  lua_remove(L, box_idx);
  return 2;
}

/* Pushes what the coroutine receives; returns how many values. */
static int push_wake(lua_State *L, run_wake *w) {
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
  run_wake *w = lua_touserdata(L, 1);
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
  take_step(h, L, st, nres);
  return 0;
}

/* Runs body(arg) in a protected call on L; -1 with the error in err. */
static int pcall_body(lua_State *L, lua_CFunction body, void *arg, char *err,
                      size_t n) {
  if (!lua_checkstack(L, 4)) {
    snprintf(err, n, "out of stack space");
    return -1;
  }
  return tg__lua_protect(L, body, arg, err, n, "out of memory");
}

/* Resumes the attempt's coroutine with what w says, on the host thread
 * inside toolgate now, then ends the attempt if that gave it an
 * outcome. */
void tg__lm_run_resume_with(hrun *h, run_wake *w) {
  lua_State *L = tg__lm_thread(h->t->r);
  char err[TG_ERRMSG];
  if (!L) { /* the loop turned outside the host's call: cannot be */
    tg__lm_run_set_error(
        h, tg_error_code_name(TG_E_TOOL_ERROR),
        "the host is not "
        "inside toolgate: a host tool runs only while the host turns "
        "the loop (rt:run, rt:run_once, handle:wait, ...)",
        0);
  } else if (pcall_body(L, resume_body, w, err, sizeof err) < 0) {
    h->flags &= ~RUN_RESUMED;
    set_errorf(h, TG_E_TOOL_ERROR, 0, "host tool '%s': %s", h->t->name, err);
  }
  settle(h);
}

void tg__lm_run_resume(hrun *h, int kind) {
  run_wake w = {h, kind, NULL, NULL, NULL};
  tg__lm_run_resume_with(h, &w);
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
  run_wake w = {h, WAKE_OUTCOME, NULL, o, NULL};
  tg__lm_run_resume_with(h, &w);
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
  run_wake w = {h, WAKE_FAILED, NULL, NULL, m};
  tg__lm_run_resume_with(h, &w);
}

static void timer_cb(uv_timer_t *tm) {
  hrun *h = tm->data;
  if (h->flags & RUN_ENDED || !(h->flags & RUN_WAITING)) return;
  h->flags &= ~RUN_WAITING;
  if (h->wait_kind == WAIT_CALL) start_nested(h);
  else tg__lm_run_resume(h, h->wait_kind == WAIT_SLEEP ? WAKE_TRUE : WAKE_NONE);
}
