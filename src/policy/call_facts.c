/*
 * call_facts.c — the call tables' metatable (call_facts.h): __index
 * answers `paths` and `commands` through require("toolgate.facts"),
 * inside the rule's own protected call and limits, and `network` from
 * the configuration's marks (core/network.h).
 *
 * The answers are kept beside the table, in a weak registry table keyed
 * by it, not in it: a rule that stores its own `paths` in the call table
 * has then written a fact (tg__call_facts_untouched sees it), where a
 * cache in the table could not be told from a forgery.
 */
#include <string.h>
#include "call_facts.h"
#include "generation.h"
#include "core/network.h"
#include "lua/luaweak.h"

#define CALL_MT "toolgate.call"
#define CACHE "toolgate.call_facts" /* call table -> {paths=, commands=} */

static const char *const facts[] = {"paths", "commands", "network", NULL};

static int is_fact(lua_State *L, int idx) {
  if (lua_type(L, idx) != LUA_TSTRING) return 0;
  const char *k = lua_tostring(L, idx);
  for (int i = 0; facts[i]; i++)
    if (!strcmp(k, facts[i])) return 1;
  return 0;
}

/* Pushes the cache's entry for the table at idx (made on demand). */
static void push_entry(lua_State *L, int idx) {
  idx = lua_absindex(L, idx);
  tg__push_weak_registry(L, CACHE);
  lua_pushvalue(L, idx);
  lua_rawget(L, -2);
  if (!lua_istable(L, -1)) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushvalue(L, idx);
    lua_pushvalue(L, -2);
    lua_rawset(L, -4);
  }
  lua_remove(L, -2);
}

/* 1 when tool is toolgate's own or a policy's (no upstream server's):
 * the configuration marks only servers' tools, so there is nothing to
 * read for it (the hook's Bash, Read, Edit are exec, read_file, ...). */
static int own_tool(const tg_generation *g, const char *tool) {
  for (size_t i = 0; i < g->core->nctools; i++)
    if (!strcmp(g->core->ctools[i]->name, tool))
      return !g->core->ctools[i]->group;
  for (size_t i = 0; i < g->ntools; i++)
    if (!strcmp(g->tools[i]->name, tool)) return 1;
  return 0;
}

/* Whether the call's tool reaches the network, as the configuration
 * marks it; raises when that cannot be known (the rule fails closed). */
static int network_of(lua_State *L, int call) {
  lua_getfield(L, LUA_REGISTRYINDEX, TG_GENERATION_KEY);
  tg_generation *g = (tg_generation *)lua_touserdata(L, -1);
  lua_pop(L, 1);
  lua_pushliteral(L, "tool");
  lua_rawget(L, call);
  const char *tool = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1)
                                                    : NULL;
  char err[TG_ERRMSG] = "";
  int rc = !g || !tool || own_tool(g, tool) ? 0
                                            : tg__network_of(g->core, tool, err);
  lua_pop(L, 1); /* the call table keeps the name */
  if (rc < 0) return luaL_error(L, "call.network: %s", err);
  return rc;
}

/* __index(call, key) */
static int facts_index(lua_State *L) {
  if (!is_fact(L, 2)) return 0;
  push_entry(L, 1); /* 3 */
  lua_pushvalue(L, 2);
  lua_rawget(L, 3);
  if (!lua_isnil(L, -1)) return 1;
  lua_pop(L, 1);
  if (!strcmp(lua_tostring(L, 2), "network")) {
    lua_pushboolean(L, network_of(L, 1));
    lua_pushvalue(L, 2);
    lua_pushvalue(L, -2);
    lua_rawset(L, 3);
    return 1;
  }
  lua_getglobal(L, "require");
  lua_pushliteral(L, "toolgate.facts");
  lua_call(L, 1, 1);
  if (!lua_istable(L, -1))
    return luaL_error(L, "require \"toolgate.facts\" did not give a table");
  lua_pushvalue(L, 2);
  lua_rawget(L, -2);
  lua_pushvalue(L, 1);
  lua_call(L, 1, 1);
  lua_pushvalue(L, 2);
  lua_pushvalue(L, -2);
  lua_rawset(L, 3); /* kept: nil keeps nothing */
  return 1;
}

