/*
 * gateway.c — toolgate in front of other MCP servers (the `servers` of
 * toolgate.lua). Each upstream (upstream.c) is started with the server;
 * its tools are registered in the runtime as C tools named
 * <server><separator><tool>, with tg_tool_def.group = <server> (call.server
 * to policies), so the chain runs them like any other tool and knows
 * nothing of MCP: a tool's start function forwards the call, its progress
 * comes back through tg_exec_progress, its cancel function tells the
 * upstream notifications/cancelled. The server lists and calls them
 * like the runtime's own tools: the gateway is a tool source to it
 * (tool_source.h), one that passes the upstreams' CallToolResults on as
 * they came. Its prompts and resources pass
 * through, named <server><separator><name> (a server of prefix = false:
 * its tools, prompts and resources keep their names); a resource keeps
 * its URI and is read from the upstream that listed it (and subscribed to there, and
 * completed there, as a prompt's arguments are at the prompt's upstream).
 * An upstream's requests of its client (elicitation, sampling, roots) go
 * to our client when it declared that capability, and are refused with
 * the reason when not: to a 2025-era client as requests of its session,
 * to a 2026-07-28 client as the input_required result of the one request
 * of ours in flight at that upstream (a tools/call, a prompts/get or a
 * resources/read parks: parked.c). Its log messages reach the clients that want their
 * level, the logger naming the server; its resources/updated the
 * clients that subscribed to the resource.
 *
 * Until every upstream has started once (or failed to), or the start-up
 * wait (mcp_options.startup_wait_ms) has passed, the server holds the
 * client's requests (server.c), so that the first tools/list already has
 * the upstream tools. The wait is short by default (an MCP Inspector gives
 * up on a request after 10 s); with none, the client is answered at once
 * and told list_changed when an upstream has listed.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gateway.h"

#define MAX_TOOL_NAME 128
#define MAX_TOOLS 1000     /* per upstream: a flood is not registered */
#define MAX_RELAYS 64      /* upstreams' questions open at the user at once */
#define MAX_SUBS 1024      /* resource subscriptions, all clients together */
#define MAX_LOGGER 128     /* bytes of an upstream's logger name we pass on */
#define MAX_LOG_DATA 16384 /* bytes of a log message's data we pass on */

/* ---- finding things --------------------------------------------------------------- */

static gw_tool *tool_named(const mcp_gateway *gw, const char *name) {
  for (size_t i = 0; gw && i < gw->ntools; i++)
    if (!strcmp(gw->tools[i]->name, name)) return gw->tools[i];
  return NULL;
}

size_t gw_index_of(const mcp_gateway *gw, const mcp_upstream *u) {
  size_t i = 0;
  while (i < gw->nups && gw->ups[i] != u) i++;
  return i;
}

/* ---- the gateway as a source of tools (tool_source.h) ------------------------------ */

/* Every name it took is its own: an upstream tool whose name a Lua tool
 * had taken first is not registered, and is never offered, so neither
 * is that Lua tool under the upstream's name. */
static int src_owns(void *ud, const char *tool) {
  return tool_named(ud, tool) != NULL;
}

static int src_offered(void *ud, const char *tool) {
  const gw_tool *t = tool_named(ud, tool);
  return t && t->offered;
}

static int src_reports_progress(void *ud, const char *tool) {
  const gw_tool *t = tool_named(ud, tool);
  return t && t->reports_progress;
}

/* The upstream's Tool, renamed. */
static cJSON *src_describe(void *ud, const cJSON *described) {
  const char *name =
      cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(described, "name"));
  const gw_tool *t = name ? tool_named(ud, name) : NULL;
  return t ? cJSON_Duplicate(t->def, 1) : NULL;
}

static int bare(const mcp_upstream *u) { return up_conf(u)->bare; }

static int lists_prompt(const mcp_upstream *u, const char *name) {
  const cJSON *p;
  cJSON_ArrayForEach(p, up_prompts(u)) {
    const char *n = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(p, "name"));
    if (n && !strcmp(name, n)) return 1;
  }
  return 0;
}

/* The upstream of a prompt's name and its own name (rest), or NULL: the
 * server of "<server><sep>rest", else a server of prefix = false that
 * lists the prompt under that very name. */
static mcp_upstream *by_prefix(const mcp_gateway *gw, const char *name,
                               const char **rest) {
  const char *sep = gw->s->opt.separator;
  for (size_t i = 0; name && i < gw->nups; i++) {
    size_t n = strlen(up_name(gw->ups[i]));
    if (!bare(gw->ups[i]) && !strncmp(name, up_name(gw->ups[i]), n) &&
        !strncmp(name + n, sep, strlen(sep))) {
      *rest = name + n + strlen(sep);
      return gw->ups[i];
    }
  }
  for (size_t i = 0; name && i < gw->nups; i++)
    if (bare(gw->ups[i]) && lists_prompt(gw->ups[i], name)) {
      *rest = name;
      return gw->ups[i];
    }
  return NULL;
}

/* What the client calls an upstream's tool or prompt `orig`. */
static void full_name(const mcp_gateway *gw, const mcp_upstream *u,
                      const char *orig, char *out, size_t size) {
  if (bare(u)) snprintf(out, size, "%s", orig);
  else snprintf(out, size, "%s%s%s", up_name(u), gw->s->opt.separator, orig);
}

/* ---- its tools in the runtime ------------------------------------------------------ */

static int valid_tool_name(const char *n) {
  size_t len = strlen(n);
  if (!len || len > MAX_TOOL_NAME) return 0;
  for (const char *p = n; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
          (*p >= '0' && *p <= '9') || *p == '_' || *p == '-' || *p == '.'))
      return 0;
  return 1;
}

static int read_only(const mcp_upstream_conf *c, const char *orig) {
  for (size_t i = 0; c->read_only && c->read_only[i]; i++)
    if (tg_glob_match(c->read_only[i], orig)) return 1;
  return 0;
}

/* Registers the tool in the runtime: with its schema when the runtime's
 * validator takes it, else without (the upstream validates its own). */
static int register_tool(mcp_gateway *gw, gw_tool *t) {
  const mcp_upstream_conf *c = up_conf(t->up);
  tg_tool_def d;
  memset(&d, 0, sizeof d);
  d.name = t->name;
  d.description = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(t->def, "description"));
  d.schema = cJSON_GetObjectItemCaseSensitive(t->def, "inputSchema");
  d.read_only = read_only(c, t->orig);
  d.timeout_ms = c->timeout_ms;
  d.start = gw_tool_start;
  d.cancel = gw_tool_cancel;
  d.ud = t;
  d.group = up_name(t->up);
  char err[TG_ERRMSG];
  if (tg_tool_register(gw->s->rt, &d, err) == 0) return 0;
  d.schema = NULL;
  if (tg_tool_register(gw->s->rt, &d, err) == 0) {
    mcp_logf(gw->s->log, MCP_LOG_NOTICE, "upstream %s: the input schema of %s "
             "is not one toolgate validates: the upstream checks its args",
             up_name(t->up), t->name);
    return 0;
  }
  mcp_logf(gw->s->log, MCP_LOG_WARNING, "upstream %s: tool %s not offered: %s",
           up_name(t->up), t->name, err);
  return -1;
}

static gw_tool *new_tool(mcp_gateway *gw, mcp_upstream *u, const char *orig,
                         const char *name) {
  gw_tool **grown = realloc(gw->tools, (gw->ntools + 1) * sizeof *grown);
  gw_tool *t = grown ? calloc(1, sizeof *t) : NULL;
  if (grown) gw->tools = grown;
  if (!t) return NULL;
  t->gw = gw;
  t->up = u;
  t->name = strdup(name);
  t->orig = strdup(orig);
  if (!t->name || !t->orig) {
    free(t->name);
    free(t->orig);
    free(t);
    return NULL;
  }
  gw->tools[gw->ntools++] = t;
  return t;
}

