/*
 * upstream.c — one upstream MCP server (upstream.h).
 *
 * Its life: start (spawn in a process group of its own, stdio pipes) ->
 * probe (server/discover carrying 2026-07-28; an answer that lists that
 * version makes it stateless) or else initialize (2025-11-25, our
 * elicitation, sampling and roots capabilities declared so that its
 * requests can reach our client)
 * -> list (tools, prompts, resources, page by page) -> ready. When it
 * dies, the requests in flight fail (their callers see "down") and it is
 * started again after a back-off that doubles up to 30 s and starts over
 * once it has stayed up a while. Stopping sends SIGTERM to its group and
 * SIGKILL after a grace.
 *
 * One timer serves each phase in turn: the handshake deadline while it
 * starts, the back-off while it is down, the kill grace while it stops.
 * Handles are counted; the object goes when the last one has closed.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "mcp.h"
#include "upstream.h"
#include "framing.h"

#define HANDSHAKE_MS 20000   /* to answer the probe, initialize and lists */
#define PROBE_MS 5000        /* to answer server/discover */
#define BACKOFF_FIRST_MS 250
#define BACKOFF_MAX_MS 30000
#define STABLE_MS 30000      /* up this long: the back-off starts over */
#define KILL_GRACE_MS 2000
#define MAX_PAGES 50
#define RELISTS_HELD 3     /* lists made again before they are handed on */
#define ERR_LINE 1024
/* An upstream's log lines (its stderr, its notifications/message) reach
 * our log at most LOG_RATE a second after a burst of LOG_BURST: a server
 * that writes without end must neither fill the disk nor drown our own
 * lines. What is dropped is counted and said. */
#define LOG_BURST 200
#define LOG_RATE 50

extern char **environ;

typedef enum {
  UP_DOWN, UP_PROBING, UP_INITIALIZING, UP_LISTING, UP_READY, UP_STOPPED
} up_state;

typedef struct up_req {
  double id;
  up_answer_fn fn;
  void *ud;
  struct up_req *next;
} up_req;

struct mcp_upstream {
  uv_loop_t *loop;
  const mcp_upstream_conf *conf;
  mcp_log *log;
  up_handlers h;
  void *ud;
  up_state state;
  int stopping, freeing;
  /* the process and its handles */
  uv_process_t proc;
  int running;             /* spawned, no exit yet */
  int nopen;               /* handles open: proc, err, timer */
  jrpc_conn *conn;
  uv_pipe_t err;
  int err_open;
  char errline[ERR_LINE];
  size_t errlen;
  char errbuf[4096];       /* a read of its stderr, consumed at once */
  double log_tokens;       /* lines it may still log now (LOG_BURST) */
  uint64_t log_at;         /* when log_tokens was counted (loop ms) */
  uint64_t log_dropped;    /* lines dropped since the last one logged */
  uv_timer_t timer;
  uint64_t backoff_ms, ready_at;
  /* the protocol */
  int stateless;
  char version[16];
  double next_id;
  up_req *reqs;
  cJSON *answer;           /* the answer being handed out (up_take_result) */
  cJSON *answer_result;    /* its result, still in it */
  int listing;             /* lists still being fetched */
  int relist_owed;         /* a list_changed came while they were */
  int relisted;            /* lists made again for it since the last handed on */
  cJSON *tools, *prompts, *resources, *templates;
  cJSON *caps;             /* the capabilities it declared (this run) */
};

static void timer_cb(uv_timer_t *t);
static void relist(mcp_upstream *u);

/* ---- small things ---------------------------------------------------------------- */

const char *up_name(const mcp_upstream *u) { return u->conf->name; }
const mcp_upstream_conf *up_conf(const mcp_upstream *u) { return u->conf; }
int up_ready(const mcp_upstream *u) { return u->state == UP_READY; }
int up_stateless(const mcp_upstream *u) { return u->stateless; }
const cJSON *up_tools(const mcp_upstream *u) { return u->tools; }
const cJSON *up_prompts(const mcp_upstream *u) { return u->prompts; }
const cJSON *up_resources(const mcp_upstream *u) { return u->resources; }
const cJSON *up_templates(const mcp_upstream *u) { return u->templates; }
const cJSON *up_caps(const mcp_upstream *u) { return u->caps; }
int up_busy(const mcp_upstream *u) { return u->running || u->nopen > 1 || u->conn; }

