/*
 * luatool.c — tools written in Lua (tg.tool{ run = function(args, ctx) }).
 *
 * Each attempt runs `run` in a new coroutine of the generation's state, so
 * a tool that waits (ctx.sleep, or a bare coroutine.yield) gives the loop
 * back and other calls go on. Stopping a Lua tool (timeout, cancel) is
 * real: its coroutine is never resumed again and is dropped; what it left
 * with ctx.partial(v) is kept as the partial result.
 *
 * What `run` returns: a value → ok with that result; nil, "message" or
 * nil, {code=, message=, retryable=} → an EXECUTE error (retryable unless
 * it says retryable = false); raising → an EXECUTE error, not retryable.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "exec.h"
#include "base/util.h"
#include "lua/luajson.h"
#include "policy/sandbox.h"

/* ctx functions reach their attempt through a box (a full userdata
 * holding the tg_exec pointer) that release() empties, so a ctx kept past
 * the tool's end raises instead of touching freed memory. */
tg_exec *tg__luatool_ctx(lua_State *L, const char *fn) {
  tg_exec **box = lua_touserdata(L, lua_upvalueindex(1));
  if (!*box)
    luaL_error(L, "ctx.%s: this tool attempt has ended; ctx cannot be "
                  "used after run returns", fn);
  return *box;
}


static void sleep_done_cb(uv_timer_t *t) {
  tg_exec *ex = t->data;
  if (ex->finished || !ex->co) return;
  ex->waiting = 0;
  lua_pushboolean(ex->co, 1); /* ctx.sleep returns true */
  tg__luatool_resume(ex, 1);
}

void tg__luatool_wait(tg_exec *ex, uint64_t ms, uv_timer_cb cb) {
  if (!ex->sleep_timer) {
    ex->sleep_timer = malloc(sizeof *ex->sleep_timer);
    if (!ex->sleep_timer) return;
    uv_timer_init(ex->core->loop, ex->sleep_timer);
    ex->sleep_timer->data = ex;
  }
  ex->waiting = 1;
  uv_update_time(ex->core->loop); /* the tool may have computed for a while */
  uv_timer_start(ex->sleep_timer, cb, ms, 0);
}

static int ctx_sleep(lua_State *L) {
  tg_exec *ex = tg__luatool_ctx(L, "sleep");
  lua_Number ms = luaL_checknumber(L, 1);
  if (!(ms >= 0 && ms <= 9e15)) /* NaN fails too */
    return luaL_argerror(L, 1, "milliseconds must be >= 0");
  if (L != ex->co)
    return luaL_error(L, "ctx.sleep: call it from the tool's run function "
                         "itself, not from a nested coroutine or a hook");
  tg__luatool_wait(ex, (uint64_t)ms, sleep_done_cb);
  return lua_yield(L, 0);
}

static int ctx_progress(lua_State *L) {
  tg_exec *ex = tg__luatool_ctx(L, "progress");
  if (lua_type(L, 1) == LUA_TSTRING) { /* ctx.progress("message") */
    tg_exec_progress(ex, ex->progress_current, ex->progress_total,
                     lua_tostring(L, 1));
    return 0;
  }
  double cur = luaL_checknumber(L, 1);
  double total = luaL_optnumber(L, 2, -1);
  const char *msg = luaL_optstring(L, 3, NULL);
  tg_exec_progress(ex, cur, total, msg);
  return 0;
}

static int ctx_cancelled(lua_State *L) {
  tg_exec *ex = tg__luatool_ctx(L, "cancelled");
  lua_pushboolean(L, ex->cancelled);
  return 1;
}

static int ctx_partial(lua_State *L) {
  tg_exec *ex = tg__luatool_ctx(L, "partial");
  char msg[256];
  cJSON *v = tg__json_from_lua(L, 1, msg, sizeof msg);
  if (!v) return luaL_error(L, "ctx.partial: the value is not JSON: %s", msg);
  cJSON_Delete(ex->result);
  ex->result = v;
  return 0;
}

static const luaL_Reg ctx_fns[] = {{"sleep", ctx_sleep},
                                   {"progress", ctx_progress},
                                   {"cancelled", ctx_cancelled},
                                   {"partial", ctx_partial},
                                   {"call", tg__ctx_call},
                                   {"exec", tg__ctx_exec},
                                   {NULL, NULL}};

/* Pushes ctx = {call_id, tool, attempt, session, sleep, progress, ...}. */
static void push_ctx(lua_State *L, tg_exec *ex) {
  lua_createtable(L, 0, 8);
  tg_exec **box = lua_newuserdatauv(L, sizeof *box, 0);
  *box = ex;
  lua_pushvalue(L, -1);
  ex->box_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  luaL_setfuncs(L, ctx_fns, 1);                 /* pops the box */
  lua_pushstring(L, ex->call_id);
  lua_setfield(L, -2, "call_id");
  lua_pushstring(L, ex->tool->name);
  lua_setfield(L, -2, "tool");
  lua_pushinteger(L, ex->attempt);
  lua_setfield(L, -2, "attempt");
  if (ex->owner && ex->session) {
    lua_pushstring(L, ex->session);
    lua_setfield(L, -2, "session");
  }
}

static void set_error_named(tg_exec *ex, const char *code, const char *msg,
                            int retryable) {
  tg__err_clear(&ex->error);
  ex->error.phase = TG_PHASE_EXECUTE;
  ex->error.code = tg__strdup(code);
  ex->error.message = tg__strdup(msg);
  ex->error.retryable = retryable;
}

