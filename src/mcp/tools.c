/*
 * tools.c — tools/list and tools/call.
 *
 * The list is what tg_runtime_describe gives (built-ins, Lua tools, the
 * gateway's upstream tools), each described by the source it belongs to
 * (tool_source.h: the gateway's, or the runtime's own), through the
 * expose filter, sorted by name
 * so that it is the same list every time; it is remade when the policy
 * generation or the C tools change. A call goes through the whole chain
 * with tg_call_start: its progress events become notifications/progress
 * when the request carried a progressToken, notifications/cancelled
 * cancels it, and its outcome becomes a CallToolResult — failures,
 * denials and rejections as isError results carrying the text the agent
 * should read; only faults of the request itself are JSON-RPC errors.
 */
#include <stdio.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "mcp.h"
#include "kit/mcp_services.h"

/* ---- the sources --------------------------------------------------------------- */

int mcp_tools_add_source(mcp_server *s, const mcp_tool_source *src) {
  if (s->nsources == sizeof s->sources / sizeof *s->sources) return -1;
  s->sources[s->nsources++] = src;
  s->tools_version++;
  return 0;
}

void mcp_tools_remove_source(mcp_server *s, const mcp_tool_source *src) {
  for (size_t i = 0; i < s->nsources; i++)
    if (s->sources[i] == src) {
      memmove(&s->sources[i], &s->sources[i + 1],
              (s->nsources - i - 1) * sizeof *s->sources);
      s->nsources--;
      s->tools_version++;
      return;
    }
}

/* An MCP Tool from one tool of tg_runtime_describe. */
static cJSON *runtime_tool(void *ud, const cJSON *t) {
  (void)ud;
  cJSON *o = cJSON_CreateObject();
  const cJSON *schema = cJSON_GetObjectItemCaseSensitive(t, "schema");
  const char *desc = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(t, "description"));
  cJSON_AddStringToObject(o, "name", cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(t, "name")));
  if (desc) cJSON_AddStringToObject(o, "description", desc);
  /* inputSchema is always an object schema: a tool with none takes any */
  const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(schema, "type"));
  if (schema && type && !strcmp(type, "object"))
    cJSON_AddItemToObject(o, "inputSchema", cJSON_Duplicate(schema, 1));
  else
    cJSON_AddItemToObject(o, "inputSchema",
                          cJSON_Parse("{\"type\":\"object\"}"));
  cJSON *ann = cJSON_AddObjectToObject(o, "annotations");
  cJSON_AddBoolToObject(ann, "readOnlyHint",
                        cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(t, "read_only")));
  return o;
}

static int runtime_owns(void *ud, const char *tool) { return 1; }

/* The runtime's own tools (built-ins, Lua tools): any tool no other
 * source claims. */
static const mcp_tool_source runtime_source = {
    "runtime", runtime_owns, NULL, runtime_tool, 0, NULL, NULL};

static const mcp_tool_source *source_of(const mcp_server *s, const char *tool) {
  for (size_t i = 0; i < s->nsources; i++)
    if (s->sources[i]->owns(s->sources[i]->ud, tool)) return s->sources[i];
  return &runtime_source;
}

/* ---- the list -------------------------------------------------------------- */

/* Hidden by the expose globs? No positive glob: everything is in; then
 * any "!glob" that matches hides. */
int mcp_tool_hidden(const mcp_server *s, const char *name) {
  const char *const *g = s->opt.expose;
  int positives = 0, in = 0;
  for (size_t i = 0; g && g[i]; i++) {
    if (g[i][0] == '!') {
      if (tg_glob_match(g[i] + 1, name)) return 1;
    } else {
      positives = 1;
      in = in || tg_glob_match(g[i], name);
    }
  }
  return positives && !in;
}

static int by_name(const void *a, const void *b) {
  const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;
  return strcmp(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(x, "name")),
                cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(y, "name")));
}

