/*
 * test_chain_policy.c — policy folders driven from C (hot reload)
 * and runtime teardown with calls still in flight.
 */
#include "helpers.h"

static const char *syntax_error_policy =
    "local tg = require \"toolgate\"\n"
    "\n"
    "tg.rule { name = \"x\" check = function() end }\n";

static const char *deny_c_policy =
    "local tg = require \"toolgate\"\n"
    "tg.rule { name = \"no-c\", priority = 10, tools = { \"c\" },\n"
    "  check = function(call) return tg.deny(\"c is off\") end }\n";

TEST(policy_syntax_error_fails_runtime_new) {
  char *dir = temp_dir();
  put_file(dir, "05_fine.lua", "local tg = require \"toolgate\"\n");
  put_file(dir, "10_bad.lua", syntax_error_policy);
  tg_config cfg;
  tg_config_init(&cfg);
  cfg.policies_dir = dir;
  char err[TG_ERRMSG] = "";
  tg_runtime *rt = tg_runtime_new(&cfg, NULL, err);
  ASSERT_NULL(rt);
  ASSERT_CONTAINS(err, "10_bad.lua:3:");
  remove_tree(dir);
}

TEST(policy_reload_failure_keeps_old_generation) {
  char *good = temp_dir(), *broken = temp_dir(), *fixed = temp_dir();
  put_file(good, "10_deny.lua", deny_c_policy);
  put_file(broken, "10_deny.lua", deny_c_policy);
  put_file(broken, "20_broken.lua",
           "local tg = require \"toolgate\"\nerror('boom')\n");
  put_file(fixed, "10_other.lua", "local tg = require \"toolgate\"\n");
  tg_config cfg = config_allowing();
  tg_runtime *rt = runtime_with_policies(&cfg, good);
  tg_tool_def d = tool_def("c", echo_start, NULL, NULL);
  register_tool(rt, &d);
  uint64_t gen = tg_runtime_generation(rt);
  ASSERT_TRUE(gen >= 1);
  event_log ev = {0};
  tg_events_subscribe(rt, log_event, &ev);

  char err[TG_ERRMSG] = "";
  ASSERT_INT_EQ(tg_runtime_load_policies(rt, broken, err), -EINVAL);
  ASSERT_CONTAINS(err, "20_broken.lua:2:");
  ASSERT_INT_EQ(tg_runtime_generation(rt), gen);
  int i = find_event(&ev, "policy_error");
  ASSERT_TRUE(i >= 0);
  ASSERT_CONTAINS(str_at(ev.ev[i].data, "error"), "20_broken.lua:2:");
  ASSERT_INT_EQ(count_events(&ev, "policy_loaded", NULL), 0);
  /* the old rules still judge */
  outcome o = {0};
  start_call(rt, NULL, "c", NULL, &o);
  run_until(rt, &o.n, 1);
  ASSERT_STATUS(o, TG_STATUS_DENIED);
  ASSERT_STR_EQ(o.rule, "no-c");

  /* a good folder then loads as a new generation */
  ASSERT_OK(tg_runtime_load_policies(rt, fixed, err), err);
  ASSERT_TRUE(tg_runtime_generation(rt) > gen);
  ASSERT_INT_EQ(count_events(&ev, "policy_loaded", NULL), 1);
  outcome o2 = {0};
  start_call(rt, NULL, "c", NULL, &o2);
  run_until(rt, &o2.n, 1);
  ASSERT_CALL_OK(o2);
  outcome_free(&o);
  outcome_free(&o2);
  event_log_free(&ev);
  tg_runtime_free(rt);
  remove_tree(good);
  remove_tree(broken);
  remove_tree(fixed);
}

TEST(policy_describe_lists_rules_by_priority) {
  char *dir = temp_dir();
  put_file(dir, "10_a.lua",
           "local tg = require \"toolgate\"\n"
           "local function none() end\n"
           "tg.rule { name = \"late\", priority = 900, check = none }\n"
           "tg.rule { name = \"early\", priority = 5, check = none }\n");
  put_file(dir, "20_b.lua",
           "local tg = require \"toolgate\"\n"
           "local function none() end\n"
           "tg.rule { name = \"default_prio\", check = none }\n"
           "tg.rule { name = \"mid\", priority = 100, check = none }\n"
           "tg.rule { name = \"mid_too\", priority = 100, check = none }\n"
           "tg.rule { name = \"negative\", priority = -3, check = none }\n");
  tg_runtime *rt = runtime_with_policies(NULL, dir);
  tg_tool_def d = tool_def("ctool", echo_start, NULL, NULL);
  register_tool(rt, &d);
  cJSON *desc = tg_runtime_describe(rt);
  ASSERT_NOT_NULL(desc);
  const cJSON *rules = cJSON_GetObjectItemCaseSensitive(desc, "rules");
  ASSERT_TRUE(cJSON_IsArray(rules));
  const char *want[] = {"negative", "early", "mid", "mid_too", "late",
                        "default_prio"};
  const int prio[] = {-3, 5, 100, 100, 900, 1000};
  ASSERT_INT_EQ(cJSON_GetArraySize(rules), 6);
  for (int i = 0; i < 6; i++) {
    const cJSON *r = cJSON_GetArrayItem(rules, i);
    ASSERT_STR_EQ(str_at(r, "name"), want[i]);
    ASSERT_NUM_EQ(num_at(r, "priority"), prio[i]);
  }
  /* the C tool is listed too */
  const cJSON *tools = cJSON_GetObjectItemCaseSensitive(desc, "tools");
  int found = 0;
  for (int i = 0; i < cJSON_GetArraySize(tools); i++)
    if (!strcmp(str_at(cJSON_GetArrayItem(tools, i), "name"), "ctool")) found = 1;
  ASSERT_TRUE(found);
  cJSON_Delete(desc);
  tg_runtime_free(rt);
  remove_tree(dir);
}

