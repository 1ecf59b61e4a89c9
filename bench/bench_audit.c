/*
 * bench_audit.c — what the audit trail costs, in one run, audit
 * on (a real file, WAL) beside audit off (tg_config.db_off):
 *
 *   1. throughput: calls/s of a no-op C tool through the whole chain with
 *      0 and with 10 Lua rules + 10 pre-hooks, calls started as fast as
 *      the loop takes them, up to 256 unanswered; with audit on, a call is
 *      done only when its record is committed, so calls/s is also the
 *      audit rows/s sustained; interleaved rounds, the fastest of each;
 *   2. latency: start to outcome of calls of a tool that takes 1 ms (a
 *      timer), 16 in flight, through the 10 + 10 policies, p50 / p99 /
 *      p99.9 with audit off and on, in alternating phases; and the loop's
 *      own lag meanwhile (how late a 1 ms repeating timer fires): the
 *      writer thread must never hold the loop up;
 *   3. the approval lookup a call makes when a rule asks: the one read the
 *      loop does itself (an indexed SELECT over the approvals of the
 *      call's tool, 1000 approvals in the table), timed while the writer
 *      commits a stream of calls.
 *
 * Usage: bench_audit [calls-per-size]   (prints Markdown tables)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "bench_util.h"
#include "toolgate.h"
#include "kit/kit.h"
#include "lua/luacompat.h"
#include "store/store.h"

static const char *const ARGS =
    "{\"path\":\"src/main.c\",\"mode\":\"read\",\"limit\":200,"
    "\"tags\":[\"a\",\"b\",\"c\"]}";

static char *tmp_dir(void) {
  char *dir = strdup("/tmp/tg-bench-audit-XXXXXX");
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    exit(2);
  }
  return dir;
}

/* n rules and n pre-hooks that look at the args and never answer. */
static void write_policies(const char *dir, int n) {
  char path[300];
  snprintf(path, sizeof path, "%s/10_bench.lua", dir);
  FILE *f = fopen(path, "w");
  fprintf(f, "local tg = require 'toolgate'\n");
  for (int i = 0; i < n; i++)
    fprintf(f,
            "tg.rule{name='r%d', priority=%d, check=function(call)\n"
            "  if call.args.path == 'secret%d' then return tg.deny('no') end end}\n"
            "tg.before_tool('*', function(call)\n"
            "  if call.args.mode == 'x%d' then return tg.abort('no') end end)\n",
            i, i, i, i);
  fclose(f);
}

/* ---- tools -------------------------------------------------------------- */

static void noop_start(tg_exec *ex, const cJSON *args, void *ud) {
  tg_exec_finish_ok(ex, NULL);
}

/* Finishes after 1 ms. */
typedef struct {
  uv_timer_t t;
  tg_exec *ex;
} tick;

static void tick_closed(uv_handle_t *h) { free(h->data); }
static void tick_fire(uv_timer_t *t) {
  tick *k = t->data;
  tg_exec_finish_ok(k->ex, NULL);
  uv_close((uv_handle_t *)&k->t, tick_closed);
}

static void tick_start(tg_exec *ex, const cJSON *args, void *ud) {
  tick *k = malloc(sizeof *k);
  k->ex = ex;
  uv_loop_t *loop = tg_runtime_loop(tg_exec_runtime(ex));
  uv_timer_init(loop, &k->t);
  k->t.data = k;
  uv_update_time(loop);
  uv_timer_start(&k->t, tick_fire, 1, 0);
}

static tg_runtime *open_rt(const char *policies, const char *db) {
  tg_config cfg;
  tg_config_init(&cfg);
  cfg.policies_dir = policies;
  cfg.db = db;
  cfg.db_off = db == NULL;
  char err[TG_ERRMSG];
  tg_runtime *rt = tg_runtime_new(&cfg, NULL, err);
  if (!rt) {
    fprintf(stderr, "bench: %s\n", err);
    exit(1);
  }
  tg_tool_def noop = {.name = "noop", .read_only = 1, .start = noop_start};
  tg_tool_def tk = {.name = "tick", .read_only = 1, .start = tick_start};
  if (tg_tool_register(rt, &noop, err) < 0 || tg_tool_register(rt, &tk, err) < 0) {
    fprintf(stderr, "bench: %s\n", err);
    exit(1);
  }
  return rt;
}

