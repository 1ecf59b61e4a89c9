/*
 * bench_reload.c — what hot reload costs:
 *
 *   1. building and swapping a generation of 1, 10 and 100 small policy
 *      files (one rule and one pre-hook each) with tg_runtime_load_policies:
 *      reading the files, a new lua_State, running them, the swap, and
 *      freeing the old generation; median and p90 of many;
 *   2. call latency (start to outcome) with a fixed number of calls in
 *      flight, through 10 policy files, with no reloads and with a reload
 *      every 10 ms, measured in the same run in alternating phases. The
 *      tool is a C no-op that finishes on the next loop turn, so calls are
 *      in flight while a reload runs on the loop.
 *
 * Usage: bench_reload [phase-ms [in-flight]]   (prints Markdown tables)
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

static const char *const ARGS = "{\"path\":\"src/main.c\",\"mode\":\"read\"}";

/* ---- policy folders ------------------------------------------------------ */

static char *write_policies(int nfiles) {
  char *dir = strdup("/tmp/tg-bench-reload-XXXXXX");
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    exit(2);
  }
  for (int i = 0; i < nfiles; i++) {
    char path[256];
    snprintf(path, sizeof path, "%s/%03d_p.lua", dir, i);
    FILE *f = fopen(path, "w");
    fprintf(f,
            "local tg = require 'toolgate'\n"
            "tg.rule { name = 'r%d', priority = %d, tools = { 'noop' },\n"
            "  check = function(call)\n"
            "    if call.args.path == 'secret%d' then return tg.deny('no') end end }\n"
            "tg.before_tool('noop', function(call)\n"
            "  if call.args.mode == 'x%d' then return tg.abort('no') end end)\n",
            i, i, i, i);
    fclose(f);
  }
  return dir;
}

/* ---- 1. build and swap ------------------------------------------------------ */

static void bench_swap(int nfiles, int runs, double *median, double *p90) {
  char *dir = write_policies(nfiles);
  tg_config cfg;
  char err[TG_ERRMSG];
  tg_config_init(&cfg);
  cfg.db_off = 1; /* the chain alone: bench_audit measures storage */
  cfg.policies_dir = dir;
  cfg.builtin_tools = 0;
  tg_runtime *rt = tg_runtime_new(&cfg, NULL, err);
  if (!rt) {
    fprintf(stderr, "bench: %s\n", err);
    exit(2);
  }
  double *t = malloc((size_t)runs * sizeof *t);
  for (int i = 0; i < runs; i++) {
    uint64_t t0 = uv_hrtime();
    if (tg_runtime_load_policies(rt, NULL, err) < 0) {
      fprintf(stderr, "bench: %s\n", err);
      exit(2);
    }
    t[i] = (double)(uv_hrtime() - t0) / 1e6;
  }
  *median = bench_pct(t, (size_t)runs, 0.5);
  *p90 = bench_pct(t, (size_t)runs, 0.9);
  free(t);
  tg_runtime_free(rt);
  bench_remove_dir(dir);
}

/* ---- 2. latency while reloading ------------------------------------------- */

typedef struct {
  tg_runtime *rt;
  uv_idle_t finisher;        /* finishes queued attempts on the next turn */
  uv_timer_t reloader, phase_end;
  tg_exec **queue;
  size_t nqueue, capqueue;
  int in_flight, want_in_flight, draining;
  double *lat[2];            /* µs, per mode: 0 no reloads, 1 reloading */
  size_t nlat[2], caplat[2];
  int mode;
  long reloads;
} lat_bench;

static void finish_queued(uv_idle_t *h) {
  lat_bench *b = h->data;
  size_t n = b->nqueue;
  tg_exec **batch = malloc(n * sizeof *batch);
  memcpy(batch, b->queue, n * sizeof *batch);
  b->nqueue = 0; /* attempts started by the finishes below queue again */
  for (size_t i = 0; i < n; i++) tg_exec_finish_ok(batch[i], cJSON_CreateTrue());
  free(batch);
  if (!b->nqueue) uv_idle_stop(h);
}

static void noop_start(tg_exec *ex, const cJSON *args, void *ud) {
  lat_bench *b = ud;
  if (b->nqueue == b->capqueue) {
    b->capqueue = b->capqueue ? b->capqueue * 2 : 64;
    b->queue = realloc(b->queue, b->capqueue * sizeof *b->queue);
  }
  b->queue[b->nqueue++] = ex;
  uv_idle_start(&b->finisher, finish_queued);
}

static void start_call(lat_bench *b);

static void record(lat_bench *b, double us) {
  int m = b->mode;
  if (b->nlat[m] == b->caplat[m]) {
    b->caplat[m] = b->caplat[m] ? b->caplat[m] * 2 : 1 << 16;
    b->lat[m] = realloc(b->lat[m], b->caplat[m] * sizeof *b->lat[m]);
  }
  b->lat[m][b->nlat[m]++] = us;
}

static void on_done(tg_runtime *rt, const tg_outcome *o, void *ud) {
  lat_bench *b = ud;
  if (o->status != TG_STATUS_OK) {
    fprintf(stderr, "bench: call failed: %s\n", o->error.message);
    exit(2);
  }
  record(b, o->duration_ms * 1000.0);
  b->in_flight--;
  if (!b->draining) start_call(b);
  else if (!b->in_flight) uv_stop(tg_runtime_loop(rt));
}

