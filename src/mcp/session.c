/*
 * session.c — one client of the MCP server: the state of its connection
 * (the version it negotiated, its capabilities, its calls in flight, our
 * requests to it, its log level) and the answers, notifications and
 * requests that go to it, through its transport (transport.h). What the
 * messages mean is server.c's; how they travel is the transport's.
 *
 * A client that does not read cannot make what we send it pile up
 * without bound: while its transport is congested, list_changed notices
 * are owed (sent once it reads again), each call's latest progress is
 * held (tools.c) and sent then, and log messages are dropped (counted).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mcp.h"

/* ---- what the transport tells --------------------------------------------- */

static void on_message(void *ud, cJSON *msg) {
  mcp_server_handle(ud, msg);
}

static void on_bad(void *ud, int code, const cJSON *id, const char *why) {
  mcp_session *ss = ud;
  mcp_logf(ss->s->log, MCP_LOG_WARNING, "bad message from the client: %s", why);
  mcp_reply_error(ss, id, code, code == JRPC_PARSE_ERROR ? "Parse error" : why,
                  code == JRPC_PARSE_ERROR ? cJSON_CreateString(why) : NULL);
}

/* The client has gone. On stdio that is the end of serving (the answers
 * of calls still running go out while the server stops: the output may
 * well be open); a client of a transport of many goes alone, now. */
static void on_closed(void *ud, int status) {
  mcp_session *ss = ud;
  mcp_server *s = ss->s;
  ss->ended = 1;
  if (!ss->t->ends_server) {
    mcp_logf(s->log, MCP_LOG_INFO, "client %s disconnected%s%s",
             ss->client_name[0] ? ss->client_name : "(unnamed)",
             status ? ": " : "", status ? uv_strerror(status) : "");
    mcp_server_disconnect(s, ss);
    return;
  }
  if (status == 0)
    mcp_logf(s->log, MCP_LOG_INFO, "the client closed its end: stopping");
  else
    mcp_logf(s->log, MCP_LOG_INFO, "the client's stream failed (%s): stopping",
             uv_strerror(status));
  if (s->opt.on_end) s->opt.on_end(s, s->opt.ud);
}

/* The notices that mean "look again": while the client does not read,
 * one of each is owed, not one per change. */
static const char *const owed_notices[] = {
    "notifications/tools/list_changed", "notifications/prompts/list_changed",
    "notifications/resources/list_changed"};
#define NOWED (sizeof owed_notices / sizeof *owed_notices)

static void on_drained(void *ud) {
  mcp_session *ss = ud;
  if (ss->dropped)
    mcp_logf(ss->s->log, MCP_LOG_WARNING, "the client reads again: %llu "
             "log notifications were dropped",
             (unsigned long long)ss->dropped);
  ss->dropped = 0;
  mcp_calls_flush_progress(ss);
  unsigned owed = ss->owed;
  ss->owed = 0;
  for (size_t i = 0; i < NOWED; i++) {
    if (!(owed & (1u << i))) continue;
    if (ss->initialized) mcp_notify(ss, NULL, owed_notices[i], NULL);
    mcp_listens_notify(ss, (unsigned)i);
  }
}

static const mcp_transport_events events = {on_message, on_bad, on_closed,
                                            on_drained};

/* ---- life ------------------------------------------------------------------- */

mcp_session *mcp_session_new(mcp_server *s, mcp_transport *t) {
  mcp_session *ss = calloc(1, sizeof *ss);
  if (!ss) return NULL;
  ss->s = s;
  ss->t = t;
  ss->log_level = MCP_LOG_INFO;
  t->ev = &events;
  t->session = ss;
  return ss;
}

void mcp_session_free(mcp_session *ss) {
  if (!ss) return;
  mcp_calls_free(ss);
  mcp_listens_free(ss);
  while (ss->pending) {
    mcp_pending *p = ss->pending;
    ss->pending = p->next;
    cJSON_Delete(p->related);
    free(p);
  }
  if (ss->t) ss->t->ops->close(ss->t);
  cJSON_Delete(ss->held);
  cJSON_Delete(ss->caps);
  cJSON_Delete(ss->meta_session);
  cJSON_Delete(ss->meta_stateless);
  free(ss);
}

/* ---- answering ------------------------------------------------------------- */

static int send_owned(mcp_session *ss, cJSON *msg, const cJSON *related) {
  if (!msg) return UV_ENOMEM;
  int rc = ss->t->ops->send(ss->t, msg, related);
  cJSON_Delete(msg);
  return rc;
}

/* A 2026-07-28 result names its server in _meta: toolgate, also on a
 * result an upstream made (whose own name it replaces). */
static void name_server(cJSON *result) {
  cJSON *meta = cJSON_GetObjectItemCaseSensitive(result, "_meta");
  if (!cJSON_IsObject(meta)) {
    cJSON_DeleteItemFromObjectCaseSensitive(result, "_meta");
    meta = cJSON_AddObjectToObject(result, "_meta");
  }
  if (!meta) return;
  cJSON_DeleteItemFromObjectCaseSensitive(meta, MCP_META_SERVER);
  cJSON_AddItemToObject(meta, MCP_META_SERVER, mcp_server_info());
}

/* After the input ended too: a request read before it is still answered
 * (the output may well be open). */