/* Sorts the array's items by "name", in place. */
static void sort_by_name(cJSON *list) {
  int n = cJSON_GetArraySize(list);
  if (n < 2) return;
  cJSON **v = malloc((size_t)n * sizeof *v);
  if (!v) return;
  int k = 0;
  while (list->child) v[k++] = cJSON_DetachItemViaPointer(list, list->child);
  qsort(v, (size_t)n, sizeof *v, by_name);
  for (int i = 0; i < n; i++) cJSON_AddItemToArray(list, v[i]);
  free(v);
}

/* The tools of the runtime that the expose globs let through, sorted,
 * then through the policies' tg.list_tools hooks (which see "server" on a
 * gateway's tools; the client does not). */
static cJSON *build_list(mcp_server *s) {
  cJSON *d = tg_runtime_describe(s->rt);
  cJSON *list = cJSON_CreateArray();
  const cJSON *t;
  cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(d, "tools")) {
    const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(t, "name"));
    const char *group = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(t, "group"));
    if (!name || mcp_tool_hidden(s, name)) continue;
    const mcp_tool_source *src = source_of(s, name);
    if (src->offered && !src->offered(src->ud, name)) continue;
    cJSON *tool = src->describe(src->ud, t);
    if (tool && group) cJSON_AddStringToObject(tool, "server", group);
    if (tool) cJSON_AddItemToArray(list, tool);
  }
  cJSON_Delete(d);
  sort_by_name(list);
  cJSON *hooked = tg_runtime_list_tools(s->rt, list);
  if (hooked) {
    cJSON_Delete(list);
    list = hooked;
  }
  cJSON_ArrayForEach(t, list) cJSON_DeleteItemFromObjectCaseSensitive((cJSON *)t, "server");
  return list;
}

const cJSON *mcp_tool_list(mcp_server *s) {
  mcp_tool_cache *c = &s->tools;
  uint64_t gen = tg_runtime_generation(s->rt);
  if (c->list && c->generation == gen && c->version == s->tools_version)
    return c->list;
  cJSON_Delete(c->list);
  c->list = build_list(s);
  c->generation = gen;
  c->version = s->tools_version;
  return c->list;
}

int mcp_tool_exposed(mcp_server *s, const char *name) {
  const cJSON *t;
  cJSON_ArrayForEach(t, mcp_tool_list(s))
    if (!strcmp(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(t, "name")), name))
      return 1;
  return 0;
}

void mcp_tools_maybe_changed(mcp_server *s) {
  /* keys sorted: the list comes out of the policies' tg.list_tools hooks
   * as Lua tables, whose keys a second pass may order otherwise (LuaJIT's
   * tables do): the same list must give the same digest */
  uint8_t d[TG_SHA256_SIZE];
  if (tg_json_digest(mcp_tool_list(s), d) < 0) return;
  int changed = s->tools.have_digest && !tg_digest_equal(d, s->tools.digest, sizeof d);
  memcpy(s->tools.digest, d, sizeof d);
  s->tools.have_digest = 1;
  int told = 0;
  for (mcp_session *ss = s->sessions; ss; ss = ss->next)
    told |= ss->initialized || ss->listens;
  if (!changed || !told) return;
  mcp_logf(s->log, MCP_LOG_INFO, "the tool list changed: telling the client");
  mcp_notify_sessions(s, "notifications/tools/list_changed");
}

void mcp_tools_list(mcp_session *ss, const mcp_req *req) {
  mcp_server *s = ss->s;
  if (cJSON_GetObjectItemCaseSensitive(req->params, "cursor")) {
    mcp_reply_error(ss, req->id, JRPC_INVALID_PARAMS,
                    "tools/list: unknown cursor (this server lists every tool "
                    "at once and gives no cursor)", NULL);
    return;
  }
  cJSON *r = cJSON_CreateObject();
  cJSON_AddItemToObject(r, "tools", cJSON_Duplicate(mcp_tool_list(s), 1));
  if (!s->tools.have_digest) mcp_tools_maybe_changed(s); /* the baseline */
  mcp_cacheable(req, r, s->opt.tools_ttl_ms, "public");
  mcp_reply(ss, req, r);
}

/* ---- calls in flight --------------------------------------------------------- */

static int same_id(const cJSON *a, const cJSON *b) {
  if (cJSON_IsString(a) && cJSON_IsString(b))
    return !strcmp(a->valuestring, b->valuestring);
  return cJSON_IsNumber(a) && cJSON_IsNumber(b) &&
         a->valuedouble == b->valuedouble;
}

