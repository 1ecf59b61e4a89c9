/*
 * approval.c — an `ask` from the rules, answered by the user at the
 * client's end.
 *
 *   2025 era, client with elicitation: an elicitation/create request goes
 *     to the client; its answer answers the ask (the call waits, other
 *     calls go on). Cancelling the call withdraws the question.
 *   2026-07-28, client with elicitation (in the request's _meta): the call
 *     is answered at once with an input_required result holding the
 *     question and a requestState (reqstate.c); this chain call ends
 *     ("asked through the client"). The client sends the same tools/call
 *     again with inputResponses.approval (the ElicitResult) and the
 *     requestState; that call's ask takes the user's answer.
 *   a client that cannot be asked: the fallback (reject, saying approval
 *     was not possible here; or allow).
 *
 * Each call the client makes carries its own approver (mcp_call_approver,
 * given when the call starts): the call it asks for is at hand, with its
 * session and what its request said. The runtime's approver (mcp_approver)
 * hears only the calls a tool makes itself, which no client can be asked
 * about.
 *
 * The question is one form: decision (approve, always_args, always_tool,
 * reject) and optional guidance for the agent.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mcp.h"

#define ARGS_SHOWN 2000 /* of the args in the question, in bytes */

/* ---- the question ------------------------------------------------------------ */

static cJSON *enum_prop(const char *title, const char *desc,
                        const char *const *values, const char *const *names) {
  cJSON *p = cJSON_CreateObject();
  cJSON_AddStringToObject(p, "type", "string");
  cJSON_AddStringToObject(p, "title", title);
  cJSON_AddStringToObject(p, "description", desc);
  cJSON *e = cJSON_AddArrayToObject(p, "enum");
  cJSON *n = cJSON_AddArrayToObject(p, "enumNames");
  for (int i = 0; values[i]; i++) {
    cJSON_AddItemToArray(e, cJSON_CreateString(values[i]));
    cJSON_AddItemToArray(n, cJSON_CreateString(names[i]));
  }
  return p;
}

static cJSON *question_schema(void) {
  static const char *const values[] = {"approve", "always_args", "always_tool",
                                       "reject", NULL};
  static const char *const names[] = {
      "Approve once", "Approve these exact arguments for this session",
      "Approve this tool for this session", "Reject", NULL};
  cJSON *s = cJSON_CreateObject();
  cJSON_AddStringToObject(s, "type", "object");
  cJSON *props = cJSON_AddObjectToObject(s, "properties");
  cJSON_AddItemToObject(props, "decision",
                        enum_prop("Decision", "Run the tool call?", values, names));
  cJSON *g = cJSON_AddObjectToObject(props, "guidance");
  cJSON_AddStringToObject(g, "type", "string");
  cJSON_AddStringToObject(g, "title", "Guidance for the agent");
  cJSON_AddStringToObject(g, "description",
                          "Optional: what the agent should do instead");
  cJSON *req = cJSON_AddArrayToObject(s, "required");
  cJSON_AddItemToArray(req, cJSON_CreateString("decision"));
  return s;
}

static cJSON *question(const tg_approval_request *r) {
  char *args = r->args ? tg_json_print(r->args, 0) : NULL;
  size_t n = args ? strlen(args) : 0;
  char msg[ARGS_SHOWN + 1024];
  snprintf(msg, sizeof msg,
           "toolgate: may the agent run this tool call?\n\nTool: %s\n"
           "Arguments: %.*s%s\n%s%s%s%s", r->tool, ARGS_SHOWN,
           args ? args : "{}", n > ARGS_SHOWN ? "…" : "",
           r->rule ? "\nRule " : "", r->rule ? r->rule : "",
           r->prompt ? ": " : "", r->prompt ? r->prompt : "");
  free(args);
  cJSON *p = cJSON_CreateObject();
  cJSON_AddStringToObject(p, "message", msg);
  cJSON_AddItemToObject(p, "requestedSchema", question_schema());
  return p;
}

/* ---- the answer ---------------------------------------------------------------- */

typedef struct {
  tg_answer answer;
  tg_always_scope scope;
  const char *guidance; /* points into the result */
} user_answer;

