/*
 * fuzz_shell.c — the shell analysis policies judge commands with
 * (lua/toolgate/shell.lua: shell.split), in the embedded Lua the runtime
 * uses, on any bytes as the command line. Proves: split never raises (it
 * returns a list of commands, or nil and a message: its parse errors and
 * its limits alike), never gives more commands than MAX_COMMANDS, every
 * command has an argv list of strings, and one split stays within a
 * budget of Lua instructions and memory (no runaway backtracking or brace
 * expansion). The state lives across inputs (made once); each input's
 * garbage is collected before the next. The splitter is Lua, which
 * libFuzzer's coverage does not see: a line hook feeds it the pairs of
 * Lua lines run one after the other, as extra counters.
 */
#include <string.h>
#include <lauxlib.h>
#include <lualib.h>
#include "fuzz.h"

/* One split may run at most this many Lua instructions (a 64 KiB line
 * takes a few million, README) and hold this much memory. */
#define BUDGET_INSTRUCTIONS 50000000L
#define BUDGET_BYTES (512u << 20)
#define HOOK_EVERY 100000

static lua_State *L;
static long ran;
static size_t used, peak;

static void *alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  (void)ud;
  if (!ptr) osize = 0;
  if (nsize == 0) {
    used -= osize;
    free(ptr);
    return NULL;
  }
  if (used - osize + nsize > BUDGET_BYTES) return NULL; /* a memory error */
  void *p = realloc(ptr, nsize);
  if (p) {
    used = used - osize + nsize;
    if (used > peak) peak = used;
  }
  return p;
}

/* libFuzzer reads these as coverage (-use_counters). */
#define NCOUNTERS 65536
__attribute__((section("__libfuzzer_extra_counters")))
static uint8_t counters[NCOUNTERS];
static unsigned prev_line;

static void hook(lua_State *l, lua_Debug *ar) {
  if (ar->event == LUA_HOOKLINE) {
    unsigned at = (unsigned)ar->currentline;
    unsigned i = (prev_line * 2654435761u ^ at) % NCOUNTERS;
    if (counters[i] < 255) counters[i]++;
    prev_line = at;
    return;
  }
  ran += HOOK_EVERY;
  if (ran > BUDGET_INSTRUCTIONS) luaL_error(l, "over the instruction budget");
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  L = lua_newstate(alloc, NULL);
  luaL_openlibs(L);
  if (luaL_dostring(L, "package.path = '" TG_SOURCE_DIR "/lua/?.lua;'"
                       " .. package.path\n"
                       "shell = require 'toolgate.shell'") != LUA_OK) {
    fprintf(stderr, "fuzz_shell: %s\n", lua_tostring(L, -1));
    abort();
  }
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  lua_settop(L, 0);
  lua_getglobal(L, "shell");
  lua_getfield(L, 1, "MAX_COMMANDS");
  lua_Integer max_commands = lua_tointeger(L, -1);
  lua_getfield(L, 1, "split");
  lua_pushlstring(L, (const char *)data, size);
  ran = 0;
  peak = used;
  size_t before = used;
  prev_line = 0;
  lua_sethook(L, hook, LUA_MASKCOUNT | LUA_MASKLINE, HOOK_EVERY);
  int rc = lua_pcall(L, 1, 2, 0);
  lua_sethook(L, NULL, 0, 0);
  FUZZ_ASSERT(rc == LUA_OK, "shell.split raised: %s",
              lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1)
              : luaL_typename(L, -1));
  FUZZ_ASSERT(peak - before < BUDGET_BYTES / 2,
              "one split held %zu bytes", peak - before);
  if (lua_isnil(L, -2)) {
    FUZZ_ASSERT(lua_type(L, -1) == LUA_TSTRING, "nil without a message");
  } else {
    FUZZ_ASSERT(lua_istable(L, -2), "split gave a %s", luaL_typename(L, -2));
    lua_Integer n = (lua_Integer)luaL_len(L, -2);
    FUZZ_ASSERT(n <= max_commands, "%lld commands, over MAX_COMMANDS",
                (long long)n);
    for (lua_Integer i = 1; i <= n; i++) {
      lua_rawgeti(L, -2, i);
      FUZZ_ASSERT(lua_istable(L, -1), "command %lld is not a table",
                  (long long)i);
      lua_getfield(L, -1, "argv");
      FUZZ_ASSERT(lua_istable(L, -1), "command %lld has no argv", (long long)i);
      lua_Integer m = (lua_Integer)luaL_len(L, -1);
      for (lua_Integer k = 1; k <= m; k++) {
        lua_rawgeti(L, -1, k);
        FUZZ_ASSERT(lua_type(L, -1) == LUA_TSTRING,
                    "command %lld argv[%lld] is not a string", (long long)i,
                    (long long)k);
        lua_pop(L, 1);
      }
      lua_pop(L, 2);
    }
  }
  lua_settop(L, 0);
  lua_gc(L, LUA_GCCOLLECT, 0);
  return 0;
}
