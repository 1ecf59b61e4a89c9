/*
 * store.h — the storage interface: what the layers above ask of a
 * database — the audit trail, sessions with their messages and search,
 * remembered approvals, the usage ledger, memories, agent sessions — as
 * a table of functions a backend fills (tg_store_backend). The SQLite
 * backend (store/sqlite/) is the one built in; another (PostgreSQL) adds
 * a table and a line in store.c's list, and passes the conformance suite
 * (spec/c/test_store_conformance.c) unchanged.
 *
 * Who calls what: the public tg_store_* / tg_session_* / tg_message_* /
 * tg_memory_* functions (store.c, session_api.c, memory_api.c, export.c)
 * check their arguments, mask what leaves the runtime (core/redact.h),
 * seal approvals of exact args, then call the backend; the chain reaches
 * the store through core/sink.h (tg__store_sink fills it); the runtime
 * through tg__store_start / drain / free and the tg__agent_* functions.
 * No caller sees a backend's own types.
 *
 * The backend's side of the contract:
 *   - a store opened with a core is a runtime's: the loop thread never
 *     waits for a lock or a disk sync for audit_append, approval_add and usage_append — they
 *     queue and finish through their callback on the loop (rec->committed,
 *     stored) like a libuv request, never before they return; a write that
 *     fails is told to the callback (ok 0 / id 0) and in a store_error
 *     event (tg__emit), never lost in silence. approval_find runs on the
 *     loop and does no I/O (the backend keeps what is in force at hand).
 *     Every other function blocks its caller and first makes what the
 *     runtime queued visible (a host reads its own writes);
 *   - a store opened without a core is its caller's: every function runs
 *     on the calling thread;
 *   - arguments arrive checked and masked; strings are borrowed for the
 *     call (a backend copies what it queues); results are cJSON the
 *     caller frees, in the shapes toolgate.h documents;
 *   - errors: a negative errno code with err filled ("database PATH: ..."
 *     or what failed); -ENOENT where a row is missing (the caller words
 *     it), -EINVAL for a query the backend cannot parse.
 * Taint: a session's (core/taint.h) is kept by taint_raise / taint_read /
 * taint_clear, blocking like the agent session functions.
 */
#ifndef TG_STORE_H
#define TG_STORE_H

#include <stdint.h>
#include <cjson/cJSON.h>
#include "toolgate.h"
#include "store/store_api.h"
#include "core/core.h"
#include "core/sink.h"

typedef struct tg_store_backend tg_store_backend;

/* open's create for a store only read (tg_store_open_read). */
#define TG_STORE_OPEN_READ (-1)

/* What every store starts with; a backend's own struct embeds it first. */
struct tg_store {
  const tg_store_backend *be;
  char *path;                /* as resolved: shown in errors, tg_store_path */
  tg_core *core;             /* a runtime's, or NULL: the caller's thread */
  /* the key approvals of exact args are digested under: the backend
   * keeps it with the approvals and loads it here at open */
  uint8_t seal_key[TG_SHA256_SIZE];
};

/* How much of a call's args and result the audit keeps (bytes of text). */
typedef struct {
  size_t args_max, result_max;
} tg_audit_caps;

/* A session to make, or resume (its end cleared, title kept unless
 * given, project kept when it has one). */
typedef struct {
  const char *id, *project, *title;  /* project, title: NULL for none */
  int64_t started_ms;
} tg_session_row;

/* A session of an export, checked (export.c). */
typedef struct {
  const char *id, *project, *title, *agent;
  int64_t started, ended, turn;
  int ended_null;
} tg_import_session;

/* What an agent's hooks do to a session (agent_session). */
typedef enum {
  TG_AGENT_NOTE,             /* the session made if new, nothing else */
  TG_AGENT_START,            /* SessionStart: (re)opened */
  TG_AGENT_END,              /* SessionEnd: ended now */
  TG_AGENT_TURN              /* a prompt: one more turn, returned */
} tg_agent_op;

struct tg_store_backend {
  const char *name;          /* "sqlite" */
  /* Is path one of this backend's (a URL scheme, say)? NULL: the default,
   * which takes every path no other backend claims. */
  int (*claims)(const char *path);
  /* Opens path (create: made when missing), its schema brought up to
   * date. core: a runtime's store (queues, callbacks on core->loop; caps
   * then given), or NULL. create TG_STORE_OPEN_READ (core NULL): an
   * existing file, only read — nothing created, upgraded or written (an
   * older schema refused), its write functions failing, approval_find
   * answering from the approvals in force at open. NULL with err naming
   * the database. */
  tg_store *(*open)(const char *path, int create, tg_core *core,
                    const tg_audit_caps *caps, char err[TG_ERRMSG]);
  /* A runtime's: runs the loop until everything queued is answered. */
  void (*drain)(tg_store *st);
  /* Writes what is queued, stops, frees st (after drain, for a runtime). */
  void (*close)(tg_store *st);

