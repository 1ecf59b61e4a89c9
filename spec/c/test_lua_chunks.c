/*
 * test_lua_chunks.c — the shipped Lua library embedded as bytecode
 * (src/policy/lua_chunks.h): every toolgate.* module of lua/ is there, and
 * each loads as bytecode in this build's Lua under the name of the file it
 * stands for, so a shipped module's error names that file and its line
 * (the chunk is not stripped), not the placeholder it was dumped under.
 */
#include "helpers.h"
#include <ctype.h>
#include "lua/luacompat.h"
#include "policy/lua_chunks.h"

static const char *const shipped[] = {
    "toolgate.shell", "toolgate.agent", "toolgate.facts", "toolgate.secrets",
    "toolgate.agents.common", "toolgate.agents.claude_code", NULL};

TEST(every_shipped_module_is_embedded) {
  for (const char *const *m = shipped; *m; m++)
    if (!tg__lua_chunk(*m)) TG_FAIL("%s is not embedded", *m);
  ASSERT_TRUE(tg__lua_chunk("toolgate.nothing") == NULL);
  ASSERT_TRUE(tg__lua_chunk("toolgate") == NULL);
}

/* Loads module as name and checks the chunk is named so. */
static void load_as(lua_State *L, const char *module, const char *name) {
  const tg_lua_chunk *c = tg__lua_chunk(module);
  ASSERT_TRUE(c != NULL);
  if (tg__lua_chunk_load(L, c, name) != LUA_OK)
    TG_FAIL("%s: %s", module, lua_tostring(L, -1));
  lua_Debug ar;
  lua_pushvalue(L, -1);
  lua_getinfo(L, ">S", &ar);
  ASSERT_STR_EQ(ar.source, name);
}

TEST(loads_under_the_files_name_with_its_lines) {
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  char longname[400]; /* its length takes two bytes in either encoding */
  memset(longname, 'x', sizeof longname - 1);
  longname[0] = '@';
  longname[sizeof longname - 1] = '\0';
  for (const char *const *m = shipped; *m; m++) {
    load_as(L, *m, "@/usr/share/toolgate/lua/toolgate/x.lua");
    load_as(L, *m, longname);
    lua_pop(L, 2);
  }
  /* a runtime error inside the module names the file and a line */
  load_as(L, "toolgate.shell", "@/opt/lua/toolgate/shell.lua");
  ASSERT_INT_EQ(lua_pcall(L, 0, 1, 0), LUA_OK);
  lua_getfield(L, -1, "has_flag");
  lua_pushinteger(L, 1);
  ASSERT_TRUE(lua_pcall(L, 1, 0, 0) != LUA_OK);
  const char *err = lua_tostring(L, -1);
  const char *at = "/opt/lua/toolgate/shell.lua:";
  if (strncmp(err, at, strlen(at)) || !isdigit((unsigned char)err[strlen(at)]))
    TG_FAIL("the error does not name shell.lua:LINE: %s", err);
  lua_close(L);
}

TEST_MAIN(TEST_ENTRY(every_shipped_module_is_embedded),
          TEST_ENTRY(loads_under_the_files_name_with_its_lines))
