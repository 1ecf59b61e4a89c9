/*
 * fs_io.c — confined, bounded file operations for the file tools
 * (fs_io.h): whole-file read, atomic replace, delete, making directories.
 */
#define _GNU_SOURCE /* O_DIRECTORY, O_NOFOLLOW with the *at calls */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "fs_io.h"
#include "base/util.h"

/* Chunk size of reads and writes: keeps each syscall short. */
#define TG_FS_CHUNK (1u << 20)

int tg__strlist_push(tg_strlist *l, const char *s) {
  if (l->n == l->cap) {
    size_t cap = l->cap ? l->cap * 2 : 8;
    char **v = realloc(l->v, cap * sizeof *v);
    if (!v) return -ENOMEM;
    l->v = v;
    l->cap = cap;
  }
  char *c = tg__strdup(s);
  if (!c) return -ENOMEM;
  l->v[l->n++] = c;
  return 0;
}

void tg__strlist_free(tg_strlist *l) {
  for (size_t i = 0; i < l->n; i++) free(l->v[i]);
  free(l->v);
  memset(l, 0, sizeof *l);
}

static int io_refusal(tg_fs_err *e, const char *what, const char *rel,
                      int err) {
  if (err == ELOOP || err == EXDEV)
    tg__fs_errf(e, TG_E_OUTSIDE_WORKSPACE, "cannot %s '%s': a symlink appeared "
                "in the path while we worked on it; the file tools do not "
                "follow it", what, rel);
  else if (err == ENOENT)
    tg__fs_errf(e, TG_E_NOT_FOUND, "cannot %s '%s': it does not exist", what, rel);
  else if (err == ENOSPC || err == EDQUOT)
    tg__fs_errf(e, TG_E_NO_SPACE, "cannot %s '%s': %s", what, rel, strerror(err));
  else
    tg__fs_errf(e, err == EACCES || err == EPERM ? TG_E_PERMISSION_DENIED
                                                 : TG_E_IO_ERROR,
                "cannot %s '%s': %s", what, rel, strerror(err));
  return -1;
}

/* ---- reading ----------------------------------------------------------- */

static int read_fd(int fd, size_t max, char **data, size_t *len) {
  size_t cap = 0, n = 0;
  char *buf = NULL;
  for (;;) {
    if (n + 1 >= cap) {
      size_t want = cap ? cap * 2 : 64 * 1024;
      if (want > max + 2) want = max + 2;
      if (want <= n + 1) break; /* over max: the caller refuses */
      char *b = realloc(buf, want);
      if (!b) {
        free(buf);
        return -ENOMEM;
      }
      buf = b;
      cap = want;
    }
    size_t room = cap - n - 1;
    ssize_t k = read(fd, buf + n, room < TG_FS_CHUNK ? room : TG_FS_CHUNK);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) {
      int err = errno;
      free(buf);
      return -err;
    }
    if (k == 0) break;
    n += (size_t)k;
  }
  if (!buf && !(buf = malloc(1))) return -ENOMEM;
  buf[n] = '\0';
  *data = buf;
  *len = n;
  return 0;
}

int tg__fs_read(tg_fs *fs, const tg_fs_path *p, char **data, size_t *len,
                struct stat *st, tg_fs_err *e) {
  /* judge by lstat first: a FIFO or a device is never opened at all */
  if (!S_ISREG(p->st.st_mode)) return tg__fs_not_regular(e, p->rel, p->st.st_mode);
  if ((size_t)p->st.st_size > fs->max_bytes)
    return tg__fs_too_large(e, p->rel, (size_t)p->st.st_size, fs->max_bytes);
  /* O_NONBLOCK: if a FIFO was swapped in since, the open does not hang */
  int fd = tg__fs_open(fs, p->root, p->rel, O_RDONLY | O_NONBLOCK | O_NOCTTY, 0);
  if (fd < 0) return io_refusal(e, "read", p->rel, -fd);
  int rc = fstat(fd, st) < 0 ? -errno : 0;
  if (rc == 0 && !S_ISREG(st->st_mode)) {
    close(fd);
    return tg__fs_not_regular(e, p->rel, st->st_mode);
  }
  if (rc == 0) rc = read_fd(fd, fs->max_bytes, data, len);
  close(fd);
  if (rc < 0) return io_refusal(e, "read", p->rel, -rc);
  if (*len > fs->max_bytes) { /* it grew while we read */
    free(*data);
    *data = NULL;
    return tg__fs_too_large(e, p->rel, *len, fs->max_bytes);
  }
  return 0;
}

