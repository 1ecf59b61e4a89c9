/*
 * test_chain_events.c — the event bus and the call request through the C
 * API: seq strictly increasing with no gaps, the order of a call's events,
 * unsubscribing from inside a callback, two runtimes sharing nothing; and
 * malformed requests, unknown tools, duplicate ids, the outcome's JSON.
 */
#include "helpers.h"

/* Fails unless the recorded seqs run on by exactly one each. */
static void assert_no_gaps(const event_log *r) {
  for (int i = 1; i < r->n; i++)
    if (r->ev[i].seq != r->ev[i - 1].seq + 1)
      TG_FAIL("seq gap: event %d (%s) has seq %llu after %llu (%s)", i,
              r->ev[i].type, (unsigned long long)r->ev[i].seq,
              (unsigned long long)r->ev[i - 1].seq, r->ev[i - 1].type);
}

/* Fails unless the events of call id begin with call_start and end with
 * call_end (exactly one of each). */
static void assert_framed(const event_log *r, const char *id) {
  int first = -1, last = -1;
  for (int i = 0; i < r->n; i++)
    if (!strcmp(r->ev[i].call_id, id)) {
      if (first < 0) first = i;
      last = i;
    }
  if (first < 0) TG_FAIL("no events for call %s", id);
  ASSERT_STR_EQ(r->ev[first].type, "call_start");
  ASSERT_STR_EQ(r->ev[last].type, "call_end");
  ASSERT_INT_EQ(count_events(r, "call_start", id), 1);
  ASSERT_INT_EQ(count_events(r, "call_end", id), 1);
}

/* ---- seq ---------------------------------------------------------------- */

TEST(events_seq_strictly_increasing_without_gaps) {
  tg_config cfg = config_allowing();
  cfg.approve_mode = TG_APPROVE_DENY;
  tg_runtime *rt = new_runtime(&cfg);
  tg_tool_def d = tool_def("echo", echo_start, NULL, NULL);
  register_tool(rt, &d);
  slow_tool s = {0};
  s.delay_ms = 5;
  tg_tool_def d2 = tool_def("slow", slow_start, NULL, &s);
  register_tool(rt, &d2);
  event_log ev = {0};
  ASSERT_TRUE(tg_events_subscribe(rt, log_event, &ev) > 0);
  outcome o[4];
  memset(o, 0, sizeof o);
  start_call(rt, "s1", "slow", NULL, &o[0]);  /* runs while the others do */
  start_call(rt, "s2", "echo", NULL, &o[1]);
  start_call(rt, "s3", "nope", NULL, &o[2]);  /* unknown tool */
  start_call(rt, "s4", "echo", "{\"a\":[1,2,3]}", &o[3]);
  run_until(rt, &o[0].n, 1);
  ASSERT_STATUS(o[2], TG_STATUS_ERROR);
  ASSERT_TRUE(ev.n >= 12);
  assert_no_gaps(&ev);
  ASSERT_TRUE(ev.ev[0].seq >= 1);
  assert_framed(&ev, "s1");
  assert_framed(&ev, "s2");
  assert_framed(&ev, "s3");
  assert_framed(&ev, "s4");
  /* the slow call started first and ended last */
  ASSERT_STR_EQ(ev.ev[0].call_id, "s1");
  ASSERT_STR_EQ(ev.ev[ev.n - 1].call_id, "s1");
  ASSERT_STR_EQ(ev.ev[ev.n - 1].type, "call_end");
  /* the event JSON carries the same seq and type */
  for (int i = 0; i < ev.n; i++) {
    ASSERT_NUM_EQ(num_at(ev.ev[i].data, "seq"), (double)ev.ev[i].seq);
    ASSERT_STR_EQ(str_at(ev.ev[i].data, "type"), ev.ev[i].type);
  }
  slow_close(rt, &s);
  for (int i = 0; i < 4; i++) outcome_free(&o[i]);
  event_log_free(&ev);
  tg_runtime_free(rt);
}