static void handle_closed(uv_handle_t *h) {
  mcp_upstream *u = h->data;
  if (--u->nopen == 0 && u->freeing) free(u);
}

static void arm(mcp_upstream *u, uint64_t ms) {
  uv_update_time(u->loop);
  uv_timer_start(&u->timer, timer_cb, ms, 0);
}

static void kill_group(mcp_upstream *u, int sig) {
  if (u->running && u->proc.pid > 0) kill(-u->proc.pid, sig);
}

/* ---- requests ---------------------------------------------------------------------- */

static cJSON *down_error(const char *why) {
  cJSON *e = cJSON_CreateObject();
  cJSON_AddNumberToObject(e, "code", JRPC_INTERNAL_ERROR);
  cJSON_AddStringToObject(e, "message", why);
  cJSON_AddTrueToObject(cJSON_AddObjectToObject(e, "data"), "down");
  return e;
}

/* Fails every request in flight: their callers learn it went down. */
static void fail_all(mcp_upstream *u, const char *why) {
  cJSON *e = down_error(why);
  while (u->reqs) {
    up_req *r = u->reqs;
    u->reqs = r->next;
    if (r->fn) r->fn(u, NULL, e, r->ud);
    free(r);
  }
  cJSON_Delete(e);
}

/* What toolgate declares to an upstream, as its client: it relays these
 * requests to its own client (and refuses them, saying why, when that
 * client lacks the capability). */
static cJSON *our_caps(void) {
  cJSON *c = cJSON_CreateObject();
  cJSON_AddObjectToObject(c, "elicitation");
  cJSON_AddObjectToObject(c, "sampling");
  cJSON_AddObjectToObject(c, "roots");
  return c;
}

/* Adds our era's _meta to the params of a request to a stateless server. */
static cJSON *with_era(mcp_upstream *u, cJSON *params) {
  if (!u->stateless && u->state != UP_PROBING) return params; /* the probe too */
  if (!params) params = cJSON_CreateObject();
  cJSON *meta = cJSON_GetObjectItemCaseSensitive(params, "_meta");
  if (!cJSON_IsObject(meta)) {
    cJSON_DeleteItemFromObjectCaseSensitive(params, "_meta");
    meta = cJSON_AddObjectToObject(params, "_meta");
  }
  cJSON_AddStringToObject(meta, MCP_META_VERSION, MCP_STATELESS_VERSION);
  cJSON_AddItemToObject(meta, MCP_META_CAPS, our_caps());
  return params;
}

double up_request(mcp_upstream *u, const char *method, cJSON *params,
                  up_answer_fn fn, void *ud) {
  up_req *r = u->conn && u->running && !u->stopping ? calloc(1, sizeof *r) : NULL;
  if (!r) {
    cJSON_Delete(params);
    return -1;
  }
  r->id = ++u->next_id;
  r->fn = fn;
  r->ud = ud;
  cJSON *msg = jrpc_request(r->id, method, with_era(u, params));
  int rc = msg ? jrpc_send(u->conn, msg) : UV_ENOMEM;
  cJSON_Delete(msg);
  if (rc < 0) {
    free(r);
    return -1;
  }
  r->next = u->reqs;
  u->reqs = r;
  return r->id;
}

cJSON *up_take_result(mcp_upstream *u) {
  cJSON *r = u->answer && u->answer_result
                 ? cJSON_DetachItemViaPointer(u->answer, u->answer_result)
                 : NULL;
  u->answer_result = NULL;
  return r;
}

void up_forget(mcp_upstream *u, double id) {
  for (up_req *r = u->reqs; r; r = r->next)
    if (r->id == id) r->fn = NULL;
}

void up_notify(mcp_upstream *u, const char *method, cJSON *params) {
  if (!u->conn || !u->running) {
    cJSON_Delete(params);
    return;
  }
  jrpc_send_notification(u->conn, method, params);
}