/* ---- directories -------------------------------------------------------- */

int tg__fs_make_parents(tg_fs *fs, const tg_fs_path *p, tg_strlist *created,
                        tg_fs_err *e) {
  int fd = tg__fs_open(fs, p->root, ".", O_RDONLY | O_DIRECTORY, 0);
  if (fd < 0) return io_refusal(e, "open the workspace root for", p->rel, -fd);
  char *rel = tg__strdup(p->rel);
  if (!rel) {
    close(fd);
    return io_refusal(e, "create", p->rel, ENOMEM);
  }
  int rc = 0;
  char *last = strrchr(rel, '/');
  if (last) *last = '\0'; /* the directories only, not the file */
  for (char *s = rel, *comp; last && (comp = strtok_r(s, "/", &s)) != NULL;) {
    int next = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0 && errno == ENOENT) {
      if (mkdirat(fd, comp, 0777) < 0 && errno != EEXIST) {
        rc = io_refusal(e, "create the directory for", p->rel, errno);
        break;
      }
      size_t at = (size_t)(comp - rel) + strlen(comp);
      char *made = strndup(p->rel, at);
      if (!made || (created && tg__strlist_push(created, made) < 0)) {
        free(made);
        rc = io_refusal(e, "create the directory for", p->rel, ENOMEM);
        break;
      }
      free(made);
      next = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    }
    if (next < 0) { /* something appeared since the path was resolved */
      rc = errno == ENOTDIR
               ? (tg__fs_errf(e, TG_E_NOT_A_DIRECTORY, "cannot create '%s': "
                              "'%s' is in the way and is not a directory",
                              p->rel, comp), -1)
               : io_refusal(e, "create the directory for", p->rel, errno);
      break;
    }
    close(fd);
    fd = next;
  }
  close(fd);
  free(rel);
  return rc;
}

void tg__fs_remove_dirs(tg_fs *fs, int root, const tg_strlist *created) {
  for (size_t i = created->n; i > 0; i--)
    (void)unlinkat(fs->root_fds[root], created->v[i - 1], AT_REMOVEDIR);
}

/* ---- atomic replace ------------------------------------------------------ */

static int write_all(int fd, const char *data, size_t len) {
  while (len > 0) {
    ssize_t k = write(fd, data, len < TG_FS_CHUNK ? len : TG_FS_CHUNK);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) return -errno;
    data += k;
    len -= (size_t)k;
  }
  return 0;
}

/* Creates `.BASE.tg-XXXXXX` in dfd (exclusively). Returns the fd. */
static int make_temp(tg_fs *fs, int dfd, const char *base, char *name,
                     size_t size) {
  static const char alnum[] =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  for (int tries = 0; tries < 100; tries++) {
    uint64_t x = uv_hrtime() ^ ((uint64_t)getpid() << 32) ^
                 (++fs->tmp_counter * 0x9E3779B97F4A7C15ULL);
    char rnd[7];
    for (int i = 0; i < 6; i++, x /= 62) rnd[i] = alnum[x % 62];
    rnd[6] = '\0';
    /* names are at most NAME_MAX: keep the start of a long base */
    snprintf(name, size, ".%.200s" TG_FS_TMP_MARK "%s", base, rnd);
    int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
                    O_CLOEXEC, 0666);
    if (fd >= 0 || errno != EEXIST) return fd >= 0 ? fd : -errno;
  }
  return -EEXIST;
}

/* The permission bits after exec (fs_io.h). */
static mode_t exec_bits(mode_t perms, tg_fs_exec exec) {
  if (exec == TG_FS_EXEC_SET) return perms | ((perms & 0444) >> 2);
  if (exec == TG_FS_EXEC_CLEAR) return perms & ~(mode_t)(0111 | S_ISUID | S_ISGID);
  return perms;
}

/* Writes data into the temp file fd, with old's mode and owner (a new
 * file: the mode it was made with), then the executable bits. */
