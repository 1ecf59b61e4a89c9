/*
 * luapaths.h — patch_files(text) and resolve_path(path [, cwd]) as Lua
 * functions, for the policies' tg.* and the host's toolgate.* alike: the
 * answers of tg_patch_files (apply_patch's parser) and tg_path_resolve
 * (the kernel's walk), so that toolgate.agent maps a call the same way in
 * both states.
 */
#ifndef TG_LUAPATHS_H
#define TG_LUAPATHS_H

#include "luacompat.h"

/* patch_files(text) -> {{op, path, from?, mode?}...} | nil, why. The
 * list is held by a userdata with __gc while it becomes Lua values, so a
 * memory cap raised meanwhile leaks nothing. */
int tg__lua_patch_files(lua_State *L);

/* resolve_path(path [, cwd]) -> absolute path | nil, why; cwd defaults
 * to default_cwd (NULL: the process's). */
int tg__lua_resolve_path(lua_State *L, const char *default_cwd);

#endif