static void start_call(lat_bench *b) {
  tg_call_request req;
  char err[TG_ERRMSG];
  memset(&req, 0, sizeof req);
  req.tool = "noop";
  req.args_json = ARGS;
  b->in_flight++;
  if (tg_call_start(b->rt, &req, on_done, b, err) < 0) {
    fprintf(stderr, "bench: %s\n", err);
    exit(2);
  }
}

static void reload_cb(uv_timer_t *t) {
  lat_bench *b = t->data;
  char err[TG_ERRMSG];
  if (tg_runtime_load_policies(b->rt, NULL, err) < 0) {
    fprintf(stderr, "bench: %s\n", err);
    exit(2);
  }
  b->reloads++;
}

static void phase_end_cb(uv_timer_t *t) {
  lat_bench *b = t->data;
  b->draining = 1;
  uv_timer_stop(&b->reloader);
}

static void run_phase(lat_bench *b, int mode, uint64_t ms) {
  uv_loop_t *loop = tg_runtime_loop(b->rt);
  b->mode = mode;
  b->draining = 0;
  uv_update_time(loop);
  if (mode) uv_timer_start(&b->reloader, reload_cb, 10, 10);
  uv_timer_start(&b->phase_end, phase_end_cb, ms, 0);
  while (b->in_flight < b->want_in_flight) start_call(b);
  uv_run(loop, UV_RUN_DEFAULT);
}

static tg_runtime *latency_runtime(const char *dir, lat_bench *b) {
  tg_config cfg;
  char err[TG_ERRMSG];
  tg_config_init(&cfg);
  cfg.db_off = 1; /* the chain alone: bench_audit measures storage */
  cfg.policies_dir = dir;
  cfg.builtin_tools = 0;
  cfg.default_verdict = TG_VERDICT_ALLOW;
  tg_runtime *rt = tg_runtime_new(&cfg, NULL, err);
  tg_tool_def def = {.name = "noop", .start = noop_start, .ud = b};
  if (!rt || tg_tool_register(rt, &def, err) < 0) {
    fprintf(stderr, "bench: %s\n", err);
    exit(2);
  }
  return rt;
}

static void bench_latency(uint64_t phase_ms, int in_flight) {
  char *dir = write_policies(10);
  lat_bench b;
  memset(&b, 0, sizeof b);
  b.want_in_flight = in_flight;
  b.rt = latency_runtime(dir, &b);
  uv_loop_t *loop = tg_runtime_loop(b.rt);
  uv_idle_init(loop, &b.finisher);
  uv_timer_init(loop, &b.reloader);
  uv_timer_init(loop, &b.phase_end);
  b.finisher.data = b.reloader.data = b.phase_end.data = &b;
  for (int round = 0; round < 3; round++) { /* alternate: drift hits both */
    run_phase(&b, 0, phase_ms);
    run_phase(&b, 1, phase_ms);
  }
  printf("| reloads | calls | p50 µs | p99 µs | p99.9 µs | max µs |\n"
         "|---|---|---|---|---|---|\n");
  for (int m = 0; m < 2; m++) {
    printf("| %s | %zu | %.1f | %.1f | %.1f | %.1f |\n",
           m ? "every 10 ms" : "none", b.nlat[m], bench_pct(b.lat[m], b.nlat[m], 0.5),
           bench_pct(b.lat[m], b.nlat[m], 0.99), bench_pct(b.lat[m], b.nlat[m], 0.999),
           b.nlat[m] ? b.lat[m][b.nlat[m] - 1] : 0);
  }
  double p99[2] = {bench_pct(b.lat[0], b.nlat[0], 0.99), bench_pct(b.lat[1], b.nlat[1], 0.99)};
  printf("\n%ld reloads of 10 files; %d calls in flight; p99 while reloading "
         "is %.2fx p99 without (goal: under 2x)\n", b.reloads, in_flight,
         p99[0] > 0 ? p99[1] / p99[0] : 0);
  uv_close((uv_handle_t *)&b.finisher, NULL);
  uv_close((uv_handle_t *)&b.reloader, NULL);
  uv_close((uv_handle_t *)&b.phase_end, NULL);
  tg_runtime_free(b.rt);
  free(b.lat[0]);
  free(b.lat[1]);
  free(b.queue);
  bench_remove_dir(dir);
}

int main(int argc, char **argv) {
  uint64_t phase_ms = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000;
  int in_flight = argc > 2 ? atoi(argv[2]) : 8;
  if (!phase_ms || in_flight < 1) {
    fprintf(stderr, "usage: bench_reload [phase-ms [in-flight]]\n");
    return 2;
  }
#if TG_LUA54
  const char *lua = "Lua 5.4";
#else
  const char *lua = "LuaJIT";
#endif
  static const int sizes[3] = {1, 10, 100};
  static const int runs[3] = {500, 300, 100};
  printf("%s: build and swap a generation\n\n"
         "| files | runs | median ms | p90 ms |\n|---|---|---|---|\n", lua);
  for (int i = 0; i < 3; i++) {
    double med, p90;
    bench_swap(sizes[i], runs[i], &med, &p90);
    printf("| %d | %d | %.3f | %.3f |\n", sizes[i], runs[i], med, p90);
  }
  printf("\n%s: call latency, 10 files (10 rules + 10 hooks), %d in flight, "
         "3 x %llu ms per mode\n\n", lua, in_flight,
         (unsigned long long)phase_ms);
  bench_latency(phase_ms, in_flight);
  return 0;
}
