/*
 * bench_chain.c — cost of one call through the whole chain, from the call's
 * JSON bytes to its outcome, for a no-op C tool with 0, 1, 10 and 50 Lua
 * rules + pre-hooks, beside a baseline measured in the same run: a bare
 * loop that parses the same JSON with cJSON, builds the same Lua call
 * table and calls the same Lua functions directly (on LuaJIT with the JIT
 * off, as in policy states). Interleaved rounds; the fastest of each.
 *
 * Usage: bench_chain [calls-per-size]   (prints a Markdown table)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>
#include <cjson/cJSON.h>
#include "bench_util.h"
#include "toolgate.h"
#include "lua/luacompat.h"
#include "lua/luajson.h"
#if !TG_LUA54
#include <luajit.h>
#endif

static const char *const ARGS =
    "{\"path\":\"src/main.c\",\"mode\":\"read\",\"limit\":200,"
    "\"tags\":[\"a\",\"b\",\"c\"]}";

/* n rules and n pre-hooks that look at the args and never answer. */
static char *policy_source(int n) {
  size_t cap = 256 + (size_t)n * 400;
  char *s = malloc(cap), *p = s;
  p += sprintf(p, "local tg = require 'toolgate'\n");
  for (int i = 0; i < n; i++) {
    p += sprintf(p,
                 "tg.rule{name='r%d', priority=%d, check=function(call)\n"
                 "  if call.args.path == 'secret%d' then return tg.deny('no') end end}\n"
                 "tg.before_tool('*', function(call)\n"
                 "  if call.args.mode == 'x%d' then return tg.abort('no') end end)\n",
                 i, i, i, i);
  }
  return s;
}

static char *write_policies(int n) {
  char *dir = strdup("/tmp/tg-bench-XXXXXX");
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    exit(2);
  }
  char path[256];
  snprintf(path, sizeof path, "%s/10_bench.lua", dir);
  FILE *f = fopen(path, "w");
  char *src = policy_source(n);
  fputs(src, f);
  fclose(f);
  free(src);
  return dir;
}

static void noop_start(tg_exec *ex, const cJSON *args, void *ud) {
  tg_exec_finish_ok(ex, NULL);
}

static void count_done(tg_runtime *rt, const tg_outcome *o, void *ud) {
  if (o->status != TG_STATUS_OK) {
    fprintf(stderr, "bench: call failed: %s\n", o->error.message);
    exit(1);
  }
  (*(long *)ud)++;
}

typedef struct {
  char *dir;
  tg_runtime *rt;
} chain_rt;

static chain_rt chain_open(int n) {
  chain_rt c = {write_policies(n), NULL};
  tg_config cfg;
  tg_config_init(&cfg);
  cfg.db_off = 1; /* the chain alone: bench_audit measures storage */
  cfg.policies_dir = c.dir;
  char err[TG_ERRMSG];
  c.rt = tg_runtime_new(&cfg, NULL, err);
  if (!c.rt) {
    fprintf(stderr, "bench: %s\n", err);
    exit(1);
  }
  tg_tool_def def = {.name = "noop", .read_only = 1, .start = noop_start};
  tg_tool_register(c.rt, &def, err);
  return c;
}

static void chain_close(chain_rt *c) {
  tg_runtime_free(c->rt);
  bench_remove_dir(c->dir);
}

static double chain_ns(chain_rt *c, long calls) {
  char err[TG_ERRMSG];
  long done = 0;
  tg_call_request req = {.tool = "noop", .args_json = ARGS};
  uint64_t t0 = uv_hrtime();
  for (long i = 0; i < calls; i++) {
    if (tg_call_start(c->rt, &req, count_done, &done, err) < 0) {
      fprintf(stderr, "bench: %s\n", err);
      exit(1);
    }
    if ((i & 63) == 63) uv_run(tg_runtime_loop(c->rt), UV_RUN_NOWAIT);
  }
  uv_run(tg_runtime_loop(c->rt), UV_RUN_DEFAULT);
  double ns = (double)(uv_hrtime() - t0) / (double)calls;
  if (done != calls) {
    fprintf(stderr, "bench: %ld of %ld calls finished\n", done, calls);
    exit(1);
  }
  return ns;
}