  /* ---- audit ---- */
  /* Queues rec (a runtime's store); rec->committed runs on the loop once
   * it is written (ok 1) or could not be (ok 0). */
  void (*audit_append)(tg_store *st, tg_audit_rec *rec);
  /* Records as tg_store_audit says, oldest first. */
  cJSON *(*audit_read)(tg_store *st, const tg_audit_filter *f,
                       char err[TG_ERRMSG]);

  /* ---- approvals (args sealed: args_digest, args_preview; never
   *      args_key) ---- */
  /* On the loop, no I/O: is q covered by an approval in force? 1 with its
   * id, else 0. q->digest_key is set by the caller. A runtime's store and
   * one only read answer it; a caller's other store answers 0. */
  int (*approval_find)(tg_store *st, tg_approval_query *q, int64_t *id);
  /* Queues a (a runtime's store): 0, then stored(arg, id) on the loop
   * (id 0: not stored); -1 when it cannot be queued (no callback). */
  int (*approval_add)(tg_store *st, const tg_approval *a, const char *by,
                      void (*stored)(void *arg, int64_t id), void *arg);
  /* Stores a now: its id (> 0), or a negative code. */
  int64_t (*approval_grant)(tg_store *st, const tg_approval *a,
                            const char *by, char err[TG_ERRMSG]);
  /* Revokes approval id now: 0, -ENOENT when none in force has it. */
  int (*approval_revoke)(tg_store *st, int64_t id, char err[TG_ERRMSG]);
  /* As tg_store_approvals: those in force, or all (all 1). */
  cJSON *(*approvals_read)(tg_store *st, int all, char err[TG_ERRMSG]);

  /* ---- usage ledger ---- */
  /* Queues u (checked; session and ts filled) on a runtime's store, or
   * writes it now on a caller's. */
  int (*usage_append)(tg_store *st, const tg_usage *u, char err[TG_ERRMSG]);
  /* Sums the records f selects (period already turned into since_ms). */
  int (*usage_sum)(tg_store *st, const tg_usage_filter *f,
                   tg_usage_total *out, char err[TG_ERRMSG]);

  /* ---- sessions, messages, search ---- */
  int (*session_put)(tg_store *st, const tg_session_row *s,
                     char err[TG_ERRMSG]);
  /* Ends session id at ended_ms: 0, -ENOENT. */
  int (*session_end)(tg_store *st, const char *id, int64_t ended_ms,
                     char err[TG_ERRMSG]);
  /* Adds m (ts set; tool_calls as JSON text or NULL): its id (> 0),
   * -ENOENT when the session is unknown. */
  int64_t (*message_add)(tg_store *st, const tg_message *m,
                         const char *tool_calls, char err[TG_ERRMSG]);
  /* As tg_store_session; NULL with *missing set (err left to the caller)
   * when there is no such session, NULL with err on a failure. */
  cJSON *(*session_read)(tg_store *st, const char *id, int *missing,
                         char err[TG_ERRMSG]);
  cJSON *(*sessions_read)(tg_store *st, size_t limit, char err[TG_ERRMSG]);
  /* As tg_store_search (f->limit set): -EINVAL for a query it refuses. */
  int (*search)(tg_store *st, const tg_search_filter *f, cJSON **out,
                char err[TG_ERRMSG]);
  /* Stores a checked export (doc; s its session) all or nothing, under
   * s->id or a fresh id when that one is taken; fills rep's session,
   * renamed, messages and calls. */
  int (*session_import)(tg_store *st, const cJSON *doc,
                        const tg_import_session *s, tg_import_report *rep,
                        char err[TG_ERRMSG]);

  /* ---- what an agent's hooks keep of a session (agent_session.c) ---- */
  int64_t (*agent_session)(tg_store *st, const char *id, const char *agent,
                           const char *project, tg_agent_op op,
                           char err[TG_ERRMSG]);
  int (*agent_read)(tg_store *st, const char *id, int64_t *turn, char **mark,
                    char err[TG_ERRMSG]);
  int (*agent_stop)(tg_store *st, const char *id, const char *agent,
                    const char *project, const char *old_mark,
                    const char *new_mark, const tg_usage *u, size_t n,
                    char err[TG_ERRMSG]);

