/*
 * lmodule_paths.c — toolgate.patch_files(text) and
 * toolgate.resolve_path(path [, cwd]) for the host's Lua: the same answers
 * rules get from tg.patch_files / tg.resolve_path, from the same code
 * (tg_patch_files, tg_path_resolve), so toolgate.agent maps an agent's
 * call the same way in a host as in the policies' state.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lmodule.h"
#include "lua/luajson.h"

/* The host's state has no memory cap: the list becomes Lua values and is
 * deleted at once (a raise out of memory leaks it, as Lua itself would
 * be failing). */
int tg__lm_patch_files(lua_State *L) {
  size_t len;
  const char *text = luaL_checklstring(L, 1, &len);
  char err[512];
  cJSON *list = tg_patch_files(text, len, err, sizeof err);
  if (!list) {
    lua_pushnil(L);
    lua_pushstring(L, err);
    return 2;
  }
  int rc = tg__json_push(L, list);
  cJSON_Delete(list);
  if (rc < 0) return luaL_error(L, "toolgate.patch_files: too deep");
  return 1;
}

int tg__lm_resolve_path(lua_State *L) {
  size_t len;
  const char *path = luaL_checklstring(L, 1, &len);
  const char *cwd = luaL_optstring(L, 2, NULL);
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
