/*
 * sqlite_store.h — the SQLite backend of the store (store/store.h): one
 * database file holding the audit trail, remembered approvals, the usage
 * ledger, sessions, messages and memories (schema.c's steps). The only
 * part of toolgate that includes <sqlite3.h>.
 *
 * Two ways in:
 *   - a runtime's store (opened with a core): a writer thread owns one
 *     connection and commits what the loop queues — audit records, usage
 *     records, approvals — in batches, one transaction each, and hands each
 *     item back to the loop (uv_async) once it is committed; the loop keeps
 *     a second connection for the few reads it makes itself (an approval
 *     lookup when a call asks: an indexed read, docs/storage.md);
 *   - a store opened on its own: one connection, every query on the
 *     caller's thread (the CLI's log and approvals).
 * The loop commits audit records itself only while the thread is idle,
 * never waiting for a lock or a sync (writer.c); everything else is
 * written by the thread.
 *
 * Ownership: the store owns its connections, statements, thread and queue;
 * queued audit records belong to their calls (sink.h) and come back
 * through their committed callback; jobs (usage, approvals) are the
 * store's own and freed once answered.
 */
#ifndef TG_SQLITE_STORE_H
#define TG_SQLITE_STORE_H

#include <sqlite3.h>
#include <cjson/cJSON.h>
#include "toolgate.h"
#include "core/core.h"
#include "core/sink.h"
#include "store/store.h"

typedef struct tg_writer tg_writer;
typedef struct tg_snap tg_snap;

/* A store of this backend: the common part first (store.h). */
typedef struct tg_sqlite {
  tg_store base;
  sqlite3 *db;               /* the caller's connection (the host's, for a
                                runtime): reads; writes when w is NULL */
  tg_snap *snap;             /* a runtime's approvals in force, for the
                                loop's lookups (approvals.c) */
  tg_writer *w;              /* a runtime's writer thread, or NULL */
} tg_sqlite;

static inline tg_sqlite *tg__sq(tg_store *st) { return (tg_sqlite *)st; }

#define TG_DB_BUSY_MS 5000   /* busy_timeout: how long a lock is waited for */

/* Binds s (borrowed until the statement is reset), or NULL for NULL. */
static inline void tg__bind_str(sqlite3_stmt *st, int i, const char *s) {
  if (s) sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
  else sqlite3_bind_null(st, i);
}

/* ---- db.c: opening a connection -------------------------------------- */

/* The path to use: path, or the default (its folder made 0700). */
char *tg__db_resolve(const char *path, int create, char err[TG_ERRMSG]);
/* Opens path (creating it when create) with the pragmas every connection
 * takes (busy timeout, synchronous=NORMAL; WAL for files) and checks it
 * can be used: writable, a database, not someone else's, not newer than
 * us; brings the schema up to date. shared: one connection two threads use
 * (":memory:"). NULL with "database PATH: what is wrong" in err. */
sqlite3 *tg__db_open(const char *path, int create, int shared,
                     char err[TG_ERRMSG]);
/* Opens path, which must exist, for reading only: nothing is created,
 * switched, upgraded or written (query_only), for a reader beside the
 * runtimes that write it (explain --event reads a session's taint). A
 * database of an older schema is refused (the next toolgate that writes
 * it upgrades it), as are a newer one and someone else's. NULL with
 * "database PATH: what is wrong" in err. */
sqlite3 *tg__db_open_read(const char *path, char err[TG_ERRMSG]);
int tg__db_is_memory(const char *path);
/* db_private.c: path is a private file of ours (made 0600 when missing
 * and create), in a folder nobody else can swap it in, with the -wal and
 * -shm beside it ours too; refused otherwise. 0, or -1 with err. */
int tg__db_private(const char *path, int create, char err[TG_ERRMSG]);
/* "database PATH: " + what SQLite says of the last failure on db. */
void tg__db_error(sqlite3 *db, const char *path, const char *doing,
                  char err[TG_ERRMSG]);
/* Runs sql (no results). SQLite's result code; err filled on failure. */
int tg__db_exec(sqlite3 *db, const char *sql, char *err, size_t errlen);

