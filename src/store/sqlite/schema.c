/*
 * schema.c — the database's schema, created and upgraded in place: one
 * ensure step per version, applied in order from the file's
 * PRAGMA user_version, in one transaction. A fresh file runs every step,
 * so the path a new database takes is the path an old one is upgraded by.
 * A file from a newer toolgate is refused (naming both versions); so is an
 * SQLite file of another program (its own application_id, or tables and no
 * toolgate mark).
 *
 * Adding a version: write step N (CREATE / ALTER ... ADD COLUMN, never a
 * rewrite of an older step), add it to `steps` (and what it must do in C
 * to `step_code`), bump TG_DB_SCHEMA_VERSION
 * (toolgate.h). spec/fixtures/make_db_v1.sh (v2, v4) makes a version 1
 * (2, 4) file that the tests upgrade; they check it matches the steps here.
 */
#include <stdio.h>
#include <string.h>
#include "sqlite_store.h"
#include "base/util.h"

#define TG_APPLICATION_ID 0x74676174 /* "tgat" */

/* Version 1: the audit trail as first written. */
static const char step1[] =
    "CREATE TABLE calls ("
    " id INTEGER PRIMARY KEY,"
    " call_id TEXT NOT NULL,"
    " session TEXT NOT NULL,"
    " turn INTEGER NOT NULL DEFAULT 0,"
    " tool TEXT NOT NULL,"
    " args TEXT,"
    " verdict TEXT,"
    " rule TEXT,"
    " status TEXT NOT NULL,"
    " error_code TEXT,"
    " error_message TEXT,"
    " attempts INTEGER NOT NULL DEFAULT 0,"
    " ts INTEGER NOT NULL,"
    " duration_ms REAL);"
    "CREATE INDEX calls_ts ON calls(ts);";

/* Version 2: the whole audit record (decision's place, hooks, the result,
 * the structured error, generation, parent call), remembered approvals and
 * the usage ledger. The audit has no index but its rowid: the one on ts
 * took 40 % of the writer's time per row (one more page written per
 * commit); --since finds its first row by the rowid (audit.c). */
static const char step2[] =
    "DROP INDEX calls_ts;"
    "ALTER TABLE calls ADD COLUMN args_bytes INTEGER;"
    "ALTER TABLE calls ADD COLUMN args_cut INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE calls ADD COLUMN rule_where TEXT;"
    "ALTER TABLE calls ADD COLUMN reason TEXT;"
    "ALTER TABLE calls ADD COLUMN approval TEXT;"
    "ALTER TABLE calls ADD COLUMN approval_id INTEGER;"
    "ALTER TABLE calls ADD COLUMN hooks TEXT;"
    "ALTER TABLE calls ADD COLUMN error_phase TEXT;"
    "ALTER TABLE calls ADD COLUMN error_suggestion TEXT;"
    "ALTER TABLE calls ADD COLUMN error_retryable INTEGER;"
    "ALTER TABLE calls ADD COLUMN result TEXT;"
    "ALTER TABLE calls ADD COLUMN result_bytes INTEGER;"
    "ALTER TABLE calls ADD COLUMN result_cut INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE calls ADD COLUMN truncated INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE calls ADD COLUMN generation INTEGER;"
    "ALTER TABLE calls ADD COLUMN parent_call TEXT;"
    "CREATE TABLE approvals ("
    " id INTEGER PRIMARY KEY,"
    " tool TEXT NOT NULL,"
    " scope TEXT NOT NULL CHECK (scope IN ('tool', 'args', 'pattern')),"
    " args_key TEXT,"
    " arg TEXT,"
    " glob TEXT,"
    " place TEXT NOT NULL CHECK (place IN ('session', 'project')),"
    " session TEXT,"
    " project TEXT,"
    " created INTEGER NOT NULL,"
    " expires INTEGER,"
    " revoked INTEGER,"
    " by TEXT);"
    "CREATE INDEX approvals_tool ON approvals(tool) WHERE revoked IS NULL;"
    /* any change to approvals (toolgate's or a hand edit) bumps a counter
     * a runtime polls to know when to reload the ones in force */
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);"
    "INSERT INTO meta VALUES ('approvals', 0);"
    "CREATE TRIGGER approvals_inserted AFTER INSERT ON approvals BEGIN"
    " UPDATE meta SET value = value + 1 WHERE key = 'approvals'; END;"
    "CREATE TRIGGER approvals_updated AFTER UPDATE ON approvals BEGIN"
    " UPDATE meta SET value = value + 1 WHERE key = 'approvals'; END;"
    "CREATE TRIGGER approvals_deleted AFTER DELETE ON approvals BEGIN"
    " UPDATE meta SET value = value + 1 WHERE key = 'approvals'; END;"
    "CREATE TABLE usage ("
    " id INTEGER PRIMARY KEY,"
    " ts INTEGER NOT NULL,"
    " session TEXT NOT NULL,"
    " turn INTEGER NOT NULL DEFAULT 0,"
    " model TEXT NOT NULL,"
    " input_tokens INTEGER NOT NULL DEFAULT 0,"
    " output_tokens INTEGER NOT NULL DEFAULT 0,"
    " cost REAL NOT NULL DEFAULT 0);"
    "CREATE INDEX usage_ts ON usage(ts);";

