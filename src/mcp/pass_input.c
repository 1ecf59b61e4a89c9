/*
 * pass_input.c — a prompts/get or resources/read of a 2026-07-28 client,
 * passed to the upstream that has the prompt or the resource (gateway.c),
 * when that upstream asks its client for something while it answers
 * (elicitation/create, sampling/createMessage, roots/list). The client
 * of that era can be asked only through its request's input_required
 * result, so the request parks the way a tools/call does (parked.c: the
 * keys, several requests at once, the requestState, partial retries):
 * it is answered input_required, the client sends the same prompts/get
 * (resources/read) again with inputResponses and the requestState, the
 * answers go to the upstream, and the retry is answered with the
 * upstream's result.
 *
 * This is what is the passed request's own in it: the retry must be the
 * same method as the request it answers, from the same client, naming the
 * same prompt and arguments (the same URI) — the requestState binds them,
 * so a tools/call's state is refused here and a prompt's there. A retry
 * whose state names nothing waiting (the upstream answered meanwhile) is
 * redeemed and then handled as a fresh request. The retry is awaited as
 * long as its requestState is good; then the upstream's requests fail.
 *
 * A 2025-era client's request does not park: the upstream's requests go
 * to it as requests of its session (gateway.c).
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gateway.h"

static gw_pass *pass_of(const mcp_parked *pk) {
  return (gw_pass *)((char *)pk - offsetof(gw_pass, park));
}

static int pass_open(const mcp_parked *pk) {
  const gw_pass *p = pass_of(pk);
  return p->ss && !p->gw->stopped;
}

static void pass_reply(mcp_parked *pk, cJSON *result) {
  gw_pass *p = pass_of(pk);
  mcp_req req = {p->id, pk->method, NULL, 1, NULL};
  mcp_reply(p->ss, &req, result);
  p->answered = 1;
}

/* The retry's id is the one answered with the upstream's result. */
static int pass_take_over(mcp_parked *pk, const mcp_req *req, int answers) {
  gw_pass *p = pass_of(pk);
  cJSON *id = cJSON_Duplicate(req->id, 1);
  if (!id) return -1;
  cJSON_Delete(p->id);
  p->id = id;
  if (answers) p->answered = 0;
  return 0;
}

static const mcp_parked_kind pass_kind = {pass_open, pass_reply,
                                          pass_take_over};

const char *gw_pass_asking_method(const char *method) {
  if (!strcmp(method, "prompts/get")) return "prompts/get";
  if (!strcmp(method, "resources/read")) return "resources/read";
  return NULL;
}

/* What a request of method binds: the prompt's name and arguments, or
 * the URI (and no arguments). */
static const char *subject_of(const char *method, const cJSON *params,
                              const cJSON **args) {
  int prompt = !strcmp(method, "prompts/get");
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(params, "arguments");
  *args = prompt && cJSON_IsObject(a) ? a : NULL;
  return cJSON_GetStringValue(
      cJSON_GetObjectItemCaseSensitive(params, prompt ? "name" : "uri"));
}

int gw_pass_park_init(gw_pass *p, const mcp_req *req, const char *method) {
  const char *m = gw_pass_asking_method(method);
  if (!req->stateless || !m) return 0;
  const cJSON *args;
  const char *subject = subject_of(m, req->params, &args);
  if (!subject) return 0; /* not passed on (gateway.c checks first) */
  p->subject = strdup(subject);
  p->args = args ? cJSON_Duplicate(args, 1) : cJSON_CreateObject();
  if (!p->subject || !p->args) return -1;
  mcp_parked_init(&p->park, &pass_kind, p->gw->s, req, m, m);
  p->park.subject = p->subject;
  p->park.args = p->args;
  p->park.wait_ms = p->gw->s->opt.state_ttl_ms;
  return 0;
}

int gw_pass_resume(mcp_session *ss, const mcp_req *req, const char *subject) {
  mcp_gateway *gw = ss->s->gw;
  const cJSON *state = cJSON_GetObjectItemCaseSensitive(req->params, "requestState");
  const char *m = gw_pass_asking_method(req->method);
  if (!req->stateless || !state || !m || !subject) return 0;
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(req->params, "arguments");
  if (!strcmp(m, "prompts/get") && a && !cJSON_IsObject(a) && !cJSON_IsNull(a)) {
    mcp_reply_error(ss, req->id, JRPC_INVALID_PARAMS,
                    "prompts/get: params.arguments must be an object", NULL);
    return 1;
  }
  const cJSON *args;
  subject_of(m, req->params, &args);
  if (cJSON_IsString(state))
    for (gw_pass *p = gw->passes; p; p = p->next)
      if (p->ss == ss && p->park.kind && !strcmp(p->park.method, m) &&
          mcp_parked_holds(&p->park, state->valuestring)) {
        mcp_parked_resume(&p->park, ss, req, subject, args);
        return 1;
      }
  /* nothing waits on it: a state of ours for this very request (it has
   * ended meanwhile) makes it a request as any; another is refused */
  if (mcp_parked_redeem(ss->s, ss, req, m, subject, args) < 0) return 1;
  mcp_logf(ss->s->log, MCP_LOG_INFO, "%s %.200s: its requestState names no "
           "request waiting (it has ended): passed on anew", m, subject);
  return 0;
}
