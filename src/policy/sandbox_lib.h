/*
 * sandbox_lib.h — the standard library policy code sees (sandbox_lib.c).
 */
#ifndef TG_SANDBOX_LIB_H
#define TG_SANDBOX_LIB_H

#include "lua/luacompat.h"

/* After luaL_openlibs: sets package.path to the shipped lua/ library and
 * policy_dir (NULL: "."), empties package.cpath, makes the per-file
 * environment metatable and, unless trusted, restricts the library. */
void tg__sandbox_lib_open(lua_State *L, const char *policy_dir, int trusted);

#endif
