/*
 * transport.h — how MCP messages reach a client and come back from it,
 * apart from what they mean. The server (server.c: methods, results,
 * eras) and the session (session.c: one client's state) see only
 * JSON-RPC messages as cJSON objects; a transport turns them into bytes
 * and back, on whatever it carries them on.
 *
 * One connection, one session: when a client connects, its transport
 * asks the server for a session (mcp_server_connect) and hands that
 * session what it reads; the session sends through the transport's ops.
 * stdio (transport_stdio.c) has one connection for the life of the
 * process. A transport that serves many clients at once (Streamable HTTP:
 * a session id header, a stream per request) makes one mcp_transport per
 * session and calls mcp_server_connect for each.
 */
#ifndef TOOLGATE_MCP_TRANSPORT_H
#define TOOLGATE_MCP_TRANSPORT_H

#include <cjson/cJSON.h>

typedef struct mcp_transport mcp_transport;

/* What a transport does for its session. */
typedef struct {
  /* Sends one message. related is the id of the client's request the
   * message belongs to (its answer, its progress, a question asked or
   * withdrawn for it), or NULL (a list_changed, a log message, a question
   * no request caused): a transport with a stream per request sends it on
   * that request's stream, and ends the stream with the answer; stdio
   * has one stream and does not look. 0, or a negative libuv error (the
   * connection is going: on_closed follows). */
  int (*send)(mcp_transport *t, const cJSON *msg, const cJSON *related);
  /* Is the output backed up (the client is not reading)? Then what can
   * be dropped (progress, log messages) is, until on_drained. */
  int (*congested)(const mcp_transport *t);
  /* Closes the connection; no event reaches the session after it. The
   * transport frees itself when its handles have closed. */
  void (*close)(mcp_transport *t);
} mcp_transport_ops;

/* What a transport tells its session (mcp_session_events in session.c). */
typedef struct {
  /* One JSON object read (the session owns msg). */
  void (*on_message)(void *session, cJSON *msg);
  /* Something read that is no message: code is a JSON-RPC error code
   * (JRPC_PARSE_ERROR, JRPC_INVALID_REQUEST), id the message's id when
   * one could be read. */
  void (*on_bad)(void *session, int code, const cJSON *id, const char *why);
  /* The client has gone (status 0: it closed its end; else a libuv
   * error). Called once. For a transport with ends_server set the session
   * stays (the answers of calls still running go out while the server
   * stops); otherwise the session goes at once, and closes the transport
   * (ops->close) from inside this call. */
  void (*on_closed)(void *session, int status);
  /* The output was congested and has drained again. */
  void (*on_drained)(void *session);
} mcp_transport_events;

struct mcp_transport {
  const mcp_transport_ops *ops;
  /* Set by mcp_server_connect: where the transport's events go. */
  const mcp_transport_events *ev;
  void *session;
  /* The connection is the whole server's life (stdio): when it closes,
   * the server's on_end is told. 0 for a transport of many sessions. */
  int ends_server;
};

#endif