static int fill_temp(int fd, const char *data, size_t len,
                     const struct stat *old, tg_fs_exec exec) {
  int rc = write_all(fd, data, len);
  struct stat made;
  memset(&made, 0, sizeof made);
  if (rc == 0 && !old && exec != TG_FS_EXEC_KEEP && fstat(fd, &made) < 0)
    rc = -errno;
  if (rc == 0 && (old || exec != TG_FS_EXEC_KEEP)) {
    mode_t perms = (old ? old->st_mode : made.st_mode) & 07777;
    if (fchmod(fd, exec_bits(perms, exec)) < 0) rc = -errno;
  }
  if (rc == 0 && old &&
      (old->st_uid != geteuid() || old->st_gid != getegid()) &&
      fchown(fd, old->st_uid, old->st_gid) < 0) {
    /* not allowed to give it away: it stays ours, mode kept */
  }
  if (rc == 0 && fsync(fd) < 0) rc = -errno;
  return rc;
}

static int open_parent(tg_fs *fs, const tg_fs_path *p, const char **base,
                       tg_fs_err *e) {
  char *dir;
  if (tg__fs_split(p->rel, &dir, base) < 0)
    return io_refusal(e, "write", p->rel, ENOMEM);
  int dfd = tg__fs_open(fs, p->root, dir, O_RDONLY | O_DIRECTORY, 0);
  if (dfd == -ENOENT)
    tg__fs_errf(e, TG_E_NOT_FOUND, "cannot write '%s': the directory '%s' does "
                "not exist (write_file creates it with create_dirs: true)",
                p->rel, dir);
  else if (dfd < 0)
    io_refusal(e, "write", p->rel, -dfd);
  free(dir);
  return dfd;
}

int tg__fs_write_atomic(tg_fs *fs, const tg_fs_path *p, const char *data,
                        size_t len, const struct stat *like, struct stat *out,
                        tg_fs_err *e) {
  return tg__fs_write_atomic_exec(fs, p, data, len, like, TG_FS_EXEC_KEEP, out,
                                  e);
}

int tg__fs_write_atomic_exec(tg_fs *fs, const tg_fs_path *p, const char *data,
                             size_t len, const struct stat *like,
                             tg_fs_exec exec, struct stat *out, tg_fs_err *e) {
  if (len > fs->max_bytes) return tg__fs_too_large(e, p->rel, len, fs->max_bytes);
  const char *base;
  int dfd = open_parent(fs, p, &base, e);
  if (dfd < 0) return -1;
  struct stat old;
  int had = fstatat(dfd, base, &old, AT_SYMLINK_NOFOLLOW) == 0;
  if (had && !S_ISREG(old.st_mode)) {
    close(dfd);
    return tg__fs_not_regular(e, p->rel, old.st_mode);
  }
  char name[NAME_MAX + 1];
  int fd = make_temp(fs, dfd, base, name, sizeof name);
  if (fd < 0) {
    close(dfd);
    return io_refusal(e, "create a temp file next to", p->rel, -fd);
  }
  int rc = fill_temp(fd, data, len, like ? like : had ? &old : NULL, exec);
  if (close(fd) < 0 && rc == 0) rc = -errno;
  if (rc == 0 && renameat(dfd, name, dfd, base) < 0) rc = -errno;
  if (rc < 0) {
    unlinkat(dfd, name, 0);
    close(dfd);
    return io_refusal(e, "write", p->rel, -rc);
  }
  (void)fsync(dfd); /* the rename itself survives a power loss */
  if (out && fstatat(dfd, base, out, AT_SYMLINK_NOFOLLOW) < 0)
    memset(out, 0, sizeof *out);
  close(dfd);
  return 0;
}

int tg__fs_remove(tg_fs *fs, const tg_fs_path *p, tg_fs_err *e) {
  const char *base;
  int dfd = open_parent(fs, p, &base, e);
  if (dfd < 0) return -1;
  struct stat st;
  int rc = 0;
  if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0)
    rc = io_refusal(e, "delete", p->rel, errno);
  else if (!S_ISREG(st.st_mode))
    rc = tg__fs_not_regular(e, p->rel, st.st_mode);
  else if (unlinkat(dfd, base, 0) < 0)
    rc = io_refusal(e, "delete", p->rel, errno);
  if (rc == 0) (void)fsync(dfd);
  close(dfd);
  return rc;
}