/* An ElicitResult ({action, content?}) as an answer. */
static void read_answer(const cJSON *r, user_answer *a) {
  const char *action = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "action"));
  const cJSON *content = cJSON_GetObjectItemCaseSensitive(r, "content");
  const char *d = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(content, "decision"));
  a->answer = TG_ANSWER_REJECT;
  a->scope = TG_SCOPE_TOOL;
  a->guidance = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(content, "guidance"));
  if (action && !strcmp(action, "accept") && d) {
    if (!strcmp(d, "approve")) a->answer = TG_ANSWER_APPROVE;
    if (!strcmp(d, "always_args") || !strcmp(d, "always_tool"))
      a->answer = TG_ANSWER_ALWAYS;
    if (!strcmp(d, "always_args")) a->scope = TG_SCOPE_ARGS;
  } else if (!a->guidance && action && !strcmp(action, "cancel")) {
    a->guidance = "the user dismissed the question without answering";
  }
}

static void answer(mcp_server *s, uint64_t approval_id, const user_answer *a) {
  const char *g = a->answer == TG_ANSWER_REJECT ? a->guidance : NULL;
  tg_approval_answer(s->rt, approval_id, a->answer, a->scope, g);
}

static void unavailable(mcp_server *s, uint64_t approval_id, const char *why) {
  tg_approval_answer(s->rt, approval_id, TG_ANSWER_UNAVAILABLE, TG_SCOPE_TOOL,
                     why);
}

/* ---- the 2025 era: elicitation/create ----------------------------------------- */

static void on_elicit_answer(mcp_session *ss, const cJSON *result,
                             const cJSON *error, void *ud) {
  mcp_server *s = ss->s;
  mcp_call *c = ud;
  uint64_t id = c->approval_id;
  c->elicit = NULL;
  c->approval_id = 0;
  if (error) {
    const char *m = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(error, "message"));
    char why[512];
    snprintf(why, sizeof why, "the client could not ask the user (%s)",
             m ? m : "it answered elicitation/create with an error");
    return unavailable(s, id, why);
  }
  user_answer a;
  read_answer(result, &a);
  answer(s, id, &a); /* may end the call: c is not touched after */
}

static void elicit(mcp_server *s, mcp_call *c, const tg_approval_request *r) {
  cJSON *p = question(r);
  if (!strcmp(c->ss->version, "2025-11-25"))
    cJSON_AddStringToObject(p, "mode", "form");
  c->approval_id = r->approval_id;
  c->elicit = mcp_ask_client(c->ss, c->id, "elicitation/create", p,
                             on_elicit_answer, c);
  if (c->elicit) return;
  c->approval_id = 0;
  unavailable(s, r->approval_id, "the client's stream is closed");
}

void mcp_approval_drop(mcp_call *c) {
  if (!c->elicit) return;
  mcp_withdraw(c->elicit, "the tool call ended or was cancelled");
  c->elicit = NULL;
  c->approval_id = 0;
}

/* ---- 2026-07-28: input_required ------------------------------------------------- */

static void input_required(mcp_server *s, mcp_call *c,
                           const tg_approval_request *r) {
  char *state = mcp_state_issue(s->states, MCP_STATE_APPROVAL, "tools/call",
                                c->tool, c->args);
  if (!state) return unavailable(s, r->approval_id, "out of memory");
  cJSON *res = cJSON_CreateObject();
  cJSON_AddStringToObject(res, "resultType", "input_required");
  cJSON *reqs = cJSON_AddObjectToObject(res, "inputRequests");
  cJSON *q = cJSON_AddObjectToObject(reqs, MCP_APPROVAL_KEY);
  cJSON_AddStringToObject(q, "method", "elicitation/create");
  cJSON_AddItemToObject(q, "params", question(r));
  cJSON_AddStringToObject(res, "requestState", state);
  free(state);
  mcp_req req = {c->id, "tools/call", NULL, 1, NULL};
  mcp_reply(c->ss, &req, res);
  c->answered = 1;
  mcp_logf(s->log, MCP_LOG_INFO, "%s %s: approval asked through the client "
           "(input_required)", c->call_id, c->tool);
  unavailable(s, r->approval_id, "the user is asked through the client "
              "(input_required); the call runs when the client sends it "
              "again with the answer");
}

