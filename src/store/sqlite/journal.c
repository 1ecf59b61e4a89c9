/*
 * journal.c — the audit journal: a runtime's audit records appended to a
 * file of its own beside the database before the call is answered, and
 * loaded into `calls` later, in batches, by the writer thread (writer.c).
 * A commit costs a lone call about 35 µs of CPU (the WAL frames written,
 * six lock calls, the insert); an append is one write().
 *
 * The file: `<database>.calls.<pid>.<start ms>`, made 0600, O_EXCL and
 * O_NOFOLLOW beside the database, its owner the process that made it,
 * which holds an exclusive flock(2) on it while it lives (flock, not
 * fcntl: fcntl locks are the process's and go when any descriptor of the
 * file closes, which another store of the same process would do).
 * Records: 4 bytes of length, 4 bytes of CRC-32 of the bytes, the bytes
 * (audit.c's encoding of the row's values), one write() per turn of the
 * loop, for all the records that turn ended.
 *
 * The watermark: meta key `journal:<file name>`, the bytes loaded so far,
 * moved in the transaction that inserts them, so a record is loaded once
 * whoever loads it (the owner's thread, a reader catching up, a process
 * cleaning up after a dead one). The owner makes the key (0) right after
 * the file and before any record; no key means nothing is to be loaded
 * (the owner has loaded it all and is going, or never started).
 *
 * A record whose length runs past the end of the file or whose CRC does
 * not match is, in a live journal, not yet written (left for later); in a
 * dead one (its lock free) torn by a crash mid-write: it and what follows
 * are dropped, with a line on stderr.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uv.h>
#include "sqlite_store.h"
#include "base/util.h"

#define FRAME 8                   /* length + CRC */
#define RECORD_MAX (64u << 20)    /* longer: not a record of ours */
#define LOAD_CHUNK (64u << 10)    /* bytes read at once when loading (a
                                     longer record: all of it) */

struct tg_journal {
  int fd;
  char *path;                     /* the file */
  const char *name;               /* its name, in path */
  char key[300];                  /* its meta key */
  off_t size;                     /* bytes appended (the owner's) */
};

/* ---- CRC-32 (the IEEE polynomial, as zlib's) ---------------------------- */

/* Eight bytes a step (slicing-by-8: eight tables, one per byte position):
 * every record's bytes are summed twice, when appended and when loaded,
 * and a byte at a time that was 4 % of a gateway call's instructions. */
static uint32_t crc_table[8][256];
static uv_once_t crc_once = UV_ONCE_INIT;

static void crc_init(void) {
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = i;
    for (int k = 0; k < 8; k++) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    crc_table[0][i] = c;
  }
  for (int t = 1; t < 8; t++)
    for (uint32_t i = 0; i < 256; i++) {
      uint32_t c = crc_table[t - 1][i];
      crc_table[t][i] = (c >> 8) ^ crc_table[0][c & 0xFF];
    }
}

