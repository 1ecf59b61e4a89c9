/*
 * test_hook_answer.c — the agent hooks' C API (include/toolgate.h, "agent
 * hooks"): tg_hook_answer on a runtime, the same answer through a
 * runtime's control socket (tg_hook_remote), tg_hook_fallback's shapes for
 * every event and on_error, the refusals; and a pre-hook that reroutes a
 * call while more hooks are to run (the walk once read a freed name).
 */
#include "helpers.h"
#include <pthread.h>

static const char policy[] =
    "local tg = require 'toolgate'\n"
    "tg.rule { name = 'no-rm', tools = { 'exec' }, check = function(call)\n"
    "  if call.args.command:find('^rm') then return tg.deny('no rm here') end end }\n"
    "tg.before_tool('exec', function(call)\n"
    "  if call.args.command == 'show' then return tg.args({ path = 'x' }, 'read_file') end\n"
    "end)\n"
    "tg.before_tool('exec', function(call) call.metadata.second = true end)\n"
    "tg.before_tool('*', function(call) end)\n";

static tg_runtime *runtime(char **dir) {
  *dir = temp_dir();
  put_file(*dir, "10_p.lua", policy);
  tg_config cfg;
  tg_config_init(&cfg);
  return runtime_with_policies(&cfg, *dir);
}

typedef struct {
  int n;
  int code;
  char out[8192], msg[2048];
} got;

static void done(tg_runtime *rt, const tg_hook_result *r, void *ud) {
  (void)rt;
  got *g = ud;
  g->n++;
  g->code = r->exit_code;
  snprintf(g->out, sizeof g->out, "%s", r->output);
  snprintf(g->msg, sizeof g->msg, "%s", r->message ? r->message : "");
}

static got answer(tg_runtime *rt, const char *agent, const char *event,
                  const char *on_error) {
  got g;
  memset(&g, 0, sizeof g);
  tg_hook_request req;
  memset(&req, 0, sizeof req);
  req.agent = agent;
  req.event = event;
  req.event_len = strlen(event);
  req.on_error = on_error;
  char err[TG_ERRMSG];
  ASSERT_OK(tg_hook_answer(rt, &req, done, &g, err));
  /* with storage on, the answer waits for the call's audit record */
  run_until(rt, &g.n, 1);
  ASSERT_INT_EQ(g.n, 1);
  return g;
}

static const char pre_rm[] =
    "{\"session_id\":\"s\",\"cwd\":\"/w\",\"hook_event_name\":\"PreToolUse\","
    "\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"rm x\"}}";

TEST(answer_on_a_runtime) {
  char *dir;
  tg_runtime *rt = runtime(&dir);
  got g = answer(rt, "claude-code", pre_rm, NULL);
  ASSERT_INT_EQ(g.code, 0);
  ASSERT_STR_EQ(g.out, "{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\","
                "\"permissionDecision\":\"deny\",\"permissionDecisionReason\":"
                "\"the tool did not run; do not assume it succeeded. Denied by "
                "rule 'no-rm': no rm here\"}}\n");
  ASSERT_STR_EQ(g.msg, "");
  g = answer(rt, "codex", "{\"hook_event_name\":\"Stop\",\"session_id\":\"s\"}", NULL);
  ASSERT_STR_EQ(g.out, "");
  g = answer(rt, "codex", "{\"hook_event_name\":\"PreToolUse\"", "ask");
  ASSERT_CONTAINS(g.out, "\"permissionDecision\":\"deny\""); /* codex cannot ask */
  ASSERT_CONTAINS(g.msg, "not valid JSON");
  tg_runtime_free(rt);
  remove_tree(dir);
}

/* tg.args(t, other_tool) from a pre-hook with more hooks to run: the rest
 * of the walk, then the rules again on the new tool. */
TEST(a_reroute_with_hooks_after_it) {
  char *dir;
  tg_runtime *rt = runtime(&dir);
  outcome o = call_tool(rt, "exec", "{\"command\":\"show\"}");
  ASSERT_STR_EQ(o.tool, "read_file");
  outcome_free(&o);
  got g = answer(rt, "claude-code",
                 "{\"session_id\":\"s\",\"cwd\":\"/w\",\"hook_event_name\":"
                 "\"PreToolUse\",\"tool_name\":\"Bash\",\"tool_input\":"
                 "{\"command\":\"show\"}}", NULL);
  ASSERT_CONTAINS(g.out, "rerouted the call to 'read_file'");
  tg_runtime_free(rt);
  remove_tree(dir);
}