/* Version 3: sessions and their messages, memories, and full-text search (FTS5,
 * external content: the index holds no second copy of the text) over the
 * messages and over the calls' tool, args and result, kept in step by
 * triggers; the calls already recorded are indexed by the upgrade
 * ('rebuild'). */
static const char step3[] =
    "CREATE TABLE sessions ("
    " id TEXT PRIMARY KEY,"
    " project TEXT,"
    " title TEXT,"
    " started INTEGER NOT NULL,"
    " ended INTEGER);"
    "CREATE TABLE messages ("
    " id INTEGER PRIMARY KEY,"
    " session TEXT NOT NULL REFERENCES sessions(id),"
    " role TEXT NOT NULL,"
    " content TEXT,"
    " tool_calls TEXT,"
    " ts INTEGER NOT NULL);"
    "CREATE INDEX messages_session ON messages(session, id);"
    "CREATE VIRTUAL TABLE messages_fts USING fts5(content, tool_calls,"
    " content='messages', content_rowid='id');"
    "CREATE TRIGGER messages_fts_i AFTER INSERT ON messages BEGIN"
    " INSERT INTO messages_fts(rowid, content, tool_calls)"
    " VALUES (new.id, new.content, new.tool_calls); END;"
    "CREATE TRIGGER messages_fts_d AFTER DELETE ON messages BEGIN"
    " INSERT INTO messages_fts(messages_fts, rowid, content, tool_calls)"
    " VALUES ('delete', old.id, old.content, old.tool_calls); END;"
    "CREATE TRIGGER messages_fts_u AFTER UPDATE ON messages BEGIN"
    " INSERT INTO messages_fts(messages_fts, rowid, content, tool_calls)"
    " VALUES ('delete', old.id, old.content, old.tool_calls);"
    " INSERT INTO messages_fts(rowid, content, tool_calls)"
    " VALUES (new.id, new.content, new.tool_calls); END;"
    "CREATE VIRTUAL TABLE calls_fts USING fts5(tool, args, result,"
    " content='calls', content_rowid='id');"
    "CREATE TRIGGER calls_fts_i AFTER INSERT ON calls BEGIN"
    " INSERT INTO calls_fts(rowid, tool, args, result)"
    " VALUES (new.id, new.tool, new.args, new.result); END;"
    "CREATE TRIGGER calls_fts_d AFTER DELETE ON calls BEGIN"
    " INSERT INTO calls_fts(calls_fts, rowid, tool, args, result)"
    " VALUES ('delete', old.id, old.tool, old.args, old.result); END;"
    "CREATE TRIGGER calls_fts_u AFTER UPDATE ON calls BEGIN"
    " INSERT INTO calls_fts(calls_fts, rowid, tool, args, result)"
    " VALUES ('delete', old.id, old.tool, old.args, old.result);"
    " INSERT INTO calls_fts(rowid, tool, args, result)"
    " VALUES (new.id, new.tool, new.args, new.result); END;"
    "INSERT INTO calls_fts(calls_fts) VALUES ('rebuild');"
    /* memories: what a host or a policy asks to keep, for one session or
     * for every session of one project (memory.c) */
    "CREATE TABLE memories ("
    " id INTEGER PRIMARY KEY,"
    " kind TEXT NOT NULL,"
    " content TEXT NOT NULL,"
    " metadata TEXT,"
    " scope TEXT NOT NULL CHECK (scope IN ('session', 'project')),"
    " session TEXT,"
    " project TEXT,"
    " created INTEGER NOT NULL);"
    "CREATE INDEX memories_place ON memories(scope, project, session);"
    "CREATE VIRTUAL TABLE memories_fts USING fts5(kind, content,"
    " content='memories', content_rowid='id');"
    "CREATE TRIGGER memories_fts_i AFTER INSERT ON memories BEGIN"
    " INSERT INTO memories_fts(rowid, kind, content)"
    " VALUES (new.id, new.kind, new.content); END;"
    "CREATE TRIGGER memories_fts_d AFTER DELETE ON memories BEGIN"
    " INSERT INTO memories_fts(memories_fts, rowid, kind, content)"
    " VALUES ('delete', old.id, old.kind, old.content); END;"
    "CREATE TRIGGER memories_fts_u AFTER UPDATE ON memories BEGIN"
    " INSERT INTO memories_fts(memories_fts, rowid, kind, content)"
    " VALUES ('delete', old.id, old.kind, old.content);"
    " INSERT INTO memories_fts(rowid, kind, content)"
    " VALUES (new.id, new.kind, new.content); END;";