void up_respond(mcp_upstream *u, const cJSON *id, cJSON *result,
                cJSON *error) {
  if (!u->conn || !u->running) {
    cJSON_Delete(result);
    cJSON_Delete(error);
    return;
  }
  if (error) {
    cJSON *m = jrpc_error_response(id, error);
    if (m) jrpc_send(u->conn, m);
    cJSON_Delete(m);
    cJSON_Delete(result);
  } else {
    jrpc_send_result(u->conn, id, result);
  }
}

static void on_response(mcp_upstream *u, const jrpc_msg *m) {
  up_req **pp = &u->reqs;
  while (*pp && !(cJSON_IsNumber(m->id) && (*pp)->id == m->id->valuedouble))
    pp = &(*pp)->next;
  up_req *r = *pp;
  if (!r) {
    mcp_logf(u->log, MCP_LOG_DEBUG, "upstream %s: an answer to no request of "
             "ours: ignored", up_name(u));
    return;
  }
  *pp = r->next;
  if (r->fn) r->fn(u, m->result, m->error, r->ud);
  else mcp_logf(u->log, MCP_LOG_DEBUG, "upstream %s: the answer to request "
                "%.0f came after it was cancelled: dropped", up_name(u), r->id);
  free(r);
}

/* ---- what it sends ----------------------------------------------------------------- */

/* Says how many of the upstream's lines were dropped, if any were. */
static void say_dropped(mcp_upstream *u) {
  if (!u->log_dropped) return;
  mcp_logf(u->log, MCP_LOG_WARNING, "upstream %s: %llu lines of its log "
           "were dropped (it wrote more than %d a second)", up_name(u),
           (unsigned long long)u->log_dropped, LOG_RATE);
  u->log_dropped = 0;
}

/* May the upstream log one more line now? (LOG_BURST, LOG_RATE) */
static int up_may_log(mcp_upstream *u) {
  uint64_t now = uv_now(u->loop);
  double t = u->log_tokens + (double)(now - u->log_at) * LOG_RATE / 1000.0;
  u->log_tokens = t > LOG_BURST ? LOG_BURST : t;
  u->log_at = now;
  if (u->log_tokens < 1) {
    if (u->log_dropped++ == 0)
      mcp_logf(u->log, MCP_LOG_WARNING, "upstream %s writes more than %d "
               "lines a second to its log: dropping them (the count "
               "follows)", up_name(u), LOG_RATE);
    return 0;
  }
  u->log_tokens -= 1;
  say_dropped(u);
  return 1;
}

/* Its log message: to our log, and to the gateway (the clients that want
 * that level), both behind the same rate limit. */
static void on_log_message(mcp_upstream *u, const cJSON *params) {
  if (!cJSON_IsObject(params) || !up_may_log(u)) return;
  const char *level = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(params, "level"));
  const cJSON *data = cJSON_GetObjectItemCaseSensitive(params, "data");
  char *text = cJSON_IsString(data) ? NULL : tg_json_print(data, 0);
  int l = mcp_log_level_of(level);
  mcp_logf(u->log, l < 0 ? MCP_LOG_INFO : (mcp_log_level)l, "upstream %s: %.1500s",
           up_name(u), text ? text : cJSON_GetStringValue(data) ? data->valuestring : "");
  free(text);
  u->h.on_notification(u, "notifications/message", params, u->ud);
}

static void on_upstream_notification(mcp_upstream *u, const jrpc_msg *m) {
  const char *n = m->method;
  if (!strcmp(n, "notifications/tools/list_changed") ||
      !strcmp(n, "notifications/prompts/list_changed") ||
      !strcmp(n, "notifications/resources/list_changed")) {
    if (u->listing) u->relist_owed = 1; /* the answers coming may be older */
    else if (u->state == UP_READY) relist(u);
  } else if (!strcmp(n, "notifications/message")) {
    on_log_message(u, m->params);
  } else {
    u->h.on_notification(u, n, m->params, u->ud);
  }
}

/* The requests a server may make of its client that the gateway relays
 * (or refuses with a reason); anything else is not found. */
