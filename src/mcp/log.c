/*
 * log.c — the MCP front's log (log.h). Each entry is one write of one
 * line, so the lines of toolgate and of the upstream servers whose stderr
 * it relays do not interleave mid-line.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include "log.h"

struct mcp_log {
  FILE *f;
  int own;              /* a file we opened (not stderr) */
  mcp_log_level level;
};

static const char *const names[] = {"debug", "info", "notice", "warning",
                                    "error", "critical", "alert", "emergency"};

const char *mcp_log_level_name(mcp_log_level level) {
  return level <= MCP_LOG_EMERGENCY ? names[level] : "error";
}

int mcp_log_level_of(const char *name) {
  for (int i = 0; name && i <= MCP_LOG_EMERGENCY; i++)
    if (strcmp(names[i], name) == 0) return i;
  return -1;
}

mcp_log *mcp_log_open(const char *path, mcp_log_level level, char *err,
                      size_t errlen) {
  mcp_log *log = calloc(1, sizeof *log);
  if (!log) {
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  log->level = level;
  log->f = stderr;
  if (path) {
    /* O_NONBLOCK: a FIFO nobody reads fails here (ENXIO), not blocks;
     * 0600: the log holds what upstreams and policies said, unmasked */
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NONBLOCK | O_CLOEXEC,
                  0600);
    log->f = fd >= 0 ? fdopen(fd, "a") : NULL;
    if (!log->f) {
      snprintf(err, errlen, "cannot open the log file %s: %s", path,
               strerror(errno));
      if (fd >= 0) close(fd);
      free(log);
      return NULL;
    }
    log->own = 1;
  }
  return log;
}

void mcp_log_close(mcp_log *log) {
  if (!log) return;
  if (log->own) fclose(log->f);
  free(log);
}

void mcp_logf(mcp_log *log, mcp_log_level level, const char *fmt, ...) {
  if (!log || level < log->level) return;
  char line[4096], stamp[32];
  struct timeval tv;
  struct tm tm;
  gettimeofday(&tv, NULL);
  gmtime_r(&tv.tv_sec, &tm);
  strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);
  int n = snprintf(line, sizeof line, "%s.%03dZ toolgate[%ld] %s: ", stamp,
                   (int)(tv.tv_usec / 1000), (long)getpid(),
                   mcp_log_level_name(level));
  va_list ap;
  va_start(ap, fmt);
  if (n > 0 && (size_t)n < sizeof line)
    n += vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if ((size_t)n >= sizeof line - 1) n = (int)sizeof line - 2; /* cut long ones */
  line[n++] = '\n';
  fwrite(line, 1, (size_t)n, log->f);
  fflush(log->f);
}
