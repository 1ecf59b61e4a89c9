/*
 * forward.c — one attempt of an upstream tool: the runtime starts it
 * (gw_tool_start, the tool's C start function), it goes to the upstream
 * as tools/call with a progressToken of ours, the upstream's progress
 * comes back as tg_exec_progress and goes on to the client as it comes
 * (tools.c), and its answer finishes the attempt: a
 * CallToolResult as the result (isError: a tool failure with that result
 * as partial output), a JSON-RPC error or a dead upstream as an UPSTREAM
 * error naming the server. Cancel or timeout (gw_tool_cancel) tells the
 * upstream notifications/cancelled and ends the attempt at once; a late
 * answer is dropped.
 *
 * An upstream of the 2026-07-28 era may answer input_required: it asks
 * the user (elicitation/create input requests), or the client's model
 * or roots (sampling/createMessage, roots/list), and wants the call sent
 * again with the answers and its requestState. The requests go to our
 * client (a session that declared the capability, or the call's own
 * input_required result), and the call goes again with the answers
 * (upstream_ask.c, which prompts/get and resources/read share).
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gateway.h"

struct gw_fwd {
  mcp_gateway *gw;
  tg_exec *ex;
  gw_tool *tool;
  double id;               /* the request at the upstream; 0: none open */
  double token;            /* the progressToken we gave it */
  cJSON *args;             /* kept for another round: a 2026-07-28 upstream
                              only (NULL: the first round's are the start
                              function's) */
  gw_inputs inputs;        /* the user's answers being gathered for the
                              next round (upstream_ask.c) */
  gw_fwd *next;
};

/* ---- the list of forwards ------------------------------------------------------- */

static void unlink_fwd(mcp_gateway *gw, gw_fwd *f) {
  gw_fwd **pp = &gw->fwds;
  while (*pp && *pp != f) pp = &(*pp)->next;
  if (*pp) *pp = f->next;
}

static void fwd_free(gw_fwd *f) {
  gw_inputs_drop(&f->inputs, "the tool call ended");
  cJSON_Delete(f->args);
  free(f);
}

/* Ends the forward: it leaves the list, and the attempt finishes. */
static void finish_error(gw_fwd *f, const char *code, const char *msg,
                         int retryable, cJSON *partial) {
  tg_exec *ex = f->ex;
  unlink_fwd(f->gw, f);
  fwd_free(f);
  tg_exec_finish_error(ex, partial, code, msg, retryable);
}

void gw_fwds_free(mcp_gateway *gw) {
  while (gw->fwds) {
    gw_fwd *f = gw->fwds;
    gw->fwds = f->next;
    fwd_free(f);
  }
}

/* ---- the upstream's answer -------------------------------------------------------- */

static const char *first_text(const cJSON *result) {
  const cJSON *c;
  cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(result, "content")) {
    const char *t = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "text"));
    if (t) return t;
  }
  return NULL;
}

static void upstream_error(gw_fwd *f, const char *server, const cJSON *error) {
  const char *m = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(error, "message"));
  char msg[1024];
  if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(error, "data"), "down"))) {
    snprintf(msg, sizeof msg, "upstream server '%s' went away during the call "
             "(%s); it is being restarted: try again shortly", server,
             m ? m : "?");
    return finish_error(f, "UPSTREAM_UNAVAILABLE", msg, 1, NULL);
  }
  snprintf(msg, sizeof msg, "upstream server '%s' answered tools/call with "
           "error %.0f: %.800s", server,
           cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(error, "code")),
           m ? m : "(no message)");
  finish_error(f, "UPSTREAM_ERROR", msg, 0, NULL);
}

static void send_round(gw_fwd *f, const cJSON *args);
static void ask_user(gw_fwd *f, const cJSON *result);