TEST(events_order_of_a_simple_allowed_call) {
  tg_config cfg = config_allowing();
  tg_runtime *rt = new_runtime(&cfg);
  tg_tool_def d = tool_def("echo", echo_start, NULL, NULL);
  register_tool(rt, &d);
  event_log ev = {0};
  tg_events_subscribe(rt, log_event, &ev);
  outcome o = {0};
  start_call(rt, "e1", "echo", NULL, &o);
  tg_runtime_run(rt, TG_RUN_DEFAULT);
  ASSERT_CALL_OK(o);
  const char *want[] = {"call_start", "decision", "attempt", "call_end"};
  ASSERT_INT_EQ(ev.n, 4);
  for (int i = 0; i < 4; i++) {
    ASSERT_STR_EQ(ev.ev[i].type, want[i]);
    ASSERT_STR_EQ(ev.ev[i].call_id, "e1");
  }
  assert_no_gaps(&ev);
  ASSERT_STR_EQ(str_at(ev.ev[0].data, "tool"), "echo");
  ASSERT_STR_EQ(str_at(ev.ev[1].data, "verdict"), "allow");
  ASSERT_NUM_EQ(num_at(ev.ev[2].data, "attempt"), 1);
  ASSERT_STR_EQ(str_at(ev.ev[3].data, "status"), "ok");
  outcome_free(&o);
  event_log_free(&ev);
  tg_runtime_free(rt);
}

/* ---- unsubscribe inside a callback ------------------------------------- */

typedef struct {
  int id, n;
} self_unsub;

static void unsub_self_cb(tg_runtime *rt, const tg_event *e, void *ud) {
  (void)e;
  self_unsub *s = ud;
  s->n++;
  tg_events_unsubscribe(rt, s->id);
}

TEST(events_unsubscribe_inside_callback_is_safe) {
  tg_config cfg = config_allowing();
  tg_runtime *rt = new_runtime(&cfg);
  tg_tool_def d = tool_def("echo", echo_start, NULL, NULL);
  register_tool(rt, &d);
  self_unsub a = {0, 0};
  a.id = tg_events_subscribe(rt, unsub_self_cb, &a); /* first in the list */
  event_log b = {0};
  int bid = tg_events_subscribe(rt, log_event, &b);
  ASSERT_TRUE(a.id > 0 && bid > 0 && a.id != bid);
  outcome o1 = {0}, o2 = {0};
  start_call(rt, "u1", "echo", NULL, &o1);
  start_call(rt, "u2", "echo", NULL, &o2);
  tg_runtime_run(rt, TG_RUN_DEFAULT);
  ASSERT_INT_EQ(a.n, 1); /* saw one event, then left */
  /* the subscriber after it missed nothing */
  ASSERT_INT_EQ(b.n, 8);
  ASSERT_STR_EQ(b.ev[0].type, "call_start");
  ASSERT_STR_EQ(b.ev[0].call_id, "u1");
  assert_no_gaps(&b);
  /* unsubscribing twice, or an unknown id, is harmless */
  tg_events_unsubscribe(rt, a.id);
  tg_events_unsubscribe(rt, 12345);
  outcome_free(&o1);
  outcome_free(&o2);
  event_log_free(&b);
  tg_runtime_free(rt);
}

/* ---- two runtimes ------------------------------------------------------- */

static const char *seen_policy =
    "local tg = require \"toolgate\"\n"
    "local seen = {}\n"
    "tg.on_event(function(ev) seen[#seen + 1] = ev.seq end)\n"
    "tg.tool { name = \"seen\", read_only = true, run = function()\n"
    "  return { first = seen[1], last = seen[#seen], n = #seen }\n"
    "end }\n";

static const char *deny_policy =
    "local tg = require \"toolgate\"\n"
    "tg.rule { name = \"no-shared\", priority = 10, tools = { \"shared\" },\n"
    "  check = function(call) return tg.deny(\"not here\") end }\n"
    "tg.tool { name = \"lua_only_a\", read_only = true,\n"
    "  run = function() return { a = true } end }\n";