/* A stand-in `toolgate` module that only collects the functions. */
static const char *const COLLECT =
    "local fns = {}\n"
    "package.loaded.toolgate = {\n"
    "  rule = function(r) fns[#fns + 1] = r.check end,\n"
    "  before_tool = function(_, f) fns[#fns + 1] = f end,\n"
    "  deny = function(m) return {tg = 'deny', reason = m} end,\n"
    "  abort = function(m) return {tg = 'abort', reason = m} end }\n"
    "return fns\n";

typedef struct {
  lua_State *L;
  int fns, nf;
} bare_state;

static bare_state bare_open(int n) {
  bare_state b;
  b.L = luaL_newstate();
  lua_State *L = b.L;
  luaL_openlibs(L);
#if !TG_LUA54
  /* the policy states run LuaJIT's interpreter (the time limit needs its
   * hooks): the baseline runs the same functions the same way */
  luaJIT_setmode(L, 0, LUAJIT_MODE_ENGINE | LUAJIT_MODE_OFF);
#endif
  tg__json_open(L);
  luaL_dostring(L, COLLECT);                     /* fns */
  char *src = policy_source(n);
  if (luaL_dostring(L, src) != LUA_OK) {
    fprintf(stderr, "bench: %s\n", lua_tostring(L, -1));
    exit(1);
  }
  free(src);
  b.fns = lua_gettop(L);
  b.nf = (int)lua_rawlen(L, b.fns);
  return b;
}

static double bare_ns(bare_state *b, long calls) {
  lua_State *L = b->L;
  size_t len = strlen(ARGS);
  uint64_t t0 = uv_hrtime();
  for (long i = 0; i < calls; i++) {
    cJSON *args = cJSON_ParseWithLength(ARGS, len);
    lua_createtable(L, 0, 7);                    /* the call table */
    lua_pushstring(L, "call-1");
    lua_setfield(L, -2, "id");
    lua_pushstring(L, "noop");
    lua_setfield(L, -2, "tool");
    tg__json_push(L, args);
    lua_setfield(L, -2, "args");
    lua_pushstring(L, "default");
    lua_setfield(L, -2, "session");
    lua_pushinteger(L, 0);
    lua_setfield(L, -2, "turn");
    lua_pushinteger(L, 1);
    lua_setfield(L, -2, "attempt");
    lua_newtable(L);
    lua_setfield(L, -2, "metadata");
    for (int k = 1; k <= b->nf; k++) {
      lua_rawgeti(L, b->fns, k);
      lua_pushvalue(L, -2);
      lua_pcall(L, 1, 1, 0);
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
    cJSON_Delete(args);
  }
  return (double)(uv_hrtime() - t0) / (double)calls;
}

int main(int argc, char **argv) {
  long calls = argc > 1 ? atol(argv[1]) : 200000;
  int only = argc > 2 ? atoi(argv[2]) : -1; /* one size, for profiling */
  const int sizes[] = {0, 1, 10, 50};
#if TG_LUA54
  const char *lua = "Lua 5.4";
#else
  const char *lua = "LuaJIT";
#endif
  printf("| %s | rules + hooks | chain ns/call | chain calls/s | bare loop "
         "ns/call | chain / bare |\n|---|---|---|---|---|---|\n", lua);
  /* Interleaved rounds, the fastest of each: a busy machine slows a
   * round, never speeds one up, so the minimum is the least noisy figure
   * and both sides meet the same conditions. */
  const int rounds = 12;
  long chunk = calls / rounds > 0 ? calls / rounds : 1;
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
    int n = sizes[i];
    if (only >= 0 && n != only) continue;
    bare_state b = bare_open(n);
    chain_rt c = chain_open(n);
    bare_ns(&b, chunk / 4); /* warm-up */
    chain_ns(&c, chunk / 4);
    double bare = 1e18, chain = 1e18;
    for (int r = 0; r < rounds; r++) {
      double x = bare_ns(&b, chunk), y = chain_ns(&c, chunk);
      if (x < bare) bare = x;
      if (y < chain) chain = y;
    }
    printf("| %s | %d + %d | %.0f | %.0f | %.0f | %.2fx |\n", lua, n, n, chain,
           1e9 / chain, bare, chain / bare);
    fflush(stdout);
    chain_close(&c);
    lua_close(b.L);
  }
  return 0;
}