static mcp_call *call_by_request(mcp_session *ss, const cJSON *id) {
  for (mcp_call *c = ss->calls; c; c = c->next)
    if (same_id(c->id, id)) return c;
  return NULL;
}

static mcp_call *session_call(mcp_session *ss, const char *call_id) {
  for (mcp_call *c = ss->calls; c && call_id; c = c->next)
    if (!strcmp(c->call_id, call_id)) return c;
  return NULL;
}


static void link_call(mcp_session *ss, mcp_call *c) {
  c->next = ss->calls;
  if (ss->calls) ss->calls->prev = c;
  ss->calls = c;
  ss->ncalls++;
}

static void unlink_call(mcp_session *ss, mcp_call *c) {
  if (c->prev) c->prev->next = c->next;
  else ss->calls = c->next;
  if (c->next) c->next->prev = c->prev;
  ss->ncalls--;
}

static void call_free(mcp_call *c) {
  mcp_parked_drop(&c->park, "the tool call ended before the client answered");
  cJSON_Delete(c->id);
  cJSON_Delete(c->args);
  cJSON_Delete(c->progress_token);
  cJSON_Delete(c->held_progress);
  free(c->tool);
  free(c->preset_guidance);
  free(c);
}

void mcp_calls_cancel_all(mcp_session *ss) {
  mcp_server *s = ss->s;
  size_t n = 0;
  char (*ids)[48] = ss->ncalls ? malloc(ss->ncalls * sizeof *ids) : NULL;
  for (mcp_call *c = ss->calls; c; c = c->next) {
    c->cancelled = 1;
    mcp_approval_drop(c);
    if (ids) memcpy(ids[n++], c->call_id, sizeof *ids);
  }
  /* by id: a call may end (and go) while another is cancelled. One the
   * chain has already ended (-ENOENT: its answer only waits for its audit
   * record) is answered as it ended, not dropped. */
  for (size_t i = 0; i < n; i++)
    if (tg_call_cancel(s->rt, ids[i]) == -ENOENT) {
      mcp_call *c = session_call(ss, ids[i]);
      if (c) c->cancelled = 0;
    }
  free(ids);
}

/* Calls still running when the server goes are orphaned, not freed: the
 * runtime still holds them and ends them (tg_runtime_free cancels and
 * waits); their done frees them then. */
void mcp_calls_free(mcp_session *ss) {
  while (ss->calls) {
    mcp_call *c = ss->calls;
    unlink_call(ss, c);
    c->ss = NULL;
  }
}

void mcp_cancelled(mcp_session *ss, const cJSON *params) {
  mcp_server *s = ss->s;
  const cJSON *id = cJSON_GetObjectItemCaseSensitive(params, "requestId");
  mcp_call *c = id ? call_by_request(ss, id) : NULL;
  if (!c && mcp_gateway_cancel(ss, id)) return; /* passed to an upstream */
  if (!c) { /* it may have ended already: the race the spec allows */
    mcp_logf(s->log, MCP_LOG_DEBUG, "cancel of a request not in flight");
    return;
  }
  const char *why = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(params, "reason"));
  mcp_logf(s->log, MCP_LOG_INFO, "the client cancelled %s (%s)%s%s",
           c->call_id, c->tool, why ? ": " : "", why ? why : "");
  c->cancelled = 1;
  mcp_approval_drop(c);
  tg_call_cancel(s->rt, c->call_id);
}

/* ---- outcomes as CallToolResults ------------------------------------------- */

static void add_text(cJSON *content, const char *text) {
  cJSON *t = cJSON_CreateObject();
  cJSON_AddStringToObject(t, "type", "text");
  cJSON_AddStringToObject(t, "text", text);
  cJSON_AddItemToArray(content, t);
}

/* toolgate's facts about the outcome, in _meta (machines; the agent reads
 * the text). */
