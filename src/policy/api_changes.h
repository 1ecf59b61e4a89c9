/*
 * api_changes.h — the policy side of file changes: tg.on_file_change(glob,
 * fn) registers a handler while the file loads, tg.recent_changes(n) reads
 * the runtime's ring. Handlers live in the generation's own lua_State (a
 * registry table), so they go away with it.
 */
#ifndef TG_API_CHANGES_H
#define TG_API_CHANGES_H

#include <cjson/cJSON.h>
#include "lua/luacompat.h"

struct tg_generation;

/* tg.on_file_change and tg.recent_changes (upvalue 1: the generation). */
int tg__l_on_file_change(lua_State *L);
int tg__l_recent_changes(lua_State *L);

/* Calls the handlers of generation `origin` whose glob matches path with
 * the change table (a tg_change_listener: core/changes.h). A handler that
 * raises becomes a `handler_error` event. */
void tg__policy_file_change(void *origin, const cJSON *change,
                            const char *path);

#endif
