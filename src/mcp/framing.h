/*
 * framing.h — JSON-RPC 2.0 over a pair of byte streams, one message per
 * line (MCP's stdio framing): the MCP server's link to its client
 * (stdin/stdout) and the gateway's link to each upstream server (the
 * child's stdout/stdin) use the same code.
 *
 * A conn reads lines from `in`, parses each with tg_json_parse (strict:
 * the bytes are hostile) and hands the owner one object per line; what is
 * not one (bad JSON, a line over the size limit, a batch) goes to on_bad
 * with a JSON-RPC error code and a message saying what was wrong, and the
 * conn reads on. It writes whole lines to `out`, in order. When the peer
 * stops reading, the conn stops reading too (a client that never reads
 * its answers cannot make us queue without bound).
 *
 * Ownership: the conn owns its two handles and closes them in
 * jrpc_close; it is freed once both have closed. No callback runs after
 * jrpc_close.
 */
#ifndef TOOLGATE_MCP_FRAMING_H
#define TOOLGATE_MCP_FRAMING_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>
#include <cjson/cJSON.h>
#include "jsonrpc.h"

typedef struct jrpc_conn jrpc_conn;

typedef struct {
  /* One JSON object read (the callee owns msg). */
  void (*on_message)(jrpc_conn *c, cJSON *msg, void *ud);
  /* A line that is no message: code is JRPC_PARSE_ERROR or
   * JRPC_INVALID_REQUEST; id is the message's id when one could be read
   * (else NULL). */
  void (*on_bad)(jrpc_conn *c, int code, const cJSON *id, const char *why,
                 void *ud);
  /* The input ended (EOF, a read error) or the output failed (EPIPE):
   * status is 0 for a clean EOF, else a libuv error. Called once. */
  void (*on_end)(jrpc_conn *c, int status, void *ud);
  /* Optional: the output was congested (jrpc_congested) and has drained
   * below the low mark again. */
  void (*on_drained)(jrpc_conn *c, void *ud);
} jrpc_handlers;

/* A conn with two unopened pipes; max_bytes bounds a line (0: 4 MiB). */
jrpc_conn *jrpc_new(uv_loop_t *loop, size_t max_bytes,
                    const jrpc_handlers *h, void *ud);
/* The pipes, for uv_spawn's UV_CREATE_PIPE stdio (in: the child's
 * stdout, read by us; out: the child's stdin). */
uv_pipe_t *jrpc_in(jrpc_conn *c);
uv_pipe_t *jrpc_out(jrpc_conn *c);
/* Opens the pipes on existing descriptors (stdin, stdout). A regular
 * file on either side works too (read or written as a file). */
int jrpc_open_fds(jrpc_conn *c, int in_fd, int out_fd);
/* Starts reading. */
int jrpc_start(jrpc_conn *c);

/* Writes msg as one line. Returns 0 or a negative libuv error (the conn
 * is then ending: on_end follows). */
int jrpc_send(jrpc_conn *c, const cJSON *msg);
/* The bytes waiting to be written. */
size_t jrpc_backlog(const jrpc_conn *c);
/* Is the output backed up past the high mark (the peer is not reading)?
 * Then what can be dropped (notifications of progress or logs) should
 * be, until on_drained: the owner's own messages, unlike the peer's
 * requests, do not stop when we stop reading. */
int jrpc_congested(const jrpc_conn *c);
/* Closes both sides; frees the conn when they have closed. */
void jrpc_close(jrpc_conn *c);

/* Builds and sends in one step; return jrpc_send's value. */
int jrpc_send_result(jrpc_conn *c, const cJSON *id, cJSON *result);
int jrpc_send_error(jrpc_conn *c, const cJSON *id, int code,
                    const char *message, cJSON *data);
int jrpc_send_notification(jrpc_conn *c, const char *method, cJSON *params);

#endif
