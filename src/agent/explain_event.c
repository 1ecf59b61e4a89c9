/*
 * explain_event.c — tg_hook_explain: what toolgate makes of one hook event
 * of a coding agent, for `toolgate explain --event`. Nothing here judges
 * on its own: the event is read and mapped by the code `toolgate hook`
 * uses (answer.c's strict reader, runtime/agent_map.c), the rules'
 * answers are the chain's dry run of the mapped call with the agent's
 * strategy (its names cover it), and the answer is tg_hook_answer's own,
 * through answer.c, with what the chain saw traced (the pre-hooks'
 * rewrite) and the tools a policy asks to run for the model's context
 * listed instead of run. So what it shows is what the agent would get.
 * The runtime records nothing (no database); the session's taint the
 * hook would find in its database is read by the caller's connection
 * and made the runtime's own first, and the remembered approvals there
 * are looked up by the chain as the hook's would be (tg__hook_explain_
 * stored): the one that answered is named.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "protocol.h"

static const char *str(const cJSON *o, const char *k) {
  return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k));
}

/* The agent whose shape event has, or NULL when it cannot tell. */
static const char *agent_of(const cJSON *ev) {
  const char *name = str(ev, "hook_event_name"), *own = str(ev, "toolgate_agent");
  const tg_dialect *d;
  if (own && tg__dialect(own))
    return tg__dialect(own)->name; /* toolgate's OpenCode plugin says so */
  if (cJSON_GetObjectItemCaseSensitive(ev, "turn_id"))
    return "codex"; /* Codex's events carry the turn; Claude Code's not */
  if (cJSON_GetObjectItemCaseSensitive(ev, "conversation_id"))
    return "cursor"; /* Cursor's events name their conversation */
  if (name) {
    /* the first agent, in the registry's order, with an event so named */
    for (size_t i = 0; (d = tg__dialect_at(i)); i++)
      if (tg__dialect_kind(d, name) != TG_HOOK_EV_OTHER) break;
    if (!d) return "claude-code";
    /* Claude Code's names are OpenCode's plugin's too: Claude Code sends
     * its transcript and permission mode, the plugin neither */
    if (!strcmp(d->name, "claude-code") &&
        !cJSON_GetObjectItemCaseSensitive(ev, "transcript_path") &&
        !cJSON_GetObjectItemCaseSensitive(ev, "permission_mode"))
      return NULL;
    return d->name;
  }
  /* no name: an agent whose payload does not carry it, known by a key of
   * its own (Copilot CLI's camelCase sessionId, toolName) */
  for (size_t i = 0; (d = tg__dialect_at(i)); i++)
    if (d->event_from_arg && (cJSON_GetObjectItemCaseSensitive(ev, "sessionId") ||
                              cJSON_GetObjectItemCaseSensitive(ev, "toolName")))
      return d->name;
  return "claude-code";
}

const char *tg__hook_agent_of(const cJSON *ev) { return agent_of(ev); }

const char *tg_hook_detect_agent(const char *event, size_t len) {
  char why[TG_ERRMSG];
  cJSON *ev = event ? tg_json_parse(event, len, NULL, why, sizeof why) : NULL;
  const char *agent = ev ? agent_of(ev) : "claude-code";
  cJSON_Delete(ev);
  return agent;
}

typedef struct {
  int done;
  int exit_code;
  char *output, *message;
} answered;

static void got_answer(tg_runtime *rt, const tg_hook_result *res, void *ud) {
  (void)rt;
  answered *a = ud;
  a->done = 1;
  a->exit_code = res->exit_code;
  a->output = tg__strdup(res->output ? res->output : "");
  a->message = res->message ? tg__strdup(res->message) : NULL;
}