/* Version 4: what an agent's hooks keep of a session across hook
 * processes (agent_sessions.c, "agent sessions"): the agent's name, the turn
 * its prompts counted, and how far its transcript's usage was read (a
 * JSON mark). */
static const char step4[] =
    "ALTER TABLE sessions ADD COLUMN agent TEXT;"
    "ALTER TABLE sessions ADD COLUMN turn INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE sessions ADD COLUMN transcript_mark TEXT;";

/* Version 5: approvals of exact args keep a keyed digest and a masked
 * copy of the args, never the args (approval_seal.c); the key is in
 * `keys`. The column args_key stays, empty (the upgrade empties it). */
static const char step5[] =
    "CREATE TABLE keys (name TEXT PRIMARY KEY, key BLOB NOT NULL);"
    "ALTER TABLE approvals ADD COLUMN args_digest TEXT;"
    "ALTER TABLE approvals ADD COLUMN args_preview TEXT;";

/* Version 6: sessions' taints (taint.c): one row per sensitive session,
 * its level, why, and the call that made it so. A table of its own, not
 * columns of sessions: a taint may come before the session is noted. */
static const char step6[] =
    "CREATE TABLE taints ("
    " session TEXT PRIMARY KEY,"
    " level INTEGER NOT NULL CHECK (level > 0),"
    " reason TEXT NOT NULL,"
    " call_id TEXT,"
    " tool TEXT,"
    " ts INTEGER NOT NULL);";

/* Version 7: what an agent's hook adds to its call's row (audit.c): the
 * agent, the event, its tool's name and input, its id of the tool call
 * (which links the call's events: a PostToolUse to the PreToolUse that
 * judged it), what the agent was told; and for every call who decided.
 * The index holds agent calls only (a partial index: other rows cost the
 * writer nothing). */
static const char step7[] =
    "ALTER TABLE calls ADD COLUMN decided_by TEXT;"
    "ALTER TABLE calls ADD COLUMN agent TEXT;"
    "ALTER TABLE calls ADD COLUMN agent_event TEXT;"
    "ALTER TABLE calls ADD COLUMN agent_tool TEXT;"
    "ALTER TABLE calls ADD COLUMN agent_input TEXT;"
    "ALTER TABLE calls ADD COLUMN agent_call TEXT;"
    "ALTER TABLE calls ADD COLUMN agent_answer TEXT;"
    "CREATE INDEX calls_agent_call ON calls(session, agent_call)"
    " WHERE agent_call IS NOT NULL;";