static void add_outcome_meta(cJSON *r, const tg_outcome *o) {
  cJSON *meta = cJSON_GetObjectItemCaseSensitive(r, "_meta");
  if (!cJSON_IsObject(meta)) {
    cJSON_DeleteItemFromObjectCaseSensitive(r, "_meta");
    meta = cJSON_AddObjectToObject(r, "_meta");
  }
  cJSON_DeleteItemFromObjectCaseSensitive(meta, MCP_META_OUTCOME);
  cJSON *m = cJSON_CreateObject();
  if (!m || !cJSON_AddItemToObjectCS(meta, MCP_META_OUTCOME, m)) {
    cJSON_Delete(m);
    return;
  }
  /* keys and names are constants: referenced, not copied (one answer a
   * call) */
  cJSON_AddStringToObject(m, "call_id", o->id);
  cJSON_AddItemToObjectCS(m, "status",
                          cJSON_CreateStringReference(tg_status_name(o->status)));
  if (o->error.phase != TG_PHASE_NONE) {
    cJSON_AddStringToObject(m, "phase", tg_phase_name(o->error.phase));
    cJSON_AddStringToObject(m, "code", o->error.code ? o->error.code : "");
    cJSON_AddBoolToObject(m, "retryable", o->error.retryable);
  }
  cJSON_AddItemToObjectCS(m, "verdict",
                          cJSON_CreateStringReference(tg_verdict_name(o->verdict)));
  if (o->rule) cJSON_AddStringToObject(m, "rule", o->rule);
  if (o->truncated) cJSON_AddTrueToObject(m, "truncated");
}

/* A CallToolResult an upstream server gave: one with a content array. */
static int is_tool_result(const cJSON *r) {
  return cJSON_IsObject(r) && cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(r, "content"));
}

/* The upstream's result as it came, for the answer only: its members
 * referenced, not copied (the outcome outlives the answer, which is sent
 * and freed inside on_done); _meta copied, as the answer adds to it. */
static cJSON *upstream_result(const cJSON *result) {
  cJSON *r = cJSON_CreateObject();
  for (cJSON *m = result->child; m && r; m = m->next) {
    int ok = m->string && !strcmp(m->string, "_meta")
                 ? cJSON_AddItemToObject(r, m->string, cJSON_Duplicate(m, 1))
                 : cJSON_AddItemReferenceToObject(r, m->string, m);
    if (!ok) {
      cJSON_Delete(r);
      r = NULL;
    }
  }
  return r;
}

static cJSON *ok_result(const mcp_call *c, const tg_outcome *o) {
  if (c->passes_results && is_tool_result(o->result))
    return upstream_result(o->result);
  cJSON *r = cJSON_CreateObject();
  cJSON *content = cJSON_AddArrayToObject(r, "content");
  if (cJSON_IsString(o->result)) {
    add_text(content, o->result->valuestring);
  } else if (o->result) {
    char *text = tg_json_print(o->result, 0);
    add_text(content, text ? text : "");
    free(text);
    if (cJSON_IsObject(o->result))
      cJSON_AddItemToObject(r, "structuredContent",
                            cJSON_Duplicate(o->result, 1));
  }
  return r;
}

/* The text the agent reads for a call that failed, was denied, rejected,
 * cancelled or timed out: the chain's message (it says whether the tool
 * ran), the suggestion, and any partial output. */
static cJSON *error_result(const mcp_call *c, const tg_outcome *o) {
  int upstream = c->passes_results && is_tool_result(o->result);
  cJSON *r = upstream ? cJSON_Duplicate(o->result, 1) : cJSON_CreateObject();
  cJSON_DeleteItemFromObjectCaseSensitive(r, "structuredContent");
  cJSON *content = cJSON_GetObjectItemCaseSensitive(r, "content");
  if (!content) content = cJSON_AddArrayToObject(r, "content");
  char head[4096];
  snprintf(head, sizeof head, "%s%s%s", o->error.message ? o->error.message : "",
           o->error.suggestion ? "\nSuggestion: " : "",
           o->error.suggestion ? o->error.suggestion : "");
  /* an upstream's own failure speaks for itself; our text goes first */
  cJSON *t = cJSON_CreateObject();
  cJSON_AddStringToObject(t, "type", "text");
  cJSON_AddStringToObject(t, "text", head);
  cJSON_InsertItemInArray(content, 0, t);
  if (o->result && !upstream) {
    char *p = cJSON_IsString(o->result) ? NULL : tg_json_print(o->result, 0);
    const char *partial = p ? p : o->result->valuestring;
    char *text = malloc(strlen(partial) + 32);
    if (text) {
      sprintf(text, "Partial output:\n%s", partial);
      add_text(content, text);
      free(text);
    }
    free(p);
  }
  cJSON_DeleteItemFromObjectCaseSensitive(r, "isError");
  cJSON_AddTrueToObject(r, "isError");
  return r;
}