/* ---- 1. throughput ---------------------------------------------------- */

static void count_done(tg_runtime *rt, const tg_outcome *o, void *ud) {
  if (o->status != TG_STATUS_OK) {
    fprintf(stderr, "bench: call failed: %s\n", o->error.message);
    exit(1);
  }
  (*(long *)ud)++;
}

/* ns per call, from the first start to the last outcome, at most
 * IN_FLIGHT calls started and not yet answered (as many agents at once:
 * without audit a no-op call is answered inside tg_call_start; with it,
 * when its batch is committed). */
#define IN_FLIGHT 256

/* CPU time of this thread (the loop's) and of the whole process, ns. */
static double cpu_ns(clockid_t which) {
  struct timespec ts;
  clock_gettime(which, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

typedef struct {
  double wall, loop_cpu, other_cpu; /* ns per call */
} cost;

static cost throughput(tg_runtime *rt, long calls) {
  char err[TG_ERRMSG];
  long done = 0, started = 0;
  tg_call_request req = {.tool = "noop", .args_json = ARGS};
  double c0 = cpu_ns(CLOCK_THREAD_CPUTIME_ID), p0 = cpu_ns(CLOCK_PROCESS_CPUTIME_ID);
  uint64_t t0 = uv_hrtime();
  while (done < calls) {
    while (started < calls && started - done < IN_FLIGHT) {
      if (tg_call_start(rt, &req, count_done, &done, err) < 0) {
        fprintf(stderr, "bench: %s\n", err);
        exit(1);
      }
      if ((++started & 63) == 0) uv_run(tg_runtime_loop(rt), UV_RUN_NOWAIT);
    }
    if (done < calls) uv_run(tg_runtime_loop(rt), UV_RUN_ONCE);
  }
  double wall = (double)(uv_hrtime() - t0);
  double loop = cpu_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
  double all = cpu_ns(CLOCK_PROCESS_CPUTIME_ID) - p0;
  return (cost){wall / (double)calls, loop / (double)calls,
                (all - loop) / (double)calls};
}

static void keep_best(cost *best, cost c) {
  if (c.wall < best->wall) best->wall = c.wall;
  if (c.loop_cpu < best->loop_cpu) best->loop_cpu = c.loop_cpu;
  if (c.other_cpu < best->other_cpu) best->other_cpu = c.other_cpu;
}

static void bench_throughput(const char *lua, long calls) {
  printf("| %s | rules + hooks | audit off calls/s | audit on calls/s "
         "(= audit rows/s) | cost | loop CPU µs/call off | on | writer CPU "
         "µs/row |\n|---|---|---|---|---|---|---|---|\n", lua);
  const int sizes[] = {0, 10}, rounds = 8;
  long chunk = calls / rounds > 0 ? calls / rounds : 1;
  for (int s = 0; s < 2; s++) {
    char *dir = tmp_dir(), db[400];
    write_policies(dir, sizes[s]);
    snprintf(db, sizeof db, "%s/audit.db", dir);
    tg_runtime *off = open_rt(dir, NULL), *on = open_rt(dir, db);
    throughput(off, chunk / 4); /* warm-up */
    throughput(on, chunk / 4);
    cost b_off = {1e18, 1e18, 1e18}, b_on = {1e18, 1e18, 1e18};
    for (int r = 0; r < rounds; r++) {
      keep_best(&b_off, throughput(off, chunk));
      keep_best(&b_on, throughput(on, chunk));
    }
    printf("| %s | %d + %d | %.0f | %.0f | %+.1f%% | %.2f | %.2f | %.2f |\n",
           lua, sizes[s], sizes[s], 1e9 / b_off.wall, 1e9 / b_on.wall,
           (b_on.wall / b_off.wall - 1) * 100, b_off.loop_cpu / 1e3,
           b_on.loop_cpu / 1e3, b_on.other_cpu / 1e3);
    fflush(stdout);
    tg_runtime_free(off);
    tg_runtime_free(on);
    bench_remove_dir(dir);
  }
}

/* ---- 2. latency and loop lag ------------------------------------------- */

typedef struct {
  tg_runtime *rt;
  double *lat;
  size_t n, cap;
  long started, done, want;
  uint64_t t_start[64];
} latency_run;

static void lat_start(latency_run *r, int slot);

typedef struct {
  latency_run *r;
  int slot;
} lat_slot;

static void slot_done(tg_runtime *rt, const tg_outcome *o, void *ud) {
  lat_slot *s = ud;
  latency_run *r = s->r;
  if (o->status != TG_STATUS_OK) {
    fprintf(stderr, "bench: call failed: %s\n", o->error.message);
    exit(1);
  }
  if (r->n < r->cap)
    r->lat[r->n++] = (double)(uv_hrtime() - r->t_start[s->slot]) / 1e3;
  r->done++;
  if (r->started < r->want) lat_start(r, s->slot);
}

static lat_slot slots[64];

static void lat_start(latency_run *r, int slot) {
  char err[TG_ERRMSG];
  tg_call_request req = {.tool = "tick", .args_json = ARGS};
  slots[slot] = (lat_slot){r, slot};
  r->started++;
  r->t_start[slot] = uv_hrtime();
  if (tg_call_start(r->rt, &req, slot_done, &slots[slot], err) < 0) {
    fprintf(stderr, "bench: %s\n", err);
    exit(1);
  }
}

typedef struct {
  uv_timer_t t;
  uint64_t last;
  double *lag;
  size_t n, cap;
} lag_probe;

static void lag_cb(uv_timer_t *t) {
  lag_probe *p = t->data;
  uint64_t now = uv_hrtime();
  if (p->last && p->n < p->cap)
    p->lag[p->n++] = (double)(now - p->last) / 1e3 - 1000.0;
  p->last = now;
}

/* Runs `want` calls, 16 in flight; appends latencies (µs) and the loop's
 * lag (µs late of a 1 ms timer). */
static void latency_phase(tg_runtime *rt, long want, double *lat, size_t *nlat,
                          size_t cap, double *lag, size_t *nlag) {
  latency_run r = {rt, lat + *nlat, 0, cap - *nlat, 0, 0, want, {0}};
  lag_probe p = {.lag = lag + *nlag, .cap = cap - *nlag};
  uv_loop_t *loop = tg_runtime_loop(rt);
  uv_timer_init(loop, &p.t);
  p.t.data = &p;
  uv_update_time(loop);
  uv_timer_start(&p.t, lag_cb, 1, 1);
  for (int i = 0; i < 16; i++) lat_start(&r, i);
  while (r.done < want) uv_run(loop, UV_RUN_ONCE);
  uv_timer_stop(&p.t);
  uv_close((uv_handle_t *)&p.t, NULL);
  uv_run(loop, UV_RUN_NOWAIT);
  *nlat += r.n;
  *nlag += p.n;
}

static void bench_latency(const char *lua, long calls) {
  char *dir = tmp_dir(), db[400];
  write_policies(dir, 10);
  snprintf(db, sizeof db, "%s/audit.db", dir);
  tg_runtime *off = open_rt(dir, NULL), *on = open_rt(dir, db);
  size_t cap = (size_t)calls * 4 + 1000;
  double *lat[2], *lag[2];
  size_t nlat[2] = {0, 0}, nlag[2] = {0, 0};
  for (int i = 0; i < 2; i++) {
    lat[i] = malloc(cap * sizeof **lat);
    lag[i] = malloc(cap * sizeof **lag);
  }
  for (int phase = 0; phase < 6; phase++) {
    int k = phase & 1;
    latency_phase(k ? on : off, calls / 3, lat[k], &nlat[k], cap, lag[k],
                  &nlag[k]);
  }
  printf("| %s | audit | calls | p50 µs | p99 µs | p99.9 µs | loop lag p99 µs "
         "| loop lag max µs |\n|---|---|---|---|---|---|---|---|\n", lua);
  double p99[2];
  for (int k = 0; k < 2; k++) {
    double p50 = bench_pct(lat[k], nlat[k], 0.50);
    p99[k] = bench_pct(lat[k], nlat[k], 0.99);
    double p999 = bench_pct(lat[k], nlat[k], 0.999);
    double l99 = bench_pct(lag[k], nlag[k], 0.99), lmax = bench_pct(lag[k], nlag[k], 1.0);
    printf("| %s | %s | %zu | %.0f | %.0f | %.0f | %.0f | %.0f |\n", lua,
           k ? "on" : "off", nlat[k], p50, p99[k], p999, l99, lmax);
  }
  printf("\np99 with audit / p99 without: %.2fx\n", p99[1] / p99[0]);
  fflush(stdout);
  for (int i = 0; i < 2; i++) {
    free(lat[i]);
    free(lag[i]);
  }
  tg_runtime_free(off);
  tg_runtime_free(on);
  bench_remove_dir(dir);
}

/* ---- 3. the approval lookup ------------------------------------------- */

static void bench_lookup(const char *lua, long calls) {
  char *dir = tmp_dir(), db[400];
  write_policies(dir, 0);
  snprintf(db, sizeof db, "%s/audit.db", dir);
  tg_runtime *rt = open_rt(dir, db);
  tg_store *st = tg_runtime_store(rt);
  char err[TG_ERRMSG], tool[32];
  /* 1000 approvals over 100 tools */
  for (int i = 0; i < 1000; i++) {
    snprintf(tool, sizeof tool, i % 100 ? "tool%d" : "sh", i % 100);
    /* "sh" has 10, the last (900) a pattern that hits */
    cJSON *args = cJSON_CreateObject();
    cJSON_AddNumberToObject(args, "n", i);
    tg_always_spec g = {.scope = TG_SCOPE_ARGS, .tool = tool, .args = args,
                        .where = TG_WHERE_SESSION, .session = "default"};
    if (i == 900) {
      g.scope = TG_SCOPE_PATTERN;
      g.arg = "command";
      g.glob = "npm test*";
    }
    if (tg_store_grant(st, &g, err) < 0) {
      fprintf(stderr, "bench: %s\n", err);
      exit(1);
    }
    cJSON_Delete(args);
  }
  cJSON *args = cJSON_Parse("{\"command\":\"npm test --ci\"}");
  size_t n = 0, cap = (size_t)calls;
  double *us = malloc(cap * sizeof *us);
  long done = 0;
  tg_call_request req = {.tool = "noop", .args_json = ARGS};
  /* a stream of calls keeps the writer committing while we look up */
  for (long i = 0; i < calls; i++) {
    if (tg_call_start(rt, &req, count_done, &done, err) < 0) exit(1);
    tg_approval_query q = {.tool = "sh", .session = "default", .args = args,
                           .now_ms = 1};
    int64_t id = 0;
    uint64_t t0 = uv_hrtime();
    int hit = tg__approval_find(st, &q, &id);
    us[n++] = (double)(uv_hrtime() - t0) / 1e3;
    tg__approval_query_done(&q);
    if (!hit) {
      fprintf(stderr, "bench: the lookup missed\n");
      exit(1);
    }
    if ((i & 15) == 15) uv_run(tg_runtime_loop(rt), UV_RUN_NOWAIT);
  }
  while (done < calls) uv_run(tg_runtime_loop(rt), UV_RUN_ONCE);
  printf("| %s | approvals in the table | lookups | p50 µs | p99 µs | max µs "
         "|\n|---|---|---|---|---|---|\n", lua);
  double p50 = bench_pct(us, n, 0.5), p99 = bench_pct(us, n, 0.99), mx = bench_pct(us, n, 1.0);
  printf("| %s | 1000 | %zu | %.1f | %.1f | %.0f |\n", lua, n, p50, p99, mx);
  fflush(stdout);
  free(us);
  cJSON_Delete(args);
  tg_runtime_free(rt);
  bench_remove_dir(dir);
}

int main(int argc, char **argv) {
  long calls = argc > 1 ? atol(argv[1]) : 200000;
#if TG_LUA54
  const char *lua = "Lua 5.4";
#else
  const char *lua = "LuaJIT";
#endif
  bench_throughput(lua, calls);
  printf("\n");
  bench_latency(lua, calls / 20 > 3000 ? calls / 20 : 3000);
  printf("\n");
  bench_lookup(lua, calls / 10 > 5000 ? calls / 10 : 5000);
  return 0;
}
