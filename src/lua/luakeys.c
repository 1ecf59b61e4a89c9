/*
 * luakeys.c — the strict reading of option tables (luaraw.h,
 * tg__check_keys): a key nobody reads is an error, not a silence.
 */
#include <stdio.h>
#include <string.h>
#include "luaraw.h"

static int is_known(const char *k, const char *const *known) {
  for (size_t i = 0; known[i]; i++)
    if (strcmp(k, known[i]) == 0) return 1;
  return 0;
}

/* "name, priority, ..." into buf. */
static void known_list(const char *const *known, char *buf, size_t len) {
  size_t n = 0;
  buf[0] = '\0';
  for (size_t i = 0; known[i] && n < len; i++) {
    int w = snprintf(buf + n, len - n, "%s%s", i ? ", " : "", known[i]);
    if (w < 0) break;
    n += (size_t)w;
  }
}

/* The key on top of the stack as the message shows it: 'name', [1]. */
static void key_text(lua_State *L, char *buf, size_t len) {
  if (lua_type(L, -1) == LUA_TSTRING)
    snprintf(buf, len, "'%.100s'", lua_tostring(L, -1));
  else if (lua_type(L, -1) == LUA_TNUMBER)
    snprintf(buf, len, "[%.14g]", (double)lua_tonumber(L, -1));
  else
    snprintf(buf, len, "of type %s", luaL_typename(L, -1));
}

void tg__check_keys(lua_State *L, int idx, const char *fn,
                    const char *const *known) {
  idx = lua_absindex(L, idx);
  lua_pushnil(L);
  while (lua_next(L, idx)) { /* raw: no __pairs, no __index */
    lua_pop(L, 1);
    if (lua_type(L, -1) == LUA_TSTRING && !tg__has_nul(L, -1) &&
        is_known(lua_tostring(L, -1), known))
      continue;
    char key[128], list[400];
    key_text(L, key, sizeof key);
    known_list(known, list, sizeof list);
    luaL_error(L, "%s: unknown key %s (known: %s)", fn, key, list);
  }
}
