/*
 * api_paths.h — what a file-touching call touches, for rules, computed by
 * the code that acts (api_paths.c): tg.patch_files(text) is apply_patch's
 * own parser, tg.resolve_path(path [, cwd]) the kernel's walk of a path.
 */
#ifndef TG_API_PATHS_H
#define TG_API_PATHS_H

#include "lua/luacompat.h"

/* tg.patch_files(text) -> {{op=, path=, from=?, mode=?}...} | nil, why */
int tg__l_patch_files(lua_State *L);
/* tg.resolve_path(path [, cwd]) -> absolute path | nil, why (upvalue 1:
 * the generation, whose first workspace root is the default cwd; none:
 * the process's) */
int tg__l_resolve_path(lua_State *L);

#endif
