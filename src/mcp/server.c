/*
 * server.c — the MCP protocol: the server object and its sessions, the
 * method table, the handshake of each era, and the log notifications that
 * follow policy reloads (mcp.h says what the other files do). It sees
 * messages, never bytes: a session (session.c) brings them from its
 * transport (transport.h) and takes the answers back.
 *
 * Every message is checked before anything acts on it: what is not a
 * JSON-RPC message gets a JSON-RPC error and the server reads on; a
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

/* ---- to the clients ------------------------------------------------------- */

static void errorf(mcp_session *ss, const cJSON *id, int code,
                   const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void errorf(mcp_session *ss, const cJSON *id, int code,
                   const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  mcp_reply_error(ss, id, code, msg, NULL);
}

void mcp_log_client(mcp_server *s, mcp_log_level level, const char *fmt, ...) {
  char msg[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  mcp_logf(s->log, level, "%s", msg);
  /* only a 2025-era session gets them, at or above its level (`info`
   * from the start): a 2026-07-28 client gets log messages only on the
   * answer to a request whose _meta asked for them, and these answer none */
  for (mcp_session *ss = s->sessions; ss; ss = ss->next) {
    if (!mcp_session_wants_log(ss, level)) continue;
    cJSON *p = cJSON_CreateObject();
    cJSON_AddStringToObject(p, "level", mcp_log_level_name(level));
    cJSON_AddStringToObject(p, "logger", "toolgate");
    cJSON_AddStringToObject(p, "data", msg);
    mcp_notify(ss, NULL, "notifications/message", p);
  }
}

int mcp_session_wants_log(const mcp_session *ss, mcp_log_level level) {
  return ss->initialized && (int)level >= ss->log_level;
}

void mcp_notify_sessions(mcp_server *s, const char *method) {
  int kind = mcp_listen_kind(method);
  for (mcp_session *ss = s->sessions; ss; ss = ss->next) {
    if (ss->initialized) mcp_notify(ss, NULL, method, NULL);
    if (kind >= 0) mcp_listens_notify(ss, (unsigned)kind);
  }
}

int mcp_can_elicit(const mcp_req *req) {
  const cJSON *e = cJSON_GetObjectItemCaseSensitive(req->caps, "elicitation");
  if (!cJSON_IsObject(e)) return 0;
  /* 2025-11-25: {} or {form: {}} offer forms; {url: {}} alone does not */
  return !cJSON_GetArraySize(e) || cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(e, "form"));
}

mcp_session *mcp_server_asker(mcp_server *s) {
  return mcp_server_asker_with(s, "elicitation");
}

mcp_session *mcp_server_asker_with(mcp_server *s, const char *capability) {
  for (mcp_session *ss = s->sessions; ss; ss = ss->next) {
    mcp_req session = {NULL, NULL, NULL, 0, ss->caps};
    if (!ss->initialized) continue;
    if (!strcmp(capability, "elicitation") ? mcp_can_elicit(&session)
        : cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(ss->caps, capability)))
      return ss;
  }
  return NULL;
}

/* ---- the handshake --------------------------------------------------------- */

cJSON *mcp_server_info(void) {
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

static void remember_client(mcp_session *ss, const cJSON *params) {
  const cJSON *caps = cJSON_GetObjectItemCaseSensitive(params, "capabilities");
  const cJSON *info = cJSON_GetObjectItemCaseSensitive(params, "clientInfo");
  const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(info, "name"));
  cJSON_Delete(ss->caps);
  ss->caps = cJSON_IsObject(caps) ? cJSON_Duplicate(caps, 1)
                                         : cJSON_CreateObject();
  snprintf(ss->client_name, sizeof ss->client_name, "%s", name ? name : "");
}

