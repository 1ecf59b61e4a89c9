/*
 * luaweak.h — a registry table with weak keys: what C keeps about a Lua
 * value (a function's name for argument errors, a call table's facts, a
 * read-only view) for as long as the value lives, and no longer. One
 * maker, so every such table is weak in the same way.
 */
#ifndef TG_LUAWEAK_H
#define TG_LUAWEAK_H

#include "luacompat.h"

/* Pushes registry[key], a table with weak keys, made on first use. */
void tg__push_weak_registry(lua_State *L, const char *key);

#endif
