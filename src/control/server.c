/*
 * server.c — the control socket (protocol and location in control.h):
 * the server on the runtime's loop. (The small blocking client that
 * `toolgate reload` and `toolgate hook` use is client.c.)
 *
 * Replies are written with send(MSG_NOSIGNAL) straight on the socket
 * rather than uv_write: a client that has gone away must not kill the host
 * with SIGPIPE, and a library must not change the process's signal
 * dispositions. A reply is one short line into an empty socket buffer, so
 * it never has to wait, and nothing is queued for a client that does not
 * read.
 *
 * What a peer can make us hold is bounded: TG_CONTROL_MAX_CONNS
 * connections (the one idle longest makes room for a new one), each with
 * a TG_CONTROL_MAX_LINE buffer and TG_CONTROL_IDLE_MS to send its line.
 *
 * Many instances on one policies folder (control.h, "Many instances"):
 * the first takes the folder's own path, each later one a path of its
 * own beside it, <hash>.<pid>.<n>.sock; tg_control_paths lists them all
 * for `toolgate reload`. Choosing is done under a lock file, so that ten
 * instances started together neither take one path twice nor remove a
 * socket another has just bound. The instance on the folder's path holds
 * a second lock, <hash>.owner, for as long as it listens there (the
 * system drops it if the process dies); one beside it tries that lock
 * every TAKEOVER_MS and, once it gets it, moves to the folder's path, so
 * `toolgate hook` still finds an instance when the first one has gone.
 */
#define _GNU_SOURCE /* struct ucred, for SO_PEERCRED */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <time.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include "control.h"

/* How long an instance waits for another to finish choosing its socket
 * (a few system calls) before it chooses without the lock. */
#define CHOOSE_LOCK_MS 5000
/* How often an instance beside the folder's path checks whether that path
 * has been given up. */
#define TAKEOVER_MS 1000

typedef struct tg_writer tg_writer;

struct tg_control {
  uv_pipe_t *server;          /* listening (heap: replaced on a takeover) */
  uv_timer_t busy;            /* paces the control_busy events */
  uv_timer_t takeover;        /* beside the folder's path: checks it */
  tg_closer closer;           /* the handles: freed when all are closed
                                 after tg__control_stop */
  int stopped;
  tg_runtime *rt;
  char *path;
  char *was;                  /* the path before a takeover, kept for
                                 those that had tg_runtime_control_path */
  char *dir, *primary;        /* the socket folder and the folder's own
                                 path (NULL: a path given) */
  char hash[17];
  int owner;                  /* holds <hash>.owner's lock, or -1 */
  dev_t dev;                  /* of the socket file we made: we remove */
  ino_t ino;                  /* it only if it is still ours */
  tg_conn *oldest, *newest;   /* open connections, in accept order */
  int nconns;
  tg_conn *answering;         /* connections whose request is being
                                 answered (linked by prev/next) */
  int nanswering;
  tg_writer *writers;         /* replies still being written */
  unsigned dropped;           /* closed for room since the last event */
  int busy_armed;             /* an event went out less than 1 s ago */
};

struct tg_conn {
  uv_pipe_t pipe;
  uv_timer_t idle;
  tg_control *ctl;            /* NULL once closing */
  tg_conn *prev, *next;       /* in ctl's list while reading its request */
  char in[TG_CONTROL_MAX_LINE];
  size_t len;
  cJSON *head;                /* a request line that announced a body */
  char *body;                 /* ... and its bytes (owned): grown as they
                                 come, not as announced */
  size_t body_len, body_want, body_cap;
  tg_closer closer;           /* pipe and idle: freed when both closed */
  int closing;
  int listed;                 /* in ctl's list (still sending its request) */
  int answering;              /* a request answered later */
  int closed;                 /* both handles closed while answering */
};

/* A reply too big for the socket's buffer, written as the client reads
 * it: the connection's descriptor (a dup) polled for writing, with a
 * deadline. */
struct tg_writer {
  uv_poll_t poll;
  uv_timer_t timer;
  tg_closer closer;
  tg_control *ctl;            /* NULL once closing */
  tg_writer *next;
  int fd;
  char *buf;
  size_t len, off;
};

/* ---- where the socket lives ------------------------------------------ */

static uint64_t fnv1a64(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

/* The folder the sockets go in. */
static void socket_dir(char *buf, size_t len) {
  const char *xdg = getenv("XDG_RUNTIME_DIR");
  if (xdg && xdg[0] == '/')
    snprintf(buf, len, "%s/toolgate", xdg);
  else
    snprintf(buf, len, "/tmp/toolgate-%lu", (unsigned long)getuid());
}

/* The folder must be ours and private: another user must not be able to
 * plant a socket there. Made when `create`. */
static int check_socket_dir(const char *dir, int create, char *err) {
  if (create && mkdir(dir, 0700) < 0 && errno != EEXIST) {
    tg__errf(err, TG_ERRMSG, "cannot make '%s': %s", dir, strerror(errno));
    return -errno;
  }
  struct stat st;
  if (lstat(dir, &st) < 0) return create ? -errno : 0; /* client: no dir */
  if (!S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 077)) {
    tg__errf(err, TG_ERRMSG, "'%s' is not a private folder of this user "
             "(it must be a directory we own with mode 0700); remove it, or "
             "set XDG_RUNTIME_DIR", dir);
    return -EPERM;
  }
  return 0;
}

