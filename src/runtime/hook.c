/*
 * hook.c — tg_hook_answer: one hook event of a coding agent, answered by
 * the current generation. The one code path behind both `toolgate hook`
 * answering in-process and a resident instance answering over its
 * control socket, so the same event gets the same answer either way.
 *
 * The event is read with the strict parser (a key twice, 1e400, bad
 * UTF-8: malformed); its tool call is mapped onto toolgate's
 * (hook_map.c); the call runs through the chain with a fixture for the
 * tool (chain/fixture.c): before the tool, rules, pre-hooks and the rules
 * again after a rewrite, the tool never runs and an ask is left to the
 * agent; after it, the post-hooks on the agent's result. What came of it
 * is put in the agent's words (hook_reply.c). Whatever cannot be judged —
 * a malformed event, a rule or hook that failed, a mapping that raised —
 * gets the answer on_error names, never a crash and never silence.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hook.h"
#include "runtime.h"
#include "base/util.h"
#include "core/tool.h"
#include "store/store.h"
#include "base/json.h"


typedef struct {
  tg_runtime *rt;
  const tg_hook_agent *agent;
  tg_hook_event kind;
  const char *event_name;      /* in event */
  const char *on_error;
  int toolgate_defaults;
  cJSON *event;
  tg_hook_mapped m;
  tg_tool stand_in;            /* the agent's own tool, when toolgate has none */
  tg_fixture f;
  uint64_t deadline_ms;
  tg_hook_done_cb done;
  void *ud;
  /* an answer waiting for the context calls: its own copies */
  tg_hook_say kept;
  char *k_reason, *k_context, *k_system;
  cJSON *k_input, *k_mcp;
} hook_job;

static const char *str(const cJSON *o, const char *k) {
  return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k));
}

static void job_free(hook_job *j) {
  free(j->k_reason);
  free(j->k_context);
  free(j->k_system);
  cJSON_Delete(j->k_input);
  cJSON_Delete(j->k_mcp);
  cJSON_Delete(j->event);
  tg__hook_mapped_clear(&j->m);
  tg__fixture_clear(&j->f);
  free(j);
}

/* Tells the answer and ends the job. */
static void finish(hook_job *j, const tg_hook_say *say) {
  tg_hook_result res;
  if (tg__hook_render(say, &res) < 0) {
    static char nomem_out[] = "", nomem_msg[] = "toolgate hook: out of memory\n";
    res.exit_code = 2; /* blocks a tool call: the fail-safe side */
    res.output = nomem_out;
    res.message = nomem_msg;
    j->done(j->rt, &res, j->ud);
  } else {
    j->done(j->rt, &res, j->ud);
    tg_hook_result_free(&res);
  }
  job_free(j);
}

/* The answer on_error names, with why. */
static void fail_safe(hook_job *j, const char *why) {
  tg_hook_result res;
  static const char said[] = "the tool did not run: "; /* the answer says so */
  if (!strncmp(why, said, sizeof said - 1)) why += sizeof said - 1;
  if (tg_hook_fallback(j->agent->name, j->event_name, j->on_error, why,
                       &res) < 0) {
    tg_hook_say s = {.agent = j->agent, .exit_code = 2,
                     .message = "toolgate hook: out of memory"};
    finish(j, &s);
    return;
  }
  j->done(j->rt, &res, j->ud);
  tg_hook_result_free(&res);
  job_free(j);
}

/* ---- context from tools --------------------------------------------------- */

static void context_done(void *ud, char *text) {
  hook_job *j = ud;
  char *all = NULL;
  if (text && *text && j->k_context) {
    size_t n = strlen(j->k_context) + strlen(text) + 3;
    all = malloc(n);
    if (all) snprintf(all, n, "%s\n\n%s", j->k_context, text);
  }
  j->kept.context = all ? all : text && *text ? text : j->k_context;
  finish(j, &j->kept);
  free(all);
  free(text);
}

