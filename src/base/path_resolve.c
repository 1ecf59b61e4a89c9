/*
 * path_resolve.c — a path as the kernel resolves it (path_resolve.h).
 *
 * A walk of our own rather than realpath(3): realpath fails on a dangling
 * symlink, the case where a write goes furthest from where its text
 * points, and on a path whose tail does not exist yet (every new file).
 * The walk keeps `res`, the resolved prefix (absolute, no symlinks), and
 * `todo`, what is left; a symlink's target is put in front of what is
 * left, from the root when absolute.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "path_resolve.h"

static char *refuse(char *why, size_t n, char *todo, const char *fmt,
                    const char *a) {
  snprintf(why, n, fmt, a);
  free(todo);
  return NULL;
}

/* "todo" = a + "/" + b, malloc'd; NULL when too long. */
static char *joined(const char *a, size_t alen, const char *b) {
  size_t blen = strlen(b);
  if (alen + blen + 2 > 4 * PATH_MAX) return NULL;
  char *s = malloc(alen + blen + 2);
  if (!s) return NULL;
  memcpy(s, a, alen);
  s[alen] = '/';
  memcpy(s + alen + 1, b, blen + 1);
  return s;
}

/* /proc/self and /proc/thread-self name the process that opens them: the
 * file they lead to for the agent is not the one they lead to here. */
static int names_the_opener(const char *res) {
  static const char *const magic[] = {"/proc/self", "/proc/thread-self", NULL};
  for (int i = 0; magic[i]; i++) {
    size_t n = strlen(magic[i]);
    if (!strncmp(res, magic[i], n) && (res[n] == '\0' || res[n] == '/'))
      return 1;
  }
  return 0;
}

char *tg_path_resolve(const char *cwd, const char *path, char *why,
                       size_t whylen) {
  if (!path || !*path) return refuse(why, whylen, NULL, "%sthe path is empty", "");
  if (path[0] != '/' && (!cwd || cwd[0] != '/'))
    return refuse(why, whylen, NULL, "'%s' is relative, and the working "
                  "directory it is relative to is not known", path);
  char *todo = path[0] == '/' ? strdup(path) : joined(cwd, strlen(cwd), path);
  if (!todo) return refuse(why, whylen, NULL, "%sthe path is too long", "");
  char res[PATH_MAX] = "";
  size_t rl = 0, exists_to = 0; /* res[0, exists_to) exists when missing */
  int links = 0, missing = 0;
  const char *p = todo;
  for (;;) {
    while (*p == '/') p++;
    if (!*p) break;
    size_t n = strcspn(p, "/");
    const char *after = p + n;
    if (n == 1 && p[0] == '.') {
      p = after;
      continue;
    }
    if (n == 2 && p[0] == '.' && p[1] == '.') { /* res has no symlinks */
      char *slash = strrchr(res, '/');
      rl = slash ? (size_t)(slash - res) : 0;
      res[rl] = '\0';
      /* back up where things exist ("new/../lnk/x", once `new` is made,
       * goes through the symlink lnk): walk them again */
      if (missing && rl <= exists_to) missing = 0;
      p = after;
      continue;
    }
    if (rl + 1 + n >= sizeof res)
      return refuse(why, whylen, todo, "'%s' leads to a path longer than "
                    "the kernel takes", path);
    size_t parent = rl;
    res[rl] = '/';
    memcpy(res + rl + 1, p, n);
    rl += 1 + n;
    res[rl] = '\0';
    if (names_the_opener(res))
      return refuse(why, whylen, todo, "'%s' goes through /proc/self, whose "
                    "files are those of the process that opens it", path);
    if (missing) { /* below a missing directory nothing exists yet */
      p = after;
      continue;
    }
    struct stat st;
    if (lstat(res, &st) < 0) {
      if (errno == ENOENT) {
        missing = 1;
        exists_to = parent;
        p = after;
        continue;
      }
      if (errno == EACCES)
        return refuse(why, whylen, todo, "'%s': a directory on the way "
                      "cannot be searched (permission denied)", path);
      return refuse(why, whylen, todo, "'%s' cannot be followed to its end",
                    path);
    }
    if (S_ISLNK(st.st_mode)) {
      if (++links > TG_PATH_MAX_LINKS)
        return refuse(why, whylen, todo, "'%s': too many levels of symbolic "
                      "links (a loop, or a chain of more than 40)", path);
      char target[PATH_MAX];
      ssize_t k = readlink(res, target, sizeof target - 1);
      if (k <= 0)
        return refuse(why, whylen, todo, "'%s' goes through a symlink that "
                      "cannot be read", path);
      target[k] = '\0';
      char *next = *after ? joined(target, (size_t)k, after) : strdup(target);
      if (!next)
        return refuse(why, whylen, todo, "'%s' leads to a path longer than "
                      "the kernel takes", path);
      free(todo);
      todo = next;
      p = todo;
      /* the link's own name goes: its target is read from its folder */
      char *slash = strrchr(res, '/');
      rl = target[0] == '/' ? 0 : (size_t)(slash - res);
      res[rl] = '\0';
      continue;
    }
    if (*after == '/' && !S_ISDIR(st.st_mode))
      return refuse(why, whylen, todo, "'%s': a component of the path is not "
                    "a directory, so there is nothing below it", path);
    p = after;
  }
  free(todo);
  char *out = strdup(rl ? res : "/");
  if (!out) snprintf(why, whylen, "out of memory");
  return out;
}
