/*
 * gateway_starting.c — a call to an upstream tool whose server has not
 * listed its tools yet: one started with `npx -y` can take longer than
 * the start-up hold (gateway.c), or it is restarting after a crash before
 * its first list. The tool is not known yet, but its server is, from the
 * name's prefix (<server><separator><tool>): the client is told that the
 * server is starting and to try again (a retryable isError result, like
 * a call to a listed tool of a server that is down), not "Unknown tool",
 * which a client takes as final. When the server has listed, the tool
 * list changes and every client is sent notifications/tools/list_changed.
 *
 * Kept apart from the gateway's other files: it only reads the gateway's
 * state, and the one caller is tools/call's check (tools.c).
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

static cJSON *unavailable_result(const char *msg) {
  cJSON *r = cJSON_CreateObject();
  cJSON *content = cJSON_AddArrayToObject(r, "content");
  cJSON *t = cJSON_CreateObject();
  cJSON_AddStringToObject(t, "type", "text");
  cJSON_AddStringToObject(t, "text", msg);
  cJSON_AddItemToArray(content, t);
  cJSON_AddTrueToObject(r, "isError");
  cJSON *m = cJSON_AddObjectToObject(cJSON_AddObjectToObject(r, "_meta"),
                                     MCP_META_OUTCOME);
  cJSON_AddStringToObject(m, "status", tg_status_name(TG_STATUS_ERROR));
  cJSON_AddStringToObject(m, "phase", "UPSTREAM");
  cJSON_AddStringToObject(m, "code", "UPSTREAM_UNAVAILABLE");
  cJSON_AddTrueToObject(m, "retryable");
  cJSON_AddStringToObject(m, "verdict", tg_verdict_name(TG_VERDICT_NONE));
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