/* The call failed after its upstream asked the client for what the client
 * had not declared (parked.c): the 2026-07-28 answer for that is
 * -32021 with requiredCapabilities, a ClientCapabilities object. */
static void missing_capability(mcp_call *c) {
  cJSON *data = cJSON_CreateObject();
  cJSON_AddObjectToObject(cJSON_AddObjectToObject(data, "requiredCapabilities"),
                          c->park.missing_cap);
  char msg[300];
  snprintf(msg, sizeof msg, "MissingRequiredClientCapability: tool %s needs "
           "the client's %s capability, which this request's _meta does not "
           "declare", c->tool, c->park.missing_cap);
  mcp_reply_error(c->ss, c->id, MCP_E_MISSING_CAPABILITY, msg, data);
}

static void on_done(tg_runtime *rt, const tg_outcome *o, void *ud) {
  mcp_call *c = ud;
  mcp_session *ss = c->ss;
  if (!ss) { /* orphaned: the server has gone */
    call_free(c);
    return;
  }
  mcp_server *s = ss->s;
  mcp_approval_drop(c);
  if (!c->cancelled && !c->answered && c->stateless && c->park.missing_cap &&
      o->status != TG_STATUS_OK) {
    missing_capability(c);
  } else if (!c->cancelled && !c->answered) {
    cJSON *r = o->status == TG_STATUS_OK ? ok_result(c, o) : error_result(c, o);
    add_outcome_meta(r, o);
    mcp_req req = {c->id, "tools/call", NULL, c->stateless, NULL};
    mcp_reply(ss, &req, r);
  }
  mcp_logf(s->log, MCP_LOG_DEBUG, "%s %s: %s%s%s (%.1f ms)", c->call_id,
           c->tool, tg_status_name(o->status), o->error.code ? " " : "",
           o->error.code ? o->error.code : "", o->duration_ms);
  unlink_call(ss, c);
  call_free(c);
}

/* ---- progress ------------------------------------------------------------------ */

#define PROGRESS_MESSAGE_MAX 1000 /* bytes of a relayed progress message */

/* One notice to the client: sent now, or, while the client does not read,
 * kept as the call's latest (an older one it replaces was never going to
 * help) and sent when it reads again. Never more than one per call
 * waits, and none is lost for being quick. */
static void send_progress(mcp_call *c, double v, const cJSON *total,
                          const char *msg) {
  c->last_progress = v;
  cJSON *p = cJSON_CreateObject();
  cJSON_AddItemToObject(p, "progressToken", cJSON_Duplicate(c->progress_token, 1));
  cJSON_AddNumberToObject(p, "progress", v);
  if (cJSON_IsNumber(total)) cJSON_AddNumberToObject(p, "total", total->valuedouble);
  if (msg && *msg) {
    char m[PROGRESS_MESSAGE_MAX + 1];
    snprintf(m, sizeof m, "%s", msg);
    cJSON_AddStringToObject(p, "message", m);
  }
  if (c->ss->t->ops->congested(c->ss->t)) {
    cJSON_Delete(c->held_progress);
    c->held_progress = p;
    return;
  }
  mcp_notify(c->ss, c->id, "notifications/progress", p);
}

void mcp_calls_flush_progress(mcp_session *ss) {
  for (mcp_call *c = ss->calls; c; c = c->next) {
    cJSON *p = c->held_progress;
    c->held_progress = NULL;
    if (p && !c->cancelled && !c->answered)
      mcp_notify(ss, c->id, "notifications/progress", p);
    else cJSON_Delete(p);
  }
}