int mcp_read_input_response(mcp_session *ss, const mcp_req *req,
                            mcp_call *c) {
  mcp_server *s = ss->s;
  const cJSON *state = cJSON_GetObjectItemCaseSensitive(req->params, "requestState");
  const cJSON *in = cJSON_GetObjectItemCaseSensitive(req->params, "inputResponses");
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(in, MCP_APPROVAL_KEY);
  const char *bad = NULL;
  if (!state && !in) return 0;
  if (!req->stateless)
    bad = "tools/call: requestState and inputResponses answer an "
          "input_required result of the " MCP_STATELESS_VERSION " era; this "
          "request is in a session (elicitation answers come as responses)";
  else if (!cJSON_IsString(state))
    bad = "tools/call: params.requestState must be the string of the "
          "input_required result";
  else if (in && !cJSON_IsObject(in))
    bad = "tools/call: params.inputResponses must be an object";
  else if (a && (!cJSON_IsObject(a) ||
                 !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(a, "action"))))
    bad = "tools/call: params.inputResponses.approval must be the user's "
          "ElicitResult ({\"action\": ..., \"content\": ...})";
  if (bad) {
    mcp_reply_error(ss, req->id, JRPC_INVALID_PARAMS, bad, NULL);
    return -1;
  }
  char why[512];
  const char *reason = NULL;
  /* A state of the upstream's requests for this very call, which has
   * ended meanwhile (mcp_call_resume found nothing waiting on it): a call
   * as any, its inputResponses answers to requests no one waits for —
   * never an answer to toolgate's own question, which it did not pose. */
  int rc = mcp_state_redeem(s->states, state->valuestring, MCP_STATE_INPUT,
                            "tools/call", c->tool, c->args, why, sizeof why,
                            &reason);
  if (rc == 0) {
    mcp_logf(s->log, MCP_LOG_INFO, "tools/call %s: its requestState names a "
             "call that has ended: run as a new call", c->tool);
    return 0;
  }
  /* tampered, replayed, expired: whatever it was issued for */
  if (reason && !strcmp(reason, "mismatch"))
    rc = mcp_state_redeem(s->states, state->valuestring, MCP_STATE_APPROVAL,
                          "tools/call", c->tool, c->args, why, sizeof why,
                          &reason);
  if (rc < 0) {
    cJSON *data = cJSON_CreateObject();
    cJSON_AddStringToObject(data, "reason", reason);
    mcp_logf(s->log, MCP_LOG_WARNING, "tools/call %s refused: %s", c->tool, why);
    mcp_reply_error(ss, req->id, JRPC_INVALID_PARAMS, why, data);
    return -1;
  }
  /* the state was good but the answer is missing: the call runs without
   * one, and its ask puts the question again (a new input_required with a
   * new requestState) rather than failing the retry */
  if (!a) {
    mcp_logf(s->log, MCP_LOG_INFO, "tools/call %s: sent again without the "
             "user's answer: asking again", c->tool);
    return 0;
  }
  user_answer u;
  read_answer(a, &u);
  c->preset = (int)u.answer;
  c->preset_scope = u.scope;
  c->preset_guidance = u.guidance ? strdup(u.guidance) : NULL;
  return 0;
}

/* ---- the approver ------------------------------------------------------------- */

static void fallback(mcp_server *s, uint64_t approval_id, const char *why) {
  if (s->opt.ask_fallback == MCP_FALLBACK_ALLOW) {
    tg_approval_answer(s->rt, approval_id, TG_ANSWER_APPROVE, TG_SCOPE_TOOL,
                       NULL);
    return;
  }
  unavailable(s, approval_id, why);
}

void mcp_approver(tg_runtime *rt, const tg_approval_request *r, void *ud) {
  fallback(ud, r->approval_id, "the call did not come from the MCP client (a "
           "tool's own call), so no one can be asked");
}

void mcp_call_approver(tg_runtime *rt, const tg_approval_request *r,
                       void *ud) {
  mcp_call *c = ud;
  if (!c->ss) { /* orphaned: the server has gone */
    tg_approval_answer(rt, r->approval_id, TG_ANSWER_UNAVAILABLE,
                       TG_SCOPE_TOOL, "the MCP server has stopped");
    return;
  }
  mcp_server *s = c->ss->s;
  if (c->cancelled)
    return unavailable(s, r->approval_id, "the call was cancelled");
  if (c->preset) { /* the user answered when the client sent the call again */
    user_answer a = {(tg_answer)c->preset, c->preset_scope, c->preset_guidance};
    c->preset = 0;
    return answer(s, r->approval_id, &a);
  }
  if (!c->can_elicit)
    return fallback(s, r->approval_id, "this MCP client cannot ask the user "
                    "(it declared no elicitation capability): ask the user to "
                    "approve the call another way, or to change the policies");
  if (c->stateless) return input_required(s, c, r);
  elicit(s, c, r);
}
