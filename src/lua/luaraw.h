/*
 * luaraw.h — reading and writing a field of a table that policy code has
 * had its hands on (a verdict, the call table, a post-hook's res, a tool's
 * error), without running any of its code. lua_getfield / lua_setfield
 * would call __index / __newindex, which may raise, loop or lie — outside a
 * protected call a raise aborts the process. Raw access runs no
 * metamethod, so C reads what the table holds.
 */
#ifndef TG_LUARAW_H
#define TG_LUARAW_H

#include <string.h>
#include "luacompat.h"

/* Pushes t[k] of the table at idx, raw; returns its type. */
static inline int tg__rawgetfield(lua_State *L, int idx, const char *k) {
  idx = lua_absindex(L, idx);
  lua_pushstring(L, k);
  lua_rawget(L, idx);
  return lua_type(L, -1);
}

/* t[k] = the value on top (popped), raw, for the table at idx. */
static inline void tg__rawsetfield(lua_State *L, int idx, const char *k) {
  idx = lua_absindex(L, idx);
  lua_pushstring(L, k);
  lua_insert(L, -2);
  lua_rawset(L, idx);
}

/* The string t[k] of the table at idx, raw, or NULL when it is not a
 * string. The table keeps the string alive while it holds it. */
static inline const char *tg__rawgetstring(lua_State *L, int idx,
                                          const char *k) {
  const char *s = tg__rawgetfield(L, idx, k) == LUA_TSTRING
                      ? lua_tostring(L, -1) : NULL;
  lua_pop(L, 1);
  return s;
}

/* Does the string at idx hold a NUL byte? C would cut it there: a tool
 * name "exec\0x" would be judged as one thing and read as "exec". */
static inline int tg__has_nul(lua_State *L, int idx) {
  size_t n = 0;
  const char *s = lua_tolstring(L, idx, &n);
  return s && memchr(s, '\0', n) != NULL;
}

/* The string at idx for C (the caller checked it is a string); raises
 * "<fn>: <what> must not contain a NUL byte" when C would read less of
 * it. Policies' names and the host module's alike. */
static inline const char *tg__checknonul(lua_State *L, int idx, const char *fn,
                                        const char *what) {
  if (tg__has_nul(L, idx))
    luaL_error(L, "%s: %s must not contain a NUL byte", fn, what);
  return lua_tostring(L, idx);
}

/* Raises "<fn>: unknown key 'prority' (known: name, priority, ...)" when
 * the table at idx holds a key that is not one of known (NULL-terminated
 * names), read raw. Every function that takes a table of options checks
 * it with this, with one list of keys each: a misspelt key would
 * otherwise be ignored in silence (`tool = "exec"` for `tools`, which
 * makes a rule cover every tool). */
void tg__check_keys(lua_State *L, int idx, const char *fn,
                    const char *const *known);

#endif