void mcp_reply(mcp_session *ss, const mcp_req *req, cJSON *result) {
  if (!result) result = cJSON_CreateObject();
  if (req->stateless && result) {
    if (!cJSON_GetObjectItemCaseSensitive(result, "resultType"))
      cJSON_AddStringToObject(result, "resultType", "complete");
    name_server(result);
  }
  send_owned(ss, jrpc_result(req->id, result), req->id);
}

/* ttlMs is a whole number of milliseconds, 0 up to 2^53; an upstream's
 * anything else is replaced, not passed to a client that would refuse the
 * whole result. */
void mcp_cacheable(const mcp_req *req, cJSON *result, uint64_t ttl_ms,
                   const char *scope) {
  if (!req->stateless || !result) return;
  const cJSON *t = cJSON_GetObjectItemCaseSensitive(result, "ttlMs");
  const char *sc =
      cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(result, "cacheScope"));
  int ttl_ok = cJSON_IsNumber(t) && t->valuedouble >= 0 &&
               t->valuedouble <= 9007199254740992.0 &&
               t->valuedouble == (double)(int64_t)t->valuedouble;
  int scope_ok = sc && (!strcmp(sc, "public") || !strcmp(sc, "private"));
  if (ttl_ok && scope_ok) return;
  cJSON_DeleteItemFromObjectCaseSensitive(result, "ttlMs");
  cJSON_DeleteItemFromObjectCaseSensitive(result, "cacheScope");
  cJSON_AddNumberToObject(result, "ttlMs", (double)ttl_ms);
  cJSON_AddStringToObject(result, "cacheScope", scope);
}

void mcp_reply_error(mcp_session *ss, const cJSON *id, int code,
                     const char *message, cJSON *data) {
  send_owned(ss, jrpc_error(id, code, message, data), id);
}

/* Log messages (and progress sent without a call: none now, tools.c holds
 * each call's latest) say how things stand now: a client that reads again
 * is better served by the next one than by a backlog. */
static int droppable(const char *method) {
  return !strcmp(method, "notifications/progress") ||
         !strcmp(method, "notifications/message");
}

void mcp_notify(mcp_session *ss, const cJSON *related, const char *method,
                cJSON *params) {
  if (ss->ended) {
    cJSON_Delete(params);
    return;
  }
  if (ss->t->ops->congested(ss->t)) {
    for (size_t i = 0; i < NOWED; i++)
      if (!strcmp(method, owed_notices[i])) {
        ss->owed |= 1u << i;
        cJSON_Delete(params);
        return;
      }
    if (droppable(method)) {
      if (ss->dropped++ == 0)
        mcp_logf(ss->s->log, MCP_LOG_WARNING, "the client is not reading what "
                 "we send: dropping log notifications (and holding each "
                 "call's latest progress) until it does");
      cJSON_Delete(params);
      return;
    }
  }
  send_owned(ss, jrpc_notification(method, params), related);
}

/* ---- server-to-client requests ------------------------------------------- */

mcp_pending *mcp_ask_client(mcp_session *ss, const cJSON *related,
                            const char *method, cJSON *params,
                            mcp_answer_fn fn, void *ud) {
  mcp_pending *p = calloc(1, sizeof *p);
  cJSON *msg = p ? jrpc_request(++ss->next_request, method, params) : NULL;
  if (p && related) p->related = cJSON_Duplicate(related, 1);
  if (!p || !msg || ss->ended || (related && !p->related)) {
    if (!p) cJSON_Delete(params);
    if (p) cJSON_Delete(p->related);
    free(p);
    cJSON_Delete(msg);
    return NULL;
  }
  p->ss = ss;
  p->id = ss->next_request;
  p->fn = fn;
  p->ud = ud;
  p->next = ss->pending;
  ss->pending = p;
  if (send_owned(ss, msg, related) < 0) {
    p->fn = NULL; /* the stream is gone; the entry goes with the session */
    return NULL;
  }
  return p;
}

void mcp_session_fail_pending(mcp_session *ss, const char *why) {
  for (mcp_pending *p = ss->pending; p; p = p->next) {
    mcp_answer_fn fn = p->fn;
    if (!fn) continue;
    p->fn = NULL;
    cJSON *e = cJSON_CreateObject();
    cJSON_AddNumberToObject(e, "code", JRPC_INTERNAL_ERROR);
    cJSON_AddStringToObject(e, "message", why);
    fn(ss, NULL, e, p->ud);
    cJSON_Delete(e);
  }
}

void mcp_withdraw(mcp_pending *p, const char *reason) {
  if (!p || !p->fn) return;
  p->fn = NULL;
  cJSON *params = cJSON_CreateObject();
  cJSON_AddNumberToObject(params, "requestId", p->id);
  if (reason) cJSON_AddStringToObject(params, "reason", reason);
  mcp_notify(p->ss, p->related, "notifications/cancelled", params);
}

void mcp_session_response(mcp_session *ss, const jrpc_msg *m) {
  mcp_pending **pp = &ss->pending;
  while (*pp && !(cJSON_IsNumber(m->id) && (*pp)->id == m->id->valuedouble))
    pp = &(*pp)->next;
  mcp_pending *p = *pp;
  if (!p) {
    char *id = tg_json_print(m->id, 0);
    mcp_logf(ss->s->log, MCP_LOG_WARNING, "the client answered a request we "
             "did not make (id %s): ignored", id ? id : "?");
    free(id);
    return;
  }
  *pp = p->next;
  if (p->fn) p->fn(ss, m->result, m->error, p->ud);
  cJSON_Delete(p->related);
  free(p);
}
