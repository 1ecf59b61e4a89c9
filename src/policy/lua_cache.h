/*
 * lua_cache.h — the shipped Lua library compiled once (lua_cache.c).
 */
#ifndef TG_LUA_CACHE_H
#define TG_LUA_CACHE_H

#include <stddef.h>
#include "lua/luacompat.h"

/* Loads the module whose text is text[0..n) as the chunk name (the
 * "@file" errors name), from the cached bytecode of that very text when
 * there is one, else compiling it (and caching it). lua_load's status,
 * with the function or the error on top. For the shipped library only. */
int tg__lua_cache_load(lua_State *L, const char *text, size_t n,
                       const char *name);

#endif