TEST(events_two_runtimes_share_nothing) {
  char *dir_a = temp_dir(), *dir_b = temp_dir();
  put_file(dir_a, "10_seen.lua", seen_policy);
  put_file(dir_a, "20_deny.lua", deny_policy);
  put_file(dir_b, "10_seen.lua", seen_policy);
  tg_config ca = config_allowing(), cb = config_allowing();
  tg_runtime *a = runtime_with_policies(&ca, dir_a);
  tg_runtime *b = runtime_with_policies(&cb, dir_b);
  event_log ra = {0}, rb = {0};
  tg_events_subscribe(a, log_event, &ra);
  tg_events_subscribe(b, log_event, &rb);
  tg_tool_def shared = tool_def("shared", echo_start, NULL, NULL);
  tg_tool_def only_a = tool_def("only_a", echo_start, NULL, NULL);
  register_tool(a, &shared);
  register_tool(a, &only_a);
  register_tool(b, &shared);

  outcome o[8];
  memset(o, 0, sizeof o);
  start_call(a, "a-1", "shared", NULL, &o[0]);
  start_call(b, "b-1", "shared", NULL, &o[1]);
  start_call(b, "b-2", "only_a", NULL, &o[2]);
  start_call(b, "b-3", "lua_only_a", NULL, &o[3]);
  start_call(a, "a-2", "only_a", NULL, &o[4]);
  start_call(a, "a-3", "lua_only_a", NULL, &o[5]);
  tg_runtime_run(a, TG_RUN_DEFAULT);
  tg_runtime_run(b, TG_RUN_DEFAULT);
  ASSERT_STATUS(o[0], TG_STATUS_DENIED); /* A's rule */
  ASSERT_STR_EQ(o[0].rule, "no-shared");
  ASSERT_CALL_OK(o[1]);                  /* B has no such rule */
  ASSERT_STATUS(o[2], TG_STATUS_ERROR);  /* A's C tool */
  ASSERT_STR_EQ(o[2].code, "UNKNOWN_TOOL");
  ASSERT_STATUS(o[3], TG_STATUS_ERROR);  /* A's Lua tool */
  ASSERT_STR_EQ(o[3].code, "UNKNOWN_TOOL");
  ASSERT_CALL_OK(o[4]);
  ASSERT_CALL_OK(o[5]);

  /* each runtime counts its own events from 1 */
  start_call(a, "a-seen", "seen", NULL, &o[6]);
  start_call(b, "b-seen", "seen", NULL, &o[7]);
  tg_runtime_run(a, TG_RUN_DEFAULT);
  tg_runtime_run(b, TG_RUN_DEFAULT);
  ASSERT_CALL_OK(o[6]);
  ASSERT_CALL_OK(o[7]);
  ASSERT_NUM_EQ(num_at(o[6].result, "first"), 1);
  ASSERT_NUM_EQ(num_at(o[7].result, "first"), 1);
  ASSERT_NUM_EQ(num_at(o[6].result, "last"), num_at(o[6].result, "n"));
  ASSERT_NUM_EQ(num_at(o[7].result, "last"), num_at(o[7].result, "n"));
  /* the C subscribers: same start, no gaps, only their own calls */
  ASSERT_TRUE(ra.n > 0 && rb.n > 0);
  ASSERT_INT_EQ(ra.ev[0].seq, rb.ev[0].seq);
  assert_no_gaps(&ra);
  assert_no_gaps(&rb);
  for (int i = 0; i < ra.n; i++)
    if (ra.ev[i].call_id[0]) ASSERT_STARTS_WITH(ra.ev[i].call_id, "a-");
  for (int i = 0; i < rb.n; i++)
    if (rb.ev[i].call_id[0]) ASSERT_STARTS_WITH(rb.ev[i].call_id, "b-");
  ASSERT_NUM_EQ(ra.ev[ra.n - 1].seq, num_at(o[6].result, "last") + 1);
  ASSERT_NUM_EQ(rb.ev[rb.n - 1].seq, num_at(o[7].result, "last") + 1);

  for (int i = 0; i < 8; i++) outcome_free(&o[i]);
  event_log_free(&ra);
  event_log_free(&rb);
  tg_runtime_free(a);
  tg_runtime_free(b);
  remove_tree(dir_a);
  remove_tree(dir_b);
}

