/*
 * store.h — the database (SPEC §5): one SQLite file holding the audit
 * trail, remembered approvals and the usage ledger (phase 2 adds sessions,
 * messages and memories as new schema steps, schema.c).
 *
 * Two ways in:
 *   - a runtime's store (tg__store_start): a writer thread owns one
 *     connection and commits what the loop queues — audit records, usage
 *     records, approvals — in batches, one transaction each, and hands each
 *     item back to the loop (uv_async) once it is committed; the loop keeps
 *     a second connection for the few reads it makes itself (an approval
 *     lookup when a call asks: an indexed read, README "Storage");
 *   - a store opened on its own (tg_store_open): one connection, every
 *     query on the caller's thread (the CLI's log and approvals).
 * SQLite never runs on the loop thread for a write, and the chain never
 * sees this header: it reaches the store through core/sink.h, which the
 * runtime fills in.
 *
 * Ownership: the store owns its connections, statements, thread and queue;
 * queued audit records belong to their calls (sink.h) and come back
 * through their committed callback; jobs (usage, approvals) are the
 * store's own and freed once answered.
 */
#ifndef TG_STORE_H
#define TG_STORE_H

#include <sqlite3.h>
#include <cjson/cJSON.h>
#include "toolgate.h"
#include "store/store_api.h"
#include "core/core.h"
#include "core/sink.h"

typedef struct tg_writer tg_writer;
typedef struct tg_snap tg_snap;

struct tg_store {
  char *path;                /* as given, or the default; ":memory:" */
  sqlite3 *db;               /* the caller's connection (the host's, for a
                                runtime): reads; writes when w is NULL */
  tg_snap *snap;             /* a runtime's approvals in force, for the
                                loop's lookups (approvals.c) */
  tg_writer *w;              /* a runtime's writer thread, or NULL */
  tg_core *core;             /* a runtime's, or NULL */
  /* the key approvals of exact args are digested under (approval_seal.c) */
  uint8_t seal_key[TG_SHA256_SIZE];
};

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

/* ---- audit.c ---------------------------------------------------------- */

typedef struct {
  size_t args_max, result_max;
} tg_audit_caps;

/* Prepares the insert on db (the writer's), binds and runs one record. */
int tg__audit_prepare(sqlite3 *db, sqlite3_stmt **st);
int tg__audit_insert(sqlite3_stmt *st, const tg_audit_rec *r,
                     const tg_audit_caps *caps);
cJSON *tg__audit_query(sqlite3 *db, const tg_audit_filter *f,
                       char err[TG_ERRMSG]);

/* ---- approvals.c ------------------------------------------------------ */

int64_t tg__approval_insert(sqlite3 *db, const tg_approval *a, const char *by,
                            int64_t now_ms, char *err, size_t errlen);
int tg__approval_revoke(sqlite3 *db, int64_t id, int64_t now_ms, char *err,
                        size_t errlen);
cJSON *tg__approvals_query(sqlite3 *db, int all, int64_t now_ms,
                           char err[TG_ERRMSG]);
/* The sink's lookup: in st->snap, no I/O. */
int tg__approval_find(tg_store *st, tg_approval_query *q, int64_t *id);
/* The approvals in force at now_ms, read from db; NULL on failure. */
tg_snap *tg__snap_load(sqlite3 *db, int64_t now_ms);
int tg__snap_find(const tg_snap *s, tg_approval_query *q, int64_t *id);
void tg__snap_free(tg_snap *s);
/* The counter the triggers bump on any change to approvals; -1 on error. */
int64_t tg__approvals_version(sqlite3 *db);

/* ---- approval_seal.c: approvals of exact args, digested ---------------- */

/* The database's approval key into key; -ENOENT when it has none. */
int tg__seal_key_load(sqlite3 *db, uint8_t key[TG_SHA256_SIZE]);
/* What is stored of args_key (canonical args): its digest under key and
 * its text through the redactors r (NULL: the built-in masks), both
 * malloc'd. -ENOMEM. */
int tg__seal_args(const uint8_t key[TG_SHA256_SIZE], tg_redactor *r,
                  const char *args_key, char **digest, char **preview);
/* Schema version 5's code: makes the key, seals the rows stored before. */
int tg__seal_upgrade(sqlite3 *db, char *err, size_t errlen);

/* ---- usage.c ---------------------------------------------------------- */

