/*
 * transport_stdio.c — the stdio transport (transport_stdio.h): the
 * transport interface (transport.h) on a jrpc_conn (framing.c), and
 * mcp_server_start, which serves one client on stdin/stdout with it.
 */
#include <stdio.h>
#include <stdlib.h>
#include "mcp.h"
#include "framing.h"
#include "transport_stdio.h"

typedef struct {
  mcp_transport t;
  jrpc_conn *conn;
} stdio_transport;

/* ---- the transport's ops -------------------------------------------------- */

static int st_send(mcp_transport *t, const cJSON *msg, const cJSON *related) {
  (void)related; /* one stream for everything */
  return jrpc_send(((stdio_transport *)t)->conn, msg);
}

static int st_congested(const mcp_transport *t) {
  return jrpc_congested(((const stdio_transport *)t)->conn);
}

/* No callback of the conn runs after jrpc_close: the wrapper can go now,
 * the conn goes when its handles have closed. */
static void st_close(mcp_transport *t) {
  stdio_transport *st = (stdio_transport *)t;
  jrpc_close(st->conn);
  free(st);
}

static const mcp_transport_ops ops = {st_send, st_congested, st_close};

/* ---- what the conn tells, to the session ---------------------------------- */

static void on_message(jrpc_conn *c, cJSON *msg, void *ud) {
  (void)c;
  mcp_transport *t = ud;
  if (t->ev) t->ev->on_message(t->session, msg);
  else cJSON_Delete(msg);
}

static void on_bad(jrpc_conn *c, int code, const cJSON *id, const char *why,
                   void *ud) {
  (void)c;
  mcp_transport *t = ud;
  if (t->ev) t->ev->on_bad(t->session, code, id, why);
}

static void on_end(jrpc_conn *c, int status, void *ud) {
  (void)c;
  mcp_transport *t = ud;
  if (t->ev) t->ev->on_closed(t->session, status);
}

static void on_drained(jrpc_conn *c, void *ud) {
  (void)c;
  mcp_transport *t = ud;
  if (t->ev) t->ev->on_drained(t->session);
}

/* ---- life ------------------------------------------------------------------- */

mcp_transport *mcp_stdio_open(uv_loop_t *loop, size_t max_bytes, int in_fd,
                              int out_fd, char err[TG_ERRMSG]) {
  static const jrpc_handlers h = {on_message, on_bad, on_end, on_drained};
  stdio_transport *st = calloc(1, sizeof *st);
  if (st) st->conn = jrpc_new(loop, max_bytes, &h, &st->t);
  if (!st || !st->conn) {
    free(st);
    snprintf(err, TG_ERRMSG, "out of memory");
    return NULL;
  }
  st->t.ops = &ops;
  st->t.ends_server = 1;
  int rc = jrpc_open_fds(st->conn, in_fd, out_fd);
  if (rc < 0) {
    snprintf(err, TG_ERRMSG, "cannot use stdin/stdout for MCP: %s",
             uv_strerror(rc));
    st_close(&st->t);
    return NULL;
  }
  return &st->t;
}

int mcp_stdio_start(mcp_transport *t, char err[TG_ERRMSG]) {
  int rc = jrpc_start(((stdio_transport *)t)->conn);
  if (rc < 0)
    snprintf(err, TG_ERRMSG, "cannot use stdin/stdout for MCP: %s",
             uv_strerror(rc));
  return rc < 0 ? -1 : 0;
}

int mcp_server_start(mcp_server *s, int in_fd, int out_fd,
                     char err[TG_ERRMSG]) {
  mcp_transport *t = mcp_stdio_open(s->loop, s->opt.max_message_bytes, in_fd,
                                    out_fd, err);
  if (!t) return -1;
  if (!mcp_server_connect(s, t)) {
    st_close(t);
    snprintf(err, TG_ERRMSG, "out of memory");
    return -1;
  }
  /* the session owns t now: it goes with the server */
  if (mcp_stdio_start(t, err) < 0) return -1;
  return mcp_server_start_upstreams(s, err);
}
