/*
 * client.c — the client side of the control socket (control.h):
 * small and blocking, for a process that only asks — `toolgate reload`,
 * and `toolgate hook` talking to a resident instance (which must not load
 * Lua or policies to do so). Every wait is bounded by a deadline.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <uv.h>
#include "control.h"

/* ---- the client ------------------------------------------------------ */

static int64_t left_ms(uint64_t deadline_ns) {
  uint64_t now = uv_hrtime();
  return now >= deadline_ns ? 0 : (int64_t)((deadline_ns - now) / 1000000);
}

/* Waits for fd to be ready for `events`; -ETIMEDOUT past the deadline. */
static int wait_fd(int fd, short events, uint64_t deadline_ns) {
  for (;;) {
    struct pollfd p = {fd, events, 0};
    int64_t ms = left_ms(deadline_ns);
    int n = poll(&p, 1, ms > INT_MAX ? INT_MAX : (int)ms);
    if (n > 0) return 0;
    if (n == 0) return -ETIMEDOUT;
    if (errno != EINTR) return -errno;
  }
}

static int client_connect(const char *path, uint64_t deadline, char *err) {
  struct sockaddr_un a;
  int rc = tg__control_addr(&a, path, err);
  if (rc < 0) return rc;
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -errno;
  if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
    rc = -errno;
    if (rc == -EAGAIN || rc == -EINPROGRESS) { /* backlog full: wait */
      rc = wait_fd(fd, POLLOUT, deadline);
      socklen_t l = sizeof(int);
      int so = 0;
      if (rc == 0 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &so, &l) == 0 && so)
        rc = -so;
    }
    if (rc < 0) {
      close(fd);
      tg__errf(err, TG_ERRMSG, "cannot connect to '%s': %s", path,
               strerror(-rc));
      return rc;
    }
  }
  return fd;
}

static int send_all(int fd, const char *s, size_t n, uint64_t deadline) {
  size_t off = 0;
  while (off < n) {
    ssize_t w = send(fd, s + off, n - off, MSG_NOSIGNAL);
    if (w > 0) {
      off += (size_t)w;
    } else if (w < 0 && errno == EAGAIN) {
      int rc = wait_fd(fd, POLLOUT, deadline);
      if (rc < 0) return rc;
    } else if (!(w < 0 && errno == EINTR)) {
      return w < 0 ? -errno : -EPIPE;
    }
  }
  return 0;
}

/* Reads up to the first newline (or EOF) into a malloc'd string. */
static int read_line(int fd, char **out, uint64_t deadline) {
  size_t cap = 1024, len = 0;
  char *b = malloc(cap);
  if (!b) return -ENOMEM;
  for (;;) {
    if (len + 1 == cap) {
      char *g = cap < (1u << 20) ? realloc(b, cap *= 2) : NULL;
      if (!g) break;
      b = g;
    }
    ssize_t r = recv(fd, b + len, cap - 1 - len, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 && errno == EAGAIN) {
      int rc = wait_fd(fd, POLLIN, deadline);
      if (rc < 0) {
        free(b);
        return rc;
      }
      continue;
    }
    if (r <= 0) break;
    b[len + (size_t)r] = '\0';
    char *nl = memchr(b + len, '\n', (size_t)r);
    len += (size_t)r;
    if (nl) {
      *nl = '\0';
      len = (size_t)(nl - b);
      break;
    }
  }
  b[len] = '\0';
  if (!len) {
    free(b);
    return -EPROTO;
  }
  *out = b;
  return 0;
}

int tg_control_request(const char *path, const char *request, char **reply_out,
                       uint64_t timeout_ms, char err[TG_ERRMSG]) {
  uint64_t deadline = uv_hrtime() + (timeout_ms ? timeout_ms : 30000) * 1000000ull;
  *reply_out = NULL;
  int fd = client_connect(path, deadline, err);
  if (fd < 0) return fd;
  size_t n = strlen(request);
  int rc = send_all(fd, request, n, deadline);
  if (rc == 0 && (n == 0 || request[n - 1] != '\n'))
    rc = send_all(fd, "\n", 1, deadline);
  if (rc == 0) rc = read_line(fd, reply_out, deadline);
  close(fd);
  if (rc == -ETIMEDOUT)
    tg__errf(err, TG_ERRMSG, "no reply from '%s' within %llu ms", path,
             (unsigned long long)(timeout_ms ? timeout_ms : 30000));
  else if (rc == -EPROTO)
    tg__errf(err, TG_ERRMSG, "'%s' closed the connection without a reply",
             path);
  else if (rc < 0)
    tg__errf(err, TG_ERRMSG, "talking to '%s' failed: %s", path,
             strerror(-rc));
  return rc;
}

/* Reads until EOF, at most max bytes. */
static int read_all(int fd, char **out, size_t *outlen, size_t max,
                    uint64_t deadline) {
  size_t cap = 4096, len = 0;
  char *b = malloc(cap + 1);
  if (!b) return -ENOMEM;
  for (;;) {
    if (len == cap) {
      size_t ncap = cap * 2 > max ? max : cap * 2;
      char *g = ncap > cap ? realloc(b, ncap + 1) : NULL;
      if (!g) {
        free(b);
        return ncap > cap ? -ENOMEM : -EMSGSIZE;
      }
      b = g;
      cap = ncap;
    }
    ssize_t r = recv(fd, b + len, cap - len, 0);
    if (r > 0) {
      len += (size_t)r;
      continue;
    }
    if (r == 0) break;
    if (errno == EINTR) continue;
    int rc = errno == EAGAIN ? wait_fd(fd, POLLIN, deadline) : -errno;
    if (rc < 0) {
      free(b);
      return rc;
    }
  }
  b[len] = '\0';
  *out = b;
  *outlen = len;
  return 0;
}

int tg__control_exchange(const char *path, const char *req, size_t len,
                         char **reply_out, size_t *reply_len, size_t max,
                         uint64_t timeout_ms, char err[TG_ERRMSG]) {
  uint64_t deadline = uv_hrtime() + timeout_ms * 1000000ull;
  *reply_out = NULL;
  int fd = client_connect(path, deadline, err);
  if (fd < 0) return fd;
  int rc = send_all(fd, req, len, deadline);
  if (rc == 0) rc = read_all(fd, reply_out, reply_len, max, deadline);
  close(fd);
  if (rc == -ETIMEDOUT)
    tg__errf(err, TG_ERRMSG, "no reply from '%s' within %llu ms", path,
             (unsigned long long)timeout_ms);
  else if (rc == -EMSGSIZE)
    tg__errf(err, TG_ERRMSG, "the reply from '%s' is over %zu bytes", path, max);
  else if (rc < 0)
    tg__errf(err, TG_ERRMSG, "talking to '%s' failed: %s", path, strerror(-rc));
  return rc;
}
