/*
 * module.c — luaopen_toolgate: the module table (toolgate.new, schema,
 * null, version, error codes, ...) and the runtime's metatable, whose
 * methods each concern's file lists (lua_module.h). The one exported
 * symbol of toolgate.so.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lua_module.h"
#include "lua/luaraw.h"
#include "lua/luacall.h"
#include "lua/luajson.h"
#include "lua/luapaths.h"
#include "lua/luaarg.h" /* after lauxlib: argument errors name the method */

/* toolgate.resolve_path: relative to the host's cwd. */
static int l_resolve_path(lua_State *L) {
  return tg__lua_resolve_path(L, NULL);
}

static const luaL_Reg module_fns[] = {
    {"new", tg__lm_new},
    {"patch_files", tg__lua_patch_files},   /* lua/luapaths.c */
    {"resolve_path", l_resolve_path},
    {NULL, NULL}};

static const luaL_Reg *const method_sets[] = {
    tg__lm_runtime_methods,  tg__lm_call_methods,   tg__lm_event_methods,
    tg__lm_approval_methods, tg__lm_policy_methods, tg__lm_store_methods,
    tg__lm_session_methods,  tg__lm_chat_methods,   tg__lm_layer_methods,
    tg__lm_notify_methods,   tg__lm_taint_methods};

/* The runtime's metatable: every concern's methods, attach, rt:tool. */
static void open_runtime(lua_State *L) {
  luaL_newmetatable(L, RT_MT);
  lua_newtable(L);
  for (size_t i = 0; i < sizeof method_sets / sizeof *method_sets; i++)
    luaL_setfuncs(L, method_sets[i], 0);
  tg__lm_add_attach_methods(L);
  lua_pushcfunction(L, tg__lm_tool);
  lua_setfield(L, -2, "tool");
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, tg__lm_gc);
  lua_setfield(L, -2, "__gc");
  lua_pop(L, 1);
}

/* ---- the conventions of Lua C modules (issue 10) ------------------------
 * toolgate._VERSION (lua-cjson, luasocket); `local rt <close> =
 * toolgate.new{}` (Lua 5.4); argument errors that name the method even
 * through pcall (lua/luaarg.h). The module table is on top. */
static void conventions(lua_State *L) {
  int mod = lua_gettop(L);
  lua_pushstring(L, tg_version());
  lua_setfield(L, mod, "_VERSION");
  tg__arg_names(L, mod);
  luaL_getmetatable(L, RT_MT);
  lua_getfield(L, -1, "__index");              /* mt, methods */
  lua_getfield(L, -1, "close");
  lua_setfield(L, -3, "__close");              /* closes like rt:close() */
  tg__arg_names(L, -2);                        /* __gc; then the methods: */
  tg__arg_names(L, -1);                        /* close is 'close' */
  luaL_getmetatable(L, CALL_MT);
  lua_getfield(L, -1, "__methods");
  tg__arg_names(L, -2);
  tg__arg_names(L, -1);
  lua_settop(L, mod);
}

int luaopen_toolgate(lua_State *L);
int luaopen_toolgate(lua_State *L) {
  tg__json_open(L);
  open_runtime(L);
  tg__lm_calls_open(L);
  tg__lm_box_open(L);
  luaL_newlib(L, module_fns);
  tg__lm_schema_open(L);
  tg__json_push_null(L);
  lua_setfield(L, -2, "null");
  lua_pushstring(L, TG_VERSION);
  lua_setfield(L, -2, "version");
  lua_pushstring(L, tg_event_types());
  lua_setfield(L, -2, "event_types");
  lua_createtable(L, 0, TG_E__COUNT - 1); /* name -> its line of doc */
  for (int i = TG_E_NONE + 1; i < TG_E__COUNT; i++) {
    lua_pushstring(L, tg_error_code_doc((tg_error_code)i));
    lua_setfield(L, -2, tg_error_code_name((tg_error_code)i));
  }
  lua_setfield(L, -2, "error_codes");
  conventions(L);
  return 1;
}
