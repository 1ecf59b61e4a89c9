/*
 * bench_watchdog.c — how long a runaway call into policy code runs before
 * the time limit stops it, against the configured limit: a rule that
 * loops, one that fans out through coroutines, one that loops under
 * pcall/xpcall, and a backtracking pattern. Each is started `runs` times
 * per limit; the table shows the median and the worst time from the call's
 * start to its outcome, and the worst overshoot past the limit.
 *
 * Usage: bench_watchdog [runs]   (prints a Markdown table)
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

static const char *const POLICY =
    "local tg = require 'toolgate'\n"
    "tg.rule{name='runaway', check=function(call)\n"
    "  local how = call.args.how\n"
    "  if how == 'loop' then while true do end end\n"
    "  if how == 'coroutines' then\n"
    "    while true do coroutine.wrap(function() for i = 1, 100 do end end)() end\n"
    "  end\n"
    "  if how == 'pcall' then\n"
    "    while true do xpcall(function() while true do end end,\n"
    "                         function() while true do end end) end\n"
    "  end\n"
    "  if how == 'pattern' then\n"
    "    return (('a'):rep(30)):find(('a*'):rep(30) .. 'b')\n"
    "  end\n"
    "end}\n";

static const char *const KINDS[] = {"loop", "coroutines", "pcall", "pattern"};

static char *write_policy(void) {
  char *dir = strdup("/tmp/tg-bench-wd-XXXXXX");
  if (!dir || !mkdtemp(dir)) {
    perror("mkdtemp");
    exit(2);
  }
  char path[256];
  snprintf(path, sizeof path, "%s/10_runaway.lua", dir);
  FILE *f = fopen(path, "w");
  if (!f) {
    perror(path);
    exit(2);
  }
  fputs(POLICY, f);
  fclose(f);
  return dir;
}

static void noop_start(tg_exec *ex, const cJSON *args, void *ud) {
  tg_exec_finish_ok(ex, NULL);
}

typedef struct {
  int done;
  tg_status status;
  char message[512];
} result;

static void on_done(tg_runtime *rt, const tg_outcome *o, void *ud) {
  result *r = ud;
  r->done = 1;
  r->status = o->status;
  snprintf(r->message, sizeof r->message, "%s",
           o->error.message ? o->error.message : "");
}

/* Milliseconds from start to outcome of one runaway call. */
static double one_call(tg_runtime *rt, const char *how) {
  char args[64], err[TG_ERRMSG];
  snprintf(args, sizeof args, "{\"how\":\"%s\"}", how);
  tg_call_request req = {.tool = "noop", .args_json = args};
  result r = {0};
  uint64_t t0 = uv_hrtime();
  if (tg_call_start(rt, &req, on_done, &r, err) < 0) {
    fprintf(stderr, "bench: %s\n", err);
    exit(1);
  }
  while (!r.done) uv_run(tg_runtime_loop(rt), UV_RUN_ONCE);
  double ms = (double)(uv_hrtime() - t0) / 1e6;
  if (r.status == TG_STATUS_OK || !strstr(r.message, "time limit")) {
    fprintf(stderr, "bench: '%s' was not stopped by the time limit: %s\n",
            how, r.message);
    exit(1);
  }
  return ms;
}

static void measure(const char *dir, uint32_t limit, const char *how,
                    int runs, const char *lua) {
  tg_config cfg;
  tg_config_init(&cfg);
  cfg.db_off = 1; /* the chain alone: bench_audit measures storage */
  cfg.policies_dir = dir;
  cfg.policy_time_limit_ms = limit;
  char err[TG_ERRMSG];
  tg_runtime *rt = tg_runtime_new(&cfg, NULL, err);
  if (!rt) {
    fprintf(stderr, "bench: %s\n", err);
    exit(1);
  }
  tg_tool_def def = {.name = "noop", .read_only = 1, .start = noop_start};
  tg_tool_register(rt, &def, err);
  double *t = calloc((size_t)runs, sizeof *t);
  for (int i = 0; i < runs; i++) t[i] = one_call(rt, how);
  qsort(t, (size_t)runs, sizeof *t, bench_cmp_double);
  double median = t[runs / 2], worst = t[runs - 1];
  printf("| %s | %s | %u | %.1f | %.1f | %.2fx | +%.1f |\n", lua, how, limit,
         median, worst, median / limit, worst - limit);
  fflush(stdout);
  free(t);
  tg_runtime_free(rt);
}

int main(int argc, char **argv) {
  int runs = argc > 1 ? atoi(argv[1]) : 9;
  if (runs < 1) runs = 1;
#if TG_LUA54
  const char *lua = "Lua 5.4";
#else
  const char *lua = "LuaJIT";
#endif
  char *dir = write_policy();
  printf("| %s | runaway rule | limit ms | median ms to stop | worst ms | "
         "median / limit | worst past limit ms |\n"
         "|---|---|---|---|---|---|---|\n", lua);
  const uint32_t limits[] = {20, 100, 500};
  for (size_t k = 0; k < sizeof KINDS / sizeof *KINDS; k++)
    for (size_t l = 0; l < sizeof limits / sizeof *limits; l++)
      measure(dir, limits[l], KINDS[k], runs, lua);
  char path[300];
  snprintf(path, sizeof path, "%s/10_runaway.lua", dir);
  unlink(path);
  rmdir(dir);
  free(dir);
  return 0;
}
