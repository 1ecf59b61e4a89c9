/*
 * store_api.h — the database as the fronts and the tests use it, beside
 * the runtime that writes it: open a file by path, read and administer
 * the audit trail, remembered approvals and the usage ledger, sessions,
 * messages and full-text search, export and import, memory. Not the
 * embedder's API (include/toolgate.h): the fronts reach it through
 * src/kit/kit.h. What is written and when is toolgate.h's "storage".
 */
#ifndef TG_STORE_API_H
#define TG_STORE_API_H

#include <stddef.h>
#include <stdint.h>
#include "toolgate.h"
#include "core/memory.h"

/* The schema version this toolgate writes (PRAGMA user_version). */
#define TG_DB_SCHEMA_VERSION 8

/* The default database path into buf: ${XDG_STATE_HOME:-$HOME/.local/
 * state}/toolgate/toolgate.db. Makes no folder. -ENOENT when neither
 * variable is set, -ENAMETOOLONG when it does not fit. */
int tg_db_default_path(char *buf, size_t len, char err[TG_ERRMSG]);

/* Sums over the usage ledger (what tg_record_usage and tg_chat_end
 * record, toolgate.h): which records, and what they add up to. */
typedef struct {
  const char *session;        /* NULL: every session */
  const char *model;          /* NULL: every model */
  const char *period;         /* "hour", "day", "week" (from Monday),
                                 "month": since the start of the current
                                 one, local time; NULL: use since_ms */
  int64_t since_ms, until_ms; /* [since, until); 0: open-ended */
} tg_usage_filter;

typedef struct {
  int64_t records, input_tokens, output_tokens;
  double cost;
  int64_t since_ms;           /* where the sum started (the period's start) */
} tg_usage_total;

/* ---- a database as a file: reads and administration --------------------
 * A tg_store is a database opened on the calling thread, for commands and
 * scripts (`toolgate log`, `toolgate approvals`), or a runtime's own
 * (tg_runtime_store, runtime/front_api.h). Every function here blocks for the query; on a
 * runtime's store each first waits until what the runtime queued is
 * written, so a host reads its own writes. Results are cJSON the caller
 * frees with cJSON_Delete. */
typedef struct tg_store tg_store;

/* Opens (create 1: creating it and its folder if missing) the database at
 * path (NULL: the default), upgrading an older schema in place. NULL with
 * err naming the file and the problem. The file is made 0600 and must stay
 * private: a dangling symlink at path, a file (or -wal, -shm, -journal)
 * of another user, and a folder another user owns or anyone may write to
 * (unless sticky, like /tmp) are refused; a file of ours others may read
 * is made 0600. */
tg_store *tg_store_open(const char *path, int create, char err[TG_ERRMSG]);
/* Opens the database at path (NULL: the default), which must exist, for
 * reading only: nothing is created, upgraded or written, whatever is
 * called on it (a write fails). A database of an older schema is refused
 * (the next toolgate that writes it upgrades it). For a reader beside
 * the runtimes that write it: explain --event reads a session's taint
 * and looks calls up in the approvals in force when it was opened. */
tg_store *tg_store_open_read(const char *path, char err[TG_ERRMSG]);
/* Closes a store from tg_store_open (not a runtime's). Safe with NULL. */
void tg_store_close(tg_store *st);
/* The file's path (":memory:" for a private one). */
const char *tg_store_path(const tg_store *st);

typedef struct {
  const char *session, *tool, *call_id;
  const char *status;         /* "ok", "error", "denied", ... */
  int64_t since_ms;           /* calls started at or after; 0: any */
  int64_t after_id;           /* > 0: the calls recorded after the one with
                                 this id, oldest first, at most limit (log
                                 --follow); 0: the latest limit calls,
                                 oldest first */
  size_t limit;               /* 0: 100 */
} tg_audit_filter;