/* Says s, after the tools policy code asked to run for the model's
 * context, if any: then s is kept (its own copies) until they end. */
static void answer(hook_job *j, const tg_hook_say *s) {
  if (!cJSON_GetObjectItem(j->f.metadata, "agent_context_calls")) {
    finish(j, s);
    return;
  }
  j->kept = *s;
  j->kept.reason = j->k_reason = tg__strdup(s->reason);
  j->kept.context = j->k_context = tg__strdup(s->context);
  j->kept.system_message = j->k_system = tg__strdup(s->system_message);
  j->kept.message = NULL;
  j->kept.updated_input = j->k_input =
      s->updated_input ? cJSON_Duplicate(s->updated_input, 1) : NULL;
  j->kept.updated_mcp_output = j->k_mcp =
      s->updated_mcp_output ? cJSON_Duplicate(s->updated_mcp_output, 1) : NULL;
  if (!tg__hook_context_start(j->rt, j->f.metadata, j->event, j->deadline_ms,
                              context_done, j))
    finish(j, &j->kept);
}

/* ---- reading the outcome ---------------------------------------------- */

static int policy_failure(const char *code) {
  return code && (!strcmp(code, "RULE_ERROR") || !strcmp(code, "BAD_VERDICT") ||
                  !strcmp(code, "HOOK_ERROR") || !strcmp(code, "NOMEM"));
}

/* Before the tool: what the rules and pre-hooks decided, for the agent. */
static void judged(hook_job *j, cJSON *out) {
  const cJSON *e = cJSON_GetObjectItem(out, "error");
  const cJSON *d = cJSON_GetObjectItem(out, "decision");
  const char *code = str(e, "code"), *msg = str(e, "message");
  const char *verdict = str(d, "verdict"), *rule = str(d, "rule");
  if (policy_failure(code) || (code && !strcmp(str(e, "phase"), "INTERNAL"))) {
    fail_safe(j, msg ? msg : "a policy failed");
    return;
  }
  char reason[2048];
  char *ctx = tg__hook_context_text(j->f.metadata), *result = NULL;
  cJSON *input = NULL;
  tg_hook_say s = {.agent = j->agent, .event = j->kind};
  s.context = ctx;
  if (code) { /* denied, aborted, args refused, rerouted nowhere */
    s.verdict = TG_HOOK_DENY;
    s.reason = msg;
    answer(j, &s);
    free(ctx);
    return;
  }
  if (j->f.short_circuit) { /* a pre-hook answered for the tool */
    tg__hook_order_like(j->f.short_result, NULL, 1);
    result = tg__hook_shown(j->f.short_result);
    snprintf(reason, sizeof reason, "toolgate answered this call itself (a "
             "pre-hook's result), so the tool did not run. Its answer: %s",
             result ? result : "(none)");
    s.verdict = TG_HOOK_DENY;
    s.reason = reason;
    answer(j, &s);
    free(result);
    free(ctx);
    return;
  }
  int rewritten = (j->f.tool && strcmp(j->f.tool, j->m.tool)) ||
                  (j->f.args && !tg_json_equal(j->f.args, j->m.args));
  char why[TG_ERRMSG] = "";
  if (rewritten) {
    input = tg__hook_unmap(j->rt->chain.gen, j->agent->name, j->event,
                           j->f.tool, j->f.args, why, sizeof why);
    if (!input) {
      snprintf(reason, sizeof reason, "the tool did not run: toolgate's "
               "pre-hooks rewrote this call, and %s", why);
      s.verdict = TG_HOOK_DENY;
      s.reason = reason;
      answer(j, &s);
      free(ctx);
      return;
    }
    tg__hook_order_like(input, cJSON_GetObjectItem(j->event, "tool_input"), 1);
    s.updated_input = input;
  }
  int ask = verdict && !strcmp(verdict, "ask");
  int by_default = !rule && !j->f.remembered;
  s.verdict = ask ? TG_HOOK_ASK : TG_HOOK_ALLOW;
  if (j->f.remembered) {
    snprintf(reason, sizeof reason, "allowed by toolgate: approved before "
             "(remembered)");
  } else if (!by_default) {
    const char *r = j->f.reason;
    if (ask)
      snprintf(reason, sizeof reason, "toolgate (rule '%s'): %s", rule,
               r && *r ? r : "asks for your approval");
    else
      snprintf(reason, sizeof reason, "allowed by toolgate rule '%s' (%s)%s%s",
               rule, j->f.rule_where ? j->f.rule_where : "?",
               r && *r ? ": " : "", r ? r : "");
  } else if (j->toolgate_defaults) {
    snprintf(reason, sizeof reason, ask ? "toolgate: no rule decides '%s', "
             "which is not read-only: approve it or not"
             : "allowed by toolgate: no rule decides '%s', which is read-only",
             j->f.tool ? j->f.tool : j->m.tool);
  } else if (rewritten) {
    /* a rewrite needs a decision to travel with: toolgate's default (an
     * agent that cannot ask takes it as an allow, its own checks after) */
    if (ask && !j->agent->pre_ask) ask = 0, s.verdict = TG_HOOK_ALLOW;
    snprintf(reason, sizeof reason, ask ? "toolgate's pre-hooks rewrote "
             "this call (the new input is shown): approve it or not"
             : "allowed by toolgate: its pre-hooks rewrote this call");
  } else {
    s.verdict = TG_HOOK_NONE; /* no rule spoke: the agent's own flow */
  }
  s.reason = reason;
  answer(j, &s);
  cJSON_Delete(input);
  free(ctx);
}

