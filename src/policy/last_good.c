/*
 * last_good.c — the last policies that loaded, kept for a fall back
 * (last_good.h): the folder's digest, the copy, finding it, its log.
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
#include "last_good.h"
#include "base/state_dir.h"
#include "base/util.h"

#define LG_MAX_FILES 4096
#define LG_MAX_BYTES (64u << 20)
#define LG_MAX_DEPTH 16
#define LG_LOG_MAX (1u << 20) /* the log starts over past this */

typedef struct {
  char **rel; /* relative paths, below the folder */
  size_t n, cap;
  size_t bytes;
} lg_list;

static void list_free(lg_list *l) {
  for (size_t i = 0; i < l->n; i++) free(l->rel[i]);
  free(l->rel);
  memset(l, 0, sizeof *l);
}

static int ends_with(const char *s, const char *tail) {
  size_t n = strlen(s), k = strlen(tail);
  return n >= k && strcmp(s + n - k, tail) == 0;
}

/* The *.lua files below root/rel, as the loader and require reach them. */
static int walk(const char *root, const char *rel, int depth, lg_list *l) {
  if (depth > LG_MAX_DEPTH) return -EFBIG;
  char path[PATH_MAX];
  int w = snprintf(path, sizeof path, "%s%s%s", root, rel[0] ? "/" : "", rel);
  if (w < 0 || (size_t)w >= sizeof path) return -ENAMETOOLONG;
  DIR *d = opendir(path);
  if (!d) return -errno;
  int rc = 0;
  for (struct dirent *e; rc == 0 && (e = readdir(d));) {
    const char *name = e->d_name;
    if (name[0] == '.') continue;
    char sub[PATH_MAX], full[PATH_MAX * 2 + 2];
    w = snprintf(sub, sizeof sub, "%s%s%s", rel, rel[0] ? "/" : "", name);
    if (w < 0 || (size_t)w >= sizeof sub) continue;
    w = snprintf(full, sizeof full, "%s/%s", root, sub);
    if (w < 0 || (size_t)w >= sizeof full) continue;
    struct stat st;
    if (stat(full, &st) < 0) continue; /* a dangling link: not loaded */
    if (S_ISDIR(st.st_mode)) {
      if (strcmp(name, "tests") != 0) rc = walk(root, sub, depth + 1, l);
    } else if (S_ISREG(st.st_mode) && ends_with(name, ".lua") &&
               !ends_with(name, "_test.lua")) {
      if (l->n == LG_MAX_FILES || l->bytes + (size_t)st.st_size > LG_MAX_BYTES) {
        rc = -EFBIG;
        break;
      }
      if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 32;
        char **r = realloc(l->rel, cap * sizeof *r);
        if (!r) {
          rc = -ENOMEM;
          break;
        }
        l->rel = r;
        l->cap = cap;
      }
      if (!(l->rel[l->n] = strdup(sub))) {
        rc = -ENOMEM;
        break;
      }
      l->n++;
      l->bytes += (size_t)st.st_size;
    }
  }
  closedir(d);
  return rc;
}

static int by_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static int list_of(const char *dir, lg_list *l) {
  memset(l, 0, sizeof *l);
  int rc = walk(dir, "", 0, l);
  if (rc < 0) {
    list_free(l);
    return rc;
  }
  if (l->n > 1) /* an empty folder has no list at all (NULL) */
    qsort(l->rel, l->n, sizeof *l->rel, by_name);
  return 0;
}

static char *slurp(const char *path, size_t *len) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
      (size_t)st.st_size > LG_MAX_BYTES) {
    if (fd >= 0) close(fd);
    return NULL;
  }
  char *b = malloc((size_t)st.st_size + 1);
  size_t n = 0;
  ssize_t r = 0;
  while (b && n < (size_t)st.st_size &&
         (r = read(fd, b + n, (size_t)st.st_size - n)) > 0)
    n += (size_t)r;
  close(fd);
  if (!b || r < 0) {
    free(b);
    return NULL;
  }
  *len = n;
  return b;
}

/* One file into the digest: its name, its length, its bytes. */
static void hash_file(tg_sha256_ctx *c, const char *rel, const char *text,
                      size_t len) {
  uint8_t n[8];
  for (int i = 0; i < 8; i++) n[i] = (uint8_t)((uint64_t)len >> (8 * i));
  tg__sha256_update(c, rel, strlen(rel) + 1);
  tg__sha256_update(c, n, sizeof n);
  tg__sha256_update(c, text, len);
}

int tg__policies_digest(const char *dir, uint8_t out[TG_SHA256_SIZE]) {
  lg_list l;
  int rc = list_of(dir, &l);
  if (rc < 0) return rc;
  tg_sha256_ctx c;
  tg__sha256_init(&c);
  for (size_t i = 0; i < l.n && rc == 0; i++) {
    char path[PATH_MAX * 2 + 2];
    snprintf(path, sizeof path, "%s/%s", dir, l.rel[i]);
    size_t len = 0;
    char *text = slurp(path, &len);
    if (!text) {
      rc = errno ? -errno : -EIO;
      break;
    }
    hash_file(&c, l.rel[i], text, len);
    free(text);
  }
  tg__sha256_final(&c, out);
  list_free(&l);
  return rc;
}