/* Audit records as a JSON array of {id, call_id, session, turn, tool,
 * args, args_bytes, args_cut?, decision {verdict, rule, where, reason,
 * approval, approval_id}, hooks?, attempts, status, error, result,
 * result_bytes, result_cut?, truncated?, ts, duration_ms, generation,
 * parent_call?}. args and result are JSON, or a string (the first
 * audit_*_max bytes of the text) when cut. NULL with err on failure;
 * -EINVAL-like bad filters (an unknown status) are failures too. */
struct cJSON *tg_store_audit(tg_store *st, const tg_audit_filter *f,
               char err[TG_ERRMSG]);

/* Remembered approvals as a JSON array of {id, tool, scope, args?, arg?,
 * glob?, where, session?, project?, created, until?, revoked?, by}; all 0:
 * only those in force (not revoked, not expired). args is a copy with the
 * audit's masks: the database keeps of exact args only that and their
 * keyed digest (HMAC-SHA256 under a random key of the database's own),
 * which calls are matched by. */
struct cJSON *tg_store_approvals(tg_store *st, int all, char err[TG_ERRMSG]);
/* Stores an approval as spec says (tool required). Returns its id (> 0),
 * or a negative code with err: -EINVAL too for a pattern whose argument
 * name or glob holds what the redactors mask (a credential would be kept
 * as text: approve the exact args instead). */
int64_t tg_store_grant(tg_store *st, const tg_always_spec *spec,
                char err[TG_ERRMSG]);
/* Revokes approval id: calls it covered are asked again. -ENOENT when no
 * approval in force has that id. */
int tg_store_revoke(tg_store *st, int64_t id, char err[TG_ERRMSG]);

/* A session's taint (a session is sensitive once a call of it read a
 * secret): {session, level, reason, call, tool, at} (call and tool null
 * when unknown, at in ms since the epoch), or a JSON null when it is
 * clean; NULL with err (-EINVAL: a bad session id). */
struct cJSON *tg_store_taint(tg_store *st, const char *session,
                             char err[TG_ERRMSG]);
/* Clears a session's taint (a person's decision): 0, -ENOENT when it is
 * clean, -EINVAL for a bad session id. */
int tg_store_taint_clear(tg_store *st, const char *session,
                         char err[TG_ERRMSG]);

/* Sums the usage records f selects (f may be NULL: all). */
int tg_store_usage(tg_store *st, const tg_usage_filter *f,
            tg_usage_total *out, char err[TG_ERRMSG]);

/* ---- sessions, messages, search --------------------------------------
 * A session is one conversation: an id, the project folder it ran in, a
 * title, when it started and ended. Its messages (role, content, the
 * tool calls the model asked for, as JSON) are recorded by the host.
 * Messages and the audit's calls (tool, args, result) are indexed for
 * full-text search (SQLite FTS5). On a runtime's store the writes go
 * through its writer thread and these calls wait for their commit. */

#define TG_SESSION_ID_MAX 129  /* an id is 1..128 bytes, no control char */

typedef struct {
  const char *id;             /* NULL: a new session with a fresh id; an
                                 id: that one, made or resumed (its end
                                 cleared, title kept unless given) */
  const char *project;        /* its folder; NULL: the cwd */
  const char *title;          /* NULL: none (or the one it has) */
  int64_t started_ms;         /* 0: now */
} tg_session_spec;

/* Begins (or resumes) a session; its id into id. 0, or -EINVAL (a bad
 * id or title), -EIO with err. */
int tg_session_begin(tg_store *st, const tg_session_spec *s,
                     char id[TG_SESSION_ID_MAX], char err[TG_ERRMSG]);
/* Marks session id ended now. -ENOENT when there is no such session. */
int tg_session_end(tg_store *st, const char *id, char err[TG_ERRMSG]);

typedef struct {
  const char *session;        /* required: a session begun before */
  const char *role;           /* "system", "user", "assistant" or "tool" */
  const char *content;        /* may be NULL (a message of tool calls) */
  const struct cJSON *tool_calls; /* NULL, or any JSON (stored as text) */
  int64_t ts_ms;              /* 0: now */
} tg_message;

