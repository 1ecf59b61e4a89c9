/*
 * fuzz_control.c — the control socket's protocol, as a resident instance
 * (`toolgate daemon`, `serve`, `watch`) reads it (src/control/server.c:
 * the request line, its strict parse, reload / status / hook, the hook
 * request's announced body; hook_request.c and the hook answer behind
 * it). The runtime (policies of spec/fuzz/policies, no database) listens
 * on a socket in a temporary folder made once; each input is sent by a
 * real client connection, which then shuts its side and reads the reply
 * to the end. Proves: no crash, leak, hang or undefined behaviour; every
 * input gets a reply (or, when it says nothing, a clean close) whose
 * first line is a JSON object with "ok", and a hook answer's announced
 * sizes are the bytes that follow.
 */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>
#include "fuzz.h"
#include "toolgate.h"
#include "base/json.h"

static tg_runtime *rt;
static char sock[128];
static char dir[] = "/tmp/tg-fuzz-control-XXXXXX";

/* The listening socket does not keep the loop alive (uv_unref): this
 * timer does, so uv_run polls for the client's connection. */
static uv_timer_t keepalive;
static void tick(uv_timer_t *t) { (void)t; }

static void remove_socket(void) {
  unlink(sock);
  rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  rt = fuzz_runtime("fuzz_control", NULL);
  char err[TG_ERRMSG] = "";
  if (!mkdtemp(dir)) {
    fprintf(stderr, "fuzz_control: %s\n", strerror(errno));
    abort();
  }
  snprintf(sock, sizeof sock, "%s/c.sock", dir);
  if (tg_runtime_listen(rt, sock, err) < 0) {
    fprintf(stderr, "fuzz_control: %s\n", err);
    abort();
  }
  atexit(remove_socket);
  uv_timer_init(tg_runtime_loop(rt), &keepalive);
  uv_timer_start(&keepalive, tick, 1000, 1000);
  return 0;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void check_reply(const char *r, size_t n) {
  if (n == 0) return; /* closed without a word: a request never sent */
  const char *nl = memchr(r, '\n', n);
  FUZZ_ASSERT(nl != NULL, "the reply has no line: %.*s", (int)n, r);
  char err[256] = "";
  cJSON *h = tg_json_parse(r, (size_t)(nl - r), NULL, err, sizeof err);
  FUZZ_ASSERT(cJSON_IsObject(h), "the reply's line is no JSON object (%s)",
              err);
  const cJSON *ok = cJSON_GetObjectItemCaseSensitive(h, "ok");
  FUZZ_ASSERT(cJSON_IsBool(ok), "the reply has no \"ok\"");
  size_t rest = n - (size_t)(nl + 1 - r);
  const cJSON *so = cJSON_GetObjectItemCaseSensitive(h, "stdout_bytes");
  const cJSON *se = cJSON_GetObjectItemCaseSensitive(h, "stderr_bytes");
  if (cJSON_IsTrue(ok) && so && se)
    FUZZ_ASSERT(so->valuedouble + se->valuedouble == (double)rest,
                "a hook answer announces %g + %g bytes, %zu follow",
                so->valuedouble, se->valuedouble, rest);
  else
    FUZZ_ASSERT(rest == 0, "%zu bytes after the reply's line", rest);
  cJSON_Delete(h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct sockaddr_un a;
  memset(&a, 0, sizeof a);
  a.sun_family = AF_UNIX;
  memcpy(a.sun_path, sock, strlen(sock) + 1);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  FUZZ_ASSERT(fd >= 0, "socket: %s", strerror(errno));
  FUZZ_ASSERT(connect(fd, (struct sockaddr *)&a, sizeof a) == 0 ||
              errno == EINPROGRESS || errno == EAGAIN,
              "connect: %s", strerror(errno));
  uv_loop_t *loop = tg_runtime_loop(rt);
  size_t sent = 0, got = 0, cap = 4096;
  char *reply = malloc(cap);
  FUZZ_ASSERT(reply != NULL, "out of memory");
  int shut = 0;
  double end = now_s() + 20;
  for (;;) {
    if (sent < size) {
      ssize_t w = send(fd, data + sent, size - sent, MSG_NOSIGNAL);
      if (w > 0) sent += (size_t)w;
      else if (w < 0 && errno != EAGAIN && errno != EINTR) sent = size;
    }
    if (sent == size && !shut) {
      shutdown(fd, SHUT_WR);
      shut = 1;
    }
    uv_run(loop, UV_RUN_NOWAIT);
    ssize_t r;
    if (got == cap) {
      reply = realloc(reply, cap *= 2);
      FUZZ_ASSERT(reply != NULL, "out of memory");
    }
    r = recv(fd, reply + got, cap - got, 0);
    if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) break;
    if (r > 0) {
      got += (size_t)r;
      continue;
    }
    FUZZ_ASSERT(now_s() < end, "no reply within 20 s (%zu of %zu bytes sent)",
                sent, size);
    struct pollfd p[2] = {{fd, POLLIN | (sent < size ? POLLOUT : 0), 0},
                          {uv_backend_fd(loop), POLLIN, 0}};
    int t = uv_backend_timeout(loop);
    poll(p, 2, t < 0 || t > 50 ? 50 : t);
  }
  close(fd);
  for (int i = 0; i < 4; i++) uv_run(loop, UV_RUN_NOWAIT);
  check_reply(reply, got);
  free(reply);
  return 0;
}
