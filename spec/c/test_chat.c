/*
 * test_chat.c — the chat side from C: C layers around chats and
 * tools, turns on calls, model routing with its fallback and availability
 * on an injected clock, budgets (each level once per period, again after
 * the period rolls, not again after a restart on the same ledger), and
 * the notification list (cap, expiry, dismiss, subscribers) and progress
 * manager (states, cancel reaching the call).
 */
#include "helpers.h"
#include "runtime/runtime.h" /* the restart test hands a ledger over */
#include "internal.h"

/* ---- a clock the test moves ------------------------------------------------ */

typedef struct {
  int64_t ms;
} test_clock;

static int64_t clock_fn(void *ud) { return ((test_clock *)ud)->ms; }

/* ms since the epoch of a local time (TZ as the test set it). */
static int64_t local_ms(int y, int mo, int d, int h, int mi) {
  struct tm tm = {0};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_isdst = -1;
  return (int64_t)mktime(&tm) * 1000;
}

static void set_tz(const char *tz) {
  setenv("TZ", tz, 1);
  tzset();
}

/* ---- layers ------------------------------------------------------------------- */

typedef struct {
  char log[4096];
  int fail_kind;            /* 1..4: the layer of that kind fails */
  tg_runtime *rt;
  int remove_id;            /* removed by the first before_chat */
  int cancel_call;          /* before_tool cancels the call it wraps */
} layer_log;

static void note(layer_log *l, const char *fmt, const char *a, long long n) {
  size_t len = strlen(l->log);
  snprintf(l->log + len, sizeof l->log - len, fmt, a, n);
}

static int lay_before_chat(tg_runtime *rt, const tg_layer_ctx *c, void *ud,
                           char err[TG_ERRMSG]) {
  layer_log *l = ud;
  note(l, "%s:before_chat:%lld ", c->model ? c->model : "-", (long long)c->turn);
  if (l->remove_id) {
    tg_layer_remove(rt, l->remove_id);
    l->remove_id = 0;
  }
  if (l->fail_kind == 1) {
    snprintf(err, TG_ERRMSG, "before_chat failed on purpose");
    return -1;
  }
  return 0;
}

static int lay_after_chat(tg_runtime *rt, const tg_layer_ctx *c, void *ud,
                          char err[TG_ERRMSG]) {
  layer_log *l = ud;
  note(l, "after_chat:%s:%lld ", c->ok ? "ok" : c->error, (long long)c->turn);
  return 0;
}

static int lay_before_tool(tg_runtime *rt, const tg_layer_ctx *c, void *ud,
                           char err[TG_ERRMSG]) {
  layer_log *l = ud;
  note(l, "before_tool:%s:%lld ", c->tool, (long long)c->turn);
  if (l->cancel_call) tg_call_cancel(rt, c->call_id);
  if (l->fail_kind == 3) {
    snprintf(err, TG_ERRMSG, "before_tool failed");
    return 1;
  }
  return 0;
}

static int lay_after_tool(tg_runtime *rt, const tg_layer_ctx *c, void *ud,
                          char err[TG_ERRMSG]) {
  layer_log *l = ud;
  note(l, "after_tool:%s:%lld ", c->ok ? "ok" : c->error, (long long)c->turn);
  return 0;
}

static int second_layer(tg_runtime *rt, const tg_layer_ctx *c, void *ud,
                        char err[TG_ERRMSG]) {
  layer_log *l = ud;
  note(l, "%ssecond:%lld ", "", (long long)c->turn);
  return 0;
}

static tg_layer full_layer(const char *name, layer_log *l) {
  tg_layer x = {name, lay_before_chat, lay_after_chat, lay_before_tool,
                lay_after_tool, l};
  return x;
}

static void chat(tg_runtime *rt, const char *model, int ok, const char *error,
                 double cost) {
  char err[TG_ERRMSG] = "";
  tg_chat_request q = {NULL, model, NULL, NULL};
  ASSERT_OK(tg_chat_begin(rt, &q, err));
  tg_chat_usage u = {NULL, 10, 20, cost};
  tg_chat_result r = {NULL, ok, error, cost > 0 ? &u : NULL};
  ASSERT_OK(tg_chat_end(rt, &r, err));
}

TEST(layers_run_in_registration_order_with_the_turn) {
  tg_config cfg = config_allowing();
  tg_runtime *rt = new_runtime(&cfg);
  layer_log l = {0};
  char err[TG_ERRMSG] = "";
  tg_layer a = full_layer("a", &l);
  tg_layer b = {"b", second_layer, NULL, NULL, NULL, &l};
  ASSERT_INT_EQ(tg_layer_add(rt, &a, err), 1);
  ASSERT_INT_EQ(tg_layer_add(rt, &b, err), 2);
  ASSERT_INT_EQ(tg_turn_begin(rt, NULL), 1);
  chat(rt, "big", 1, NULL, 0);
  ASSERT_INT_EQ(tg_turn_begin(rt, NULL), 2);
  chat(rt, "small", 0, "overloaded", 0);
  ASSERT_STR_EQ(l.log, "big:before_chat:1 second:1 after_chat:ok:1 "
                       "small:before_chat:2 second:2 after_chat:overloaded:2 ");
  ASSERT_INT_EQ(tg_turn_current(rt, NULL), 2);
  ASSERT_INT_EQ(tg_turn_current(rt, "nobody"), 0);
  tg_runtime_free(rt);
}

TEST(a_layer_needs_a_function) {
  tg_runtime *rt = new_runtime(NULL);
  char err[TG_ERRMSG] = "";
  tg_layer none = {"none", NULL, NULL, NULL, NULL, NULL};
  ASSERT_INT_EQ(tg_layer_add(rt, &none, err), -EINVAL);
  ASSERT_CONTAINS(err, "at least one function");
  ASSERT_INT_EQ(tg_layer_add(rt, NULL, err), -EINVAL);
  tg_runtime_free(rt);
}