/* MCP wants progress to grow with every notification: the tool's own
 * count when it gives one, else the seconds it has run. This is the
 * runtime's heartbeat (every progress_interval_ms); a tool that reports
 * its own progress to us (an upstream's) is relayed as it reports
 * instead (mcp_call_own_progress), and gets no heartbeat. */
static void on_progress(tg_runtime *rt, const tg_event *ev, void *ud) {
  mcp_call *c = ud;
  if (!c->ss || c->cancelled || c->answered || !c->progress_token ||
      c->own_progress)
    return;
  const cJSON *cur = cJSON_GetObjectItemCaseSensitive(ev->data, "current");
  const cJSON *total = cJSON_GetObjectItemCaseSensitive(ev->data, "total");
  double v = cJSON_IsNumber(cur)
                 ? cur->valuedouble
                 : cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(ev->data, "elapsed_ms")) / 1000.0;
  if (!(v > c->last_progress)) return;
  const char *msg = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ev->data, "message"));
  send_progress(c, v, cJSON_IsNumber(cur) ? total : NULL, msg);
}

mcp_call *mcp_call_find(mcp_server *s, const char *call_id) {
  mcp_call *c = NULL;
  for (mcp_session *ss = s->sessions; ss && !c; ss = ss->next)
    c = session_call(ss, call_id);
  return c;
}

void mcp_call_log(mcp_server *s, const char *call_id, mcp_log_level level,
                  cJSON *params) {
  mcp_call *c = mcp_call_find(s, call_id);
  if (!c || !c->stateless || c->log_level < 0 || (int)level < c->log_level ||
      c->cancelled || c->answered || mcp_session_wants_log(c->ss, level)) {
    cJSON_Delete(params);
    return;
  }
  mcp_notify(c->ss, c->id, "notifications/message", params);
}

void mcp_call_own_progress(mcp_server *s, const char *call_id,
                           const cJSON *params) {
  mcp_call *c = mcp_call_find(s, call_id);
  if (!c) return;
  c->own_progress = 1;
  if (c->cancelled || c->answered || !c->progress_token) return;
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(params, "progress");
  const cJSON *total = cJSON_GetObjectItemCaseSensitive(params, "total");
  if (!cJSON_IsNumber(v) || !(v->valuedouble > c->last_progress)) return;
  send_progress(c, v->valuedouble, total,
                cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(params, "message")));
}

/* ---- tools/call ------------------------------------------------------------------ */

static void bad_params(mcp_session *ss, const cJSON *id, const char *msg) {
  mcp_reply_error(ss, id, JRPC_INVALID_PARAMS, msg, NULL);
}

static mcp_call *new_call(mcp_session *ss, const mcp_req *req, const char *name,
                          const cJSON *args, const cJSON *token) {
  mcp_call *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->ss = ss;
  c->id = cJSON_Duplicate(req->id, 1);
  c->tool = strdup(name);
  /* kept only where a requestState binds them (the chain has its own) */
  if (req->stateless)
    c->args = args ? cJSON_Duplicate(args, 1) : cJSON_CreateObject();
  c->progress_token = token ? cJSON_Duplicate(token, 1) : NULL;
  c->last_progress = -HUGE_VAL; /* a first notice of 0 is sent too */
  c->stateless = req->stateless;
  c->can_elicit = mcp_can_elicit(req);
  c->log_level = req->stateless
      ? mcp_log_level_of(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(req->params, "_meta"), MCP_META_LOG_LEVEL)))
      : -1;
  const mcp_tool_source *src = source_of(ss->s, name);
  c->passes_results = src->passes_results;
  c->own_progress = src->reports_progress && src->reports_progress(src->ud, name);
  snprintf(c->call_id, sizeof c->call_id, "mcp-%llu",
           (unsigned long long)++ss->s->next_call);
  if (!c->id || !c->tool || (req->stateless && !c->args) ||
      (token && !c->progress_token)) {
    call_free(c);
    return NULL;
  }
  mcp_call_park_init(c, req);
  return c;
}

/* call.metadata.mcp = {protocol, client?}: the same for every call of an
 * era, so made once (the chain copies it into each call). */
