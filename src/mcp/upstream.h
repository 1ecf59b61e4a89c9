/*
 * upstream.h — one upstream MCP server on stdio: its process (in a process
 * group of its own, so stopping it stops what it started), the era it
 * speaks (a server/discover probe for 2026-07-28, else initialize), its
 * tools, prompts and resources as last listed, requests to it and their
 * answers, and restarts with back-off when it dies. Its stderr goes to
 * the log, line by line. The gateway (gateway.c) owns the upstreams and
 * hears from them through up_handlers.
 */
#ifndef TOOLGATE_MCP_UPSTREAM_H
#define TOOLGATE_MCP_UPSTREAM_H

#include <uv.h>
#include <cjson/cJSON.h>
#include "config.h"
#include "log.h"

typedef struct mcp_upstream mcp_upstream;

/* Its answer to a request: result or error (one is NULL). An error made
 * here (the server died, could not be written to) has "data": {"down":
 * true}. */
typedef void (*up_answer_fn)(mcp_upstream *u, const cJSON *result,
                             const cJSON *error, void *ud);

typedef struct {
  /* Its lists are (re)made: after a start, or a list_changed. */
  void (*on_listed)(mcp_upstream *u, void *ud);
  /* It went down (requests in flight have been failed already). */
  void (*on_down)(mcp_upstream *u, void *ud);
  /* A notification from it that is not about its lists: progress,
   * cancelled, resources/updated, and its log messages (notifications/
   * message: those it may log, after our log has them). */
  void (*on_notification)(mcp_upstream *u, const char *method,
                          const cJSON *params, void *ud);
  /* A request from it for its client (elicitation/create,
   * sampling/createMessage, roots/list): answer with up_respond. */
  void (*on_request)(mcp_upstream *u, const cJSON *id, const char *method,
                     const cJSON *params, void *ud);
} up_handlers;

mcp_upstream *up_new(uv_loop_t *loop, const mcp_upstream_conf *conf,
                     mcp_log *log, const up_handlers *h, void *ud);
/* Starts the process and the handshake; 0, or a negative libuv error
 * (a restart is then scheduled). */
int up_start(mcp_upstream *u);
/* Stops for good: SIGTERM to its group, SIGKILL if it lingers. */
void up_stop(mcp_upstream *u);
/* Still something to finish (the process, handles)? */
int up_busy(const mcp_upstream *u);
/* Frees it (after up_stop, when no longer busy). */
void up_free(mcp_upstream *u);

const char *up_name(const mcp_upstream *u);
const mcp_upstream_conf *up_conf(const mcp_upstream *u);
int up_ready(const mcp_upstream *u);   /* handshake done, listed */
int up_stateless(const mcp_upstream *u);
/* Its lists as it gave them (arrays; NULL: it offers none). */
const cJSON *up_tools(const mcp_upstream *u);
const cJSON *up_prompts(const mcp_upstream *u);
const cJSON *up_resources(const mcp_upstream *u);
const cJSON *up_templates(const mcp_upstream *u);
/* The capabilities it declared (initialize or server/discover), or NULL
 * before its handshake. */
const cJSON *up_caps(const mcp_upstream *u);

/* Sends a request (params taken; NULL: none). Returns its id (> 0), or -1
 * when it is not running (fn is not called then). */
double up_request(mcp_upstream *u, const char *method, cJSON *params,
                  up_answer_fn fn, void *ud);
/* Inside an answer function only: the result it was given, taken out of
 * the answer (which is freed after) for the caller to keep without a
 * copy. NULL outside one, or for an error. */
cJSON *up_take_result(mcp_upstream *u);
/* The answer to request id is no longer wanted: fn will not be called. */
void up_forget(mcp_upstream *u, double id);
/* A notification (params taken). */
void up_notify(mcp_upstream *u, const char *method, cJSON *params);
/* Answers a request it made: result or error (taken). */
void up_respond(mcp_upstream *u, const cJSON *id, cJSON *result,
                cJSON *error);

#endif