/* The socket folder (in dir) and the folder's hash (16 hex digits). */
static int folder_key(const char *policies_dir, char dir[PATH_MAX],
                      char hash[17], int create, char *err) {
  char real[PATH_MAX];
  if (!policies_dir) {
    tg__errf(err, TG_ERRMSG, "there is no policies folder to derive the "
             "socket path from; give a path");
    return -EINVAL;
  }
  if (!realpath(policies_dir, real)) {
    int e = errno;
    tg__errf(err, TG_ERRMSG, "cannot find the policies folder '%s': %s",
             policies_dir, strerror(e));
    return -e;
  }
  socket_dir(dir, PATH_MAX);
  snprintf(hash, 17, "%016llx", (unsigned long long)fnv1a64(real));
  return check_socket_dir(dir, create, err);
}

static int default_path(const char *policies_dir, char *buf, size_t len,
                        int create, char *err) {
  char dir[PATH_MAX], hash[17];
  int rc = folder_key(policies_dir, dir, hash, create, err);
  if (rc < 0) return rc;
  int n = snprintf(buf, len, "%s/%s.sock", dir, hash);
  if (n < 0 || (size_t)n >= len) {
    tg__errf(err, TG_ERRMSG, "the socket path under '%s' is too long", dir);
    return -ENAMETOOLONG;
  }
  return 0;
}

int tg_control_path(const char *policies_dir, char *buf, size_t len,
                    char err[TG_ERRMSG]) {
  return default_path(policies_dir, buf, len, 0, err);
}

/* ---- the other instances' paths: <hash>.<pid>.<n>.sock ----------------- */

/* The pid in the name of another instance's socket of folder `hash`, or
 * 0 when name is not one. */
static long sibling_pid(const char *name, const char *hash) {
  size_t h = strlen(hash);
  if (strncmp(name, hash, h) || name[h] != '.') return 0;
  char *end;
  errno = 0;
  long pid = strtol(name + h + 1, &end, 10);
  if (errno || pid <= 0 || *end != '.') return 0;
  const char *n = end + 1;
  if (*n < '0' || *n > '9') return 0;
  strtoul(n, &end, 10);
  return strcmp(end, ".sock") ? 0 : pid;
}

/* The process is gone (its socket file is left over from a crash). */
static int pid_gone(long pid) {
  return kill((pid_t)pid, 0) < 0 && errno == ESRCH;
}

int tg_control_paths(const char *policies_dir, tg_control_path_fn fn,
                     void *ud, char err[TG_ERRMSG]) {
  char dir[PATH_MAX], hash[17], path[PATH_MAX];
  struct stat st;
  int rc = folder_key(policies_dir, dir, hash, 0, err);
  if (rc < 0) return rc;
  int n = 0;
  if ((size_t)snprintf(path, sizeof path, "%s/%s.sock", dir, hash) >=
      sizeof path)
    return 0;
  if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode)) {
    n++;
    if (fn(path, ud)) return n;
  }
  DIR *d = opendir(dir);
  if (!d) return n; /* no folder: no instance made one */
  struct dirent *e;
  while ((e = readdir(d))) {
    long pid = sibling_pid(e->d_name, hash);
    if (!pid || pid_gone(pid)) continue;
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >=
        sizeof path)
      continue;
    if (lstat(path, &st) < 0 || !S_ISSOCK(st.st_mode)) continue;
    n++;
    if (fn(path, ud)) break;
  }
  closedir(d);
  return n;
}

/* Removes the sockets of instances of folder `hash` that are gone. */
static void clear_gone_siblings(const char *dir, const char *hash) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  char path[PATH_MAX];
  while ((e = readdir(d))) {
    long pid = sibling_pid(e->d_name, hash);
    if (pid && pid_gone(pid) &&
        (size_t)snprintf(path, sizeof path, "%s/%s", dir, e->d_name) <
            sizeof path)
      unlink(path);
  }
  closedir(d);
}

/* The lock of the instance on the folder's own path: an fd that holds it,
 * -1 when another holds it, -2 when the file cannot be had (then nobody
 * can tell by the lock). */
static int owner_lock(const char *dir, const char *hash) {
  char path[PATH_MAX];
  if ((size_t)snprintf(path, sizeof path, "%s/%s.owner", dir, hash) >=
      sizeof path)
    return -2;
  int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return -2;
  if (flock(fd, LOCK_EX | LOCK_NB) == 0) return fd;
  close(fd);
  return -1;
}

/* The lock every instance of the folder chooses its path under; -1 (and
 * no lock) when it cannot be had: choosing goes on without it, as before
 * there was one. */
static int choose_lock(const char *dir, const char *hash) {
  char path[PATH_MAX];
  if ((size_t)snprintf(path, sizeof path, "%s/%s.lock", dir, hash) >=
      sizeof path)
    return -1;
  int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return -1;
  for (int waited = 0; waited < CHOOSE_LOCK_MS; waited++) {
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) return fd;
    if (errno != EWOULDBLOCK && errno != EINTR) break;
    struct timespec ms = {0, 1000000};
    nanosleep(&ms, NULL);
  }
  close(fd);
  return -1;
}

