/*
 * db.c — finding and opening the database file. Every connection gets the
 * same settings: a busy timeout (another process may hold the write lock
 * for a moment: `toolgate log --follow`, a second runtime),
 * synchronous=NORMAL and, for files, WAL: a commit is durable across a
 * crash of the process; a power loss may take the commits since the last
 * checkpoint (docs/storage.md).
 *
 * A reader beside the runtimes (explain --event's look at a session's
 * taint) opens it read-only: nothing created, switched or upgraded.
 *
 * Whatever is wrong with the file is said at open, naming it: missing, not
 * a regular file, not private (db_private.c), unwritable, not a database,
 * corrupt, locked, someone else's, or from a newer toolgate (schema.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "sqlite_store.h"
#include "base/state_dir.h"
#include "base/util.h"

int tg__db_is_memory(const char *path) {
  return path && strcmp(path, ":memory:") == 0;
}

int tg_db_default_path(char *buf, size_t len, char err[TG_ERRMSG]) {
  int rc = tg__state_dir(buf, len);
  size_t n = rc == 0 ? strlen(buf) : 0;
  if (rc == 0 && snprintf(buf + n, len - n, "/toolgate.db") >= (int)(len - n))
    rc = -ENAMETOOLONG;
  if (rc == -ENOENT)
    tg__errf(err, TG_ERRMSG, "no place for the database: neither "
             "XDG_STATE_HOME nor HOME is set to a full path; give the "
             "database's path (db, --db) or turn storage off (--no-db)");
  else if (rc < 0)
    tg__errf(err, TG_ERRMSG, "the default database path is too long");
  return rc;
}

/* mkdir -p of the folders above the file; the last ones made 0700 (the
 * audit holds every call's args: nobody else's to read). */
static int make_parents(char *path, char err[TG_ERRMSG]) {
  for (char *p = strchr(path + 1, '/'); p; p = strchr(p + 1, '/')) {
    *p = '\0';
    int rc = mkdir(path, 0700);
    int e = errno;
    *p = '/';
    if (rc < 0 && e != EEXIST) {
      *p = '\0';
      tg__errf(err, TG_ERRMSG, "cannot make the database's folder %s: %s",
               path, strerror(e));
      *p = '/';
      return -e;
    }
  }
  return 0;
}

char *tg__db_resolve(const char *path, int create, char err[TG_ERRMSG]) {
  char buf[4096];
  if (!path) {
    if (tg_db_default_path(buf, sizeof buf, err) < 0) return NULL;
    if (create && make_parents(buf, err) < 0) return NULL;
    path = buf;
  }
  if (!*path) {
    tg__errf(err, TG_ERRMSG, "the database path is empty");
    return NULL;
  }
  char *copy = tg__strdup(path);
  if (!copy) tg__errf(err, TG_ERRMSG, "out of memory");
  return copy;
}

/* What a result code means for the user, beyond SQLite's terse text. */
static const char *meaning(int code) {
  switch (code & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return "it is locked by another process (waited 5 s); try again "
             "when that process is done";
    case SQLITE_NOTADB:
      return "it is not a database (corrupt, or another kind of file)";
    case SQLITE_CORRUPT:
      return "it is corrupt; move it aside (toolgate starts a new one)";
    case SQLITE_READONLY:
      return "it is read-only (its permissions, or a read-only file "
             "system); toolgate must write to it";
    case SQLITE_FULL:
      return "the disk is full";
    case SQLITE_CANTOPEN:
      return "it cannot be opened";
    case SQLITE_PERM:
    case SQLITE_AUTH:
      return "access is denied";
    default:
      return NULL;
  }
}

void tg__db_error(sqlite3 *db, const char *path, const char *doing,
                  char err[TG_ERRMSG]) {
  int code = db ? sqlite3_extended_errcode(db) : SQLITE_NOMEM;
  int sys = db ? sqlite3_system_errno(db) : 0;
  const char *m = meaning(code);
  const char *msg = db ? sqlite3_errmsg(db) : "out of memory";
  char os[160] = "";
  if (sys) snprintf(os, sizeof os, "; %s", strerror(sys));
  if (m)
    tg__errf(err, TG_ERRMSG, "database %s: %s: %s (%s%s)", path, doing, m,
             msg, os);
  else
    tg__errf(err, TG_ERRMSG, "database %s: %s: %s%s", path, doing, msg, os);
}

int tg__db_exec(sqlite3 *db, const char *sql, char *err, size_t errlen) {
  char *msg = NULL;
  int rc = sqlite3_exec(db, sql, NULL, NULL, &msg);
  if (rc != SQLITE_OK && err) snprintf(err, errlen, "%s", msg ? msg : "?");
  sqlite3_free(msg);
  return rc;
}

