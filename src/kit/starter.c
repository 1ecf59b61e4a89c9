/*
 * starter.c — the starter policies written into a folder (starter.h).
 * Every file is copied as it is, but for the one line marked
 * STARTER_FOLDER_MARK, which learns the folder's own path so the rule that
 * guards the policies guards this copy. Files are written whole to a
 * temporary name and renamed, so a half-written starter never loads.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "starter.h"
#include "output.h"

#ifndef TOOLGATE_SOURCE_DIR
#define TOOLGATE_SOURCE_DIR ""
#endif
#ifndef TOOLGATE_BUILD_DIR
#define TOOLGATE_BUILD_DIR ""
#endif
#ifndef TOOLGATE_INSTALL_STARTER_DIR
#define TOOLGATE_INSTALL_STARTER_DIR ""
#endif
#ifndef TOOLGATE_STARTER_RELDIR /* from the installed binary's folder */
#define TOOLGATE_STARTER_RELDIR ""
#endif

#define STARTER_MAX_FILES 64
#define STARTER_MAX_BYTES (1u << 20)

static int is_dir(const char *p) {
  struct stat st;
  return p[0] && stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The folder of this program, resolved. */
static int own_folder(char out[PATH_MAX]) {
  if (!realpath("/proc/self/exe", out)) return 0;
  char *slash = strrchr(out, '/');
  if (!slash) return 0;
  *slash = '\0';
  return 1;
}

static int in_build(const char *own) {
  char real[PATH_MAX];
  if (!TOOLGATE_BUILD_DIR[0] || !realpath(TOOLGATE_BUILD_DIR, real)) return 0;
  return strcmp(own, real) == 0;
}

static int source_tree(char *a, char *b, size_t len) {
  if (!TOOLGATE_SOURCE_DIR[0]) return -1;
  snprintf(a, len, "%s/policies", TOOLGATE_SOURCE_DIR);
  snprintf(b, len, "%s/examples/starter/policies", TOOLGATE_SOURCE_DIR);
  return is_dir(a) && is_dir(b) ? 0 : -1;
}

int starter_sources(char *a, char *b, size_t len) {
  char own[PATH_MAX];
  int have_own = own_folder(own);
  b[0] = '\0';
  if (have_own && in_build(own) && source_tree(a, b, len) == 0) return 0;
  if (have_own && sizeof TOOLGATE_STARTER_RELDIR > 1) { /* set at build */
    snprintf(a, len, "%s/%s", own, TOOLGATE_STARTER_RELDIR);
    if (is_dir(a)) return 0;
  }
  snprintf(a, len, "%s", TOOLGATE_INSTALL_STARTER_DIR);
  if (is_dir(a)) return 0;
  return source_tree(a, b, len);
}

static int wanted(const char *name) {
  size_t n = strlen(name);
  return name[0] != '.' &&
         ((n > 4 && !strcmp(name + n - 4, ".lua")) || !strcmp(name, "README.md"));
}

typedef struct {
  char *from[STARTER_MAX_FILES];
  char *name[STARTER_MAX_FILES];
  int n;
} file_list;

static int list_add(file_list *l, const char *dir, const char *name) {
  for (int i = 0; i < l->n; i++)
    if (!strcmp(l->name[i], name)) return 0; /* the first folder's wins */
  if (l->n == STARTER_MAX_FILES) return -1;
  size_t len = strlen(dir) + strlen(name) + 2;
  l->from[l->n] = malloc(len);
  l->name[l->n] = strdup(name);
  if (!l->from[l->n] || !l->name[l->n]) return -1;
  snprintf(l->from[l->n], len, "%s/%s", dir, name);
  l->n++;
  return 0;
}

static int list_dir(file_list *l, const char *dir) {
  if (!dir[0]) return 0;
  DIR *d = opendir(dir);
  if (!d) return -1;
  int rc = 0;
  for (struct dirent *e; rc == 0 && (e = readdir(d));)
    if (wanted(e->d_name)) rc = list_add(l, dir, e->d_name);
  closedir(d);
  return rc;
}

static void list_free(file_list *l) {
  for (int i = 0; i < l->n; i++) {
    free(l->from[i]);
    free(l->name[i]);
  }
}

static int by_name(const void *x, const void *y) {
  return strcmp(*(char *const *)x, *(char *const *)y);
}

static char *read_file(const char *path, size_t *len) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
      st.st_size > STARTER_MAX_BYTES) {
    if (fd >= 0) close(fd);
    return NULL;
  }
  char *b = malloc((size_t)st.st_size + 1);
  ssize_t n = b ? read(fd, b, (size_t)st.st_size) : -1;
  close(fd);
  if (n != st.st_size) {
    free(b);
    return NULL;
  }
  b[n] = '\0';
  *len = (size_t)n;
  return b;
}