/* Version 8: the calls' full-text index kept behind the audit
 * (calls_index.c): a new call is no longer indexed by a trigger inside the
 * commit its answer waits for, but later, up to a watermark in meta
 * ('calls_indexed': every call up to this id is in the index; the upgrade
 * starts it at the last call, all of them indexed by version 3's
 * trigger). Triggers still index a call at once when its id is at or
 * below the watermark (an id reused after a delete), and keep deletes and
 * updates of indexed calls in step. */
#define INDEXED "(SELECT value FROM meta WHERE key = 'calls_indexed')"
static const char step8[] =
    "DROP TRIGGER calls_fts_i;"
    "DROP TRIGGER calls_fts_d;"
    "DROP TRIGGER calls_fts_u;"
    "INSERT INTO meta VALUES ('calls_indexed',"
    " (SELECT coalesce(max(id), 0) FROM calls));"
    "CREATE TRIGGER calls_fts_i AFTER INSERT ON calls"
    " WHEN new.id <= " INDEXED " BEGIN"
    " INSERT INTO calls_fts(rowid, tool, args, result)"
    " VALUES (new.id, new.tool, new.args, new.result); END;"
    "CREATE TRIGGER calls_fts_d AFTER DELETE ON calls"
    " WHEN old.id <= " INDEXED " BEGIN"
    " INSERT INTO calls_fts(calls_fts, rowid, tool, args, result)"
    " VALUES ('delete', old.id, old.tool, old.args, old.result); END;"
    "CREATE TRIGGER calls_fts_u AFTER UPDATE ON calls BEGIN"
    " INSERT INTO calls_fts(calls_fts, rowid, tool, args, result)"
    " SELECT 'delete', old.id, old.tool, old.args, old.result"
    " WHERE old.id <= " INDEXED ";"
    " INSERT INTO calls_fts(rowid, tool, args, result)"
    " SELECT new.id, new.tool, new.args, new.result"
    " WHERE new.id <= " INDEXED "; END;";
#undef INDEXED

static const char *const steps[TG_DB_SCHEMA_VERSION + 1] = {
    NULL, step1, step2, step3, step4, step5, step6, step7, step8};

/* What a step does that SQL cannot (random bytes, a digest), after its
 * SQL, in the same transaction. */
typedef int (*step_fn)(sqlite3 *db, char *err, size_t errlen);
static const step_fn step_code[TG_DB_SCHEMA_VERSION + 1] = {
    [5] = tg__seal_upgrade};

static int int_pragma(sqlite3 *db, const char *sql, int *out) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
  if (rc == SQLITE_OK) rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) {
    *out = sqlite3_column_int(st, 0);
    rc = SQLITE_OK;
  }
  sqlite3_finalize(st);
  return rc;
}

int tg__schema_version(sqlite3 *db) {
  int v = -1;
  return int_pragma(db, "PRAGMA user_version", &v) == SQLITE_OK ? v : -1;
}

/* Is this file someone else's? Ours carries our application_id; a file
 * without one is ours only while it is empty (new, version 0): toolgate
 * will not write into another program's database. */
static int foreign(sqlite3 *db, const char *path, int app, int v,
                   char err[TG_ERRMSG]) {
  int tables = 0;
  if (app == TG_APPLICATION_ID) return 0;
  if (int_pragma(db, "SELECT count(*) FROM sqlite_master", &tables) !=
      SQLITE_OK)
    tables = -1;
  if (app == 0 && v == 0 && tables == 0) return 0;
  tg__errf(err, TG_ERRMSG, "database %s: it is another program's SQLite "
           "database (application_id %d, user_version %d, %d schema "
           "objects), not toolgate's; give toolgate a file of its own",
           path, app, v, tables);
  return 1;
}

static int newer(const char *path, int v, char err[TG_ERRMSG]) {
  tg__errf(err, TG_ERRMSG, "database %s: it has schema version %d, written "
           "by a newer toolgate; this one (%s) knows up to version %d: use "
           "the newer toolgate, or another database file", path, v,
           TG_VERSION, TG_DB_SCHEMA_VERSION);
  return -1;
}