static int relayed(const char *method) {
  return !strcmp(method, "elicitation/create") ||
         !strcmp(method, "sampling/createMessage") ||
         !strcmp(method, "roots/list");
}

static void on_upstream_request(mcp_upstream *u, const jrpc_msg *m) {
  if (!strcmp(m->method, "ping")) {
    up_respond(u, m->id, cJSON_CreateObject(), NULL);
  } else if (relayed(m->method)) {
    u->h.on_request(u, m->id, m->method, m->params, u->ud);
  } else {
    char msg[200];
    snprintf(msg, sizeof msg, "method not found: %.100s (toolgate relays "
             "elicitation/create, sampling/createMessage and roots/list)",
             m->method);
    cJSON *e = cJSON_CreateObject();
    cJSON_AddNumberToObject(e, "code", JRPC_METHOD_NOT_FOUND);
    cJSON_AddStringToObject(e, "message", msg);
    up_respond(u, m->id, NULL, e);
  }
}

static void on_message(jrpc_conn *c, cJSON *msg, void *ud) {
  mcp_upstream *u = ud;
  jrpc_msg m;
  jrpc_classify(msg, &m);
  if (m.kind == JRPC_RESPONSE) {
    u->answer = msg;
    u->answer_result = (cJSON *)m.result;
    on_response(u, &m);
    u->answer = u->answer_result = NULL;
  } else if (m.kind == JRPC_REQUEST) {
    on_upstream_request(u, &m);
  }
  else if (m.kind == JRPC_NOTIFICATION) on_upstream_notification(u, &m);
  else mcp_logf(u->log, MCP_LOG_WARNING, "upstream %s sent an invalid "
                "message: %s", up_name(u), m.why);
  cJSON_Delete(msg);
}

static void on_bad(jrpc_conn *c, int code, const cJSON *id, const char *why,
                   void *ud) {
  mcp_upstream *u = ud;
  mcp_logf(u->log, MCP_LOG_WARNING, "upstream %s wrote a bad line on stdout "
           "(%s): skipped", up_name(u), why);
}

static void on_end(jrpc_conn *c, int status, void *ud) {
  mcp_upstream *u = ud;
  /* its stdout closed: it is going, or broken; make sure it goes */
  kill_group(u, SIGTERM);
  jrpc_close(u->conn);
  u->conn = NULL;
}

/* ---- its stderr -------------------------------------------------------------------- */

static void err_alloc(uv_handle_t *h, size_t size, uv_buf_t *buf) {
  mcp_upstream *u = h->data;
  (void)size;
  *buf = uv_buf_init(u->errbuf, sizeof u->errbuf);
}

static void flush_err(mcp_upstream *u) {
  if (!u->errlen) return;
  if (up_may_log(u))
    mcp_logf(u->log, MCP_LOG_INFO, "upstream %s: %.*s", up_name(u),
             (int)u->errlen, u->errline);
  u->errlen = 0;
}

static void err_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf) {
  mcp_upstream *u = s->data;
  for (ssize_t i = 0; i < n; i++) {
    char ch = buf->base[i];
    if (ch == '\n' || u->errlen == sizeof u->errline) flush_err(u);
    if (ch != '\n' && ch != '\r') u->errline[u->errlen++] = ch;
  }
  if (n < 0) {
    flush_err(u);
    uv_read_stop(s);
  }
}

/* ---- starting ---------------------------------------------------------------------- */

/* Our environment with the config's entries added or replacing ours. */
static char **make_env(const mcp_upstream_conf *c) {
  size_t n = 0, k = 0;
  while (environ[n]) n++;
  for (size_t i = 0; c->env && c->env[i]; i++) k++;
  char **env = calloc(n + k + 1, sizeof *env);
  if (!env) return NULL;
  size_t m = 0;
  for (size_t i = 0; i < n; i++) {
    size_t klen = strcspn(environ[i], "=");
    int replaced = 0;
    for (size_t j = 0; j < k && !replaced; j++)
      replaced = !strncmp(c->env[j], environ[i], klen) && c->env[j][klen] == '=';
    if (!replaced) env[m++] = environ[i];
  }
  for (size_t j = 0; j < k; j++) env[m++] = c->env[j];
  return env;
}