static void hex(const uint8_t *d, size_t n, char *out) {
  for (size_t i = 0; i < n; i++) sprintf(out + 2 * i, "%02x", d[i]);
  out[2 * n] = '\0';
}

/* <state>/last-good and the key of dir in it. */
static int place(const char *dir, char base[PATH_MAX], char key[65]) {
  char real[PATH_MAX];
  if (!realpath(dir, real)) return -errno;
  int rc = tg__state_dir(base, PATH_MAX);
  if (rc < 0) return rc;
  size_t n = strlen(base);
  if (n + sizeof "/last-good" >= PATH_MAX) return -ENAMETOOLONG;
  memcpy(base + n, "/last-good", sizeof "/last-good");
  uint8_t d[TG_SHA256_SIZE];
  tg_sha256(real, strlen(real), d);
  hex(d, 16, key);
  return 0;
}

static int mkdirs(const char *dir, mode_t mode) {
  char d[PATH_MAX];
  snprintf(d, sizeof d, "%s", dir);
  for (char *p = d + 1; *p; p++) {
    if (*p != '/') continue;
    *p = '\0';
    if (mkdir(d, mode) < 0 && errno != EEXIST) return -errno;
    *p = '/';
  }
  return mkdir(d, mode) < 0 && errno != EEXIST ? -errno : 0;
}

static void remove_tree(const char *path, int depth) {
  struct stat st;
  if (depth > LG_MAX_DEPTH + 2 || lstat(path, &st) < 0) return;
  if (S_ISDIR(st.st_mode)) {
    DIR *d = opendir(path);
    for (struct dirent *e; d && (e = readdir(d));) {
      if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
      char sub[PATH_MAX];
      if (snprintf(sub, sizeof sub, "%s/%s", path, e->d_name) < (int)sizeof sub)
        remove_tree(sub, depth + 1);
    }
    if (d) closedir(d);
    rmdir(path);
  } else {
    unlink(path);
  }
}

static int write_text(const char *path, const char *text, size_t len) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return -errno;
  int rc = write(fd, text, len) == (ssize_t)len ? 0 : -EIO;
  if (close(fd) < 0 && rc == 0) rc = -errno;
  return rc;
}

/* The digest the current copy of key holds, as hex; "" when none. */
static void current_digest(const char *base, const char *key, char out[65]) {
  char path[PATH_MAX * 2];
  out[0] = '\0';
  snprintf(path, sizeof path, "%s/%s/DIGEST", base, key);
  size_t len = 0;
  char *t = slurp(path, &len);
  if (t && len == 64) {
    memcpy(out, t, 64);
    out[64] = '\0';
  }
  free(t);
}

/* Copies dir's files into to, hashing what was copied. */
static int copy_files(const char *dir, const char *to,
                      uint8_t got[TG_SHA256_SIZE]) {
  lg_list l;
  int rc = list_of(dir, &l);
  if (rc < 0) return rc;
  tg_sha256_ctx c;
  tg__sha256_init(&c);
  for (size_t i = 0; i < l.n && rc == 0; i++) {
    char from[PATH_MAX * 2 + 2], dest[PATH_MAX * 3 + 2];
    snprintf(from, sizeof from, "%s/%s", dir, l.rel[i]);
    snprintf(dest, sizeof dest, "%s/%s", to, l.rel[i]);
    size_t len = 0;
    char *text = slurp(from, &len);
    if (!text) {
      rc = -EIO;
      break;
    }
    hash_file(&c, l.rel[i], text, len);
    char *slash = strrchr(dest, '/');
    *slash = '\0';
    rc = mkdirs(dest, 0700);
    *slash = '/';
    if (rc == 0) rc = write_text(dest, text, len);
    free(text);
  }
  tg__sha256_final(&c, got);
  list_free(&l);
  return rc;
}

/* Old copies of key, but keep (its current one). */
static void remove_old(const char *base, const char *key, const char *keep) {
  DIR *d = opendir(base);
  size_t kl = strlen(key);
  for (struct dirent *e; d && (e = readdir(d));) {
    const char *n = e->d_name;
    if (strncmp(n, key, kl) != 0 || n[kl] != '.' || !strcmp(n, keep) ||
        !strncmp(n + kl, ".tmp-", 5) || !strncmp(n + kl, ".lnk-", 5) ||
        !strcmp(n + kl, ".log"))
      continue;
    char path[PATH_MAX * 2];
    snprintf(path, sizeof path, "%s/%s", base, n);
    remove_tree(path, 0);
  }
  if (d) closedir(d);
}

