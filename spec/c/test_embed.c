/*
 * test_embed.c — a host's own loop turning the runtime (include/toolgate.h,
 * "embedding in a host's loop"), here the plainest one: poll(2) on
 * tg_runtime_backend_fd() with tg_runtime_timeout() as its timeout, then
 * tg_runtime_run_once(). Real timers (a Lua tool's ctx.sleep), a real
 * process (exec), the real folder watch.
 */
#include "helpers.h"
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define POLICY                                                              \
  "local tg = require 'toolgate'\n"                                         \
  "tg.tool { name = 'slow', read_only = true,\n"                            \
  "  run = function(args, ctx) ctx.sleep(args.ms); return 'slept' end }\n"  \
  "tg.rule { name = 'all', check = function() return tg.allow() end }\n"

static uint64_t now_ms(void) { return uv_hrtime() / 1000000u; }

static tg_runtime *runtime_at(const char *dir, int watch) {
  tg_config cfg;
  tg_config_init(&cfg);
  cfg.policies_dir = dir;
  cfg.watch_policies = watch;
  cfg.policy_time_limit_ms = 5000; /* valgrind is slow */
  char err[TG_ERRMSG] = "";
  tg_runtime *rt = tg_runtime_new(&cfg, NULL, err);
  if (!rt) TG_FAIL("tg_runtime_new: %s", err);
  return rt;
}

/* The host's loop: poll(2) on the fd with the runtime's timeout, then one
 * turn; until stop(ud) or ms have passed. Returns the turns taken. */
static int host_loop(tg_runtime *rt, int (*stop)(void *), void *ud, int ms) {
  int fd = tg_runtime_backend_fd(rt), turns = 0;
  ASSERT_TRUE(fd >= 0);
  uint64_t end = now_ms() + (uint64_t)ms;
  while (!(stop && stop(ud)) && now_ms() < end) {
    int t = tg_runtime_timeout(rt), left = (int)(end - now_ms());
    if (t < 0 || t > left) t = left;
    struct pollfd p = {fd, POLLIN, 0};
    poll(&p, 1, t);
    tg_runtime_run_once(rt);
    turns++;
  }
  return turns;
}

typedef struct {
  int ended;
  int ok;
} tally;

static void count_end(tg_runtime *rt, const tg_outcome *o, void *ud) {
  tally *t = ud;
  t->ended++;
  t->ok += o->status == TG_STATUS_OK;
}

static int two_ended(void *ud) { return ((tally *)ud)->ended == 2; }

static void start(tg_runtime *rt, const char *tool, const char *args,
                  tally *t) {
  tg_call_request req = {.tool = tool, .args_json = args};
  char err[TG_ERRMSG];
  if (tg_call_start(rt, &req, count_end, t, err) < 0)
    TG_FAIL("tg_call_start: %s", err);
}

/* Idle, with only the watch and the control socket left: nothing is due,
 * and a turn says no call is pending. */
TEST(idle_runtime_has_no_timeout) {
  char *dir = temp_dir();
  put_file(dir, "10_p.lua", POLICY);
  tg_runtime *rt = runtime_at(dir, 1);
  char sock[1100], err[TG_ERRMSG];
  snprintf(sock, sizeof sock, "%s/control.sock", dir);
  if (tg_runtime_listen(rt, sock, err) < 0) TG_FAIL("listen: %s", err);
  ASSERT_INT_EQ(tg_runtime_run_once(rt), 0);
  ASSERT_INT_EQ(tg_runtime_timeout(rt), -1);
  tg_runtime_free(rt);
  remove_tree(dir);
}

/* A call that only waits on a timer, and one that waits on a process,
 * both finish in the host's loop without spinning. A wake-up the host
 * missed would leave it in poll(2) until the loop's 30 s end, with the
 * calls unfinished. */
TEST(calls_on_timers_and_processes_finish) {
  char *dir = temp_dir();
  put_file(dir, "10_p.lua", POLICY);
  tg_runtime *rt = runtime_at(dir, 0);
  tally t = {0, 0};
  start(rt, "slow", "{\"ms\":300}", &t);
  start(rt, "exec", "{\"command\":\"sleep 0.3\"}", &t);
  ASSERT_TRUE(tg_runtime_timeout(rt) >= 0); /* something is due */
  int turns = host_loop(rt, two_ended, &t, 30000);
  ASSERT_INT_EQ(t.ended, 2);
  ASSERT_INT_EQ(t.ok, 2);
  if (turns >= 200) TG_FAIL("%d turns: the host spins", turns);
  ASSERT_INT_EQ(tg_runtime_timeout(rt), -1);
  tg_runtime_free(rt);
  remove_tree(dir);
}

static int at_generation_2(void *ud) {
  return tg_runtime_generation(ud) == 2;
}

/* While idle the host's loop sleeps, and a saved policy is reloaded. */
TEST(reloads_while_idle_without_spinning) {
  char *dir = temp_dir();
  put_file(dir, "10_p.lua", POLICY);
  tg_runtime *rt = runtime_at(dir, 1);
  host_loop(rt, NULL, NULL, 100);
  int turns = host_loop(rt, NULL, NULL, 500);
  if (turns > 3) TG_FAIL("%d turns in an idle half second", turns);
  put_file(dir, "20_more.lua", "-- saved\n");
  host_loop(rt, at_generation_2, rt, 10000);
  ASSERT_INT_EQ(tg_runtime_generation(rt), 2);
  tg_runtime_free(rt);
  remove_tree(dir);
}

TEST_MAIN(TEST_ENTRY(idle_runtime_has_no_timeout),
          TEST_ENTRY(calls_on_timers_and_processes_finish),
          TEST_ENTRY(reloads_while_idle_without_spinning))
