/*
 * tool_ctx.c — the ctx a host tool's run receives: ctx.sleep,
 * ctx.progress, ctx.cancelled, ctx.partial, ctx.call, ctx.exec and the
 * call's fields, mirroring a policy Lua tool's ctx (src/exec/luatool.c):
 * the same names, returns and errors. Waiting is a yield; tool_run.c
 * resumes.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tool.h"
#include "lua/luaraw.h"
#include "lua/luajson.h"
#include "lua/luaarg.h" /* after lauxlib: argument errors name the method */

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
  tg__lm_run_arm(h, WAIT_SLEEP, (uint64_t)ms);
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
  char *name = tg__lm_dup_str(tool);
  if (!name) {
    cJSON_Delete(args);
    return luaL_error(L, "ctx.call: out of memory");
  }
  h->call_tool = name;
  h->call_args = args;
  h->flags = as_exec ? h->flags | RUN_AS_EXEC : h->flags & ~RUN_AS_EXEC;
  tg__lm_run_arm(h, WAIT_CALL, 0);
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
void tg__lm_push_ctx(lua_State *L, hrun *h, int box_idx) {
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