static uint32_t crc32_of(const unsigned char *p, size_t n) {
  uv_once(&crc_once, crc_init);
  uint32_t c = 0xFFFFFFFFu;
  for (; n >= 8; p += 8, n -= 8) {
    uint32_t a = c ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 |
                      (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
    uint32_t b = (uint32_t)p[4] | (uint32_t)p[5] << 8 |
                 (uint32_t)p[6] << 16 | (uint32_t)p[7] << 24;
    c = crc_table[7][a & 0xFF] ^ crc_table[6][(a >> 8) & 0xFF] ^
        crc_table[5][(a >> 16) & 0xFF] ^ crc_table[4][a >> 24] ^
        crc_table[3][b & 0xFF] ^ crc_table[2][(b >> 8) & 0xFF] ^
        crc_table[1][(b >> 16) & 0xFF] ^ crc_table[0][b >> 24];
  }
  while (n--) c = crc_table[0][(c ^ *p++) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

static void put_le32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t get_le32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
         (uint32_t)p[3] << 24;
}

int tg__journal_add(tg_jbuf *b, const tg_audit_rec *r,
                    const tg_audit_caps *caps) {
  static const unsigned char none[FRAME];
  size_t at = b->len;
  tg__jbuf_put(b, none, FRAME); /* the frame, filled once the values are in */
  if (tg__audit_encode(b, r, caps) < 0) return -1;
  size_t n = b->len - at - FRAME;
  if (n > RECORD_MAX) {
    b->len = at;
    return -1;
  }
  put_le32(b->p + at, (uint32_t)n);
  put_le32(b->p + at + 4, crc32_of(b->p + at + FRAME, n));
  return 0;
}

/* ---- the owner's file ------------------------------------------------- */

static int name_prefix(const char *db_path, char *dir, size_t dlen,
                       char *prefix, size_t plen) {
  const char *slash = strrchr(db_path, '/');
  const char *base = slash ? slash + 1 : db_path;
  int d = slash ? snprintf(dir, dlen, "%.*s", (int)(slash - db_path),
                           db_path)
                : snprintf(dir, dlen, ".");
  if (slash && slash == db_path) d = snprintf(dir, dlen, "/");
  int p = snprintf(prefix, plen, "%s.calls.", base);
  return d < 0 || (size_t)d >= dlen || p < 0 || (size_t)p >= plen ? -1 : 0;
}

static int set_mark(sqlite3 *db, const char *key, int64_t off) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO meta VALUES (?1, ?2)",
                              -1, &st, NULL);
  if (rc == SQLITE_OK) {
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, off);
    rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(db);
  }
  sqlite3_finalize(st);
  return rc;
}

static int drop_mark(sqlite3 *db, const char *key) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db, "DELETE FROM meta WHERE key = ?1", -1, &st,
                              NULL);
  if (rc == SQLITE_OK) {
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(db);
  }
  sqlite3_finalize(st);
  return rc;
}

/* The watermark, or -1 when the journal has no key (nothing to load). */
static int64_t get_mark(sqlite3 *db, const char *key) {
  sqlite3_stmt *st = NULL;
  int64_t v = -1;
  if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = ?1", -1, &st,
                         NULL) == SQLITE_OK) {
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_int64(st, 0);
  }
  sqlite3_finalize(st);
  return v;
}

/* Made under a name no one loads (`.new`), locked, its watermark made,
 * then linked to its name: a journal under its name always has its owner's lock
 * or is dead, and had its key before its first record. */
tg_journal *tg__journal_open(sqlite3 *db, const char *db_path,
                             char err[TG_ERRMSG]) {
  tg_journal *j = calloc(1, sizeof *j);
  char *tmp = NULL, e[TG_ERRMSG] = "";
  size_t n = strlen(db_path) + 64;
  if (!j || !(j->path = malloc(n)) || !(tmp = malloc(n + 4))) goto fail;
  j->fd = -1;
  /* two runtimes of one process may start in one millisecond: the next */
  uint64_t ms = (uint64_t)tg__wall_ms();
  for (int i = 0; i < 64 && j->fd < 0; i++) {
    snprintf(j->path, n, "%s.calls.%ld.%" PRIu64, db_path, (long)getpid(),
             ms + (uint64_t)i);
    snprintf(tmp, n + 4, "%s.new", j->path);
    struct stat taken;
    if (lstat(j->path, &taken) == 0) continue;
    j->fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_APPEND |
                          O_CLOEXEC, 0600);
    if (j->fd < 0 && errno != EEXIST) break;
  }
  if (j->fd < 0) goto fail;
  j->name = strrchr(j->path, '/') ? strrchr(j->path, '/') + 1 : j->path;
  snprintf(j->key, sizeof j->key, "journal:%s", j->name);
  if (flock(j->fd, LOCK_EX | LOCK_NB) < 0) goto fail;
  if (tg__db_exec(db, "BEGIN IMMEDIATE", e, sizeof e) < 0) goto fail;
  if (set_mark(db, j->key, 0) != SQLITE_OK ||
      tg__db_exec(db, "COMMIT", e, sizeof e) < 0) {
    snprintf(e, sizeof e, "%s", sqlite3_errmsg(db));
    tg__db_exec(db, "ROLLBACK", NULL, 0);
    goto fail;
  }
  /* link, not rename: never over another's (the key stays: harmless) */
  if (link(tmp, j->path) < 0) goto fail;
  unlink(tmp);
  free(tmp);
  return j;