/* ---- schema.c --------------------------------------------------------- */

/* Brings db's schema to version target (<= TG_DB_SCHEMA_VERSION) through
 * the ensure steps; refuses a newer one, or a database of something else.
 * 0, or -1 with err. */
int tg__schema_ensure(sqlite3 *db, const char *path, int target,
                      char err[TG_ERRMSG]);
int tg__schema_version(sqlite3 *db);
/* For a database only read: 0 when its schema is this toolgate's version;
 * -1 with err for an older one (never upgraded here), a newer one, or
 * another program's. */
int tg__schema_current(sqlite3 *db, const char *path, char err[TG_ERRMSG]);

/* ---- audit.c ---------------------------------------------------------- */

/* Prepares the insert on db (the writer's), binds and runs one record. */
int tg__audit_prepare(sqlite3 *db, sqlite3_stmt **st);
int tg__audit_insert(sqlite3_stmt *st, const tg_audit_rec *r,
                     const tg_audit_caps *caps);
/* A growing buffer of bytes; oom once a growth failed. */
typedef struct {
  unsigned char *p;
  size_t len, cap;
  int oom;
} tg_jbuf;
#define TG_AUDIT_COLUMNS 36
void tg__jbuf_put(tg_jbuf *b, const void *p, size_t n);
/* A record's column values appended to b (printed, cut to caps): what the
 * journal keeps. 0, or -1 out of memory. */
int tg__audit_encode(tg_jbuf *b, const tg_audit_rec *r,
                     const tg_audit_caps *caps);
/* Runs the insert with an encoded record's values (checked: SQLITE_FORMAT
 * when they are not a record's). */
int tg__audit_insert_encoded(sqlite3_stmt *st, const unsigned char *p,
                             size_t n);
cJSON *tg__audit_query(sqlite3 *db, const tg_audit_filter *f,
                       char err[TG_ERRMSG]);
/* INSERT INTO calls (...), ?1..?29 in audit.c's order (audit.c). */
extern const char tg__audit_insert_sql[];

/* ---- approvals.c ------------------------------------------------------ */

int64_t tg__approval_insert(sqlite3 *db, const tg_approval *a, const char *by,
                            int64_t now_ms, char *err, size_t errlen);
int tg__approval_revoke(sqlite3 *db, int64_t id, int64_t now_ms, char *err,
                        size_t errlen);
cJSON *tg__approvals_query(sqlite3 *db, int all, int64_t now_ms,
                           char err[TG_ERRMSG]);
/* The approvals in force at now_ms, read from db; NULL on failure. */
tg_snap *tg__snap_load(sqlite3 *db, int64_t now_ms);
int tg__snap_find(const tg_snap *s, tg_approval_query *q, int64_t *id);
void tg__snap_free(tg_snap *s);
/* The counter the triggers bump on any change to approvals; -1 on error. */
int64_t tg__approvals_version(sqlite3 *db);

/* ---- approval_seal.c: the key approvals of exact args are digested under */

/* The database's approval key into key; -ENOENT when it has none. */
int tg__seal_key_load(sqlite3 *db, uint8_t key[TG_SHA256_SIZE]);
/* Schema version 5's code: makes the key, seals the rows stored before. */
int tg__seal_upgrade(sqlite3 *db, char *err, size_t errlen);

/* ---- usage.c ---------------------------------------------------------- */

int tg__usage_insert(sqlite3 *db, const tg_usage *u, char *err, size_t errlen);
/* f's period is already since_ms (store/store.c). */
int tg__usage_sum(sqlite3 *db, const tg_usage_filter *f, tg_usage_total *out,
                  char err[TG_ERRMSG]);

/* ---- journal.c: the audit journal, loaded behind a watermark ---------- */

typedef struct tg_journal tg_journal;
/* A record framed (length, CRC) onto b. 0, or -1 (out of memory). */
int tg__journal_add(tg_jbuf *b, const tg_audit_rec *r,
                    const tg_audit_caps *caps);
/* This process's journal beside db_path, its watermark made on db. */
tg_journal *tg__journal_open(sqlite3 *db, const char *db_path,
                             char err[TG_ERRMSG]);