static void on_initialize(mcp_session *ss, const mcp_req *req) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(req->params, "protocolVersion");
  const cJSON *caps = cJSON_GetObjectItemCaseSensitive(req->params, "capabilities");
  if (!cJSON_IsString(v))
    return errorf(ss, req->id, JRPC_INVALID_PARAMS,
                  "initialize: params.protocolVersion must be a string");
  if (caps && !cJSON_IsObject(caps))
    return errorf(ss, req->id, JRPC_INVALID_PARAMS,
                  "initialize: params.capabilities must be an object");
  if (ss->initialized)
    return errorf(ss, req->id, JRPC_INVALID_REQUEST,
                  "initialize: this session is already initialized (%s)",
                  ss->version);
  remember_client(ss, req->params);
  snprintf(ss->version, sizeof ss->version, "%s", negotiate(v->valuestring));
  ss->initialized = 1;
  cJSON *r = cJSON_CreateObject();
  cJSON_AddStringToObject(r, "protocolVersion", ss->version);
  cJSON_AddItemToObject(r, "capabilities", capabilities(ss->s));
  cJSON_AddItemToObject(r, "serverInfo", mcp_server_info());
  cJSON_AddStringToObject(r, "instructions", instructions);
  mcp_logf(ss->s->log, MCP_LOG_INFO, "client %s asked for %s, speaking %s",
           ss->client_name[0] ? ss->client_name : "(unnamed)", v->valuestring,
           ss->version);
  mcp_reply(ss, req, r);
}

static cJSON *supported_versions(void) {
  cJSON *a = cJSON_CreateArray();
  cJSON_AddItemToArray(a, cJSON_CreateString(MCP_STATELESS_VERSION));
  for (size_t i = 0; i < NSESSION_VERSIONS; i++)
    cJSON_AddItemToArray(a, cJSON_CreateString(session_versions[i]));
  return a;
}

/* server/discover (2026-07-28): what initialize tells, without a session.
 * A cacheable result like the lists; the server names itself in _meta
 * (mcp_reply puts it there), as every 2026-07-28 result does. Asked
 * without the version in _meta (a probe), it is answered in that era all
 * the same: the version is what the client is asking about. */
static void on_discover(mcp_session *ss, const mcp_req *req) {
  cJSON *r = cJSON_CreateObject();
  cJSON_AddItemToObject(r, "supportedVersions", supported_versions());
  cJSON_AddItemToObject(r, "capabilities", capabilities(ss->s));
  cJSON_AddStringToObject(r, "instructions", instructions);
  mcp_req as_stateless = *req;
  as_stateless.stateless = 1;
  mcp_cacheable(&as_stateless, r, ss->s->opt.tools_ttl_ms, "public");
  mcp_reply(ss, &as_stateless, r);
}

static void on_ping(mcp_session *ss, const mcp_req *req) {
  mcp_reply(ss, req, cJSON_CreateObject());
}

static void on_set_level(mcp_session *ss, const mcp_req *req) {
  const char *level =
      cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(req->params, "level"));
  int l = mcp_log_level_of(level);
  if (l < 0)
    return errorf(ss, req->id, JRPC_INVALID_PARAMS,
                  "logging/setLevel: params.level must be one of debug, info, "
                  "notice, warning, error, critical, alert, emergency");
  ss->log_level = l;
  mcp_gateway_log_level(ss->s);
  mcp_reply(ss, req, cJSON_CreateObject());
}

static void on_gateway_method(mcp_session *ss, const mcp_req *req) {
  if (mcp_gateway_request(ss, req) < 0)
    errorf(ss, req->id, JRPC_METHOD_NOT_FOUND,
           "method not found: %s (no upstream server offers it)", req->method);
}

/* ---- dispatch ----------------------------------------------------------- */

enum {
  M_NO_ERA = 1,  /* answered whatever the era, even before one is known */
  M_SESSION = 2, /* the 2025 era only (no meaning without a session) */
  M_REMOVED = 4  /* gone from 2026-07-28: a request naming it is answered
                    as for any unknown method (its changelog: the handshake,
                    ping, logging/setLevel and resources/(un)subscribe) */
};

typedef struct {
  const char *name;
  void (*fn)(mcp_session *ss, const mcp_req *req);
  int flags;
} method_entry;

