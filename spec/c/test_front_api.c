/*
 * test_front_api.c — what the public API gives a front that fronts other
 * servers (the MCP gateway): a C tool's group is call.server to policies
 * and "group" in tg_runtime_describe, which also gives a C tool's
 * description and schema; and an approver that cannot ask anyone answers
 * TG_ANSWER_UNAVAILABLE, a reject that says so.
 */
#include "helpers.h"

static tg_runtime *runtime_with_rule(char **dir, const char *rule) {
  *dir = temp_dir();
  put_file(*dir, "10_rule.lua", rule);
  return runtime_with_policies(NULL, *dir);
}

TEST(a_tools_group_is_call_server_to_rules) {
  char *dir;
  tg_runtime *rt = runtime_with_rule(&dir,
      "local tg = require 'toolgate'\n"
      "tg.rule { name = 'by-server', priority = 1, check = function(call)\n"
      "  if call.server == 'files' then return tg.deny('server ' .. call.server) end\n"
      "  if call.server == nil then return tg.allow() end\n"
      "end }\n");
  tg_tool_def d = tool_def("files__read", echo_start, NULL, NULL);
  d.group = "files";
  register_tool(rt, &d);
  tg_tool_def plain = tool_def("plain", echo_start, NULL, NULL);
  register_tool(rt, &plain);
  outcome o = call_tool(rt, "files__read", "{}");
  ASSERT_STATUS(o, TG_STATUS_DENIED);
  ASSERT_CONTAINS(o.message, "server files");
  outcome_free(&o);
  o = call_tool(rt, "plain", "{}");
  ASSERT_CALL_OK(o);
  outcome_free(&o);
  tg_runtime_free(rt);
  remove_tree(dir);
}

TEST(describe_gives_a_c_tools_description_schema_and_group) {
  tg_runtime *rt = new_runtime(NULL);
  cJSON *schema = cJSON_Parse("{\"type\":\"object\",\"properties\":"
                              "{\"q\":{\"type\":\"string\"}}}");
  tg_tool_def d = tool_def("up__search", echo_start, NULL, NULL);
  d.description = "searches upstream";
  d.schema = schema;
  d.group = "up";
  register_tool(rt, &d);
  cJSON *desc = tg_runtime_describe(rt);
  const cJSON *found = NULL, *t;
  cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(desc, "tools"))
    if (str_at(t, "name") && !strcmp(str_at(t, "name"), "up__search")) found = t;
  ASSERT_NOT_NULL(found);
  ASSERT_STR_EQ(str_at(found, "description"), "searches upstream");
  ASSERT_STR_EQ(str_at(found, "group"), "up");
  ASSERT_STR_EQ(str_at(found, "where"), "C");
  ASSERT_TRUE(cJSON_Compare(cJSON_GetObjectItemCaseSensitive(found, "schema"), schema, 1));
  /* a built-in has no group */
  cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(desc, "tools"))
    if (!strcmp(str_at(t, "name"), "exec")) {
      ASSERT_NULL(cJSON_GetObjectItemCaseSensitive(t, "group"));
      ASSERT_NOT_NULL(str_at(t, "description"));
    }
  cJSON_Delete(desc);
  cJSON_Delete(schema);
  tg_runtime_free(rt);
}

TEST(unavailable_rejects_saying_approval_was_not_possible) {
  tg_config cfg;
  tg_config_init(&cfg); /* not read-only: asked */
  tg_runtime *rt = new_runtime(&cfg);
  tg_tool_def d = tool_def("writer", echo_start, NULL, NULL);
  d.read_only = 0;
  register_tool(rt, &d);
  approver a = {0};
  a.answer_now = TG_ANSWER_UNAVAILABLE;
  a.guidance = "this client cannot ask the user";
  tg_runtime_set_approver(rt, approver_cb, &a);
  outcome o = call_tool(rt, "writer", "{}");
  ASSERT_STATUS(o, TG_STATUS_REJECTED);
  ASSERT_STR_EQ(o.code, "REJECTED");
  ASSERT_CONTAINS(o.message, "approval was not possible here: this client "
                             "cannot ask the user");
  ASSERT_NOT_CONTAINS(o.message, "the user rejected");
  ASSERT_INT_EQ(a.n, 1);
  outcome_free(&o);
  approver_free(&a);
  /* out of range answers are still refused */
  ASSERT_INT_EQ(tg_approval_answer(rt, 1, (tg_answer)(TG_ANSWER_UNAVAILABLE + 1),
                                   TG_SCOPE_TOOL, NULL), -ENOENT);
  tg_runtime_free(rt);
}

static int runtime_events, call_events_seen;
static void count_runtime_event(tg_runtime *rt, const tg_event *ev, void *ud) {
  (void)rt;
  (void)ud;
  if (ev->call_id) call_events_seen++;
  else runtime_events++;
}