/* ---- malformed requests -------------------------------------------------- */

static int done_calls;
static void count_done(tg_runtime *rt, const tg_outcome *o, void *ud) {
  (void)rt;
  (void)o;
  (void)ud;
  done_calls++;
}

/* Starts a request that must be refused; returns the code, err in err. */
static int refused(tg_runtime *rt, const tg_call_request *req,
                   char err[TG_ERRMSG]) {
  err[0] = '\0';
  int before = done_calls;
  int rc = tg_call_start(rt, req, count_done, NULL, err);
  if (rc >= 0) TG_FAIL("the request was accepted (rc %d)", rc);
  if (!err[0]) TG_FAIL("refused (rc %d) without a message", rc);
  tg_runtime_run(rt, TG_RUN_DEFAULT);
  ASSERT_INT_EQ(done_calls, before);
  return rc;
}

static tg_runtime *echo_rt(event_log *ev, tg_config *cfg) {
  tg_runtime *rt = new_runtime(cfg);
  tg_tool_def d = tool_def("echo", echo_start, NULL, NULL);
  register_tool(rt, &d);
  if (ev) tg_events_subscribe(rt, log_event, ev);
  return rt;
}

TEST(request_without_tool_is_refused) {
  event_log ev = {0};
  tg_runtime *rt = echo_rt(&ev, NULL);
  char err[TG_ERRMSG];
  tg_call_request req;
  memset(&req, 0, sizeof req);
  ASSERT_TRUE(refused(rt, &req, err) < 0);
  ASSERT_CONTAINS(err, "tool");
  req.tool = "";
  ASSERT_TRUE(refused(rt, &req, err) < 0);
  ASSERT_INT_EQ(count_events(&ev, "call_start", NULL), 0);
  ASSERT_INT_EQ(echo_starts, 0);
  event_log_free(&ev);
  tg_runtime_free(rt);
}

/* Args text the agent sent that does not parse: the call ends at once
 * with VALIDATE INVALID_ARGS, naming what was wrong; nothing runs. */
static void invalid_args(tg_runtime *rt, const char *args, const char *what) {
  outcome o = {0};
  char err[TG_ERRMSG] = "";
  tg_call_request req;
  memset(&req, 0, sizeof req);
  req.tool = "echo";
  req.args_json = args;
  ASSERT_OK(tg_call_start(rt, &req, record_outcome, &o, err), err);
  tg_runtime_run(rt, TG_RUN_DEFAULT);
  ASSERT_INT_EQ(o.n, 1);
  ASSERT_STATUS(o, TG_STATUS_ERROR);
  ASSERT_INT_EQ(o.phase, TG_PHASE_VALIDATE);
  ASSERT_STR_EQ(o.code, "INVALID_ARGS");
  ASSERT_CONTAINS(o.message, "invalid arguments for 'echo'");
  ASSERT_CONTAINS(o.message, what);
  ASSERT_INT_EQ(echo_starts, 0);
  outcome_free(&o);
}

TEST(request_args_not_an_object_is_refused) {
  event_log ev = {0};
  tg_runtime *rt = echo_rt(&ev, NULL);
  invalid_args(rt, "[1,2]", "object");
  /* a tree the host built itself is the host's mistake: refused */
  char err[TG_ERRMSG];
  tg_call_request req;
  memset(&req, 0, sizeof req);
  req.tool = "echo";
  cJSON *arr = cJSON_Parse("[1,2]");
  req.args = arr;
  ASSERT_TRUE(refused(rt, &req, err) < 0);
  ASSERT_CONTAINS(err, "object");
  cJSON_Delete(arr);
  ASSERT_INT_EQ(count_events(&ev, "call_start", NULL), 1);
  ASSERT_INT_EQ(echo_starts, 0);
  event_log_free(&ev);
  tg_runtime_free(rt);
}

