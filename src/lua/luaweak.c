/* luaweak.c — the registry's weakly keyed tables (luaweak.h). */
#include "luaweak.h"

void tg__push_weak_registry(lua_State *L, const char *key) {
  lua_getfield(L, LUA_REGISTRYINDEX, key);
  if (lua_istable(L, -1)) return;
  lua_pop(L, 1);
  lua_newtable(L);
  lua_createtable(L, 0, 1);
  lua_pushliteral(L, "k");
  lua_setfield(L, -2, "__mode");
  lua_setmetatable(L, -2);
  lua_pushvalue(L, -1);
  lua_setfield(L, LUA_REGISTRYINDEX, key);
}