/* b's records in one write(): 0, or a negative errno (nothing written). */
int tg__journal_append(tg_journal *j, const tg_jbuf *b);
/* The journal's records past its watermark into calls, inside the
 * caller's transaction: how many, or -1 with err. A record the database
 * refuses for good (a constraint) is skipped, counted in *refused, why in
 * err. */
int64_t tg__journal_load_own(sqlite3 *db, sqlite3_stmt *insert,
                             tg_journal *j, int *refused, char *err,
                             size_t errlen);
/* Every journal beside db_path (other processes', other stores', dead
 * ones'; dead_only: those alone) loaded past its watermark, each in a
 * transaction of its own (not inside one): the records loaded, or -1
 * with err. insert NULL: one is prepared. */
int64_t tg__journals_catch_up(sqlite3 *db, sqlite3_stmt *insert,
                              const char *db_path, int dead_only, char *err,
                              size_t errlen);
/* Loads what is left, drops the watermark and the file (kept for the next
 * process when that fails), closes. */
void tg__journal_close(sqlite3 *db, sqlite3_stmt *insert, tg_journal *j);

/* ---- writer.c: a runtime's writer thread ------------------------------ */

typedef enum {
  TG_JOB_USAGE,
  TG_JOB_GRANT,
  TG_JOB_REVOKE,
  TG_JOB_SYNC,               /* nothing: a batch to wait for (flush) */
  TG_JOB_CALL                /* fn(db, fn_arg): sessions, messages, imports */
} tg_job_kind;

/* A TG_JOB_CALL's work, on the writer's connection inside its batch's
 * transaction (or on a store's own connection, in none: fn makes a
 * SAVEPOINT when it writes more than one statement). The id (> 0) it
 * made, 0, or a negative code with err. */
typedef int64_t (*tg_job_fn)(sqlite3 *db, void *arg, char *err, size_t errlen);

typedef struct tg_job {
  tg_job_kind kind;
  struct tg_job *next;
  int sync;                  /* a caller waits for it (tg__writer_wait) */
  int finished;              /* sync: written (or failed) */
  int rc;                    /* 0, or a negative code with err */
  int64_t id;                /* GRANT: the new row; REVOKE: the row */
  int64_t now_ms;
  char err[TG_ERRMSG];
  /* USAGE */
  tg_usage usage;            /* strings owned by the job */
  /* GRANT: an approval with owned strings */
  tg_approval approval;
  char *by;
  void (*stored)(void *arg, int64_t id); /* on the loop; may be NULL */
  void *arg;
  /* CALL: run on the writer; fn_arg stays the caller's (sync only) */
  tg_job_fn fn;
  void *fn_arg;
} tg_job;

/* Starts the writer on db (its own, or st->db for ":memory:"), which it
 * owns from here, failure included. NULL with err. */
tg_writer *tg__writer_start(tg_sqlite *st, sqlite3 *db,
                            const tg_audit_caps *caps, char err[TG_ERRMSG]);
void tg__writer_audit(tg_writer *w, tg_audit_rec *rec);
/* Queues job (taken). Not sync: freed once answered on the loop. */
void tg__writer_job(tg_writer *w, tg_job *job);
/* Blocks until job (sync) is written, and takes the approvals as they
 * are then; the caller frees the job. On the loop thread. */
void tg__writer_wait(tg_writer *w, tg_job *job);
/* Blocks until everything queued so far is written and the approvals
 * are up to date (a host reads its own writes, and others'). -ENOMEM. */
int tg__writer_flush(tg_writer *w);
/* Runs the loop until every queued item has been answered on it. */
void tg__writer_drain(tg_writer *w);
/* Stops the thread (after the queue is written) and frees the writer;
 * its connection is closed unless it is the store's own (shared). */
void tg__writer_stop(tg_writer *w);
void tg__job_free(tg_job *job);

/* ---- checkpointer.c: the writer's checkpoints, on a thread of their own */

typedef struct tg_checkpointer tg_checkpointer;
/* A thread and a connection to path (a file) for checkpoints. NULL when
 * they cannot be had: the caller checkpoints itself. */