int tg__control_addr(struct sockaddr_un *a, const char *path, char *err) {
  memset(a, 0, sizeof *a);
  a->sun_family = AF_UNIX;
  if (strlen(path) >= sizeof a->sun_path) {
    tg__errf(err, TG_ERRMSG, "the socket path '%s' is longer than %zu bytes, "
             "the limit of a Unix socket; choose a shorter one", path,
             sizeof a->sun_path - 1);
    return -ENAMETOOLONG;
  }
  memcpy(a->sun_path, path, strlen(path) + 1);
  return 0;
}

/* ---- the server: connections ----------------------------------------- */

static void conn_free(tg_conn *c) {
  cJSON_Delete(c->head);
  free(c->body);
  free(c);
}

/* A connection being answered is freed by the answer, when it comes. */
static void conn_closed(tg_closer *cl) {
  tg_conn *c = tg__owner_of(cl, tg_conn, closer);
  if (c->answering) c->closed = 1;
  else conn_free(c);
}

/* Takes the connection out of ctl's list (of those still sending). */
static void conn_unlink(tg_conn *c) {
  tg_control *ctl = c->ctl;
  if (!ctl || !c->listed) return;
  if (c->prev) c->prev->next = c->next; else ctl->oldest = c->next;
  if (c->next) c->next->prev = c->prev; else ctl->newest = c->prev;
  c->prev = c->next = NULL;
  c->listed = 0;
  ctl->nconns--;
}

/* Into, and out of, ctl's list of connections being answered. */
static void answering_link(tg_conn *c) {
  tg_control *ctl = c->ctl;
  c->prev = NULL;
  c->next = ctl->answering;
  if (ctl->answering) ctl->answering->prev = c;
  ctl->answering = c;
  ctl->nanswering++;
  c->answering = 1;
}

static void answering_unlink(tg_conn *c) {
  tg_control *ctl = c->ctl;
  c->answering = 0;
  if (!ctl) return;
  if (c->prev) c->prev->next = c->next; else ctl->answering = c->next;
  if (c->next) c->next->prev = c->prev;
  c->prev = c->next = NULL;
  ctl->nanswering--;
}

static void conn_close(tg_conn *c) {
  if (c->closing) return;
  c->closing = 1;
  if (c->ctl) { /* unlink now: the server may go before our callbacks */
    conn_unlink(c);
    if (c->answering) { /* still answering: its answer frees it */
      answering_unlink(c);
      c->answering = 1;
    }
    c->ctl = NULL;
  }
  tg__close(&c->closer, (uv_handle_t *)&c->pipe, 0);
  tg__close(&c->closer, (uv_handle_t *)&c->idle, 0);
}

/* ---- writing what did not fit at once ---------------------------------- */

static void writer_closed(tg_closer *cl) {
  tg_writer *w = tg__owner_of(cl, tg_writer, closer);
  close(w->fd);
  free(w->buf);
  free(w);
}

static void writer_close(tg_writer *w) {
  if (w->ctl) {
    tg_writer **p = &w->ctl->writers;
    while (*p && *p != w) p = &(*p)->next;
    if (*p) *p = w->next;
    w->ctl = NULL;
  }
  tg__close(&w->closer, (uv_handle_t *)&w->poll, 0);
  tg__close(&w->closer, (uv_handle_t *)&w->timer, 0);
}

static void writer_cb(uv_poll_t *h, int status, int events) {
  tg_writer *w = h->data;
  while (status == 0 && w->off < w->len) {
    ssize_t n = send(w->fd, w->buf + w->off, w->len - w->off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return; /* polled again when writable */
    if (n <= 0) break; /* the client left */
    w->off += (size_t)n;
  }
  writer_close(w);
}

static void writer_timeout(uv_timer_t *t) { writer_close(t->data); }

/* Hands the rest of a reply (buf, taken) to a writer on a dup of fd. */
static void write_later(tg_control *ctl, int fd, char *buf, size_t len,
                        size_t off) {
  tg_writer *w = calloc(1, sizeof *w);
  int dup_fd = w ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1;
  if (!w || dup_fd < 0) { /* the client gets a cut reply, which it refuses */
    free(w);
    free(buf);
    return;
  }
  w->fd = dup_fd;
  w->buf = buf;
  w->len = len;
  w->off = off;
  w->ctl = ctl;
  w->closer.closed = writer_closed;
  uv_loop_t *loop = tg_runtime_loop(ctl->rt);
  uv_timer_init(loop, &w->timer);
  w->timer.data = w;
  if (uv_poll_init(loop, &w->poll, dup_fd) < 0) {
    tg__close(&w->closer, (uv_handle_t *)&w->timer, 0); /* frees w */
    return;
  }
  w->poll.data = w;
  w->next = ctl->writers;
  ctl->writers = w;
  uv_poll_start(&w->poll, UV_WRITABLE, writer_cb);
  uv_timer_start(&w->timer, writer_timeout, TG_CONTROL_IDLE_MS, 0);
}

/* Sends buf (taken: len bytes) and closes the connection; what the
 * socket's buffer does not take at once is written as the client reads. */
static void send_and_close(tg_conn *c, char *buf, size_t len) {
  uv_os_fd_t fd;
  size_t off = 0;
  if (buf && uv_fileno((uv_handle_t *)&c->pipe, &fd) == 0) {
    while (off < len) {
      ssize_t w = send(fd, buf + off, len - off, MSG_NOSIGNAL);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0 && errno == EAGAIN && c->ctl) {
        write_later(c->ctl, fd, buf, len, off);
        buf = NULL;
        break;
      }
      if (w <= 0) break; /* the client left */
      off += (size_t)w;
    }
  }
  free(buf);
  conn_close(c);
}

