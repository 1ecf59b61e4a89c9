/*
 * framing.c — newline-delimited JSON-RPC 2.0 on two streams (framing.h):
 * the bytes and the lines, for the stdio transport (transport_stdio.c)
 * and for the gateway's link to each upstream server (upstream.c).
 *
 * Reading: lines are cut out of the read buffer as they come; a line split
 * across reads is gathered in `part`, never beyond max_bytes (a longer one
 * is refused and skipped to its newline). Writing: the lines made during
 * one turn of the loop gather in `out_buf` and go out together at the end
 * of the turn (a check handle; an idle handle keeps the loop from
 * sleeping meanwhile, so nothing waits): with many calls in flight that is
 * one write, and one wake-up of the peer, for many answers. Each message
 * is printed straight into that buffer, which is kept from turn to turn.
 * uv_try_write first — most go out at once, without a request — and what
 * is left is queued with uv_write, taking the buffer with it. A regular file (or /dev/null) on either side is
 * read with uv_fs_read and written with write(): libuv cannot poll a
 * file.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cjson/cJSON.h>
#include "toolgate.h"
#include "kit/kit.h"
#include "framing.h"

#define DEFAULT_MAX_BYTES (4u << 20)
#define READ_CHUNK 65536
#define BACKLOG_HIGH (16u << 20) /* stop reading above this many unsent bytes */
#define BACKLOG_LOW (1u << 20)   /* and start again below this */
#define FLUSH_AT 65536           /* gathered bytes written without waiting */
#define KEEP_AT_MOST (2 * FLUSH_AT) /* an output buffer kept between turns */

struct jrpc_conn {
  uv_loop_t *loop;
  jrpc_handlers h;
  void *ud;
  size_t max_bytes;
  uv_pipe_t in, out;
  int in_file, out_file;  /* a regular file: uv_fs_read / write() */
  int in_fd, out_fd;
  int handles_open;       /* pipes initialised and not yet closed */
  int fs_busy;            /* a uv_fs_read is in flight */
  uv_fs_t fs;
  int64_t file_offset;
  int reading, paused;    /* paused: the peer does not read our output */
  int congested;          /* the backlog passed BACKLOG_HIGH (jrpc_congested) */
  int ended, closing;     /* ended: on_end was told (input over, or
                             output broken) */
  int out_dead;           /* the output failed: nothing more is written */
  char *part;             /* a line begun in an earlier read */
  size_t plen, pcap;
  uv_check_t flush;       /* end of the loop's turn: write out_buf */
  uv_idle_t awake;        /* while out_buf waits: no sleeping in poll */
  char *out_buf;          /* lines made this turn, not yet written */
  size_t out_len, out_cap;
  int skipping;           /* inside a line over the limit: drop to '\n' */
  char rbuf[READ_CHUNK];
};

typedef struct {
  uv_write_t req;
  char *text;
} write_req;

/* ---- life ---------------------------------------------------------------- */

jrpc_conn *jrpc_new(uv_loop_t *loop, size_t max_bytes, const jrpc_handlers *h,
                    void *ud) {
  jrpc_conn *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->loop = loop;
  c->h = *h;
  c->ud = ud;
  c->max_bytes = max_bytes ? max_bytes : DEFAULT_MAX_BYTES;
  c->in_fd = c->out_fd = -1;
  uv_pipe_init(loop, &c->in, 0);
  uv_pipe_init(loop, &c->out, 0);
  uv_check_init(loop, &c->flush);
  uv_idle_init(loop, &c->awake);
  c->in.data = c->out.data = c->flush.data = c->awake.data = c;
  c->handles_open = 4;
  return c;
}

uv_pipe_t *jrpc_in(jrpc_conn *c) { return &c->in; }
uv_pipe_t *jrpc_out(jrpc_conn *c) { return &c->out; }

static void maybe_free(jrpc_conn *c) {
  if (!c->closing || c->handles_open || c->fs_busy) return;
  free(c->part);
  free(c->out_buf);
  free(c);
}

static void handle_closed(uv_handle_t *h) {
  jrpc_conn *c = h->data;
  c->handles_open--;
  maybe_free(c);
}

static void flush_now(jrpc_conn *c);