/* TG_MESSAGE_MAX (core/memory.h): content and tool_calls, bytes each */

/* Records a message; returns its id (> 0). -ENOENT for an unknown
 * session; -EINVAL for a bad role or content over TG_MESSAGE_MAX. */
int64_t tg_message_record(tg_store *st, const tg_message *m,
                          char err[TG_ERRMSG]);

/* Session id as JSON {id, project, title, started, ended, agent, turn,
 * messages: [{id, role, content, tool_calls, ts}], calls: [audit records,
 * as tg_store_audit]} (agent: the coding agent whose hooks recorded it,
 * or null; turn: the prompts its hooks counted), or NULL with err (-ENOENT-like "no session"). */
struct cJSON *tg_store_session(tg_store *st, const char *id,
                               char err[TG_ERRMSG]);
/* The sessions, latest first, as [{id, project, title, started, ended,
 * agent, turn, messages}] (messages: their count); at most limit (0: 100). */
struct cJSON *tg_store_sessions(tg_store *st, size_t limit,
                                char err[TG_ERRMSG]);

typedef struct {
  const char *query;          /* FTS5 query syntax: words, "phrases",
                                 AND OR NOT, prefix*, column: filters */
  const char *session;        /* NULL: every session */
  size_t limit;               /* 0: 20 */
} tg_search_filter;

/* Full-text search over messages and calls, best first (bm25), into *out:
 * [{kind: "message"|"call", id, session, role?|tool?, call_id?, snippet,
 * score, ts}]; snippet marks the matches with [ and ]. -EINVAL with err
 * for a query FTS5 cannot parse; -EIO for others. */
int tg_store_search(tg_store *st, const tg_search_filter *f,
                    struct cJSON **out, char err[TG_ERRMSG]);

/* ---- export and import of a session ------------------------------------ */

typedef enum {
  TG_EXPORT_JSON,             /* lossless: {format: "toolgate-session",
                                 version: 1, session, messages, calls}
                                 (the rows' own ids left out) */
  TG_EXPORT_MARKDOWN,         /* for a terminal or a forge */
  TG_EXPORT_HTML              /* one self-contained page, no script */
} tg_export_format;

/* Session id as text in format (malloc'd: free() it), or NULL with err. */
char *tg_store_export(tg_store *st, const char *session,
                      tg_export_format format, char err[TG_ERRMSG]);

#define TG_IMPORT_MAX (256u << 20) /* bytes of an export file */

typedef struct {
  char session[TG_SESSION_ID_MAX]; /* the id it was stored under */
  int renamed;                /* 1: the file had that id: a fresh one */
  int64_t messages, calls;    /* how many were stored */
  struct cJSON *skipped;      /* what was not read: ["$.calls[2].x
                                 (unknown key)", ...]; cJSON_Delete it */
} tg_import_report;

/* Stores the session of a JSON export (text, len bytes): all of it in one
 * transaction, or nothing. -EINVAL with err naming the place for a file
 * that is not an export, of an unknown version, or with a wrong type, a
 * value out of range, a duplicate key or a string too long; -EIO. */
int tg_store_import(tg_store *st, const char *text, size_t len,
                    tg_import_report *rep, char err[TG_ERRMSG]);

/* ---- memory (core/memory.h has what one is) ---------------------------- */

/* Stores a memory; its id (> 0), or -EINVAL / -EIO with err. */
int64_t tg_memory_record(tg_store *st, const tg_memory *m,
                         char err[TG_ERRMSG]);

/* The best memories for f->query, best first: [{id, kind, content,
 * metadata, scope, session, project, created, score}]. NULL with err. */
struct cJSON *tg_memory_recall(tg_store *st, const tg_recall_filter *f,
                               char err[TG_ERRMSG]);

#endif