/* One tool of the upstream's list: kept (renamed) and registered once. */
static void take_tool(mcp_gateway *gw, mcp_upstream *u, const cJSON *def) {
  const char *orig = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(def, "name"));
  char name[MAX_TOOL_NAME * 2 + 64];
  if (!orig || !valid_tool_name(orig)) {
    mcp_logf(gw->s->log, MCP_LOG_WARNING, "upstream %s: a tool with a name "
             "that is not [A-Za-z0-9_.-]{1,128} is not offered", up_name(u));
    return;
  }
  const cJSON *exe = cJSON_GetObjectItemCaseSensitive(def, "execution");
  const char *task = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(exe, "taskSupport"));
  if (task && !strcmp(task, "required")) {
    mcp_logf(gw->s->log, MCP_LOG_NOTICE, "upstream %s: tool %s is not offered: "
             "it runs only as a task, which toolgate does not pass on",
             up_name(u), orig);
    return;
  }
  full_name(gw, u, orig, name, sizeof name);
  gw_tool *t = tool_named(gw, name);
  if (t && t->up != u) { /* two servers of prefix = false, one name */
    mcp_logf(gw->s->log, MCP_LOG_WARNING, "upstream %s: tool %s is not "
             "offered: upstream %s has that name", up_name(u), orig,
             up_name(t->up));
    return;
  }
  /* a name of its own may not take one toolgate has (exec, a Lua tool):
   * that tool would be the upstream's to the client */
  if (!t && bare(u) && tg_tool_exists(gw->s->rt, name)) {
    mcp_logf(gw->s->log, MCP_LOG_WARNING, "upstream %s: tool %s is not "
             "offered: toolgate has a tool of that name", up_name(u), orig);
    return;
  }
  int fresh = !t;
  if (!t && !(t = new_tool(gw, u, orig, name))) return;
  cJSON_Delete(t->def);
  t->def = cJSON_Duplicate(def, 1);
  cJSON_ReplaceItemInObjectCaseSensitive(t->def, "name", cJSON_CreateString(name));
  cJSON_DeleteItemFromObjectCaseSensitive(t->def, "execution"); /* toolgate calls it plainly */
  if (!cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(t->def, "inputSchema"))) {
    cJSON_DeleteItemFromObjectCaseSensitive(t->def, "inputSchema");
    cJSON_AddItemToObject(t->def, "inputSchema", cJSON_Parse("{\"type\":\"object\"}"));
  }
  if (fresh) t->registered = register_tool(gw, t) == 0;
  t->offered = t->registered;
}

/* The runtime keeps a tool as first registered (it has no way to drop
 * one): a tool the upstream stops offering is refused, and one whose
 * schema changed keeps the schema toolgate checks. */
static void sync_tools(mcp_gateway *gw, mcp_upstream *u) {
  for (size_t i = 0; i < gw->ntools; i++)
    if (gw->tools[i]->up == u) gw->tools[i]->offered = 0;
  const cJSON *def;
  int n = 0;
  cJSON_ArrayForEach(def, up_tools(u)) {
    if (n++ == MAX_TOOLS) {
      mcp_logf(gw->s->log, MCP_LOG_WARNING, "upstream %s lists more than %d "
               "tools: the rest are not offered", up_name(u), MAX_TOOLS);
      break;
    }
    take_tool(gw, u, def);
  }
  gw->s->tools_version++;
}

/* ---- start-up: hold the client until every upstream had its first go ---------------- */

static void settle(mcp_gateway *gw) {
  if (gw->settled) return;
  gw->settled = 1;
  if (gw->startup_open) uv_timer_stop(&gw->startup);
  mcp_release_held(gw->s);
}

static void first_done(mcp_gateway *gw, mcp_upstream *u) {
  size_t i = gw_index_of(gw, u), done = 0;
  if (i < gw->nups) gw->first_done[i] = 1;
  for (size_t k = 0; k < gw->nups; k++) done += gw->first_done[k] != 0;
  if (done == gw->nups) settle(gw);
}

static void startup_timeout(uv_timer_t *t) {
  mcp_gateway *gw = t->data;
  mcp_logf(gw->s->log, MCP_LOG_WARNING, "upstream servers still starting after "
           "%lld ms: serving without them for now (their tools, prompts and "
           "resources come with a list_changed)",
           (long long)gw->s->opt.startup_wait_ms);
  settle(gw);
}

int mcp_gateway_settling(const mcp_server *s) {
  return s->gw && !s->gw->settled;
}

/* ---- what upstreams tell ---------------------------------------------------------- */

static void tell_level(mcp_gateway *gw, mcp_upstream *u);
static void resubscribe(mcp_gateway *gw, mcp_upstream *u);

/* What an upstream offers that toolgate does not pass on is said once a
 * run: tasks (its tools are called plainly, as toolgate's client calls
 * toolgate's). */
static void say_unrelayed(mcp_gateway *gw, mcp_upstream *u) {
  if (cJSON_GetObjectItemCaseSensitive(up_caps(u), "tasks"))
    mcp_logf(gw->s->log, MCP_LOG_NOTICE, "upstream %s offers tasks: toolgate "
             "does not pass them on (the capability is not offered to the "
             "client; its tools are called without a task, and one that "
             "requires a task fails)", up_name(u));
}

/* The digest of lists a and b, either NULL (the same lists, whatever
 * their key order, the same digest); 0, or -1 out of memory. */
static int lists_digest(const cJSON *a, const cJSON *b, uint8_t out[TG_SHA256_SIZE]) {
  uint8_t two[2][TG_SHA256_SIZE];
  if (tg_json_digest(a, two[0]) < 0 || tg_json_digest(b, two[1]) < 0) return -1;
  tg_sha256(two, sizeof two, out);
  return 0;
}

/* Whether the clients are to be told that upstream i's prompts (which =
 * 0) or resources (1) changed: they did since they were last told, or
 * always is set; what they are now is remembered. */
static int lists_changed(mcp_gateway *gw, size_t i, mcp_upstream *u, int which,
                         int always) {
  uint8_t d[TG_SHA256_SIZE];
  if (i >= gw->nups) return 1;
  gw_lists_seen *seen = &gw->seen[i];
  uint8_t *kept = which ? seen->resources : seen->prompts;
  if (lists_digest(which ? up_resources(u) : up_prompts(u),
                   which ? up_templates(u) : NULL, d) < 0)
    return 1; /* cannot tell: say so */
  int changed = !(seen->have & (1 << which)) || !tg_digest_equal(d, kept, sizeof d);
  memcpy(kept, d, sizeof d);
  seen->have |= 1 << which;
  return always || changed;
}

static void on_listed(mcp_upstream *u, void *ud) {
  mcp_gateway *gw = ud;
  size_t i = gw_index_of(gw, u);
  int first = i < gw->nups && !gw->first_done[i];
  int fresh = i < gw->nups && gw->listed_start[i] != gw->starts[i] + 1;
  if (fresh) { /* a new run of it: what it does not get from us, said */
    gw->listed_start[i] = gw->starts[i] + 1;
    say_unrelayed(gw, u);
    tell_level(gw, u);
    if (!first) resubscribe(gw, u); /* a restart forgot them */
  }
  /* the client may have listed without it: the wait was over (or there
   * was none) before its first list */
  int late = gw->settled;
  sync_tools(gw, u);
  first_done(gw, u);
  mcp_tools_maybe_changed(gw->s);
  /* its first lists: told only when the client may have listed without
   * them; later ones when they differ from what it was told */
  int p = lists_changed(gw, i, u, 0, first && late),
      r = lists_changed(gw, i, u, 1, first && late);
  if (!first || late) {
    if (up_prompts(u) && p)
      mcp_notify_sessions(gw->s, "notifications/prompts/list_changed");
    if (up_resources(u) && r)
      mcp_notify_sessions(gw->s, "notifications/resources/list_changed");
  }
}