TEST(a_failing_layer_is_an_event_and_the_next_runs) {
  tg_config cfg = config_allowing();
  tg_runtime *rt = new_runtime(&cfg);
  event_log ev = {0};
  tg_events_subscribe(rt, log_event, &ev);
  layer_log l = {.fail_kind = 1};
  char err[TG_ERRMSG] = "";
  tg_layer a = full_layer("failing", &l);
  tg_layer b = {"b", second_layer, NULL, NULL, NULL, &l};
  tg_layer_add(rt, &a, err);
  tg_layer_add(rt, &b, err);
  tg_turn_begin(rt, "s");
  tg_chat_request q = {"s", "m", NULL, NULL};
  ASSERT_OK(tg_chat_begin(rt, &q, err));
  ASSERT_CONTAINS(l.log, "second:1");
  int i = find_event(&ev, "layer_error");
  ASSERT_TRUE(i >= 0);
  ASSERT_STR_EQ(str_at(ev.ev[i].data, "layer"), "before_chat");
  ASSERT_STR_EQ(str_at(ev.ev[i].data, "where"), "C layer 'failing'");
  ASSERT_STR_EQ(str_at(ev.ev[i].data, "error"), "before_chat failed on purpose");
  ASSERT_STR_EQ(str_at(ev.ev[i].data, "session"), "s");
  ASSERT_NUM_EQ(num_at(ev.ev[i].data, "turn"), 1);
  tg_chat_result r = {"s", 1, NULL, NULL};
  ASSERT_OK(tg_chat_end(rt, &r, err));
  event_log_free(&ev);
  tg_runtime_free(rt);
}

TEST(a_layer_removed_inside_a_round_runs_no_more) {
  tg_runtime *rt = new_runtime(NULL);
  layer_log l = {0};
  char err[TG_ERRMSG] = "";
  tg_layer a = full_layer("a", &l);
  tg_layer b = {"b", second_layer, NULL, NULL, NULL, &l};
  tg_layer_add(rt, &a, err);
  l.remove_id = tg_layer_add(rt, &b, err);
  chat(rt, "m", 1, NULL, 0); /* a removes b before b's turn: b skips */
  chat(rt, "m", 1, NULL, 0);
  ASSERT_NOT_CONTAINS(l.log, "second");
  tg_runtime_free(rt);
}

TEST(chats_open_one_at_a_time_per_session) {
  tg_runtime *rt = new_runtime(NULL);
  char err[TG_ERRMSG] = "";
  tg_chat_request q = {"a", NULL, NULL, NULL};
  ASSERT_OK(tg_chat_begin(rt, &q, err));
  ASSERT_INT_EQ(tg_chat_begin(rt, &q, err), -EBUSY);
  tg_chat_result r = {"b", 1, NULL, NULL};
  ASSERT_INT_EQ(tg_chat_end(rt, &r, err), -ENOENT);
  r.session = "a";
  tg_chat_usage bad = {NULL, -1, 0, 0};
  r.usage = &bad;
  ASSERT_INT_EQ(tg_chat_end(rt, &r, err), -EINVAL);
  bad.input_tokens = 0;
  bad.cost = NAN;
  ASSERT_INT_EQ(tg_chat_end(rt, &r, err), -EINVAL);
  r.usage = NULL;
  ASSERT_OK(tg_chat_end(rt, &r, err));
  cJSON *list = cJSON_CreateArray();
  q.request = list; /* a request is an object */
  ASSERT_INT_EQ(tg_chat_begin(rt, &q, err), -EINVAL);
  cJSON_Delete(list);
  tg_runtime_free(rt);
}

/* A runtime keeps the 4096 most recently used sessions' turns (and any
 * with an open chat): one answering an agent's hooks for months, or an
 * agent inventing session ids, does not grow without end. */
TEST(sessions_kept_are_bounded_the_least_recent_forgotten) {
  tg_runtime *rt = new_runtime(NULL);
  char err[TG_ERRMSG] = "", name[32];
  tg_chat_request q = {"open", NULL, NULL, NULL};
  ASSERT_OK(tg_chat_begin(rt, &q, err)); /* the oldest, but its chat is open */
  ASSERT_INT_EQ(tg_turn_begin(rt, "first"), 1);
  ASSERT_INT_EQ(tg_turn_begin(rt, "first"), 2);
  for (int i = 0; i < 5000; i++) {
    snprintf(name, sizeof name, "s-%d", i);
    ASSERT_INT_EQ(tg_turn_begin(rt, name), 1);
    if (i % 1000 == 0) ASSERT_INT_EQ(tg_turn_begin(rt, "first"), 3 + i / 1000);
  }
  /* "first" was used all along: kept; the oldest of the rest forgotten */
  ASSERT_INT_EQ(tg_turn_current(rt, "first"), 7);
  ASSERT_INT_EQ(tg_turn_current(rt, "s-0"), 0);
  ASSERT_INT_EQ(tg_turn_current(rt, "s-4999"), 1);
  ASSERT_INT_EQ(tg_turn_current(rt, "s-906"), 1);
  ASSERT_INT_EQ(tg_turn_current(rt, "s-905"), 0);
  tg_chat_result r = {"open", 1, NULL, NULL}; /* its open chat was kept */
  ASSERT_OK(tg_chat_end(rt, &r, err));
  tg_runtime_free(rt);
}

/* A layer that begins turns of many sessions makes the runtime forget
 * the least recent ones — the chat's own session among them, its chat
 * being closed (after_chat) — while later layers still read ctx. */
static int flood_sessions(tg_runtime *rt, const tg_layer_ctx *c, void *ud,
                          char err[TG_ERRMSG]) {
  char name[32];
  int round = ++*(int *)ud; /* new names each time: new sessions */
  for (int i = 0; i < 5000; i++) {
    snprintf(name, sizeof name, "flood-%d-%d", round, i);
    tg_turn_begin(rt, name);
  }
  return 0;
}

static int see_session(tg_runtime *rt, const tg_layer_ctx *c, void *ud,
                       char err[TG_ERRMSG]) {
  snprintf(ud, 64, "%s", c->session);
  return 0;
}

TEST(layers_read_their_session_after_it_is_forgotten) {
  tg_runtime *rt = new_runtime(NULL);
  char err[TG_ERRMSG] = "", seen_begin[64] = "", seen_end[64] = "";
  int rounds = 0;
  tg_layer flood = {"flood", flood_sessions, flood_sessions, NULL, NULL, &rounds};
  tg_layer see = {"see", see_session, NULL, NULL, NULL, seen_begin};
  tg_layer see_end = {"see_end", NULL, see_session, NULL, NULL, seen_end};
  ASSERT_TRUE(tg_layer_add(rt, &flood, err) > 0);
  ASSERT_TRUE(tg_layer_add(rt, &see, err) > 0);
  ASSERT_TRUE(tg_layer_add(rt, &see_end, err) > 0);
  tg_chat_request q = {"victim", NULL, NULL, NULL};
  ASSERT_OK(tg_chat_begin(rt, &q, err));
  ASSERT_STR_EQ(seen_begin, "victim");
  tg_chat_result r = {"victim", 1, NULL, NULL};
  ASSERT_OK(tg_chat_end(rt, &r, err));
  ASSERT_STR_EQ(seen_end, "victim");
  ASSERT_INT_EQ(rounds, 2);
  ASSERT_INT_EQ(tg_turn_current(rt, "victim"), 0); /* forgotten meanwhile */
  tg_runtime_free(rt);
}

