/*
 * luacompat.h — the few Lua C API differences between Lua 5.4 and LuaJIT
 * (5.1 API with some 5.2 additions), hidden behind tg_-prefixed helpers so
 * the rest of the code is written once.
 */
#ifndef TG_LUACOMPAT_H
#define TG_LUACOMPAT_H

#include <lua.h>
#include <lauxlib.h>
#include <lualib.h>

#if LUA_VERSION_NUM >= 502
#define TG_LUA54 1
#else
#define TG_LUA54 0
#endif

#if !TG_LUA54
#define lua_rawlen(L, i) lua_objlen((L), (i))
#ifndef luaL_newlib
#define luaL_newlib(L, l) (lua_newtable(L), luaL_setfuncs((L), (l), 0))
#endif
static inline int tg__absindex(lua_State *L, int i) {
  return (i > 0 || i <= LUA_REGISTRYINDEX) ? i : lua_gettop(L) + i + 1;
}
#define lua_absindex tg__absindex
#define lua_newuserdatauv(L, sz, nuv) lua_newuserdata((L), (sz))
#endif

/* Resumes co with nargs arguments; *nres receives the number of values
 * returned or yielded (they are on co's stack). Returns LUA_OK, LUA_YIELD
 * or an error code. */
static inline int tg__resume(lua_State *co, lua_State *from, int nargs,
                            int *nres) {
#if TG_LUA54
  return lua_resume(co, from, nargs, nres);
#else
  (void)from;
  /* 5.1: on return the stack holds exactly the yielded/returned values */
  int st = lua_resume(co, nargs);
  *nres = (st == LUA_OK || st == LUA_YIELD) ? lua_gettop(co) : 0;
  return st;
#endif
}

/* Is the value at idx an integer-valued number that fits lua_Integer? */
static inline int tg__isinteger(lua_State *L, int idx) {
#if TG_LUA54
  return lua_isinteger(L, idx);
#else
  (void)L; (void)idx;
  return 0;
#endif
}

/* Sets the environment (_ENV) of the function on top of the stack to the
 * table at env_idx (5.4: first upvalue of a main chunk; 5.1: fenv). */
static inline void tg__setenv(lua_State *L, int env_idx) {
  env_idx = lua_absindex(L, env_idx);
  lua_pushvalue(L, env_idx);
#if TG_LUA54
  if (lua_setupvalue(L, -2, 1) == NULL) lua_pop(L, 1);
#else
  lua_setfenv(L, -2);
#endif
}

#endif
