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

/* The registry key of the `toolgate` module policy code sees: a read-only
 * view of the API table (tg__sandbox_readonly), which require "toolgate"
 * answers whatever package.loaded holds. */
#define TG_SANDBOX_MODULE "toolgate.module"

/* Pushes a read-only view of the table at idx: reads reach the table,
 * writes (assignment, and the sandbox's rawset) raise, its metatable is
 * hidden. One policy file cannot change the API another reads (replace
 * tg.session_taint with a function saying "clean", say). */
void tg__sandbox_readonly(lua_State *L, int idx);

#endif