TEST(tool_layers_wrap_calls_that_reach_the_tool) {
  tg_config cfg = config_allowing();
  tg_runtime *rt = new_runtime(&cfg);
  tg_tool_def d = tool_def("echo", echo_start, NULL, NULL);
  register_tool(rt, &d);
  layer_log l = {0};
  char err[TG_ERRMSG] = "";
  tg_layer a = full_layer("a", &l);
  tg_layer_add(rt, &a, err);
  tg_turn_begin(rt, NULL);
  tg_turn_begin(rt, NULL);
  outcome o = call_tool(rt, "echo", "{}");
  ASSERT_CALL_OK(o);
  outcome_free(&o);
  o = call_tool(rt, "nosuch", "{}"); /* never reaches a tool */
  outcome_free(&o);
  ASSERT_STR_EQ(l.log, "before_tool:echo:2 after_tool:ok:2 ");
  tg_runtime_free(rt);
}

TEST(a_tool_layer_may_cancel_the_call) {
  tg_config cfg = config_allowing();
  tg_runtime *rt = new_runtime(&cfg);
  tg_tool_def d = tool_def("echo", echo_start, NULL, NULL);
  register_tool(rt, &d);
  layer_log l = {.cancel_call = 1, .fail_kind = 3};
  char err[TG_ERRMSG] = "";
  tg_layer a = full_layer("a", &l);
  tg_layer_add(rt, &a, err);
  echo_starts = 0;
  outcome o = call_tool(rt, "echo", "{}");
  ASSERT_STATUS(o, TG_STATUS_CANCELLED);
  ASSERT_INT_EQ(echo_starts, 0);
  ASSERT_CONTAINS(l.log, "after_tool:");
  outcome_free(&o);
  tg_runtime_free(rt);
}

/* ---- routing ------------------------------------------------------------------- */

static tg_runtime *routing_runtime(const char *policy, test_clock *clk,
                                   char **dir) {
  *dir = temp_dir();
  put_file(*dir, "10_route.lua", policy);
  tg_config cfg;
  tg_config_init(&cfg);
  tg_runtime *rt = runtime_with_policies(&cfg, *dir);
  tg_runtime_set_clock(rt, clock_fn, clk);
  char err[TG_ERRMSG] = "";
  const char *models =
      "{\"routes\":{\"light\":\"small\",\"heavy\":\"big\"},"
      "\"default\":\"mid\","
      "\"fallback\":{\"big\":[\"big-eu\",\"mid\"],\"*\":[\"mid\"]}}";
  cJSON *m = tg_json_parse(models, strlen(models), NULL, err, sizeof err);
  ASSERT_NOT_NULL(m);
  ASSERT_OK(tg_runtime_set_models(rt, m, err));
  cJSON_Delete(m);
  return rt;
}

static cJSON *route(tg_runtime *rt, const char *json) {
  char err[TG_ERRMSG] = "";
  cJSON *q = tg_json_parse(json, strlen(json), NULL, err, sizeof err);
  ASSERT_NOT_NULL(q);
  cJSON *d = tg_route(rt, q, err);
  cJSON_Delete(q);
  if (!d) TG_FAIL("tg_route(%s): %s", json, err);
  return d;
}

static const char ROUTE_HOOKS[] =
    "local tg = require 'toolgate'\n"
    "tg.route_model(function(d)\n"                         /* line 2 */
    "  if d.context.tokens and d.context.tokens > 1000 then\n"
    "    d.selected_model = 'big'; d.reason = 'long context' end end)\n"
    "tg.route_model(function(d)\n"                         /* line 5 */
    "  if d.context.cheap then\n"
    "    return { selected_model = 'small', reason = 'cheap mode' } end end)\n"
    "tg.route_model(function(d) d.selected_model = 42 end)\n" /* line 8 */
    "tg.route_model(function(d) if d.context.spin then while true do end end end)\n";

TEST(routing_table_then_hooks_in_order_then_fallback) {
  test_clock clk = {local_ms(2026, 5, 1, 12, 0)};
  char *dir;
  tg_runtime *rt = routing_runtime(ROUTE_HOOKS, &clk, &dir);
  event_log ev = {0};
  tg_events_subscribe(rt, log_event, &ev);

  cJSON *d = route(rt, "{\"task_weight\":\"light\",\"requested_model\":\"x\"}");
  ASSERT_STR_EQ(str_at(d, "selected_model"), "small");
  ASSERT_STR_EQ(str_at(d, "reason"), "routing table: task_weight 'light'");
  ASSERT_STR_EQ(str_at(d, "requested_model"), "x");
  ASSERT_INT_EQ(bool_at(d, "available"), 1);
  cJSON_Delete(d);

  d = route(rt, "{\"requested_model\":\"x\"}");
  ASSERT_STR_EQ(str_at(d, "selected_model"), "x");
  ASSERT_STR_EQ(str_at(d, "reason"), "requested");
  cJSON_Delete(d);

  d = route(rt, "{}");
  ASSERT_STR_EQ(str_at(d, "selected_model"), "mid");
  cJSON_Delete(d);

  /* both hooks change it, in order: the second has the last word */
  d = route(rt, "{\"task_weight\":\"light\",\"context\":{\"tokens\":5000,"
                "\"cheap\":true}}");
  ASSERT_STR_EQ(str_at(d, "selected_model"), "small");
  ASSERT_STR_EQ(str_at(d, "reason"), "cheap mode");
  cJSON *hooks = cJSON_GetObjectItemCaseSensitive(d, "hooks");
  ASSERT_INT_EQ(cJSON_GetArraySize(hooks), 2);
  cJSON *h0 = cJSON_GetArrayItem(hooks, 0), *h1 = cJSON_GetArrayItem(hooks, 1);
  ASSERT_CONTAINS(str_at(h0, "where"), "10_route.lua:2");
  ASSERT_STR_EQ(str_at(h0, "from"), "small");
  ASSERT_STR_EQ(str_at(h0, "to"), "big");
  ASSERT_STR_EQ(str_at(h0, "reason"), "long context");
  ASSERT_CONTAINS(str_at(h1, "where"), "10_route.lua:5");
  ASSERT_STR_EQ(str_at(h1, "from"), "big");
  ASSERT_STR_EQ(str_at(h1, "to"), "small");
  cJSON_Delete(d);

  /* the bad hook (line 8) was logged every time and skipped */
  int bad = 0;
  for (int i = 0; i < ev.n; i++)
    if (!strcmp(ev.ev[i].type, "layer_error")) {
      bad++;
      ASSERT_STR_EQ(str_at(ev.ev[i].data, "layer"), "route_model");
      ASSERT_CONTAINS(str_at(ev.ev[i].data, "where"), "10_route.lua:8");
      ASSERT_CONTAINS(str_at(ev.ev[i].data, "error"), "selected_model must be");
    }
  ASSERT_INT_EQ(bad, 4);
  ASSERT_INT_EQ(count_events(&ev, "route", NULL), 4);
  int last = -1;
  for (int i = 0; i < ev.n; i++)
    if (!strcmp(ev.ev[i].type, "route")) last = i;
  ASSERT_STR_EQ(str_at(ev.ev[last].data, "selected_model"), "small");
  ASSERT_INT_EQ(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(ev.ev[last].data, "hooks")), 2);
  event_log_free(&ev);
  tg_runtime_free(rt);
  remove_tree(dir);
}

