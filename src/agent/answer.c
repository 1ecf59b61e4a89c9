/*
 * answer.c — tg_hook_answer: one hook event of a coding agent, answered by
 * the current generation. The one code path behind both `toolgate hook`
 * answering in-process and a resident instance answering over its
 * control socket, so the same event gets the same answer either way.
 *
 * The event is read with the strict parser (a key twice, 1e400, bad
 * UTF-8: malformed); its tool call is mapped onto toolgate's
 * (runtime/agent_map.c); the call runs through the chain with the agent's strategy
 * (runtime/hook_services.h): before the tool, rules, pre-hooks and the rules
 * again after a rewrite, the tool does not run here and an ask is left to
 * the agent; after it, the post-hooks judge the agent's result. What came
 * of it (the typed outcome) is put in the agent's words (reply.c).
 * The answer is decided before the call's audit record is written (the
 * strategy's recording callback), so that the record says what the agent
 * was told and who decided — a call no rule decides is left to the
 * agent, with no verdict — under a call id no other process gives.
 * Whatever cannot be judged —
 * a malformed event, a rule or hook that failed, a mapping that raised —
 * gets the answer on_error names, never a crash and never silence.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "protocol.h"
#include "base/random.h"


typedef struct {
  tg_runtime *rt;
  const tg_dialect *agent;
  tg_hook_event kind;
  const char *event_name;      /* the agent's name of it (in event) */
  const char *on_error;
  int toolgate_defaults;
  cJSON *event;
  tg_agent_call m;
  tg_call_strategy how;        /* how the chain meets the agent's tool; what
                                  it saw (how.seen) once the call ended */
  uint64_t deadline_ms;
  tg_hook_done_cb done;
  void *ud;
  /* an answer waiting for the context calls: its own copies */
  tg_hook_say kept;
  char *k_reason, *k_context, *k_system;
  cJSON *k_input, *k_mcp;
  cJSON *trace;                /* explain --event: what the chain saw (the
                                  caller's), context tools listed, not run */
  /* the answer, decided once: before the call's audit record is written
   * (storage on), so that the record says what the agent is told */
  int decided;
  char *fail_why;              /* nothing could judge: on_error answers */
  const char *decided_by;      /* for the record (sink.h) */
  int no_verdict;
  char call_id[48];            /* unique across processes (not call-N) */
  char *linked_id;             /* a permission request's tool_use_id: its
                                  pre-tool record's (hook_audit.c) */
} hook_job;

static const char *str(const cJSON *o, const char *k) {
  return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k));
}

static void job_free(hook_job *j) {
  free(j->fail_why);
  free(j->linked_id);
  free(j->k_reason);
  free(j->k_context);
  free(j->k_system);
  cJSON_Delete(j->k_input);
  cJSON_Delete(j->k_mcp);
  cJSON_Delete(j->event);
  tg__agent_call_clear(&j->m);
  tg__call_seen_clear(&j->how.seen);
  free(j);
}