/* Sends one JSON line, then `extra` (len bytes, may be NULL), and closes.
 * Takes ownership of j. */
static void reply_with(tg_conn *c, cJSON *j, const char *extra, size_t len) {
  char *s = tg_json_print(j, 0);
  cJSON_Delete(j);
  size_t n = s ? strlen(s) : 0;
  char *buf = s ? realloc(s, n + 1 + len) : NULL;
  if (!buf) {
    free(s);
    conn_close(c);
    return;
  }
  buf[n] = '\n';
  if (len) memcpy(buf + n + 1, extra, len);
  send_and_close(c, buf, n + 1 + len);
}

static void reply(tg_conn *c, cJSON *j) { reply_with(c, j, NULL, 0); }

static cJSON *error_reply(tg_runtime *rt, const char *msg) {
  cJSON *j = cJSON_CreateObject();
  cJSON_AddFalseToObject(j, "ok");
  cJSON_AddStringToObject(j, "error", msg);
  cJSON_AddNumberToObject(j, "generation", (double)tg_runtime_generation(rt));
  return j;
}

static cJSON *do_reload(tg_runtime *rt) {
  char err[TG_ERRMSG] = "";
  tg_control_reloaded info;
  if (tg__control_reload(rt, &info, err) < 0)
    return error_reply(rt, err);
  cJSON *j = cJSON_CreateObject();
  cJSON_AddTrueToObject(j, "ok");
  cJSON_AddNumberToObject(j, "generation", (double)info.generation);
  cJSON_AddNumberToObject(j, "files", (double)info.files);
  cJSON_AddNumberToObject(j, "duration_ms", info.duration_ms);
  cJSON_AddNumberToObject(j, "pid", (double)getpid());
  return j;
}

static cJSON *do_status(tg_runtime *rt) {
  cJSON *j = cJSON_CreateObject();
  cJSON_AddTrueToObject(j, "ok");
  cJSON_AddNumberToObject(j, "generation", (double)tg_runtime_generation(rt));
  const char *dir = tg__control_policies(rt);
  if (dir) cJSON_AddStringToObject(j, "policies", dir);
  cJSON_AddNumberToObject(j, "pid", (double)getpid());
  return j;
}

/* The answer to a request without a body. Takes req. */
static cJSON *answer(tg_runtime *rt, cJSON *req) {
  const char *cmd = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(req, "cmd"));
  char msg[300];
  cJSON *out;
  if (!cmd) {
    out = error_reply(rt, "a request is one JSON object with a \"cmd\" "
                          "string, like {\"cmd\":\"reload\"}");
  } else if (strcmp(cmd, "reload") == 0) {
    out = do_reload(rt);
  } else if (strcmp(cmd, "status") == 0) {
    out = do_status(rt);
  } else {
    snprintf(msg, sizeof msg, "unknown command '%.200s' (known: reload, "
             "status, hook)", cmd);
    out = error_reply(rt, msg);
  }
  cJSON_Delete(req);
  return out;
}

/* ---- requests with a body: hook ------------------------------------------ */

/* The body is complete: the request is answered, now or later
 * (tg__control_answer_hook); meanwhile the connection is no longer one
 * that make_room may close, and does not time out. */
static void body_complete(tg_conn *c) {
  tg_control *ctl = c->ctl;
  uv_read_stop((uv_stream_t *)&c->pipe);
  uv_timer_stop(&c->idle);
  conn_unlink(c);
  if (ctl->nanswering >= TG_CONTROL_MAX_ANSWERING) {
    char msg[160];
    snprintf(msg, sizeof msg, "too many requests being answered at once "
             "(%d); try again", TG_CONTROL_MAX_ANSWERING);
    reply(c, error_reply(ctl->rt, msg));
    return;
  }
  answering_link(c);
  tg__control_hook(ctl->rt, c, c->head, c->body, c->body_len);
}

/* A request line that announces `bytes` of body (hook): keeps the line,
 * takes what came after it, and reads the rest. */
