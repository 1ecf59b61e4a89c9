/*
 * bench_pattern.c — what the sandbox's bounded patterns (sandbox_pattern.c)
 * cost next to the builtin ones: ordinary policy patterns, each run many
 * times from Lua (so the call overhead a policy pays is in both), the
 * builtin string function against the bounded one with a poll that does
 * nothing. LuaJIT runs with the JIT off, as in policy states.
 *
 * Usage: bench_pattern [iterations]   (prints a Markdown table)
 */
#include <stdio.h>
#include <stdlib.h>
#include "lua/luacompat.h"
#include "policy/sandbox_pattern.h"
#if !TG_LUA54
#include <luajit.h>
#endif

static void no_poll(lua_State *L) { (void)L; }

static const char *const SCRIPT =
    "local N = ...\n"
    "local text = ('lorem ipsum dolor sit amet, 42 consectetur; '):rep(200) .. 'id 2024'\n"
    "local cases = {\n"
    "  { 'find, plain', 'find', '/usr/local/bin/tool', 'bin', 1, true },\n"
    "  { 'find, no specials', 'find', '/usr/local/bin/tool', 'local' },\n"
    "  { 'find %d%d%d%d in 9 KB', 'find', text, '%d%d%d%d' },\n"
    "  { 'find rm -r', 'find', 'cd /tmp && rm -rf build', '^.-rm%s+%-%a*r' },\n"
    "  { 'match key = value', 'match', 'key = value', '^(%w+)%s*=%s*(%w+)$' },\n"
    "  { 'match .-%.lua$', 'match', 'src/policy/rules/deny.lua', '^(.-)([^/]+)%.lua$' },\n"
    "  { 'gsub o -> 0', 'gsub', 'hello world from the sandbox', 'o', '0' },\n"
    "  { 'gsub %s+ -> one', 'gsub', 'a  b\\t\\tc   d  e', '%s+', ' ' },\n"
    "  { 'gmatch words of 1 KB', 'gmatch', text:sub(1, 1000), '%a+' },\n"
    "}\n"
    "local function time(fn, c)\n"
    "  local t0 = os.clock()\n"
    "  if c[2] == 'gmatch' then\n"
    "    for _ = 1, N / 50 do for _ in fn(c[3], c[4]) do end end\n"
    "    return (os.clock() - t0) / (N / 50)\n"
    "  end\n"
    "  for _ = 1, N do fn(c[3], c[4], c[5], c[6]) end\n"
    "  return (os.clock() - t0) / N\n"
    "end\n"
    "print(('| pattern (%s) | builtin ns/call | sandbox ns/call | ratio |'):format(_VERSION))\n"
    "print('| --- | ---: | ---: | ---: |')\n"
    "for _, c in ipairs(cases) do\n"
    "  local a = math.huge local b = math.huge\n"
    "  for _ = 1, 3 do\n"
    "    a = math.min(a, time(string[c[2]], c))\n"
    "    b = math.min(b, time(P[c[2]], c))\n"
    "  end\n"
    "  print(('| %s | %.0f | %.0f | %.2f |'):format(c[1], a * 1e9, b * 1e9, b / a))\n"
    "end\n";

int main(int argc, char **argv) {
  lua_Integer iterations = argc > 1 ? atoll(argv[1]) : 200000;
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
#if !TG_LUA54
  luaJIT_setmode(L, 0, LUAJIT_MODE_ENGINE | LUAJIT_MODE_OFF);
#endif
  lua_newtable(L);
  tg__pattern_register(L, no_poll);
  lua_setglobal(L, "P");
  if (luaL_loadstring(L, SCRIPT) != 0) {
    fprintf(stderr, "%s\n", lua_tostring(L, -1));
    return 1;
  }
  lua_pushinteger(L, iterations);
  if (lua_pcall(L, 1, 0, 0) != 0) {
    fprintf(stderr, "%s\n", lua_tostring(L, -1));
    return 1;
  }
  lua_close(L);
  return 0;
}