fail:
  tg__errf(err, TG_ERRMSG, "database %s: cannot make its audit journal: %s",
           db_path, *e ? e : strerror(errno ? errno : ENOMEM));
  if (j && j->fd >= 0) {
    unlink(tmp);
    close(j->fd);
  }
  free(tmp);
  if (j) free(j->path);
  free(j);
  return NULL;
}

int tg__journal_append(tg_journal *j, const tg_jbuf *b) {
  if (b->oom) return -ENOMEM;
  ssize_t w = write(j->fd, b->p, b->len);
  if (w == (ssize_t)b->len) {
    j->size += (off_t)w;
    return 0;
  }
  int e = w < 0 ? errno : ENOSPC;
  if (w > 0 && ftruncate(j->fd, j->size) < 0) return -EIO; /* torn: stays */
  return -e;
}


/* ---- loading ---------------------------------------------------------- */

/* The bytes from off on, at least need of them, in b->p[b->at, b->have)
 * (the file's off at b->at): what is held is kept, the rest read in
 * chunks of up to LOAD_CHUNK (no more than left, the bytes the file has
 * from off). 0; -1: the file holds fewer (torn, or not yet written);
 * -ENOMEM. */
typedef struct {
  unsigned char *p;
  size_t cap, at, have;
} load_buf;

static int load_fill(int fd, load_buf *b, int64_t off, size_t need,
                     int64_t left) {
  size_t held = b->have - b->at;
  if (held >= need) return 0;
  if ((int64_t)need > left) return -1;
  size_t want = left < (int64_t)LOAD_CHUNK ? (size_t)left : LOAD_CHUNK;
  if (want < need) want = need;
  if (b->at) memmove(b->p, b->p + b->at, held);
  b->at = 0;
  b->have = held;
  if (want > b->cap) {
    unsigned char *q = realloc(b->p, want);
    if (!q) return -ENOMEM;
    b->p = q;
    b->cap = want;
  }
  while (b->have < need) {
    ssize_t r = pread(fd, b->p + b->have, want - b->have,
                      off + (int64_t)b->have);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return -1;
    b->have += (size_t)r;
  }
  return 0;
}

/* Loads fd's records past the watermark key (inside the caller's
 * transaction), read many at a time (one pread for LOAD_CHUNK bytes, not
 * two a record). dead: the writer is gone; a bad record is torn, dropped
 * with what follows. Returns the records loaded, or -1 with err. */