TEST(request_bad_json_is_refused) {
  event_log ev = {0};
  tg_runtime *rt = echo_rt(&ev, NULL);
  invalid_args(rt, "{bad", "JSON");
  invalid_args(rt, "{\"a\":1} trailing", "JSON");
  invalid_args(rt, "", "JSON");
  invalid_args(rt, "{\"a\":1,\"a\":2}", "$.a: duplicate key \"a\"");
  invalid_args(rt, "{\"n\":1e400}", "$.n");
  /* the events carry the empty args, never the refused text */
  ASSERT_INT_EQ(count_events(&ev, "call_start", NULL), 5);
  event_log_free(&ev);
  tg_runtime_free(rt);
}

TEST(request_args_over_max_bytes_is_refused) {
  tg_config cfg = config_allowing();
  cfg.max_args_bytes = 64;
  event_log ev = {0};
  tg_runtime *rt = echo_rt(&ev, &cfg);
  char big[256];
  memset(big, 'x', sizeof big);
  memcpy(big, "{\"s\":\"", 6);
  memcpy(big + sizeof big - 3, "\"}", 3); /* valid JSON, 255 bytes */
  invalid_args(rt, big, "limit");
  /* under the limit is fine */
  outcome o = {0};
  start_call(rt, NULL, "echo", "{\"s\":\"small\"}", &o);
  run_until(rt, &o.n, 1);
  ASSERT_CALL_OK(o);
  outcome_free(&o);
  event_log_free(&ev);
  tg_runtime_free(rt);
}

TEST(request_unknown_tool_ends_with_unknown_tool) {
  tg_config cfg;
  tg_config_init(&cfg);
  cfg.db_off = 1; /* with storage on, done waits for the audit record */
  tg_runtime *rt = echo_rt(NULL, &cfg);
  outcome o = {0};
  start_call(rt, "u1", "does_not_exist", "{}", &o);
  ASSERT_INT_EQ(o.n, 1); /* refused at once, from inside tg_call_start */
  ASSERT_STATUS(o, TG_STATUS_ERROR);
  ASSERT_STR_EQ(o.code, "UNKNOWN_TOOL");
  ASSERT_CONTAINS(o.message, "does_not_exist");
  ASSERT_INT_EQ(o.attempts, 0);
  tg_runtime_run(rt, TG_RUN_DEFAULT);
  ASSERT_INT_EQ(o.n, 1);
  outcome_free(&o);
  tg_runtime_free(rt);
}

TEST(request_duplicate_running_id_is_eexist) {
  tg_config cfg = config_allowing();
  tg_runtime *rt = new_runtime(&cfg);
  slow_tool s = {0};
  s.delay_ms = 20;
  tg_tool_def d = tool_def("slow", slow_start, NULL, &s);
  register_tool(rt, &d);
  outcome o = {0};
  start_call(rt, "same", "slow", NULL, &o);
  char err[TG_ERRMSG] = "";
  tg_call_request req;
  memset(&req, 0, sizeof req);
  req.id = "same";
  req.tool = "slow";
  int before = done_calls;
  ASSERT_INT_EQ(tg_call_start(rt, &req, count_done, NULL, err), -EEXIST);
  ASSERT_CONTAINS(err, "same");
  ASSERT_INT_EQ(s.starts, 1);
  run_until(rt, &o.n, 1);
  ASSERT_INT_EQ(done_calls, before);
  ASSERT_CALL_OK(o); /* the first call went on */
  /* once it has ended, the id is free again */
  outcome o2 = {0};
  start_call(rt, "same", "slow", NULL, &o2);
  run_until(rt, &o2.n, 1);
  ASSERT_CALL_OK(o2);
  slow_close(rt, &s);
  outcome_free(&o);
  outcome_free(&o2);
  tg_runtime_free(rt);
}