#define ORIGIN "toolgate.call_origin" /* call table -> {session, id, tool} */

/* t[k] raw, when a string, into o[k]. */
static void copy_string(lua_State *L, int t, int o, const char *k) {
  lua_pushstring(L, k);
  lua_rawget(L, t);
  if (lua_type(L, -1) == LUA_TSTRING) {
    lua_pushstring(L, k);
    lua_insert(L, -2);
    lua_rawset(L, o);
  } else {
    lua_pop(L, 1);
  }
}

/* The first time a table gets the metatable, C has just built it: what
 * it says of the call is kept aside, where policy code cannot write. */
static void keep_origin(lua_State *L, int idx) {
  tg__push_weak_registry(L, ORIGIN);
  int reg = lua_gettop(L);
  lua_pushvalue(L, idx);
  lua_rawget(L, reg);
  int known = !lua_isnil(L, -1);
  lua_pop(L, 1);
  if (!known) {
    lua_createtable(L, 0, 3);
    int o = lua_gettop(L);
    copy_string(L, idx, o, "session");
    copy_string(L, idx, o, "id");
    copy_string(L, idx, o, "tool");
    lua_pushliteral(L, "metadata");
    lua_rawget(L, idx);
    if (lua_istable(L, -1)) { /* an agent's own id and name of the call */
      int md = lua_gettop(L);
      lua_pushliteral(L, "agent_tool_use_id");
      lua_rawget(L, md);
      if (lua_type(L, -1) == LUA_TSTRING) lua_setfield(L, o, "id");
      else lua_pop(L, 1);
      lua_pushliteral(L, "agent_tool");
      lua_rawget(L, md);
      if (lua_type(L, -1) == LUA_TSTRING) lua_setfield(L, o, "tool");
      else lua_pop(L, 1);
    }
    lua_pop(L, 1);
    lua_pushvalue(L, idx);
    lua_insert(L, -2);
    lua_rawset(L, reg);
  }
  lua_pop(L, 1);
}

int tg__call_facts_origin(lua_State *L, int idx) {
  idx = lua_absindex(L, idx);
  lua_getfield(L, LUA_REGISTRYINDEX, ORIGIN);
  if (!lua_istable(L, -1)) {
    lua_pop(L, 1);
    return 0;
  }
  lua_pushvalue(L, idx);
  lua_rawget(L, -2);
  lua_remove(L, -2);
  if (lua_istable(L, -1)) return 1;
  lua_pop(L, 1);
  return 0;
}

void tg__call_facts_attach(lua_State *L, int idx) {
  idx = lua_absindex(L, idx);
  keep_origin(L, idx);
  if (luaL_newmetatable(L, CALL_MT)) {
    lua_pushcfunction(L, facts_index);
    lua_setfield(L, -2, "__index");
  }
  lua_setmetatable(L, idx);
}

void tg__call_facts_reset(lua_State *L, int idx) {
  idx = lua_absindex(L, idx);
  for (int i = 0; facts[i]; i++) { /* a rule's own, stored in the table */
    lua_pushstring(L, facts[i]);
    lua_pushnil(L);
    lua_rawset(L, idx);
  }
  lua_getfield(L, LUA_REGISTRYINDEX, CACHE);
  if (lua_istable(L, -1)) {
    lua_pushvalue(L, idx);
    lua_pushnil(L);
    lua_rawset(L, -3);
  }
  lua_pop(L, 1);
  tg__call_facts_attach(L, idx);
}

int tg__call_facts_untouched(lua_State *L, int idx) {
  idx = lua_absindex(L, idx);
  if (!lua_getmetatable(L, idx)) return 0;
  luaL_getmetatable(L, CALL_MT);
  int ok = lua_rawequal(L, -1, -2);
  lua_pop(L, 2);
  for (int i = 0; ok && facts[i]; i++) {
    lua_pushstring(L, facts[i]);
    lua_rawget(L, idx);
    ok = lua_isnil(L, -1);
    lua_pop(L, 1);
  }
  return ok;
}