void jrpc_close(jrpc_conn *c) {
  if (!c || c->closing) return;
  c->closing = 1; /* no callback from here on, not even on_end */
  flush_now(c);   /* what this turn made still goes, as far as it can now */
  uv_close((uv_handle_t *)&c->in, handle_closed);
  uv_close((uv_handle_t *)&c->out, handle_closed);
  uv_close((uv_handle_t *)&c->flush, handle_closed);
  uv_close((uv_handle_t *)&c->awake, handle_closed);
  if (c->fs_busy) uv_cancel((uv_req_t *)&c->fs); /* if still queued */
}

/* Once: the owner learns the conn is over and usually closes it. What
 * was written before the input ended still goes out. */
static void end(jrpc_conn *c, int status) {
  if (c->ended || c->closing) return;
  c->ended = 1;
  if (c->reading && !c->in_file) uv_read_stop((uv_stream_t *)&c->in);
  c->reading = 0;
  c->h.on_end(c, status, c->ud);
}

/* Writing failed (EPIPE: the peer is gone): nothing more is written. */
static void out_broken(jrpc_conn *c, int status) {
  c->out_dead = 1;
  end(c, status);
}

/* ---- reading lines --------------------------------------------------------- */

static int blank(const char *p, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r') return 0;
  return 1;
}

static void bad(jrpc_conn *c, int code, const char *why) {
  c->h.on_bad(c, code, NULL, why, c->ud);
}

/* One complete line (without its '\n'). */
static void take_line(jrpc_conn *c, const char *p, size_t n) {
  if (n && p[n - 1] == '\r') n--;
  if (blank(p, n)) return;
  char err[256];
  size_t at = 0;
  cJSON *msg = tg_json_parse(p, n, &at, err, sizeof err);
  if (!msg) {
    char why[320];
    snprintf(why, sizeof why, "not JSON: %s", err);
    bad(c, JRPC_PARSE_ERROR, why);
  } else if (cJSON_IsArray(msg)) {
    cJSON_Delete(msg);
    bad(c, JRPC_INVALID_REQUEST, "a batch (JSON array): send one message per "
        "line; MCP does not use JSON-RPC batches");
  } else if (!cJSON_IsObject(msg)) {
    cJSON_Delete(msg);
    bad(c, JRPC_INVALID_REQUEST, "a JSON-RPC message is a JSON object");
  } else {
    c->h.on_message(c, msg, c->ud);
  }
}

static void too_long(jrpc_conn *c) {
  char why[160];
  snprintf(why, sizeof why, "message over %zu bytes (the limit is "
           "max_message_bytes): it was skipped", c->max_bytes);
  bad(c, JRPC_INVALID_REQUEST, why);
}

/* Adds n bytes to the partial line; 0, or -1 when that passes the limit
 * (the line is then dropped). */
static int gather(jrpc_conn *c, const char *p, size_t n) {
  if (c->plen + n > c->max_bytes) {
    c->plen = 0;
    too_long(c);
    return -1;
  }
  if (c->plen + n > c->pcap) {
    size_t cap = c->pcap ? c->pcap : 4096;
    while (cap < c->plen + n) cap *= 2;
    if (cap > c->max_bytes) cap = c->max_bytes;
    char *grown = realloc(c->part, cap);
    if (!grown) {
      c->plen = 0;
      bad(c, JRPC_INVALID_REQUEST, "out of memory reading a message");
      return -1;
    }
    c->part = grown;
    c->pcap = cap;
  }
  memcpy(c->part + c->plen, p, n);
  c->plen += n;
  return 0;
}

/* The bytes of one read: complete lines go out as they are; the rest waits
 * in `part` for its newline. */
static void feed(jrpc_conn *c, const char *p, size_t n) {
  while (n > 0 && !c->closing) {
    const char *nl = memchr(p, '\n', n);
    size_t take = nl ? (size_t)(nl - p) : n;
    size_t step = nl ? take + 1 : take;
    if (c->skipping) {
      if (nl) c->skipping = 0;
    } else if (!nl) {
      if (gather(c, p, take) < 0) c->skipping = 1;
    } else if (c->plen) {
      if (gather(c, p, take) == 0) {
        size_t len = c->plen;
        c->plen = 0;
        take_line(c, c->part, len);
      }
    } else if (take > c->max_bytes) {
      too_long(c);
    } else {
      take_line(c, p, take);
    }
    p += step;
    n -= step;
  }
}

