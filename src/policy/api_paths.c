/*
 * api_paths.c — tg.patch_files and tg.resolve_path (api_paths.h).
 *
 * A judge never re-parses what an executor parses: the files a patch
 * reads, creates, deletes and renames are the ones apply_patch's parser
 * finds (tg_patch_files), and a path is where the kernel's walk leads
 * (tg_path_resolve), so a rule reads the action the tool will take, not
 * a second reading of its text that can disagree with it.
 */
#include "api_paths.h"
#include "generation.h"
#include "lua/luapaths.h"

int tg__l_patch_files(lua_State *L) { return tg__lua_patch_files(L); }

/* Relative paths are relative to the file tools' first workspace root,
 * as the file tools take them. */
int tg__l_resolve_path(lua_State *L) {
  tg_generation *g = (tg_generation *)lua_touserdata(L, lua_upvalueindex(1));
  const char *const *roots = g && g->core ? g->core->cfg.workspace_roots : NULL;
  return tg__lua_resolve_path(L, roots && roots[0] ? roots[0] : NULL);
}