static void on_down(mcp_upstream *u, void *ud) {
  mcp_gateway *gw = ud;
  size_t i = gw_index_of(gw, u);
  if (i < gw->nups) gw->starts[i]++;
  first_done(gw, u);
}

static void drop_relay(mcp_gateway *gw, gw_relay *r) {
  gw_relay **pp = &gw->relays;
  while (*pp && *pp != r) pp = &(*pp)->next;
  if (*pp) *pp = r->next;
  cJSON_Delete(r->id);
  free(r);
}

/* The data as it came, but no bigger than MAX_LOG_DATA printed: a
 * longer one goes as its text, cut. */
cJSON *gw_log_params(int level, const char *logger, const cJSON *data) {
  cJSON *p = cJSON_CreateObject();
  cJSON_AddStringToObject(p, "level", mcp_log_level_name((mcp_log_level)level));
  cJSON_AddStringToObject(p, "logger", logger);
  char *text = data ? tg_json_print(data, 0) : NULL;
  if (text && strlen(text) > MAX_LOG_DATA) {
    strcpy(text + MAX_LOG_DATA - 4, "...");
    cJSON_AddStringToObject(p, "data", text);
  } else {
    cJSON_AddItemToObject(p, "data", data ? cJSON_Duplicate(data, 1) : cJSON_CreateNull());
  }
  free(text);
  return p;
}

/* Its log message, to each client that wants the level: the logger is
 * the server's name (and its own logger's, "server/logger"), the data as
 * it came. Our log has it already (upstream.c), behind the same rate
 * limit. */
static void relay_log(mcp_gateway *gw, mcp_upstream *u, const cJSON *params) {
  const char *level = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(params, "level"));
  const char *logger = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(params, "logger"));
  const cJSON *data = cJSON_GetObjectItemCaseSensitive(params, "data");
  int l = mcp_log_level_of(level);
  if (l < 0) l = MCP_LOG_INFO; /* a level it made up: said as info */
  char name[MAX_LOGGER * 2 + 2];
  if (logger && *logger)
    snprintf(name, sizeof name, "%s/%.*s", up_name(u), MAX_LOGGER, logger);
  else
    snprintf(name, sizeof name, "%s", up_name(u));
  for (mcp_session *ss = gw->s->sessions; ss; ss = ss->next)
    if (mcp_session_wants_log(ss, (mcp_log_level)l))
      mcp_notify(ss, NULL, "notifications/message", gw_log_params(l, name, data));
  /* and, request-scoped, to the 2026-07-28 calls it is running that asked */
  gw_fwds_log(gw, u, l, name, data);
}

/* Is uri the subscribed one, or under it ("might be a sub-resource of the
 * one that the client actually subscribed to")? */
static int covers(const char *sub, const char *uri) {
  size_t n = strlen(sub);
  return !strncmp(sub, uri, n) && (uri[n] == 0 || sub[n - 1] == '/' || uri[n] == '/');
}

static mcp_upstream *owner_of_uri(mcp_gateway *gw, const char *uri);

static int same_stream(const gw_sub *a, const gw_sub *b) {
  return a->ss == b->ss && (a->listen ? b->listen && tg_json_equal(a->listen, b->listen)
                                      : !b->listen);
}

/* Its resources/updated, to each client (each stream of a client) that
 * subscribed to a resource of its that covers the uri, once each. An
 * upstream speaks only for resources it lists, not for another's. */
static void relay_updated(mcp_gateway *gw, mcp_upstream *u, const cJSON *params) {
  const char *uri = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(params, "uri"));
  if (!uri) return;
  for (gw_sub *x = gw->subs; x; x = x->next) {
    if (!covers(x->uri, uri) || owner_of_uri(gw, x->uri) != u) continue;
    int told = 0;
    for (gw_sub *y = gw->subs; y != x && !told; y = y->next)
      told = same_stream(x, y) && covers(y->uri, uri) && owner_of_uri(gw, y->uri) == u;
    if (told || (!x->listen && !x->ss->initialized)) continue;
    cJSON *p = x->listen ? mcp_listen_params(x->listen) : cJSON_CreateObject();
    cJSON_AddStringToObject(p, "uri", uri);
    const cJSON *title = cJSON_GetObjectItemCaseSensitive(params, "title");
    if (cJSON_IsString(title)) cJSON_AddStringToObject(p, "title", title->valuestring);
    mcp_notify(x->ss, x->listen, "notifications/resources/updated", p);
  }
}

static void withdraw_relay(mcp_gateway *gw, gw_relay *r, const char *why) {
  if (r->park) mcp_parked_withdraw(r->park, r);
  else mcp_withdraw(r->pending, why);
  drop_relay(gw, r);
}

static void on_notification(mcp_upstream *u, const char *method,
                            const cJSON *params, void *ud) {
  mcp_gateway *gw = ud;
  if (!strcmp(method, "notifications/progress")) return gw_progress(gw, u, params);
  if (!strcmp(method, "notifications/message")) return relay_log(gw, u, params);
  if (!strcmp(method, "notifications/resources/updated"))
    return relay_updated(gw, u, params);
  if (strcmp(method, "notifications/cancelled")) return;
  const cJSON *id = cJSON_GetObjectItemCaseSensitive(params, "requestId");
  for (gw_relay *r = gw->relays; r && id; r = r->next)
    if (r->up == u && tg_json_equal(r->id, id)) { /* it withdrew its question */
      withdraw_relay(gw, r, "the upstream server withdrew it");
      return;
    }
}

static void relay_answer(mcp_session *ss, const cJSON *result,
                         const cJSON *error, void *ud) {
  (void)ss;
  gw_relay *r = ud;
  mcp_gateway *gw = r->gw;
  size_t i = gw_index_of(gw, r->up);
  if (i < gw->nups && gw->starts[i] == r->start) /* the run that asked */
    up_respond(r->up, r->id, result ? cJSON_Duplicate(result, 1) : NULL,
               error ? cJSON_Duplicate(error, 1) : NULL);
  drop_relay(gw, r);
}

static void refuse_relay(mcp_upstream *u, const cJSON *id, const char *why) {
  cJSON *e = cJSON_CreateObject();
  cJSON_AddNumberToObject(e, "code", JRPC_INTERNAL_ERROR);
  cJSON_AddStringToObject(e, "message", why);
  up_respond(u, id, NULL, e);
}

cJSON *gw_question(const mcp_upstream *u, const cJSON *params) {
  cJSON *p = cJSON_Duplicate(params, 1);
  const char *m = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(params, "message"));
  char *msg = malloc(strlen(m ? m : "") + strlen(up_name(u)) + 4);
  if (!p || !msg) {
    cJSON_Delete(p);
    free(msg);
    return NULL;
  }
  sprintf(msg, "[%s] %s", up_name(u), m ? m : "");
  cJSON_DeleteItemFromObjectCaseSensitive(p, "message");
  cJSON_AddStringToObject(p, "message", msg);
  free(msg);
  return p;
}

