/*
 * call_input.c — a request an upstream server makes of its client while
 * it runs a tool call of a 2026-07-28 client (elicitation/create,
 * sampling/createMessage, roots/list), put to that client the only way
 * its era has: the tools/call is answered at once with an input_required
 * result holding the request (inputRequests.upstream) and a requestState;
 * the client sends the same tools/call again with inputResponses.upstream
 * and the requestState, and its answer goes to the upstream as the
 * answer to its request. Meanwhile the call stays in flight, waiting at
 * the upstream (an upstream of the 2025 era cannot be asked to start
 * again); the retry takes the call over (its id is the one answered when
 * the call ends). A retry without the answer gets the request again, with
 * a new requestState.
 *
 * A request the client's capabilities (in its request's _meta) do not
 * cover is refused to the upstream, which may do without it (ask another
 * way); if the call then fails, the client gets -32021, the revision's
 * MissingRequiredClientCapability, naming what was missing (tools.c).
 *
 * The requestState is the one toolgate's own approvals use (reqstate.c):
 * bound to tools/call, the tool and the arguments, good once, for
 * request_state_ttl_ms; a retry whose state names no call waiting here
 * (the call ended meanwhile) is handled as a fresh call would be.
 *
 * Kept apart from tools.c: it is the one place that parks a call and
 * takes it over; tools.c calls it at the start of tools/call and when a
 * call is freed.
 */
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "mcp.h"

#define INPUT_KEY "upstream" /* its key in inputRequests and inputResponses */

int mcp_call_is_stateless(mcp_server *s, const char *call_id) {
  mcp_call *c = mcp_call_find(s, call_id);
  return c && c->stateless;
}

static int may_ask(const mcp_call *c, const char *method) {
  if (!strcmp(method, "elicitation/create")) return c->can_elicit;
  if (!strcmp(method, "sampling/createMessage")) return c->can_sample;
  if (!strcmp(method, "roots/list")) return c->can_roots;
  return 0;
}

/* Answers the call's request (c->id) with input_required for its waiting
 * request, under a new requestState. 0, or -1 when out of memory. */
static int pose(mcp_server *s, mcp_call *c) {
  char *state = mcp_state_issue(s->states, "tools/call", c->tool, c->args);
  if (!state) return -1;
  cJSON *res = cJSON_CreateObject();
  cJSON_AddStringToObject(res, "resultType", "input_required");
  cJSON_AddItemToObject(cJSON_AddObjectToObject(res, "inputRequests"), INPUT_KEY,
                        cJSON_Duplicate(c->input_request, 1));
  cJSON_AddStringToObject(res, "requestState", state);
  free(c->input_state);
  c->input_state = state;
  mcp_req req = {c->id, "tools/call", NULL, 1, NULL};
  mcp_reply(c->ss, &req, res);
  c->answered = 1;
  return 0;
}

mcp_call *mcp_call_ask_input(mcp_server *s, const char *call_id,
                             const char *method, cJSON *params,
                             mcp_input_fn fn, void *ud, char *why, size_t len) {
  mcp_call *c = mcp_call_find(s, call_id);
  const char *cap = !strcmp(method, "sampling/createMessage") ? "sampling"
                    : !strcmp(method, "roots/list")           ? "roots"
                                                              : "elicitation";
  if (!c || !c->ss || !c->stateless || c->cancelled) {
    snprintf(why, len, "the tool call it belongs to has ended");
  } else if (c->answered) {
    snprintf(why, len, "the tool call waits on the client for another "
             "request already (one at a time)");
  } else if (!may_ask(c, method)) {
    c->missing_cap = cap; /* the upstream may do without; if it fails, -32021 */
    snprintf(why, len, "toolgate's client cannot answer %s (its request "
             "declared no %s capability)", method, cap);
  } else {
    cJSON *q = cJSON_CreateObject();
    cJSON_AddStringToObject(q, "method", method);
    cJSON_AddItemToObject(q, "params", params);
    params = NULL;
    c->input_request = q;
    c->input_fn = fn;
    c->input_ud = ud;
    if (pose(s, c) == 0) {
      mcp_logf(s->log, MCP_LOG_INFO, "%s %s: the upstream's %s put to the "
               "client (input_required)", c->call_id, c->tool, method);
      return c;
    }
    c->input_fn = NULL;
    cJSON_Delete(c->input_request);
    c->input_request = NULL;
    snprintf(why, len, "out of memory");
  }
  cJSON_Delete(params);
  return NULL;
}

/* What a waiting request leaves on the call, gone (fn not called). */
static void forget_input(mcp_call *c) {
  c->input_fn = NULL;
  c->input_ud = NULL;
  cJSON_Delete(c->input_request);
  c->input_request = NULL;
  free(c->input_state);
  c->input_state = NULL;
}

void mcp_call_input_withdraw(mcp_call *c) {
  if (c) forget_input(c);
}

