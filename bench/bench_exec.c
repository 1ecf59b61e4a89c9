/*
 * bench_exec.c — what the `exec` tool costs, measured against what it
 * cannot avoid, in the same run:
 *
 *   1. one whole call of exec running `true` through the chain (call JSON
 *      to outcome, loop idle again) beside a bare posix_spawn + waitpid of
 *      `sh -c true`; once with a small process, once with 1 GiB of touched
 *      heap (a fork would copy its page tables; posix_spawn must not care);
 *   2. the delay from a line the child prints (with its CLOCK_MONOTONIC
 *      time in it) to the progress event that carries it. Progress is a
 *      heartbeat, so the delay is at most one interval plus the overhead:
 *      the minimum over many lines shows the overhead alone.
 *
 * Usage: bench_exec [calls]        (prints Markdown tables)
 *        bench_exec --stamp N GAP  (the child of part 2: N lines, GAP ms apart)
 */
#define _GNU_SOURCE
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>
#include <cjson/cJSON.h>
#include "bench_util.h"
#include "toolgate.h"

#define HEAP_BYTES ((size_t)1 << 30)

static uint64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void die(const char *what, const char *why) {
  fprintf(stderr, "bench_exec: %s: %s\n", what, why);
  exit(1);
}

/* ---- part 1: a whole call vs a bare spawn --------------------------------- */

static void bare_spawn(void) {
  char *argv[] = {"sh", "-c", "true", NULL};
  pid_t pid;
  if (posix_spawn(&pid, "/bin/sh", NULL, NULL, argv, environ) != 0)
    die("posix_spawn", "failed");
  int st;
  if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st)) die("waitpid", "failed");
}

static void call_done(tg_runtime *rt, const tg_outcome *o, void *ud) {
  const cJSON *code = cJSON_GetObjectItem(o->result, "exit_code");
  if (o->status != TG_STATUS_OK || !cJSON_IsNumber(code) || code->valueint)
    die("exec call", o->error.message ? o->error.message : "bad exit code");
  (*(int *)ud)++;
}

static void chain_call(tg_runtime *rt) {
  static const tg_call_request req = {.tool = "exec",
                                      .args_json = "{\"command\":\"true\"}"};
  char err[TG_ERRMSG];
  int done = 0;
  if (tg_call_start(rt, &req, call_done, &done, err) < 0) die("call", err);
  uv_run(tg_runtime_loop(rt), UV_RUN_DEFAULT); /* until the loop is idle */
  if (!done) die("call", "did not finish");
}

/* Mean µs per call of each, in interleaved batches so drift hits both. */
static void measure(tg_runtime *rt, int calls, double *bare_us,
                    double *chain_us) {
  uint64_t bare = 0, chain = 0;
  const int batch = 20;
  for (int i = 0; i < 10; i++) { /* warm up both */
    bare_spawn();
    chain_call(rt);
  }
  for (int done = 0; done < calls; done += batch) {
    uint64_t t0 = mono_ns();
    for (int k = 0; k < batch; k++) bare_spawn();
    uint64_t t1 = mono_ns();
    for (int k = 0; k < batch; k++) chain_call(rt);
    uint64_t t2 = mono_ns();
    bare += t1 - t0;
    chain += t2 - t1;
  }
  int n = (calls + batch - 1) / batch * batch;
  *bare_us = (double)bare / n / 1000.0;
  *chain_us = (double)chain / n / 1000.0;
}

/* ---- part 2: output to progress event ------------------------------------- */

static int stamp_child(int n, int gap_ms) {
  for (int i = 0; i < n; i++) {
    printf("t=%llu\n", (unsigned long long)mono_ns());
    fflush(stdout);
    usleep((useconds_t)gap_ms * 1000);
  }
  return 0;
}

typedef struct {
  double delays[512];
  int n;
  uint64_t last_stamp;
} latency;