static void go_down(mcp_upstream *u, const char *why);

static void on_exit_cb(uv_process_t *p, int64_t status, int sig) {
  mcp_upstream *u = p->data;
  char why[160];
  u->running = 0;
  if (u->freeing) { /* the gateway has gone: only the handle is left */
    uv_close((uv_handle_t *)&u->proc, handle_closed);
    return;
  }
  if (sig) snprintf(why, sizeof why, "killed by signal %d", sig);
  else snprintf(why, sizeof why, "exited with status %lld", (long long)status);
  uv_close((uv_handle_t *)&u->proc, handle_closed);
  if (u->err_open) {
    u->err_open = 0;
    uv_close((uv_handle_t *)&u->err, handle_closed);
  }
  flush_err(u);
  go_down(u, why);
}

static void ready(mcp_upstream *u) {
  u->state = UP_READY;
  uv_timer_stop(&u->timer);
  u->ready_at = uv_now(u->loop);
  mcp_logf(u->log, MCP_LOG_INFO, "upstream %s ready (%s): %d tool(s), %d "
           "prompt(s), %d resource(s)", up_name(u), u->version,
           cJSON_GetArraySize(u->tools), cJSON_GetArraySize(u->prompts),
           cJSON_GetArraySize(u->resources));
  u->h.on_listed(u, u->ud);
}

/* Fetches one list, page by page, into *dest. */
typedef struct {
  mcp_upstream *u;
  const char *method, *key;
  cJSON **dest;
  cJSON *acc;
  int pages;
} lister;

static void list_page(lister *l, const char *cursor);

/* One list less to wait for; the last makes it ready (or tells that its
 * lists changed). */
static void list_release(mcp_upstream *u) {
  if (--u->listing > 0) return;
  /* A list_changed came while these were fetched: the lists may predate
   * it (a server that registers tools once it knows its client answers
   * tools/list and then says they changed). They are made again before
   * they are handed on, RELISTS_HELD times at most, so that a server
   * that keeps changing them is still listed. */
  if (u->relist_owed && (u->state == UP_LISTING || u->state == UP_READY) &&
      u->relisted < RELISTS_HELD) {
    u->relist_owed = 0;
    u->relisted++;
    relist(u);
    return;
  }
  u->relisted = 0;
  if (u->state == UP_LISTING) ready(u);
  else if (u->state == UP_READY) u->h.on_listed(u, u->ud);
  if (u->relist_owed && u->state == UP_READY) { /* still changing: again */
    u->relist_owed = 0;
    relist(u);
  }
}

static void list_done(lister *l) {
  mcp_upstream *u = l->u;
  cJSON_Delete(*l->dest);
  *l->dest = l->acc;
  free(l);
  list_release(u);
}

static void list_answer(mcp_upstream *u, const cJSON *result,
                        const cJSON *error, void *ud) {
  lister *l = ud;
  const cJSON *items = cJSON_GetObjectItemCaseSensitive(result, l->key);
  const char *cursor = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(result, "nextCursor"));
  const cJSON *it;
  if (error || !cJSON_IsArray(items)) {
    mcp_logf(u->log, MCP_LOG_WARNING, "upstream %s: %s failed or gave no %s: "
             "taken as empty", up_name(u), l->method, l->key);
    cursor = NULL;
  }
  const cJSON *arr = cJSON_IsArray(items) ? items : NULL;
  cJSON_ArrayForEach(it, arr)
    if (cJSON_IsObject(it)) cJSON_AddItemToArray(l->acc, cJSON_Duplicate(it, 1));
  if (cursor && ++l->pages < MAX_PAGES && u->running) return list_page(l, cursor);
  list_done(l);
}

static void list_page(lister *l, const char *cursor) {
  cJSON *p = NULL;
  if (cursor) {
    p = cJSON_CreateObject();
    cJSON_AddStringToObject(p, "cursor", cursor);
  }
  if (up_request(l->u, l->method, p, list_answer, l) < 0) list_done(l);
}

