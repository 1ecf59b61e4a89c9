/*
 * db_private.c — the database file is private however its path is
 * reached. The audit holds every call's (masked) args, so the file and
 * the -wal, -shm and -journal files SQLite keeps beside it must be the
 * user's own, readable by nobody else, and nobody else may be able to
 * swap them. An attacker sharing a folder (/tmp) could otherwise:
 *   - plant a dangling symlink at the path, so that the file is created
 *     where they chose (and, through SQLite, 0644): refused — toolgate
 *     creates the file itself, 0600, O_EXCL and O_NOFOLLOW;
 *   - plant the file itself, or its -wal/-shm, owned by them: whatever is
 *     written there they read; refused (root too: a root process writing
 *     into a user's planted file is the same leak);
 *   - own the folder, or have it world-writable without the sticky bit:
 *     they could rename ours away and put theirs in; refused.
 * A symlink to an existing file of the user's own is followed (a database
 * kept elsewhere on purpose); the checks are made on the file it names and
 * beside it, where SQLite puts the -wal. A file of the user's own that
 * others may read (made by an older toolgate, or by hand) is made 0600.
 * The -wal and -shm are made here, 0600, before SQLite opens the file, so
 * nobody can slip theirs in between the check and the open.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "sqlite_store.h"
#include "base/util.h"

/* The folder holding file (a real path): ours or root's, and not open to
 * everyone's writes unless sticky (/tmp: nobody removes what is ours). */
static int check_folder(const char *file, const char *shown,
                        char err[TG_ERRMSG]) {
  char dir[PATH_MAX];
  snprintf(dir, sizeof dir, "%s", file);
  char *slash = strrchr(dir, '/');
  if (slash == dir) slash[1] = '\0';
  else if (slash) *slash = '\0';
  else snprintf(dir, sizeof dir, ".");
  struct stat st;
  if (stat(dir, &st) < 0) {
    tg__errf(err, TG_ERRMSG, "database %s: its folder %s: %s", shown, dir,
             strerror(errno));
    return -1;
  }
  if (st.st_uid != geteuid() && st.st_uid != 0) {
    tg__errf(err, TG_ERRMSG, "database %s: its folder %s belongs to another "
             "user (uid %lu): they could swap the database for a file of "
             "theirs; keep it in a folder of your own", shown, dir,
             (unsigned long)st.st_uid);
    return -1;
  }
  if ((st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX)) {
    tg__errf(err, TG_ERRMSG, "database %s: its folder %s is writable by "
             "everyone (and not sticky): anyone could swap the database; "
             "keep it in a folder of your own", shown, dir);
    return -1;
  }
  return 0;
}

/* An existing file (st from stat or lstat of it) fit to hold the audit:
 * regular, ours, and 0600 (made so when ours and looser). */
static int check_owned(const char *name, const struct stat *st,
                       const char *shown, char err[TG_ERRMSG]) {
  if (S_ISLNK(st->st_mode) || !S_ISREG(st->st_mode)) {
    tg__errf(err, TG_ERRMSG, "database %s: %s is not a regular file (a "
             "link, directory, device, FIFO or socket); remove it, or give "
             "another path", shown, name);
    return -1;
  }
  if (st->st_uid != geteuid()) {
    tg__errf(err, TG_ERRMSG, "database %s: %s belongs to another user (uid "
             "%lu; you are %lu): whoever owns it can read what toolgate "
             "writes there; toolgate uses only a file of your own (remove "
             "it, or give another path)", shown, name,
             (unsigned long)st->st_uid, (unsigned long)geteuid());
    return -1;
  }
  if ((st->st_mode & 077) && chmod(name, st->st_mode & 0700) < 0) {
    tg__errf(err, TG_ERRMSG, "database %s: %s may be read by others (mode "
             "%03o) and cannot be made private: %s", shown, name,
             (unsigned)(st->st_mode & 0777), strerror(errno));
    return -1;
  }
  return 0;
}

/* SQLite's files beside the database (real path): if there, they must be
 * ours; the -wal and -shm are made now when missing (see above). */
static int check_siblings(const char *real, const char *shown,
                          char err[TG_ERRMSG]) {
  static const char *const suffix[] = {"-wal", "-shm", "-journal"};
  for (int i = 0; i < 3; i++) {
    char name[PATH_MAX + 16];
    snprintf(name, sizeof name, "%s%s", real, suffix[i]);
    if (i < 2) {
      int fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
                              O_CLOEXEC, 0600);
      if (fd >= 0) {
        close(fd);
        continue;
      }
    }
    struct stat st;
    if (lstat(name, &st) < 0) {
      if (errno == ENOENT) continue;
      tg__errf(err, TG_ERRMSG, "database %s: %s: %s", shown, name,
               strerror(errno));
      return -1;
    }
    if (check_owned(name, &st, shown, err) < 0) return -1;
  }
  return 0;
}

/* Made 0600, never through a link (O_NOFOLLOW). 1: someone made the
 * path meanwhile (look again). */
static int create_file(const char *path, char err[TG_ERRMSG]) {
  if (check_folder(path, path, err) < 0) return -1;
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                0600);
  if (fd >= 0) return close(fd);
  if (errno == EEXIST) return 1;
  tg__errf(err, TG_ERRMSG, "database %s: cannot create it: %s", path,
           strerror(errno));
  return -1;
}

static int dangling(const char *path, char err[TG_ERRMSG]) {
  char to[PATH_MAX];
  ssize_t n = readlink(path, to, sizeof to - 1);
  to[n > 0 ? n : 0] = '\0';
  tg__errf(err, TG_ERRMSG, "database %s: it is a symbolic link to %s, "
           "which does not exist; toolgate does not create a database "
           "through a link (whoever made the link would choose where the "
           "audit goes, and SQLite would make it readable by all): give the "
           "path of the file itself", path, n > 0 ? to : "?");
  return -1;
}

int tg__db_private(const char *path, int create, char err[TG_ERRMSG]) {
  struct stat st;
  for (int tries = 0;; tries++) {
    if (stat(path, &st) == 0) break;
    int e = errno;
    struct stat l;
    if (e == ENOENT && lstat(path, &l) == 0 && S_ISLNK(l.st_mode))
      return dangling(path, err);
    if (e == ENOENT && create && tries < 2) {
      int rc = create_file(path, err);
      if (rc < 0) return -1;
      continue; /* made (check it like any), or made meanwhile */
    }
    if (e == ENOENT)
      tg__errf(err, TG_ERRMSG, "database %s: there is no such file "
               "(nothing recorded yet? --db names another)", path);
    else
      tg__errf(err, TG_ERRMSG, "database %s: %s", path, strerror(e));
    return -1;
  }
  if (!S_ISREG(st.st_mode)) { /* a FIFO would block the open forever */
    tg__errf(err, TG_ERRMSG, "database %s: it is not a regular file (a "
             "directory, device, FIFO or socket)", path);
    return -1;
  }
  char real[PATH_MAX];
  if (!realpath(path, real)) {
    tg__errf(err, TG_ERRMSG, "database %s: %s", path, strerror(errno));
    return -1;
  }
  if (check_folder(real, path, err) < 0 ||
      check_owned(real, &st, path, err) < 0)
    return -1;
  return check_siblings(real, path, err);
}
