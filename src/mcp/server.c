/*
 * server.c — the MCP server object: the client's stream, the method
 * table, the handshake of each era, server-to-client requests, and the
 * log notifications that follow policy reloads (mcp.h says what the other
 * files do).
 *
 * Every message is checked before anything acts on it: a line that is not
 * a JSON-RPC message gets a JSON-RPC error and the server reads on; a
 * request names its era (a session from initialize, or the 2026-07-28
 * version in its _meta) or is refused with the versions we speak.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mcp.h"

#define MAX_HELD 1024 /* requests held while upstream servers start */

static const char *const session_versions[] = {"2025-11-25", "2025-06-18"};
#define NSESSION_VERSIONS (sizeof session_versions / sizeof *session_versions)

/* ---- answering ----------------------------------------------------------- */

void mcp_reply(mcp_server *s, const mcp_req *req, cJSON *result) {
  if (!result) result = cJSON_CreateObject();
  if (req->stateless && result && !cJSON_HasObjectItem(result, "resultType"))
    cJSON_AddStringToObject(result, "resultType", "complete");
  /* after the input ended too: a request read before it is still answered
   * (the output may well be open) */
  if (!s->conn) {
    cJSON_Delete(result);
    return;
  }
  jrpc_send_result(s->conn, req->id, result);
}

void mcp_reply_error(mcp_server *s, const cJSON *id, int code,
                     const char *message, cJSON *data) {
  if (!s->conn) {
    cJSON_Delete(data);
    return;
  }
  jrpc_send_error(s->conn, id, code, message, data);
}

/* The notices that mean "look again": while the client does not read,
 * one of each is owed, not one per change. */
static const char *const owed_notices[] = {
    "notifications/tools/list_changed", "notifications/prompts/list_changed",
    "notifications/resources/list_changed"};
#define NOWED (sizeof owed_notices / sizeof *owed_notices)

/* Progress and log messages say how things stand now: a client that
 * reads again is better served by the next one than by a backlog. */
static int droppable(const char *method) {
  return !strcmp(method, "notifications/progress") ||
         !strcmp(method, "notifications/message");
}

/* A client that does not read cannot make the notifications that
 * upstream servers and tools cause pile up without bound: past the
 * backlog mark, list_changed notices are owed (sent once it reads again)
 * and progress and log messages dropped (counted). */
void mcp_notify(mcp_server *s, const char *method, cJSON *params) {
  if (!s->conn || s->ended) {
    cJSON_Delete(params);
    return;
  }
  if (jrpc_congested(s->conn)) {
    for (size_t i = 0; i < NOWED; i++)
      if (!strcmp(method, owed_notices[i])) {
        s->owed |= 1u << i;
        cJSON_Delete(params);
        return;
      }
    if (droppable(method)) {
      if (s->dropped++ == 0)
        mcp_logf(s->log, MCP_LOG_WARNING, "the client is not reading what "
                 "we send: dropping progress and log notifications until it "
                 "does");
      cJSON_Delete(params);
      return;
    }
  }
  jrpc_send_notification(s->conn, method, params);
}

static void on_drained(jrpc_conn *c, void *ud) {
  (void)c;
  mcp_server *s = ud;
  if (s->dropped)
    mcp_logf(s->log, MCP_LOG_WARNING, "the client reads again: %llu "
             "progress and log notifications were dropped",
             (unsigned long long)s->dropped);
  s->dropped = 0;
  unsigned owed = s->owed;
  s->owed = 0;
  for (size_t i = 0; i < NOWED; i++)
    if (owed & (1u << i)) mcp_notify(s, owed_notices[i], NULL);
}

static void errorf(mcp_server *s, const cJSON *id, int code, const char *fmt,
                   ...) __attribute__((format(printf, 4, 5)));
static void errorf(mcp_server *s, const cJSON *id, int code, const char *fmt,
                   ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  mcp_reply_error(s, id, code, msg, NULL);
}

