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
 * client (a session that declared the capability), and the call goes
 * again with the answers — at most MAX_ROUNDS times.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gateway.h"

#define MAX_ROUNDS 8

struct gw_fwd {
  mcp_gateway *gw;
  tg_exec *ex;
  gw_tool *tool;
  double id;               /* the request at the upstream; 0: none open */
  double token;            /* the progressToken we gave it */
  cJSON *args;             /* kept for another round: a 2026-07-28 upstream
                              only (NULL: the first round's are the start
                              function's) */
  int rounds;
  /* the user's answers being gathered for the next round */
  char *state;             /* the upstream's requestState */
  cJSON *answers;          /* inputResponses so far */
  struct gw_ask *asks;     /* questions still open at the client */
  gw_fwd *next;
};

/* One question of an input_required, open at the client: a request of a
 * 2025-era client's session, or, for a 2026-07-28 client, in its call's
 * own input_required result (the call parks: parked.c). */
typedef struct gw_ask {
  gw_fwd *f;
  char *key;               /* its key in the upstream's inputRequests */
  mcp_pending *pending;    /* asked in a session, or */
  mcp_parked *park;        /* asked through the call's result */
  struct gw_ask *next;
} gw_ask;

/* ---- the list of forwards ------------------------------------------------------- */

static void unlink_fwd(mcp_gateway *gw, gw_fwd *f) {
  gw_fwd **pp = &gw->fwds;
  while (*pp && *pp != f) pp = &(*pp)->next;
  if (*pp) *pp = f->next;
}

/* Withdraws the questions still open at the client. */
static void drop_asks(gw_fwd *f, const char *why) {
  while (f->asks) {
    gw_ask *a = f->asks;
    f->asks = a->next;
    if (a->park) mcp_parked_withdraw(a->park, a);
    else mcp_withdraw(a->pending, why);
    free(a->key);
    free(a);
  }
}

static void fwd_free(gw_fwd *f) {
  drop_asks(f, "the tool call ended");
  cJSON_Delete(f->args);
  cJSON_Delete(f->answers);
  free(f->state);
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

static void on_user_answer(mcp_session *ss, const cJSON *result,
                           const cJSON *error, void *ud) {
  (void)ss;
  gw_ask *a = ud;
  gw_fwd *f = a->f;
  gw_ask **pp = &f->asks;
  while (*pp && *pp != a) pp = &(*pp)->next;
  if (*pp) *pp = a->next;
  if (result) cJSON_AddItemToObject(f->answers, a->key, cJSON_Duplicate(result, 1));
  else cJSON_AddItemToObject(f->answers, a->key,
                             cJSON_Parse("{\"action\":\"cancel\"}"));
  free(a->key);
  free(a);
  if (!f->asks) send_round(f, f->args);
}

/* The same, for a question put through a 2026-07-28 client's call. */
static void on_parked_answer(const cJSON *result, const cJSON *error,
                             void *ud) {
  on_user_answer(NULL, result, error, ud);
}

/* The upstream's input requests, to our client: questions to the user
 * (elicitation/create, the message naming the server), sampling and
 * roots as they came, each to a client that declared the capability —
 * a 2026-07-28 client through its call's input_required result (keyed
 * as parked.c keys, the answers mapped back to the upstream's keys here),
 * which its retry answers. 0, or -1 with why. */
static int pose(gw_fwd *f, const cJSON *requests, char *why, size_t len) {
  const char *server = up_name(f->tool->up);
  const char *call_id = tg_exec_call_id(f->ex);
  mcp_parked *park = mcp_call_is_stateless(f->gw->s, call_id)
                         ? mcp_call_park(f->gw->s, call_id) : NULL;
  const cJSON *q;
  cJSON_ArrayForEach(q, requests) {
    const char *m = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(q, "method"));
    const cJSON *params = cJSON_GetObjectItemCaseSensitive(q, "params");
    if (!m || !cJSON_IsObject(params) ||
        (strcmp(m, "elicitation/create") && strcmp(m, "sampling/createMessage") &&
         strcmp(m, "roots/list"))) {
      snprintf(why, len, "upstream server '%s' asks for input toolgate cannot "
               "relay (%.60s): elicitation/create, sampling/createMessage and "
               "roots/list are", server, m ? m : "?");
      return -1;
    }
    const char *cap = gw_capability_for(m);
    mcp_session *asker = park ? NULL : mcp_server_asker_with(f->gw->s, cap);
    if (!park && !asker) {
      snprintf(why, len, "upstream server '%s' asks for input (%s), and this "
               "MCP client cannot give it (no %s capability)", server, m, cap);
      return -1;
    }
    gw_ask *a = calloc(1, sizeof *a);
    cJSON *p = strcmp(cap, "elicitation") ? cJSON_Duplicate(params, 1)
                                          : gw_question(f->tool->up, params);
    if (!a || !p || !(a->key = strdup(q->string))) {
      if (a) free(a->key);
      free(a);
      cJSON_Delete(p);
      snprintf(why, len, "out of memory");
      return -1;
    }
    a->f = f;
    if (park) {
      char inner[200] = "out of memory";
      cJSON *key = cJSON_CreateString(q->string); /* p is taken, either way */
      int rc = key ? mcp_parked_ask(park, key, m, p, on_parked_answer, a,
                                    inner, sizeof inner)
                   : -1;
      if (!key) cJSON_Delete(p);
      cJSON_Delete(key);
      if (rc < 0) {
        snprintf(why, len, "upstream server '%s' asks for input (%s), and "
                 "toolgate cannot put it to the client: %.150s", server, m,
                 inner);
        free(a->key);
        free(a);
        return -1;
      }
      a->park = park;
      a->next = f->asks;
      f->asks = a;
      continue;
    }
    a->next = f->asks;
    f->asks = a;
    a->pending = mcp_ask_client(asker, NULL, m, p, on_user_answer, a);
    if (!a->pending) {
      snprintf(why, len, "the client's stream is closed");
      return -1;
    }
  }
  return 0;
}

static void ask_user(gw_fwd *f, const cJSON *result) {
  const char *server = up_name(f->tool->up);
  const cJSON *requests = cJSON_GetObjectItemCaseSensitive(result, "inputRequests");
  const char *state = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(result, "requestState"));
  /* the client of the call's session would be the one to ask: with one
   * session (stdio), it is the one that can be asked (pose) */
  char why[300];
  if (!cJSON_IsObject(requests) || !requests->child || !f->args) {
    snprintf(why, sizeof why, "upstream server '%s' answered input_required "
             "%s", server, f->args ? "without inputRequests"
                                   : "though it speaks the 2025 era");
    return finish_error(f, "UPSTREAM_ERROR", why, 0, NULL);
  }
  if (++f->rounds > MAX_ROUNDS) {
    snprintf(why, sizeof why, "upstream server '%s' asks the user for input, "
             "and has done so too many times for one call", server);
    return finish_error(f, "UPSTREAM_ERROR", why, 0, NULL);
  }
  free(f->state);
  cJSON_Delete(f->answers);
  f->state = state ? strdup(state) : NULL;
  f->answers = cJSON_CreateObject();
  if (pose(f, requests, why, sizeof why) < 0)
    finish_error(f, "UPSTREAM_ERROR", why, 0, NULL);
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
  if (f->answers) {
    cJSON_AddItemToObject(p, "inputResponses", f->answers);
    f->answers = NULL;
    if (f->state) cJSON_AddStringToObject(p, "requestState", f->state);
  }
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
