/*
 * fs_read.c — the read-only file tools: read_file and list_dir.
 *
 * read_file counts in lines, as agents do ("read lines 120-180"): offset
 * is the first line (from 1), limit the number of lines. A file that is
 * not UTF-8 text (invalid UTF-8 or a NUL byte) comes back whole, base64
 * encoded, and then offset/limit are refused rather than guessed at.
 */
#define _GNU_SOURCE /* O_DIRECTORY, O_NOFOLLOW */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "fs_io.h"
#include "fs_tools.h"
#include "base/jsonnum.h"
#include "base/json.h"

#define LIST_MAX_DEPTH 64

/* ---- read_file ------------------------------------------------------- */

static char *base64(const unsigned char *s, size_t n) {
  static const char t[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  char *out = malloc((n + 2) / 3 * 4 + 1), *o = out;
  if (!out) return NULL;
  for (size_t i = 0; i < n; i += 3) {
    unsigned v = (unsigned)s[i] << 16;
    if (i + 1 < n) v |= (unsigned)s[i + 1] << 8;
    if (i + 2 < n) v |= s[i + 2];
    *o++ = t[v >> 18 & 63];
    *o++ = t[v >> 12 & 63];
    *o++ = i + 1 < n ? t[v >> 6 & 63] : '=';
    *o++ = i + 2 < n ? t[v & 63] : '=';
  }
  *o = '\0';
  return out;
}

static size_t count_lines(const char *s, size_t n) {
  size_t k = 0;
  for (size_t i = 0; i < n; i++) k += s[i] == '\n';
  return k + (n && s[n - 1] != '\n');
}

/* The bytes of lines [first, first + limit) (first from 1); sets *more
 * when lines follow the window. */
static void line_window(const char *s, size_t n, size_t first, size_t limit,
                        size_t *from, size_t *to, size_t *count, int *more) {
  size_t i = 0, line = 1;
  while (line < first && i < n) {
    const char *nl = memchr(s + i, '\n', n - i);
    i = nl ? (size_t)(nl - s) + 1 : n;
    line++;
  }
  *from = i;
  *count = 0;
  while (i < n && *count < limit) {
    const char *nl = memchr(s + i, '\n', n - i);
    i = nl ? (size_t)(nl - s) + 1 : n;
    (*count)++;
  }
  *to = i;
  *more = i < n;
}

static cJSON *text_result(const tg_fs_path *p, char *data, size_t len,
                          size_t offset, size_t limit) {
  size_t from, to, count;
  int more;
  line_window(data, len, offset, limit, &from, &to, &count, &more);
  cJSON *r = cJSON_CreateObject();
  cJSON_AddStringToObject(r, "path", p->rel);
  /* cJSON copies the string: cut it in place for the copy, then restore */
  char saved = data[to];
  data[to] = '\0';
  cJSON_AddStringToObject(r, "content", data + from);
  data[to] = saved;
  cJSON_AddStringToObject(r, "encoding", "utf-8");
  cJSON_AddNumberToObject(r, "size", (double)len);
  cJSON_AddNumberToObject(r, "lines", (double)count_lines(data, len));
  cJSON_AddNumberToObject(r, "offset", (double)offset);
  cJSON_AddNumberToObject(r, "count", (double)count);
  cJSON_AddBoolToObject(r, "truncated", more);
  return r;
}

static cJSON *binary_result(const tg_fs_path *p, const char *data, size_t len) {
  char *b = base64((const unsigned char *)data, len);
  if (!b) return NULL;
  cJSON *r = cJSON_CreateObject();
  cJSON_AddStringToObject(r, "path", p->rel);
  cJSON_AddStringToObject(r, "content", b);
  cJSON_AddStringToObject(r, "encoding", "base64");
  cJSON_AddNumberToObject(r, "size", (double)len);
  cJSON_AddBoolToObject(r, "truncated", 0);
  free(b);
  return r;
}

static int given(const cJSON *args, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(args, k);
  return v && !cJSON_IsNull(v);
}

/* offset and limit, checked before any file is touched; *window: either
 * was given (a binary file then cannot honour them). */
static int read_window(const cJSON *args, size_t *offset, size_t *limit,
                       int *window, tg_fs_err *e) {
  int64_t off, lim;
  if (tg__fs_int_arg(args, "read_file", "offset", 1, TG_JSON_INT_MAX, 1, &off,
                     e) < 0 ||
      tg__fs_int_arg(args, "read_file", "limit", 1, TG_JSON_INT_MAX, 0, &lim,
                     e) < 0)
    return -1;
  *window = given(args, "offset") || given(args, "limit");
  *offset = (size_t)off;
  *limit = lim ? (size_t)lim : SIZE_MAX;
  return 0;
}

void tg__read_file_start(tg_exec *ex, const cJSON *args, void *ud) {
  (void)ud;
  tg_fs *fs = tg__fs_of(ex);
  tg_fs_err e = {0};
  tg_fs_path p;
  char *data = NULL;
  size_t len = 0, offset, limit;
  int has_window;
  struct stat st;
  if (read_window(args, &offset, &limit, &has_window, &e) < 0 ||
      tg__fs_resolve(fs, tg__fs_str_arg(args, "path"), &p, &e) < 0) {
    tg__fs_fail(ex, &e);
    return;
  }
  if (!p.exists)
    tg__fs_errf(&e, TG_E_NOT_FOUND, "'%s' does not exist (list_dir shows what "
                "is there)", p.rel);
  else if (tg__fs_read(fs, &p, &data, &len, &st, &e) == 0)
    e.code = NULL;
  cJSON *r = NULL;
  if (!e.code && tg__utf8_invalid_at(data, len) == len) {
    r = text_result(&p, data, len, offset, limit);
  } else if (!e.code && has_window) {
    tg__fs_errf(&e, TG_E_BINARY_FILE, "'%s' is not UTF-8 text; offset and limit "
                "count lines, so read it whole (it comes back base64-encoded)",
                p.rel);
  } else if (!e.code) {
    r = binary_result(&p, data, len);
  }
  free(data);
  if (!e.code && !r) tg__fs_errf(&e, TG_E_IO_ERROR, "out of memory");
  if (e.code) tg__fs_fail(ex, &e);
  else tg_exec_finish_ok(ex, r);
  tg__fs_path_free(&p);
}

/* ---- list_dir -------------------------------------------------------- */

typedef struct {
  cJSON *entries;
  size_t count, max;
  int truncated;
  int recursive;
} listing;

typedef struct {
  char *name;
  struct stat st;
} dent;

static int dent_cmp(const void *a, const void *b) {
  return strcmp(((const dent *)a)->name, ((const dent *)b)->name);
}

static const char *type_of(mode_t m) {
  return S_ISREG(m) ? "file" : S_ISDIR(m) ? "dir" : S_ISLNK(m) ? "symlink"
                                                               : "other";
}

/* The entries of the directory fd (which it takes), with lstat info,
 * sorted by name. */
static dent *read_dir(int fd, size_t *n) {
  DIR *d = fdopendir(fd);
  if (!d) {
    close(fd);
    return NULL;
  }
  dent *v = NULL;
  size_t cap = 0;
  *n = 0;
  struct dirent *de;
  while ((de = readdir(d))) {
    if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
    if (*n == cap) {
      cap = cap ? cap * 2 : 32;
      dent *g = realloc(v, cap * sizeof *v);
      if (!g) break;
      v = g;
    }
    if (fstatat(dirfd(d), de->d_name, &v[*n].st, AT_SYMLINK_NOFOLLOW) < 0)
      continue; /* gone since readdir */
    if (!(v[*n].name = strdup(de->d_name))) break;
    (*n)++;
  }
  closedir(d);
  if (v) qsort(v, *n, sizeof *v, dent_cmp);
  return v;
}

static void add_entry(listing *l, const char *path, const struct stat *st) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "path", path);
  cJSON_AddStringToObject(o, "type", type_of(st->st_mode));
  cJSON_AddNumberToObject(o, "size", (double)st->st_size);
  cJSON_AddItemToArray(l->entries, o);
  l->count++;
}