void mcp_log_client(mcp_server *s, mcp_log_level level, const char *fmt, ...) {
  char msg[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  mcp_logf(s->log, level, "%s", msg);
  /* only a session has a log level to honour; stateless requests get none */
  if (!s->initialized || (int)level < s->log_level) return;
  cJSON *p = cJSON_CreateObject();
  cJSON_AddStringToObject(p, "level", mcp_log_level_name(level));
  cJSON_AddStringToObject(p, "logger", "toolgate");
  cJSON_AddStringToObject(p, "data", msg);
  mcp_notify(s, "notifications/message", p);
}

/* ---- server-to-client requests ------------------------------------------- */

mcp_pending *mcp_ask_client(mcp_server *s, const char *method, cJSON *params,
                            mcp_answer_fn fn, void *ud) {
  mcp_pending *p = calloc(1, sizeof *p);
  cJSON *msg = p ? jrpc_request(++s->next_request, method, params) : NULL;
  if (!p || !msg || !s->conn || s->ended) {
    if (!p) cJSON_Delete(params);
    free(p);
    cJSON_Delete(msg);
    return NULL;
  }
  p->id = s->next_request;
  p->fn = fn;
  p->ud = ud;
  p->next = s->pending;
  s->pending = p;
  int rc = jrpc_send(s->conn, msg);
  cJSON_Delete(msg);
  if (rc < 0) {
    p->fn = NULL; /* the stream is gone; the entry goes with the server */
    return NULL;
  }
  return p;
}

void mcp_withdraw(mcp_server *s, mcp_pending *p, const char *reason) {
  if (!p || !p->fn) return;
  p->fn = NULL;
  cJSON *params = cJSON_CreateObject();
  cJSON_AddNumberToObject(params, "requestId", p->id);
  if (reason) cJSON_AddStringToObject(params, "reason", reason);
  mcp_notify(s, "notifications/cancelled", params);
}

static void on_response(mcp_server *s, const jrpc_msg *m) {
  mcp_pending **pp = &s->pending;
  while (*pp && !(cJSON_IsNumber(m->id) && (*pp)->id == m->id->valuedouble))
    pp = &(*pp)->next;
  mcp_pending *p = *pp;
  if (!p) {
    char *id = tg_json_print(m->id, 0);
    mcp_logf(s->log, MCP_LOG_WARNING, "the client answered a request we did "
             "not make (id %s): ignored", id ? id : "?");
    free(id);
    return;
  }
  *pp = p->next;
  if (p->fn) p->fn(s, m->result, m->error, p->ud);
  free(p);
}

int mcp_can_elicit(const mcp_req *req) {
  const cJSON *e = cJSON_GetObjectItemCaseSensitive(req->caps, "elicitation");
  if (!cJSON_IsObject(e)) return 0;
  /* 2025-11-25: {} or {form: {}} offer forms; {url: {}} alone does not */
  return !cJSON_GetArraySize(e) || cJSON_IsObject(cJSON_GetObjectItem(e, "form"));
}

/* ---- the handshake --------------------------------------------------------- */

static cJSON *server_info(void) {
  cJSON *i = cJSON_CreateObject();
  cJSON_AddStringToObject(i, "name", "toolgate");
  cJSON_AddStringToObject(i, "title", "toolgate");
  cJSON_AddStringToObject(i, "version", TG_VERSION);
  return i;
}

static cJSON *capabilities(mcp_server *s) {
  cJSON *c = cJSON_CreateObject();
  cJSON *tools = cJSON_AddObjectToObject(c, "tools");
  cJSON_AddTrueToObject(tools, "listChanged");
  cJSON_AddObjectToObject(c, "logging");
  mcp_gateway_capabilities(s, c);
  return c;
}

static const char instructions[] =
    "Every tool call passes toolgate's policies. A call that was denied or "
    "rejected did not run: read the text of its result before going on.";

static const char *negotiate(const char *asked) {
  for (size_t i = 0; i < NSESSION_VERSIONS; i++)
    if (strcmp(asked, session_versions[i]) == 0) return session_versions[i];
  return MCP_LATEST_SESSION_VERSION;
}

static void remember_client(mcp_server *s, const cJSON *params) {
  const cJSON *caps = cJSON_GetObjectItemCaseSensitive(params, "capabilities");
  const cJSON *info = cJSON_GetObjectItemCaseSensitive(params, "clientInfo");
  const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(info, "name"));
  cJSON_Delete(s->session_caps);
  s->session_caps = cJSON_IsObject(caps) ? cJSON_Duplicate(caps, 1)
                                         : cJSON_CreateObject();
  snprintf(s->client_name, sizeof s->client_name, "%s", name ? name : "");
}