static int64_t load_fd(sqlite3 *db, sqlite3_stmt *insert, int fd,
                       const char *path, const char *key, int dead,
                       int *refused, char *err, size_t errlen) {
  int64_t off = get_mark(db, key), loaded = 0;
  if (off < 0) return 0;
  struct stat s;
  if (fstat(fd, &s) < 0 || s.st_nlink == 0) return 0;
  load_buf b = {0};
  int64_t start = off;
  while (off < (int64_t)s.st_size) {
    int64_t left = (int64_t)s.st_size - off;
    int got = load_fill(fd, &b, off, FRAME, left);
    if (got == -ENOMEM) goto oom;
    if (got < 0) goto torn;
    const unsigned char *head = b.p + b.at;
    uint32_t n = get_le32(head);
    if (n > RECORD_MAX || (int64_t)n > left - FRAME) goto torn;
    if ((got = load_fill(fd, &b, off, FRAME + (size_t)n, left)) == -ENOMEM)
      goto oom;
    if (got < 0) goto torn;
    head = b.p + b.at;
    const unsigned char *rec = head + FRAME;
    if (crc32_of(rec, n) != get_le32(head + 4)) goto torn;
    int rc = tg__audit_insert_encoded(insert, rec, n);
    if (rc == SQLITE_FORMAT) goto torn; /* not a record: audit.c */
    int primary = rc & 0xFF; /* extended codes may be on */
    if (primary == SQLITE_CONSTRAINT || primary == SQLITE_TOOBIG ||
        primary == SQLITE_MISMATCH || primary == SQLITE_RANGE) {
      /* the database refuses this record, and will again: it alone is
       * dropped (said), not every record after it held back */
      snprintf(err, errlen, "the audit record at byte %" PRId64 " of %s "
               "cannot be stored: %s", off, path, sqlite3_errmsg(db));
      fprintf(stderr, "toolgate: %s\n", err);
      if (refused) (*refused)++;
      rc = SQLITE_OK;
      loaded--;
    }
    if (rc != SQLITE_OK) {
      snprintf(err, errlen, "loading the audit journal %s: %s", path,
               sqlite3_errmsg(db));
      free(b.p);
      return -1;
    }
    off += FRAME + n;
    b.at += FRAME + n;
    loaded++;
  }
  goto done;
oom:
  snprintf(err, errlen, "out of memory");
  free(b.p);
  return -1;
torn:
  if (dead) {
    fprintf(stderr, "toolgate: audit journal %s: dropped a torn record at "
            "byte %" PRId64 " (%" PRId64 " bytes: a crash mid-write)\n",
            path, off, (int64_t)s.st_size - off);
    off = (int64_t)s.st_size;
  }
done:
  free(b.p);
  if (off != start && set_mark(db, key, off) != SQLITE_OK) {
    snprintf(err, errlen, "loading the audit journal %s: %s", path,
             sqlite3_errmsg(db));
    return -1;
  }
  return loaded;
}

/* Is name one of db's journals (prefix, then pid.ms in digits)? */
static int is_journal(const char *name, const char *prefix) {
  size_t n = strlen(prefix);
  if (strncmp(name, prefix, n)) return 0;
  const char *p = name + n;
  int dots = 0, digits = 0;
  for (; *p; p++) {
    if (*p == '.' && digits) dots++, digits = 0;
    else if (*p >= '0' && *p <= '9') digits++;
    else return 0;
  }
  return dots == 1 && digits;
}

/* A journal's name before its key was made (`.new`)? */
static int is_unborn(const char *name, const char *prefix) {
  size_t n = strlen(name);
  char base[256];
  if (n < 5 || n >= sizeof base || strcmp(name + n - 4, ".new")) return 0;
  memcpy(base, name, n - 4);
  base[n - 4] = '\0';
  return is_journal(base, prefix);
}

/* One a dead process left there (no record in it, its key maybe): gone. */
static void drop_unborn(const char *path) {
  struct stat s;
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return;
  if (fstat(fd, &s) == 0 && S_ISREG(s.st_mode) && s.st_uid == geteuid() &&
      flock(fd, LOCK_EX | LOCK_NB) == 0)
    unlink(path);
  close(fd);
}

/* One journal found beside the database: its records past the watermark
 * loaded, in a transaction of their own; a dead one's (its lock free)
 * all of them, its torn tail dropped, then its watermark and file. */