/* {exit_code, output: the JSON the agent reads (null: none), message}. */
static cJSON *answer_json(const answered *a) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddNumberToObject(o, "exit_code", a->exit_code);
  cJSON *out = a->output && *a->output ? cJSON_Parse(a->output) : NULL;
  if (!out && a->output && *a->output)
    out = cJSON_CreateString(a->output); /* not JSON: shown as it is */
  cJSON_AddItemToObject(o, "output", out ? out : cJSON_CreateNull());
  if (a->message) cJSON_AddStringToObject(o, "message", a->message);
  return o;
}

/* The mapped call {tool, args, read_only, names, paths}, and the chain's
 * dry run of it (before the tool only: after it, no rule judges). */
static void explain_mapped(tg_runtime *rt, const char *agent, cJSON *ev,
                           cJSON *out) {
  tg_agent_call m;
  int raised = 0;
  char err[TG_ERRMSG] = "";
  if (tg__agent_map(rt, agent, ev, &m, &raised, err, sizeof err) < 0) {
    cJSON_AddStringToObject(out, "mapping_error", err);
    return;
  }
  cJSON *call = cJSON_AddObjectToObject(out, "call");
  cJSON_AddStringToObject(call, "tool", m.tool);
  cJSON_AddItemToObject(call, "args", cJSON_Duplicate(m.args, 1));
  cJSON_AddBoolToObject(call, "read_only", m.read_only);
  cJSON_AddBoolToObject(call, "mapped", m.mapped);
  cJSON *names = cJSON_AddArrayToObject(call, "names");
  for (size_t i = 0; m.names && m.names[i]; i++)
    cJSON_AddItemToArray(names, cJSON_CreateString(m.names[i]));
  if (m.paths) cJSON_AddItemToObject(call, "paths", cJSON_Duplicate(m.paths, 1));
  tg_hook_event kind = tg__hook_event_kind(str(ev, "hook_event_name"));
  if (kind == TG_HOOK_EV_PRE || kind == TG_HOOK_EV_PERMISSION) {
    tg_call_strategy how;
    memset(&how, 0, sizeof how);
    tg__agent_strategy(&how, &m);
    how.tool = TG_TOOL_ELSEWHERE;
    how.ask = TG_ASK_LEFT;
    tg_call_request req;
    memset(&req, 0, sizeof req);
    req.tool = m.tool;
    req.args = m.args;
    req.session = str(ev, "session_id");
    req.metadata = tg__agent_metadata(agent, ev, &m);
    /* the project remembered approvals are matched in, as answer.c's */
    req.project = str(req.metadata, "agent_project")
                      ? str(req.metadata, "agent_project") : "";
    cJSON *x = tg__hooksvc_explain(rt, &req, &how, err);
    if (x) cJSON_AddItemToObject(out, "explain", x);
    else cJSON_AddStringToObject(out, "explain_error", err);
    cJSON_Delete((cJSON *)req.metadata);
  }
  tg__agent_call_clear(&m);
}

/* Why src's database is not read for session (NULL: it is), as the hook
 * would not: there is none, or the hook refuses the event's session_id
 * before it reads anything. */
static const char *unread(const tg_hook_stored *src, const char *session) {
  char why[TG_ERRMSG];
  if (!src->store) return src->not_read ? src->not_read : "no database";
  if (session && tg__hooksvc_session_check(session, why) < 0)
    return "the event's session_id is not one the hook takes";
  return NULL;
}

/* The taint `toolgate hook` would find for the event's session (its
 * session_id, else the runtime's session, as the chain keys it), read
 * from src, made the runtime's own and said in out.stored_taint. 0, or
 * -1 with err when the database cannot be read. */