const char *gw_capability_for(const char *method) {
  if (!strcmp(method, "sampling/createMessage")) return "sampling";
  if (!strcmp(method, "roots/list")) return "roots";
  return "elicitation";
}

static void call_answered(const cJSON *result, const cJSON *error, void *ud) {
  relay_answer(NULL, result, error, ud);
}

static cJSON *relayed_params(const mcp_upstream *u, const char *method,
                             const cJSON *params) {
  if (!strcmp(gw_capability_for(method), "elicitation"))
    return gw_question(u, params);
  return cJSON_IsObject(params) ? cJSON_Duplicate(params, 1) : cJSON_CreateObject();
}

/* The upstream's request, held until the client's answer goes back to it
 * (gw->relays), with the params to put to the client in *relayed; or NULL
 * when out of memory (the upstream is told so). */
static gw_relay *new_relay(mcp_gateway *gw, mcp_upstream *u, const cJSON *id,
                           const char *method, const cJSON *params,
                           cJSON **relayed) {
  gw_relay *r = calloc(1, sizeof *r);
  cJSON *p = relayed_params(u, method, params);
  cJSON *own_id = cJSON_Duplicate(id, 1);
  if (!r || !p || !own_id) {
    free(r);
    cJSON_Delete(p);
    cJSON_Delete(own_id);
    refuse_relay(u, id, "out of memory");
    return NULL;
  }
  size_t i = gw_index_of(gw, u);
  *r = (gw_relay){gw, u, i < gw->nups ? gw->starts[i] : 0, own_id, NULL,
                  gw->relays, NULL};
  gw->relays = r;
  *relayed = p;
  return r;
}

/* Its request during a request of a 2026-07-28 client (a tools/call, a
 * prompts/get, a resources/read): that era has no requests of the client
 * during a request, only the request's input_required result (parked.c). */
static void relay_to_park(mcp_gateway *gw, mcp_upstream *u, const cJSON *id,
                          const char *method, const cJSON *params,
                          mcp_parked *pk) {
  cJSON *p;
  gw_relay *r = new_relay(gw, u, id, method, params, &p);
  if (!r) return;
  char why[300], msg[400];
  r->park = pk;
  if (mcp_parked_ask(pk, id, method, p, call_answered, r, why, sizeof why) == 0)
    return;
  drop_relay(gw, r);
  snprintf(msg, sizeof msg, "toolgate's client (%s era) cannot take %s "
           "during this %s: %s", MCP_STATELESS_VERSION, method,
           strcmp(pk->method, "tools/call") ? pk->method : "tool call", why);
  refuse_relay(u, id, msg);
}

/* The client's requests passed to u and waiting on its answer: how many,
 * and one of them in *one. */
static size_t passes_at(const mcp_gateway *gw, const mcp_upstream *u,
                        gw_pass **one) {
  size_t n = 0;
  for (gw_pass *p = gw->passes; p; p = p->next)
    if (p->up == u) {
      n++;
      *one = p;
    }
  return n;
}

/* The request of a 2026-07-28 client an upstream's request belongs to, or
 * NULL. The upstream's link says not which of its requests asks: with one
 * request of ours at it (a tool call, a prompts/get, ...), that one does. */
static mcp_parked *park_of(mcp_gateway *gw, mcp_upstream *u, size_t *inflight) {
  const char *call_id = NULL;
  gw_pass *pass = NULL;
  size_t calls = gw_calls_at(gw, u, &call_id);
  size_t passes = passes_at(gw, u, &pass);
  *inflight = calls + passes;
  if (calls + passes != 1) return NULL;
  if (calls) return mcp_call_park(gw->s, call_id);
  return pass->park.kind ? &pass->park : NULL;
}

/* Its request of its client, to ours: a question's message says which
 * server asks; sampling and roots go as they came (the client shows the
 * sampling request to its user before its model sees it). */
static void on_request(mcp_upstream *u, const cJSON *id, const char *method,
                       const cJSON *params, void *ud) {
  mcp_gateway *gw = ud;
  const char *cap = gw_capability_for(method);
  size_t inflight = 0;
  size_t open = 0;
  for (gw_relay *x = gw->relays; x; x = x->next) open++;
  if (open >= MAX_RELAYS)
    return refuse_relay(u, id, "too many questions are open at the user "
                        "already");
  mcp_parked *pk = park_of(gw, u, &inflight);
  if (pk) return relay_to_park(gw, u, id, method, params, pk);
  mcp_session *asker = mcp_server_asker_with(gw->s, cap);
  if (!asker && inflight > 1) {
    char why[300];
    snprintf(why, sizeof why, "toolgate cannot relay %s: %zu requests (tool "
             "calls, prompts, resources) are in flight at this server, and a "
             "%s client can be asked only through the request that asks, "
             "which toolgate cannot tell", method, inflight,
             MCP_STATELESS_VERSION);
    return refuse_relay(u, id, why);
  }
  if (!asker) {
    char why[200];
    snprintf(why, sizeof why, "toolgate's client cannot answer %s (it "
             "declared no %s capability)", method, cap);
    return refuse_relay(u, id, why);
  }
  cJSON *p;
  gw_relay *r = new_relay(gw, u, id, method, params, &p);
  if (!r) return;
  r->pending = mcp_ask_client(asker, NULL, method, p, relay_answer, r);
  if (!r->pending) {
    refuse_relay(u, id, "toolgate's client is gone");
    drop_relay(gw, r);
  }
}

/* ---- prompts and resources --------------------------------------------------------- */

static cJSON *gather(mcp_gateway *gw, const cJSON *(*list)(const mcp_upstream *),
                     int rename) {
  cJSON *all = cJSON_CreateArray();
  for (size_t i = 0; i < gw->nups; i++) {
    const cJSON *it;
    cJSON_ArrayForEach(it, list(gw->ups[i])) {
      cJSON *c = cJSON_Duplicate(it, 1);
      const char *n = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, "name"));
      if (rename && n && !bare(gw->ups[i])) {
        size_t size = strlen(up_name(gw->ups[i])) + strlen(gw->s->opt.separator) +
                      strlen(n) + 1;
        char *full = malloc(size);
        if (full) {
          full_name(gw, gw->ups[i], n, full, size);
          cJSON_ReplaceItemInObjectCaseSensitive(c, "name", cJSON_CreateString(full));
          free(full);
        }
      }
      cJSON_AddItemToArray(all, c);
    }
  }
  return all;
}

/* A CompleteResult as the revisions say: completion.values, at most 100
 * strings (a client refuses more, and the whole answer with them). */
static int completion_ok(const cJSON *result) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(result, "completion"), "values");
  const cJSON *it;
  if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) > 100) return 0;
  cJSON_ArrayForEach(it, v) if (!cJSON_IsString(it)) return 0;
  return 1;
}

static int session_alive(const mcp_server *s, const mcp_session *ss) {
  for (const mcp_session *x = s->sessions; x; x = x->next)
    if (x == ss) return 1;
  return 0;
}

static void unlink_pass(mcp_gateway *gw, gw_pass *p) {
  gw_pass **pp = &gw->passes;
  while (*pp && *pp != p) pp = &(*pp)->next;
  if (*pp) *pp = p->next;
}

/* The pass is done: the upstream's requests still waiting on its client
 * fail (the upstream has answered, or is told the request is cancelled). */
static void pass_free(gw_pass *p, const char *why) {
  gw_inputs_drop(&p->inputs, why); /* before the park: none answers now */
  mcp_parked_drop(&p->park, why);
  cJSON_Delete(p->id);
  cJSON_Delete(p->args);
  cJSON_Delete(p->params);
  free(p->subject);
  free(p);
}

