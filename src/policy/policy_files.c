/*
 * policy_files.c — the files of a policies folder (generation.h): which
 * names are policies and which are tests, listing them in name order, and
 * running one file in the sandbox.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "generation.h"
#include "sandbox.h"
#include "base/regular_file.h"
#include "base/util.h"
#include "lua/luacall.h"

#define TG_POLICY_MAX_BYTES (4u << 20)

static int ends_with(const char *s, const char *tail) {
  size_t n = strlen(s), k = strlen(tail);
  return n > k && strcmp(s + n - k, tail) == 0;
}

int tg__is_test_file(const char *name) {
  return name[0] != '.' && ends_with(name, "_test.lua");
}

int tg__is_policy_file(const char *name) {
  return name[0] != '.' && ends_with(name, ".lua") && !tg__is_test_file(name);
}

static int name_cmp(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Appends dir/name to the list. */
static int add_file(char ***files, size_t *n, size_t *cap, const char *dir,
                    const char *name) {
  if (*n == *cap) {
    size_t want = *cap ? *cap * 2 : 16;
    char **f = realloc(*files, want * sizeof *f);
    if (!f) return -1;
    *files = f;
    *cap = want;
  }
  size_t len = strlen(dir) + strlen(name) + 2;
  char *p = malloc(len);
  if (!p) return -1;
  snprintf(p, len, "%s/%s", dir, name);
  (*files)[(*n)++] = p;
  return 0;
}

int tg__list_files(const char *dir, int (*want)(const char *name),
                   int missing_ok, char ***files, size_t *n, char *err,
                   size_t errlen) {
  DIR *d = opendir(dir);
  if (!d && missing_ok && errno == ENOENT) return 0;
  if (!d) {
    tg__errf(err, errlen, "cannot read policy directory '%s': %s", dir,
             strerror(errno));
    return -1;
  }
  struct dirent *e;
  size_t cap = *n, first = *n;
  int rc = 0;
  errno = 0;
  while (rc == 0 && (e = readdir(d)))
    if (want(e->d_name) && add_file(files, n, &cap, dir, e->d_name) < 0) {
      tg__errf(err, errlen, "cannot list policy directory '%s': out of "
               "memory", dir);
      rc = -1;
    }
  if (rc == 0 && errno) {
    tg__errf(err, errlen, "cannot list policy directory '%s': %s", dir,
             strerror(errno));
    rc = -1;
  }
  closedir(d);
  if (rc == 0 && *n - first > 1)
    qsort(*files + first, *n - first, sizeof **files, name_cmp);
  return rc;
}

static char *read_file(const char *path, size_t *len, char *err,
                       size_t errlen) {
  /* a FIFO named x.lua in the folder must not hang every reload */
  const char *kind = NULL;
  int fd = tg__open_regular(path, &kind);
  if (fd == TG_NOT_REGULAR) {
    tg__errf(err, errlen, "%s: is %s, not a regular file; a policy file "
             "must be one", path, kind);
    return NULL;
  }
  FILE *f = fd >= 0 ? fdopen(fd, "rb") : NULL;
  if (!f) {
    tg__errf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
    if (fd >= 0) close(fd);
    return NULL;
  }
  struct stat st;
  if (fstat(fileno(f), &st) < 0 ||
      (size_t)st.st_size > TG_POLICY_MAX_BYTES) {
    tg__errf(err, errlen, "%s: not a regular file under %u bytes", path,
             TG_POLICY_MAX_BYTES);
    fclose(f);
    return NULL;
  }
  char *buf = malloc((size_t)st.st_size + 1);
  size_t n = buf ? fread(buf, 1, (size_t)st.st_size, f) : 0;
  fclose(f);
  if (!buf || n != (size_t)st.st_size) {
    free(buf);
    tg__errf(err, errlen, "%s: read failed", path);
    return NULL;
  }
  buf[n] = '\0';
  *len = n;
  return buf;
}

int tg__run_file(lua_State *L, tg_sandbox *sb, const char *path, int nres,
                 char **src_out, char *err, size_t errlen) {
  size_t len = 0;
  char *src = read_file(path, &len, err, errlen);
  if (!src) return -1;
  size_t nlen = strlen(path) + 2;
  char *name = malloc(nlen); /* not a Lua string: nothing here may raise */
  if (!name) {
    free(src);
    tg__errf(err, errlen, "%s: out of memory", path);
    return -1;
  }
  snprintf(name, nlen, "@%s", path);
  int rc = luaL_loadbufferx(L, src, len, name, "t"); /* protected */
  free(name);
  if (rc == LUA_OK) {
    tg__sandbox_set_env(L);                 /* its own globals */
    rc = tg__sandbox_pcall(sb, L, 0, nres); /* under the time limit too */
  }
  if (rc != LUA_OK) {
    if (!tg__sandbox_describe_stop(sb, path, err, errlen))
      tg__errf(err, errlen, "%s",
               tg__lua_error_text(L, -1, "(error object is not a string)"));
    lua_pop(L, 1);
    free(src);
    return -1;
  }
  if (src_out) *src_out = src;
  else free(src);
  return 0;
}