int tg__last_good_keep(const char *dir, const uint8_t loaded[TG_SHA256_SIZE],
                       int (*loads)(const char *copy, void *ud), void *ud,
                       char err[TG_ERRMSG]) {
  char base[PATH_MAX], key[65], want[65], have[65];
  int rc = place(dir, base, key);
  if (rc < 0) {
    tg__errf(err, TG_ERRMSG, "no state folder for the last good policies: %s",
             strerror(-rc));
    return rc;
  }
  uint8_t now[TG_SHA256_SIZE];
  if (!loaded) { /* what is there now, if it loads */
    if ((rc = tg__policies_digest(dir, now)) < 0) {
      tg__errf(err, TG_ERRMSG, "cannot read the policies: %s", strerror(-rc));
      return rc;
    }
    loaded = now;
  }
  hex(loaded, TG_SHA256_SIZE, want);
  current_digest(base, key, have);
  if (!strcmp(want, have)) return 0; /* kept already */
  if ((rc = mkdirs(base, 0700)) < 0) {
    tg__errf(err, TG_ERRMSG, "cannot make %s: %s", base, strerror(-rc));
    return rc;
  }
  char tmp[PATH_MAX * 2], final[PATH_MAX * 2], name[128], lnk[PATH_MAX * 2],
      link_path[PATH_MAX * 2];
  snprintf(tmp, sizeof tmp, "%s/%s.tmp-XXXXXX", base, key);
  if (!mkdtemp(tmp)) {
    rc = -errno;
    tg__errf(err, TG_ERRMSG, "cannot make a folder in %s: %s", base,
             strerror(errno));
    return rc;
  }
  uint8_t got[TG_SHA256_SIZE];
  rc = copy_files(dir, tmp, got);
  if (rc == 0 && memcmp(got, loaded, sizeof got) != 0) rc = -EAGAIN;
  if (rc == 0 && loaded == now && loads && loads(tmp, ud) != 0) rc = -EAGAIN;
  if (rc == 0) {
    char path[PATH_MAX * 2 + 16];
    snprintf(path, sizeof path, "%s/DIGEST", tmp);
    rc = write_text(path, want, 64);
  }
  snprintf(name, sizeof name, "%s.%.16s", key, want);
  snprintf(final, sizeof final, "%s/%s", base, name);
  if (rc == 0 && rename(tmp, final) < 0) {
    if (errno == EEXIST || errno == ENOTEMPTY) remove_tree(tmp, 0);
    else rc = -errno;
  }
  if (rc < 0) {
    remove_tree(tmp, 0);
    if (rc != -EAGAIN)
      tg__errf(err, TG_ERRMSG, "cannot keep the last good policies: %s",
               strerror(-rc));
    else
      tg__errf(err, TG_ERRMSG, "the policies changed while they loaded: "
               "not kept");
    return rc;
  }
  /* the key names the new copy in one rename */
  snprintf(lnk, sizeof lnk, "%s/%s.lnk-%ld", base, key, (long)getpid());
  snprintf(link_path, sizeof link_path, "%s/%s", base, key);
  unlink(lnk);
  if (symlink(name, lnk) < 0 || rename(lnk, link_path) < 0) {
    rc = -errno;
    unlink(lnk);
    tg__errf(err, TG_ERRMSG, "cannot keep the last good policies: %s",
             strerror(-rc));
    return rc;
  }
  char src_path[PATH_MAX * 2 + 16], real[PATH_MAX];
  snprintf(src_path, sizeof src_path, "%s/SOURCE", final);
  if (realpath(dir, real)) write_text(src_path, real, strlen(real));
  remove_old(base, key, name);
  return 0;
}

int tg__last_good_find(const char *dir, char *out, size_t len, time_t *when) {
  char base[PATH_MAX], key[65], link_path[PATH_MAX * 2], real[PATH_MAX];
  int rc = place(dir, base, key);
  if (rc < 0) return rc;
  snprintf(link_path, sizeof link_path, "%s/%s", base, key);
  if (!realpath(link_path, real)) return -ENOENT;
  char digest[PATH_MAX + 16];
  snprintf(digest, sizeof digest, "%s/DIGEST", real);
  struct stat st;
  if (stat(digest, &st) < 0) return -ENOENT;
  if (when) *when = st.st_mtime;
  int n = snprintf(out, len, "%s", real);
  return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

void tg__last_good_log(const char *dir, const char *text) {
  char base[PATH_MAX], key[65], path[PATH_MAX * 2];
  if (place(dir, base, key) < 0 || mkdirs(base, 0700) < 0) return;
  snprintf(path, sizeof path, "%s/%s.log", base, key);
  struct stat st;
  int flags = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC;
  if (stat(path, &st) == 0 && (size_t)st.st_size > LG_LOG_MAX) flags |= O_TRUNC;
  int fd = open(path, flags, 0600);
  if (fd < 0) return;
  char stamp[32], line[TG_ERRMSG + 512];
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tm);
  int n = snprintf(line, sizeof line, "%s %s\n", stamp, text);
  if (n > 0) {
    size_t l = (size_t)n < sizeof line ? (size_t)n : sizeof line - 1;
    if (write(fd, line, l) < 0) { /* a log line lost: the answer stands */ }
  }
  close(fd);
}
