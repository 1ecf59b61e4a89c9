/*
 * test_host_api.c — what a host needs to serve tools of its own (issue 10,
 * include/toolgate.h "host tools and the version"): tg_version,
 * tg_tool_exists, tg_exec_session, and C tools calling other tools through
 * the chain with tg_exec_call / tg_exec_call_cancel.
 */
#include "helpers.h"
#include <ctype.h>

TEST(version_is_the_builds) {
  const char *v = tg_version();
  ASSERT_STR_EQ(v, TG_VERSION);
  int dots = 0;
  for (const char *p = v; *p; p++) {
    if (*p == '.') dots++;
    else ASSERT_TRUE(isdigit((unsigned char)*p));
  }
  ASSERT_INT_EQ(dots, 2);
}

TEST(tool_exists_sees_c_builtin_and_policy_tools) {
  char *dir = temp_dir();
  put_file(dir, "10_t.lua", "local tg = require 'toolgate'\n"
             "tg.tool { name = 'lua_tool', run = function() return 1 end }\n");
  tg_config cfg = config_allowing();
  cfg.policies_dir = dir;
  tg_runtime *rt = new_runtime(&cfg);
  tg_tool_def d = tool_def("echo", echo_start, NULL, NULL);
  ASSERT_INT_EQ(tg_tool_exists(rt, "echo"), 0);
  register_tool(rt, &d);
  ASSERT_INT_EQ(tg_tool_exists(rt, "echo"), 1);
  ASSERT_INT_EQ(tg_tool_exists(rt, "lua_tool"), 1);
  ASSERT_INT_EQ(tg_tool_exists(rt, "exec"), 1);
  ASSERT_INT_EQ(tg_tool_exists(rt, "nope"), 0);
  ASSERT_INT_EQ(tg_tool_exists(rt, NULL), 0);
  tg_runtime_free(rt);
  remove_tree(dir);
}

/* ---- a C tool that calls another tool ------------------------------------ */

/* One attempt of the caller tool, waiting for the call it made. */
typedef struct level {
  struct level *next;
  struct caller *c;
  tg_exec *ex;
  char nested_id[160];
} level;

typedef struct caller {
  const char *tool;      /* what it calls */
  int starts, depth_refused, cancels;
  char session[64], err[TG_ERRMSG];
  level *waiting;        /* attempts waiting, innermost first */
  tg_exec *ex;           /* the last one started */
  tg_status nested_status;
} caller;

static void unlink_level(level *l) {
  for (level **p = &l->c->waiting; *p; p = &(*p)->next)
    if (*p == l) {
      *p = l->next;
      return;
    }
}

static void nested_done(tg_runtime *rt, const tg_outcome *o, void *ud) {
  (void)rt;
  level *l = ud;
  l->c->nested_status = o->status;
  cJSON *r = cJSON_CreateObject();
  cJSON_AddStringToObject(r, "inner_id", o->id);
  cJSON_AddStringToObject(r, "inner_status", tg_status_name(o->status));
  if (o->result) cJSON_AddItemToObject(r, "inner", cJSON_Duplicate(o->result, 1));
  tg_exec *ex = l->ex;
  unlink_level(l);
  free(l);
  tg_exec_finish_ok(ex, r);
}

static void caller_start(tg_exec *ex, const cJSON *args, void *ud) {
  caller *c = ud;
  c->starts++;
  c->ex = ex;
  copy_str(c->session, sizeof c->session, tg_exec_session(ex));
  level *l = calloc(1, sizeof *l);
  ASSERT_TRUE(l);
  l->c = c;
  l->ex = ex;
  snprintf(l->nested_id, sizeof l->nested_id, "%s.1", tg_exec_call_id(ex));
  l->next = c->waiting;
  c->waiting = l;
  int rc = tg_exec_call(ex, l->nested_id, c->tool, args, nested_done, l, c->err);
  if (rc == 0) return; /* nested_done finishes us, maybe already has */
  unlink_level(l);
  free(l);
  if (rc == -ELOOP) c->depth_refused++;
  tg_exec_finish_error(ex, NULL, "NESTED", c->err, 0);
}

static void caller_cancel(tg_exec *ex, void *ud) {
  caller *c = ud;
  c->cancels++;
  for (level *l = c->waiting; l; l = l->next)
    if (l->ex == ex) {
      tg_exec_call_cancel(ex, l->nested_id); /* its done finishes us */
      return;
    }
}

