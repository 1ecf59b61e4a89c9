/*
 * gateway_starting.c — requests aimed at an upstream server that is not
 * up: one started with `npx -y` can take longer than the start-up wait
 * (gateway.c), or it is restarting after a crash. What it offers is not
 * known yet (or not reachable now), but often its server is: from a
 * name's prefix (<server><separator><tool>), or, for a URI or a name of a
 * server of prefix = false, as the one server still starting. The client
 * is told that the server is starting and to try again — a tools/call as
 * a retryable isError result (like a call to a listed tool of a server
 * that is down), prompts/get, resources/read, completion/complete and
 * resources/subscribe as a JSON-RPC error whose data is the same outcome
 * — not "Unknown tool" or "unknown prompt", which a client takes as
 * final. When the server has listed, the lists change and every client
 * is sent list_changed (gateway.c).
 *
 * Kept apart from the gateway's other files: it only reads the gateway's
 * state; its callers are tools/call's check (tools.c) and the gateway's
 * passthrough (gateway.c).
 */
#include <stdio.h>
#include <string.h>
#include "gateway.h"

#define MAX_TOOL_NAME 128

/* The upstream that `name` names by its prefix, when the rest could be a
 * tool's name of its ([A-Za-z0-9_.-]{1,128}); else NULL. */
static mcp_upstream *named_upstream(const mcp_gateway *gw, const char *name) {
  const char *sep = gw->s->opt.separator;
  for (size_t i = 0; i < gw->nups; i++) {
    const char *server = up_name(gw->ups[i]);
    size_t n = strlen(server), k = strlen(sep);
    if (strncmp(name, server, n) || strncmp(name + n, sep, k)) continue;
    const char *rest = name + n + k;
    size_t len = strspn(rest, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOP"
                              "QRSTUVWXYZ0123456789_.-");
    if (len && len <= MAX_TOOL_NAME && !rest[len]) return gw->ups[i];
  }
  return NULL;
}

/* A tool of that name was listed once (then it is registered, and a call
 * to it that is refused here was hidden, not early). */
static int listed_once(const mcp_gateway *gw, const char *name) {
  for (size_t i = 0; i < gw->ntools; i++)
    if (!strcmp(gw->tools[i]->name, name)) return 1;
  return 0;
}

/* What toolgate says of a call that did not reach its upstream: the
 * _meta["toolgate/outcome"] of a tool call's result, the data of another
 * request's error. */
static cJSON *unavailable_outcome(const mcp_upstream *u) {
  cJSON *m = cJSON_CreateObject();
  cJSON_AddStringToObject(m, "status", tg_status_name(TG_STATUS_ERROR));
  cJSON_AddStringToObject(m, "phase", "UPSTREAM");
  cJSON_AddStringToObject(m, "code", "UPSTREAM_UNAVAILABLE");
  cJSON_AddTrueToObject(m, "retryable");
  cJSON_AddStringToObject(m, "verdict", tg_verdict_name(TG_VERDICT_NONE));
  if (u) cJSON_AddStringToObject(m, "server", up_name(u));
  return m;
}

static cJSON *unavailable_result(const char *msg) {
  cJSON *r = cJSON_CreateObject();
  cJSON *content = cJSON_AddArrayToObject(r, "content");
  cJSON *t = cJSON_CreateObject();
  cJSON_AddStringToObject(t, "type", "text");
  cJSON_AddStringToObject(t, "text", msg);
  cJSON_AddItemToArray(content, t);
  cJSON_AddTrueToObject(r, "isError");
  cJSON *m = unavailable_outcome(NULL);
  cJSON_AddItemToObject(cJSON_AddObjectToObject(r, "_meta"), MCP_META_OUTCOME, m);
  return r;
}

int mcp_gateway_answer_starting(mcp_session *ss, const mcp_req *req,
                                const char *name) {
  mcp_server *s = ss->s;
  mcp_gateway *gw = s->gw;
  if (!gw || gw->stopped || mcp_tool_hidden(s, name) || listed_once(gw, name))
    return 0;
  mcp_upstream *u = named_upstream(gw, name);
  if (!u || up_ready(u)) return 0; /* it has listed: the tool is unknown */
  char msg[700];
  snprintf(msg, sizeof msg, "upstream server '%s' is still starting: its "
           "tools are not listed yet, so '%.200s' did not run.\nSuggestion: "
           "try again shortly; a notifications/tools/list_changed comes when "
           "its tools are there (if it never starts, the log of 'toolgate "
           "serve' says why)", up_name(u), name);
  mcp_logf(s->log, MCP_LOG_INFO, "tools/call %s: upstream %s is not ready "
           "yet: told to try again", name, up_name(u));
  /* the list the client has now, so that the upstream's first list is a
   * change it is told about, even if it never asked for the list */
  if (!s->tools.have_digest) mcp_tools_maybe_changed(s);
  mcp_reply(ss, req, unavailable_result(msg));
  return 1;
}

mcp_upstream *gw_first_starting(const mcp_gateway *gw, int bare_only) {
  for (size_t i = 0; i < gw->nups; i++)
    if (!gw->listed_start[i] && !up_ready(gw->ups[i]) &&
        (!bare_only || up_conf(gw->ups[i])->bare))
      return gw->ups[i];
  return NULL;
}

/* What the client asked for, in the message: "prompt 'x'", "uri 'y'". */
static const char *list_of(const char *method) {
  if (!strncmp(method, "prompts/", 8)) return "prompts";
  if (!strncmp(method, "completion/", 11)) return "prompts and resources";
  return "resources";
}

static const char *notice_of(const char *method) {
  if (!strncmp(method, "prompts/", 8)) return "notifications/prompts/list_changed";
  return "notifications/resources/list_changed";
}

void gw_reply_unavailable(mcp_session *ss, const mcp_req *req,
                          const mcp_upstream *u, const char *what) {
  mcp_gateway *gw = ss->s->gw;
  size_t i = gw_index_of(gw, u);
  int starting = i < gw->nups && !gw->listed_start[i];
  char msg[800];
  if (starting)
    snprintf(msg, sizeof msg, "upstream server '%s' is still starting: its "
             "%s are not listed yet, so %s of %.200s did not reach it.\n"
             "Suggestion: try again shortly; a %s comes when they are there "
             "(if it never starts, the log of 'toolgate serve' says why)",
             up_name(u), list_of(req->method), req->method, what,
             notice_of(req->method));
  else
    snprintf(msg, sizeof msg, "upstream server '%s' is not running (it is "
             "restarting after it went down, or toolgate is stopping), so "
             "%s of %.200s did not reach it.\nSuggestion: try again shortly",
             up_name(u), req->method, what);
  mcp_logf(ss->s->log, MCP_LOG_INFO, "%s %.200s: upstream %s is not up: "
           "told to try again", req->method, what, up_name(u));
  mcp_reply_error(ss, req->id, JRPC_INTERNAL_ERROR, msg, unavailable_outcome(u));
}