static int stored_taint(tg_runtime *rt, const tg_hook_stored *src,
                        const cJSON *ev, cJSON *out, char err[TG_ERRMSG]) {
  const char *session = str(ev, "session_id");
  char why[TG_ERRMSG] = "";
  cJSON *o = cJSON_AddObjectToObject(out, "stored_taint");
  if (!o) {
    tg__errf(err, TG_ERRMSG, "out of memory");
    return -1;
  }
  if (!session) session = tg__runtime_session(rt);
  cJSON_AddStringToObject(o, "session", session);
  const char *not_read = unread(src, session);
  if (not_read) {
    cJSON_AddBoolToObject(o, "consulted", 0);
    cJSON_AddStringToObject(o, "why", not_read);
    return 0;
  }
  cJSON *t = tg_store_taint(src->store, session, why);
  if (!t) {
    tg__errf(err, TG_ERRMSG, "the stored taint of session %s cannot be "
             "read, so what the hook would answer cannot be told: %s",
             session, why);
    return -1;
  }
  cJSON_AddBoolToObject(o, "consulted", 1);
  cJSON_AddStringToObject(o, "database", src->path ? src->path : "");
  cJSON_AddItemToObject(o, "taint", t);
  if (cJSON_IsNull(t)) return 0;
  tg_taint k;
  const cJSON *level = cJSON_GetObjectItemCaseSensitive(t, "level");
  tg__taint_fill(&k, (int)cJSON_GetNumberValue(level), str(t, "reason"),
                 str(t, "call"), str(t, "tool"),
                 (int64_t)cJSON_GetNumberValue(
                     cJSON_GetObjectItemCaseSensitive(t, "at")));
  if (tg__runtime_taint_seed(rt, session, &k, why) < 0) {
    tg__errf(err, TG_ERRMSG, "session %s: its stored taint cannot be "
             "applied: %s", session, why);
    return -1;
  }
  return 0;
}

/* The remembered approvals the hook would look the call up in: src's
 * database, made the runtime's lookup (tg__runtime_read_approvals), and
 * said in out.approvals {consulted, database | why}. 0, or -1 with err. */
static int stored_approvals(tg_runtime *rt, const tg_hook_stored *src,
                            const cJSON *ev, cJSON *out, char err[TG_ERRMSG]) {
  cJSON *o = cJSON_AddObjectToObject(out, "approvals");
  if (!o) {
    tg__errf(err, TG_ERRMSG, "out of memory");
    return -1;
  }
  const char *not_read = unread(src, str(ev, "session_id"));
  if (not_read) {
    cJSON_AddBoolToObject(o, "consulted", 0);
    cJSON_AddStringToObject(o, "why", not_read);
    return 0;
  }
  if (tg__runtime_read_approvals(rt, src->store, err) < 0) return -1;
  cJSON_AddBoolToObject(o, "consulted", 1);
  cJSON_AddStringToObject(o, "database", src->path ? src->path : "");
  return 0;
}

/* The approval that allowed the call (the answer's trace says a
 * remembered one did: hit is its id), as `toolgate approvals list` shows
 * it, into out.approvals.answered_by (null: none did). */
static void approval_answered(const tg_hook_stored *src, const cJSON *trace,
                              int64_t hit, cJSON *out) {
  cJSON *o = cJSON_GetObjectItemCaseSensitive(out, "approvals");
  if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "consulted"))) return;
  cJSON *by = NULL, *e;
  if (hit > 0 &&
      cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(trace, "remembered"))) {
    char why[TG_ERRMSG];
    cJSON *all = tg_store_approvals(src->store, 0, why);
    cJSON_ArrayForEach(e, all) {
      if ((int64_t)cJSON_GetNumberValue(
              cJSON_GetObjectItemCaseSensitive(e, "id")) == hit) {
        by = cJSON_Duplicate(e, 1);
        break;
      }
    }
    cJSON_Delete(all);
    if (!by) { /* in force when read, gone since: its id still says it */
      by = cJSON_CreateObject();
      cJSON_AddNumberToObject(by, "id", (double)hit);
    }
  }
  cJSON_AddItemToObject(o, "answered_by", by ? by : cJSON_CreateNull());
}

cJSON *tg_hook_explain(tg_runtime *rt, const tg_hook_request *req,
                       char err[TG_ERRMSG]) {
  return tg__hook_explain_stored(rt, req, NULL, err);
}

