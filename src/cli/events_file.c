/*
 * events_file.c — the JSON-lines event log of `toolgate call --events`.
 * Each line is flushed at once: the file is meant to be tailed while the
 * call runs, and must be complete even if the process is killed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "events_file.h"
#include "kit/output.h"
#include "kit/kit.h"

struct events_file {
  FILE *f;
  char *path;
  int write_errno; /* the first write error, 0 if none */
};

events_file *events_file_open(const char *path) {
  events_file *ef = calloc(1, sizeof *ef);
  if (!ef) {
    cli_error("--events: out of memory");
    return NULL;
  }
  int to_stderr = strcmp(path, "-") == 0;
  /* made 0600, not 0666 & ~umask: events carry the calls' (masked) args
   * and results, as private as the audit */
  int fd = to_stderr ? -1 : open(path, O_WRONLY | O_APPEND | O_CREAT |
                                           O_CLOEXEC, 0600);
  ef->f = to_stderr ? stderr : fd >= 0 ? fdopen(fd, "a") : NULL;
  if (!ef->f && fd >= 0) close(fd);
  if (!ef->f) {
    cli_error("--events: cannot open '%s' for appending: %s", path,
              strerror(errno));
    free(ef);
    return NULL;
  }
  ef->path = strdup(path);
  return ef;
}

void events_file_write(events_file *ef, const tg_event *ev) {
  char *line = tg_json_print(ev->data, 0);
  if (!line) {
    if (!ef->write_errno) ef->write_errno = ENOMEM;
    return;
  }
  if ((fputs(line, ef->f) < 0 || fputc('\n', ef->f) == EOF ||
       fflush(ef->f) == EOF) && !ef->write_errno)
    ef->write_errno = errno ? errno : EIO;
  free(line);
}

int events_file_close(events_file *ef) {
  if (!ef) return 0;
  int failed = ef->write_errno;
  if (ef->f != stderr && fclose(ef->f) == EOF && !failed)
    failed = errno ? errno : EIO;
  if (failed)
    cli_error("--events: some events could not be written to '%s': %s",
              ef->path ? ef->path : "?", strerror(failed));
  free(ef->path);
  free(ef);
  return failed ? -1 : 0;
}