/* The upstream's input_required answer: its requests go to the client
 * (upstream_ask.c), the pass waits on the answers. 0, or -1 with why. */
static int pass_asks(gw_pass *p, mcp_upstream *u, const cJSON *result,
                     char *why, size_t len) {
  if (!p->inputs.method) {
    snprintf(why, len, "upstream server '%s' answered with resultType "
             "'input_required', which toolgate passes on only for "
             "tools/call, prompts/get and resources/read", up_name(u));
    return -1;
  }
  if (!p->params) {
    snprintf(why, len, "upstream server '%s' answered input_required though "
             "it speaks the 2025 era", up_name(u));
    return -1;
  }
  if (gw_inputs_ask(&p->inputs, result, p->park.kind ? &p->park : NULL, p->ss,
                    why, len) < 0) {
    gw_inputs_drop(&p->inputs, "the request failed");
    return -1;
  }
  return 0;
}

static void on_pass_answer(mcp_upstream *u, const cJSON *result,
                           const cJSON *error, void *ud) {
  gw_pass *p = ud;
  unlink_pass(p->gw, p);
  p->up_id = 0;
  mcp_req req = {p->id, NULL, NULL, p->stateless, NULL};
  const char *rt = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(result, "resultType"));
  if (!session_alive(p->gw->s, p->ss)) {
    /* the client has gone meanwhile: nothing to answer */
  } else if (p->answered) {
    /* its request has its input_required: the retry, when it comes, is
     * a request as any (the state names nothing waiting) */
    mcp_logf(p->gw->s->log, MCP_LOG_INFO, "upstream %s answered %s %s before "
             "the client sent it again with the answers: dropped",
             up_name(u), p->park.method, p->park.subject);
  } else if (error) {
    const char *m = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(error, "message"));
    char msg[600];
    snprintf(msg, sizeof msg, "upstream server '%s': %.500s", up_name(u), m ? m : "error");
    mcp_reply_error(p->ss, p->id, jrpc_error_code(error, JRPC_INTERNAL_ERROR),
                    msg, NULL);
  } else if (p->completion && rt && !strcmp(rt, "input_required")) {
    char msg[300];
    snprintf(msg, sizeof msg, "upstream server '%s' answered "
             "completion/complete with resultType 'input_required', which "
             "toolgate passes on only for tools/call, prompts/get and "
             "resources/read", up_name(u));
    mcp_reply_error(p->ss, p->id, JRPC_INTERNAL_ERROR, msg, NULL);
  } else if (p->completion && !completion_ok(result)) {
    char msg[300];
    snprintf(msg, sizeof msg, "upstream server '%s' answered "
             "completion/complete with something that is not a completion "
             "({values: at most 100 strings, ...})", up_name(u));
    mcp_reply_error(p->ss, p->id, JRPC_INTERNAL_ERROR, msg, NULL);
  } else if (rt && !strcmp(rt, "input_required")) {
    char why[400];
    if (pass_asks(p, u, result, why, sizeof why) == 0) {
      p->next = p->gw->passes; /* waits on the client's answers */
      p->gw->passes = p;
      return;
    }
    mcp_reply_error(p->ss, p->id, JRPC_INTERNAL_ERROR, why, NULL);
  } else if (rt && strcmp(rt, "complete")) {
    /* a kind to come: passed off as complete it would mislead */
    char msg[300];
    snprintf(msg, sizeof msg, "upstream server '%s' answered with resultType "
             "'%.40s', which toolgate does not know", up_name(u), rt);
    mcp_reply_error(p->ss, p->id, JRPC_INTERNAL_ERROR, msg, NULL);
  } else {
    cJSON *r = cJSON_Duplicate(result, 1);
    cJSON_DeleteItemFromObjectCaseSensitive(r, "resultType");
    if (p->cacheable) mcp_cacheable(&req, r, 0, "private");
    mcp_reply(p->ss, &req, r);
  }
  pass_free(p, "the upstream has answered the request");
}

/* Every answer the upstream asked for is in: the same request goes again
 * with them and its requestState, and the pass waits on the answer. */
static void pass_again(gw_inputs *in) {
  gw_pass *p = (gw_pass *)((char *)in - offsetof(gw_pass, inputs));
  mcp_gateway *gw = p->gw;
  cJSON *params = cJSON_Duplicate(p->params, 1);
  if (params) gw_inputs_take(&p->inputs, params);
  if (params && (!p->ss || gw->stopped)) {
    cJSON_Delete(params);
    params = NULL;
  }
  p->up_id = params ? up_request(p->up, in->method, params, on_pass_answer, p)
                    : -1;
  if (p->up_id > 0) return;
  p->up_id = 0;
  unlink_pass(gw, p);
  if (p->ss && !p->answered && session_alive(gw->s, p->ss)) {
    char msg[300];
    snprintf(msg, sizeof msg, "upstream server '%s' cannot take %s again with "
             "the answers (it is not running); try again shortly",
             up_name(p->up), in->method);
    mcp_reply_error(p->ss, p->id, JRPC_INTERNAL_ERROR, msg, NULL);
  }
  pass_free(p, "the upstream is not running");
}

/* Sends method with params (taken) to u; the answer goes to the client.
 * what: the name or URI asked for, for the message when u is not up. */
static void pass(mcp_session *ss, const mcp_req *req, mcp_upstream *u,
                 const char *method, cJSON *params, const char *what) {
  mcp_gateway *gw = ss->s->gw;
  gw_pass *p = calloc(1, sizeof *p);
  if (p) {
    p->gw = gw;
    p->ss = ss;
    p->up = u;
    p->stateless = req->stateless;
    p->cacheable = !strcmp(method, "resources/read");
    p->completion = !strcmp(method, "completion/complete");
  }
  if (!p || !(p->id = cJSON_Duplicate(req->id, 1)) ||
      gw_pass_park_init(p, req, method) < 0) {
    if (p) pass_free(p, "out of memory");
    cJSON_Delete(params);
    mcp_reply_error(ss, req->id, JRPC_INTERNAL_ERROR, "out of memory", NULL);
    return;
  }
  const char *again = gw_pass_asking_method(method);
  p->inputs = (gw_inputs){gw, u, again, pass_again, 0, NULL, NULL, NULL};
  if (again && up_stateless(u) && !(p->params = cJSON_Duplicate(params, 1))) {
    pass_free(p, "out of memory");
    cJSON_Delete(params);
    mcp_reply_error(ss, req->id, JRPC_INTERNAL_ERROR, "out of memory", NULL);
    return;
  }
  p->up_id = up_request(u, method, params, on_pass_answer, p);
  if (p->up_id < 0) {
    pass_free(p, "the upstream is not running");
    gw_reply_unavailable(ss, req, u, what);
    return;
  }
  p->next = gw->passes;
  gw->passes = p;
}

int mcp_gateway_cancel(mcp_session *ss, const cJSON *id) {
  mcp_gateway *gw = ss->s->gw;
  gw_pass *p = gw && id ? gw->passes : NULL;
  while (p && !(p->ss == ss && tg_json_equal(p->id, id))) p = p->next;
  if (!p) return 0;
  unlink_pass(gw, p);
  if (!p->up_id) { /* none open at the upstream: the client's answers were */
    pass_free(p, "the client cancelled the request");
    return 1;
  }
  /* the upstream is told with its own id for the request; its answer, if
   * it comes still, is dropped */
  up_forget(p->up, p->up_id);
  cJSON *n = cJSON_CreateObject();
  cJSON_AddNumberToObject(n, "requestId", p->up_id);
  cJSON_AddStringToObject(n, "reason", "cancelled by toolgate's client");
  up_notify(p->up, "notifications/cancelled", n);
  mcp_logf(gw->s->log, MCP_LOG_INFO, "upstream %s: cancelled request %.0f "
           "(the client cancelled it)", up_name(p->up), p->up_id);
  pass_free(p, "the client cancelled the request");
  return 1;
}