  /* ---- a session's taint (core/taint.h) ---- */
  /* Raises session id's taint to t, in one statement: the row made, or
   * replaced when t->level is above the one stored (else left as it is,
   * first cause kept). 1 raised, 0 kept, or a negative code. */
  int (*taint_raise)(tg_store *st, const char *id, const tg_taint *t,
                     char err[TG_ERRMSG]);
  /* The taint of id into out: 1, 0 (clean), or a negative code. */
  int (*taint_read)(tg_store *st, const char *id, tg_taint *out,
                    char err[TG_ERRMSG]);
  /* Clears id's taint: 0, -ENOENT when it has none. */
  int (*taint_clear)(tg_store *st, const char *id, char err[TG_ERRMSG]);

  /* ---- memories ---- */
  /* Stores m (checked, masked; scope "session" or "project", project the
   * real path for the latter; metadata as JSON text or NULL): its id. */
  int64_t (*memory_add)(tg_store *st, const tg_memory *m,
                        const char *project, const char *metadata,
                        char err[TG_ERRMSG]);
  /* As tg_memory_recall; f checked, project the real path (NULL: none). */
  cJSON *(*memory_recall)(tg_store *st, const tg_recall_filter *f,
                          const char *project, char err[TG_ERRMSG]);
};

/* The backends built in (store.c lists them). */
extern const tg_store_backend tg__sqlite_backend;

/* ---- store.c: a runtime's store -------------------------------------- */

/* Opens core->cfg.db (NULL: the default) for a runtime, its queue running.
 * NULL with err naming the database and the problem. */
tg_store *tg__store_start(tg_core *core, char err[TG_ERRMSG]);
/* The sink the chain reaches the store through. */
void tg__store_sink(tg_store *st, tg_sink *out);
/* Runs the loop until every record queued is committed and answered. */
void tg__store_drain(tg_store *st);
/* Stops the queue and closes everything (call tg__store_drain first). */
void tg__store_free(tg_store *st);
/* The sink's lookup: is q covered by an approval in force (on the loop,
 * no I/O)? 1 with its id, else 0. */
int tg__approval_find(tg_store *st, tg_approval_query *q, int64_t *id);
/* Queues a usage record (session NULL: the runtime's). */
int tg__store_record_usage(tg_store *st, const tg_usage *u,
                           char err[TG_ERRMSG]);
/* Checks a usage record before it is queued. */
int tg__usage_check(const tg_usage *u, char err[TG_ERRMSG]);
/* The redactors of a runtime's store, NULL for a caller's (the built-in
 * masks). */
tg_redactor *tg__store_redactor(tg_store *st);

/* ---- approval sealing (store.c) -------------------------------------- */

/* What is stored of args_key (canonical args): its digest under key and
 * its text through the redactors r (NULL: the built-in masks), both
 * malloc'd. -ENOMEM. */
int tg__seal_args(const uint8_t key[TG_SHA256_SIZE], tg_redactor *r,
                  const char *args_key, char **digest, char **preview);

/* ---- session_api.c: sessions ------------------------------------------ */

/* Is id a session id (1 to TG_SESSION_ID_MAX - 1 bytes, no control
 * character)? 0, or -EINVAL with what is wrong. */
int tg__session_id_check(const char *id, char err[TG_ERRMSG]);
/* A fresh session id: "s-" and 16 random hex digits. */
void tg__session_fresh_id(char id[TG_SESSION_ID_MAX]);

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

/* ---- taint_api.c: a session's taint ---------------------------------- */

/* As the backend's taint_raise / taint_read, the session id checked
 * first (-EINVAL), the reason masked (tg_store_taint_clear in
 * store_api.h clears). */
int tg__store_taint_raise(tg_store *st, const char *id, const tg_taint *t,
                          char err[TG_ERRMSG]);
int tg__store_taint_read(tg_store *st, const char *id, tg_taint *out,
                         char err[TG_ERRMSG]);

/* ---- export.c, render.c: a session as one document -------------------- */

/* {format, version, session, messages, calls} without the rows' ids. */
cJSON *tg__session_doc(tg_store *st, const char *id, char err[TG_ERRMSG]);
/* The document as Markdown / one HTML page (malloc'd; NULL: no memory). */
char *tg__render_markdown(const cJSON *doc);
char *tg__render_html(const cJSON *doc);

#endif
