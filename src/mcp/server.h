/*
 * server.h — the MCP server: toolgate's tools, and the tools of the MCP
 * servers it fronts, offered to MCP clients (over stdio: transport.h says
 * how another transport plugs in), every call
 * started through the public API (include/toolgate.h) like the CLI's and
 * the Lua module's. This is the front's face to its command (`toolgate
 * serve`, serve_cmd.c); what the server is made of is in mcp.h.
 */
#ifndef TOOLGATE_MCP_SERVER_H
#define TOOLGATE_MCP_SERVER_H

#include <stddef.h>
#include <stdint.h>
#include <cjson/cJSON.h>
#include "toolgate.h"
#include "log.h"

typedef struct mcp_server mcp_server;
typedef struct mcp_upstream_conf mcp_upstream_conf;

/* What to do with an `ask` when the client cannot be asked (it declared
 * no elicitation capability). */
typedef enum {
  MCP_FALLBACK_REJECT = 0, /* the call is rejected: approval not possible */
  MCP_FALLBACK_ALLOW       /* the call runs as if approved */
} mcp_fallback;

typedef struct {
  size_t max_message_bytes;  /* a longer line is refused; 0: 4 MiB */
  mcp_fallback ask_fallback;
  uint64_t tools_ttl_ms;     /* tools/list's ttlMs (2026-07-28); 0: 60 s */
  uint64_t state_ttl_ms;     /* how long a requestState is good; 0: 10 min */
  size_t max_calls;          /* tools/call in flight at once, per
                                session; 0: 256 */
  int64_t startup_wait_ms;   /* how long the client's requests wait for
                                the upstream servers' first start; 0: the
                                default (5 s), < 0: no wait (their tools
                                come with a list_changed) */
  const char *const *expose; /* globs of tool names the client sees
                                ("!glob" hides); NULL: all */
  /* The gateway (gateway.c): the upstream servers and the separator of
   * their tools' names (<server><sep><tool>; NULL: "__"). */
  const mcp_upstream_conf *upstreams;
  size_t nupstreams;
  const char *separator;
  mcp_log *log;              /* where the front logs (owned by the caller) */
  /* Called once when the client has gone (stdin closed, stdout broken)
   * on a transport that is the server's whole life (stdio): the command
   * stops its loop. */
  void (*on_end)(mcp_server *s, void *ud);
  void *ud;
} mcp_options;

/* A server on rt (which it does not own): it installs itself as rt's
 * approver and subscribes to its events. NULL with err on failure. */
mcp_server *mcp_server_new(tg_runtime *rt, const mcp_options *o,
                           char err[TG_ERRMSG]);
/* Starts serving one client on the descriptors (0 and 1) with the stdio
 * transport (transport_stdio.c), and the upstream servers. */
int mcp_server_start(mcp_server *s, int in_fd, int out_fd,
                     char err[TG_ERRMSG]);
/* Stops: cancels the calls in flight (they end as the loop turns), stops
 * the upstream servers, closes the streams. Safe to call twice. */
void mcp_server_stop(mcp_server *s);
/* Is anything of the server still to finish (calls ending, upstream
 * servers being stopped, handles closing)? Run the loop while it is. */
int mcp_server_busy(const mcp_server *s);
/* Frees what is left; call after stop, when no longer busy (or the loop
 * is about to go). */
void mcp_server_free(mcp_server *s);

#endif
