/*
 * hook_io.c — the event in, the answer out. stdin is the agent's, so it is
 * hostile input like the event itself: read with a bound (a 100 MB stdin
 * is refused at TG_HOOK_MAX_EVENT + 1 bytes, not read to its end) and a
 * deadline (a stdin that never closes does not hold the answer past it;
 * an agent that writes one JSON object and keeps stdin open is answered
 * as soon as the object is whole).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cjson/cJSON.h>
#include "hook.h"

double hook_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* What was read ends with '}' (after blanks) and parses as one object. */
static int whole_object(const char *b, size_t n) {
  while (n && (b[n - 1] == ' ' || b[n - 1] == '\n' || b[n - 1] == '\r' ||
               b[n - 1] == '\t'))
    n--;
  if (!n || b[n - 1] != '}') return 0;
  cJSON *j = tg_json_parse(b, n, NULL, NULL, 0);
  int ok = cJSON_IsObject(j);
  cJSON_Delete(j);
  return ok;
}

int hook_read_all(int fd, size_t max, double deadline_ms, char **out,
                  size_t *len) {
  size_t cap = 65536, n = 0, tried = 0;
  char *b = malloc(cap + 1);
  if (!b) return -ENOMEM;
  int rc = 0;
  for (;;) {
    if (n == cap) {
      size_t ncap = cap * 2 > max + 1 ? max + 1 : cap * 2;
      char *g = ncap > cap ? realloc(b, ncap + 1) : NULL;
      if (!g) {
        rc = ncap > cap ? -ENOMEM : -EFBIG;
        break;
      }
      b = g;
      cap = ncap;
    }
    /* poll first: stdin is usually a blocking pipe, and a read that
     * blocks would hold the answer past the deadline */
    double left = deadline_ms - hook_now_ms();
    if (left <= 0) {
      rc = -ETIMEDOUT;
      break;
    }
    struct pollfd p = {fd, POLLIN, 0};
    int k = poll(&p, 1, left > 1e9 ? 1000000000 : (int)left + 1);
    if (k < 0 && errno != EINTR) {
      rc = -errno;
      break;
    }
    if (k <= 0) continue;
    ssize_t r = read(fd, b + n, cap - n);
    if (r > 0) {
      n += (size_t)r;
      if (n > max) {
        rc = -EFBIG;
        break;
      }
      /* only when a read ends like an object, and each time with twice
       * as much as the last try: parsing stays linear in what was read */
      if ((b[n - 1] == '}' || b[n - 1] == '\n') && n >= 2 * tried) {
        tried = n;
        if (whole_object(b, n)) break;
      }
      continue;
    }
    if (r == 0) break;
    if (errno != EINTR && errno != EAGAIN) {
      rc = -errno;
      break;
    }
  }
  if (rc < 0) {
    free(b);
    return rc;
  }
  b[n] = '\0';
  *out = b;
  *len = n;
  return 0;
}

static void write_all(int fd, const char *s) {
  size_t n = s ? strlen(s) : 0, off = 0;
  while (off < n) {
    ssize_t w = write(fd, s + off, n - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return; /* the agent stopped reading: nothing to do */
    off += (size_t)w;
  }
}

int hook_emit(const tg_hook_result *r) {
  watchdog_hold();
  write_all(1, r->output);
  write_all(2, r->message);
  return r->exit_code;
}