cJSON *tg__hook_explain_stored(tg_runtime *rt, const tg_hook_request *req,
                               const tg_hook_stored *src,
                               char err[TG_ERRMSG]) {
  if (!rt || !req) {
    tg__errf(err, TG_ERRMSG, "explain needs a runtime and a request");
    return NULL;
  }
  const char *agent = req->agent ? req->agent
                      : tg_hook_detect_agent(req->event, req->event_len);
  if (!agent) {
    tg__errf(err, TG_ERRMSG, "cannot tell which agent sent this event (its "
             "names are Claude Code's and OpenCode's, and it has neither "
             "Claude Code's transcript_path nor OpenCode's toolgate_agent): "
             "give --agent NAME (%s)", tg__dialect_names());
    return NULL;
  }
  if (!tg_hook_agent_known(agent)) {
    tg__errf(err, TG_ERRMSG, "unknown agent '%s' (known: %s)", agent,
             tg__dialect_names());
    return NULL;
  }
  char why[TG_ERRMSG] = "";
  const tg_dialect *d = tg__dialect(agent);
  agent = d->name;
  cJSON *ev = tg__hook_read_event(d, req->event, req->event_len,
                                  req->event_name, why, sizeof why);
  cJSON *out = cJSON_CreateObject();
  cJSON_AddStringToObject(out, "agent", agent);
  cJSON_AddBoolToObject(out, "agent_detected", !req->agent);
  if (!ev) {
    cJSON_AddStringToObject(out, "event_error", why);
  } else {
    cJSON_AddStringToObject(out, "event", str(ev, "hook_event_name"));
    if (str(ev, "tool_name"))
      cJSON_AddStringToObject(out, "agent_tool", str(ev, "tool_name"));
    tg_hook_event kind = tg__hook_event_kind(str(ev, "hook_event_name"));
    int asks = kind == TG_HOOK_EV_PRE || kind == TG_HOOK_EV_PERMISSION;
    if (src && (stored_taint(rt, src, ev, out, err) < 0 ||
                /* only a call about to run is looked up */
                (asks && stored_approvals(rt, src, ev, out, err) < 0))) {
      cJSON_Delete(ev);
      cJSON_Delete(out);
      return NULL;
    }
    if (tg__hook_judged(tg__hook_event_kind(str(ev, "hook_event_name"))))
      explain_mapped(rt, agent, ev, out);
  }
  /* the answer, as `toolgate hook` gives it (a malformed event too: the
   * fail-safe answer, read again by the same reader) */
  tg_hook_request r = *req;
  r.agent = agent;
  answered a = {0, 0, NULL, NULL};
  cJSON *trace = cJSON_CreateObject();
  (void)tg__runtime_read_approval_hit(rt); /* the dry run's: the answer's next */
  int rc = ev ? tg__hook_answer_traced(rt, &r, ev, trace, got_answer, &a, err)
              : tg_hook_answer(rt, &r, got_answer, &a, err);
  while (rc == 0 && !a.done)
    if (tg_runtime_run(rt, TG_RUN_ONCE) == 0 && !a.done) break;
  if (src) {
    approval_answered(src, trace, tg__runtime_read_approval_hit(rt), out);
    char ignored[TG_ERRMSG];
    tg__runtime_read_approvals(rt, NULL, ignored); /* src is the caller's */
  }
  if (rc < 0 || !a.done) {
    if (rc == 0) tg__errf(err, TG_ERRMSG, "the hook answer did not come");
    cJSON_Delete(trace);
    cJSON_Delete(out);
    free(a.output);
    free(a.message);
    return NULL;
  }
  if (trace->child) cJSON_AddItemToObject(out, "judged", trace);
  else cJSON_Delete(trace);
  cJSON_AddItemToObject(out, "answer", answer_json(&a));
  free(a.output);
  free(a.message);
  return out;
}
