/*
 * sandbox_flow.c — the control-flow functions a stop must get through.
 *
 * coroutine.resume, coroutine.wrap and coroutine.close announce the thread
 * they switch to (sandbox.h), so the time limit reaches policy code running
 * in a coroutine: Lua 5.4's hooks are per thread, and without this a rule
 * could fan its work out through many short coroutines the stop never
 * reaches. resume and close call the library's own functions between the
 * two announcements. wrap cannot: its
 * function resumes internally, so it is rebuilt on create + our resume.
 * LuaJIT's hooks belong to the whole state: nothing to do there.
 *
 * xpcall: the stop is raised from inside a hook, and both Luas call the
 * message handler with hooks still off, so a handler that loops could
 * never be stopped. The sandbox's xpcall hands the library a handler that
 * skips the policy's own while a stop is under way. It is Lua, not C, so
 * that code inside xpcall can still yield (a Lua tool's ctx.sleep).
 */
#include "sandbox.h"

static const char XPCALL[] =
    "local xpcall, stopping, type = ...\n"
    "return function(f, handler, ...)\n"
    "  if type(handler) ~= 'function' then return xpcall(f, handler, ...) end\n"
    "  return xpcall(f, function(e)\n"
    "    if stopping() then return e end\n"
    "    return handler(e)\n"
    "  end, ...)\n"
    "end\n";

static int lua_stopping(lua_State *L) {
  lua_pushboolean(L, tg__sandbox_stopping(L));
  return 1;
}

static void open_xpcall(lua_State *L) {
  if (luaL_loadbuffer(L, XPCALL, sizeof XPCALL - 1, "=xpcall") != LUA_OK) {
    lua_pop(L, 1); /* only out of memory; the library's stays */
    return;
  }
  lua_getglobal(L, "xpcall");
  lua_pushcfunction(L, lua_stopping);
  lua_getglobal(L, "type");
  lua_call(L, 3, 1);
  lua_setglobal(L, "xpcall");
}

#if TG_LUA54

/* Coroutines the stop killed. Lua calls a hook with hooks off and, when
 * the hook raises straight out of a coroutine (no pcall inside it), never
 * turns them back on for that coroutine: its pending to-be-closed
 * variables, run later by coroutine.close or wrap, could not be stopped.
 * They are not run. A weak-keyed table in the registry. */
static const char stopped_key = 's';

static void push_stopped(lua_State *L) {
  lua_pushlightuserdata(L, (void *)&stopped_key);
  lua_rawget(L, LUA_REGISTRYINDEX);
}

static int died_under_stop(lua_State *L, int co_idx) {
  push_stopped(L);
  lua_pushvalue(L, co_idx);
  lua_rawget(L, -2);
  int dead = lua_toboolean(L, -1);
  lua_pop(L, 2);
  return dead;
}

/* After a resume: note co if it died while the call is being stopped. */
static void note_if_killed(lua_State *L, lua_State *co, int co_idx) {
  int st = lua_status(co);
  if (st == LUA_OK || st == LUA_YIELD || !tg__sandbox_stopping(L)) return;
  push_stopped(L);
  lua_pushvalue(L, co_idx);
  lua_pushboolean(L, 1);
  lua_rawset(L, -3);
  lua_pop(L, 1);
}

/* Calls the library function in upvalue 1 with the arguments, announcing
 * the switch to the thread at index 1 and back. Upvalue 2: true for
 * close, which does not run what a stopped coroutine left to close. */
static int switching_call(lua_State *L) {
  lua_State *co = lua_tothread(L, 1);
  int n = lua_gettop(L), closing = lua_toboolean(L, lua_upvalueindex(2));
  if (!co) { /* not a thread: the library raises its own message */
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, n, LUA_MULTRET);
    return lua_gettop(L);
  }
  if (closing && died_under_stop(L, 1)) {
    lua_pushboolean(L, 0);
    lua_pushliteral(L, "the coroutine was stopped by the time limit; its "
                       "to-be-closed variables were not run");
    return 2;
  }
  lua_pushvalue(L, 1); /* co stays below the call, for note_if_killed */
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_rotate(L, 1, 2); /* [co, fn, args...] */
  tg__sandbox_switch_to(co);
  int st = lua_pcall(L, n, LUA_MULTRET, 0); /* raises only when misused */
  tg__sandbox_switch_from(co, L); /* announced whatever happened */
  if (st != LUA_OK) return lua_error(L);
  if (!closing) note_if_killed(L, co, 1);
  return lua_gettop(L) - 1;
}

/* The function coroutine.wrap returns; upvalues: the coroutine, our
 * resume, our close. Errors are raised as the library's wrap raises them:
 * a dead coroutine is closed first, a string gets the caller's position. */
static int wrapped(lua_State *L) {
  int n = lua_gettop(L);
  lua_pushvalue(L, lua_upvalueindex(2));
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_rotate(L, 1, 2);
  lua_call(L, n + 1, LUA_MULTRET);
  if (lua_toboolean(L, 1)) return lua_gettop(L) - 1;
  lua_State *co = lua_tothread(L, lua_upvalueindex(1));
  int st = lua_status(co);
  if (st != LUA_OK && st != LUA_YIELD) { /* died in error: close it */
    lua_settop(L, 0);
    lua_pushvalue(L, lua_upvalueindex(3));
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_call(L, 1, 2);
  }
  if (lua_type(L, 2) == LUA_TSTRING) {
    luaL_where(L, 1);
    lua_pushvalue(L, 2);
    lua_concat(L, 2);
  } else {
    lua_pushvalue(L, 2);
  }
  return lua_error(L);
}

/* coroutine.wrap(f); upvalues: coroutine.create, our resume, our close. */
static int sb_wrap(lua_State *L) {
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, 1); /* create raises on a non-function */
  lua_pushvalue(L, lua_upvalueindex(2));
  lua_pushvalue(L, lua_upvalueindex(3));
  lua_pushcclosure(L, wrapped, 3);
  return 1;
}

/* Replaces coroutine[name] (the table at t) with switching_call around
 * the original, and leaves the replacement on the stack. */
static void replace_switching(lua_State *L, int t, const char *name,
                              int closing) {
  lua_getfield(L, t, name);
  lua_pushboolean(L, closing);
  lua_pushcclosure(L, switching_call, 2);
  lua_pushvalue(L, -1);
  lua_setfield(L, t, name);
}

static void open_coroutine(lua_State *L) {
  lua_pushlightuserdata(L, (void *)&stopped_key);
  lua_createtable(L, 0, 0);
  lua_createtable(L, 0, 1);
  lua_pushliteral(L, "k");
  lua_setfield(L, -2, "__mode");
  lua_setmetatable(L, -2);
  lua_rawset(L, LUA_REGISTRYINDEX);
  lua_getglobal(L, "coroutine");
  if (!lua_istable(L, -1)) {
    lua_pop(L, 1);
    return;
  }
  int t = lua_gettop(L);
  lua_getfield(L, t, "create");
  replace_switching(L, t, "resume", 0);
  replace_switching(L, t, "close", 1);
  lua_pushcclosure(L, sb_wrap, 3);
  lua_setfield(L, t, "wrap");
  lua_pop(L, 1);
}

#else

static void open_coroutine(lua_State *L) { (void)L; }

#endif

void tg__sandbox_flow_open(lua_State *L) {
  open_xpcall(L);
  open_coroutine(L);
}
