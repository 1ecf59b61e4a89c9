/*
 * test_mcp_sessions.c — the MCP server behind its transport seam
 * (src/mcp/transport.h), with a transport kept in memory: two clients
 * connected at once, as a transport of many sessions (Streamable HTTP)
 * will have them. Each session negotiates its own version and has its
 * own capabilities and log level; an answer, a call's progress and the
 * approval question asked for a call go to the session of that call,
 * naming the request they belong to; a session that goes leaves the
 * other serving.
 */
#include "helpers.h"
#include "mcp/mcp.h"

/* ---- a transport in memory ----------------------------------------------- */

typedef struct {
  mcp_transport t;
  cJSON *sent;   /* [{msg, related}] */
  int nsent;
  int closed;
} mem_transport;

static int mem_send(mcp_transport *t, const cJSON *msg, const cJSON *related) {
  mem_transport *m = (mem_transport *)t;
  cJSON *e = cJSON_CreateObject();
  cJSON_AddItemToObject(e, "msg", cJSON_Duplicate(msg, 1));
  cJSON_AddItemToObject(e, "related", related ? cJSON_Duplicate(related, 1)
                                              : cJSON_CreateNull());
  cJSON_AddItemToArray(m->sent, e);
  m->nsent++;
  return 0;
}

static int mem_congested(const mcp_transport *t) { return 0; }
static void mem_close(mcp_transport *t) { ((mem_transport *)t)->closed = 1; }
static const mcp_transport_ops mem_ops = {mem_send, mem_congested, mem_close};

static void mem_init(mem_transport *m) {
  memset(m, 0, sizeof *m);
  m->t.ops = &mem_ops;
  m->sent = cJSON_CreateArray();
}

static void deliver(mem_transport *m, const char *text) {
  cJSON *msg = cJSON_Parse(text);
  ASSERT_NOT_NULL(msg);
  m->t.ev->on_message(m->t.session, msg);
}

/* The n-th message sent (0-based) and what it was related to. */
static const cJSON *sent(const mem_transport *m, int n) {
  return cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(m->sent, n), "msg");
}
static const cJSON *related(const mem_transport *m, int n) {
  return cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(m->sent, n), "related");
}

static const cJSON *at(const cJSON *o, const char *path) {
  char buf[256];
  snprintf(buf, sizeof buf, "%s", path);
  for (char *k = strtok(buf, "."); k && o; k = strtok(NULL, "."))
    o = cJSON_GetObjectItemCaseSensitive(o, k);
  return o;
}

/* ---- the server ---------------------------------------------------------- */

static const char policies[] =
    "local tg = require 'toolgate'\n"
    "tg.tool { name = 'hello', description = 'Says hello.', read_only = true,\n"
    "  run = function(args) return { hello = args.who or 'world' } end }\n"
    "tg.tool { name = 'guarded', description = 'Asks first.',\n"
    "  run = function(args) return 'ran' end }\n"
    "tg.rule { name = 'ask-guarded', priority = 1, tools = { 'guarded' },\n"
    "  check = function(call) return tg.ask('really?') end }\n";

typedef struct {
  char *dir;
  tg_runtime *rt;
  mcp_server *s;
  mem_transport a, b;
} fixture;

static void setup(fixture *f) {
  f->dir = temp_dir();
  put_file(f->dir, "10_sessions.lua", policies);
  tg_config cfg = config_allowing();
  cfg.builtin_tools = 0;
  f->rt = runtime_with_policies(&cfg, f->dir);
  mcp_options o;
  memset(&o, 0, sizeof o);
  char err[TG_ERRMSG] = "";
  f->s = mcp_server_new(f->rt, &o, err);
  ASSERT_NOT_NULL(f->s);
  mem_init(&f->a);
  mem_init(&f->b);
  ASSERT_NOT_NULL(mcp_server_connect(f->s, &f->a.t));
  ASSERT_NOT_NULL(mcp_server_connect(f->s, &f->b.t));
  ASSERT_OK(mcp_server_start_upstreams(f->s, err), err);
}

static void teardown(fixture *f) {
  mcp_server_stop(f->s);
  while (mcp_server_busy(f->s)) uv_run(tg_runtime_loop(f->rt), UV_RUN_ONCE);
  mcp_server_free(f->s);
  ASSERT_TRUE(f->a.closed);
  tg_runtime_free(f->rt);
  cJSON_Delete(f->a.sent);
  cJSON_Delete(f->b.sent);
  remove_tree(f->dir); /* frees it */
}