static void on_initialize(mcp_server *s, const mcp_req *req) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(req->params, "protocolVersion");
  const cJSON *caps = cJSON_GetObjectItemCaseSensitive(req->params, "capabilities");
  if (!cJSON_IsString(v))
    return errorf(s, req->id, JRPC_INVALID_PARAMS,
                  "initialize: params.protocolVersion must be a string");
  if (caps && !cJSON_IsObject(caps))
    return errorf(s, req->id, JRPC_INVALID_PARAMS,
                  "initialize: params.capabilities must be an object");
  if (s->initialized)
    return errorf(s, req->id, JRPC_INVALID_REQUEST,
                  "initialize: this session is already initialized (%s)",
                  s->version);
  remember_client(s, req->params);
  snprintf(s->version, sizeof s->version, "%s", negotiate(v->valuestring));
  s->initialized = 1;
  cJSON *r = cJSON_CreateObject();
  cJSON_AddStringToObject(r, "protocolVersion", s->version);
  cJSON_AddItemToObject(r, "capabilities", capabilities(s));
  cJSON_AddItemToObject(r, "serverInfo", server_info());
  cJSON_AddStringToObject(r, "instructions", instructions);
  mcp_logf(s->log, MCP_LOG_INFO, "client %s asked for %s, speaking %s",
           s->client_name[0] ? s->client_name : "(unnamed)", v->valuestring,
           s->version);
  mcp_reply(s, req, r);
}

static cJSON *supported_versions(void) {
  cJSON *a = cJSON_CreateArray();
  cJSON_AddItemToArray(a, cJSON_CreateString(MCP_STATELESS_VERSION));
  for (size_t i = 0; i < NSESSION_VERSIONS; i++)
    cJSON_AddItemToArray(a, cJSON_CreateString(session_versions[i]));
  return a;
}

/* server/discover (2026-07-28): what initialize tells, without a session. */
static void on_discover(mcp_server *s, const mcp_req *req) {
  cJSON *r = cJSON_CreateObject();
  cJSON_AddItemToObject(r, "supportedVersions", supported_versions());
  cJSON_AddItemToObject(r, "capabilities", capabilities(s));
  cJSON_AddItemToObject(r, "serverInfo", server_info());
  cJSON_AddStringToObject(r, "instructions", instructions);
  mcp_reply(s, req, r);
}

static void on_ping(mcp_server *s, const mcp_req *req) {
  mcp_reply(s, req, cJSON_CreateObject());
}

static void on_set_level(mcp_server *s, const mcp_req *req) {
  const char *level =
      cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(req->params, "level"));
  int l = mcp_log_level_of(level);
  if (l < 0)
    return errorf(s, req->id, JRPC_INVALID_PARAMS,
                  "logging/setLevel: params.level must be one of debug, info, "
                  "notice, warning, error, critical, alert, emergency");
  s->log_level = l;
  mcp_reply(s, req, cJSON_CreateObject());
}

static void on_gateway_method(mcp_server *s, const mcp_req *req) {
  if (mcp_gateway_request(s, req) < 0)
    errorf(s, req->id, JRPC_METHOD_NOT_FOUND,
           "method not found: %s (no upstream server offers it)", req->method);
}

/* ---- dispatch ----------------------------------------------------------- */

enum {
  M_NO_ERA = 1, /* answered whatever the era, even before one is known */
  M_SESSION = 2 /* the 2025 era only (no meaning without a session) */
};

typedef struct {
  const char *name;
  void (*fn)(mcp_server *s, const mcp_req *req);
  int flags;
} method_entry;