/* The schema version of a database this toolgate can read (*v): 0; or -1
 * with err when it cannot be read, is not toolgate's, or is a newer
 * toolgate's. */
static int readable_version(sqlite3 *db, const char *path, int *v,
                            char err[TG_ERRMSG]) {
  int app = 0;
  *v = tg__schema_version(db);
  if (*v < 0 || int_pragma(db, "PRAGMA application_id", &app) != SQLITE_OK) {
    tg__db_error(db, path, "cannot read its schema version", err);
    return -1;
  }
  if (foreign(db, path, app, *v, err)) return -1;
  if (*v > TG_DB_SCHEMA_VERSION) return newer(path, *v, err);
  return 0;
}

/* Inside the write transaction: the version is read again there, so two
 * processes upgrading at once do it once. */
static int upgrade(sqlite3 *db, const char *path, int target,
                   char err[TG_ERRMSG]) {
  char why[400] = "", sql[64];
  int v;
  if (readable_version(db, path, &v, err) < 0) return -1;
  for (int k = v + 1; k <= target; k++) {
    if (tg__db_exec(db, steps[k], why, sizeof why) != SQLITE_OK ||
        (step_code[k] && step_code[k](db, why, sizeof why) < 0)) {
      tg__errf(err, TG_ERRMSG, "database %s: upgrading its schema to "
               "version %d failed: %s", path, k, why);
      return -1;
    }
  }
  snprintf(sql, sizeof sql, "PRAGMA application_id=%d;PRAGMA user_version=%d",
           TG_APPLICATION_ID, target > v ? target : v);
  if (tg__db_exec(db, sql, why, sizeof why) != SQLITE_OK) {
    tg__db_error(db, path, "cannot mark its schema version", err);
    return -1;
  }
  return 0;
}

int tg__schema_current(sqlite3 *db, const char *path, char err[TG_ERRMSG]) {
  int v;
  if (readable_version(db, path, &v, err) < 0) return -1;
  if (v == TG_DB_SCHEMA_VERSION) return 0;
  tg__errf(err, TG_ERRMSG, "database %s: it has schema version %d, of an "
           "older toolgate, and is only read here: the hook's next call, or "
           "`toolgate log`, upgrades it to version %d", path, v,
           TG_DB_SCHEMA_VERSION);
  return -1;
}

int tg__schema_ensure(sqlite3 *db, const char *path, int target,
                      char err[TG_ERRMSG]) {
  int v = tg__schema_version(db), app = 0;
  if (v < 0 || int_pragma(db, "PRAGMA application_id", &app) != SQLITE_OK) {
    tg__db_error(db, path, "cannot read its schema version", err);
    return -1;
  }
  /* someone else's first: their user_version means nothing to us. A file
   * with neither mark may be one another toolgate is creating right now
   * (its tables seen, its marks not yet, read by separate statements):
   * upgrade() decides that one under the write lock */
  if ((app != 0 || v != 0) && foreign(db, path, app, v, err)) return -1;
  if (v > TG_DB_SCHEMA_VERSION) return newer(path, v, err);
  if (v >= target && v > 0) return 0; /* the common case: no write, no lock */
  if (tg__db_exec(db, "BEGIN IMMEDIATE", NULL, 0) != SQLITE_OK) {
    tg__db_error(db, path, "cannot lock it to set up its schema", err);
    return -1;
  }
  if (upgrade(db, path, target, err) < 0) {
    tg__db_exec(db, "ROLLBACK", NULL, 0);
    return -1;
  }
  if (tg__db_exec(db, "COMMIT", NULL, 0) != SQLITE_OK) {
    tg__db_error(db, path, "cannot commit its schema", err);
    tg__db_exec(db, "ROLLBACK", NULL, 0);
    return -1;
  }
  /* an upgrade may have replaced text that must leave no copy (version 5:
   * approvals' args): the WAL's old frames go; best effort (a reader of
   * another process may hold them: its next checkpoint does it) */
  if (v > 0) tg__db_exec(db, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, 0);
  return 0;
}