static const cJSON *call_metadata(mcp_session *ss, const mcp_req *req) {
  cJSON **m = req->stateless ? &ss->meta_stateless : &ss->meta_session;
  if (*m) return *m;
  *m = cJSON_CreateObject();
  cJSON *mcp = cJSON_AddObjectToObject(*m, "mcp");
  cJSON_AddStringToObject(mcp, "protocol", req->stateless ? MCP_STATELESS_VERSION
                                                          : ss->version);
  if (!req->stateless && ss->client_name[0])
    cJSON_AddStringToObject(mcp, "client", ss->client_name);
  return *m;
}

/* Checks the request; the progress token in *token. -1: answered. */
static int check_call(mcp_session *ss, const mcp_req *req, const char **name,
                      const cJSON **args, const cJSON **token) {
  const cJSON *p = req->params;
  const cJSON *n = cJSON_GetObjectItemCaseSensitive(p, "name");
  *args = cJSON_GetObjectItemCaseSensitive(p, "arguments");
  *token = cJSON_GetObjectItemCaseSensitive(
      cJSON_GetObjectItemCaseSensitive(p, "_meta"), "progressToken");
  if (!cJSON_IsString(n)) {
    bad_params(ss, req->id, "tools/call: params.name must be a string");
    return -1;
  }
  *name = n->valuestring;
  if (*args && !cJSON_IsObject(*args) && !cJSON_IsNull(*args)) {
    bad_params(ss, req->id, "tools/call: params.arguments must be an object");
    return -1;
  }
  if (*token && !cJSON_IsString(*token) && !cJSON_IsNumber(*token)) {
    bad_params(ss, req->id, "tools/call: params._meta.progressToken must be a "
               "string or a number");
    return -1;
  }
  if (!mcp_tool_exposed(ss->s, *name)) {
    if (mcp_gateway_answer_starting(ss, req, *name)) return -1;
    char msg[300];
    snprintf(msg, sizeof msg, "Unknown tool: %.200s (tools/list names the "
             "tools this server offers)", *name);
    bad_params(ss, req->id, msg);
    return -1;
  }
  if (call_by_request(ss, req->id)) {
    mcp_reply_error(ss, req->id, JRPC_INVALID_REQUEST, "tools/call: a call "
                    "with this request id is still in flight", NULL);
    return -1;
  }
  if (ss->ncalls >= ss->s->opt.max_calls) {
    char msg[160];
    snprintf(msg, sizeof msg, "tools/call: %zu calls are in flight, the most "
             "this server takes at once: wait for one to end", ss->ncalls);
    mcp_reply_error(ss, req->id, JRPC_INTERNAL_ERROR, msg, NULL);
    return -1;
  }
  return 0;
}

void mcp_tools_call(mcp_session *ss, const mcp_req *req) {
  mcp_server *s = ss->s;
  const char *name;
  const cJSON *args, *token;
  if (mcp_call_resume(ss, req)) return; /* the answer to an upstream's request */
  if (check_call(ss, req, &name, &args, &token) < 0) return;
  if (cJSON_IsNull(args)) args = NULL;
  mcp_call *c = new_call(ss, req, name, args, token);
  if (!c) {
    mcp_reply_error(ss, req->id, JRPC_INTERNAL_ERROR, "out of memory", NULL);
    return;
  }
  if (mcp_read_input_response(ss, req, c) < 0) {
    call_free(c);
    return;
  }
  tg_call_request r = {.id = c->call_id, .tool = name, .args = args,
                       .metadata = call_metadata(ss, req),
                       .on_progress = token ? on_progress : NULL,
                       .events_ud = c};
  char err[TG_ERRMSG] = "";
  link_call(ss, c);
  /* done may run before this returns (a call refused at once, or one
   * whose tool finished inside its start): c is not touched after */
  int rc = tg_call_start_approved(s->rt, &r, mcp_call_approver, c, on_done, c,
                                  err);
  if (rc < 0) {
    unlink_call(ss, c);
    mcp_reply_error(ss, req->id, JRPC_INTERNAL_ERROR, err, NULL);
    call_free(c);
  }
}