static void initialize(mem_transport *m, const char *version,
                       const char *caps, const char *name) {
  char text[512];
  snprintf(text, sizeof text, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
           "\"initialize\",\"params\":{\"protocolVersion\":\"%s\","
           "\"capabilities\":%s,\"clientInfo\":{\"name\":\"%s\","
           "\"version\":\"1\"}}}", version, caps, name);
  deliver(m, text);
  deliver(m, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
}

TEST(each_session_negotiates_its_own_version) {
  fixture f;
  setup(&f);
  initialize(&f.a, "2025-06-18", "{}", "a");
  initialize(&f.b, "2025-11-25", "{\"elicitation\":{}}", "b");
  ASSERT_INT_EQ(f.a.nsent, 1);
  ASSERT_INT_EQ(f.b.nsent, 1);
  ASSERT_STR_EQ(cJSON_GetStringValue(at(sent(&f.a, 0), "result.protocolVersion")),
                "2025-06-18");
  ASSERT_STR_EQ(cJSON_GetStringValue(at(sent(&f.b, 0), "result.protocolVersion")),
                "2025-11-25");
  ASSERT_NUM_EQ(cJSON_GetNumberValue(related(&f.a, 0)), 1);
  /* a second initialize is refused in its own session only */
  initialize(&f.a, "2025-06-18", "{}", "a");
  ASSERT_INT_EQ(f.a.nsent, 2);
  ASSERT_NOT_NULL(at(sent(&f.a, 1), "error"));
  ASSERT_INT_EQ(f.b.nsent, 1);
  teardown(&f);
}

TEST(a_call_is_answered_in_its_own_session) {
  fixture f;
  setup(&f);
  initialize(&f.a, "2025-06-18", "{}", "a");
  initialize(&f.b, "2025-06-18", "{}", "b");
  deliver(&f.b, "{\"jsonrpc\":\"2.0\",\"id\":\"h\",\"method\":\"tools/call\","
                "\"params\":{\"name\":\"hello\",\"arguments\":{\"who\":\"b\"}}}");
  run_until(f.rt, &f.b.nsent, 2);
  ASSERT_INT_EQ(f.a.nsent, 1);
  ASSERT_STR_EQ(cJSON_GetStringValue(related(&f.b, 1)), "h");
  ASSERT_STR_EQ(cJSON_GetStringValue(at(sent(&f.b, 1),
                                        "result.structuredContent.hello")),
                "b");
  teardown(&f);
}

/* The ask of a call goes to the client that made the call, as a request
 * related to that call; its answer lets the call run. */
TEST(an_approval_is_asked_of_the_calls_own_client) {
  fixture f;
  setup(&f);
  initialize(&f.a, "2025-11-25", "{\"elicitation\":{}}", "a");
  initialize(&f.b, "2025-11-25", "{\"elicitation\":{}}", "b");
  deliver(&f.b, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\","
                "\"params\":{\"name\":\"guarded\",\"arguments\":{}}}");
  run_until(f.rt, &f.b.nsent, 2);
  const cJSON *q = sent(&f.b, 1);
  ASSERT_STR_EQ(cJSON_GetStringValue(at(q, "method")), "elicitation/create");
  ASSERT_NUM_EQ(cJSON_GetNumberValue(related(&f.b, 1)), 7);
  ASSERT_INT_EQ(f.a.nsent, 1);
  char answer[256];
  snprintf(answer, sizeof answer, "{\"jsonrpc\":\"2.0\",\"id\":%.0f,\"result\":"
           "{\"action\":\"accept\",\"content\":{\"decision\":\"approve\"}}}",
           cJSON_GetNumberValue(at(q, "id")));
  deliver(&f.b, answer);
  run_until(f.rt, &f.b.nsent, 3);
  ASSERT_NUM_EQ(cJSON_GetNumberValue(related(&f.b, 2)), 7);
  const cJSON *text = cJSON_GetArrayItem(at(sent(&f.b, 2), "result.content"), 0);
  ASSERT_STR_EQ(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(text, "text")), "ran");
  teardown(&f);
}

/* A session that ends (closed, not the server's whole life) goes with its
 * calls; the other one serves on. */
TEST(a_session_that_goes_leaves_the_other_serving) {
  fixture f;
  setup(&f);
  initialize(&f.a, "2025-06-18", "{}", "a");
  initialize(&f.b, "2025-11-25", "{\"elicitation\":{}}", "b");
  /* b's call waits on its user when b goes */
  deliver(&f.b, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\","
                "\"params\":{\"name\":\"guarded\",\"arguments\":{}}}");
  run_until(f.rt, &f.b.nsent, 2);
  f.b.t.ev->on_closed(f.b.t.session, 0);
  ASSERT_TRUE(f.b.closed);
  deliver(&f.a, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}");
  ASSERT_INT_EQ(f.a.nsent, 2);
  ASSERT_NOT_NULL(at(sent(&f.a, 1), "result"));
  ASSERT_NULL(f.s->sessions->next); /* a's alone */
  while (mcp_server_busy(f.s)) uv_run(tg_runtime_loop(f.rt), UV_RUN_ONCE);
  ASSERT_INT_EQ(f.b.nsent, 2); /* its call ended unanswered */
  teardown(&f);
}

TEST_MAIN(TEST_ENTRY(each_session_negotiates_its_own_version),
          TEST_ENTRY(a_call_is_answered_in_its_own_session),
          TEST_ENTRY(an_approval_is_asked_of_the_calls_own_client),
          TEST_ENTRY(a_session_that_goes_leaves_the_other_serving))