static void begin_body(tg_conn *c, cJSON *req, const char *rest, size_t n) {
  const cJSON *b = cJSON_GetObjectItemCaseSensitive(req, "bytes");
  double want = cJSON_IsNumber(b) ? b->valuedouble : -1;
  if (want < 0 || want > TG_HOOK_MAX_EVENT || want != (double)(size_t)want) {
    char msg[200];
    snprintf(msg, sizeof msg, "a hook request says how many bytes of event "
             "follow its line: \"bytes\", a whole number up to %u",
             TG_HOOK_MAX_EVENT);
    cJSON_Delete(req);
    reply(c, error_reply(c->ctl->rt, msg));
    return;
  }
  c->head = req;
  c->body_want = (size_t)want;
  c->body_cap = c->body_want < 65536 ? c->body_want : 65536;
  if (c->body_cap < n) c->body_cap = n < c->body_want ? n : c->body_want;
  c->body = malloc(c->body_cap + 1);
  if (!c->body) {
    reply(c, error_reply(c->ctl->rt, "out of memory for the event"));
    return;
  }
  c->body_len = n < c->body_want ? n : c->body_want;
  if (c->body_len) memcpy(c->body, rest, c->body_len); /* rest: NULL at EOF */
  if (c->body_len == c->body_want) body_complete(c);
}

static void body_read(tg_conn *c, ssize_t nread) {
  if (nread < 0) { /* the client left before its event was whole */
    conn_close(c);
    return;
  }
  c->body_len += (size_t)nread;
  if (c->body_len == c->body_want) body_complete(c);
}

/* One request line (NUL-terminated at len); rest: what followed it. */
static void request_line(tg_conn *c, const char *line, size_t len,
                         const char *rest, size_t nrest) {
  tg_runtime *rt = c->ctl->rt;
  /* a raw NUL byte would cut the line short; an escaped one (\u0000) the
   * strict parser refuses */
  if (memchr(line, '\0', len)) {
    reply(c, error_reply(rt, "the request contains a NUL character; a "
                             "request is one JSON object like "
                             "{\"cmd\":\"reload\"}"));
    return;
  }
  char msg[300];
  cJSON *req = tg_json_parse(line, len, NULL, msg, sizeof msg);
  if (!req) {
    char why[500];
    snprintf(why, sizeof why, "a request is one JSON object with a \"cmd\" "
             "string, like {\"cmd\":\"reload\"}; this one is not JSON: %s", msg);
    reply(c, error_reply(rt, why));
    return;
  }
  const char *cmd = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(req, "cmd"));
  if (cmd && !strcmp(cmd, "hook")) {
    begin_body(c, req, rest, nrest);
    return;
  }
  uv_read_stop((uv_stream_t *)&c->pipe);
  reply(c, answer(rt, req));
}

static void alloc_cb(uv_handle_t *h, size_t hint, uv_buf_t *buf) {
  tg_conn *c = h->data;
  if (c->body) {
    if (c->body_len == c->body_cap) { /* twice as much, up to what comes */
      size_t cap = c->body_cap * 2 < c->body_want ? c->body_cap * 2
                                                   : c->body_want;
      char *g = realloc(c->body, cap + 1);
      if (g) {
        c->body = g;
        c->body_cap = cap;
      }
    }
    buf->base = c->body + c->body_len;
    buf->len = c->body_cap - c->body_len; /* 0 (no memory): read fails */
    return;
  }
  /* one byte kept for the NUL that ends the line */
  buf->base = c->in + c->len;
  buf->len = sizeof c->in - 1 - c->len;
}

static void read_cb(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf) {
  tg_conn *c = s->data;
  if (c->closing || !c->ctl || c->answering) return;
  if (c->body) {
    if (nread != 0) body_read(c, nread);
    return;
  }
  if (nread > 0) c->len += (size_t)nread;
  c->in[c->len] = '\0';
  char *nl = memchr(c->in, '\n', c->len);
  int eof = nread < 0;
  if (!nl && !eof && c->len == sizeof c->in - 1) {
    char msg[100];
    snprintf(msg, sizeof msg, "the request is longer than %d bytes",
             TG_CONTROL_MAX_LINE - 1);
    reply(c, error_reply(c->ctl->rt, msg));
    return;
  }
  if (!nl && !(eof && nread == UV_EOF && c->len)) {
    if (eof) conn_close(c); /* an error, or EOF with nothing said */
    return;
  }
  size_t len = nl ? (size_t)(nl - c->in) : c->len;
  if (nl) *nl = '\0';
  request_line(c, c->in, len, nl ? nl + 1 : NULL,
               nl ? c->len - len - 1 : 0);
  /* a hook request's line at EOF: its event can no longer come (as in
   * body_read), rather than the connection held until the idle timeout */
  if (eof && c->body && !c->closing && !c->answering) conn_close(c);
}

/* ---- the answer to a hook request ------------------------------------------- */

/* {"ok":true,"exit_code":N,"stdout_bytes":n,"stderr_bytes":m}, then the
 * n bytes of stdout and the m of stderr: no escaping, byte for byte what
 * the in-process answer prints. */
void tg__control_answer_hook(tg_conn *c, const tg_hook_result *res) {
  answering_unlink(c);
  if (c->closing) { /* the server stopped meanwhile */
    if (c->closed) conn_free(c);
    return;
  }
  size_t no = res->output ? strlen(res->output) : 0;
  size_t ne = res->message ? strlen(res->message) : 0;
  char *both = malloc(no + ne + 1);
  if (!both) {
    reply(c, error_reply(c->ctl->rt, "out of memory for the answer"));
    return;
  }
  if (no) memcpy(both, res->output, no);
  if (ne) memcpy(both + no, res->message, ne);
  cJSON *j = cJSON_CreateObject();
  cJSON_AddTrueToObject(j, "ok");
  cJSON_AddNumberToObject(j, "exit_code", res->exit_code);
  cJSON_AddNumberToObject(j, "stdout_bytes", (double)no);
  cJSON_AddNumberToObject(j, "stderr_bytes", (double)ne);
  reply_with(c, j, both, no + ne);
  free(both);
}