/* Fails unless obj has exactly these keys (in any order). */
static void assert_keys(const cJSON *obj, const char *const *keys, int n) {
  ASSERT_TRUE(cJSON_IsObject(obj));
  ASSERT_INT_EQ(cJSON_GetArraySize(obj), n);
  for (int i = 0; i < n; i++)
    if (!cJSON_GetObjectItemCaseSensitive(obj, keys[i]))
      TG_FAIL("key '%s' is missing from %s", keys[i], cJSON_PrintUnformatted(obj));
}

TEST(outcome_to_json_has_exact_keys) {
  static const char *const keys[] = {"id", "tool", "status", "result",
                                     "error", "decision", "attempts",
                                     "duration_ms"};
  static const char *const dkeys[] = {"verdict", "rule"};
  tg_config cfg = config_allowing();
  tg_runtime *rt = echo_rt(NULL, &cfg);
  outcome ok = {0}, bad = {0};
  start_call(rt, "j1", "echo", "{\"q\":true}", &ok);
  start_call(rt, "j2", "missing", NULL, &bad);
  run_until(rt, &ok.n, 1);
  run_until(rt, &bad.n, 1);

  assert_keys(ok.json, keys, 8);
  assert_keys(cJSON_GetObjectItemCaseSensitive(ok.json, "decision"), dkeys, 2);
  ASSERT_STR_EQ(str_at(ok.json, "id"), "j1");
  ASSERT_STR_EQ(str_at(ok.json, "tool"), "echo");
  ASSERT_STR_EQ(str_at(ok.json, "status"), "ok");
  ASSERT_TRUE(cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(ok.json, "result")));
  ASSERT_TRUE(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(ok.json, "error")));
  ASSERT_STR_EQ(str_at(cJSON_GetObjectItemCaseSensitive(ok.json, "decision"), "verdict"),
                "allow");
  ASSERT_TRUE(cJSON_IsNull(
      cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(ok.json, "decision"), "rule")));
  ASSERT_NUM_EQ(num_at(ok.json, "attempts"), 1);
  ASSERT_TRUE(num_at(ok.json, "duration_ms") >= 0);

  assert_keys(bad.json, keys, 8);
  assert_keys(cJSON_GetObjectItemCaseSensitive(bad.json, "decision"), dkeys, 2);
  ASSERT_STR_EQ(str_at(bad.json, "status"), "error");
  ASSERT_TRUE(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(bad.json, "result")));
  const cJSON *e = cJSON_GetObjectItemCaseSensitive(bad.json, "error");
  ASSERT_TRUE(cJSON_IsObject(e));
  ASSERT_STR_EQ(str_at(e, "code"), "UNKNOWN_TOOL");
  ASSERT_TRUE(str_at(e, "phase"));
  ASSERT_TRUE(str_at(e, "message"));
  ASSERT_TRUE(cJSON_IsBool(cJSON_GetObjectItemCaseSensitive(e, "retryable")));
  outcome_free(&ok);
  outcome_free(&bad);
  tg_runtime_free(rt);
}

/* ---- a failed post-hook withholds the result ----------------------------- */

/* leaky: a C tool whose result (or, failing, partial result) carries a
 * secret that is in no args. */
static void leaky_start(tg_exec *ex, const cJSON *args, void *ud) {
  (void)ud;
  cJSON *r = cJSON_CreateObject();
  cJSON_AddStringToObject(r, "token", "S3CRET-from-c");
  if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(args, "fail")))
    tg_exec_finish_error(ex, r, "FLAKY", "try later", 0);
  else
    tg_exec_finish_ok(ex, r);
}

static int json_carries(const cJSON *j, const char *needle) {
  char *s = j ? cJSON_PrintUnformatted(j) : NULL;
  int found = s && strstr(s, needle);
  free(s);
  return found;
}

