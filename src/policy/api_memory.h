/*
 * api_memory.h — tg.memory for policies (api_memory.c): record and recall
 * through the core's sink, never the store by name.
 */
#ifndef TG_API_MEMORY_H
#define TG_API_MEMORY_H

#include "lua/luacompat.h"

struct tg_generation;

/* Pushes the tg.memory table (upvalue: the generation). */
void tg__policy_memory_open(lua_State *L, struct tg_generation *g);

#endif
