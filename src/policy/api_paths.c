/*
 * api_paths.c — tg.patch_files and tg.resolve_path (api_paths.h).
 *
 * A judge never re-parses what an executor parses: the files a patch
 * reads, creates, deletes and renames are the ones apply_patch's parser
 * finds (tg_patch_files), and a path is where the kernel's walk leads
 * (tg_path_resolve), so a rule reads the action the tool will take, not
 * a second reading of its text that can disagree with it.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "api_paths.h"
#include "generation.h"
#include "lua/luajson.h"

/* The list is held by a userdata whose __gc deletes it, so a memory cap
 * raised while it becomes Lua values leaks nothing. */
#define FILES_BOX "toolgate.patch_files"

static void box_free(cJSON **box) {
  if (box && *box) {
    cJSON_Delete(*box);
    *box = NULL;
  }
}

static int box_gc(lua_State *L) {
  box_free(lua_touserdata(L, 1));
  return 0;
}

int tg__l_patch_files(lua_State *L) {
  size_t len;
  const char *text = luaL_checklstring(L, 1, &len);
  cJSON **box = lua_newuserdatauv(L, sizeof *box, 0);
  *box = NULL;
  if (luaL_newmetatable(L, FILES_BOX)) {
    lua_pushcfunction(L, box_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_setmetatable(L, -2);
  char err[512];
  if (!(*box = tg_patch_files(text, len, err, sizeof err))) {
    lua_pushnil(L);
    lua_pushstring(L, err);
    return 2;
  }
  if (tg__json_push(L, *box) < 0)
    return luaL_error(L, "tg.patch_files: the list is too deep to read");
  box_free(box);
  return 1;
}

static const char *default_cwd(lua_State *L, char *buf, size_t n) {
  tg_generation *g = (tg_generation *)lua_touserdata(L, lua_upvalueindex(1));
  const char *const *roots = g && g->core ? g->core->cfg.workspace_roots : NULL;
  if (roots && roots[0]) return roots[0];
  return getcwd(buf, n);
}

int tg__l_resolve_path(lua_State *L) {
  size_t len;
  const char *path = luaL_checklstring(L, 1, &len);
  const char *cwd = luaL_optstring(L, 2, NULL);
  char buf[PATH_MAX], why[PATH_MAX + 200];
  if (memchr(path, '\0', len)) {
    lua_pushnil(L);
    lua_pushliteral(L, "the path holds a NUL byte, which no file name can");
    return 2;
  }
  if (!cwd) cwd = default_cwd(L, buf, sizeof buf);
  char *real = tg_path_resolve(cwd, path, why, sizeof why);
  if (!real) {
    lua_pushnil(L);
    lua_pushstring(L, why);
    return 2;
  }
  lua_pushstring(L, real);
  free(real);
  return 1;
}