/* After the tool: what the post-hooks made of the agent's result. */
static void after(hook_job *j, cJSON *out) {
  const cJSON *e = cJSON_GetObjectItem(out, "error");
  const char *code = str(e, "code"), *msg = str(e, "message");
  if (policy_failure(code)) {
    fail_safe(j, msg ? msg : "a post-hook failed");
    return;
  }
  char *ctx = tg__hook_context_text(j->f.metadata), *note = NULL, *all = NULL;
  tg_hook_say s = {.agent = j->agent, .event = j->kind};
  if (code && !strcmp(code, "ABORTED")) {
    s.block = 1;
    s.reason = msg;
  }
  cJSON *res = cJSON_GetObjectItem(out, "result"); /* ours: out is */
  tg__hook_order_like(res, cJSON_GetObjectItem(j->event, "tool_response"), 1);
  int ok = !strcmp(str(out, "status"), "ok");
  int cut = cJSON_IsTrue(cJSON_GetObjectItem(out, "truncated"));
  /* a failure the post-hooks turned into a result, or a result they
   * replaced (an event without tool_response had null) */
  int changed = ok && !cut &&
                (j->kind == TG_HOOK_EV_POST_FAILURE ||
                 (j->m.result ? !tg_json_equal(res, j->m.result)
                              : !cJSON_IsNull(res)));
  const char *name = str(j->event, "tool_name");
  if (changed && !j->m.mapped && name && !strncmp(name, "mcp__", 5)) {
    s.updated_mcp_output = res; /* the agent takes an MCP tool's new output */
  } else if (changed) {
    char *r = tg__hook_shown(res);
    size_t n = (r ? strlen(r) : 0) + 200;
    note = malloc(n);
    if (note)
      snprintf(note, n, "toolgate's post-hooks replaced this tool's %s with: %s",
               j->kind == TG_HOOK_EV_POST_FAILURE ? "error" : "result",
               r ? r : "(none)");
    free(r);
  }
  if (note && ctx) {
    size_t n = strlen(note) + strlen(ctx) + 3;
    all = malloc(n);
    if (all) snprintf(all, n, "%s\n\n%s", ctx, note);
  }
  s.context = all ? all : note ? note : ctx;
  answer(j, &s);
  free(ctx);
  free(note);
  free(all);
}