/* The input ended: a last line without its newline is still a line (it is
 * most likely cut short, and then answered as the parse error it is). */
static void input_ended(jrpc_conn *c, int status) {
  if (c->plen && !c->skipping && !c->closing) {
    size_t len = c->plen;
    c->plen = 0;
    take_line(c, c->part, len);
  }
  end(c, status);
}

static void alloc_cb(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
  jrpc_conn *c = h->data;
  *buf = uv_buf_init(c->rbuf, sizeof c->rbuf);
}

static void read_cb(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf) {
  jrpc_conn *c = s->data;
  if (nread > 0) feed(c, buf->base, (size_t)nread);
  else if (nread == UV_EOF) input_ended(c, 0);
  else if (nread < 0) input_ended(c, (int)nread);
}

static void file_read_cb(uv_fs_t *req);

static void file_read_next(jrpc_conn *c) {
  uv_buf_t b = uv_buf_init(c->rbuf, sizeof c->rbuf);
  c->fs_busy = 1;
  int rc = uv_fs_read(c->loop, &c->fs, c->in_fd, &b, 1, -1, file_read_cb);
  if (rc < 0) {
    c->fs_busy = 0;
    input_ended(c, rc);
  }
}

static void file_read_cb(uv_fs_t *req) {
  jrpc_conn *c = req->data;
  ssize_t n = req->result;
  uv_fs_req_cleanup(req);
  c->fs_busy = 0;
  if (c->closing) {
    maybe_free(c);
    return;
  }
  if (n > 0) {
    feed(c, c->rbuf, (size_t)n);
    if (!c->closing && !c->ended && !c->paused) file_read_next(c);
    else maybe_free(c);
  } else {
    input_ended(c, n == 0 ? 0 : (int)n);
  }
}

static int start_reading(jrpc_conn *c) {
  c->reading = 1;
  if (c->in_file) {
    c->fs.data = c;
    if (!c->fs_busy) file_read_next(c);
    return 0;
  }
  int rc = uv_read_start((uv_stream_t *)&c->in, alloc_cb, read_cb);
  if (rc < 0) c->reading = 0;
  return rc;
}

int jrpc_start(jrpc_conn *c) { return start_reading(c); }

int jrpc_open_fds(jrpc_conn *c, int in_fd, int out_fd) {
  c->in_fd = in_fd;
  c->out_fd = out_fd;
  c->in_file = uv_guess_handle(in_fd) == UV_FILE;
  c->out_file = uv_guess_handle(out_fd) == UV_FILE;
  int rc = 0;
  if (!c->in_file) rc = uv_pipe_open(&c->in, in_fd);
  if (rc == 0 && !c->out_file) rc = uv_pipe_open(&c->out, out_fd);
  return rc;
}

/* ---- writing lines --------------------------------------------------------- */

size_t jrpc_backlog(const jrpc_conn *c) {
  return c->out_file ? 0 : uv_stream_get_write_queue_size((uv_stream_t *)&c->out);
}

int jrpc_congested(const jrpc_conn *c) { return c->congested; }

static void write_cb(uv_write_t *req, int status) {
  write_req *w = (write_req *)req;
  jrpc_conn *c = req->handle->data;
  free(w->text);
  free(w);
  if (status < 0) {
    if (status != UV_ECANCELED) out_broken(c, status);
    return;
  }
  if (c->closing || jrpc_backlog(c) >= BACKLOG_LOW) return;
  if (c->paused) {
    c->paused = 0;
    if (!c->ended && start_reading(c) < 0) end(c, UV_EIO);
  }
  if (c->congested && !c->closing) {
    c->congested = 0;
    if (c->h.on_drained) c->h.on_drained(c, c->ud);
  }
}

/* The peer is not reading what we write: stop taking its requests until
 * it does. */
static void check_backlog(jrpc_conn *c) {
  if (jrpc_backlog(c) < BACKLOG_HIGH) return;
  c->congested = 1;
  if (c->paused || !c->reading) return;
  c->paused = 1;
  c->reading = 0;
  if (!c->in_file) uv_read_stop((uv_stream_t *)&c->in);
}