static const method_entry methods[] = {
    {"initialize", on_initialize, M_NO_ERA | M_SESSION},
    {"ping", on_ping, M_NO_ERA},
    {"server/discover", on_discover, M_NO_ERA},
    {"logging/setLevel", on_set_level, M_SESSION},
    {"tools/list", mcp_tools_list, 0},
    {"tools/call", mcp_tools_call, 0},
    {"prompts/list", on_gateway_method, 0},
    {"prompts/get", on_gateway_method, 0},
    {"resources/list", on_gateway_method, 0},
    {"resources/templates/list", on_gateway_method, 0},
    {"resources/read", on_gateway_method, 0},
};

static const method_entry *find_method(const char *name) {
  for (size_t i = 0; i < sizeof methods / sizeof *methods; i++)
    if (strcmp(methods[i].name, name) == 0) return &methods[i];
  return NULL;
}

static void unsupported_version(mcp_server *s, const cJSON *id,
                                const char *asked, const char *why) {
  cJSON *data = cJSON_CreateObject();
  cJSON_AddItemToObject(data, "supported", supported_versions());
  if (asked) cJSON_AddStringToObject(data, "requested", asked);
  char msg[512];
  snprintf(msg, sizeof msg, "UnsupportedProtocolVersion: %s; this server "
           "speaks " MCP_STATELESS_VERSION " (the version in each request's "
           "params._meta[\"" MCP_META_VERSION "\"]), and 2025-11-25 and "
           "2025-06-18 after initialize", why);
  mcp_reply_error(s, id, MCP_E_UNSUPPORTED_VERSION, msg, data);
}

/* Sets the request's era from its _meta, or from the session. Returns -1
 * when it has answered the request with an error. */
static int read_era(mcp_server *s, const method_entry *e, mcp_req *req) {
  const cJSON *meta = cJSON_GetObjectItemCaseSensitive(req->params, "_meta");
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(meta, MCP_META_VERSION);
  if (meta && !cJSON_IsObject(meta)) {
    errorf(s, req->id, JRPC_INVALID_PARAMS, "params._meta must be an object");
    return -1;
  }
  if (v && !(e->flags & M_SESSION)) {
    const cJSON *caps = cJSON_GetObjectItemCaseSensitive(meta, MCP_META_CAPS);
    if (!cJSON_IsString(v) || strcmp(v->valuestring, MCP_STATELESS_VERSION)) {
      unsupported_version(s, req->id, cJSON_GetStringValue(v),
                          cJSON_IsString(v) ? "this version is not one we speak"
                                            : "the version must be a string");
      return -1;
    }
    if (caps && !cJSON_IsObject(caps)) {
      errorf(s, req->id, JRPC_INVALID_PARAMS,
             "params._meta[\"" MCP_META_CAPS "\"] must be an object");
      return -1;
    }
    req->stateless = 1;
    req->caps = caps;
    s->saw_stateless = 1;
    return 0;
  }
  if (!s->initialized && !(e->flags & M_NO_ERA)) {
    unsupported_version(s, req->id, NULL, "this request names no protocol "
                        "version and no session was initialized");
    return -1;
  }
  req->caps = s->session_caps;
  return 0;
}

static void on_request(mcp_server *s, const jrpc_msg *m) {
  mcp_req req = {m->id, m->method, m->params, 0, NULL};
  const method_entry *e = find_method(m->method);
  if (!e)
    return errorf(s, m->id, JRPC_METHOD_NOT_FOUND, "method not found: %s",
                  m->method);
  if (read_era(s, e, &req) < 0) return;
  e->fn(s, &req);
}

static void on_notification(mcp_server *s, const jrpc_msg *m) {
  if (!strcmp(m->method, "notifications/cancelled")) mcp_cancelled(s, m->params);
  else if (!strcmp(m->method, "notifications/initialized"))
    mcp_logf(s->log, MCP_LOG_DEBUG, "the client is initialized");
  else
    mcp_logf(s->log, MCP_LOG_DEBUG, "notification %s ignored", m->method);
}