/* The upstream that must answer a prompt's name no upstream lists yet: u
 * (the name's prefix) when it is not up, else the first server of prefix =
 * false still starting (it may list it). NULL: it is up, or the name is
 * unknown. */
static mcp_upstream *not_up(const mcp_gateway *gw, mcp_upstream *u) {
  if (u) return up_ready(u) ? NULL : u;
  return gw_first_starting(gw, 1);
}

static void quoted(char *out, size_t size, const char *text) {
  snprintf(out, size, "'%.200s'", text ? text : "");
}

static void get_prompt(mcp_session *ss, const mcp_req *req) {
  mcp_server *s = ss->s;
  const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(req->params, "name"));
  if (gw_pass_resume(ss, req, name)) return; /* answers to an upstream's requests */
  const char *orig = NULL;
  mcp_upstream *u = by_prefix(s->gw, name, &orig);
  mcp_upstream *down = name ? not_up(s->gw, u) : NULL;
  char what[210];
  quoted(what, sizeof what, name);
  if (down) return gw_reply_unavailable(ss, req, down, what);
  if (!u) {
    mcp_reply_error(ss, req->id, JRPC_INVALID_PARAMS, "prompts/get: unknown "
                    "prompt (prompts/list names them)", NULL);
    return;
  }
  cJSON *p = cJSON_CreateObject();
  cJSON_AddStringToObject(p, "name", orig);
  const cJSON *args = cJSON_GetObjectItemCaseSensitive(req->params, "arguments");
  if (cJSON_IsObject(args)) cJSON_AddItemToObject(p, "arguments", cJSON_Duplicate(args, 1));
  pass(ss, req, u, "prompts/get", p, what);
}

static int lists_uri(const mcp_upstream *u, const char *uri) {
  const cJSON *r;
  cJSON_ArrayForEach(r, up_resources(u)) {
    const char *x = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "uri"));
    if (x && !strcmp(x, uri)) return 1;
  }
  cJSON_ArrayForEach(r, up_templates(u)) { /* the part before the first '{' */
    const char *t = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "uriTemplate"));
    size_t n = t ? strcspn(t, "{") : 0;
    if (n && !strncmp(t, uri, n)) return 1;
  }
  return 0;
}

static mcp_upstream *owner_of_uri(mcp_gateway *gw, const char *uri) {
  for (size_t i = 0; uri && i < gw->nups; i++)
    if (lists_uri(gw->ups[i], uri)) return gw->ups[i];
  return NULL;
}

static void read_resource(mcp_session *ss, const mcp_req *req) {
  mcp_server *s = ss->s;
  const char *uri = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(req->params, "uri"));
  if (gw_pass_resume(ss, req, uri)) return; /* answers to an upstream's requests */
  mcp_upstream *u = owner_of_uri(s->gw, uri);
  char what[210];
  quoted(what, sizeof what, uri);
  if (!u && uri && (u = gw_first_starting(s->gw, 0)))
    return gw_reply_unavailable(ss, req, u, what);
  if (!u) {
    mcp_reply_error(ss, req->id, JRPC_INVALID_PARAMS, "resources/read: no "
                    "upstream server lists this uri (resources/list)", NULL);
    return;
  }
  cJSON *p = cJSON_CreateObject();
  cJSON_AddStringToObject(p, "uri", uri);
  pass(ss, req, u, "resources/read", p, what);
}

/* Does the upstream declare capability cap (and, when sub is given,
 * cap.sub true)? */
static int declares(const mcp_upstream *u, const char *cap, const char *sub) {
  const cJSON *c = cJSON_GetObjectItemCaseSensitive(up_caps(u), cap);
  if (!cJSON_IsObject(c)) return 0;
  return !sub || cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, sub));
}

/* completion/complete: at the upstream of the prompt (its own name) or of
 * the resource (template), the rest as the client sent it. */
static void complete(mcp_session *ss, const mcp_req *req) {
  mcp_gateway *gw = ss->s->gw;
  const cJSON *ref = cJSON_GetObjectItemCaseSensitive(req->params, "ref");
  const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ref, "type"));
  const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ref, "name"));
  const char *uri = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ref, "uri"));
  const cJSON *arg = cJSON_GetObjectItemCaseSensitive(req->params, "argument");
  const char *orig = NULL;
  mcp_upstream *u = NULL;
  if (!type || !cJSON_IsObject(arg)) {
    mcp_reply_error(ss, req->id, JRPC_INVALID_PARAMS, "completion/complete: "
                    "params.ref ({type, name | uri}) and params.argument "
                    "({name, value}) are required", NULL);
    return;
  }
  if (!strcmp(type, "ref/prompt")) u = by_prefix(gw, name, &orig);
  else if (!strcmp(type, "ref/resource")) u = owner_of_uri(gw, uri);
  char what[210];
  quoted(what, sizeof what, !strcmp(type, "ref/prompt") ? name : uri);
  mcp_upstream *down = NULL;
  if (!strcmp(type, "ref/prompt") && name) down = not_up(gw, u);
  else if (uri) down = u ? (up_ready(u) ? NULL : u) : gw_first_starting(gw, 0);
  if (down) return gw_reply_unavailable(ss, req, down, what);
  if (!u) {
    mcp_reply_error(ss, req->id, JRPC_INVALID_PARAMS, "completion/complete: "
                    "no upstream server offers this prompt or resource "
                    "(prompts/list, resources/templates/list)", NULL);
    return;
  }
  if (!declares(u, "completions", NULL)) {
    /* nothing to complete with: no suggestions, as the revision allows */
    mcp_reply(ss, req, cJSON_Parse("{\"completion\":{\"values\":[],"
                                   "\"hasMore\":false}}"));
    return;
  }
  cJSON *p = cJSON_Duplicate(req->params, 1);
  cJSON_DeleteItemFromObjectCaseSensitive(p, "_meta"); /* the client's era, not ours */
  if (orig) {
    cJSON *r = cJSON_GetObjectItemCaseSensitive(p, "ref");
    cJSON_ReplaceItemInObjectCaseSensitive(r, "name", cJSON_CreateString(orig));
  }
  pass(ss, req, u, "completion/complete", p, what);
}

/* The session's resources/subscribe of uri (not a stream's). */
static gw_sub **sub_of(mcp_gateway *gw, const mcp_session *ss, const char *uri) {
  gw_sub **pp = &gw->subs;
  while (*pp && !((*pp)->ss == ss && !(*pp)->listen && !strcmp((*pp)->uri, uri)))
    pp = &(*pp)->next;
  return pp;
}

static void sub_free(gw_sub *x) {
  cJSON_Delete(x->listen);
  free(x->uri);
  free(x);
}

static size_t count_subs(const mcp_gateway *gw) {
  size_t n = 0;
  for (const gw_sub *x = gw->subs; x; x = x->next) n++;
  return n;
}

static int subscribed(const mcp_gateway *gw, const char *uri) {
  for (const gw_sub *x = gw->subs; x; x = x->next)
    if (!strcmp(x->uri, uri)) return 1;
  return 0;
}

/* resources/subscribe and unsubscribe: to the upstream that lists the
 * uri; we keep who subscribed to what, for its resources/updated. A
 * session's subscription: the 2026-07-28 era subscribes through
 * subscriptions/listen, which toolgate does not offer. */
