/*
 * watchdog.c — the hook's deadline, kept whatever runs: a stuck instance,
 * a policy load, a stdin that never closes. SIGALRM at the deadline
 * writes the fail-safe answer set last and exits, with only
 * async-signal-safe calls (write, _exit).
 *
 * The one piece of mutable state at file scope in the front: a signal
 * handler can reach nothing else. Two slots; the one not live is written,
 * then published by an atomic index, so the handler never reads a slot
 * being written.
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>
#include <sys/time.h>
#include "hook.h"

typedef struct {
  char out[8192];
  char msg[2048];
  int code;
} slot;

static slot slots[2];
static volatile sig_atomic_t live = -1;
/* Who answers: 1 the main thread (about to write the real answer, or
 * done), 2 the handler at the deadline; the first to set it wins and the
 * other stays quiet. The handler may run on any thread (the policy
 * sandbox has one). */
static atomic_int claimed;

static void put(int fd, const char *s) {
  size_t n = strlen(s), off = 0;
  while (off < n) {
    ssize_t w = write(fd, s + off, n - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    off += (size_t)w;
  }
}

static void fire(int sig) {
  (void)sig;
  int none = 0;
  if (!atomic_compare_exchange_strong(&claimed, &none, 2))
    return; /* the real answer is being written */
  int i = live;
  if (i < 0) _exit(2);
  put(1, slots[i].out);
  put(2, slots[i].msg);
  _exit(slots[i].code);
}

static void copy(char *dst, size_t cap, const char *src) {
  size_t n = src ? strlen(src) : 0;
  if (n >= cap) n = 0; /* a cut JSON answer is no answer: none */
  memcpy(dst, src ? src : "", n);
  dst[n] = '\0';
}

void watchdog_set(const tg_hook_result *r) {
  int next = live == 0 ? 1 : 0;
  copy(slots[next].out, sizeof slots[next].out, r->output);
  copy(slots[next].msg, sizeof slots[next].msg, r->message);
  /* an answer that did not fit: block the call (exit 2) rather than say
   * nothing */
  slots[next].code = r->output && strlen(r->output) >= sizeof slots[next].out
                         ? 2 : r->exit_code;
  live = next;
}

int watchdog_start(uint64_t ms) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = fire;
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGALRM, &sa, NULL) < 0) return -errno;
  struct itimerval t;
  memset(&t, 0, sizeof t);
  t.it_value.tv_sec = (time_t)(ms / 1000);
  t.it_value.tv_usec = (suseconds_t)(ms % 1000) * 1000;
  return setitimer(ITIMER_REAL, &t, NULL) < 0 ? -errno : 0;
}

void watchdog_hold(void) {
  int none = 0;
  if (!atomic_compare_exchange_strong(&claimed, &none, 1) && none == 2)
    for (;;) pause(); /* the deadline's answer is out; its _exit comes */
  struct itimerval off;
  memset(&off, 0, sizeof off);
  setitimer(ITIMER_REAL, &off, NULL);
}
