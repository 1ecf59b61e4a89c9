/*
 * test_policy_test.c — tg_policy_test (toolgate test) through the fronts' C
 * API: cases run through the chain with a fixture for the tool, failures
 * say why, malformed test files are refused with file:line. Here so that
 * the runner also runs under valgrind in CI.
 */
#include "helpers.h"
#include "internal.h"

static const char policy[] =
    "local tg = require 'toolgate'\n"
    "tg.rule { name = 'no-rm', tools = { 'sh*' }, check = function(call)\n"
    "  if call.args.cmd == 'rm' then return tg.deny('no rm here') end\n"
    "end }\n"
    "tg.before_tool('shell', function(call)\n"
    "  return tg.args({ cmd = call.args.cmd, checked = true })\n"
    "end)\n"
    "tg.after_tool('*', function(call, res)\n"
    "  if res.error then return tg.result({ failed = res.error.code }) end\n"
    "end)\n";

static int ran; /* the C tool's runs: a test must never run it */

static void shell_start(tg_exec *ex, const cJSON *args, void *ud) {
  (void)args;
  (void)ud;
  ran++;
  tg_exec_finish_ok(ex, cJSON_CreateString("ran"));
}

static tg_runtime *runtime_for(const char *dir) {
  tg_config cfg;
  tg_config_init(&cfg);
  cfg.policies_dir = dir;
  tg_runtime *rt = new_runtime(&cfg);
  tg_tool_def d = tool_def("shell", shell_start, NULL, NULL);
  d.read_only = 0; /* the default verdict asks */
  register_tool(rt, &d);
  return rt;
}

static const cJSON *case_at(const cJSON *r, int i) {
  return cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(r, "cases"), i);
}

TEST(cases_pass_and_fail_with_reasons) {
  char *dir = temp_dir();
  put_file(dir, "10_p.lua", policy);
  put_file(dir, "10_p_test.lua",
             "return {\n"
             "  { name = 'rm is denied', tool = 'shell', args = { cmd = 'rm' },\n"
             "    expect = 'deny', rule = 'no-rm', reason_match = '^no rm' },\n"
             "  { name = 'ls (wrong)', tool = 'shell', args = { cmd = 'ls' },\n"
             "    expect = 'deny' },\n"
             "  { name = 'rewritten', tool = 'shell', args = { cmd = 'ls' },\n"
             "    expect_args = { cmd = 'ls', checked = true } },\n"
             "  { name = 'errors become results', tool = 'shell', args = { cmd = 'ls' },\n"
             "    error = { code = 'BOOM' }, expect_result = { failed = 'BOOM' } },\n"
             "}\n");
  tg_runtime *rt = runtime_for(dir);
  char err[TG_ERRMSG] = "";
  cJSON *r = tg_policy_test(rt, NULL, NULL, err);
  if (!r) TG_FAIL("tg_policy_test: %s", err);
  ASSERT_NUM_EQ(num_at(r, "passed"), 3);
  ASSERT_NUM_EQ(num_at(r, "failed"), 1);
  ASSERT_INT_EQ(ran, 0);
  const cJSON *bad = case_at(r, 1);
  ASSERT_TRUE(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(bad, "passed")));
  ASSERT_CONTAINS(str_at(bad, "where"), "10_p_test.lua:4");
  const cJSON *why = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(bad, "failures"), 0);
  ASSERT_CONTAINS(cJSON_GetStringValue(why), "expected deny, got ask by default");
  ASSERT_STR_EQ(str_at(cJSON_GetObjectItemCaseSensitive(case_at(r, 0), "decision"), "reason"),
                "no rm here");
  cJSON_Delete(r);
  /* --run: a Lua pattern over the names */
  r = tg_policy_test(rt, dir, "^rm", err);
  ASSERT_TRUE(r);
  ASSERT_NUM_EQ(num_at(r, "passed"), 1);
  ASSERT_NUM_EQ(num_at(r, "filtered"), 3);
  cJSON_Delete(r);
  ASSERT_TRUE(!tg_policy_test(rt, dir, "^zzz", err));
  ASSERT_CONTAINS(err, "no case name matches");
  tg_runtime_free(rt);
  remove_tree(dir);
}

TEST(malformed_test_files_are_refused) {
  char *dir = temp_dir();
  put_file(dir, "10_p.lua", policy);
  tg_runtime *rt = runtime_for(dir);
  char err[TG_ERRMSG] = "";
  ASSERT_TRUE(!tg_policy_test(rt, NULL, NULL, err));
  ASSERT_CONTAINS(err, "no test files");
  put_file(dir, "a_test.lua",
             "return {\n  { name = 'x', tool = 'shell', expct = 'deny' },\n}\n");
  ASSERT_TRUE(!tg_policy_test(rt, NULL, NULL, err));
  ASSERT_CONTAINS(err, "a_test.lua:2: case 'x': unknown key 'expct'");
  /* a file that holds no case is said so, not as a --run that matched
   * nothing (no --run was given) */
  put_file(dir, "a_test.lua", "return {}\n");
  ASSERT_TRUE(!tg_policy_test(rt, NULL, NULL, err));
  ASSERT_CONTAINS(err, "the test files hold no case");
  put_file(dir, "a_test.lua", "while true do end\n");
  ASSERT_TRUE(!tg_policy_test(rt, NULL, NULL, err));
  ASSERT_CONTAINS(err, "time limit");
  tg_runtime_free(rt);
  remove_tree(dir);
}

TEST_MAIN(TEST_ENTRY(cases_pass_and_fail_with_reasons),
          TEST_ENTRY(malformed_test_files_are_refused))
