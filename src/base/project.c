/*
 * project.c — a project is a folder, named by its real path, so that
 * "./app", "app/" and a symlink to it are one project to a remembered
 * approval.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "project.h"
#include "util.h"

char *tg__project_dir(const char *dir, char err[TG_ERRMSG]) {
  struct stat st;
  char *p = realpath(dir ? dir : ".", NULL);
  if (!p || stat(p, &st) < 0 || !S_ISDIR(st.st_mode)) {
    int e = p ? ENOTDIR : errno;
    tg__errf(err, TG_ERRMSG, "project %s: %s", dir ? dir : ".", strerror(e));
    free(p);
    return NULL;
  }
  return p;
}