/* ---- teardown ----------------------------------------------------------- */

static const char *sleeper_policy =
    "local tg = require \"toolgate\"\n"
    "tg.tool { name = \"sleeper\", read_only = true,\n"
    "  run = function(args, ctx)\n"
    "    ctx.partial({ slept = false })\n"
    "    ctx.sleep(20000)\n"
    "    return { slept = true }\n"
    "  end }\n";

TEST(teardown_cancels_calls_in_flight) {
  char *dir = temp_dir();
  put_file(dir, "10_sleeper.lua", sleeper_policy);
  tg_runtime *rt = runtime_with_policies(NULL, dir);
  slow_tool s = {0};
  s.cancel_finishes = 1;
  tg_tool_def hang = tool_def("hang", slow_start, slow_cancel, &s);
  register_tool(rt, &hang);
  tg_tool_def w = tool_def("write", echo_start, NULL, NULL);
  w.read_only = 0;
  register_tool(rt, &w);
  approver a = {0}; /* never answers */
  tg_runtime_set_approver(rt, approver_cb, &a);

  outcome o[3];
  memset(o, 0, sizeof o);
  start_call(rt, "t-hang", "hang", NULL, &o[0]);
  start_call(rt, "t-ask", "write", NULL, &o[1]);
  start_call(rt, "t-lua", "sleeper", NULL, &o[2]);
  run_for(rt, 30);
  ASSERT_INT_EQ(s.starts, 1);
  ASSERT_INT_EQ(a.n, 1);
  for (int i = 0; i < 3; i++) ASSERT_INT_EQ(o[i].n, 0);

  tg_runtime_free(rt);
  ASSERT_INT_EQ(s.cancels, 1);
  ASSERT_INT_EQ(echo_starts, 0);
  for (int i = 0; i < 3; i++) {
    if (o[i].n != 1) TG_FAIL("call %d: done called %d times", i, o[i].n);
    if (o[i].status != TG_STATUS_CANCELLED)
      TG_FAIL("call %s ended %s, not cancelled", o[i].id,
              tg_status_name(o[i].status));
  }
  ASSERT_NUM_EQ(num_at(o[0].result, "lines_so_far"), 2);
  ASSERT_INT_EQ(bool_at(o[2].result, "slept"), 0);
  ASSERT_FALSE(s.timer_open); /* "hang" made no timer of its own (delay 0) */
  approver_free(&a);
  for (int i = 0; i < 3; i++) outcome_free(&o[i]);
  remove_tree(dir);
}

/* A C tool with no cancel function that finishes from its own one-shot
 * timer (which closes itself): it cannot be stopped, so its late result
 * may arrive while tg_runtime_free drains the loop. The timer is 1 s, far
 * beyond the 10 ms the test turns the loop before freeing (at 50 ms, a
 * loaded machine under valgrind let it fire first). */
static int oneshot_finished;
static void oneshot_cb(uv_timer_t *t) {
  tg_exec *ex = t->data;
  cJSON *r = cJSON_CreateObject();
  cJSON_AddBoolToObject(r, "late", 1);
  tg_exec_finish_ok(ex, r); /* the call was given up: dropped */
  oneshot_finished++;
  uv_close((uv_handle_t *)t, (uv_close_cb)free);
}

static void oneshot_start(tg_exec *ex, const cJSON *args, void *ud) {
  (void)args;
  (void)ud;
  uv_timer_t *t = malloc(sizeof *t);
  ASSERT_NOT_NULL(t);
  uv_timer_init(tg_runtime_loop(tg_exec_runtime(ex)), t);
  t->data = ex;
  uv_update_time(tg_runtime_loop(tg_exec_runtime(ex)));
  uv_timer_start(t, oneshot_cb, 1000, 0);
}

TEST(teardown_with_uncancellable_tool_in_flight) {
  tg_config cfg;
  tg_config_init(&cfg);
  cfg.default_verdict = TG_VERDICT_ALLOW;
  tg_runtime *rt = new_runtime(&cfg);
  tg_tool_def d = tool_def("stubborn", oneshot_start, NULL, NULL);
  register_tool(rt, &d);
  outcome o = {0};
  start_call(rt, "t-stub", "stubborn", NULL, &o);
  run_for(rt, 10);
  ASSERT_INT_EQ(o.n, 0);
  /* the runtime owns the loop: freeing it drains the loop, and the tool's
   * timer fires in there, after the call has been cancelled */
  tg_runtime_free(rt);
  ASSERT_INT_EQ(o.n, 1);
  ASSERT_STATUS(o, TG_STATUS_CANCELLED);
  ASSERT_INT_EQ(oneshot_finished, 1);
  outcome_free(&o);
}

TEST_MAIN(TEST_ENTRY(policy_syntax_error_fails_runtime_new),
          TEST_ENTRY(policy_reload_failure_keeps_old_generation),
          TEST_ENTRY(policy_describe_lists_rules_by_priority),
          TEST_ENTRY(teardown_cancels_calls_in_flight),
          TEST_ENTRY(teardown_with_uncancellable_tool_in_flight))