static void list_one(mcp_upstream *u, const char *method, const char *key,
                     cJSON **dest) {
  lister *l = calloc(1, sizeof *l);
  if (!l) return;
  *l = (lister){u, method, key, dest, cJSON_CreateArray(), 0};
  u->listing++;
  list_page(l, NULL);
}

/* Lists what caps say it offers. The listing is held while the requests
 * go out, so that no answer ends it early. */
static void list_all(mcp_upstream *u, const cJSON *caps) {
  u->listing++;
  if (cJSON_GetObjectItemCaseSensitive(caps, "tools")) list_one(u, "tools/list", "tools", &u->tools);
  if (cJSON_GetObjectItemCaseSensitive(caps, "prompts"))
    list_one(u, "prompts/list", "prompts", &u->prompts);
  if (cJSON_GetObjectItemCaseSensitive(caps, "resources")) {
    list_one(u, "resources/list", "resources", &u->resources);
    list_one(u, "resources/templates/list", "resourceTemplates", &u->templates);
  }
  list_release(u);
}

/* The capabilities it declared, kept for relisting. */
static cJSON *caps_of(const cJSON *result) {
  const cJSON *c = cJSON_GetObjectItemCaseSensitive(result, "capabilities");
  return cJSON_IsObject(c) ? cJSON_Duplicate(c, 1) : cJSON_CreateObject();
}

static void relist(mcp_upstream *u) {
  cJSON *caps = cJSON_CreateObject();
  if (u->tools) cJSON_AddObjectToObject(caps, "tools");
  if (u->prompts) cJSON_AddObjectToObject(caps, "prompts");
  if (u->resources) cJSON_AddObjectToObject(caps, "resources");
  list_all(u, caps);
  cJSON_Delete(caps);
}

static void initialized(mcp_upstream *u, const cJSON *result) {
  u->state = UP_LISTING;
  cJSON_Delete(u->caps);
  u->caps = caps_of(result);
  list_all(u, u->caps);
}

static void on_initialize(mcp_upstream *u, const cJSON *result,
                          const cJSON *error, void *ud) {
  const char *v = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(result, "protocolVersion"));
  if (error || !v) {
    const char *m = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(error, "message"));
    mcp_logf(u->log, MCP_LOG_ERROR, "upstream %s: initialize failed: %s",
             up_name(u), m ? m : "no protocolVersion in its answer");
    kill_group(u, SIGKILL);
    return;
  }
  snprintf(u->version, sizeof u->version, "%s", v);
  up_notify(u, "notifications/initialized", NULL);
  initialized(u, result);
}

static void initialize(mcp_upstream *u) {
  u->state = UP_INITIALIZING;
  cJSON *p = cJSON_CreateObject();
  cJSON_AddStringToObject(p, "protocolVersion", MCP_LATEST_SESSION_VERSION);
  cJSON_AddItemToObject(p, "capabilities", our_caps());
  cJSON *info = cJSON_AddObjectToObject(p, "clientInfo");
  cJSON_AddStringToObject(info, "name", "toolgate");
  cJSON_AddStringToObject(info, "version", TG_VERSION);
  if (up_request(u, "initialize", p, on_initialize, NULL) < 0)
    kill_group(u, SIGKILL);
}

static int lists_version(const cJSON *result, const char *v) {
  const cJSON *it;
  cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(result, "supportedVersions"))
    if (cJSON_IsString(it) && !strcmp(it->valuestring, v)) return 1;
  return 0;
}

static void on_discover(mcp_upstream *u, const cJSON *result,
                        const cJSON *error, void *ud) {
  if (u->state != UP_PROBING) return; /* the probe timed out: initialize went */
  if (result && lists_version(result, MCP_STATELESS_VERSION)) {
    u->stateless = 1;
    snprintf(u->version, sizeof u->version, "%s", MCP_STATELESS_VERSION);
    arm(u, HANDSHAKE_MS);
    initialized(u, result);
    return;
  }
  initialize(u);
}