static void withheld_case(const char *hook_body, const char *args_json) {
  char *dir = temp_dir();
  char policy[1024];
  snprintf(policy, sizeof policy,
           "local tg = require \"toolgate\"\n"
           "tg.after_tool(\"leaky\", function(call, res)\n"
           "  %s\n"
           "end)\n", hook_body);
  put_file(dir, "20_redact.lua", policy);
  tg_runtime *rt = runtime_with_policies(NULL, dir);
  tg_tool_def d = tool_def("leaky", leaky_start, NULL, NULL);
  register_tool(rt, &d);
  event_log ev = {0};
  tg_events_subscribe(rt, log_event, &ev);
  outcome o = {0};
  start_call(rt, NULL, "leaky", args_json, &o);
  run_until(rt, &o.n, 1);
  ASSERT_STATUS(o, TG_STATUS_ERROR);
  ASSERT_INT_EQ(o.phase, TG_PHASE_POLICY);
  ASSERT_CONTAINS(o.message, "withheld");
  ASSERT_CONTAINS(o.message, "20_redact.lua:");
  ASSERT_NULL(o.result);
  ASSERT_TRUE(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(o.json, "result")));
  ASSERT_FALSE(json_carries(o.json, "S3CRET"));
  ASSERT_TRUE(count_events(&ev, "call_end", NULL) == 1);
  for (int i = 0; i < ev.n; i++)
    if (json_carries(ev.ev[i].data, "S3CRET"))
      TG_FAIL("the '%s' event carries the withheld result", ev.ev[i].type);
  outcome_free(&o);
  event_log_free(&ev);
  tg_runtime_free(rt);
  remove_tree(dir);
}

TEST(post_hook_that_raises_withholds_the_result_from_outcome_and_events) {
  withheld_case("error(\"redaction broke\")", "{}");
}

TEST(post_hook_that_raises_withholds_a_partial_result_too) {
  withheld_case("error(\"redaction broke\")", "{\"fail\": true}");
}

TEST(post_hook_that_aborts_withholds_the_result) {
  withheld_case("return tg.abort(\"cannot redact\")", "{}");
}


/* ---- a call's own listeners (tg_call_request.on_event / on_progress) ---- */

typedef struct {
  event_log own;         /* what on_event was told */
  event_log progress;    /* what on_progress was told */
  const outcome *out;    /* the call's outcome: must still be pending */
  int after_done;        /* events told after done ran */
} call_listener;

static void own_event(tg_runtime *rt, const tg_event *e, void *ud) {
  call_listener *l = ud;
  if (l->out->n) l->after_done++;
  log_event(rt, e, &l->own);
}

static void own_progress(tg_runtime *rt, const tg_event *e, void *ud) {
  call_listener *l = ud;
  log_event(rt, e, &l->progress);
}

static void start_listened(tg_runtime *rt, const char *id, const char *tool,
                           call_listener *l, outcome *out) {
  char err[TG_ERRMSG] = "";
  tg_call_request req;
  memset(&req, 0, sizeof req);
  req.id = id;
  req.tool = tool;
  req.on_event = own_event;
  req.on_progress = own_progress;
  req.events_ud = l;
  l->out = out;
  ASSERT_OK(tg_call_start(rt, &req, record_outcome, out, err), err);
}