TEST(a_hook_that_loops_is_stopped_and_skipped) {
  test_clock clk = {local_ms(2026, 5, 1, 12, 0)};
  char *dir = temp_dir();
  put_file(dir, "10_route.lua", ROUTE_HOOKS);
  tg_config cfg;
  tg_config_init(&cfg);
  cfg.policy_time_limit_ms = 100;
  tg_runtime *rt = runtime_with_policies(&cfg, dir);
  tg_runtime_set_clock(rt, clock_fn, &clk);
  event_log ev = {0};
  tg_events_subscribe(rt, log_event, &ev);
  cJSON *d = route(rt, "{\"requested_model\":\"x\",\"context\":{\"spin\":true}}");
  ASSERT_STR_EQ(str_at(d, "selected_model"), "x");
  cJSON_Delete(d);
  int stopped = 0;
  for (int i = 0; i < ev.n; i++)
    if (!strcmp(ev.ev[i].type, "layer_error") &&
        strstr(str_at(ev.ev[i].data, "error"), "time limit"))
      stopped++;
  ASSERT_INT_EQ(stopped, 1);
  event_log_free(&ev);
  tg_runtime_free(rt);
  remove_tree(dir);
}

TEST(an_unavailable_model_falls_back_until_it_comes_back) {
  test_clock clk = {local_ms(2026, 5, 1, 12, 0)};
  char *dir;
  tg_runtime *rt = routing_runtime("", &clk, &dir);
  char err[TG_ERRMSG] = "";
  ASSERT_OK(tg_model_unavailable(rt, "big", clk.ms + 60000, err));
  cJSON *d = route(rt, "{\"task_weight\":\"heavy\"}");
  ASSERT_STR_EQ(str_at(d, "selected_model"), "big-eu");
  cJSON *fb = cJSON_GetObjectItemCaseSensitive(d, "fallback");
  ASSERT_STR_EQ(str_at(fb, "from"), "big");
  ASSERT_STR_EQ(str_at(fb, "to"), "big-eu");
  ASSERT_CONTAINS(str_at(fb, "reason"), "'big' is unavailable for 60 s");
  cJSON_Delete(d);

  ASSERT_OK(tg_model_unavailable(rt, "big-eu", clk.ms + 30000, err));
  d = route(rt, "{\"task_weight\":\"heavy\"}");
  ASSERT_STR_EQ(str_at(d, "selected_model"), "mid"); /* next in its list */
  cJSON_Delete(d);

  ASSERT_OK(tg_model_unavailable(rt, "mid", clk.ms + 10000, err));
  d = route(rt, "{\"task_weight\":\"heavy\"}");
  ASSERT_STR_EQ(str_at(d, "selected_model"), "big"); /* nothing to go to */
  ASSERT_INT_EQ(bool_at(d, "available"), 0);
  ASSERT_TRUE(is_null_at(cJSON_GetObjectItemCaseSensitive(d, "fallback"), "to"));
  cJSON_Delete(d);

  clk.ms += 10001; /* mid is back */
  d = route(rt, "{\"task_weight\":\"heavy\"}");
  ASSERT_STR_EQ(str_at(d, "selected_model"), "mid");
  cJSON_Delete(d);

  clk.ms += 50000; /* big is back: no fallback at all */
  d = route(rt, "{\"task_weight\":\"heavy\"}");
  ASSERT_STR_EQ(str_at(d, "selected_model"), "big");
  ASSERT_NULL(cJSON_GetObjectItemCaseSensitive(d, "fallback"));
  ASSERT_INT_EQ(bool_at(d, "available"), 1);
  cJSON_Delete(d);

  /* "*" covers a model without a list of its own; 0 makes one available */
  ASSERT_OK(tg_model_unavailable(rt, "small", clk.ms + 1000, err));
  d = route(rt, "{\"task_weight\":\"light\"}");
  ASSERT_STR_EQ(str_at(d, "selected_model"), "mid");
  cJSON_Delete(d);
  ASSERT_OK(tg_model_unavailable(rt, "small", 0, err));
  d = route(rt, "{\"task_weight\":\"light\"}");
  ASSERT_STR_EQ(str_at(d, "selected_model"), "small");
  cJSON_Delete(d);
  tg_runtime_free(rt);
  remove_tree(dir);
}