TEST(a_runtime_subscription_hears_reloads_and_no_call) {
  char *dir;
  tg_runtime *rt = runtime_with_rule(&dir, "local tg = require 'toolgate'\n");
  int id = tg_events_subscribe_runtime(rt, count_runtime_event, NULL);
  ASSERT_TRUE(id > 0);
  tg_tool_def d = tool_def("plain", echo_start, NULL, NULL);
  register_tool(rt, &d);
  outcome o = call_tool(rt, "plain", "{}");
  ASSERT_CALL_OK(o);
  outcome_free(&o);
  ASSERT_INT_EQ(call_events_seen, 0);
  char err[TG_ERRMSG];
  ASSERT_OK(tg_runtime_load_policies(rt, dir, err), err);
  ASSERT_INT_EQ(runtime_events, 1); /* policy_loaded */
  /* seq still counts every event: a full subscriber sees the gaps */
  event_log log = {0};
  int full = tg_events_subscribe(rt, log_event, &log);
  o = call_tool(rt, "plain", "{}");
  outcome_free(&o);
  ASSERT_TRUE(count_events(&log, "call_end", NULL) == 1);
  ASSERT_INT_EQ(call_events_seen, 0);
  tg_events_unsubscribe(rt, full);
  tg_events_unsubscribe(rt, id);
  ASSERT_OK(tg_runtime_load_policies(rt, dir, err), err);
  ASSERT_INT_EQ(runtime_events, 1);
  event_log_free(&log);
  tg_runtime_free(rt);
  remove_tree(dir);
}

static void upstream_down(tg_exec *ex, const cJSON *args, void *ud) {
  tg_exec_finish_error(ex, NULL, "UPSTREAM_UNAVAILABLE",
                       "upstream server 'up' is not running", 1);
}

TEST(a_gateway_tools_codes_fail_in_the_upstream_phase) {
  tg_runtime *rt = new_runtime(NULL);
  tg_tool_def d = tool_def("up__x", upstream_down, NULL, NULL);
  d.group = "up";
  register_tool(rt, &d);
  outcome o = call_tool(rt, "up__x", "{}");
  ASSERT_STATUS(o, TG_STATUS_ERROR);
  ASSERT_INT_EQ(o.phase, TG_PHASE_UPSTREAM);
  ASSERT_STR_EQ(o.code, "UPSTREAM_UNAVAILABLE");
  ASSERT_INT_EQ(o.retryable, 1);
  outcome_free(&o);
  tg_runtime_free(rt);
}

static cJSON *list_of(const char *json) {
  cJSON *j = cJSON_Parse(json);
  ASSERT_NOT_NULL(j);
  return j;
}

static char *names_of(const cJSON *list) {
  static char buf[512];
  buf[0] = 0;
  const cJSON *t;
  cJSON_ArrayForEach(t, list) {
    strcat(buf, str_at(t, "name"));
    strcat(buf, " ");
  }
  return buf;
}

TEST(list_tools_hooks_hide_and_redescribe_but_cannot_add) {
  char *dir;
  tg_runtime *rt = runtime_with_rule(&dir,
      "local tg = require 'toolgate'\n"
      "tg.list_tools(function(tools)\n"
      "  local out = {}\n"
      "  for _, t in ipairs(tools) do\n"
      "    if t.server ~= 'secret' then\n"
      "      if t.name == 'a' then t.description = 'A, re-described'; t.inputSchema = {} end\n"
      "      out[#out + 1] = t\n"
      "    end\n"
      "  end\n"
      "  return out\n"
      "end)\n"
      "tg.list_tools(function(tools) tools[#tools + 1] = { name = 'added' }; return tools end)\n"
      "tg.list_tools(function(tools) error('boom') end)\n"
      "tg.list_tools(function(tools) local r = {} for i = #tools, 1, -1 do r[#r + 1] = tools[i] end return r end)\n");
  event_log log = {0};
  tg_events_subscribe(rt, log_event, &log);
  cJSON *in = list_of("[{\"name\":\"a\",\"description\":\"A\",\"inputSchema\":{\"type\":\"object\"}},"
                      "{\"name\":\"s__b\",\"server\":\"secret\"},{\"name\":\"c\"}]");
  cJSON *out = tg_runtime_list_tools(rt, in);
  ASSERT_NOT_NULL(out);
  ASSERT_STR_EQ(names_of(out), "c a ");
  const cJSON *a = cJSON_GetArrayItem(out, 1);
  ASSERT_STR_EQ(str_at(a, "description"), "A, re-described");
  ASSERT_STR_EQ(str_at(cJSON_GetObjectItemCaseSensitive(a, "inputSchema"), "type"), "object");
  ASSERT_INT_EQ(count_events(&log, "handler_error", NULL), 2);
  char *first = cJSON_Print(log.ev[find_event(&log, "handler_error")].data);
  ASSERT_CONTAINS(first, "not add or rename");
  free(first);
  cJSON_Delete(in);
  cJSON_Delete(out);
  ASSERT_NULL(tg_runtime_list_tools(rt, NULL));
  event_log_free(&log);
  tg_runtime_free(rt);
  remove_tree(dir);
}

TEST_MAIN(TEST_ENTRY(a_runtime_subscription_hears_reloads_and_no_call),
          TEST_ENTRY(a_gateway_tools_codes_fail_in_the_upstream_phase),
          TEST_ENTRY(list_tools_hooks_hide_and_redescribe_but_cannot_add),
          TEST_ENTRY(a_tools_group_is_call_server_to_rules),
          TEST_ENTRY(describe_gives_a_c_tools_description_schema_and_group),
          TEST_ENTRY(unavailable_rejects_saying_approval_was_not_possible))