/* Holds a request that needs the gateway's tools while upstream servers
 * start (answered at once: what needs no era, and anything once settled).
 * Takes msg when it returns 1. */
static int hold(mcp_server *s, const jrpc_msg *m, cJSON *msg) {
  if (m->kind != JRPC_REQUEST || !mcp_gateway_settling(s)) return 0;
  const method_entry *e = find_method(m->method);
  if (e && (e->flags & M_NO_ERA)) return 0;
  if (cJSON_GetArraySize(s->held) >= MAX_HELD) {
    errorf(s, m->id, JRPC_INTERNAL_ERROR, "the upstream servers are still "
           "starting and %d requests wait already: try again shortly",
           MAX_HELD);
    cJSON_Delete(msg);
    return 1;
  }
  if (!s->held) s->held = cJSON_CreateArray();
  cJSON_AddItemToArray(s->held, msg);
  return 1;
}

/* notifications/cancelled for a request still held: it is dropped. */
static int drop_held(mcp_server *s, const jrpc_msg *m) {
  const cJSON *id = cJSON_GetObjectItem(m->params, "requestId");
  cJSON *it;
  cJSON_ArrayForEach(it, s->held)
    if (id && tg_json_equal(cJSON_GetObjectItem(it, "id"), id)) {
      cJSON_Delete(cJSON_DetachItemViaPointer(s->held, it));
      return 1;
    }
  return 0;
}

static void handle(mcp_server *s, cJSON *msg) {
  jrpc_msg m;
  jrpc_classify(msg, &m);
  if (hold(s, &m, msg)) return;
  if (s->stopping) {
    /* the client hung up or we are shutting down: answer nothing new */
  } else if (m.kind == JRPC_INVALID) {
    errorf(s, m.id, JRPC_INVALID_REQUEST, "invalid request: %s", m.why);
  } else if (m.kind == JRPC_REQUEST) {
    on_request(s, &m);
  } else if (m.kind == JRPC_NOTIFICATION) {
    if (strcmp(m.method, "notifications/cancelled") || !drop_held(s, &m))
      on_notification(s, &m);
  } else {
    on_response(s, &m);
  }
  cJSON_Delete(msg);
}

static void on_message(jrpc_conn *conn, cJSON *msg, void *ud) {
  handle(ud, msg);
}

void mcp_release_held(mcp_server *s) {
  cJSON *held = s->held;
  s->held = NULL;
  while (held && held->child)
    handle(s, cJSON_DetachItemViaPointer(held, held->child));
  cJSON_Delete(held);
}

static void on_bad(jrpc_conn *conn, int code, const cJSON *id, const char *why,
                   void *ud) {
  mcp_server *s = ud;
  mcp_logf(s->log, MCP_LOG_WARNING, "bad message from the client: %s", why);
  mcp_reply_error(s, id, code, code == JRPC_PARSE_ERROR ? "Parse error" : why,
                  code == JRPC_PARSE_ERROR ? cJSON_CreateString(why) : NULL);
}

static void on_end(jrpc_conn *conn, int status, void *ud) {
  mcp_server *s = ud;
  s->ended = 1;
  if (status == 0)
    mcp_logf(s->log, MCP_LOG_INFO, "the client closed its end: stopping");
  else
    mcp_logf(s->log, MCP_LOG_INFO, "the client's stream failed (%s): stopping",
             uv_strerror(status));
  if (s->opt.on_end) s->opt.on_end(s, s->opt.ud);
}

/* ---- reloads -------------------------------------------------------------- */

static const char *num_text(const cJSON *o, const char *k, char buf[32]) {
  return tg_json_number_text(cJSON_GetNumberValue(cJSON_GetObjectItem(o, k)),
                             buf);
}