static void subscribe(mcp_session *ss, const mcp_req *req, int on) {
  mcp_gateway *gw = ss->s->gw;
  const char *uri = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(req->params, "uri"));
  mcp_upstream *u = owner_of_uri(gw, uri);
  const char *bad = NULL;
  char what[210];
  quoted(what, sizeof what, uri);
  mcp_upstream *down = NULL;
  if (!req->stateless && uri)
    down = u ? (up_ready(u) ? NULL : u) : gw_first_starting(gw, 0);
  if (down) return gw_reply_unavailable(ss, req, down, what);
  if (req->stateless)
    bad = "resources/subscribe and unsubscribe belong to a 2025-era session "
          "(the 2026-07-28 era has subscriptions/listen, which toolgate does "
          "not offer)";
  else if (!uri)
    bad = "params.uri must be a string";
  else if (!u)
    bad = "no upstream server lists this uri (resources/list)";
  else if (!declares(u, "resources", "subscribe"))
    bad = "the upstream server that has this resource offers no "
          "subscriptions";
  if (bad) {
    char msg[300];
    snprintf(msg, sizeof msg, "%s: %s", req->method, bad);
    mcp_reply_error(ss, req->id, JRPC_INVALID_PARAMS, msg, NULL);
    return;
  }
  gw_sub **pp = sub_of(gw, ss, uri);
  if (on && !*pp) {
    size_t n = count_subs(gw);
    gw_sub *x = n < MAX_SUBS ? calloc(1, sizeof *x) : NULL;
    if (!x || !(x->uri = strdup(uri))) {
      free(x);
      mcp_reply_error(ss, req->id, JRPC_INTERNAL_ERROR, n < MAX_SUBS
                      ? "out of memory" : "resources/subscribe: too many "
                      "subscriptions already", NULL);
      return;
    }
    x->ss = ss;
    x->next = gw->subs;
    gw->subs = x;
  } else if (!on && *pp) {
    gw_sub *x = *pp;
    *pp = x->next;
    sub_free(x);
  }
  if (!on && subscribed(gw, uri)) /* another client's subscription stands */
    return mcp_reply(ss, req, cJSON_CreateObject());
  cJSON *p = cJSON_CreateObject();
  cJSON_AddStringToObject(p, "uri", uri);
  pass(ss, req, u, req->method, p, what);
}

static void upstream_subscribed(mcp_upstream *u, const cJSON *result,
                                const cJSON *error, void *ud) {
  mcp_gateway *gw = ud;
  (void)result;
  const char *m = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(error, "message"));
  if (error)
    mcp_logf(gw->s->log, MCP_LOG_WARNING, "upstream %s: a resource "
             "subscription failed: %.300s", up_name(u), m ? m : "?");
}

/* After a restart the upstream has forgotten the subscriptions: each URI
 * of its that a client subscribed to is subscribed to again (once). */
static void resubscribe(mcp_gateway *gw, mcp_upstream *u) {
  for (gw_sub *x = gw->subs; x; x = x->next) {
    int again = 0;
    for (gw_sub *y = gw->subs; y != x && !again; y = y->next)
      again = !strcmp(y->uri, x->uri);
    if (again || owner_of_uri(gw, x->uri) != u) continue;
    cJSON *p = cJSON_CreateObject();
    cJSON_AddStringToObject(p, "uri", x->uri);
    up_request(u, "resources/subscribe", p, upstream_subscribed, gw);
  }
}

void mcp_gateway_roots_changed(mcp_server *s) {
  for (size_t i = 0; s->gw && i < s->gw->nups; i++)
    if (up_ready(s->gw->ups[i]) && !up_stateless(s->gw->ups[i]))
      up_notify(s->gw->ups[i], "notifications/roots/list_changed", NULL);
}

static void upstream_subscribed(mcp_upstream *u, const cJSON *result,
                                const cJSON *error, void *ud);

/* To the upstream, for a stream: the answer goes to our log only. */
static void tell_subscription(mcp_gateway *gw, mcp_upstream *u, const char *uri,
                              int on) {
  cJSON *p = cJSON_CreateObject();
  cJSON_AddStringToObject(p, "uri", uri);
  up_request(u, on ? "resources/subscribe" : "resources/unsubscribe", p,
             upstream_subscribed, gw);
}

int mcp_gateway_listen_uri(mcp_session *ss, const cJSON *listen,
                           const char *uri) {
  mcp_gateway *gw = ss->s->gw;
  mcp_upstream *u = gw ? owner_of_uri(gw, uri) : NULL;
  if (!u || !declares(u, "resources", "subscribe") || count_subs(gw) >= MAX_SUBS)
    return -1;
  gw_sub *x = calloc(1, sizeof *x);
  if (x) {
    x->listen = cJSON_Duplicate(listen, 1);
    x->uri = strdup(uri);
  }
  if (!x || !x->listen || !x->uri) {
    if (x) sub_free(x);
    return -1;
  }
  x->ss = ss;
  int known = subscribed(gw, uri);
  x->next = gw->subs;
  gw->subs = x;
  if (!known) tell_subscription(gw, u, uri, 1);
  return 0;
}

void mcp_gateway_listen_gone(mcp_server *s, mcp_session *ss,
                             const cJSON *listen) {
  mcp_gateway *gw = s->gw;
  if (!gw) return;
  gw_sub **pp = &gw->subs;
  while (*pp) {
    gw_sub *x = *pp;
    if (x->ss != ss || !x->listen || !tg_json_equal(x->listen, listen)) {
      pp = &x->next;
      continue;
    }
    *pp = x->next;
    mcp_upstream *u = owner_of_uri(gw, x->uri);
    if (u && !subscribed(gw, x->uri)) tell_subscription(gw, u, x->uri, 0);
    sub_free(x);
  }
}

void mcp_gateway_session_gone(mcp_server *s, mcp_session *ss) {
  if (!s->gw) return;
  for (gw_pass **pp = &s->gw->passes; *pp;) {
    gw_pass *p = *pp;
    if (p->ss != ss) {
      pp = &p->next;
      continue;
    }
    p->ss = NULL; /* its answer has no one to go to */
    if (!p->up_id) { /* waiting on that client's answers: over */
      *pp = p->next;
      pass_free(p, "toolgate's client has gone");
      continue;
    }
    mcp_parked_drop(&p->park, "toolgate's client has gone");
    pp = &p->next;
  }
  gw_sub **pp = &s->gw->subs;
  while (*pp) {
    gw_sub *x = *pp;
    if (x->ss != ss) {
      pp = &x->next;
      continue;
    }
    *pp = x->next;
    sub_free(x);
  }
}

static void level_told(mcp_upstream *u, const cJSON *result,
                       const cJSON *error, void *ud) {
  mcp_gateway *gw = ud;
  (void)result;
  const char *m = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(error, "message"));
  if (error)
    mcp_logf(gw->s->log, MCP_LOG_DEBUG, "upstream %s: logging/setLevel "
             "failed: %.300s", up_name(u), m ? m : "?");
}

/* The lowest level any client wants, to the upstreams that log (they
 * need not send what no one reads; what they send is filtered per client
 * all the same). Also after an upstream's (re)start. */
static void tell_level(mcp_gateway *gw, mcp_upstream *u) {
  if (gw->log_level < 0 || !declares(u, "logging", NULL)) return;
  cJSON *p = cJSON_CreateObject();
  cJSON_AddStringToObject(p, "level", mcp_log_level_name((mcp_log_level)gw->log_level));
  up_request(u, "logging/setLevel", p, level_told, gw);
}