static void call_done(tg_runtime *rt, const tg_outcome *o, void *ud) {
  hook_job *j = ud;
  cJSON *out = tg_outcome_to_json(o);
  if (!out) {
    fail_safe(j, "out of memory");
    return;
  }
  if (j->kind == TG_HOOK_EV_PRE || j->kind == TG_HOOK_EV_PERMISSION)
    judged(j, out);
  else
    after(j, out);
  cJSON_Delete(out);
}

/* ---- the call ------------------------------------------------------------ */

/* call.metadata: the agent's name and its own view of the call. */
static cJSON *metadata_of(hook_job *j) {
  static const char *const fields[] = {"cwd", "permission_mode", "tool_use_id",
                                       "model", "turn_id", "session_id", NULL};
  cJSON *m = cJSON_CreateObject();
  cJSON_AddStringToObject(m, "agent", j->agent->name);
  cJSON_AddStringToObject(m, "agent_event", j->event_name);
  cJSON_AddStringToObject(m, "agent_tool", str(j->event, "tool_name"));
  cJSON_AddItemToObject(m, "agent_input",
                        cJSON_Duplicate(cJSON_GetObjectItem(j->event, "tool_input"), 1));
  if (j->m.paths) cJSON_AddItemToObject(m, "agent_paths", cJSON_Duplicate(j->m.paths, 1));
  /* the project its approvals are remembered for: the session's folder,
   * by its real path (as `toolgate approvals grant` names it) */
  char *project = tg__hook_project(j->event);
  if (project) cJSON_AddStringToObject(m, "agent_project", project);
  free(project);
  for (int i = 0; fields[i]; i++) {
    const char *v = str(j->event, fields[i]);
    if (!v) continue;
    char k[64];
    snprintf(k, sizeof k, "agent_%s", fields[i]);
    cJSON_AddStringToObject(m, k, v);
  }
  return m;
}

static void start_call(hook_job *j, int64_t turn) {
  char err[TG_ERRMSG] = "";
  int raised = 0;
  if (tg__hook_map(j->rt->chain.gen, j->agent->name, j->event, &j->m, &raised,
                   err, sizeof err) < 0) {
    fail_safe(j, err);
    return;
  }
  const char *session = str(j->event, "session_id");
  if (session && tg__session_id_check(session, err) < 0) {
    char bad[TG_ERRMSG + 40];
    snprintf(bad, sizeof bad, "the event's session_id: %s", err);
    fail_safe(j, bad);
    return;
  }
  j->stand_in.name = j->m.tool;
  j->stand_in.read_only = j->m.read_only;
  j->stand_in.where = (char *)"agent";
  j->stand_in.retry.attempts = 1;
  j->stand_in.run_ref = j->stand_in.retryable_ref = LUA_NOREF;
  j->f.stand_in = &j->stand_in;
  cJSON *fail = NULL;
  if (j->kind == TG_HOOK_EV_PRE || j->kind == TG_HOOK_EV_PERMISSION) {
    j->f.mode = TG_FIXTURE_JUDGE;
  } else {
    j->f.mode = TG_FIXTURE_AFTER;
    if (j->kind == TG_HOOK_EV_POST_FAILURE) {
      const char *why = str(j->event, "error");
      fail = cJSON_CreateObject();
      cJSON_AddStringToObject(fail, "code", "TOOL_ERROR");
      cJSON_AddStringToObject(fail, "message", why ? why : "the tool failed");
      j->f.error = fail;
    } else {
      j->f.result = j->m.result;
      j->f.has_result = 1;
    }
  }
  cJSON *meta = metadata_of(j);
  tg_call_request req;
  memset(&req, 0, sizeof req);
  req.tool = j->m.tool;
  req.args = j->m.args;
  req.session = session;
  req.turn = turn;
  req.metadata = meta;
  /* none: no project's approvals cover it, not even the runtime's */
  req.project = str(meta, "agent_project") ? str(meta, "agent_project") : "";
  /* the call never waits for a person (a fixture, no approval); done may
   * come before this returns (with storage on, after the audit commit):
   * the job is not touched after it */
  int rc = tg__chain_call_fixture(&j->rt->chain, &req, &j->f, call_done, j, err);
  cJSON_Delete(meta);
  cJSON_Delete(fail); /* the call copied what it keeps */
  if (rc < 0) fail_safe(j, err);
}

