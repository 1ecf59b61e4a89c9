/*
 * luapaths.c — the Lua face of tg_patch_files and tg_path_resolve
 * (luapaths.h).
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "luapaths.h"
#include "luajson.h"
#include "toolgate.h"

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

int tg__lua_patch_files(lua_State *L) {
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
    return luaL_error(L, "patch_files: the list is too deep to read");
  box_free(box);
  return 1;
}

int tg__lua_resolve_path(lua_State *L, const char *default_cwd) {
  size_t len;
  const char *path = luaL_checklstring(L, 1, &len);
  const char *cwd = luaL_optstring(L, 2, default_cwd);
  char buf[PATH_MAX], why[PATH_MAX + 200];
  if (memchr(path, '\0', len)) {
    lua_pushnil(L);
    lua_pushliteral(L, "the path holds a NUL byte, which no file name can");
    return 2;
  }
  if (!cwd) cwd = getcwd(buf, sizeof buf);
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