static void set_error(tg_exec *ex, tg_error_code code, const char *msg,
                      int retryable) {
  set_error_named(ex, tg_error_code_name(code), msg, retryable);
}

/* `nil, err` returned by run: err is a string or {code, message, retryable},
 * read raw (lua/luaraw.h): no metamethod of the tool's runs here, outside
 * the coroutine. */
static void take_returned_error(tg_exec *ex, lua_State *co, int idx) {
  const char *code = NULL, *msg = NULL;
  int retry = 1;
  if (lua_type(co, idx) == LUA_TTABLE) {
    code = tg__rawgetstring(co, idx, "code");
    msg = tg__rawgetstring(co, idx, "message");
    if (tg__rawgetfield(co, idx, "retryable") != LUA_TNIL)
      retry = lua_toboolean(co, -1);
    lua_pop(co, 1);
  } else if (lua_type(co, idx) == LUA_TSTRING) {
    msg = lua_tostring(co, idx);
  }
  char m[600];
  if (!msg) { /* say which tool, since the tool did not */
    snprintf(m, sizeof m, "tool '%s' (%s) failed without a message",
             ex->tool->name, ex->tool->where);
    msg = m;
  }
  if (code) set_error_named(ex, code, msg, retry); /* the tool's own */
  else set_error(ex, TG_E_TOOL_ERROR, msg, retry);
}

static void take_results(tg_exec *ex, lua_State *co, int nres) {
  int base = lua_gettop(co) - nres + 1;
  if (nres >= 2 && lua_isnil(co, base)) {
    take_returned_error(ex, co, base + 1);
    return;
  }
  char msg[256];
  cJSON *r = tg__json_from_lua(co, base, msg, sizeof msg);
  if (!r) {
    char m[400];
    snprintf(m, sizeof m, "tool '%s' returned a value that is not JSON: %s",
             ex->tool->name, msg);
    set_error(ex, TG_E_BAD_RESULT, m, 0);
    return;
  }
  cJSON_Delete(ex->result);
  ex->result = r;
}

static void take_raise(tg_exec *ex, lua_State *co) {
  char m[1024], what[600];
  /* a stop by the sandbox is an EXECUTE error too: the tool had started */
  snprintf(what, sizeof what, "tool '%s' (%s)", ex->tool->name, ex->tool->where);
  if (tg__sandbox_describe_stop(ex->gen->sb, what, m, sizeof m)) {
    int budget = tg__sandbox_stop(ex->gen->sb) == TG_STOP_BUDGET;
    set_error(ex, budget ? TG_E_TIME_LIMIT : TG_E_MEMORY_CAP, m, 0);
    return;
  }
  const char *e = lua_tostring(co, -1);
  snprintf(m, sizeof m, "tool '%s' (%s) raised an error: %s", ex->tool->name,
           ex->tool->where, e ? e : luaL_typename(co, -1));
  set_error(ex, TG_E_TOOL_RAISED, m, 0);
}

void tg__luatool_resume(tg_exec *ex, int nargs) {
  lua_State *co = ex->co;
  int nres = 0;
  int st = tg__sandbox_resume(ex->gen->sb, co, ex->gen->L, nargs, &nres);
  if (st == LUA_YIELD) {
    lua_pop(co, nres);
    if (!ex->waiting) tg__luatool_wait(ex, 0, sleep_done_cb); /* a bare yield: next loop turn */
    return;
  }
  if (st == LUA_OK) take_results(ex, co, nres);
  else take_raise(ex, co);
  lua_settop(co, 0);
  tg__exec_done(ex);
}

void tg__luatool_start(tg_exec *ex, const cJSON *args) {
  lua_State *L = ex->gen->L;
  ex->box_ref = LUA_NOREF;
  ex->co = lua_newthread(L);
  ex->co_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_State *co = ex->co;
  lua_rawgeti(co, LUA_REGISTRYINDEX, ex->tool->run_ref);
  if (tg__json_push(co, args) < 0) {
    lua_settop(co, 0);
    set_error(ex, TG_E_BAD_ARGS, "the args are nested too deeply", 0);
    tg__exec_done(ex);
    return;
  }
  push_ctx(co, ex);
  tg__luatool_resume(ex, 2);
}

void tg__luatool_cancel(tg_exec *ex) {
  if (ex->sleep_timer) uv_timer_stop(ex->sleep_timer);
  tg__nested_abandon(ex); /* a ctx.call in flight is cancelled too */
  tg__ctx_exec_abandon(ex); /* and a ctx.exec's process group killed */
  tg__exec_stop_error(ex, "");
  tg__exec_done(ex);
}

void tg__luatool_release(tg_exec *ex) {
  lua_State *L = ex->gen->L;
  tg__nested_abandon(ex);
  tg__ctx_exec_abandon(ex);
  if (ex->box_ref != LUA_NOREF) { /* empty the box: ctx is dead */
    lua_rawgeti(L, LUA_REGISTRYINDEX, ex->box_ref);
    *(tg_exec **)lua_touserdata(L, -1) = NULL;
    lua_pop(L, 1);
    luaL_unref(L, LUA_REGISTRYINDEX, ex->box_ref);
    ex->box_ref = LUA_NOREF;
  }
  if (ex->co_ref != LUA_NOREF) luaL_unref(L, LUA_REGISTRYINDEX, ex->co_ref);
  ex->co_ref = LUA_NOREF;
  ex->co = NULL;
  tg__exec_close_timer(ex, &ex->sleep_timer);
}