void mcp_gateway_log_level(mcp_server *s) {
  mcp_gateway *gw = s->gw;
  if (!gw) return;
  int lowest = -1;
  for (mcp_session *ss = s->sessions; ss; ss = ss->next) {
    int l = ss->initialized ? ss->log_level : -1;
    if (l >= 0 && (lowest < 0 || l < lowest)) lowest = l;
  }
  if (lowest < 0 || lowest == gw->log_level) return;
  gw->log_level = lowest;
  for (size_t i = 0; i < gw->nups; i++)
    if (up_ready(gw->ups[i])) tell_level(gw, gw->ups[i]);
}

int mcp_gateway_request(mcp_session *ss, const mcp_req *req) {
  mcp_gateway *gw = ss->s->gw;
  if (!gw) return -1;
  const char *m = req->method;
  const char *key = NULL;
  cJSON *list = NULL;
  if (!strcmp(m, "prompts/get")) return get_prompt(ss, req), 0;
  if (!strcmp(m, "resources/read")) return read_resource(ss, req), 0;
  if (!strcmp(m, "completion/complete")) return complete(ss, req), 0;
  if (!strcmp(m, "resources/subscribe")) return subscribe(ss, req, 1), 0;
  if (!strcmp(m, "resources/unsubscribe")) return subscribe(ss, req, 0), 0;
  if (!strcmp(m, "prompts/list")) {
    key = "prompts";
    list = gather(gw, up_prompts, 1);
  } else if (!strcmp(m, "resources/list")) {
    key = "resources";
    list = gather(gw, up_resources, 1);
  } else if (!strcmp(m, "resources/templates/list")) {
    key = "resourceTemplates";
    list = gather(gw, up_templates, 1);
  } else {
    return -1;
  }
  /* the upstreams' lists as toolgate holds them: the same for every
   * client, and fresh until an upstream says they changed */
  cJSON *r = cJSON_CreateObject();
  cJSON_AddItemToObject(r, key, list);
  mcp_cacheable(req, r, ss->s->opt.tools_ttl_ms, "public");
  mcp_reply(ss, req, r);
  return 0;
}

/* Said before the upstreams have answered (initialize is not held): what
 * an upstream turns out not to offer is refused, or completed with no
 * values, when asked. */
void mcp_gateway_capabilities(mcp_server *s, cJSON *caps) {
  if (!s->gw) return;
  cJSON_AddTrueToObject(cJSON_AddObjectToObject(caps, "prompts"), "listChanged");
  cJSON *r = cJSON_AddObjectToObject(caps, "resources");
  cJSON_AddTrueToObject(r, "listChanged");
  cJSON_AddTrueToObject(r, "subscribe");
  cJSON_AddObjectToObject(caps, "completions");
}

/* ---- life ------------------------------------------------------------------------- */

int mcp_gateway_start(mcp_server *s, char err[TG_ERRMSG]) {
  static const up_handlers h = {on_listed, on_down, on_notification, on_request};
  if (!s->opt.nupstreams) return 0;
  mcp_gateway *gw = calloc(1, sizeof *gw);
  size_t n = s->opt.nupstreams;
  if (gw) {
    gw->ups = calloc(n, sizeof *gw->ups);
    gw->starts = calloc(n, sizeof *gw->starts);
    gw->first_done = calloc(n, sizeof *gw->first_done);
    gw->listed_start = calloc(n, sizeof *gw->listed_start);
    gw->seen = calloc(n, sizeof *gw->seen);
  }
  if (!gw || !gw->ups || !gw->starts || !gw->first_done || !gw->listed_start ||
      !gw->seen) {
    if (gw) {
      free(gw->ups);
      free(gw->starts);
      free(gw->first_done);
      free(gw->listed_start);
      free(gw->seen);
    }
    free(gw);
    snprintf(err, TG_ERRMSG, "out of memory");
    return -1;
  }
  gw->s = s;
  s->gw = gw;
  gw->src = (mcp_tool_source){"gateway", src_owns, src_offered, src_describe,
                              1, gw, src_reports_progress};
  gw->log_level = -1;
  mcp_tools_add_source(s, &gw->src);
  uv_timer_init(s->loop, &gw->startup);
  gw->startup.data = gw;
  gw->startup_open = 1;
  if (s->opt.startup_wait_ms > 0)
    uv_timer_start(&gw->startup, startup_timeout,
                   (uint64_t)s->opt.startup_wait_ms, 0);
  else
    gw->settled = 1; /* no wait: requests are answered at once */
  for (size_t i = 0; i < n; i++) {
    gw->ups[i] = up_new(s->loop, &s->opt.upstreams[i], s->log, &h, gw);
    if (!gw->ups[i]) {
      snprintf(err, TG_ERRMSG, "out of memory");
      return -1;
    }
    gw->nups++;
  }
  for (size_t i = 0; i < n; i++) up_start(gw->ups[i]); /* failures restart */
  return 0;
}

void mcp_gateway_stop(mcp_server *s) {
  mcp_gateway *gw = s->gw;
  if (!gw || gw->stopped) return;
  gw->stopped = 1;
  settle(gw);
  while (gw->relays) withdraw_relay(gw, gw->relays, "toolgate is stopping");
  /* a pass waiting on its client's answers has nothing at the upstream
   * to end it: it ends here */
  for (gw_pass **pp = &gw->passes; *pp;) {
    gw_pass *p = *pp;
    if (p->up_id) {
      pp = &p->next;
      continue;
    }
    *pp = p->next;
    if (p->ss && !p->answered && session_alive(s, p->ss))
      mcp_reply_error(p->ss, p->id, JRPC_INTERNAL_ERROR, "toolgate is "
                      "stopping", NULL);
    pass_free(p, "toolgate is stopping");
  }
  for (size_t i = 0; i < gw->nups; i++) up_stop(gw->ups[i]);
}

int mcp_gateway_busy(const mcp_server *s) {
  for (size_t i = 0; s->gw && i < s->gw->nups; i++)
    if (up_busy(s->gw->ups[i])) return 1;
  return 0;
}

static void startup_closed(uv_handle_t *h) { free(h->data); }

/* The tools stay registered in the runtime, which outlives us by a little,
 * with their ud freed here: the server has cancelled its calls (each
 * forwarded attempt ended in tool_cancel or with its upstream's answer)
 * and takes no new ones, so no start or cancel function of ours runs
 * again. The runtime goes next; it has no way to unregister a tool. */
void mcp_gateway_free(mcp_server *s) {
  mcp_gateway *gw = s->gw;
  if (!gw) return;
  mcp_gateway_stop(s);
  for (size_t i = 0; i < gw->nups; i++) up_free(gw->ups[i]);
  gw_fwds_free(gw); /* answered by up_free's fail_all already; to be sure */
  while (gw->passes) { /* the same */
    gw_pass *p = gw->passes;
    gw->passes = p->next;
    pass_free(p, "toolgate is stopping");
  }
  for (size_t i = 0; i < gw->ntools; i++) {
    free(gw->tools[i]->name);
    free(gw->tools[i]->orig);
    cJSON_Delete(gw->tools[i]->def);
    free(gw->tools[i]);
  }
  free(gw->tools);
  free(gw->ups);
  free(gw->starts);
  free(gw->first_done);
  free(gw->listed_start);
  free(gw->seen);
  while (gw->subs) {
    gw_sub *x = gw->subs;
    gw->subs = x->next;
    sub_free(x);
  }
  mcp_tools_remove_source(s, &gw->src);
  s->gw = NULL;
  uv_close((uv_handle_t *)&gw->startup, startup_closed); /* frees gw */
}