static void probe(mcp_upstream *u) {
  u->state = UP_PROBING;
  arm(u, PROBE_MS);
  if (up_request(u, "server/discover", NULL, on_discover, NULL) < 0)
    kill_group(u, SIGKILL);
}

/* The process would not start: what was opened for it closes. */
static void spawn_failed(mcp_upstream *u, int rc, int spawned) {
  mcp_logf(u->log, MCP_LOG_ERROR, "upstream %s: cannot start '%s': %s",
           up_name(u), u->conf->command, uv_strerror(rc));
  if (spawned) { /* libuv: a failed spawn's handle is closed all the same */
    u->nopen++;
    uv_close((uv_handle_t *)&u->proc, handle_closed);
  }
  if (u->err_open) {
    u->err_open = 0;
    uv_close((uv_handle_t *)&u->err, handle_closed);
  }
  go_down(u, "it did not start");
}

/* Its stdin and stdout are pipes we make (its ends inherited, ours
 * opened on the conn), not libuv's socket pairs: a pipe's write and read
 * cost the kernel about a third less than a Unix socket's, and a call
 * makes one of each on both sides. stdin: to[0] its, to[1] ours; stdout:
 * from[1] its, from[0] ours. */
static int spawn(mcp_upstream *u, char **argv, char **env, uv_file to[2],
                 uv_file from[2]) {
  const mcp_upstream_conf *c = u->conf;
  uv_pipe_init(u->loop, &u->err, 0);
  u->err.data = u;
  u->err_open = 1;
  u->nopen++;
  uv_stdio_container_t io[3] = {
      {UV_INHERIT_FD, {.fd = to[0]}},
      {UV_INHERIT_FD, {.fd = from[1]}},
      {UV_CREATE_PIPE | UV_WRITABLE_PIPE, {(uv_stream_t *)&u->err}}};
  /* detached: a process group of its own, which stop and kill reach */
  uv_process_options_t o = {on_exit_cb, c->command, argv, env, c->cwd,
                            UV_PROCESS_DETACHED, 3, io, 0, 0};
  u->proc.data = u;
  return uv_spawn(u->loop, &u->proc, &o);
}