static int64_t catch_up_one(sqlite3 *db, sqlite3_stmt *insert,
                            const char *path, const char *name,
                            int dead_only, char *err, size_t errlen) {
  char key[300];
  struct stat s;
  snprintf(key, sizeof key, "journal:%s", name);
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return 0; /* gone meanwhile: its owner loaded it */
  /* the database's own rules: a regular file of ours, no one else's
   * records (the folder is ours, but a file there may not be) */
  if (fstat(fd, &s) < 0 || !S_ISREG(s.st_mode) || s.st_uid != geteuid() ||
      (s.st_mode & 077)) {
    fprintf(stderr, "toolgate: audit journal %s: not a private file of "
            "ours: left alone\n", path);
    close(fd);
    return 0;
  }
  int dead = flock(fd, LOCK_EX | LOCK_NB) == 0;
  if (!dead && dead_only) {
    close(fd);
    return 0;
  }
  int64_t mark = get_mark(db, key);
  if (!dead && (mark < 0 || mark >= (int64_t)s.st_size)) {
    close(fd); /* its owner's, with nothing new */
    return 0;
  }
  char e[TG_ERRMSG];
  int64_t n = 0;
  if (tg__db_exec(db, "BEGIN IMMEDIATE", e, sizeof e) < 0) {
    snprintf(err, errlen, "%s", e);
    close(fd);
    return -1;
  }
  n = load_fd(db, insert, fd, path, key, dead, NULL, err, errlen);
  if (n >= 0 && dead && drop_mark(db, key) != SQLITE_OK) {
    snprintf(err, errlen, "%s", sqlite3_errmsg(db));
    n = -1;
  }
  if (n >= 0 && tg__db_exec(db, "COMMIT", e, sizeof e) < 0) {
    snprintf(err, errlen, "%s", e);
    n = -1;
  }
  if (n < 0) tg__db_exec(db, "ROLLBACK", NULL, 0);
  /* still linked (fstat after the lock): not one a cleaner just took */
  else if (dead && fstat(fd, &s) == 0 && s.st_nlink > 0) unlink(path);
  close(fd);
  return n;
}

int64_t tg__journals_catch_up(sqlite3 *db, sqlite3_stmt *insert,
                              const char *db_path, int dead_only, char *err,
                              size_t errlen) {
  char dir[4096], prefix[512];
  if (name_prefix(db_path, dir, sizeof dir, prefix, sizeof prefix) < 0)
    return 0;
  DIR *d = opendir(dir);
  if (!d) return 0;
  sqlite3_stmt *own = NULL;
  if (!insert && tg__audit_prepare(db, &own) != SQLITE_OK) {
    snprintf(err, errlen, "%s", sqlite3_errmsg(db));
    closedir(d);
    return -1;
  }
  int64_t total = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    char path[4096 + 256];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    if (is_unborn(e->d_name, prefix)) {
      drop_unborn(path);
      continue;
    }
    if (!is_journal(e->d_name, prefix)) continue;
    int64_t n = catch_up_one(db, insert ? insert : own, path, e->d_name,
                             dead_only, err, errlen);
    if (n < 0) {
      total = -1;
      break;
    }
    total += n;
  }
  closedir(d);
  sqlite3_finalize(own);
  return total;
}

int64_t tg__journal_load_own(sqlite3 *db, sqlite3_stmt *insert,
                             tg_journal *j, int *refused, char *err,
                             size_t errlen) {
  return load_fd(db, insert, j->fd, j->path, j->key, 0, refused, err,
                 errlen);
}


void tg__journal_close(sqlite3 *db, sqlite3_stmt *insert, tg_journal *j) {
  if (!j) return;
  char err[TG_ERRMSG];
  /* all of it loaded, its watermark gone, in one transaction: then the
   * file is no one's to load; when that fails it stays for the next
   * process to load (a dead process's journal) */
  int ok = tg__db_exec(db, "BEGIN IMMEDIATE", err, sizeof err) == 0;
  if (ok && (load_fd(db, insert, j->fd, j->path, j->key, 0, NULL, err,
                     sizeof err) < 0 ||
             drop_mark(db, j->key) != SQLITE_OK ||
             tg__db_exec(db, "COMMIT", err, sizeof err) < 0)) {
    tg__db_exec(db, "ROLLBACK", NULL, 0);
    ok = 0;
  }
  if (ok) unlink(j->path);
  close(j->fd); /* the lock with it */
  free(j->path);
  free(j);
}
