/*
 * api_redact.c — tg.redact(fn): the policies' redactor. The function is
 * kept in the generation's registry; the core calls it (through the
 * pointer the runtime gave core/redact.h) with every string about to
 * leave: events, audit rows, stored messages and memories, exports. It
 * runs under the sandbox's time limit like every policy call. It fails
 * closed: an error or a wrong return masks the whole string.
 */
#include <string.h>
#include "api_redact.h"
#include "generation.h"
#include "policy/sandbox.h"
#include "base/util.h"

#define REDACT_KEY "toolgate.redact"

int tg__l_redact(lua_State *L) {
  tg_generation *g = (tg_generation *)lua_touserdata(L, lua_upvalueindex(1));
  if (!g->loading)
    return luaL_error(L, "tg.redact: registration is only possible while the "
                         "policy file loads (call it at the top level of the "
                         "file)");
  luaL_checktype(L, 1, LUA_TFUNCTION);
  lua_getfield(L, LUA_REGISTRYINDEX, REDACT_KEY);
  int had = !lua_isnil(L, -1);
  lua_pop(L, 1);
  if (had)
    return luaL_error(L, "tg.redact: a redactor is registered already (one "
                         "function sees every string: mask all in it)");
  lua_pushvalue(L, 1);
  lua_setfield(L, LUA_REGISTRYINDEX, REDACT_KEY);
  g->redactor = 1;
  return 0;
}

char *tg__policy_redact(void *origin, const char *s) {
  tg_generation *g = origin;
  lua_State *L = g && g->redactor ? g->L : NULL;
  if (!L || !s) return NULL;
  int top = lua_gettop(L);
  lua_getfield(L, LUA_REGISTRYINDEX, REDACT_KEY);
  if (!lua_isfunction(L, -1)) {
    lua_settop(L, top);
    return NULL;
  }
  lua_pushstring(L, s);
  char *out = NULL;
  if (tg__sandbox_pcall(g->sb, L, 1, 1) != LUA_OK) {
    out = tg__strdup("[REDACTED: the redactor failed]");
  } else if (lua_type(L, -1) == LUA_TSTRING) {
    size_t n = 0;
    const char *r = lua_tolstring(L, -1, &n);
    if (memchr(r, '\0', n)) out = tg__strdup("[REDACTED]");
    else if (strcmp(r, s) != 0) out = tg__strdup(r);
  } else if (!lua_isnil(L, -1)) {
    out = tg__strdup("[REDACTED: the redactor returned no string]");
  }
  lua_settop(L, top);
  return out;
}