int tg__usage_insert(sqlite3 *db, const tg_usage *u, char *err, size_t errlen);
int tg__usage_sum(sqlite3 *db, const tg_usage_filter *f, int64_t now_ms,
                  tg_usage_total *out, char err[TG_ERRMSG]);
/* Checks a record before it is queued. */
int tg__usage_check(const tg_usage *u, char err[TG_ERRMSG]);

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
tg_writer *tg__writer_start(tg_store *st, sqlite3 *db,
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

/* ---- store.c: a runtime's store --------------------------------------- */

/* Opens core->cfg.db (NULL: the default) for a runtime and starts its
 * writer. NULL with err naming the file and the problem. */
tg_store *tg__store_start(tg_core *core, char err[TG_ERRMSG]);
/* The sink the chain reaches the store through. */
void tg__store_sink(tg_store *st, tg_sink *out);
/* Runs the loop until every record queued is committed and answered. */
void tg__store_drain(tg_store *st);
/* Stops the writer and closes everything (call tg__store_drain first). */
void tg__store_free(tg_store *st);
/* Queues a usage record. */
int tg__store_record_usage(tg_store *st, const tg_usage *u,
                           char err[TG_ERRMSG]);

/* Runs fn now, where writes go: on a runtime's writer (waiting for it),
 * or on the store's own connection. fn's result; err filled on failure. */
int64_t tg__store_write(tg_store *st, tg_job_fn fn, void *arg,
                        char err[TG_ERRMSG]);
/* Waits until what a runtime queued is written (reads see it). */
int tg__store_flushed(tg_store *st, char err[TG_ERRMSG]);

/* ---- sessions.c: sessions, messages, search ------------------------- */

/* A SAVEPOINT around several writes: begin, then end(ok). */
int tg__savepoint(sqlite3 *db, char *err, size_t errlen);
int tg__savepoint_end(sqlite3 *db, int ok);
/* Is id a session id (1 to TG_SESSION_ID_MAX - 1 bytes, no control
 * character)? 0, or -EINVAL with what is wrong. */
int tg__session_id_check(const char *id, char err[TG_ERRMSG]);
/* A fresh session id: "s-" and 16 random hex digits. */
void tg__session_fresh_id(char id[TG_SESSION_ID_MAX]);

/* ---- agent_sessions.c: what an agent's hooks keep of a session ---------- */

typedef enum {
  TG_AGENT_NOTE,             /* the session made if new, nothing else */
  TG_AGENT_START,            /* SessionStart: (re)opened */
  TG_AGENT_END,              /* SessionEnd: ended now */
  TG_AGENT_TURN              /* a prompt: one more turn, returned */
} tg_agent_op;

/* Applies op to session id (made if new, with agent and project): the new
 * turn for TURN, else 0; -EINVAL (a bad id), -EIO with err. */
int64_t tg__agent_session(tg_store *st, const char *id, const char *agent,
                          const char *project, tg_agent_op op,
                          char err[TG_ERRMSG]);
/* The session's turn (0: none yet) and transcript mark (malloc'd JSON
 * text; NULL: none); either pointer may be NULL. 0, -EINVAL, -EIO. */
int tg__agent_read(tg_store *st, const char *id, int64_t *turn, char **mark,
                   char err[TG_ERRMSG]);
/* A Stop: in one transaction, the mark set to new_mark if it is still
 * old_mark (NULL: none) and, if so, the n usage records written. 1 done,
 * 0 another process read further first (it counted that usage), or a
 * negative code with err (nothing written: the next Stop reads it again). */
int tg__agent_stop(tg_store *st, const char *id, const char *agent,
                   const char *project, const char *old_mark,
                   const char *new_mark, const tg_usage *u, size_t n,
                   char err[TG_ERRMSG]);

/* ---- export.c, render.c: a session as one document -------------------- */

/* {format, version, session, messages, calls} without the rows' ids. */
cJSON *tg__session_doc(tg_store *st, const char *id, char err[TG_ERRMSG]);
/* The document as Markdown / one HTML page (malloc'd; NULL: no memory). */
char *tg__render_markdown(const cJSON *doc);
char *tg__render_html(const cJSON *doc);

/* INSERT INTO calls (...), ?1..?29 in audit.c's order (audit.c). */
extern const char tg__audit_insert_sql[];

#endif
