/*
 * luaarg.h — argument errors that always name the function:
 * "bad argument #2 to 'call' (string expected, got nil)".
 *
 * lauxlib names the function from the call site's debug information. A
 * method called through pcall(rt.call, rt, ...), from C, or from a
 * coroutine.wrap has none, and the message says '?'. A module that
 * includes this header after lauxlib.h gets our luaL_check* / luaL_opt* /
 * luaL_argerror / luaL_typeerror instead: the same checks and the same
 * messages, with the name the module gave the function (tg__arg_names)
 * and, when it gave none, the call site's. As in lauxlib, a function
 * called as a method does not count self (`rt:call(nil)` is argument #1);
 * called as a plain function it does (`pcall(rt.call, rt, nil)`: #2).
 *
 * Only the host module includes it: its macros replace lauxlib's names in
 * the files that do, nowhere else.
 */
#ifndef TG_LUAARG_H
#define TG_LUAARG_H

#include "luacompat.h"

/* Names every function in the table at idx by its key (tables of methods,
 * metatables, the module table): an argument error in one of them says
 * that name. The names are kept in a weakly keyed table of the registry,
 * so a name never keeps a function alive. */
void tg__arg_names(lua_State *L, int idx);
/* Names the function at idx (a closure made later, e.g. a ctx function). */
void tg__arg_name(lua_State *L, int idx, const char *name);

int tg__argerror(lua_State *L, int arg, const char *extramsg);
int tg__typeerror(lua_State *L, int arg, const char *tname);
const char *tg__checklstring(lua_State *L, int arg, size_t *len);
const char *tg__optlstring(lua_State *L, int arg, const char *def,
                           size_t *len);
lua_Number tg__checknumber(lua_State *L, int arg);
lua_Number tg__optnumber(lua_State *L, int arg, lua_Number def);
lua_Integer tg__checkinteger(lua_State *L, int arg);
lua_Integer tg__optinteger(lua_State *L, int arg, lua_Integer def);
void tg__checktype(lua_State *L, int arg, int t);
void tg__checkany(lua_State *L, int arg);
void *tg__checkudata(lua_State *L, int arg, const char *tname);

#undef luaL_argerror
#undef luaL_typeerror
#undef luaL_checklstring
#undef luaL_optlstring
#undef luaL_checknumber
#undef luaL_optnumber
#undef luaL_checkinteger
#undef luaL_optinteger
#undef luaL_checktype
#undef luaL_checkany
#undef luaL_checkudata
#define luaL_argerror tg__argerror
#define luaL_typeerror tg__typeerror
#define luaL_checklstring tg__checklstring
#define luaL_optlstring tg__optlstring
#define luaL_checknumber tg__checknumber
#define luaL_optnumber tg__optnumber
#define luaL_checkinteger tg__checkinteger
#define luaL_optinteger tg__optinteger
#define luaL_checktype tg__checktype
#define luaL_checkany tg__checkany
#define luaL_checkudata tg__checkudata

#endif