void tg__control_answer_error(tg_conn *c, const char *msg) {
  answering_unlink(c);
  if (c->closing) {
    if (c->closed) conn_free(c);
    return;
  }
  reply(c, error_reply(c->ctl->rt, msg));
}

static void idle_cb(uv_timer_t *t) { conn_close(t->data); }

/* Only our own user may drive the instance, whatever the socket file's
 * mode was between bind and chmod or wherever --socket put it. */
static int peer_is_us(uv_pipe_t *p) {
  uv_os_fd_t fd;
  struct ucred cred;
  socklen_t len = sizeof cred;
  if (uv_fileno((uv_handle_t *)p, &fd) < 0 ||
      getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
    return 0;
  return cred.uid == getuid();
}

/* ---- the server: room for one more ------------------------------------ */

static void emit_busy(tg_control *ctl) {
  cJSON *d = cJSON_CreateObject();
  cJSON_AddNumberToObject(d, "dropped", ctl->dropped);
  cJSON_AddNumberToObject(d, "limit", TG_CONTROL_MAX_CONNS);
  ctl->dropped = 0;
  tg__control_emit(ctl->rt, "control_busy", d);
}

/* A second after an event: another for what was dropped since, if any. */
static void busy_cb(uv_timer_t *t) {
  tg_control *ctl = t->data;
  if (!ctl->dropped) {
    ctl->busy_armed = 0;
    return;
  }
  emit_busy(ctl);
  uv_timer_start(&ctl->busy, busy_cb, 1000, 0);
}

static void note_dropped(tg_control *ctl) {
  ctl->dropped++;
  if (ctl->busy_armed) return;
  ctl->busy_armed = 1;
  emit_busy(ctl);
  uv_timer_start(&ctl->busy, busy_cb, 1000, 0);
}

/* At the limit, the connection idle longest is told why and closed (its
 * descriptor goes at once): every open connection is one that has not
 * sent a full line yet, since a full line is answered when it comes. */
static void make_room(tg_control *ctl) {
  if (ctl->nconns < TG_CONTROL_MAX_CONNS) return;
  char msg[200];
  snprintf(msg, sizeof msg, "too many control connections (%d open); this "
           "one had waited longest without a full request and was closed "
           "to make room: send the request right after connecting",
           TG_CONTROL_MAX_CONNS);
  reply(ctl->oldest, error_reply(ctl->rt, msg));
  note_dropped(ctl);
}

static void on_connection(uv_stream_t *server, int status) {
  tg_control *ctl = server->data;
  if (status < 0) return;
  make_room(ctl);
  tg_conn *c = calloc(1, sizeof *c);
  if (!c) return;
  uv_pipe_init(tg_runtime_loop(ctl->rt), &c->pipe, 0);
  uv_timer_init(tg_runtime_loop(ctl->rt), &c->idle);
  c->pipe.data = c->idle.data = c;
  c->closer.closed = conn_closed;
  c->ctl = ctl;
  c->listed = 1;
  c->prev = ctl->newest;
  if (ctl->newest) ctl->newest->next = c; else ctl->oldest = c;
  ctl->newest = c;
  ctl->nconns++;
  if (uv_accept(server, (uv_stream_t *)&c->pipe) < 0 ||
      !peer_is_us(&c->pipe) ||
      uv_read_start((uv_stream_t *)&c->pipe, alloc_cb, read_cb) < 0) {
    conn_close(c);
    return;
  }
  uv_timer_start(&c->idle, idle_cb, TG_CONTROL_IDLE_MS, 0);
}

/* ---- the server: listening ------------------------------------------- */

/* A socket file from an instance that is gone is removed; one that
 * answers means another instance runs. */
static int clear_stale(const char *path, char *err) {
  struct stat st;
  if (lstat(path, &st) < 0) return 0;
  if (!S_ISSOCK(st.st_mode)) {
    tg__errf(err, TG_ERRMSG, "'%s' exists and is not a socket; remove it or "
             "choose another path", path);
    return -EEXIST;
  }
  struct sockaddr_un a;
  int rc = tg__control_addr(&a, path, err);
  if (rc < 0) return rc;
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -errno;
  rc = connect(fd, (struct sockaddr *)&a, sizeof a);
  int e = rc < 0 ? errno : 0;
  close(fd);
  if (e == ECONNREFUSED || e == ENOENT) { /* stale: nobody listens */
    if (unlink(path) == 0 || errno == ENOENT) return 0;
    e = errno;
  } else if (e == 0 || e == EAGAIN || e == EINPROGRESS) {
    tg__errf(err, TG_ERRMSG, "another toolgate instance is already "
             "listening on '%s' (the same policies folder); stop it, or send "
             "it `toolgate reload`", path);
    return -EADDRINUSE;
  }
  tg__errf(err, TG_ERRMSG, "cannot replace '%s': %s", path, strerror(e));
  return -e;
}

/* After each close callback: the last one after the stop frees it (a pipe
 * given up in a takeover closes before, and frees nothing). */
static void server_closed(tg_closer *cl) {
  tg_control *ctl = tg__owner_of(cl, tg_control, closer);
  if (!ctl->stopped) return;
  free(ctl->path);
  free(ctl->was);
  free(ctl->dir);
  free(ctl->primary);
  free(ctl);
}

static void server_close(tg_control *ctl) {
  ctl->stopped = 1;
  tg__close(&ctl->closer, (uv_handle_t *)ctl->server, 1);
  tg__close(&ctl->closer, (uv_handle_t *)&ctl->busy, 0);
  tg__close(&ctl->closer, (uv_handle_t *)&ctl->takeover, 0);
  if (ctl->owner >= 0) close(ctl->owner); /* the path is gone: free */
  ctl->owner = -1;
}

void tg__control_stop(tg_runtime *rt) {
  tg_control *ctl = tg__control_get(rt);
  if (!ctl) return;
  tg__control_set(rt, NULL, NULL);
  while (ctl->oldest) conn_close(ctl->oldest);
  while (ctl->answering) conn_close(ctl->answering);
  while (ctl->writers) writer_close(ctl->writers);
  struct stat st;
  if (ctl->path && lstat(ctl->path, &st) == 0 && st.st_dev == ctl->dev &&
      st.st_ino == ctl->ino)
    unlink(ctl->path);
  server_close(ctl);
}

/* A new listening pipe (ctl->server's, or a takeover's) */
static uv_pipe_t *new_pipe(tg_control *ctl) {
  uv_pipe_t *p = malloc(sizeof *p);
  if (!p) return NULL;
  uv_pipe_init(tg_runtime_loop(ctl->rt), p, 0);
  p->data = ctl;
  return p;
}

static int bind_and_listen(tg_control *ctl, uv_pipe_t *p, const char *path,
                           char *err) {
  int rc = uv_pipe_bind(p, path);
  if (rc == 0) rc = uv_listen((uv_stream_t *)p, 16, on_connection);
  if (rc < 0) {
    tg__errf(err, TG_ERRMSG, "cannot listen on '%s': %s", path,
             uv_strerror(rc));
    return rc;
  }
  struct stat st;
  /* private even where the folder is not (a path the user chose) */
  if (chmod(path, 0600) < 0 || lstat(path, &st) < 0) {
    rc = -errno;
    tg__errf(err, TG_ERRMSG, "cannot secure '%s': %s", path, strerror(errno));
    unlink(path);
    return rc;
  }
  ctl->dev = st.st_dev;
  ctl->ino = st.st_ino;
  return 0;
}

/* Where a runtime listens: the path, and for the folder's own path the
 * socket folder, the hash, that path and the owner lock. */
typedef struct {
  char path[PATH_MAX];
  char dir[PATH_MAX], hash[17], primary[PATH_MAX];
  int folder;                 /* chosen by folder (no path given) */
  int owner;                  /* the owner lock's fd, or -1 */
} place;

static int listen_on(tg_runtime *rt, place *pl, char *err);

/* The folder's own path when nobody has it (its owner lock is free; a
 * stale file is removed), else a path of this instance's own beside it.
 * Under the choosing lock, held until the socket listens (*lock: its fd,
 * or -1). */
static int choose_path(tg_runtime *rt, place *pl, int *lock, char *err) {
  static unsigned next; /* several runtimes of one process: a path each */
  int rc = folder_key(tg__control_policies(rt), pl->dir, pl->hash, 1, err);
  if (rc < 0) return rc;
  pl->folder = 1;
  *lock = choose_lock(pl->dir, pl->hash);
  clear_gone_siblings(pl->dir, pl->hash);
  if ((size_t)snprintf(pl->primary, sizeof pl->primary, "%s/%s.sock",
                       pl->dir, pl->hash) >= sizeof pl->primary) {
    tg__errf(err, TG_ERRMSG, "the socket path under '%s' is too long",
             pl->dir);
    return -ENAMETOOLONG;
  }
  memcpy(pl->path, pl->primary, sizeof pl->path);
  int owner = owner_lock(pl->dir, pl->hash);
  if (owner != -1) { /* nobody owns the path (or nobody can tell) */
    char why[TG_ERRMSG];
    rc = clear_stale(pl->path, why);
    if (rc != -EADDRINUSE) {
      if (rc < 0) {
        memcpy(err, why, TG_ERRMSG);
        if (owner >= 0) close(owner);
      } else {
        pl->owner = owner;
      }
      return rc;
    }
    if (owner >= 0) close(owner); /* a program that keeps no owner lock */
  }
  int n = snprintf(pl->path, sizeof pl->path, "%s/%s.%ld.%u.sock", pl->dir,
                   pl->hash, (long)getpid(),
                   __atomic_fetch_add(&next, 1u, __ATOMIC_RELAXED));
  if (n < 0 || (size_t)n >= sizeof pl->path) {
    tg__errf(err, TG_ERRMSG, "the socket path under '%s' is too long",
             pl->dir);
    return -ENAMETOOLONG;
  }
  return clear_stale(pl->path, err);
}

/* ---- taking over the folder's own path --------------------------------- */

/* Beside the folder's path: when its owner lock is free (the instance
 * there has stopped or died), this one moves there — a new pipe on the
 * folder's path, then the old one closed and its file removed. */
static void takeover_tick(uv_timer_t *t) {
  tg_control *ctl = t->data;
  if (ctl->stopped) return;
  int owner = owner_lock(ctl->dir, ctl->hash);
  if (owner < 0) return; /* it lives (or nobody can tell: stay) */
  int lock = choose_lock(ctl->dir, ctl->hash);
  char err[TG_ERRMSG];
  dev_t dev = ctl->dev;
  ino_t ino = ctl->ino;
  uv_pipe_t *p = NULL;
  char *path = tg__strdup(ctl->primary);
  int rc = path ? clear_stale(ctl->primary, err) : -ENOMEM;
  if (rc == 0) rc = (p = new_pipe(ctl)) ? 0 : -ENOMEM;
  if (rc == 0) rc = bind_and_listen(ctl, p, ctl->primary, err);
  if (lock >= 0) close(lock);
  if (rc < 0) { /* the next tick tries again */
    if (p) tg__close(&ctl->closer, (uv_handle_t *)p, 1);
    free(path);
    close(owner);
    return;
  }
  uv_unref((uv_handle_t *)p);
  struct stat st;
  if (lstat(ctl->path, &st) == 0 && st.st_dev == dev && st.st_ino == ino)
    unlink(ctl->path);
  tg__close(&ctl->closer, (uv_handle_t *)ctl->server, 1);
  ctl->server = p;
  free(ctl->was);
  ctl->was = ctl->path;
  ctl->path = path;
  ctl->owner = owner;
  uv_timer_stop(&ctl->takeover);
}

int tg_runtime_listen(tg_runtime *rt, const char *path, char err[TG_ERRMSG]) {
  struct sockaddr_un a;
  int lock = -1;
  if (tg__control_get(rt)) {
    tg__errf(err, TG_ERRMSG, "already listening on '%s'",
             tg__control_get(rt)->path);
    return -EALREADY;
  }
  place *pl = calloc(1, sizeof *pl);
  if (!pl) {
    tg__errf(err, TG_ERRMSG, "out of memory");
    return -ENOMEM;
  }
  pl->owner = -1;
  int rc = 0;
  if (path && strlen(path) >= sizeof pl->path) {
    rc = tg__control_addr(&a, path, err); /* says it is too long */
  } else if (path) {
    memcpy(pl->path, path, strlen(path) + 1);
    rc = clear_stale(path, err);
  } else {
    rc = choose_path(rt, pl, &lock, err);
  }
  if (rc == 0) rc = tg__control_addr(&a, pl->path, err);
  if (rc == 0) rc = listen_on(rt, pl, err); /* takes pl->owner */
  else if (pl->owner >= 0) close(pl->owner);
  if (lock >= 0) close(lock); /* the socket listens: others may choose */
  free(pl);
  return rc;
}

static int listen_on(tg_runtime *rt, place *pl, char *err) {
  int rc;
  tg_control *ctl = calloc(1, sizeof *ctl);
  if (ctl) {
    ctl->rt = rt;
    ctl->owner = pl->owner;
    pl->owner = -1;
    ctl->path = tg__strdup(pl->path);
    if (pl->folder) {
      ctl->dir = tg__strdup(pl->dir);
      ctl->primary = tg__strdup(pl->primary);
      memcpy(ctl->hash, pl->hash, sizeof ctl->hash);
    }
  }
  if (!ctl || !ctl->path || (pl->folder && (!ctl->dir || !ctl->primary)) ||
      !(ctl->server = new_pipe(ctl))) {
    if (ctl) {
      if (ctl->owner >= 0) close(ctl->owner);
      free(ctl->path);
      free(ctl->dir);
      free(ctl->primary);
    }
    free(ctl);
    tg__errf(err, TG_ERRMSG, "out of memory");
    return -ENOMEM;
  }
  uv_timer_init(tg_runtime_loop(rt), &ctl->busy);
  uv_timer_init(tg_runtime_loop(rt), &ctl->takeover);
  ctl->busy.data = ctl->takeover.data = ctl;
  ctl->closer.closed = server_closed;
  rc = bind_and_listen(ctl, ctl->server, ctl->path, err);
  if (rc < 0) {
    server_close(ctl);
    return rc;
  }
  /* listening alone must not keep the host's loop running */
  uv_unref((uv_handle_t *)ctl->server);
  uv_unref((uv_handle_t *)&ctl->busy);
  uv_unref((uv_handle_t *)&ctl->takeover);
  if (pl->folder && strcmp(ctl->path, ctl->primary))
    uv_timer_start(&ctl->takeover, takeover_tick, TAKEOVER_MS, TAKEOVER_MS);
  tg__control_set(rt, ctl, tg__control_stop);
  return 0;
}

const char *tg_runtime_control_path(tg_runtime *rt) {
  tg_control *ctl = tg__control_get(rt);
  return ctl ? ctl->path : NULL;
}
