/*
 * luacall.c — a C function run under a protected call, and what it raised
 * turned into a message (luacall.h says why this is written once).
 */
#include <stdio.h>
#include "luacall.h"

#if !TG_LUA54
static const char trampoline_key = 'k';

/* What the trampoline runs: body with ud. */
typedef struct {
  lua_CFunction body;
  void *ud;
} protected_body;

/* Calls p->body with p->ud as its argument, in place of p. */
static int trampoline(lua_State *L) {
  protected_body *p = lua_touserdata(L, 1);
  lua_pushlightuserdata(L, p->ud);
  lua_replace(L, 1);
  return p->body(L);
}
#endif

void tg__lua_call_open(lua_State *L) {
#if TG_LUA54
  (void)L; /* light C functions: no trampoline needed */
#else
  lua_pushlightuserdata(L, (void *)&trampoline_key);
  lua_pushcfunction(L, trampoline);
  lua_rawset(L, LUA_REGISTRYINDEX);
#endif
}

int tg__lua_pcall_c(lua_State *L, lua_CFunction body, void *ud, int nres) {
#if TG_LUA54
  lua_pushcfunction(L, body); /* a light C function: no allocation */
  lua_pushlightuserdata(L, ud);
  return lua_pcall(L, 1, nres, 0);
#else
  if (nres == 0) return lua_cpcall(L, body, ud); /* allocates protected */
  protected_body p = {body, ud};
  lua_pushlightuserdata(L, (void *)&trampoline_key);
  lua_rawget(L, LUA_REGISTRYINDEX); /* an existing key: no allocation */
  if (!lua_isfunction(L, -1)) {     /* a state tg__lua_call_open never saw */
    lua_pop(L, 1);
    lua_pushcfunction(L, trampoline);
  }
  lua_pushlightuserdata(L, &p);
  return lua_pcall(L, 1, nres, 0);
#endif
}

const char *tg__lua_error_text(lua_State *L, int idx, const char *fallback) {
  int ty = lua_type(L, idx);
  const char *m = ty == LUA_TSTRING || ty == LUA_TNUMBER ? lua_tostring(L, idx)
                                                         : NULL;
  return m ? m : fallback;
}

int tg__lua_protect(lua_State *L, lua_CFunction body, void *ud, char *err,
                    size_t errlen, const char *fallback) {
  int top = lua_gettop(L);
  int rc = tg__lua_pcall_c(L, body, ud, 0);
  if (rc != LUA_OK && err && errlen)
    snprintf(err, errlen, "%s", tg__lua_error_text(L, -1, fallback));
  lua_settop(L, top);
  return rc == LUA_OK ? 0 : -1;
}