void mcp_call_input_drop(mcp_call *c, const char *why) {
  mcp_input_fn fn = c->input_fn;
  void *ud = c->input_ud;
  forget_input(c);
  if (fn) {
    cJSON *e = cJSON_CreateObject();
    cJSON_AddNumberToObject(e, "code", JRPC_INTERNAL_ERROR);
    cJSON_AddStringToObject(e, "message", why);
    fn(NULL, e, ud);
    cJSON_Delete(e);
  }
}

static mcp_call *waiting_with(mcp_session *ss, const char *state) {
  for (mcp_call *c = ss->calls; c; c = c->next)
    if (c->input_fn && c->input_state && !strcmp(c->input_state, state))
      return c;
  return NULL;
}

/* The retry takes the call over: its id is answered when the call ends,
 * its progress token and capabilities are the ones now. */
static int take_over(mcp_call *c, const mcp_req *req) {
  cJSON *id = cJSON_Duplicate(req->id, 1);
  const cJSON *token = cJSON_GetObjectItemCaseSensitive(
      cJSON_GetObjectItemCaseSensitive(req->params, "_meta"), "progressToken");
  cJSON *tok = cJSON_IsString(token) || cJSON_IsNumber(token)
                   ? cJSON_Duplicate(token, 1) : NULL;
  if (!id || ((cJSON_IsString(token) || cJSON_IsNumber(token)) && !tok)) {
    cJSON_Delete(id);
    cJSON_Delete(tok);
    return -1;
  }
  cJSON_Delete(c->id);
  c->id = id;
  cJSON_Delete(c->progress_token);
  c->progress_token = tok;
  c->last_progress = -HUGE_VAL;
  c->can_elicit = mcp_can_elicit(req);
  c->can_sample = cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(req->caps, "sampling"));
  c->can_roots = cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(req->caps, "roots"));
  c->answered = 0;
  return 0;
}

int mcp_call_resume(mcp_session *ss, const mcp_req *req) {
  mcp_server *s = ss->s;
  const cJSON *state = cJSON_GetObjectItemCaseSensitive(req->params, "requestState");
  if (!req->stateless || !cJSON_IsString(state)) return 0;
  mcp_call *c = waiting_with(ss, state->valuestring);
  if (!c) return 0; /* an approval's, or its call ended: a call as any */
  const cJSON *name = cJSON_GetObjectItemCaseSensitive(req->params, "name");
  const cJSON *args = cJSON_GetObjectItemCaseSensitive(req->params, "arguments");
  const cJSON *in = cJSON_GetObjectItemCaseSensitive(req->params, "inputResponses");
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(in, INPUT_KEY);
  const char *bad = NULL;
  if (!cJSON_IsString(name))
    bad = "tools/call: params.name must be a string";
  else if (args && !cJSON_IsObject(args) && !cJSON_IsNull(args))
    bad = "tools/call: params.arguments must be an object";
  else if (in && !cJSON_IsObject(in))
    bad = "tools/call: params.inputResponses must be an object";
  else if (a && !cJSON_IsObject(a))
    bad = "tools/call: params.inputResponses." INPUT_KEY " must be the "
          "client's answer to the request (an object)";
  if (bad) {
    mcp_reply_error(ss, req->id, JRPC_INVALID_PARAMS, bad, NULL);
    return 1;
  }
  cJSON *none = cJSON_IsObject(args) ? NULL : cJSON_CreateObject();
  char why[512];
  const char *reason = NULL;
  int rc = mcp_state_redeem(s->states, state->valuestring, "tools/call",
                            name->valuestring, none ? none : args, why,
                            sizeof why, &reason);
  cJSON_Delete(none);
  if (rc < 0) {
    cJSON *data = cJSON_CreateObject();
    cJSON_AddStringToObject(data, "reason", reason);
    mcp_logf(s->log, MCP_LOG_WARNING, "tools/call %s refused: %s", c->tool, why);
    mcp_reply_error(ss, req->id, JRPC_INVALID_PARAMS, why, data);
    return 1;
  }
  if (!a) { /* sent again without the answer: the request is put again */
    cJSON *id = cJSON_Duplicate(req->id, 1);
    if (id) {
      cJSON_Delete(c->id);
      c->id = id;
    }
    mcp_logf(s->log, MCP_LOG_INFO, "%s %s: sent again without the answer to "
             "the upstream's request: asking again", c->call_id, c->tool);
    if (!id || pose(s, c) < 0)
      mcp_reply_error(ss, req->id, JRPC_INTERNAL_ERROR, "out of memory", NULL);
    return 1;
  }
  if (take_over(c, req) < 0) {
    mcp_reply_error(ss, req->id, JRPC_INTERNAL_ERROR, "out of memory", NULL);
    return 1;
  }
  mcp_input_fn fn = c->input_fn;
  void *ud = c->input_ud;
  forget_input(c);
  mcp_logf(s->log, MCP_LOG_INFO, "%s %s: the client answered the upstream's "
           "request: the call goes on", c->call_id, c->tool);
  fn(a, NULL, ud); /* may end the call (and free c): not touched after */
  return 1;
}