tg_checkpointer *tg__checkpointer_start(const char *path);
/* Asks for a PASSIVE checkpoint; returns at once. */
void tg__checkpointer_ask(tg_checkpointer *c);
/* Waits for a checkpoint under way, stops the thread, frees c (NULL ok). */
void tg__checkpointer_stop(tg_checkpointer *c);

/* ---- backend.c: open, close, where writes go --------------------------- */

/* Runs fn now, where writes go: on a runtime's writer (waiting for it),
 * or on the store's own connection. fn's result; err filled on failure. */
int64_t tg__sq_write(tg_sqlite *st, tg_job_fn fn, void *arg,
                     char err[TG_ERRMSG]);
/* Waits until what a runtime queued is written (reads see it). */
int tg__sq_flushed(tg_sqlite *st, char err[TG_ERRMSG]);

/* ---- calls_index.c: the calls' full-text index, behind the audit ------- */

/* Indexes the first limit calls past the watermark (-1: all); how many,
 * or -1 with err. */
int64_t tg__calls_index_some(sqlite3 *db, int limit, char *err,
                             size_t errlen);
/* Indexes every call past the watermark (a tg_job_fn: arg unused). */
int64_t tg__calls_index(sqlite3 *db, void *arg, char *err, size_t errlen);
/* Through the writer: every call queued so far written and indexed. */
int tg__calls_indexed(tg_sqlite *st, char err[TG_ERRMSG]);

/* ---- sessions.c: sessions, messages, search --------------------------- */

/* A SAVEPOINT around several writes: begin, then end(ok). */
int tg__savepoint(sqlite3 *db, char *err, size_t errlen);
int tg__savepoint_end(sqlite3 *db, int ok);

int tg__sq_session_put(tg_store *st, const tg_session_row *s,
                       char err[TG_ERRMSG]);
int tg__sq_session_end(tg_store *st, const char *id, int64_t ended_ms,
                       char err[TG_ERRMSG]);
int64_t tg__sq_message_add(tg_store *st, const tg_message *m,
                           const char *tool_calls, char err[TG_ERRMSG]);
cJSON *tg__sq_session_read(tg_store *st, const char *id, int *missing,
                           char err[TG_ERRMSG]);
cJSON *tg__sq_sessions_read(tg_store *st, size_t limit, char err[TG_ERRMSG]);
int tg__sq_search(tg_store *st, const tg_search_filter *f, cJSON **out,
                  char err[TG_ERRMSG]);

/* ---- import.c: a checked export stored ---------------------------------- */

int tg__sq_session_import(tg_store *st, const cJSON *doc,
                          const tg_import_session *s, tg_import_report *rep,
                          char err[TG_ERRMSG]);

/* ---- agent_sessions.c ------------------------------------------------- */

int64_t tg__sq_agent_session(tg_store *st, const char *id, const char *agent,
                             const char *project, tg_agent_op op,
                             char err[TG_ERRMSG]);
int tg__sq_agent_read(tg_store *st, const char *id, int64_t *turn,
                      char **mark, char err[TG_ERRMSG]);
int tg__sq_agent_stop(tg_store *st, const char *id, const char *agent,
                      const char *project, const char *old_mark,
                      const char *new_mark, const tg_usage *u, size_t n,
                      char err[TG_ERRMSG]);

/* ---- taint.c ------------------------------------------------------------ */

int tg__sq_taint_raise(tg_store *st, const char *id, const tg_taint *t,
                       char err[TG_ERRMSG]);
int tg__sq_taint_read(tg_store *st, const char *id, tg_taint *out,
                      char err[TG_ERRMSG]);
int tg__sq_taint_clear(tg_store *st, const char *id, char err[TG_ERRMSG]);

/* ---- memory.c ----------------------------------------------------------- */

int64_t tg__sq_memory_add(tg_store *st, const tg_memory *m,
                          const char *project, const char *metadata,
                          char err[TG_ERRMSG]);
cJSON *tg__sq_memory_recall(tg_store *st, const tg_recall_filter *f,
                            const char *project, char err[TG_ERRMSG]);

#endif