/* The marked line, with dir as a Lua string. */
static char *mark_folder(const char *text, size_t *len, const char *dir) {
  const char *m = strstr(text, STARTER_FOLDER_MARK);
  if (!m) return NULL;
  const char *bol = m;
  while (bol > text && bol[-1] != '\n') bol--;
  const char *eol = strchr(m, '\n');
  if (!eol) eol = text + *len;
  size_t cap = *len + strlen(dir) * 4 + 128, n = 0;
  char *out = malloc(cap);
  if (!out) return NULL;
  memcpy(out, text, (size_t)(bol - text));
  n = (size_t)(bol - text);
  n += (size_t)snprintf(out + n, cap - n, "local POLICIES = \"");
  for (const char *p = dir; *p; p++) {
    if (*p == '"' || *p == '\\') out[n++] = '\\';
    if ((unsigned char)*p < 0x20) {
      n += (size_t)snprintf(out + n, cap - n, "\\%03u", (unsigned char)*p);
      continue;
    }
    out[n++] = *p;
  }
  n += (size_t)snprintf(out + n, cap - n, "\" %s", STARTER_FOLDER_MARK);
  size_t rest = *len - (size_t)(eol - text);
  memcpy(out + n, eol, rest);
  n += rest;
  out[n] = '\0';
  *len = n;
  return out;
}

static int mkdirs(const char *dir) {
  char d[PATH_MAX];
  snprintf(d, sizeof d, "%s", dir);
  for (char *p = d + 1; *p; p++) {
    if (*p != '/') continue;
    *p = '\0';
    if (mkdir(d, 0755) < 0 && errno != EEXIST) return -1;
    *p = '/';
  }
  return mkdir(d, 0755) < 0 && errno != EEXIST ? -1 : 0;
}

static int write_whole(const char *path, const char *text, size_t len) {
  char tmp[PATH_MAX + 32];
  int w = snprintf(tmp, sizeof tmp, "%s.toolgate-XXXXXX", path);
  if (w < 0 || (size_t)w >= sizeof tmp) {
    errno = ENAMETOOLONG;
    return -1;
  }
  int fd = mkstemp(tmp);
  if (fd < 0) return -1;
  int rc = write(fd, text, len) == (ssize_t)len && fchmod(fd, 0644) == 0 &&
                   fsync(fd) == 0 ? 0 : -1;
  if (close(fd) < 0) rc = -1;
  if (rc == 0 && rename(tmp, path) < 0) rc = -1;
  if (rc < 0) {
    int e = errno;
    unlink(tmp);
    errno = e;
  }
  return rc;
}

int starter_write(const char *dir, const starter_opts *o) {
  char a[PATH_MAX], b[PATH_MAX];
  if (starter_sources(a, b, sizeof a) < 0) {
    cli_error("the starter policies are not installed (looked in %s%s%s); "
              "reinstall toolgate, or copy its policies/ folder",
              TOOLGATE_INSTALL_STARTER_DIR[0] ? TOOLGATE_INSTALL_STARTER_DIR
                                              : "the install prefix",
              TOOLGATE_SOURCE_DIR[0] ? " and " : "", TOOLGATE_SOURCE_DIR);
    return -1;
  }
  file_list l = {{0}, {0}, 0};
  if (list_dir(&l, a) < 0 || list_dir(&l, b) < 0 || l.n == 0) {
    cli_error("cannot read the starter policies in %s", a);
    list_free(&l);
    return -1;
  }
  /* in name order: the order they load in */
  char *pairs[STARTER_MAX_FILES];
  for (int i = 0; i < l.n; i++) {
    size_t len = strlen(l.name[i]) + strlen(l.from[i]) + 2;
    pairs[i] = malloc(len);
    if (pairs[i]) snprintf(pairs[i], len, "%s%c%s", l.name[i], '\0', l.from[i]);
  }
  for (int i = 0; i < l.n; i++)
    if (!pairs[i]) {
      for (int j = 0; j < l.n; j++) free(pairs[j]);
      list_free(&l);
      cli_error("out of memory");
      return -1;
    }
  qsort(pairs, (size_t)l.n, sizeof *pairs, by_name);
  char real[PATH_MAX];
  int rc = 0, n = l.n;
  /* every file checked before one is written */
  for (int i = 0; rc == 0 && i < n && !o->force; i++) {
    char path[PATH_MAX * 4];
    snprintf(path, sizeof path, "%s/%s", dir, pairs[i]);
    if (access(path, F_OK) == 0) {
      cli_error("%s is there already: nothing written (--force writes the "
                "starter's files over theirs)", path);
      rc = -1;
    }
  }
  if (rc == 0 && !o->dry_run && mkdirs(dir) < 0) {
    cli_error("cannot make the folder %s: %s", dir, strerror(errno));
    rc = -1;
  }
  const char *abs = dir;
  if (rc == 0 && !o->dry_run && realpath(dir, real)) abs = real;
  for (int i = 0; rc == 0 && i < n; i++) {
    const char *name = pairs[i], *from = name + strlen(name) + 1;
    char path[PATH_MAX * 4];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    size_t len = 0;
    char *text = read_file(from, &len);
    if (!text) {
      cli_error("cannot read the starter file %s", from);
      rc = -1;
      break;
    }
    char *marked = mark_folder(text, &len, abs);
    if (marked) {
      free(text);
      text = marked;
    }
    if (!o->dry_run && write_whole(path, text, len) < 0) {
      cli_error("cannot write %s: %s", path, strerror(errno));
      rc = -1;
    } else if (!o->quiet) {
      printf("  %s %s\n", o->dry_run ? "would write" : "+", path);
    }
    free(text);
  }
  for (int i = 0; i < n; i++) free(pairs[i]);
  list_free(&l);
  return rc < 0 ? -1 : n;
}
