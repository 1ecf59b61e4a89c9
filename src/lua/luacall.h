/*
 * luacall.h — running a C function under a protected call, and turning
 * what it raised into a message. Every layer that calls into Lua from C
 * needs this (the host module's callbacks, the policy API's setup, policy
 * tests, the JSON conversions, the MCP front's config file): a raise that
 * unwinds through C frames leaves their work half-done, and one outside
 * any protected call aborts the process. The pattern is subtle enough
 * (nothing may allocate before the protection is in place, and LuaJIT
 * differs from Lua 5.4 there) to be written once.
 */
#ifndef TG_LUACALL_H
#define TG_LUACALL_H

#include <stddef.h>
#include "luacompat.h"

/* Runs body in a protected call on L, with ud as a light userdata its only
 * argument (index 1), and leaves nres of its results (LUA_MULTRET: all)
 * on top. Returns LUA_OK, or an error code with the error value on top.
 * Nothing can fail before the protection is in place: Lua 5.4 pushes
 * body as a light C function (no allocation); LuaJIT, where pushing a C
 * function allocates a closure, runs lua_cpcall, which allocates it
 * protected — or, for results, a trampoline made once by
 * tg__lua_call_open. */
int tg__lua_pcall_c(lua_State *L, lua_CFunction body, void *ud, int nres);

/* Makes the trampoline tg__lua_pcall_c uses on LuaJIT for a body with
 * results (nothing on Lua 5.4). Call it once per state, from a protected
 * context (luaopen_*, a state's setup); a state that never saw it still
 * works, pushing the trampoline unprotected. */
void tg__lua_call_open(lua_State *L);

/* The error value at idx as text: a string or a number as it is, anything
 * else (a table, nil, ...) as fallback. */
const char *tg__lua_error_text(lua_State *L, int idx, const char *fallback);

/* tg__lua_pcall_c without results, for the usual caller: 0, or -1 with
 * the error's text (fallback when it has none) in err (NULL: not
 * wanted). The stack is left as it was either way. */
int tg__lua_protect(lua_State *L, lua_CFunction body, void *ud, char *err,
                    size_t errlen, const char *fallback);

#endif