static void on_progress(tg_runtime *rt, const tg_event *ev, void *ud) {
  latency *l = ud;
  if (strcmp(ev->type, "progress")) return;
  const char *line =
      cJSON_GetStringValue(cJSON_GetObjectItem(ev->data, "last_line"));
  unsigned long long stamp;
  if (!line || sscanf(line, "t=%llu", &stamp) != 1) return;
  if (stamp == l->last_stamp || l->n == 512) return; /* already counted */
  l->last_stamp = stamp;
  l->delays[l->n++] = (double)(mono_ns() - stamp) / 1e6;
}

static void progress_delay(uint64_t interval_ms, int lines, int gap_ms,
                           latency *l) {
  tg_config cfg;
  tg_config_init(&cfg);
  cfg.db_off = 1; /* the chain alone: bench_audit measures storage */
  cfg.approve_mode = TG_APPROVE_ALLOW;
  cfg.progress_interval_ms = interval_ms;
  char err[TG_ERRMSG], self[4096], args[4300];
  tg_runtime *rt = tg_runtime_new(&cfg, NULL, err);
  if (!rt) die("runtime", err);
  ssize_t k = readlink("/proc/self/exe", self, sizeof self - 1);
  if (k <= 0) die("readlink", "/proc/self/exe");
  self[k] = '\0';
  snprintf(args, sizeof args, "{\"command\":\"'%s' --stamp %d %d\"}", self,
           lines, gap_ms);
  memset(l, 0, sizeof *l);
  tg_events_subscribe(rt, on_progress, l);
  tg_call_request req = {.tool = "exec", .args_json = args};
  int done = 0;
  if (tg_call_start(rt, &req, call_done, &done, err) < 0) die("call", err);
  uv_run(tg_runtime_loop(rt), UV_RUN_DEFAULT);
  tg_runtime_free(rt);
  if (!l->n) die("progress", "no event carried a stamp");
  qsort(l->delays, (size_t)l->n, sizeof *l->delays, bench_cmp_double);
}

/* ---- main ---------------------------------------------------------------------- */

static tg_runtime *small_runtime(void) {
  tg_config cfg;
  tg_config_init(&cfg);
  cfg.db_off = 1; /* the chain alone: bench_audit measures storage */
  cfg.approve_mode = TG_APPROVE_ALLOW;
  char err[TG_ERRMSG];
  tg_runtime *rt = tg_runtime_new(&cfg, NULL, err);
  if (!rt) die("runtime", err);
  return rt;
}

int main(int argc, char **argv) {
  if (argc == 4 && !strcmp(argv[1], "--stamp"))
    return stamp_child(atoi(argv[2]), atoi(argv[3]));
  int calls = argc > 1 ? atoi(argv[1]) : 400;
  if (calls < 20) calls = 20;
  tg_runtime *rt = small_runtime();
  double bare[2], chain[2];
  measure(rt, calls, &bare[0], &chain[0]);
  char *heap = malloc(HEAP_BYTES);
  if (!heap) die("malloc", "1 GiB");
  memset(heap, 1, HEAP_BYTES); /* touched: every page is mapped */
  measure(rt, calls, &bare[1], &chain[1]);
  tg_runtime_free(rt);
  printf("| process heap | posix_spawn + waitpid `sh -c true` µs | exec `true` "
         "through the chain µs | chain / bare |\n|---|---|---|---|\n");
  const char *rows[] = {"small", "1 GiB touched"};
  for (int i = 0; i < 2; i++)
    printf("| %s | %.0f | %.0f | %.2fx |\n", rows[i], bare[i], chain[i],
           chain[i] / bare[i]);
  free(heap);
  printf("\n| progress interval | lines | delay min ms | median ms | max ms |\n"
         "|---|---|---|---|---|\n");
  const uint64_t intervals[] = {20, 100};
  for (int i = 0; i < 2; i++) {
    latency l;
    progress_delay(intervals[i], 40, 23, &l);
    printf("| %llu ms | %d | %.2f | %.2f | %.2f |\n",
           (unsigned long long)intervals[i], l.n, l.delays[0],
           l.delays[l.n / 2], l.delays[l.n - 1]);
  }
  return 0;
}