static void on_answer(mcp_upstream *u, const cJSON *result, const cJSON *error,
                      void *ud) {
  gw_fwd *f = ud;
  f->id = 0;
  if (error) return upstream_error(f, up_name(u), error);
  const char *rt = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(result, "resultType"));
  if (rt && !strcmp(rt, "input_required")) return ask_user(f, result);
  if (!cJSON_IsObject(result) || !cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(result, "content"))) {
    char msg[300];
    snprintf(msg, sizeof msg, "upstream server '%s' answered tools/call with "
             "something that is not a tool result%s%s", up_name(u),
             rt ? ": resultType " : "", rt ? rt : "");
    return finish_error(f, "UPSTREAM_ERROR", msg, 0, NULL);
  }
  cJSON *r = up_take_result(u); /* kept as it came, not copied */
  if (!r) r = cJSON_Duplicate(result, 1);
  if (!r) return finish_error(f, "NOMEM", "out of memory", 0, NULL);
  cJSON_DeleteItemFromObjectCaseSensitive(r, "resultType"); /* the era of its link, not ours */
  if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "isError"))) {
    const char *t = first_text(r);
    char msg[1024];
    snprintf(msg, sizeof msg, "%.1000s", t ? t : "the upstream tool failed");
    return finish_error(f, NULL, msg, 0, r);
  }
  tg_exec *ex = f->ex;
  unlink_fwd(f->gw, f);
  fwd_free(f);
  tg_exec_finish_ok(ex, r);
}

/* ---- input_required: the user answers, the call goes again ------------------------ */

/* The upstream's requests, to our client: a 2026-07-28 client through
 * its call's input_required result, else a session that declared the
 * capability (with one session, stdio, the call's own). */
static void ask_user(gw_fwd *f, const cJSON *result) {
  mcp_parked *park = mcp_call_park(f->gw->s, tg_exec_call_id(f->ex));
  char why[400];
  if (!f->args) {
    snprintf(why, sizeof why, "upstream server '%s' answered input_required "
             "though it speaks the 2025 era", up_name(f->tool->up));
    return finish_error(f, "UPSTREAM_ERROR", why, 0, NULL);
  }
  if (gw_inputs_ask(&f->inputs, result, park, NULL, why, sizeof why) < 0)
    finish_error(f, "UPSTREAM_ERROR", why, 0, NULL);
}

static void inputs_ready(gw_inputs *in) {
  gw_fwd *f = (gw_fwd *)((char *)in - offsetof(gw_fwd, inputs));
  send_round(f, f->args);
}

/* ---- sending --------------------------------------------------------------------- */

/* tools/call to the upstream: the first time, or again with the user's
 * answers and the upstream's requestState. */
static void send_round(gw_fwd *f, const cJSON *args) {
  gw_tool *t = f->tool;
  cJSON *p = cJSON_CreateObject();
  /* constant keys, and the tool's name referenced: the request is
   * printed and freed before this returns */
  cJSON_AddItemToObjectCS(p, "name", cJSON_CreateStringReference(t->orig));
  /* the call's own args, not a copy: the request is printed and freed
   * before this returns */
  cJSON_AddItemReferenceToObject(p, "arguments", (cJSON *)args);
  /* always a token: the upstream's progress reaches the chain's events */
  cJSON *meta = cJSON_CreateObject();
  if (meta && cJSON_AddItemToObjectCS(p, "_meta", meta))
    cJSON_AddItemToObjectCS(meta, "progressToken", cJSON_CreateNumber(f->token));
  else
    cJSON_Delete(meta);
  gw_inputs_take(&f->inputs, p);
  f->id = up_request(t->up, "tools/call", p, on_answer, f);
  if (f->id < 0) {
    char msg[300];
    f->id = 0;
    snprintf(msg, sizeof msg, "upstream server '%s' cannot take the call (it "
             "is not running); try again shortly", up_name(t->up));
    finish_error(f, "UPSTREAM_UNAVAILABLE", msg, 1, NULL);
  }
}