/* Lists dir fd (taken) whose workspace-relative path is prefix ("" for
 * a root); directories are followed by their contents when recursive,
 * opened relative to their parent with O_NOFOLLOW (never through a link). */
static void walk(listing *l, int fd, const char *prefix, int depth) {
  int keep = dup(fd); /* read_dir closes fd; children open relative to keep */
  size_t n = 0;
  dent *v = read_dir(fd, &n);
  for (size_t i = 0; i < n; i++) {
    if (l->count >= l->max) {
      l->truncated = 1;
      break;
    }
    size_t len = strlen(prefix) + strlen(v[i].name) + 2;
    char *path = malloc(len);
    if (!path) break;
    snprintf(path, len, "%s%s%s", prefix, *prefix ? "/" : "", v[i].name);
    add_entry(l, path, &v[i].st);
    if (l->recursive && S_ISDIR(v[i].st.st_mode) && depth < LIST_MAX_DEPTH &&
        keep >= 0) {
      int child = openat(keep, v[i].name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
                         O_CLOEXEC);
      if (child >= 0) walk(l, child, path, depth + 1);
    }
    free(path);
  }
  for (size_t i = 0; i < n; i++) free(v[i].name);
  free(v);
  if (keep >= 0) close(keep);
}

void tg__list_dir_start(tg_exec *ex, const cJSON *args, void *ud) {
  (void)ud;
  tg_fs *fs = tg__fs_of(ex);
  tg_fs_err e = {0};
  tg_fs_path p;
  const char *path = tg__fs_str_arg(args, "path");
  int64_t max;
  if (tg__fs_int_arg(args, "list_dir", "max_entries", 1, TG_LIST_MAX_ENTRIES,
                     TG_LIST_DEFAULT_ENTRIES, &max, &e) < 0 ||
      tg__fs_resolve(fs, path ? path : ".", &p, &e) < 0) {
    tg__fs_fail(ex, &e);
    return;
  }
  int fd = -1;
  if (!p.exists)
    tg__fs_errf(&e, TG_E_NOT_FOUND, "'%s' does not exist", p.rel);
  else if (!S_ISDIR(p.st.st_mode))
    tg__fs_errf(&e, TG_E_NOT_A_DIRECTORY, "'%s' is not a directory (read_file "
                "reads a file)", p.rel);
  else if ((fd = tg__fs_open(fs, p.root, p.rel, O_RDONLY | O_DIRECTORY, 0)) < 0)
    tg__fs_errf(&e, TG_E_IO_ERROR, "cannot open '%s': %s", p.rel, strerror(-fd));
  if (e.code) {
    tg__fs_fail(ex, &e);
    tg__fs_path_free(&p);
    return;
  }
  listing l = {cJSON_CreateArray(), 0, (size_t)max, 0,
               tg__fs_bool_arg(args, "recursive", 0)};
  walk(&l, fd, strcmp(p.rel, ".") ? p.rel : "", 0);
  cJSON *r = cJSON_CreateObject();
  cJSON_AddStringToObject(r, "path", p.rel);
  cJSON_AddItemToObject(r, "entries", l.entries);
  cJSON_AddNumberToObject(r, "count", (double)l.count);
  cJSON_AddBoolToObject(r, "truncated", l.truncated);
  tg__fs_path_free(&p);
  tg_exec_finish_ok(ex, r);
}