static const method_entry methods[] = {
    {"initialize", on_initialize, M_NO_ERA | M_SESSION | M_REMOVED},
    {"ping", on_ping, M_NO_ERA | M_REMOVED},
    {"server/discover", on_discover, M_NO_ERA},
    {"logging/setLevel", on_set_level, M_REMOVED},
    {"tools/list", mcp_tools_list, 0},
    {"tools/call", mcp_tools_call, 0},
    {"prompts/list", on_gateway_method, 0},
    {"prompts/get", on_gateway_method, 0},
    {"resources/list", on_gateway_method, 0},
    {"resources/templates/list", on_gateway_method, 0},
    {"resources/read", on_gateway_method, 0},
    {"resources/subscribe", on_gateway_method, M_REMOVED},
    {"resources/unsubscribe", on_gateway_method, M_REMOVED},
    {"completion/complete", on_gateway_method, 0},
    {"subscriptions/listen", mcp_listen_open, 0},
};

static const method_entry *find_method(const char *name) {
  for (size_t i = 0; i < sizeof methods / sizeof *methods; i++)
    if (strcmp(methods[i].name, name) == 0) return &methods[i];
  return NULL;
}

static void unsupported_version(mcp_session *ss, const cJSON *id,
                                const char *asked, const char *why) {
  cJSON *data = cJSON_CreateObject();
  cJSON_AddItemToObject(data, "supported", supported_versions());
  if (asked) cJSON_AddStringToObject(data, "requested", asked);
  char msg[512];
  snprintf(msg, sizeof msg, "UnsupportedProtocolVersion: %s; this server "
           "speaks " MCP_STATELESS_VERSION " (the version in each request's "
           "params._meta[\"" MCP_META_VERSION "\"]), and 2025-11-25 and "
           "2025-06-18 after initialize", why);
  mcp_reply_error(ss, id, MCP_E_UNSUPPORTED_VERSION, msg, data);
}

/* Sets the request's era from its _meta, or from the session. Returns -1
 * when it has answered the request with an error. */
static int read_era(mcp_session *ss, const method_entry *e, mcp_req *req) {
  const cJSON *meta = cJSON_GetObjectItemCaseSensitive(req->params, "_meta");
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(meta, MCP_META_VERSION);
  if (meta && !cJSON_IsObject(meta)) {
    errorf(ss, req->id, JRPC_INVALID_PARAMS, "params._meta must be an object");
    return -1;
  }
  if (v && !(e->flags & M_SESSION)) {
    const cJSON *caps = cJSON_GetObjectItemCaseSensitive(meta, MCP_META_CAPS);
    if (!cJSON_IsString(v) || strcmp(v->valuestring, MCP_STATELESS_VERSION)) {
      unsupported_version(ss, req->id, cJSON_GetStringValue(v),
                          cJSON_IsString(v) ? "this version is not one we speak"
                                            : "the version must be a string");
      return -1;
    }
    if (caps && !cJSON_IsObject(caps)) {
      errorf(ss, req->id, JRPC_INVALID_PARAMS,
             "params._meta[\"" MCP_META_CAPS "\"] must be an object");
      return -1;
    }
    const cJSON *lv = cJSON_GetObjectItemCaseSensitive(meta, MCP_META_LOG_LEVEL);
    if (lv && mcp_log_level_of(cJSON_GetStringValue(lv)) < 0) {
      errorf(ss, req->id, JRPC_INVALID_PARAMS,
             "params._meta[\"" MCP_META_LOG_LEVEL "\"] must be one of debug, "
             "info, notice, warning, error, critical, alert, emergency");
      return -1;
    }
    req->stateless = 1;
    req->caps = caps;
    ss->saw_stateless = 1;
    return 0;
  }
  if (!ss->initialized && !(e->flags & M_NO_ERA)) {
    unsupported_version(ss, req->id, NULL, "this request names no protocol "
                        "version and no session was initialized");
    return -1;
  }
  req->caps = ss->caps;
  return 0;
}

/* Does the request name the 2026-07-28 era in its _meta? */
static int names_stateless_era(const cJSON *params) {
  const cJSON *meta = cJSON_GetObjectItemCaseSensitive(params, "_meta");
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(meta, MCP_META_VERSION);
  return cJSON_IsString(v) && !strcmp(v->valuestring, MCP_STATELESS_VERSION);
}

