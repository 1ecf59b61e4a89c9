/*
 * call_input.c — a tools/call of a 2026-07-28 client whose upstream asks
 * the client for something (elicitation/create, sampling/createMessage,
 * roots/list): the call parks (parked.c, which does the asking, the
 * requestState and the retry's answers) and this is what is the call's
 * own in it: finding the call an upstream's request belongs to, the
 * retry that names the call (params.name and params.arguments, bound by
 * the requestState), and the retry taking the call over — its id is
 * answered when the call ends, its progress token and capabilities are
 * the ones now.
 *
 * A request the client's capabilities do not cover is refused to the
 * upstream, which may do without it; if the call then fails, the client
 * gets -32021, the revision's MissingRequiredClientCapability, naming what
 * was missing (tools.c, park.missing_cap).
 *
 * A retry whose state names no call waiting here (the call ended
 * meanwhile) is handled as a fresh call would be (approval.c redeems its
 * state). The call waits on its retry as long as it runs (its timeout).
 */
#include <stdio.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "mcp.h"

static mcp_call *call_of(const mcp_parked *pk) {
  return (mcp_call *)((char *)pk - offsetof(mcp_call, park));
}

mcp_parked *mcp_call_park(mcp_server *s, const char *call_id) {
  mcp_call *c = mcp_call_find(s, call_id);
  return c && c->stateless ? &c->park : NULL;
}

static int call_open(const mcp_parked *pk) {
  const mcp_call *c = call_of(pk);
  return c->ss && c->stateless && !c->cancelled;
}

static void call_reply(mcp_parked *pk, cJSON *result) {
  mcp_call *c = call_of(pk);
  mcp_req req = {c->id, "tools/call", NULL, 1, NULL};
  mcp_reply(c->ss, &req, result);
  c->answered = 1;
}

/* The retry takes the call over: its id is answered when the call ends,
 * its progress token and capabilities are the ones now. */
static int call_take_over(mcp_parked *pk, const mcp_req *req, int answers) {
  mcp_call *c = call_of(pk);
  cJSON *id = cJSON_Duplicate(req->id, 1);
  if (!answers) { /* asked again: only the id */
    if (!id) return -1;
    cJSON_Delete(c->id);
    c->id = id;
    return 0;
  }
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
  c->answered = 0;
  return 0;
}

static const mcp_parked_kind call_kind = {call_open, call_reply,
                                          call_take_over};

void mcp_call_park_init(mcp_call *c, const mcp_req *req) {
  mcp_parked_init(&c->park, &call_kind, c->ss->s, req, "tools/call",
                  c->call_id);
  c->park.subject = c->tool;
  c->park.args = c->args;
}

static mcp_call *waiting_with(mcp_session *ss, const char *state) {
  for (mcp_call *c = ss->calls; c; c = c->next)
    if (mcp_parked_holds(&c->park, state)) return c;
  return NULL;
}

int mcp_call_resume(mcp_session *ss, const mcp_req *req) {
  const cJSON *state = cJSON_GetObjectItemCaseSensitive(req->params, "requestState");
  if (!req->stateless || !cJSON_IsString(state)) return 0;
  mcp_call *c = waiting_with(ss, state->valuestring);
  if (!c) return 0; /* an approval's, or its call ended: a call as any */
  const cJSON *name = cJSON_GetObjectItemCaseSensitive(req->params, "name");
  const cJSON *args = cJSON_GetObjectItemCaseSensitive(req->params, "arguments");
  if (!cJSON_IsString(name))
    mcp_reply_error(ss, req->id, JRPC_INVALID_PARAMS,
                    "tools/call: params.name must be a string", NULL);
  else if (args && !cJSON_IsObject(args) && !cJSON_IsNull(args))
    mcp_reply_error(ss, req->id, JRPC_INVALID_PARAMS,
                    "tools/call: params.arguments must be an object", NULL);
  else
    mcp_parked_resume(&c->park, ss, req, name->valuestring, args);
  return 1;
}