TEST(refusals) {
  char *dir;
  tg_runtime *rt = runtime(&dir);
  tg_hook_request req;
  memset(&req, 0, sizeof req);
  req.agent = "aider";
  req.event = pre_rm;
  req.event_len = strlen(pre_rm);
  char err[TG_ERRMSG] = "";
  got g;
  memset(&g, 0, sizeof g);
  ASSERT_INT_EQ(tg_hook_answer(rt, &req, done, &g, err), -EINVAL);
  ASSERT_CONTAINS(err, "unknown agent 'aider'");
  req.agent = "codex";
  req.on_error = "shrug";
  ASSERT_INT_EQ(tg_hook_answer(rt, &req, done, &g, err), -EINVAL);
  ASSERT_CONTAINS(err, "deny, ask or allow");
  req.on_error = NULL;
  ASSERT_INT_EQ(tg_hook_answer(rt, &req, NULL, NULL, err), -EINVAL);
  ASSERT_INT_EQ(g.n, 0);
  tg_hook_result r;
  ASSERT_INT_EQ(tg_hook_remote("/nonexistent/x.sock", &req, &r, 100, err), -ENOENT);
  ASSERT_INT_EQ(tg_hook_fallback("aider", NULL, NULL, "x", &r), -EINVAL);
  ASSERT_TRUE(tg_hook_agent_known("claude-code"));
  ASSERT_FALSE(tg_hook_agent_known("Claude Code"));
  ASSERT_TRUE(tg_hook_on_error_known(NULL));
  ASSERT_FALSE(tg_hook_on_error_known("Deny"));
  tg_runtime_free(rt);
  remove_tree(dir);
}

static void fallback(const char *agent, const char *event, const char *on_error,
                     int code, const char *out) {
  tg_hook_result r;
  ASSERT_OK(tg_hook_fallback(agent, event, on_error, "the reason", &r));
  if (r.exit_code != code || (out ? !strstr(r.output, out) : r.output[0]))
    TG_FAIL("%s %s %s: exit %d, output %s", agent, event ? event : "(unread)",
            on_error ? on_error : "deny", r.exit_code, r.output);
  ASSERT_CONTAINS(r.message, "the reason");
  tg_hook_result_free(&r);
}

TEST(fail_safe_answers) {
  const char *agents[] = {"claude-code", "codex"};
  for (int i = 0; i < 2; i++) {
    const char *a = agents[i];
    int cc = i == 0;
    fallback(a, NULL, NULL, 2, NULL);       /* unread: blocking error */
    fallback(a, NULL, "allow", 0, NULL);    /* the agent's own flow */
    fallback(a, NULL, "ask", 0, cc ? "\"permissionDecision\":\"ask\""
                                   : "\"permissionDecision\":\"deny\"");
    fallback(a, "PreToolUse", "deny", 0, "\"permissionDecision\":\"deny\"");
    fallback(a, "PreToolUse", "allow", 0, cc ? "\"permissionDecision\":\"allow\"" : NULL);
    fallback(a, "PermissionRequest", "deny", 0, "\"behavior\":\"deny\"");
    fallback(a, "PermissionRequest", "allow", 0, "\"behavior\":\"allow\"");
    fallback(a, "PermissionRequest", "ask", 0, NULL); /* the prompt shows */
    fallback(a, "PostToolUse", "deny", 0, "\"decision\":\"block\"");
    fallback(a, "PostToolUse", "allow", 0, "\"systemMessage\"");
    fallback(a, "UserPromptSubmit", "deny", 0, NULL); /* never blocks */
    fallback(a, "Stop", "deny", 0, NULL);
    fallback(a, "SomethingNew", "deny", 0, NULL);
  }
}

/* The runtime listens; a thread asks over the socket (tg_hook_remote
 * blocks) while this one turns the loop. */
typedef struct {
  pthread_t th;
  const char *sock, *agent, *event;
  char out[12000];
  volatile int done;
} asker;