static void on_request(mcp_session *ss, const jrpc_msg *m) {
  mcp_req req = {m->id, m->method, m->params, 0, NULL};
  const method_entry *e = find_method(m->method);
  if (!e)
    return errorf(ss, m->id, JRPC_METHOD_NOT_FOUND, "method not found: %s",
                  m->method);
  if ((e->flags & M_REMOVED) && names_stateless_era(m->params))
    return errorf(ss, m->id, JRPC_METHOD_NOT_FOUND, "method not found: %s "
                  "(not in " MCP_STATELESS_VERSION ", the version this "
                  "request names)", m->method);
  if (read_era(ss, e, &req) < 0) return;
  e->fn(ss, &req);
}

static void on_notification(mcp_session *ss, const jrpc_msg *m) {
  if (!strcmp(m->method, "notifications/cancelled")) {
    if (!mcp_listen_cancel(ss, cJSON_GetObjectItemCaseSensitive(m->params, "requestId")))
      mcp_cancelled(ss, m->params);
  } else if (!strcmp(m->method, "notifications/roots/list_changed")) {
    mcp_gateway_roots_changed(ss->s);
  } else if (!strcmp(m->method, "notifications/initialized")) {
    mcp_logf(ss->s->log, MCP_LOG_DEBUG, "the client is initialized");
  } else {
    mcp_logf(ss->s->log, MCP_LOG_DEBUG, "notification %s ignored", m->method);
  }
}

/* Holds a request that needs the gateway's tools while upstream servers
 * start (answered at once: what needs no era, and anything once settled).
 * Takes msg when it returns 1. */
static int hold(mcp_session *ss, const jrpc_msg *m, cJSON *msg) {
  if (m->kind != JRPC_REQUEST || !mcp_gateway_settling(ss->s)) return 0;
  const method_entry *e = find_method(m->method);
  if (e && (e->flags & M_NO_ERA)) return 0;
  if (cJSON_GetArraySize(ss->held) >= MAX_HELD) {
    errorf(ss, m->id, JRPC_INTERNAL_ERROR, "the upstream servers are still "
           "starting and %d requests wait already: try again shortly",
           MAX_HELD);
    cJSON_Delete(msg);
    return 1;
  }
  if (!ss->held) ss->held = cJSON_CreateArray();
  cJSON_AddItemToArray(ss->held, msg);
  return 1;
}

/* notifications/cancelled for a request still held: it is dropped. */
static int drop_held(mcp_session *ss, const jrpc_msg *m) {
  const cJSON *id = cJSON_GetObjectItemCaseSensitive(m->params, "requestId");
  cJSON *it;
  cJSON_ArrayForEach(it, ss->held)
    if (id && tg_json_equal(cJSON_GetObjectItemCaseSensitive(it, "id"), id)) {
      cJSON_Delete(cJSON_DetachItemViaPointer(ss->held, it));
      return 1;
    }
  return 0;
}

void mcp_server_handle(mcp_session *ss, cJSON *msg) {
  jrpc_msg m;
  jrpc_classify(msg, &m);
  if (hold(ss, &m, msg)) return;
  if (ss->s->stopping) {
    /* the client hung up or we are shutting down: answer nothing new */
  } else if (m.kind == JRPC_INVALID) {
    errorf(ss, m.id, JRPC_INVALID_REQUEST, "invalid request: %s", m.why);
  } else if (m.kind == JRPC_REQUEST) {
    on_request(ss, &m);
  } else if (m.kind == JRPC_NOTIFICATION) {
    if (strcmp(m.method, "notifications/cancelled") || !drop_held(ss, &m))
      on_notification(ss, &m);
  } else {
    mcp_session_response(ss, &m);
  }
  cJSON_Delete(msg);
}

void mcp_release_held(mcp_server *s) {
  for (mcp_session *ss = s->sessions; ss; ss = ss->next) {
    cJSON *held = ss->held;
    ss->held = NULL;
    while (held && held->child)
      mcp_server_handle(ss, cJSON_DetachItemViaPointer(held, held->child));
    cJSON_Delete(held);
  }
}