TEST(exec_call_goes_through_the_chain_one_level_deeper) {
  /* the rules see the nested call, its parent named in its metadata */
  char *dir = temp_dir();
  put_file(dir, "10_r.lua", "local tg = require 'toolgate'\n"
             "tg.rule { name = 'parent', tools = { 'echo' }, check = function(call)\n"
             "  local p = call.metadata and call.metadata.parent_call\n"
             "  if p ~= 'c1' then return tg.deny('parent: ' .. tostring(p)) end\n"
             "end }\n");
  tg_config cfg = config_allowing();
  cfg.policies_dir = dir;
  cfg.session = "s7";
  tg_runtime *rt = new_runtime(&cfg);
  tg_tool_def e = tool_def("echo", echo_start, NULL, NULL);
  register_tool(rt, &e);
  caller c = {.tool = "echo"};
  tg_tool_def d = tool_def("outer", caller_start, NULL, &c);
  register_tool(rt, &d);
  event_log rec = {0};
  tg_events_subscribe(rt, log_event, &rec);
  outcome o;
  memset(&o, 0, sizeof o);
  start_call(rt, "c1", "outer", "{\"x\":2}", &o);
  run_until(rt, &o.n, 1);
  ASSERT_INT_EQ(o.status, TG_STATUS_OK);
  ASSERT_STR_EQ(c.session, "s7");
  ASSERT_STR_EQ(str_at(o.result, "inner_id"), "c1.1");
  ASSERT_STR_EQ(str_at(o.result, "inner_status"), "ok");
  const cJSON *inner = cJSON_GetObjectItemCaseSensitive(o.result, "inner");
  ASSERT_NUM_EQ(num_at(cJSON_GetObjectItemCaseSensitive(inner, "echo"), "x"), 2);
  /* the nested call is a call like any other: its own events, the session
   * of its parent */
  ASSERT_INT_EQ(count_events(&rec, "call_end", "c1.1"), 1);
  int i = -1;
  for (int k = 0; k < rec.n; k++)
    if (!strcmp(rec.ev[k].type, "call_start") && !strcmp(rec.ev[k].call_id, "c1.1"))
      i = k;
  ASSERT_TRUE(i >= 0);
  ASSERT_STR_EQ(str_at(rec.ev[i].data, "session"), "s7");
  event_log_free(&rec);
  outcome_free(&o);
  tg_runtime_free(rt);
  remove_tree(dir);
}

TEST(exec_call_stops_at_eight_levels) {
  tg_config cfg = config_allowing();
  tg_runtime *rt = new_runtime(&cfg);
  caller c = {.tool = "self"};
  tg_tool_def d = tool_def("self", caller_start, NULL, &c);
  register_tool(rt, &d);
  outcome o;
  memset(&o, 0, sizeof o);
  start_call(rt, "r", "self", NULL, &o);
  run_until(rt, &o.n, 1);
  ASSERT_INT_EQ(c.starts, 9); /* the call and 8 levels below it */
  ASSERT_INT_EQ(c.depth_refused, 1);
  ASSERT_CONTAINS(c.err, "nested deeper than 8");
  ASSERT_INT_EQ(o.status, TG_STATUS_OK); /* each level passes on the one below */
  outcome_free(&o);
  tg_runtime_free(rt);
}

TEST(exec_call_cancel_stops_the_nested_call) {
  tg_config cfg = config_allowing();
  tg_runtime *rt = new_runtime(&cfg);
  slow_tool s = {0};
  s.cancel_finishes = 1;
  tg_tool_def sd = tool_def("slow", slow_start, slow_cancel, &s);
  register_tool(rt, &sd);
  caller c = {.tool = "slow"};
  tg_tool_def d = tool_def("outer", caller_start, caller_cancel, &c);
  register_tool(rt, &d);
  outcome o;
  memset(&o, 0, sizeof o);
  start_call(rt, "c1", "outer", NULL, &o);
  ASSERT_INT_EQ(s.starts, 1);
  ASSERT_INT_EQ(o.n, 0);
  ASSERT_INT_EQ(tg_call_cancel(rt, "c1"), 0);
  run_until(rt, &o.n, 1);
  ASSERT_INT_EQ(c.cancels, 1);
  ASSERT_INT_EQ(s.cancels, 1);
  ASSERT_INT_EQ(c.nested_status, TG_STATUS_CANCELLED);
  ASSERT_INT_EQ(o.status, TG_STATUS_CANCELLED);
  ASSERT_STR_EQ(str_at(o.result, "inner_status"), "cancelled"); /* partial */
  slow_close(rt, &s);
  outcome_free(&o);
  tg_runtime_free(rt);
}

TEST(exec_call_refuses_a_running_id_and_a_missing_tool_name) {
  tg_config cfg = config_allowing();
  tg_runtime *rt = new_runtime(&cfg);
  slow_tool s = {0};
  s.cancel_finishes = 1;
  tg_tool_def sd = tool_def("slow", slow_start, slow_cancel, &s);
  register_tool(rt, &sd);
  caller c = {.tool = "slow"};
  tg_tool_def d = tool_def("outer", caller_start, caller_cancel, &c);
  register_tool(rt, &d);
  outcome o;
  memset(&o, 0, sizeof o);
  start_call(rt, "c1", "outer", NULL, &o);
  ASSERT_TRUE(c.waiting);
  char err[TG_ERRMSG];
  ASSERT_INT_EQ(tg_exec_call(c.ex, "c1.1", "slow", NULL, nested_done, &c, err), -EEXIST);
  ASSERT_CONTAINS(err, "already running");
  ASSERT_INT_EQ(tg_exec_call(c.ex, "c1.2", NULL, NULL, nested_done, &c, err), -EINVAL);
  ASSERT_INT_EQ(tg_call_cancel(rt, "c1"), 0);
  run_until(rt, &o.n, 1);
  ASSERT_INT_EQ(o.status, TG_STATUS_CANCELLED);
  slow_close(rt, &s);
  outcome_free(&o);
  tg_runtime_free(rt);
}

TEST_MAIN(TEST_ENTRY(version_is_the_builds),
          TEST_ENTRY(tool_exists_sees_c_builtin_and_policy_tools),
          TEST_ENTRY(exec_call_goes_through_the_chain_one_level_deeper),
          TEST_ENTRY(exec_call_stops_at_eight_levels),
          TEST_ENTRY(exec_call_cancel_stops_the_nested_call),
          TEST_ENTRY(exec_call_refuses_a_running_id_and_a_missing_tool_name))
