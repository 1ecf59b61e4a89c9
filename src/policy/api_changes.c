/*
 * api_changes.c — tg.on_file_change and tg.recent_changes for policies
 * (api_changes.h). Handlers are kept in a registry table of the
 * generation's lua_State: {{glob, fn, where}, ...} in registration order.
 */
#include <stdio.h>
#include <string.h>
#include "api_changes.h"
#include "base/jsonnum.h"
#include "generation.h"
#include "lua/luajson.h"
#include "lua/luaraw.h"
#include "sandbox.h"
#include "base/glob.h"
#include "base/util.h"
#include "lua/luacall.h"
#include "core/changes.h"

#define HANDLERS_KEY "toolgate.file_change_handlers"

static tg_generation *gen_of(lua_State *L) {
  return (tg_generation *)lua_touserdata(L, lua_upvalueindex(1));
}

/* tg.on_file_change(glob, fn) */
int tg__l_on_file_change(lua_State *L) {
  tg_generation *g = gen_of(L);
  if (!g->loading)
    return luaL_error(L, "tg.on_file_change: registration is only possible "
                         "while the policy file loads (call it at the top "
                         "level of the file)");
  if (lua_type(L, 1) != LUA_TSTRING)
    return luaL_error(L, "tg.on_file_change: the first argument must be a "
                         "glob such as \"src/**.c\" (got %s)",
                      luaL_typename(L, 1));
  char why[TG_ERRMSG];
  tg__checknonul(L, 1, "tg.on_file_change", "the glob");
  if (tg_glob_check(lua_tostring(L, 1), why, sizeof why) < 0)
    return luaL_error(L, "tg.on_file_change: %s", why);
  luaL_checktype(L, 2, LUA_TFUNCTION);
  tg__reg_check(L, g);
  lua_Debug ar;
  lua_pushvalue(L, 2);
  lua_getinfo(L, ">S", &ar);
  /* only memory from here on: a failure breaks the generation */
  tg__reg_commit_begin(L, g, "on_file_change");
  lua_getfield(L, LUA_REGISTRYINDEX, HANDLERS_KEY);        /* list */
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, HANDLERS_KEY);
  }
  lua_createtable(L, 3, 0);                                  /* entry */
  lua_pushvalue(L, 1);
  lua_rawseti(L, -2, 1);
  lua_pushvalue(L, 2);
  lua_rawseti(L, -2, 2);
  lua_pushfstring(L, "%s:%d", ar.short_src, ar.linedefined);
  lua_rawseti(L, -2, 3);
  lua_rawseti(L, -2, (int)lua_rawlen(L, -2) + 1);            /* list[n+1] */
  lua_pop(L, 1);
  tg__reg_commit_end(g);
  return 0;
}

/* tg.recent_changes([n]) -> list of change tables, oldest first */
int tg__l_recent_changes(lua_State *L) {
  tg_generation *g = gen_of(L);
  lua_Number n = luaL_optnumber(L, 1, 0);
  int64_t count = 0;
  if (tg__int_of_double((double)n, 0, TG_JSON_INT_MAX, &count) < 0)
    return luaL_error(L, "tg.recent_changes: n must be a whole number >= 0");
  cJSON *a = tg__changes_recent(g->core, (size_t)count);
  int rc = a ? tg__json_push(L, a) : -1;
  cJSON_Delete(a);
  if (rc < 0) return luaL_error(L, "tg.recent_changes: out of memory");
  return 1;
}

static void handler_failed(tg_generation *g, const char *where,
                           const char *glob, const cJSON *change) {
  lua_State *L = g->L;
  const char *m = tg__lua_error_text(L, -1, "(non-string error)");
  char stop[700], what[400];
  snprintf(what, sizeof what, "on_file_change handler defined at %s",
           where ? where : "?");
  if (tg__sandbox_describe_stop(g->sb, what, stop, sizeof stop)) m = stop;
  cJSON *d = cJSON_CreateObject();
  cJSON_AddStringToObject(d, "where", where ? where : "?");
  cJSON_AddStringToObject(d, "error", m);
  cJSON_AddStringToObject(d, "handler", "on_file_change");
  cJSON_AddStringToObject(d, "glob", glob);
  cJSON_AddStringToObject(d, "path", cJSON_GetObjectItemCaseSensitive(change, "path")->valuestring);
  lua_pop(L, 1);
  const cJSON *cid = cJSON_GetObjectItemCaseSensitive(change, "call_id");
  tg__emit(g->core, g, "handler_error",
           cJSON_IsString(cid) ? cid->valuestring : NULL, d);
}

void tg__policy_file_change(void *origin, const cJSON *change,
                            const char *path) {
  tg_generation *g = origin;
  lua_State *L = g->L;
  if (!L) return;
  lua_getfield(L, LUA_REGISTRYINDEX, HANDLERS_KEY);
  if (!lua_istable(L, -1)) {
    lua_pop(L, 1);
    return;
  }
  int list = lua_gettop(L);
  int n = (int)lua_rawlen(L, list);
  for (int i = 1; i <= n; i++) {
    lua_rawgeti(L, list, i);                                 /* entry */
    lua_rawgeti(L, -1, 1);                                   /* glob */
    lua_rawgeti(L, -2, 3);                                   /* where */
    const char *glob = lua_tostring(L, -2);
    const char *where = lua_tostring(L, -1);
    if (glob && tg_glob_match(glob, path)) {
      lua_rawgeti(L, -3, 2);                                 /* fn */
      if (tg__json_push(L, change) < 0) lua_newtable(L);
      /* under the sandbox's time limit and cap, like every policy call */
      if (tg__sandbox_pcall(g->sb, L, 1, 0) != LUA_OK)
        handler_failed(g, where, glob, change);
    }
    lua_pop(L, 3);
  }
  lua_pop(L, 1);
}