/* ---- reloads -------------------------------------------------------------- */

static const char *num_text(const cJSON *o, const char *k, char buf[32]) {
  return tg_json_number_text(cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, k)),
                             buf);
}

static void on_runtime_event(tg_runtime *rt, const tg_event *ev, void *ud) {
  mcp_server *s = ud;
  const char *trigger =
      cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ev->data, "trigger"));
  char g[32], f[32];
  if (!strcmp(ev->type, "policy_loaded")) {
    mcp_log_client(s, MCP_LOG_INFO, "policies loaded: generation %s, %s "
                   "file(s) (%s)", num_text(ev->data, "generation", g),
                   num_text(ev->data, "files", f), trigger ? trigger : "api");
    mcp_tools_maybe_changed(s);
  } else if (!strcmp(ev->type, "policy_error")) {
    const char *e = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ev->data, "error"));
    mcp_log_client(s, MCP_LOG_ERROR, "policy reload failed (%s): %s; "
                   "generation %s stays", trigger ? trigger : "api",
                   e ? e : "?", num_text(ev->data, "generation", g));
  } else if (!strcmp(ev->type, "handler_error")) {
    const char *e = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ev->data, "error"));
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
  /* below the 10 s an MCP Inspector waits for an answer by default */
  if (!s->opt.startup_wait_ms) s->opt.startup_wait_ms = 5000;
  s->log = o->log;
  s->states = mcp_states_new(s->opt.state_ttl_ms, err);
  if (!s->states) {
    free(s);
    return NULL;
  }
  s->subscription = tg_events_subscribe_runtime(rt, on_runtime_event, s);
  tg_runtime_set_approver(rt, mcp_approver, s);
  return s;
}

mcp_session *mcp_server_connect(mcp_server *s, mcp_transport *t) {
  mcp_session *ss = mcp_session_new(s, t);
  if (!ss) return NULL;
  mcp_session **pp = &s->sessions; /* in the order they came */
  while (*pp) pp = &(*pp)->next;
  *pp = ss;
  return ss;
}

void mcp_server_disconnect(mcp_server *s, mcp_session *ss) {
  ss->ended = 1;
  mcp_calls_cancel_all(ss);
  mcp_session_fail_pending(ss, "the client has gone");
  mcp_gateway_session_gone(s, ss);
  mcp_calls_free(ss);
  mcp_session **pp = &s->sessions;
  while (*pp && *pp != ss) pp = &(*pp)->next;
  if (*pp) *pp = ss->next;
  mcp_session_free(ss);
}

int mcp_server_start_upstreams(mcp_server *s, char err[TG_ERRMSG]) {
  return mcp_gateway_start(s, err);
}

void mcp_server_stop(mcp_server *s) {
  if (!s || s->stopping) return;
  s->stopping = 1;
  for (mcp_session *ss = s->sessions; ss; ss = ss->next)
    mcp_calls_cancel_all(ss);
  mcp_gateway_stop(s);
}

int mcp_server_busy(const mcp_server *s) {
  if (!s) return 0;
  for (const mcp_session *ss = s->sessions; ss; ss = ss->next)
    if (ss->ncalls) return 1;
  return mcp_gateway_busy(s);
}

/* The calls first (orphaned), then the gateway (which withdraws its
 * questions still open at the clients), then the sessions. */
void mcp_server_free(mcp_server *s) {
  if (!s) return;
  mcp_server_stop(s);
  tg_runtime_set_approver(s->rt, NULL, NULL);
  if (s->subscription > 0) tg_events_unsubscribe(s->rt, s->subscription);
  for (mcp_session *ss = s->sessions; ss; ss = ss->next) mcp_calls_free(ss);
  mcp_gateway_free(s);
  while (s->sessions) {
    mcp_session *ss = s->sessions;
    s->sessions = ss->next;
    mcp_session_free(ss);
  }
  cJSON_Delete(s->tools.list);
  mcp_states_free(s->states);
  free(s);
}