TEST(bad_models_and_requests_are_refused_naming_the_problem) {
  tg_runtime *rt = new_runtime(NULL);
  char err[TG_ERRMSG] = "";
  const char *bad[][2] = {
      {"[]", "models must be a JSON object"},
      {"{\"route\":{}}", "unknown key 'route'"},
      {"{\"routes\":{\"light\":3}}", "routes['light'] must be a model name"},
      {"{\"default\":\"\"}", "'default' must be a model name"},
      {"{\"fallback\":{\"big\":[]}}", "fallback['big'] must be a non-empty"},
      {"{\"fallback\":{\"big\":\"mid\"}}", "fallback['big'] must be"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    cJSON *m = tg_json_parse(bad[i][0], strlen(bad[i][0]), NULL, err, sizeof err);
    ASSERT_INT_EQ(tg_runtime_set_models(rt, m, err), -EINVAL);
    ASSERT_CONTAINS(err, bad[i][1]);
    cJSON_Delete(m);
  }
  const char *badq[][2] = {
      {"[]", "a route request is a JSON object"},
      {"{\"model\":\"x\"}", "unknown key 'model'"},
      {"{\"task_weight\":1}", "'task_weight' must be a non-empty string"},
      {"{\"context\":[]}", "'context' must be an object"},
      {"{}", "no model selected"},
  };
  for (size_t i = 0; i < sizeof badq / sizeof *badq; i++) {
    cJSON *q = tg_json_parse(badq[i][0], strlen(badq[i][0]), NULL, err, sizeof err);
    ASSERT_NULL(tg_route(rt, q, err));
    ASSERT_CONTAINS(err, badq[i][1]);
    cJSON_Delete(q);
  }
  ASSERT_INT_EQ(tg_model_unavailable(rt, "", 1, err), -EINVAL);
  tg_runtime_free(rt);
}

/* ---- budgets ------------------------------------------------------------------- */

static const char BUDGET_POLICY[] =
    "local tg = require 'toolgate'\n"
    "told = {}\n"
    "tg.budget { name = 'daily', limit = 1.00, period = 'day',\n"
    "  on_alert = function(a) told[#told + 1] = a.level end }\n"
    "tg.budget { name = 'big-only', limit = 0.10, period = 'total',\n"
    "  scope = { model = 'big' }, thresholds = { exceeded = 1.0 } }\n"
    "tg.tool { name = 'told', read_only = true, run = function()\n"
    "  local t = told; told = {}; return { levels = table.concat(t, ' ') } end }\n";

static tg_runtime *budget_runtime(const char *dir, test_clock *clk) {
  tg_config cfg;
  tg_config_init(&cfg);
  tg_runtime *rt = runtime_with_policies(&cfg, dir);
  tg_runtime_set_clock(rt, clock_fn, clk);
  return rt;
}

/* The levels on_alert heard since the last ask, space-separated. */
static char *told(tg_runtime *rt) {
  outcome o = call_tool(rt, "told", "{}");
  ASSERT_CALL_OK(o);
  char *s = strdup(str_at(o.result, "levels"));
  outcome_free(&o);
  return s;
}

static void assert_told(tg_runtime *rt, const char *want) {
  char *s = told(rt);
  ASSERT_STR_EQ(s, want);
  free(s);
}

static int count_alerts(const event_log *ev, const char *budget,
                        const char *level) {
  int n = 0;
  for (int i = 0; i < ev->n; i++)
    if (!strcmp(ev->ev[i].type, "budget_alert") &&
        !strcmp(str_at(ev->ev[i].data, "budget"), budget) &&
        !strcmp(str_at(ev->ev[i].data, "level"), level))
      n++;
  return n;
}

TEST(each_level_fires_once_across_many_small_records) {
  set_tz("UTC");
  test_clock clk = {local_ms(2026, 5, 1, 9, 0)};
  char *dir = temp_dir();
  put_file(dir, "10_budget.lua", BUDGET_POLICY);
  tg_runtime *rt = budget_runtime(dir, &clk);
  event_log ev = {0};
  tg_events_subscribe(rt, log_event, &ev);
  for (int i = 0; i < 150; i++) { /* 150 x 0.01 = 1.50 */
    chat(rt, "small", 1, NULL, 0.01);
    clk.ms += 1000;
  }
  assert_told(rt, "info warning critical exceeded");
  ASSERT_INT_EQ(count_alerts(&ev, "daily", "info"), 1);
  ASSERT_INT_EQ(count_alerts(&ev, "daily", "warning"), 1);
  ASSERT_INT_EQ(count_alerts(&ev, "daily", "critical"), 1);
  ASSERT_INT_EQ(count_alerts(&ev, "daily", "exceeded"), 1);
  ASSERT_INT_EQ(count_alerts(&ev, "big-only", "exceeded"), 0); /* scoped */
  /* the exceeded alert came at the 100th record, not the 101st */
  int i = -1;
  for (int k = 0; k < ev.n; k++)
    if (!strcmp(ev.ev[k].type, "budget_alert") &&
        !strcmp(str_at(ev.ev[k].data, "level"), "exceeded"))
      i = k;
  ASSERT_NUM_NEAR(num_at(ev.ev[i].data, "spent"), 1.00, 1e-9);
  ASSERT_NUM_EQ(num_at(ev.ev[i].data, "period_start"),
                (double)local_ms(2026, 5, 1, 0, 0));
  ASSERT_NUM_EQ(num_at(ev.ev[i].data, "resets_at"),
                (double)local_ms(2026, 5, 2, 0, 0));
  ASSERT_CONTAINS(str_at(ev.ev[i].data, "message"), "budget 'daily' is past 100%");
  /* each alert was also a notification */
  ASSERT_INT_EQ(count_events(&ev, "notification", NULL), 4);
  char err[TG_ERRMSG] = "";
  cJSON *st = tg_budget_status(rt, "daily", NULL, err);
  ASSERT_STR_EQ(str_at(st, "level"), "exceeded");
  ASSERT_NUM_NEAR(num_at(st, "spent"), 1.50, 1e-9);
  cJSON_Delete(st);
  event_log_free(&ev);
  tg_runtime_free(rt);
  remove_tree(dir);
}

TEST(levels_fire_again_after_the_period_rolls_in_local_time) {
  /* Berlin, as a POSIX rule (no tzdata needed): the day 2026-03-29 has 23
   * hours; the budget's day rolls at local midnight all the same */
  set_tz("CET-1CEST,M3.5.0,M10.5.0/3");
  test_clock clk = {local_ms(2026, 3, 29, 23, 30)};
  char *dir = temp_dir();
  put_file(dir, "10_budget.lua", BUDGET_POLICY);
  tg_runtime *rt = budget_runtime(dir, &clk);
  chat(rt, "small", 1, NULL, 0.60);
  assert_told(rt, "info");
  char err[TG_ERRMSG] = "";
  cJSON *st = tg_budget_status(rt, "daily", NULL, err);
  ASSERT_NUM_EQ(num_at(st, "period_start"), (double)local_ms(2026, 3, 29, 0, 0));
  ASSERT_NUM_EQ(num_at(st, "resets_at"), (double)local_ms(2026, 3, 30, 0, 0));
  ASSERT_NUM_EQ(num_at(st, "resets_at") - num_at(st, "period_start"),
                23.0 * 3600 * 1000);
  cJSON_Delete(st);
  clk.ms = local_ms(2026, 3, 29, 23, 59);
  chat(rt, "small", 1, NULL, 0.05);
  assert_told(rt, "");
  clk.ms = local_ms(2026, 3, 30, 0, 1); /* a new day: from 0 again */
  st = tg_budget_status(rt, "daily", NULL, err);
  ASSERT_NUM_EQ(num_at(st, "spent"), 0);
  ASSERT_STR_EQ(str_at(st, "level"), "ok");
  cJSON_Delete(st);
  chat(rt, "small", 1, NULL, 0.80);
  assert_told(rt, "info warning");
  tg_runtime_free(rt);
  remove_tree(dir);
}

TEST(late_records_and_a_clock_that_goes_back) {
  set_tz("UTC");
  test_clock clk = {local_ms(2026, 5, 2, 9, 0)};
  char *dir = temp_dir();
  put_file(dir, "10_budget.lua", BUDGET_POLICY);
  tg_runtime *rt = budget_runtime(dir, &clk);
  char err[TG_ERRMSG] = "";
  cJSON *today = tg_budget_status(rt, "daily", NULL, err); /* its state */
  ASSERT_NOT_NULL(today);
  cJSON_Delete(today);
  /* yesterday's usage reported late: in the ledger, told to nobody */
  tg_usage_rec late = {"default", NULL, "small", 1, 0, 0, 0.9,
                       local_ms(2026, 5, 1, 22, 0)};
  ASSERT_OK(tg__runtime_record_usage(rt, &late));
  assert_told(rt, "");
  cJSON *st = tg_budget_status(rt, "daily", NULL, err);
  ASSERT_NUM_EQ(num_at(st, "spent"), 0);
  cJSON_Delete(st);
  /* the clock set back to yesterday: yesterday's state, from the ledger */
  clk.ms = local_ms(2026, 5, 1, 23, 0);
  st = tg_budget_status(rt, "daily", NULL, err);
  ASSERT_NUM_NEAR(num_at(st, "spent"), 0.9, 1e-9);
  ASSERT_STR_EQ(str_at(st, "level"), "critical");
  cJSON_Delete(st);
  chat(rt, "small", 1, NULL, 0.2); /* 1.1: only exceeded is new */
  assert_told(rt, "exceeded");
  tg_runtime_free(rt);
  remove_tree(dir);
}

TEST(a_restart_on_the_same_ledger_does_not_fire_again) {
  set_tz("UTC");
  test_clock clk = {local_ms(2026, 5, 1, 9, 0)};
  char *dir = temp_dir();
  put_file(dir, "10_budget.lua", BUDGET_POLICY);
  tg_runtime *a = budget_runtime(dir, &clk);
  chat(a, "small", 1, NULL, 0.80);
  assert_told(a, "info warning");
  /* the process ends; a new one opens the same database (this test's
   * XDG_STATE_HOME): the budget's state is derived from its ledger */
  tg_runtime_free(a);
  tg_runtime *b = budget_runtime(dir, &clk);
  char err[TG_ERRMSG] = "";
  cJSON *st = tg_budget_status(b, "daily", NULL, err);
  ASSERT_NUM_NEAR(num_at(st, "spent"), 0.80, 1e-9);
  ASSERT_STR_EQ(str_at(st, "level"), "warning");
  cJSON_Delete(st);
  chat(b, "small", 1, NULL, 0.01);
  assert_told(b, ""); /* info and warning were told before the restart */
  chat(b, "small", 1, NULL, 0.10);
  assert_told(b, "critical");
  tg_runtime_free(b);
  remove_tree(dir);
}

TEST(scopes_select_what_counts) {
  set_tz("UTC");
  test_clock clk = {local_ms(2026, 5, 1, 9, 0)};
  char *dir = temp_dir();
  put_file(dir, "10_budget.lua", BUDGET_POLICY);
  tg_runtime *rt = budget_runtime(dir, &clk);
  event_log ev = {0};
  tg_events_subscribe(rt, log_event, &ev);
  chat(rt, "small", 1, NULL, 0.09);
  chat(rt, "big", 1, NULL, 0.09);
  ASSERT_INT_EQ(count_alerts(&ev, "big-only", "exceeded"), 0);
  chat(rt, "big", 1, NULL, 0.02);
  ASSERT_INT_EQ(count_alerts(&ev, "big-only", "exceeded"), 1);
  char err[TG_ERRMSG] = "";
  cJSON *st = tg_budget_status(rt, "big-only", NULL, err);
  ASSERT_NUM_NEAR(num_at(st, "spent"), 0.11, 1e-9);
  ASSERT_TRUE(is_null_at(st, "resets_at"));
  cJSON_Delete(st);
  ASSERT_NULL(tg_budget_status(rt, "nope", NULL, err));
  ASSERT_CONTAINS(err, "no budget named 'nope'");
  cJSON *all = tg_budgets(rt);
  ASSERT_INT_EQ(cJSON_GetArraySize(all), 2);
  cJSON_Delete(all);
  event_log_free(&ev);
  tg_runtime_free(rt);
  remove_tree(dir);
}

TEST(a_failing_on_alert_is_logged_and_the_alert_still_told) {
  set_tz("UTC");
  test_clock clk = {local_ms(2026, 5, 1, 9, 0)};
  char *dir = temp_dir();
  put_file(dir, "10_budget.lua",
           "local tg = require 'toolgate'\n"
           "tg.budget { name = 'b', limit = 1, period = 'session',\n"
           "  on_alert = function(a) error('alert handler broke') end }\n");
  tg_runtime *rt = budget_runtime(dir, &clk);
  event_log ev = {0};
  tg_events_subscribe(rt, log_event, &ev);
  chat(rt, "m", 1, NULL, 0.6);
  ASSERT_INT_EQ(count_alerts(&ev, "b", "info"), 1);
  int i = find_event(&ev, "layer_error");
  ASSERT_TRUE(i >= 0);
  ASSERT_STR_EQ(str_at(ev.ev[i].data, "layer"), "on_alert");
  ASSERT_CONTAINS(str_at(ev.ev[i].data, "error"), "alert handler broke");
  ASSERT_INT_EQ(count_events(&ev, "notification", NULL), 1);
  event_log_free(&ev);
  tg_runtime_free(rt);
  remove_tree(dir);
}

/* ---- notifications ------------------------------------------------------------ */

typedef struct {
  char changes[8192];
  int n;
  int last_list;
} notice_log;

static void on_notice(tg_runtime *rt, const char *change, const cJSON *one,
                      const cJSON *list, void *ud) {
  notice_log *l = ud;
  size_t len = strlen(l->changes);
  snprintf(l->changes + len, sizeof l->changes - len, "%s:%s ", change,
           str_at(one, "title"));
  l->n++;
  l->last_list = cJSON_GetArraySize(list);
}

static int64_t notify(tg_runtime *rt, tg_notify_level lv, const char *title,
                      uint64_t ms) {
  char err[TG_ERRMSG] = "";
  tg_notification n = {lv, title, "msg", ms, NULL, NULL, NULL};
  int64_t id = tg_notify(rt, &n, err);
  if (id <= 0) TG_FAIL("tg_notify: %s", err);
  return id;
}

TEST(notifications_are_capped_oldest_dropped) {
  tg_runtime *rt = new_runtime(NULL);
  notice_log l = {0};
  tg_notify_subscribe(rt, on_notice, &l);
  char title[32];
  for (int i = 1; i <= TG_NOTIFY_MAX + 3; i++) {
    snprintf(title, sizeof title, "n%d", i);
    notify(rt, TG_NOTIFY_INFO, title, 0);
  }
  cJSON *list = tg_notifications(rt);
  ASSERT_INT_EQ(cJSON_GetArraySize(list), TG_NOTIFY_MAX);
  ASSERT_STR_EQ(str_at(cJSON_GetArrayItem(list, 0), "title"), "n4");
  cJSON_Delete(list);
  ASSERT_CONTAINS(l.changes, "dropped:n1 ");
  ASSERT_CONTAINS(l.changes, "dropped:n3 ");
  ASSERT_NOT_CONTAINS(l.changes, "dropped:n4 ");
  ASSERT_INT_EQ(l.last_list, TG_NOTIFY_MAX);
  tg_runtime_free(rt);
}

TEST(notifications_expire_by_the_clock_and_dismiss_by_id) {
  test_clock clk = {1000000};
  tg_runtime *rt = new_runtime(NULL);
  tg_runtime_set_clock(rt, clock_fn, &clk);
  notice_log l = {0};
  tg_notify_subscribe(rt, on_notice, &l);
  int64_t a = notify(rt, TG_NOTIFY_WARNING, "short", 5000);
  int64_t b = notify(rt, TG_NOTIFY_ERROR, "sticky", 0);
  int64_t c = notify(rt, TG_NOTIFY_SUCCESS, "long", 60000);
  ASSERT_TRUE(a > 0 && b > a && c > b);
  cJSON *list = tg_notifications(rt);
  cJSON *first = cJSON_GetArrayItem(list, 0);
  ASSERT_STR_EQ(str_at(first, "level"), "warning");
  ASSERT_NUM_EQ(num_at(first, "expires_at"), 1005000);
  cJSON_Delete(list);
  clk.ms += 5000;
  tg_runtime_set_clock(rt, clock_fn, &clk); /* a clock moved: expire */
  ASSERT_CONTAINS(l.changes, "expired:short ");
  ASSERT_OK(tg_notify_dismiss(rt, b));
  ASSERT_INT_EQ(tg_notify_dismiss(rt, b), -ENOENT);
  ASSERT_INT_EQ(tg_notify_dismiss(rt, a), -ENOENT);
  list = tg_notifications(rt);
  ASSERT_INT_EQ(cJSON_GetArraySize(list), 1);
  ASSERT_STR_EQ(str_at(cJSON_GetArrayItem(list, 0), "title"), "long");
  cJSON_Delete(list);
  ASSERT_STR_EQ(l.changes, "shown:short shown:sticky shown:long "
                           "expired:short dismissed:sticky ");
  char err[TG_ERRMSG] = "";
  char *big = malloc(100000);
  memset(big, 'x', 99999);
  big[99999] = '\0';
  memcpy(big + TG_NOTIFY_MESSAGE_MAX - 1, "\xc3\xa9", 2); /* an é across the cut */
  tg_notification huge = {TG_NOTIFY_INFO, big, big, 0, NULL, NULL, NULL};
  ASSERT_TRUE(tg_notify(rt, &huge, err) > 0);
  list = tg_notifications(rt);
  cJSON *h = cJSON_GetArrayItem(list, cJSON_GetArraySize(list) - 1);
  ASSERT_INT_EQ(strlen(str_at(h, "title")), TG_NOTIFY_TITLE_MAX + 3);
  ASSERT_INT_EQ(strlen(str_at(h, "message")), TG_NOTIFY_MESSAGE_MAX - 1 + 3);
  cJSON_Delete(list);
  free(big);
  tg_notification bad = {TG_NOTIFY_INFO, "", NULL, 0, NULL, NULL, NULL};
  ASSERT_INT_EQ(tg_notify(rt, &bad, err), -EINVAL);
  bad.title = "t";
  bad.level = (tg_notify_level)9;
  ASSERT_INT_EQ(tg_notify(rt, &bad, err), -EINVAL);
  tg_runtime_free(rt);
}

TEST(notifications_expire_while_the_loop_runs) {
  tg_runtime *rt = new_runtime(NULL);
  notice_log l = {0};
  tg_notify_subscribe(rt, on_notice, &l);
  notify(rt, TG_NOTIFY_INFO, "soon", 30);
  int expired = 0;
  for (int i = 0; i < 100 && !strstr(l.changes, "expired:soon"); i++) {
    run_for(rt, 10);
    expired = strstr(l.changes, "expired:soon") != NULL;
  }
  ASSERT_TRUE(expired);
  tg_runtime_free(rt);
}

/* ---- the progress manager -------------------------------------------------------- */

typedef struct {
  char log[4096];
  int cancels;
} progress_log;

static void on_progress(tg_runtime *rt, const char *change, const cJSON *item,
                        const cJSON *list, void *ud) {
  progress_log *l = ud;
  size_t len = strlen(l->log);
  const cJSON *pct = cJSON_GetObjectItemCaseSensitive(item, "percent");
  const cJSON *step = cJSON_GetObjectItemCaseSensitive(item, "step");
  snprintf(l->log + len, sizeof l->log - len, "%s:%s:%s", change,
           str_at(item, "id"), str_at(item, "state"));
  len = strlen(l->log);
  if (pct) snprintf(l->log + len, sizeof l->log - len, ":%g%%", pct->valuedouble);
  else if (step)
    snprintf(l->log + len, sizeof l->log - len, ":%g/%g:%s", step->valuedouble,
             num_at(item, "steps"), str_at(item, "message"));
  len = strlen(l->log);
  snprintf(l->log + len, sizeof l->log - len, "[%d] ", cJSON_GetArraySize(list));
}

static void cancel_item(tg_runtime *rt, const char *id, void *ud) {
  progress_log *l = ud;
  l->cancels++;
  tg_progress_fail(rt, id, "cancelled");
}

TEST(progress_items_move_through_their_states) {
  tg_runtime *rt = new_runtime(NULL);
  progress_log l = {0};
  tg_progress_subscribe(rt, on_progress, &l);
  char err[TG_ERRMSG] = "";
  tg_progress_spec d = {"index", "Indexing", TG_PROGRESS_DETERMINATE, 200, NULL, NULL};
  tg_progress_spec s = {"build", "Build", TG_PROGRESS_STEPS, 3, cancel_item, &l};
  tg_progress_spec i = {"think", "Thinking", TG_PROGRESS_INDETERMINATE, 0, NULL, NULL};
  ASSERT_OK(tg_progress_start(rt, &d, err));
  ASSERT_INT_EQ(tg_progress_start(rt, &d, err), -EEXIST);
  ASSERT_OK(tg_progress_start(rt, &s, err));
  ASSERT_OK(tg_progress_start(rt, &i, err));
  ASSERT_OK(tg_progress_update(rt, "index", 50, NULL));
  ASSERT_OK(tg_progress_update(rt, "build", 2, "compile"));
  ASSERT_INT_EQ(tg_progress_update(rt, "nope", 1, NULL), -ENOENT);
  ASSERT_INT_EQ(tg_progress_update(rt, "index", -1, NULL), -EINVAL);
  cJSON *list = tg_progress_list(rt);
  ASSERT_INT_EQ(cJSON_GetArraySize(list), 3);
  cJSON *it = cJSON_GetArrayItem(list, 0);
  ASSERT_STR_EQ(str_at(it, "kind"), "determinate");
  ASSERT_NUM_EQ(num_at(it, "percent"), 25);
  ASSERT_INT_EQ(bool_at(it, "cancellable"), 0);
  ASSERT_INT_EQ(bool_at(cJSON_GetArrayItem(list, 1), "cancellable"), 1);
  cJSON_Delete(list);
  ASSERT_INT_EQ(tg_progress_cancel(rt, "index"), -ENOTSUP);
  ASSERT_OK(tg_progress_cancel(rt, "build"));
  ASSERT_INT_EQ(l.cancels, 1);
  ASSERT_OK(tg_progress_done(rt, "index"));
  ASSERT_OK(tg_progress_done(rt, "think"));
  ASSERT_INT_EQ(tg_progress_done(rt, "think"), -ENOENT);
  ASSERT_STR_EQ(l.log,
                "start:index:running:0%[1] start:build:running:0/3:(null)[2] "
                "start:think:running[3] update:index:running:25%[3] "
                "update:build:running:2/3:compile[3] "
                "cancel:build:running:2/3:compile[3] "
                "fail:build:failed:2/3:cancelled[2] "
                "done:index:done:100%[1] done:think:done[0] ");
  tg_progress_spec bad = {"x", NULL, TG_PROGRESS_DETERMINATE, 0, NULL, NULL};
  ASSERT_INT_EQ(tg_progress_start(rt, &bad, err), -EINVAL);
  tg_runtime_free(rt);
}

static void never_finishes(tg_exec *ex, const cJSON *args, void *ud) {
  tg_exec_progress(ex, 3, 10, "three of ten");
}
static void stop_it(tg_exec *ex, void *ud) {
  tg_exec_finish_error(ex, NULL, "CANCELLED", "stopped", 0);
}

static void cancel_on_update(tg_runtime *rt, const char *change,
                             const cJSON *item, const cJSON *list, void *ud) {
  progress_log *l = ud;
  on_progress(rt, change, item, list, ud);
  if (!strcmp(change, "update") && !l->cancels++)
    ASSERT_OK(tg_progress_cancel(rt, str_at(item, "id")));
}

TEST(a_call_reporting_progress_is_an_item_whose_cancel_reaches_it) {
  tg_config cfg = config_allowing();
  cfg.progress_interval_ms = 20;
  tg_runtime *rt = new_runtime(&cfg);
  tg_tool_def d = tool_def("slowpoke", never_finishes, stop_it, NULL);
  register_tool(rt, &d);
  progress_log l = {0};
  tg_progress_subscribe(rt, cancel_on_update, &l);
  outcome o = call_tool(rt, "slowpoke", "{}");
  ASSERT_STATUS(o, TG_STATUS_CANCELLED);
  ASSERT_CONTAINS(l.log, "start:call:call-1:running:30%[1] ");
  ASSERT_CONTAINS(l.log, "cancel:call:call-1:running:30%[1] ");
  ASSERT_CONTAINS(l.log, "fail:call:call-1:failed:30%[0] ");
  cJSON *list = tg_progress_list(rt);
  ASSERT_INT_EQ(cJSON_GetArraySize(list), 0);
  cJSON_Delete(list);
  outcome_free(&o);
  tg_runtime_free(rt);
}

TEST_MAIN(TEST_ENTRY(layers_run_in_registration_order_with_the_turn),
          TEST_ENTRY(a_layer_needs_a_function),
          TEST_ENTRY(a_failing_layer_is_an_event_and_the_next_runs),
          TEST_ENTRY(a_layer_removed_inside_a_round_runs_no_more),
          TEST_ENTRY(chats_open_one_at_a_time_per_session),
          TEST_ENTRY(sessions_kept_are_bounded_the_least_recent_forgotten),
          TEST_ENTRY(layers_read_their_session_after_it_is_forgotten),
          TEST_ENTRY(tool_layers_wrap_calls_that_reach_the_tool),
          TEST_ENTRY(a_tool_layer_may_cancel_the_call),
          TEST_ENTRY(routing_table_then_hooks_in_order_then_fallback),
          TEST_ENTRY(a_hook_that_loops_is_stopped_and_skipped),
          TEST_ENTRY(an_unavailable_model_falls_back_until_it_comes_back),
          TEST_ENTRY(bad_models_and_requests_are_refused_naming_the_problem),
          TEST_ENTRY(each_level_fires_once_across_many_small_records),
          TEST_ENTRY(levels_fire_again_after_the_period_rolls_in_local_time),
          TEST_ENTRY(late_records_and_a_clock_that_goes_back),
          TEST_ENTRY(a_restart_on_the_same_ledger_does_not_fire_again),
          TEST_ENTRY(scopes_select_what_counts),
          TEST_ENTRY(a_failing_on_alert_is_logged_and_the_alert_still_told),
          TEST_ENTRY(notifications_are_capped_oldest_dropped),
          TEST_ENTRY(notifications_expire_by_the_clock_and_dismiss_by_id),
          TEST_ENTRY(notifications_expire_while_the_loop_runs),
          TEST_ENTRY(progress_items_move_through_their_states),
          TEST_ENTRY(a_call_reporting_progress_is_an_item_whose_cancel_reaches_it))