/* Tells the answer and ends the job. */
static void finish(hook_job *j, const tg_hook_say *said) {
  tg_hook_result res;
  tg_hook_say say = *said;
  say.native = j->event ? tg__hook_native(j->event) : NULL;
  if (tg__hook_render(&say, &res) < 0) {
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
  if (j->trace && !cJSON_GetObjectItemCaseSensitive(j->trace, "fail_safe"))
    cJSON_AddStringToObject(j->trace, "fail_safe", why);
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

/* Keeps s (its own copies) as the answer: said once the call's record is
 * written and the tools policy code asked to run for the model's context
 * have ended. */
static void keep(hook_job *j, const tg_hook_say *s, const char *decided_by) {
  j->decided_by = decided_by;
  j->kept = *s;
  j->kept.reason = j->k_reason = tg__strdup(s->reason);
  j->kept.context = j->k_context = tg__strdup(s->context);
  j->kept.system_message = j->k_system = tg__strdup(s->system_message);
  j->kept.message = NULL;
  j->kept.updated_input = j->k_input =
      s->updated_input ? cJSON_Duplicate(s->updated_input, 1) : NULL;
  j->kept.updated_mcp_output = j->k_mcp =
      s->updated_mcp_output ? cJSON_Duplicate(s->updated_mcp_output, 1) : NULL;
}

/* Nothing could judge the call: on_error answers, with why. */
static void keep_fail_safe(hook_job *j, const char *why) {
  j->decided_by = "fail-safe";
  j->fail_why = tg__strdup(why);
  if (!j->fail_why) j->fail_why = tg__strdup("out of memory");
}

/* Says the answer kept, after the tools policy code asked to run for the
 * model's context, if any. */
static void deliver(hook_job *j) {
  if (j->fail_why) {
    fail_safe(j, j->fail_why);
    return;
  }
  const cJSON *calls = cJSON_GetObjectItemCaseSensitive(j->how.seen.metadata,
                                           "agent_context_calls");
  if (calls && j->trace) /* explained: what would run, not run */
    cJSON_AddItemToObject(j->trace, "context_calls", cJSON_Duplicate(calls, 1));
  if (!calls || j->trace ||
      !tg__hook_context_start(j->rt, j->how.seen.metadata, j->event,
                              j->deadline_ms, context_done, j))
    finish(j, &j->kept);
}

/* ---- reading the outcome ---------------------------------------------- */

/* The outcome's error: its code (TG_E_NONE: none, or a tool's own), its
 * message ("" when it has none). A code that went missing is out of
 * memory. */
typedef struct {
  int failed;
  tg_error_code code;
  const char *message;
} outcome_error;

static outcome_error error_of(const tg_outcome *o) {
  outcome_error e = {0, TG_E_NONE, NULL};
  if (o->error.phase == TG_PHASE_NONE) return e;
  e.failed = 1;
  e.code = o->error.code ? tg_error_code_of(o->error.code) : TG_E_NOMEM;
  e.message = o->error.message ? o->error.message : "";
  return e;
}

/* A rule or hook that failed: nothing judged the call. */
static int policy_failure(tg_error_code code) {
  return code == TG_E_RULE_ERROR || code == TG_E_BAD_VERDICT ||
         code == TG_E_HOOK_ERROR || code == TG_E_NOMEM;
}

/* Before the tool: what the rules and pre-hooks decided, for the agent. */
static void judged(hook_job *j, const tg_outcome *o) {
  const tg_call_seen *f = &j->how.seen;
  outcome_error e = error_of(o);
  const char *msg = e.message, *rule = o->rule;
  if (policy_failure(e.code) ||
      (e.failed && o->error.phase == TG_PHASE_INTERNAL)) {
    keep_fail_safe(j, msg ? msg : "a policy failed");
    return;
  }
  char reason[2048] = ""; /* no rule spoke: kept as no reason */
  char *ctx = tg__hook_context_text(f->metadata), *result = NULL;
  cJSON *input = NULL;
  tg_hook_say s = {.agent = j->agent, .event = j->kind};
  s.context = ctx;
  if (e.failed) { /* denied, aborted, args refused, rerouted nowhere */
    s.verdict = TG_HOOK_DENY;
    s.reason = msg;
    keep(j, &s, e.code == TG_E_DENIED ? (rule ? "rule" : "default")
                : e.code == TG_E_ABORTED ? "pre-hook"
                                         : "toolgate");
    free(ctx);
    return;
  }
  if (f->short_circuit) { /* a pre-hook answered for the tool */
    tg__hook_order_like(f->short_result, NULL, 1);
    result = tg__hook_shown(f->short_result);
    snprintf(reason, sizeof reason, "toolgate answered this call itself (a "
             "pre-hook's result), so the tool did not run. Its answer: %s",
             result ? result : "(none)");
    s.verdict = TG_HOOK_DENY;
    s.reason = reason;
    keep(j, &s, "pre-hook");
    free(result);
    free(ctx);
    return;
  }
  int rewritten = (f->tool && strcmp(f->tool, j->m.tool)) ||
                  (f->args && !tg_json_equal(f->args, j->m.args));
  char why[TG_ERRMSG] = "";
  if (rewritten) {
    input = tg__agent_unmap(j->rt, j->agent->name, j->event,
                           f->tool, f->args, why, sizeof why);
    if (!input) {
      snprintf(reason, sizeof reason, "the tool did not run: toolgate's "
               "pre-hooks rewrote this call, and %s", why);
      s.verdict = TG_HOOK_DENY;
      s.reason = reason;
      keep(j, &s, "toolgate");
      free(ctx);
      return;
    }
    tg__hook_order_like(input, cJSON_GetObjectItemCaseSensitive(j->event,
                                                                "tool_input"), 1);
    s.updated_input = input;
  }
  int ask = o->verdict == TG_VERDICT_ASK;
  int by_default = !rule && !f->remembered;
  s.verdict = ask ? TG_HOOK_ASK : TG_HOOK_ALLOW;
  if (f->remembered) {
    snprintf(reason, sizeof reason, "allowed by toolgate: approved before "
             "(remembered)");
  } else if (!by_default) {
    const char *r = f->reason;
    if (ask)
      snprintf(reason, sizeof reason, "toolgate (rule '%s'): %s", rule,
               r && *r ? r : "asks for your approval");
    else
      snprintf(reason, sizeof reason, "allowed by toolgate rule '%s' (%s)%s%s",
               rule, f->rule_where ? f->rule_where : "?",
               r && *r ? ": " : "", r ? r : "");
  } else if (j->toolgate_defaults) {
    snprintf(reason, sizeof reason, ask ? "toolgate: no rule decides '%s', "
             "which is not read-only: approve it or not"
             : "allowed by toolgate: no rule decides '%s', which is read-only",
             f->tool ? f->tool : j->m.tool);
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
  /* who decided: a rule (by name), a remembered approval, toolgate's
   * default (asked for, or travelling with a rewrite), or nobody here —
   * left to the agent, whose own permissions decide (no verdict) */
  j->no_verdict = s.verdict == TG_HOOK_NONE;
  keep(j, &s, f->remembered ? "remembered" : !by_default ? "rule"
              : s.verdict == TG_HOOK_NONE ? "agent" : "default");
  cJSON_Delete(input);
  free(ctx);
}

/* After the tool: what the post-hooks made of the agent's result. */
static void after(hook_job *j, const tg_outcome *o) {
  outcome_error e = error_of(o);
  const char *msg = e.message;
  if (policy_failure(e.code)) {
    keep_fail_safe(j, msg ? msg : "a post-hook failed");
    return;
  }
  /* our own copy of the result, put in the order the agent wrote it
   * (none: null) */
  cJSON *res = o->result ? cJSON_Duplicate(o->result, 1) : cJSON_CreateNull();
  if (!res) {
    keep_fail_safe(j, "out of memory");
    return;
  }
  char *ctx = tg__hook_context_text(j->how.seen.metadata), *note = NULL, *all = NULL;
  tg_hook_say s = {.agent = j->agent, .event = j->kind};
  if (e.code == TG_E_ABORTED) {
    s.block = 1;
    s.reason = msg;
  }
  tg__hook_order_like(res, cJSON_GetObjectItemCaseSensitive(j->event,
                                                          "tool_response"), 1);
  int ok = o->status == TG_STATUS_OK;
  int cut = o->truncated;
  /* a failure the post-hooks turned into a result, or a result they
   * replaced (an event without tool_response had null) */
  int changed = ok && !cut &&
                (j->kind == TG_HOOK_EV_POST_FAILURE ||
                 (j->m.result ? !tg_json_equal(res, j->m.result)
                              : !cJSON_IsNull(res)));
  const char *name = str(j->event, "tool_name");
  if (changed && ((!j->m.mapped && name && !strncmp(name, "mcp__", 5)) ||
                  (j->agent->post_replace && j->kind == TG_HOOK_EV_POST))) {
    /* the agent takes the new output: an MCP tool's, or any tool's where
     * the result is replaced before the model reads it (OpenCode) */
    s.updated_mcp_output = res;
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
  /* the agent ran it, by its own decision: no verdict here; a post-hook
   * may block what comes next */
  j->no_verdict = 1;
  keep(j, &s, s.block ? "post-hook" : NULL);
  cJSON_Delete(res);
  free(ctx);
  free(note);
  free(all);
}

/* What the chain saw, into the trace: the outcome, the tool and args the
 * pre-hooks left (and whether they differ from the mapped call), a
 * pre-hook's own answer, a remembered approval. */
static void trace_call(hook_job *j, const tg_outcome *o) {
  const tg_call_seen *f = &j->how.seen;
  cJSON *t = j->trace;
  cJSON_AddItemToObject(t, "outcome", tg_outcome_to_json(o));
  if (f->tool) cJSON_AddStringToObject(t, "tool", f->tool);
  if (f->args) cJSON_AddItemToObject(t, "args", cJSON_Duplicate(f->args, 1));
  cJSON_AddBoolToObject(t, "rewritten",
                        (f->tool && strcmp(f->tool, j->m.tool)) ||
                            (f->args && !tg_json_equal(f->args, j->m.args)));
  if (f->short_circuit)
    cJSON_AddItemToObject(t, "short_result",
                          f->short_result ? cJSON_Duplicate(f->short_result, 1)
                                          : cJSON_CreateNull());
  cJSON_AddBoolToObject(t, "remembered", f->remembered);
}

/* The answer to the outcome, once (recording() may have decided it). */
static void decide(hook_job *j, const tg_outcome *o) {
  if (j->decided) return;
  j->decided = 1;
  if (j->kind == TG_HOOK_EV_PRE || j->kind == TG_HOOK_EV_PERMISSION)
    judged(j, o);
  else
    after(j, o);
}

/* What the agent was told, in one word for the record (NULL: nothing). */
static const char *told(hook_job *j) {
  if (!j->fail_why) {
    int more_context = cJSON_GetObjectItemCaseSensitive(j->how.seen.metadata,
                                           "agent_context_calls") != NULL;
    return tg__hook_told(&j->kept, more_context);
  }
  tg_hook_say s = {.agent = j->agent, .event = j->kind};
  s.verdict = !strcmp(j->on_error, "allow") ? TG_HOOK_ALLOW
              : !strcmp(j->on_error, "ask") ? TG_HOOK_ASK : TG_HOOK_DENY;
  s.block = s.verdict == TG_HOOK_DENY;
  return tg__hook_told(&s, 0);
}

/* The longest tool_use_id kept (Claude Code's are ~30 bytes). */
#define TOOL_USE_ID_MAX 256

/* Before the call's record is written: the answer decided, and the
 * record told what the agent sent and what it is told (the strings are
 * the job's and the event's: they outlive the commit, which comes before
 * call_done). */
static void recording(void *ud, const tg_outcome *o, tg_audit_rec *rec) {
  hook_job *j = ud;
  decide(j, o);
  rec->decided_by = j->decided_by;
  /* after the tool, the agent had run it: no verdict of toolgate's */
  rec->no_verdict = j->no_verdict || j->kind == TG_HOOK_EV_POST ||
                    j->kind == TG_HOOK_EV_POST_FAILURE;
  /* the agent's id links its events; one past any id an agent gives is
   * not kept (it would link nothing) */
  const char *id = str(j->event, "tool_use_id");
  if (id && strlen(id) > TOOL_USE_ID_MAX) id = NULL;
  if (!id && j->kind == TG_HOOK_EV_PERMISSION) {
    /* a permission request names no tool call: it is linked to the
     * session's latest pre-tool record of the same tool and input */
    free(j->linked_id);
    j->linked_id = tg__hooksvc_permission_link(
        j->rt, str(j->event, "session_id"), j->agent->name,
        str(j->event, "tool_name"),
        cJSON_GetObjectItemCaseSensitive(j->event, "tool_input"));
    id = j->linked_id;
  }
  rec->agent = (tg_audit_agent){
      .name = j->agent->name, .event = j->event_name,
      .tool = str(j->event, "tool_name"),
      .input = cJSON_GetObjectItemCaseSensitive(j->event, "tool_input"),
      .tool_use_id = id, .answer = told(j)};
}

static void call_done(tg_runtime *rt, const tg_outcome *o, void *ud) {
  hook_job *j = ud;
  (void)rt;
  if (j->trace) trace_call(j, o);
  decide(j, o);
  deliver(j);
}

/* A call id no other process gives: 128 random bits (the kernel's), or
 * when they cannot be had, the pid, the clock and a count. */
static void fresh_call_id(char id[48]) {
  static unsigned count;
  unsigned char b[16];
  if (tg__random_bytes(b, sizeof b) == 0) {
    memcpy(id, "hook-", 5);
    for (int i = 0; i < 16; i++) snprintf(id + 5 + 2 * i, 3, "%02x", b[i]);
    return;
  }
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  snprintf(id, 48, "hook-%ld-%lld%09ld-%u", (long)getpid(),
           (long long)ts.tv_sec, ts.tv_nsec, ++count);
}

/* ---- the call ------------------------------------------------------------ */

static void unmapped_recorded(void *ud) { deliver(ud); }

/* The call cannot be mapped (odd input, or the mapping raised): the
 * fail-safe answers, once the audit has the call — the agent, its event,
 * tool and input, what it was told, decided by "fail-safe: mapping
 * failed: why" — where there is a database (not for explain). */
static void unmapped(hook_job *j, const char *why, int raised, int64_t turn) {
  keep_fail_safe(j, why);
  char bad[TG_ERRMSG];
  const char *session = str(j->event, "session_id");
  if (session && tg__hooksvc_session_check(session, bad) < 0) session = NULL;
  const char *id = str(j->event, "tool_use_id");
  if (id && strlen(id) > TOOL_USE_ID_MAX) id = NULL;
  fresh_call_id(j->call_id);
  int judging = j->kind == TG_HOOK_EV_PRE || j->kind == TG_HOOK_EV_PERMISSION;
  tg_hooksvc_unjudged w = {
      .call_id = j->call_id, .session = session, .turn = turn,
      .agent = j->agent->name, .event = j->event_name,
      .tool = str(j->event, "tool_name"),
      .input = cJSON_GetObjectItemCaseSensitive(j->event, "tool_input"),
      .tool_use_id = id, .answer = told(j),
      .verdict = !strcmp(j->on_error, "allow") ? TG_VERDICT_ALLOW
                 : !strcmp(j->on_error, "ask") ? TG_VERDICT_ASK
                                               : TG_VERDICT_DENY,
      .no_verdict = !judging, .why = j->fail_why, .raised = raised};
  if (!j->trace &&
      tg__hooksvc_record_unjudged(j->rt, &w, unmapped_recorded, j) == 1)
    return;
  deliver(j);
}

static void start_call(hook_job *j, int64_t turn) {
  char err[TG_ERRMSG] = "";
  int raised = 0;
  if (tg__agent_map(j->rt, j->agent->name, j->event, &j->m, &raised,
                   err, sizeof err) < 0) {
    unmapped(j, err, raised, turn);
    return;
  }
  const char *session = str(j->event, "session_id");
  if (session && tg__hooksvc_session_check(session, err) < 0) {
    char bad[TG_ERRMSG + 40];
    snprintf(bad, sizeof bad, "the event's session_id: %s", err);
    fail_safe(j, bad);
    return;
  }
  /* the agent's own tool, when toolgate has none by its name: judged,
   * never run; what policy code leaves for the agent is read back */
  tg__agent_strategy(&j->how, &j->m);
  j->how.ask = TG_ASK_LEFT; /* the agent asks its user itself */
  cJSON *fail = NULL;
  if (j->kind == TG_HOOK_EV_PRE || j->kind == TG_HOOK_EV_PERMISSION) {
    j->how.tool = TG_TOOL_ELSEWHERE; /* the agent runs it, after us */
  } else {
    /* the agent ran it and judged it: the post-hooks judge its result */
    j->how.tool = TG_TOOL_GIVEN;
    j->how.judged = 1;
    if (j->kind == TG_HOOK_EV_POST_FAILURE) {
      const char *why = str(j->event, "error");
      fail = cJSON_CreateObject();
      cJSON_AddStringToObject(fail, "code", "TOOL_ERROR");
      cJSON_AddStringToObject(fail, "message", why ? why : "the tool failed");
      j->how.error = fail;
    } else {
      j->how.result = j->m.result;
      j->how.has_result = 1;
    }
  }
  j->how.recording = recording;
  j->how.recording_ud = j;
  cJSON *meta = tg__agent_metadata(j->agent->name, j->event, &j->m);
  tg_call_request req;
  memset(&req, 0, sizeof req);
  fresh_call_id(j->call_id);
  req.id = j->call_id;
  req.tool = j->m.tool;
  req.args = j->m.args;
  req.session = session;
  req.turn = turn;
  req.metadata = meta;
  /* none: no project's approvals cover it, not even the runtime's */
  req.project = str(meta, "agent_project") ? str(meta, "agent_project") : "";
  /* the call never waits for a person (no tool here, no approval); done
   * may come before this returns (with storage on, after the audit
   * commit): the job is not touched after it */
  int rc = tg__hooksvc_call(j->rt, &req, &j->how, call_done, j, err);
  cJSON_Delete(meta);
  cJSON_Delete(fail); /* the call copied what it keeps */
  if (rc < 0) fail_safe(j, err);
}

/* The event, read strictly and made canonical; NULL with why for a
 * malformed one. */
cJSON *tg__hook_read_event(const tg_dialect *d, const char *text, size_t n,
                           const char *event_name, char *why, size_t len) {
  if (!text || n > TG_HOOK_MAX_EVENT) {
    snprintf(why, len, "the hook event is %zu bytes, over the limit of %u",
             text ? n : 0, TG_HOOK_MAX_EVENT);
    return NULL;
  }
  char msg[400];
  cJSON *ev = tg_json_parse(text, n, NULL, msg, sizeof msg);
  if (!ev) {
    snprintf(why, len, "the hook event is not valid JSON: %s", msg);
    return NULL;
  }
  /* for an agent whose payload may not name its event, the name the
   * installed line gives is the event that fired: it wins over the
   * payload's */
  const char *name = d && d->event_from_arg && event_name
                         ? event_name : str(ev, "hook_event_name");
  if (!cJSON_IsObject(ev) || !name) {
    snprintf(why, len, !cJSON_IsObject(ev) ? "the hook event is not a JSON "
             "object" : d && d->event_from_arg ? "the hook event has no "
             "hook_event_name, and no --event NAME was given"
             : "the hook event has no hook_event_name");
    cJSON_Delete(ev);
    return NULL;
  }
  /* the keys a canonical event keeps the agent's own under are never the
   * agent's to set */
  cJSON_DeleteItemFromObjectCaseSensitive(ev, "agent_event");
  cJSON_DeleteItemFromObjectCaseSensitive(ev, "agent_event_name");
  if (!d || !d->to_canonical) {
    if (!str(ev, "hook_event_name"))
      cJSON_AddStringToObject(ev, "hook_event_name", name);
    return ev;
  }
  char *own = tg__strdup(name); /* name may be in ev */
  tg_hook_event kind = tg__dialect_kind(d, own);
  cJSON *canon = own ? d->to_canonical(ev, own, kind, why, len) : NULL;
  if (!own) snprintf(why, len, "out of memory");
  if (canon && canon != ev) {
    const char *cname = tg__hook_kind_name(kind);
    if (!str(canon, "hook_event_name"))
      cJSON_AddStringToObject(canon, "hook_event_name", cname ? cname : own);
    cJSON_AddStringToObject(canon, "agent_event_name", own);
    cJSON_AddItemToObject(canon, "agent_event", ev);
  } else if (!canon) {
    cJSON_Delete(ev);
  }
  free(own);
  return canon;
}

const cJSON *tg__hook_native(const cJSON *event) {
  const cJSON *own = cJSON_GetObjectItemCaseSensitive(event, "agent_event");
  return own ? own : event;
}

const char *tg__hook_native_name(const cJSON *event) {
  const char *own = str(event, "agent_event_name");
  return own ? own : str(event, "hook_event_name");
}

/* The answer to the event read (taken), or, when it could not be (NULL),
 * the fail-safe one with why. */
static int answer_event(tg_runtime *rt, const tg_hook_request *req,
                        cJSON *event, const char *why, cJSON *trace,
                        tg_hook_done_cb done, void *ud, char err[TG_ERRMSG]) {
  const tg_dialect *agent = req ? tg__dialect(req->agent) : NULL;
  if (!rt || !agent || !done || !tg_hook_on_error_known(req->on_error)) {
    cJSON_Delete(event);
    if (!req || !done)
      tg__errf(err, TG_ERRMSG, "a hook answer needs a request and a done "
               "callback");
    else if (!agent)
      tg__errf(err, TG_ERRMSG, "unknown agent '%s' (known: %s)",
               req->agent ? req->agent : "(none)", tg__dialect_names());
    else
      tg__errf(err, TG_ERRMSG, "on_error is deny, ask or allow, not '%s'",
               req->on_error);
    return -EINVAL;
  }
  hook_job *j = calloc(1, sizeof *j);
  if (!j) {
    cJSON_Delete(event);
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
  j->event = event;
  j->trace = trace;
  if (!j->event) {
    /* unread: its name is the one given with it, if any */
    j->event_name = req->event_name;
    fail_safe(j, why);
    return 0;
  }
  j->event_name = tg__hook_native_name(j->event);
  j->kind = tg__hook_event_kind(str(j->event, "hook_event_name"));
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
                          : tg__hooksvc_turn(rt, str(j->event, "session_id")));
  return 0;
}

int tg_hook_answer(tg_runtime *rt, const tg_hook_request *req,
                   tg_hook_done_cb done, void *ud, char err[TG_ERRMSG]) {
  char why[TG_ERRMSG] = "";
  const tg_dialect *d = req ? tg__dialect(req->agent) : NULL;
  cJSON *event = d ? tg__hook_read_event(d, req->event, req->event_len,
                                         req->event_name, why, sizeof why)
                   : NULL;
  return answer_event(rt, req, event, why, NULL, done, ud, err);
}

int tg__hook_answer_read(tg_runtime *rt, const tg_hook_request *req,
                         cJSON *event, tg_hook_done_cb done, void *ud,
                         char err[TG_ERRMSG]) {
  if (!event) {
    tg__errf(err, TG_ERRMSG, "no event to answer");
    return -EINVAL;
  }
  return answer_event(rt, req, event, NULL, NULL, done, ud, err);
}

int tg__hook_answer_traced(tg_runtime *rt, const tg_hook_request *req,
                           cJSON *event, cJSON *trace, tg_hook_done_cb done,
                           void *ud, char err[TG_ERRMSG]) {
  if (!event || !trace) {
    cJSON_Delete(event);
    tg__errf(err, TG_ERRMSG, "no event to answer");
    return -EINVAL;
  }
  return answer_event(rt, req, event, NULL, trace, done, ud, err);
}