static int write_file(jrpc_conn *c, const char *p, size_t n) {
  while (n > 0) {
    ssize_t w = write(c->out_fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return -errno;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

/* Writes buf[0, len) (taking buf): at once when the pipe takes it, the
 * rest queued behind what is queued already. */
static int write_out(jrpc_conn *c, char *buf, size_t len, size_t sent) {
  write_req *w = malloc(sizeof *w);
  if (!w) {
    free(buf);
    return UV_ENOMEM;
  }
  w->text = buf;
  uv_buf_t rest = uv_buf_init(buf + sent, (unsigned)(len - sent));
  int rc = uv_write(&w->req, (uv_stream_t *)&c->out, &rest, 1, write_cb);
  if (rc < 0) {
    free(buf);
    free(w);
    return rc;
  }
  check_backlog(c);
  return 0;
}

/* Writes what this turn gathered. What the pipe takes at once leaves the
 * buffer to be filled again next turn (no allocation per turn); the rest
 * goes to a write request, which takes the buffer with it. */
static void flush_now(jrpc_conn *c) {
  uv_check_stop(&c->flush);
  uv_idle_stop(&c->awake);
  if (!c->out_len || c->out_dead) return;
  char *buf = c->out_buf;
  size_t len = c->out_len;
  int rc = 0;
  if (c->out_file) {
    rc = write_file(c, buf, len);
    c->out_len = 0;
  } else {
    size_t sent = 0;
    if (!jrpc_backlog(c)) {
      uv_buf_t b = uv_buf_init(buf, (unsigned)len);
      int n = uv_try_write((uv_stream_t *)&c->out, &b, 1);
      if (n < 0 && n != UV_EAGAIN) rc = n;
      sent = n > 0 ? (size_t)n : 0;
    }
    if (rc == 0 && sent == len) {
      c->out_len = 0;
      if (c->out_cap > KEEP_AT_MOST) { /* a big message's: not kept idle */
        free(c->out_buf);
        c->out_buf = NULL;
        c->out_cap = 0;
      }
    } else if (rc == 0) {
      c->out_buf = NULL;
      c->out_len = c->out_cap = 0;
      rc = write_out(c, buf, len, sent);
    } else {
      c->out_len = 0;
    }
  }
  if (rc < 0) out_broken(c, rc);
}

static void flush_cb(uv_check_t *h) { flush_now(h->data); }
static void awake_cb(uv_idle_t *h) { (void)h; }

/* The line just appended to out_buf goes out at the end of this turn
 * (or now, when enough has gathered). */
static void line_added(jrpc_conn *c) {
  if (c->out_len >= FLUSH_AT) {
    flush_now(c);
  } else if (!uv_is_active((uv_handle_t *)&c->flush)) {
    uv_check_start(&c->flush, flush_cb);
    uv_idle_start(&c->awake, awake_cb);
  }
}

/* msg's text + "\n", printed straight into what goes out this turn. */
int jrpc_send(jrpc_conn *c, const cJSON *msg) {
  if (c->closing || c->out_dead) return UV_EPIPE;
  size_t before = c->out_len;
  if (tg_json_print_append(msg, &c->out_buf, &c->out_len, &c->out_cap) < 0)
    return UV_ENOMEM;
  if (c->out_len + 1 >= c->out_cap) { /* room for the newline and a NUL */
    char *grown = realloc(c->out_buf, c->out_cap * 2);
    if (!grown) {
      c->out_len = before; /* the line goes whole or not at all */
      out_broken(c, UV_ENOMEM);
      return UV_EPIPE;
    }
    c->out_buf = grown;
    c->out_cap *= 2;
  }
  c->out_buf[c->out_len++] = '\n';
  line_added(c);
  return c->out_dead ? UV_EPIPE : 0;
}

static int send_owned(jrpc_conn *c, cJSON *m) {
  if (!m) return UV_ENOMEM;
  int rc = jrpc_send(c, m);
  cJSON_Delete(m);
  return rc;
}

int jrpc_send_result(jrpc_conn *c, const cJSON *id, cJSON *result) {
  return send_owned(c, jrpc_result(id, result));
}

int jrpc_send_error(jrpc_conn *c, const cJSON *id, int code,
                    const char *message, cJSON *data) {
  return send_owned(c, jrpc_error(id, code, message, data));
}

int jrpc_send_notification(jrpc_conn *c, const char *method, cJSON *params) {
  return send_owned(c, jrpc_notification(method, params));
}
