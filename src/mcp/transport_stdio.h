/*
 * transport_stdio.h — MCP's stdio transport: one client, on a pair of
 * descriptors (stdin and stdout), one JSON-RPC message per line
 * (framing.h). The connection lasts as long as the process serves:
 * when the client closes its end, the server's on_end is told.
 */
#ifndef TOOLGATE_MCP_TRANSPORT_STDIO_H
#define TOOLGATE_MCP_TRANSPORT_STDIO_H

#include <stddef.h>
#include <uv.h>
#include "toolgate.h"
#include "transport.h"

/* A transport on in_fd and out_fd (a regular file works too); lines over
 * max_bytes are refused (0: 4 MiB). It reads once mcp_stdio_start is
 * called, after mcp_server_connect has given it its session. NULL with
 * err on failure. */
mcp_transport *mcp_stdio_open(uv_loop_t *loop, size_t max_bytes, int in_fd,
                              int out_fd, char err[TG_ERRMSG]);
int mcp_stdio_start(mcp_transport *t, char err[TG_ERRMSG]);

#endif