static void close_fd(uv_file *fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

int up_start(mcp_upstream *u) {
  static const jrpc_handlers h = {on_message, on_bad, on_end, NULL};
  const mcp_upstream_conf *c = u->conf;
  size_t nargs = 0;
  while (c->args && c->args[nargs]) nargs++;
  char **argv = calloc(nargs + 2, sizeof *argv);
  char **env = make_env(c);
  u->conn = jrpc_new(u->loop, 64u << 20, &h, u);
  uv_file to[2] = {-1, -1}, from[2] = {-1, -1};
  int rc = UV_ENOMEM, spawned = 0;
  if (argv && env && u->conn) rc = uv_pipe(to, 0, 0); /* close-on-exec */
  if (rc == 0) rc = uv_pipe(from, 0, 0);
  if (rc == 0) {
    argv[0] = c->command;
    for (size_t i = 0; i < nargs; i++) argv[i + 1] = c->args[i];
    rc = spawn(u, argv, env, to, from);
    spawned = 1;
  }
  free(argv);
  free(env);
  close_fd(&to[0]); /* its ends: it has them now, or never will */
  close_fd(&from[1]);
  if (rc < 0) {
    close_fd(&to[1]);
    close_fd(&from[0]);
    spawn_failed(u, rc, spawned);
    return rc;
  }
  u->nopen++;
  u->running = 1;
  mcp_logf(u->log, MCP_LOG_INFO, "upstream %s: started %s (pid %d)", up_name(u),
           c->command, u->proc.pid);
  rc = jrpc_open_fds(u->conn, from[0], to[1]);
  if (rc < 0) { /* no link to it: it goes, and is started again */
    mcp_logf(u->log, MCP_LOG_ERROR, "upstream %s: cannot use its pipes: %s",
             up_name(u), uv_strerror(rc));
    kill_group(u, SIGKILL); /* (an fd the conn did not take stays open:
                               better than closing one it did) */
    return 0;
  }
  jrpc_start(u->conn);
  uv_read_start((uv_stream_t *)&u->err, err_alloc, err_read);
  probe(u);
  return 0;
}

/* ---- going down, restarting, stopping ----------------------------------------------- */

static void go_down(mcp_upstream *u, const char *why) {
  int was_ready = u->state == UP_READY;
  uint64_t now = uv_now(u->loop);
  say_dropped(u);
  u->state = u->stopping ? UP_STOPPED : UP_DOWN;
  u->stateless = 0;
  if (u->conn) {
    jrpc_close(u->conn);
    u->conn = NULL;
  }
  fail_all(u, why); /* lists in flight end too (nothing is ready when down) */
  u->listing = 0;
  u->relist_owed = u->relisted = 0;
  if (was_ready && now - u->ready_at >= STABLE_MS) u->backoff_ms = 0;
  u->backoff_ms = u->backoff_ms ? u->backoff_ms * 2 : BACKOFF_FIRST_MS;
  if (u->backoff_ms > BACKOFF_MAX_MS) u->backoff_ms = BACKOFF_MAX_MS;
  if (u->stopping) {
    uv_timer_stop(&u->timer);
    mcp_logf(u->log, MCP_LOG_INFO, "upstream %s stopped (%s)", up_name(u), why);
  } else {
    mcp_logf(u->log, MCP_LOG_WARNING, "upstream %s went down (%s): restarting "
             "in %llu ms", up_name(u), why, (unsigned long long)u->backoff_ms);
    arm(u, u->backoff_ms);
  }
  u->h.on_down(u, u->ud);
}

static void timer_cb(uv_timer_t *t) {
  mcp_upstream *u = t->data;
  if (u->stopping) {
    kill_group(u, SIGKILL); /* the grace is over */
  } else if (u->state == UP_DOWN) {
    up_start(u);
  } else if (u->state == UP_PROBING) {
    mcp_logf(u->log, MCP_LOG_DEBUG, "upstream %s: no answer to server/discover:"
             " speaking the 2025 era", up_name(u));
    arm(u, HANDSHAKE_MS);
    initialize(u);
  } else if (u->state != UP_READY) {
    mcp_logf(u->log, MCP_LOG_ERROR, "upstream %s did not finish its handshake "
             "in %d s: killed", up_name(u), HANDSHAKE_MS / 1000);
    kill_group(u, SIGKILL);
  }
}

mcp_upstream *up_new(uv_loop_t *loop, const mcp_upstream_conf *conf,
                     mcp_log *log, const up_handlers *h, void *ud) {
  mcp_upstream *u = calloc(1, sizeof *u);
  if (!u) return NULL;
  u->loop = loop;
  u->conf = conf;
  u->log = log;
  u->log_tokens = LOG_BURST;
  u->log_at = uv_now(loop);
  u->h = *h;
  u->ud = ud;
  uv_timer_init(loop, &u->timer);
  u->timer.data = u;
  u->nopen = 1;
  return u;
}

void up_stop(mcp_upstream *u) {
  if (u->stopping) return;
  u->stopping = 1;
  if (u->running) {
    kill_group(u, SIGTERM);
    arm(u, KILL_GRACE_MS);
  } else {
    uv_timer_stop(&u->timer);
    u->state = UP_STOPPED;
  }
  fail_all(u, "toolgate is stopping");
}

void up_free(mcp_upstream *u) {
  if (!u) return;
  up_stop(u);
  kill_group(u, SIGKILL); /* freeing: no more grace */
  fail_all(u, "toolgate is stopping");
  if (u->conn) jrpc_close(u->conn);
  u->conn = NULL;
  cJSON_Delete(u->tools);
  cJSON_Delete(u->prompts);
  cJSON_Delete(u->resources);
  cJSON_Delete(u->templates);
  cJSON_Delete(u->caps);
  u->tools = u->prompts = u->resources = u->templates = u->caps = NULL;
  u->freeing = 1;
  /* the process handle closes in its exit callback, which SIGKILL brings */
  if (u->err_open) {
    u->err_open = 0;
    uv_close((uv_handle_t *)&u->err, handle_closed);
  }
  uv_close((uv_handle_t *)&u->timer, handle_closed);
}