static void *ask_thread(void *p) {
  asker *a = p;
  tg_hook_request req;
  memset(&req, 0, sizeof req);
  req.agent = a->agent;
  req.event = a->event;
  req.event_len = strlen(a->event);
  tg_hook_result r;
  char err[TG_ERRMSG];
  int rc = tg_hook_remote(a->sock, &req, &r, 5000, err);
  if (rc == 0) {
    snprintf(a->out, sizeof a->out, "%d|%s|%s", r.exit_code, r.output,
             r.message ? r.message : "");
    tg_hook_result_free(&r);
  } else {
    snprintf(a->out, sizeof a->out, "error %d %s", rc, err);
  }
  __atomic_store_n(&a->done, 1, __ATOMIC_RELEASE);
  return NULL;
}

static void ask_remote(tg_runtime *rt, asker *a) {
  ASSERT_INT_EQ(pthread_create(&a->th, NULL, ask_thread, a), 0);
  for (int i = 0; i < 5000 && !__atomic_load_n(&a->done, __ATOMIC_ACQUIRE); i++)
    run_for(rt, 1);
  ASSERT_INT_EQ(pthread_join(a->th, NULL), 0);
}

TEST(the_same_answer_over_the_control_socket) {
  char *dir;
  tg_runtime *rt = runtime(&dir);
  char *sock = path_join(dir, "c.sock");
  char err[TG_ERRMSG];
  ASSERT_OK(tg_runtime_listen(rt, sock, err));
  const char *events[] = {
      pre_rm,
      "{\"session_id\":\"s\",\"cwd\":\"/w\",\"hook_event_name\":\"PreToolUse\","
      "\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"show\"}}",
      "{\"hook_event_name\":\"PostToolUse\",\"tool_name\":\"Bash\","
      "\"tool_input\":{\"command\":\"ls\"},\"tool_response\":{}}",
      "{\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Bash\",\"tool_input\":1}",
      "not json",
  };
  for (size_t i = 0; i < sizeof events / sizeof *events; i++) {
    got g = answer(rt, "claude-code", events[i], NULL);
    char want[12000];
    snprintf(want, sizeof want, "%d|%s|%s", g.code, g.out, g.msg);
    asker a;
    memset(&a, 0, sizeof a);
    a.sock = sock;
    a.agent = "claude-code";
    a.event = events[i];
    ask_remote(rt, &a);
    ASSERT_STR_EQ(a.out, want);
  }
  free(sock);
  tg_runtime_free(rt);
  remove_tree(dir);
}

/* explain --event without --agent: the agent told by the event's name,
 * its turn_id, or (no name) its own keys. */
TEST(the_agent_is_told_by_its_event) {
  static const struct { const char *ev, *agent; } cases[] = {
      {"{\"hook_event_name\":\"PreToolUse\",\"transcript_path\":\"/t\","
       "\"tool_name\":\"Bash\"}", "claude-code"},
      /* OpenCode's plugin sends Claude Code's names, and says whose */
      {"{\"hook_event_name\":\"PreToolUse\",\"toolgate_agent\":\"opencode\","
       "\"tool_name\":\"bash\"}", "opencode"},
      /* neither's mark: it cannot be told (explain asks for --agent) */
      {"{\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Bash\"}", NULL},
      {"{\"hook_event_name\":\"PreToolUse\",\"turn_id\":\"t1\"}", "codex"},
      {"{\"hook_event_name\":\"BeforeTool\",\"tool_name\":\"run_shell_command\"}",
       "gemini"},
      {"{\"sessionId\":\"s\",\"toolName\":\"bash\",\"toolArgs\":\"{}\"}", "copilot"},
      /* Cursor's camelCase names are Copilot's too: its conversation_id tells */
      {"{\"hook_event_name\":\"preToolUse\",\"conversation_id\":\"c\"}", "cursor"},
      {"not json", "claude-code"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    const char *who = tg_hook_detect_agent(cases[i].ev, strlen(cases[i].ev));
    if (!cases[i].agent) ASSERT_NULL(who);
    else ASSERT_STR_EQ(who, cases[i].agent);
  }
}

TEST_MAIN(TEST_ENTRY(answer_on_a_runtime),
          TEST_ENTRY(the_agent_is_told_by_its_event),
          TEST_ENTRY(a_reroute_with_hooks_after_it),
          TEST_ENTRY(refusals),
          TEST_ENTRY(fail_safe_answers),
          TEST_ENTRY(the_same_answer_over_the_control_socket))