/* The event, read strictly; NULL with why for a malformed one. */
static cJSON *read_event(const tg_hook_request *req, char *why, size_t len) {
  if (!req->event || req->event_len > TG_HOOK_MAX_EVENT) {
    snprintf(why, len, "the hook event is %zu bytes, over the limit of %u",
             req->event ? req->event_len : 0, TG_HOOK_MAX_EVENT);
    return NULL;
  }
  char msg[400];
  cJSON *ev = tg_json_parse(req->event, req->event_len, NULL, msg, sizeof msg);
  if (!ev) {
    snprintf(why, len, "the hook event is not valid JSON: %s", msg);
    return NULL;
  }
  if (!cJSON_IsObject(ev) || !str(ev, "hook_event_name")) {
    snprintf(why, len, cJSON_IsObject(ev) ? "the hook event has no "
             "hook_event_name" : "the hook event is not a JSON object");
    cJSON_Delete(ev);
    return NULL;
  }
  return ev;
}

int tg_hook_answer(tg_runtime *rt, const tg_hook_request *req,
                   tg_hook_done_cb done, void *ud, char err[TG_ERRMSG]) {
  const tg_hook_agent *agent = req ? tg__hook_agent(req->agent) : NULL;
  if (!rt || !agent || !done || !tg_hook_on_error_known(req->on_error)) {
    tg__errf(err, TG_ERRMSG, !req || !done ? "a hook answer needs a request "
             "and a done callback" : !agent ? "unknown agent '%s' (known: "
             "claude-code, codex)" : "on_error is deny, ask or allow, not '%s'",
             req && !agent ? (req->agent ? req->agent : "(none)")
                           : req ? req->on_error : "");
    return -EINVAL;
  }
  hook_job *j = calloc(1, sizeof *j);
  if (!j) {
    tg__errf(err, TG_ERRMSG, "out of memory");
    return -ENOMEM;
  }
  j->rt = rt;
  j->agent = agent;
  /* static: the request's strings are the caller's */
  j->on_error = !req->on_error || !strcmp(req->on_error, "deny") ? "deny"
                : !strcmp(req->on_error, "ask") ? "ask" : "allow";
  j->toolgate_defaults = req->toolgate_defaults;
  j->deadline_ms = req->deadline_ms;
  j->done = done;
  j->ud = ud;
  char why[TG_ERRMSG];
  j->event = read_event(req, why, sizeof why);
  if (!j->event) {
    fail_safe(j, why);
    return 0;
  }
  j->event_name = str(j->event, "hook_event_name");
  j->kind = tg__hook_event_kind(j->event_name);
  if (!tg__hook_judged(j->kind)) { /* recorded, or passed over */
    char what[TG_ERRMSG + 40] = "", msg[TG_ERRMSG + 60];
    tg_hook_say s = {.agent = agent};
    if (tg__hook_record(rt, agent->name, j->kind, j->event_name, j->event,
                        what, sizeof what) < 0) {
      snprintf(msg, sizeof msg, "toolgate hook: %s", what);
      s.message = msg; /* on stderr; the agent goes on */
    }
    finish(j, &s);
    return 0;
  }
  start_call(j, req->turn ? req->turn
                          : tg__hook_turn(rt, str(j->event, "session_id")));
  return 0;
}