TEST(call_listener_hears_only_its_call_in_order_and_before_done) {
  tg_config cfg = config_allowing();
  cfg.progress_interval_ms = 10;
  tg_runtime *rt = new_runtime(&cfg);
  slow_tool s = {0};
  s.delay_ms = 60;
  tg_tool_def d = tool_def("slow", slow_start, slow_cancel, &s);
  register_tool(rt, &d);
  tg_tool_def e = tool_def("echo", echo_start, NULL, NULL);
  register_tool(rt, &e);
  event_log all = {0};
  ASSERT_TRUE(tg_events_subscribe(rt, log_event, &all) > 0);
  call_listener l = {0};
  outcome mine, other;
  memset(&mine, 0, sizeof mine);
  memset(&other, 0, sizeof other);
  start_listened(rt, "mine", "slow", &l, &mine);
  start_call(rt, "other", "echo", NULL, &other);
  run_until(rt, &mine.n, 1);
  ASSERT_CALL_OK(mine);
  /* every event of the call, none of the other's, in seq order */
  ASSERT_INT_EQ(l.own.n, count_events(&all, "call_start", "mine") +
                             count_events(&all, "decision", "mine") +
                             count_events(&all, "attempt", "mine") +
                             count_events(&all, "progress", "mine") +
                             count_events(&all, "call_end", "mine"));
  ASSERT_STR_EQ(l.own.ev[0].type, "call_start");
  ASSERT_STR_EQ(l.own.ev[l.own.n - 1].type, "call_end");
  for (int i = 0; i < l.own.n; i++) {
    ASSERT_STR_EQ(l.own.ev[i].call_id, "mine");
    if (i) ASSERT_TRUE(l.own.ev[i].seq > l.own.ev[i - 1].seq);
  }
  ASSERT_INT_EQ(l.after_done, 0);
  /* on_progress: the progress events only, the same ones */
  ASSERT_TRUE(l.progress.n >= 1);
  ASSERT_INT_EQ(l.progress.n, count_events(&all, "progress", "mine"));
  for (int i = 0; i < l.progress.n; i++)
    ASSERT_STR_EQ(l.progress.ev[i].type, "progress");
  slow_close(rt, &s);
  event_log_free(&l.own);
  event_log_free(&l.progress);
  event_log_free(&all);
  outcome_free(&mine);
  outcome_free(&other);
  tg_runtime_free(rt);
}

/* Nobody subscribed to the runtime: the call's listener alone makes its
 * events, and numbering is the same as when someone listens. */
TEST(call_listener_works_without_any_subscriber) {
  tg_config cfg = config_allowing();
  tg_runtime *rt = new_runtime(&cfg);
  tg_tool_def e = tool_def("echo", echo_start, NULL, NULL);
  register_tool(rt, &e);
  outcome first;
  memset(&first, 0, sizeof first);
  start_call(rt, "first", "echo", NULL, &first); /* unheard: still counted */
  run_until(rt, &first.n, 1);
  call_listener l = {0};
  outcome mine;
  memset(&mine, 0, sizeof mine);
  start_listened(rt, "mine", "echo", &l, &mine);
  run_until(rt, &mine.n, 1);
  ASSERT_TRUE(l.own.n >= 3);
  ASSERT_STR_EQ(l.own.ev[0].type, "call_start");
  /* seq 1 was the load's policy_loaded, the first call (an echo call
   * like ours) took the next l.own.n: ours starts right after */
  ASSERT_INT_EQ(l.own.ev[0].seq, 1 + (uint64_t)l.own.n + 1);
  ASSERT_NUM_EQ(num_at(l.own.ev[0].data, "seq"), (double)l.own.ev[0].seq);
  ASSERT_TRUE(num_at(l.own.ev[0].data, "ts") > 1.6e12); /* wall clock, ms */
  event_log_free(&l.own);
  event_log_free(&l.progress);
  outcome_free(&first);
  outcome_free(&mine);
  tg_runtime_free(rt);
}

TEST_MAIN(TEST_ENTRY(events_seq_strictly_increasing_without_gaps),
          TEST_ENTRY(call_listener_hears_only_its_call_in_order_and_before_done),
          TEST_ENTRY(call_listener_works_without_any_subscriber),
          TEST_ENTRY(events_order_of_a_simple_allowed_call),
          TEST_ENTRY(events_unsubscribe_inside_callback_is_safe),
          TEST_ENTRY(events_two_runtimes_share_nothing),
          TEST_ENTRY(request_without_tool_is_refused),
          TEST_ENTRY(request_args_not_an_object_is_refused),
          TEST_ENTRY(request_bad_json_is_refused),
          TEST_ENTRY(request_args_over_max_bytes_is_refused),
          TEST_ENTRY(request_unknown_tool_ends_with_unknown_tool),
          TEST_ENTRY(request_duplicate_running_id_is_eexist),
          TEST_ENTRY(outcome_to_json_has_exact_keys),
          TEST_ENTRY(post_hook_that_raises_withholds_the_result_from_outcome_and_events),
          TEST_ENTRY(post_hook_that_raises_withholds_a_partial_result_too),
          TEST_ENTRY(post_hook_that_aborts_withholds_the_result))