void gw_tool_start(tg_exec *ex, const cJSON *args, void *ud) {
  gw_tool *t = ud;
  mcp_gateway *gw = t->gw;
  char msg[300];
  if (gw->stopped || !up_ready(t->up)) {
    snprintf(msg, sizeof msg, "upstream server '%s' is not running (it is "
             "starting, restarting after a crash, or toolgate is stopping); "
             "try again shortly", up_name(t->up));
    return tg_exec_finish_error(ex, NULL, "UPSTREAM_UNAVAILABLE", msg, 1);
  }
  if (!t->offered) {
    snprintf(msg, sizeof msg, "upstream server '%s' no longer offers the tool "
             "'%s'", up_name(t->up), t->orig);
    return tg_exec_finish_error(ex, NULL, "UPSTREAM_ERROR", msg, 0);
  }
  gw_fwd *f = calloc(1, sizeof *f);
  if (!f || (up_stateless(t->up) && !(f->args = cJSON_Duplicate(args, 1)))) {
    free(f);
    return tg_exec_finish_error(ex, NULL, "NOMEM", "out of memory", 0);
  }
  f->gw = gw;
  f->ex = ex;
  f->tool = t;
  f->token = ++gw->next_token;
  f->inputs = (gw_inputs){gw, t->up, "tools/call", inputs_ready, 0, NULL, NULL,
                          NULL};
  f->next = gw->fwds;
  gw->fwds = f;
  send_round(f, args);
}

static gw_fwd *fwd_of(mcp_gateway *gw, const tg_exec *ex) {
  for (gw_fwd *f = gw->fwds; f; f = f->next)
    if (f->ex == ex) return f;
  return NULL;
}

/* Cancelled or timed out: the upstream is told, its answer will be
 * dropped, the user's open questions are withdrawn, and the attempt ends
 * now (the chain makes it CANCELLED or TIMEOUT). */
void gw_tool_cancel(tg_exec *ex, void *ud) {
  gw_tool *t = ud;
  gw_fwd *f = fwd_of(t->gw, ex);
  if (!f) return;
  if (f->id > 0) {
    up_forget(t->up, f->id);
    cJSON *p = cJSON_CreateObject();
    cJSON_AddNumberToObject(p, "requestId", f->id);
    cJSON_AddStringToObject(p, "reason", "cancelled by toolgate");
    up_notify(t->up, "notifications/cancelled", p);
    mcp_logf(t->gw->s->log, MCP_LOG_INFO, "upstream %s: cancelled request "
             "%.0f (%s)", up_name(t->up), f->id, t->orig);
  }
  finish_error(f, NULL, "cancelled", 0, NULL);
}

/* The upstream's progress, for a call it has in hand (a token of another
 * upstream's call is not its to report on): to the chain (its progress
 * events), and to the client at once (tools.c), not at the runtime's
 * next heartbeat — a call shorter than that would show none. */
void gw_progress(mcp_gateway *gw, mcp_upstream *u, const cJSON *p) {
  const cJSON *token = cJSON_GetObjectItemCaseSensitive(p, "progressToken");
  const cJSON *total = cJSON_GetObjectItemCaseSensitive(p, "total");
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(p, "progress");
  if (!cJSON_IsNumber(token) || !cJSON_IsNumber(v)) return;
  for (gw_fwd *f = gw->fwds; f; f = f->next) {
    if (f->token != token->valuedouble || f->tool->up != u) continue;
    f->tool->reports_progress = 1;
    tg_exec_progress(f->ex, v->valuedouble,
                     cJSON_IsNumber(total) ? total->valuedouble : -1,
                     cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(p, "message")));
    mcp_call_own_progress(gw->s, tg_exec_call_id(f->ex), p);
    return;
  }
}

void gw_fwds_log(mcp_gateway *gw, mcp_upstream *u, int level,
                 const char *logger, const cJSON *data) {
  for (gw_fwd *f = gw->fwds; f; f = f->next)
    if (f->tool->up == u)
      mcp_call_log(gw->s, tg_exec_call_id(f->ex), (mcp_log_level)level,
                   gw_log_params(level, logger, data));
}

size_t gw_calls_at(const mcp_gateway *gw, const mcp_upstream *u,
                   const char **one) {
  size_t n = 0;
  for (const gw_fwd *f = gw->fwds; f; f = f->next)
    if (f->tool->up == u) {
      n++;
      *one = tg_exec_call_id(f->ex);
    }
  return n;
}