static void on_runtime_event(tg_runtime *rt, const tg_event *ev, void *ud) {
  mcp_server *s = ud;
  const char *trigger =
      cJSON_GetStringValue(cJSON_GetObjectItem(ev->data, "trigger"));
  char g[32], f[32];
  if (!strcmp(ev->type, "policy_loaded")) {
    mcp_log_client(s, MCP_LOG_INFO, "policies loaded: generation %s, %s "
                   "file(s) (%s)", num_text(ev->data, "generation", g),
                   num_text(ev->data, "files", f), trigger ? trigger : "api");
    mcp_tools_maybe_changed(s);
  } else if (!strcmp(ev->type, "policy_error")) {
    const char *e = cJSON_GetStringValue(cJSON_GetObjectItem(ev->data, "error"));
    mcp_log_client(s, MCP_LOG_ERROR, "policy reload failed (%s): %s; "
                   "generation %s stays", trigger ? trigger : "api",
                   e ? e : "?", num_text(ev->data, "generation", g));
  } else if (!strcmp(ev->type, "handler_error")) {
    const char *e = cJSON_GetStringValue(cJSON_GetObjectItem(ev->data, "error"));
    mcp_log_client(s, MCP_LOG_ERROR, "policy handler failed: %s", e ? e : "?");
  }
}

/* ---- life ------------------------------------------------------------------ */

mcp_server *mcp_server_new(tg_runtime *rt, const mcp_options *o,
                           char err[TG_ERRMSG]) {
  mcp_server *s = calloc(1, sizeof *s);
  if (!s) {
    snprintf(err, TG_ERRMSG, "out of memory");
    return NULL;
  }
  s->rt = rt;
  s->loop = tg_runtime_loop(rt);
  s->opt = *o;
  if (!s->opt.separator) s->opt.separator = "__";
  if (!s->opt.max_calls) s->opt.max_calls = 256;
  if (!s->opt.tools_ttl_ms) s->opt.tools_ttl_ms = 60000;
  if (!s->opt.state_ttl_ms) s->opt.state_ttl_ms = 600000;
  s->log = o->log;
  s->log_level = MCP_LOG_INFO;
  s->states = mcp_states_new(s->opt.state_ttl_ms, err);
  if (!s->states) {
    free(s);
    return NULL;
  }
  s->subscription = tg_events_subscribe_runtime(rt, on_runtime_event, s);
  tg_runtime_set_approver(rt, mcp_approver, s);
  return s;
}

int mcp_server_start(mcp_server *s, int in_fd, int out_fd,
                     char err[TG_ERRMSG]) {
  static const jrpc_handlers h = {on_message, on_bad, on_end, on_drained};
  s->conn = jrpc_new(s->loop, s->opt.max_message_bytes, &h, s);
  if (!s->conn) {
    snprintf(err, TG_ERRMSG, "out of memory");
    return -1;
  }
  int rc = jrpc_open_fds(s->conn, in_fd, out_fd);
  if (rc == 0) rc = jrpc_start(s->conn);
  if (rc < 0) {
    snprintf(err, TG_ERRMSG, "cannot use stdin/stdout for MCP: %s",
             uv_strerror(rc));
    return -1;
  }
  return mcp_gateway_start(s, err);
}

void mcp_server_stop(mcp_server *s) {
  if (!s || s->stopping) return;
  s->stopping = 1;
  mcp_calls_cancel_all(s);
  mcp_gateway_stop(s);
}

int mcp_server_busy(const mcp_server *s) {
  return s && (s->ncalls || mcp_gateway_busy(s));
}

void mcp_server_free(mcp_server *s) {
  if (!s) return;
  mcp_server_stop(s);
  tg_runtime_set_approver(s->rt, NULL, NULL);
  if (s->subscription > 0) tg_events_unsubscribe(s->rt, s->subscription);
  mcp_calls_free(s);
  mcp_gateway_free(s);
  while (s->pending) {
    mcp_pending *p = s->pending;
    s->pending = p->next;
    free(p);
  }
  jrpc_close(s->conn);
  cJSON_Delete(s->held);
  cJSON_Delete(s->session_caps);
  cJSON_Delete(s->meta_session);
  cJSON_Delete(s->meta_stateless);
  cJSON_Delete(s->tools.list);
  mcp_states_free(s->states);
  free(s);
}