/* One text result of a pragma, into buf. SQLite's result code. */
static int pragma_text(sqlite3 *db, const char *sql, char *buf, size_t len) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
  if (rc == SQLITE_OK) rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) {
    const unsigned char *t = sqlite3_column_text(st, 0);
    snprintf(buf, len, "%s", t ? (const char *)t : "");
    rc = SQLITE_OK;
  }
  sqlite3_finalize(st);
  return rc;
}

/* PRAGMA journal_mode=WAL, asked again while the answer is BUSY, for up
 * to TG_DB_BUSY_MS. Two processes opening a new database at once (a hook
 * and the daemon it starts, hooks of parallel prompts) both read it, a
 * shared lock each, and both ask to switch it, which needs it alone:
 * SQLite answers one of them BUSY at once rather than wait on a deadlock,
 * so the busy timeout does not help. Once the other has switched, asking
 * again finds "wal". */
static int switch_to_wal(sqlite3 *db, char *mode, size_t len) {
  int rc = SQLITE_BUSY;
  for (int waited = 0; waited <= TG_DB_BUSY_MS; waited += 10) {
    rc = pragma_text(db, "PRAGMA journal_mode=WAL", mode, len);
    if ((rc & 0xff) != SQLITE_BUSY) break;
    sqlite3_sleep(10);
  }
  return rc;
}

/* Settings, and the first read of the file: a corrupt header, a file of
 * another kind or a lock show here. */
static int configure(sqlite3 *db, const char *path, int memory,
                     char err[TG_ERRMSG]) {
  char mode[32];
  sqlite3_extended_result_codes(db, 1);
  sqlite3_busy_timeout(db, TG_DB_BUSY_MS);
  if (!memory && sqlite3_db_readonly(db, "main") == 1) {
    tg__errf(err, TG_ERRMSG, "database %s: %s", path,
             meaning(SQLITE_READONLY));
    return -1;
  }
  if (pragma_text(db, "PRAGMA schema_version", mode, sizeof mode) != SQLITE_OK) {
    tg__db_error(db, path, "cannot read it", err);
    return -1;
  }
  if (!memory) {
    if (switch_to_wal(db, mode, sizeof mode) != SQLITE_OK) {
      tg__db_error(db, path, "cannot switch it to WAL", err);
      return -1;
    }
    if (strcmp(mode, "wal") != 0) {
      tg__errf(err, TG_ERRMSG, "database %s: cannot switch it to WAL "
               "(journal mode stays '%s')", path, mode);
      return -1;
    }
  }
  /* what is deleted or replaced is zeroed, not left in free space: a
   * secret masked after the fact (approval_seal.c) leaves no copy */
  if (tg__db_exec(db, "PRAGMA synchronous=NORMAL;PRAGMA secure_delete=ON",
                  NULL, 0) != SQLITE_OK) {
    tg__db_error(db, path, "cannot set it up", err);
    return -1;
  }
  return 0;
}

sqlite3 *tg__db_open(const char *path, int create, int shared,
                     char err[TG_ERRMSG]) {
  int memory = tg__db_is_memory(path);
  if (!memory && tg__db_private(path, create, err) < 0) return NULL;
  int flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0) |
              (shared ? SQLITE_OPEN_FULLMUTEX : SQLITE_OPEN_NOMUTEX);
  sqlite3 *db = NULL;
  if (sqlite3_open_v2(path, &db, flags, NULL) != SQLITE_OK) {
    tg__db_error(db, path, "cannot open it", err);
    sqlite3_close(db);
    return NULL;
  }
  if (configure(db, path, memory, err) < 0 ||
      tg__schema_ensure(db, path, TG_DB_SCHEMA_VERSION, err) < 0) {
    sqlite3_close(db);
    return NULL;
  }
  return db;
}

sqlite3 *tg__db_open_read(const char *path, char err[TG_ERRMSG]) {
  char v[32];
  if (tg__db_is_memory(path)) {
    tg__errf(err, TG_ERRMSG, "database %s: a private one has nothing to "
             "read", path);
    return NULL;
  }
  if (tg__db_private(path, 0, err) < 0) return NULL;
  sqlite3 *db = NULL;
  if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX,
                      NULL) != SQLITE_OK) {
    tg__db_error(db, path, "cannot open it", err);
    sqlite3_close(db);
    return NULL;
  }
  sqlite3_extended_result_codes(db, 1);
  sqlite3_busy_timeout(db, TG_DB_BUSY_MS);
  /* the first read: a corrupt header, another kind of file, a lock */
  if (pragma_text(db, "PRAGMA schema_version", v, sizeof v) != SQLITE_OK) {
    tg__db_error(db, path, "cannot read it", err);
    sqlite3_close(db);
    return NULL;
  }
  if (tg__schema_current(db, path, err) < 0 ||
      tg__db_exec(db, "PRAGMA query_only=1", NULL, 0) != SQLITE_OK) {
    if (!*err) tg__db_error(db, path, "cannot set it up", err);
    sqlite3_close(db);
    return NULL;
  }
  return db;
}
