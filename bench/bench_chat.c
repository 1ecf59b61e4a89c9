/*
 * bench_chat.c — what the chat side costs: tg_route with 0, 1
 * and 10 routing hooks, a usage record with 0 and 10 budgets, and a whole
 * chat (tg_chat_begin + tg_chat_end with usage) with 10 budgets, beside a
 * bare chain call (a no-op C tool, no rule) measured in the same run.
 * Interleaved rounds; the fastest of each.
 *
 * Usage: bench_chat [ops-per-round]   (prints a Markdown table)
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
#include "runtime/runtime.h" /* tg__runtime_record_usage: storage's entry */

#define ROUNDS 8

/* n routing hooks that read the decision like real ones and change
 * nothing, or n budgets over every record, with limits never reached
 * after the first alerts. */
static char *policy_source(int hooks, int budgets) {
  static const char *const periods[] = {"day", "week", "month", "session",
                                        "total"};
  size_t cap = 256 + (size_t)(hooks + budgets) * 300;
  char *s = malloc(cap), *p = s;
  p += sprintf(p, "local tg = require 'toolgate'\n");
  for (int i = 0; i < hooks; i++)
    p += sprintf(p,
                 "tg.route_model(function(d)\n"
                 "  if (d.context.tokens or 0) > 1e9 + %d then\n"
                 "    d.selected_model = 'big'; d.reason = 'long' end end)\n",
                 i);
  for (int i = 0; i < budgets; i++)
    p += sprintf(p, "tg.budget{name='b%d', limit=1e9, period='%s'%s}\n", i,
                 periods[i % 5], i % 2 ? ", scope={model='m'}" : "");
  return s;
}

static char *write_policies(int hooks, int budgets) {
  char *dir = strdup("/tmp/tg-bench-chat-XXXXXX");
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    exit(2);
  }
  char path[256];
  snprintf(path, sizeof path, "%s/10_bench.lua", dir);
  FILE *f = fopen(path, "w");
  char *src = policy_source(hooks, budgets);
  fputs(src, f);
  fclose(f);
  free(src);
  return dir;
}

static void noop_start(tg_exec *ex, const cJSON *args, void *ud) {
  tg_exec_finish_ok(ex, NULL);
}

static void count_done(tg_runtime *rt, const tg_outcome *o, void *ud) {
  (*(long *)ud)++;
}

typedef struct {
  char *dir;
  tg_runtime *rt;
} bench_rt;

static bench_rt open_rt(int hooks, int budgets) {
  bench_rt b = {write_policies(hooks, budgets), NULL};
  tg_config cfg;
  tg_config_init(&cfg);
  cfg.policies_dir = b.dir;
  char err[TG_ERRMSG];
  if (!(b.rt = tg_runtime_new(&cfg, NULL, err))) {
    fprintf(stderr, "bench: %s\n", err);
    exit(1);
  }
  tg_tool_def def = {.name = "noop", .read_only = 1, .start = noop_start};
  tg_tool_register(b.rt, &def, err);
  cJSON *m = cJSON_Parse("{\"routes\":{\"light\":\"small\"},\"default\":\"mid\"}");
  tg_runtime_set_models(b.rt, m, err);
  cJSON_Delete(m);
  return b;
}

static void close_rt(bench_rt *b) {
  tg_runtime_free(b->rt);
  bench_remove_dir(b->dir);
}

static double now_ns(void) { return (double)uv_hrtime(); }

static double chain_ns(bench_rt *b, long n) {
  char err[TG_ERRMSG];
  long done = 0;
  tg_call_request req = {.tool = "noop", .args_json = "{\"path\":\"a\"}"};
  double t0 = now_ns();
  for (long i = 0; i < n; i++) {
    tg_call_start(b->rt, &req, count_done, &done, err);
    if ((i & 63) == 63) uv_run(tg_runtime_loop(b->rt), UV_RUN_NOWAIT);
  }
  uv_run(tg_runtime_loop(b->rt), UV_RUN_DEFAULT);
  if (done != n) {
    fprintf(stderr, "bench: %ld of %ld calls ended\n", done, n);
    exit(1);
  }
  return (now_ns() - t0) / (double)n;
}

static double route_ns(bench_rt *b, long n) {
  char err[TG_ERRMSG];
  cJSON *q = cJSON_Parse("{\"task_weight\":\"light\",\"requested_model\":\"x\","
                         "\"context\":{\"tokens\":1200,\"files\":3}}");
  double t0 = now_ns();
  for (long i = 0; i < n; i++) {
    cJSON *d = tg_route(b->rt, q, err);
    if (!d) {
      fprintf(stderr, "bench: %s\n", err);
      exit(1);
    }
    cJSON_Delete(d);
  }
  double ns = (now_ns() - t0) / (double)n;
  cJSON_Delete(q);
  return ns;
}

static double record_ns(bench_rt *b, long n) {
  tg_usage_rec r = {"s", NULL, "m", 1, 100, 20, 0.0001, 0};
  double t0 = now_ns();
  for (long i = 0; i < n; i++)
    if (tg__runtime_record_usage(b->rt, &r) < 0) exit(1);
  return (now_ns() - t0) / (double)n;
}

static double chat_ns(bench_rt *b, long n) {
  char err[TG_ERRMSG];
  tg_chat_request q = {"s", "m", NULL, NULL};
  tg_chat_usage u = {NULL, 100, 20, 0.0001};
  tg_chat_result r = {"s", 1, NULL, &u};
  double t0 = now_ns();
  for (long i = 0; i < n; i++)
    if (tg_chat_begin(b->rt, &q, err) < 0 || tg_chat_end(b->rt, &r, err) < 0) {
      fprintf(stderr, "bench: %s\n", err);
      exit(1);
    }
  return (now_ns() - t0) / (double)n;
}

typedef struct {
  const char *what;
  int hooks, budgets;
  double (*run)(bench_rt *b, long n);
  double best;
  bench_rt rt;
} row;

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 50000;
  row rows[] = {
      {"bare chain call (no-op C tool, no rule)", 0, 0, chain_ns, 0, {0}},
      {"tg_route, 0 routing hooks", 0, 0, route_ns, 0, {0}},
      {"tg_route, 1 routing hook", 1, 0, route_ns, 0, {0}},
      {"tg_route, 10 routing hooks", 10, 0, route_ns, 0, {0}},
      {"usage record, 0 budgets", 0, 0, record_ns, 0, {0}},
      {"usage record, 10 budgets", 0, 10, record_ns, 0, {0}},
      {"chat_begin + chat_end with usage, 10 budgets", 0, 10, chat_ns, 0, {0}},
  };
  size_t nrows = sizeof rows / sizeof *rows;
  for (size_t i = 0; i < nrows; i++) {
    rows[i].rt = open_rt(rows[i].hooks, rows[i].budgets);
    rows[i].run(&rows[i].rt, n / 10); /* warm up */
  }
  for (int round = 0; round < ROUNDS; round++)
    for (size_t i = 0; i < nrows; i++) {
      double ns = rows[i].run(&rows[i].rt, n);
      if (!rows[i].best || ns < rows[i].best) rows[i].best = ns;
    }
  const char *lua = TG_LUA54 ? "Lua 5.4" : "LuaJIT";
  printf("| Lua | what | ns/op | ops/s | / bare chain call |\n|---|---|---|---|---|\n");
  for (size_t i = 0; i < nrows; i++) {
    printf("| %s | %s | %.0f | %.0f | %.2fx |\n", lua, rows[i].what,
           rows[i].best, 1e9 / rows[i].best, rows[i].best / rows[0].best);
    close_rt(&rows[i].rt);
  }
  return 0;
}
