/*
 * sessions.c — sessions (one conversation each), their messages, and the
 * full-text search over messages and calls (schema step 3: FTS5 tables
 * with external content, kept in step by triggers), for the backend's
 * table (store.h; the checks and masks are store/session_api.c's). Writes
 * run where the store writes (tg__sq_write: a runtime's writer thread, or
 * the store's own connection); reads on the caller's connection.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sqlite_store.h"
#include "base/util.h"
#include "base/json.h"

int tg__savepoint(sqlite3 *db, char *err, size_t errlen) {
  return tg__db_exec(db, "SAVEPOINT tg_write", err, errlen) == SQLITE_OK
             ? 0
             : -EIO;
}

int tg__savepoint_end(sqlite3 *db, int ok) {
  if (!ok) tg__db_exec(db, "ROLLBACK TO tg_write", NULL, 0);
  return tg__db_exec(db, "RELEASE tg_write", NULL, 0) == SQLITE_OK ? 0 : -EIO;
}

/* ---- sessions --------------------------------------------------------- */

typedef struct {
  const char *id;
  int64_t ended;
} session_w;

static int64_t session_upsert(sqlite3 *db, void *arg, char *err,
                              size_t errlen) {
  static const char sql[] =
      "INSERT INTO sessions (id, project, title, started) VALUES (?1, ?2,"
      " ?3, ?4) ON CONFLICT (id) DO UPDATE SET ended = NULL,"
      " title = coalesce(?3, title), project = coalesce(project, ?2)";
  const tg_session_row *s = arg;
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
  if (rc == SQLITE_OK) {
    tg__bind_str(st, 1, s->id);
    tg__bind_str(st, 2, s->project);
    tg__bind_str(st, 3, s->title);
    sqlite3_bind_int64(st, 4, s->started_ms);
    rc = sqlite3_step(st);
  }
  if (rc != SQLITE_DONE)
    snprintf(err, errlen, "storing session %s: %s", s->id, sqlite3_errmsg(db));
  sqlite3_finalize(st);
  return rc == SQLITE_DONE ? 0 : -EIO;
}

int tg__sq_session_put(tg_store *st, const tg_session_row *s,
                       char err[TG_ERRMSG]) {
  int64_t rc = tg__sq_write(tg__sq(st), session_upsert, (void *)s, err);
  return rc < 0 ? (int)rc : 0;
}

static int64_t session_close(sqlite3 *db, void *arg, char *err,
                             size_t errlen) {
  session_w *s = arg;
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db, "UPDATE sessions SET ended = ?2 WHERE id"
                              " = ?1", -1, &st, NULL);
  if (rc == SQLITE_OK) {
    tg__bind_str(st, 1, s->id);
    sqlite3_bind_int64(st, 2, s->ended);
    rc = sqlite3_step(st);
  }
  if (rc != SQLITE_DONE)
    snprintf(err, errlen, "ending session %s: %s", s->id, sqlite3_errmsg(db));
  sqlite3_finalize(st);
  return rc == SQLITE_DONE ? 0 : -EIO;
}

/* Does session id exist (read on the caller's connection)? 1, 0, -EIO. */
static int session_exists(tg_sqlite *st, const char *id,
                          char err[TG_ERRMSG]) {
  if (tg__sq_flushed(st, err) < 0) return -EIO;
  sqlite3_stmt *q = NULL;
  int rc = sqlite3_prepare_v2(st->db, "SELECT 1 FROM sessions WHERE id = ?1",
                              -1, &q, NULL);
  if (rc == SQLITE_OK) {
    tg__bind_str(q, 1, id);
    rc = sqlite3_step(q);
  }
  sqlite3_finalize(q);
  if (rc == SQLITE_ROW) return 1;
  if (rc == SQLITE_DONE) return 0;
  tg__db_error(st->db, st->base.path, "cannot read its sessions", err);
  return -EIO;
}

int tg__sq_session_end(tg_store *st, const char *id, int64_t ended_ms,
                       char err[TG_ERRMSG]) {
  int have = session_exists(tg__sq(st), id, err);
  if (have <= 0) return have < 0 ? have : -ENOENT;
  session_w w = {id, ended_ms};
  int64_t rc = tg__sq_write(tg__sq(st), session_close, &w, err);
  return rc < 0 ? (int)rc : 0;
}

/* ---- messages --------------------------------------------------------- */

typedef struct {
  const tg_message *m;
  const char *calls;         /* tool_calls printed, or NULL */
  int64_t ts;
} message_w;

static int64_t message_insert(sqlite3 *db, void *arg, char *err,
                              size_t errlen) {
  message_w *w = arg;
  sqlite3_stmt *st = NULL;
  /* the session was checked; made here should it have gone since */
  int rc = sqlite3_prepare_v2(
      db, "INSERT OR IGNORE INTO sessions (id, started) VALUES (?1, ?2)", -1,
      &st, NULL);
  if (rc == SQLITE_OK) {
    tg__bind_str(st, 1, w->m->session);
    sqlite3_bind_int64(st, 2, w->ts);
    rc = sqlite3_step(st);
  }
  sqlite3_finalize(st);
  st = NULL;
  if (rc == SQLITE_DONE)
    rc = sqlite3_prepare_v2(db, "INSERT INTO messages (session, role,"
                            " content, tool_calls, ts) VALUES (?1, ?2, ?3,"
                            " ?4, ?5)", -1, &st, NULL);
  if (rc == SQLITE_OK) {
    tg__bind_str(st, 1, w->m->session);
    tg__bind_str(st, 2, w->m->role);
    tg__bind_str(st, 3, w->m->content);
    tg__bind_str(st, 4, w->calls);
    sqlite3_bind_int64(st, 5, w->ts);
    rc = sqlite3_step(st);
  }
  if (rc != SQLITE_DONE)
    snprintf(err, errlen, "storing a message of %s: %s", w->m->session,
             sqlite3_errmsg(db));
  sqlite3_finalize(st);
  return rc == SQLITE_DONE ? (int64_t)sqlite3_last_insert_rowid(db) : -EIO;
}

int64_t tg__sq_message_add(tg_store *st, const tg_message *m,
                           const char *tool_calls, char err[TG_ERRMSG]) {
  int have = session_exists(tg__sq(st), m->session, err);
  if (have <= 0) return have < 0 ? have : -ENOENT;
  message_w w = {m, tool_calls, m->ts_ms};
  return tg__sq_write(tg__sq(st), message_insert, &w, err);
}

/* ---- reading ---------------------------------------------------------- */

static void add_col(cJSON *o, const char *k, sqlite3_stmt *st, int i) {
  switch (sqlite3_column_type(st, i)) {
    case SQLITE_NULL: cJSON_AddNullToObject(o, k); break;
    case SQLITE_INTEGER:
      cJSON_AddNumberToObject(o, k, (double)sqlite3_column_int64(st, i));
      break;
    case SQLITE_FLOAT:
      cJSON_AddNumberToObject(o, k, sqlite3_column_double(st, i));
      break;
    default:
      cJSON_AddStringToObject(o, k, (const char *)sqlite3_column_text(st, i));
  }
}

/* Rows of sql (with text ?1 bound to a1 when given) as objects named by
 * the columns. NULL with err. */
static cJSON *rows(sqlite3 *db, const char *sql, const char *a1, int64_t n2,
                   char err[TG_ERRMSG]) {
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
    tg__errf(err, TG_ERRMSG, "reading sessions: %s", sqlite3_errmsg(db));
    return NULL;
  }
  if (a1) tg__bind_str(st, 1, a1);
  if (sqlite3_bind_parameter_count(st) >= 2) sqlite3_bind_int64(st, 2, n2);
  cJSON *out = cJSON_CreateArray();
  int rc = SQLITE_ERROR;
  while (out && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    cJSON *o = cJSON_CreateObject();
    for (int i = 0; o && i < sqlite3_column_count(st); i++)
      add_col(o, sqlite3_column_name(st, i), st, i);
    cJSON_AddItemToArray(out, o);
  }
  if (!out || rc != SQLITE_DONE) {
    tg__errf(err, TG_ERRMSG, "reading sessions: %s", sqlite3_errmsg(db));
    cJSON_Delete(out);
    out = NULL;
  }
  sqlite3_finalize(st);
  return out;
}

/* tool_calls texts back to JSON (the store wrote them: strict parse). */
static void parse_tool_calls(cJSON *msgs) {
  cJSON *m;
  cJSON_ArrayForEach(m, msgs) {
    cJSON *t = cJSON_GetObjectItemCaseSensitive(m, "tool_calls");
    if (!cJSON_IsString(t)) continue;
    cJSON *v = tg_json_parse(t->valuestring, strlen(t->valuestring), NULL,
                             NULL, 0);
    if (v) cJSON_ReplaceItemInObjectCaseSensitive(m, "tool_calls", v);
  }
}

cJSON *tg__sq_session_read(tg_store *store, const char *id, int *missing,
                           char err[TG_ERRMSG]) {
  tg_sqlite *st = tg__sq(store);
  if (tg__sq_flushed(st, err) < 0) return NULL;
  cJSON *s = rows(st->db, "SELECT id, project, title, started, ended, agent,"
                  " turn FROM sessions WHERE id = ?1", id, 0, err);
  if (!s) return NULL;
  cJSON *one = cJSON_DetachItemFromArray(s, 0);
  cJSON_Delete(s);
  if (!one) {
    *missing = 1;
    return NULL;
  }
  cJSON *msgs = rows(st->db, "SELECT id, role, content, tool_calls, ts FROM"
                     " messages WHERE session = ?1 ORDER BY id", id, 0, err);
  tg_audit_filter f = {.session = id, .limit = 1000000};
  cJSON *calls = msgs ? tg__audit_query(st->db, &f, err) : NULL;
  if (!calls) {
    cJSON_Delete(msgs);
    cJSON_Delete(one);
    return NULL;
  }
  parse_tool_calls(msgs);
  cJSON_AddItemToObject(one, "messages", msgs);
  cJSON_AddItemToObject(one, "calls", calls);
  return one;
}

cJSON *tg__sq_sessions_read(tg_store *store, size_t limit,
                            char err[TG_ERRMSG]) {
  tg_sqlite *st = tg__sq(store);
  if (tg__sq_flushed(st, err) < 0) return NULL;
  return rows(st->db, "SELECT s.id, s.project, s.title, s.started, s.ended,"
              " s.agent, s.turn,"
              " (SELECT count(*) FROM messages m WHERE m.session = s.id) AS"
              " messages FROM sessions s WHERE ?1 IS NULL ORDER BY"
              " s.started DESC, s.rowid DESC LIMIT ?2", NULL,
              (int64_t)limit, err);
}

/* ---- search ----------------------------------------------------------- */

/* Two halves, one per index: a column filter names one table's columns
 * (content: for messages, tool: for calls), so the other half refusing it
 * is no error while one takes it. bm25 scores of the two are compared as
 * they are (lower is better). */
static const char search_messages[] =
    "SELECT 'message', m.id, m.session, m.role, NULL, NULL,"
    " snippet(messages_fts, -1, '[', ']', '...', 16), bm25(messages_fts),"
    " m.ts FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid"
    " WHERE messages_fts MATCH ?1 AND (?2 IS NULL OR m.session = ?2)"
    " ORDER BY 8, m.ts DESC LIMIT ?3";
static const char search_calls[] =
    "SELECT 'call', c.id, c.session, NULL, c.tool, c.call_id,"
    " snippet(calls_fts, -1, '[', ']', '...', 16), bm25(calls_fts), c.ts"
    " FROM calls_fts JOIN calls c ON c.id = calls_fts.rowid"
    " WHERE calls_fts MATCH ?1 AND (?2 IS NULL OR c.session = ?2)"
    " ORDER BY 8, c.ts DESC LIMIT ?3";

static cJSON *hit(sqlite3_stmt *q) {
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  add_col(o, "kind", q, 0);
  add_col(o, "id", q, 1);
  add_col(o, "session", q, 2);
  if (sqlite3_column_type(q, 3) != SQLITE_NULL) add_col(o, "role", q, 3);
  if (sqlite3_column_type(q, 4) != SQLITE_NULL) add_col(o, "tool", q, 4);
  if (sqlite3_column_type(q, 5) != SQLITE_NULL) add_col(o, "call_id", q, 5);
  add_col(o, "snippet", q, 6);
  cJSON_AddNumberToObject(o, "score", sqlite3_column_double(q, 7));
  add_col(o, "ts", q, 8);
  return o;
}

/* One half's hits appended to a. 0; 1 when SQLite refused the query
 * (SQLITE_ERROR: its syntax, a column this index has not), its message
 * in why; -1 for any other failure, with err. */
static int search_half(tg_sqlite *st, const char *sql,
                       const tg_search_filter *f, cJSON *a, char *why,
                       size_t whylen, char err[TG_ERRMSG]) {
  sqlite3_stmt *q = NULL;
  if (sqlite3_prepare_v2(st->db, sql, -1, &q, NULL) != SQLITE_OK) {
    tg__errf(err, TG_ERRMSG, "searching: %s", sqlite3_errmsg(st->db));
    return -1;
  }
  tg__bind_str(q, 1, f->query);
  tg__bind_str(q, 2, f->session);
  sqlite3_bind_int64(q, 3, (sqlite3_int64)f->limit);
  int rc;
  while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
    cJSON *h = hit(q);
    if (!h) break;
    cJSON_AddItemToArray(a, h);
  }
  int out = 0;
  if (rc == SQLITE_ROW) {
    tg__errf(err, TG_ERRMSG, "out of memory");
    out = -1;
  } else if (rc != SQLITE_DONE) {
    /* the statement is ours: a plain error while stepping is the query's
     * (fts5: syntax error, no such column); others are the file's */
    out = sqlite3_extended_errcode(st->db) == SQLITE_ERROR ? 1 : -1;
    if (out == 1) snprintf(why, whylen, "%s", sqlite3_errmsg(st->db));
    else tg__errf(err, TG_ERRMSG, "searching: %s", sqlite3_errmsg(st->db));
  }
  sqlite3_finalize(q);
  return out;
}

static int by_score(const void *a, const void *b) {
  double x = cJSON_GetObjectItemCaseSensitive(*(cJSON *const *)a, "score")->valuedouble;
  double y = cJSON_GetObjectItemCaseSensitive(*(cJSON *const *)b, "score")->valuedouble;
  return x < y ? -1 : x > y;
}

/* a's items best first, at most limit. */
static cJSON *best(cJSON *a, size_t limit) {
  size_t n = (size_t)cJSON_GetArraySize(a), k = 0;
  cJSON **v = n ? malloc(n * sizeof *v) : NULL;
  if (n && !v) return a; /* unsorted is still an answer */
  while (a->child) v[k++] = cJSON_DetachItemViaPointer(a, a->child);
  if (n) qsort(v, n, sizeof *v, by_score);
  for (k = 0; k < n; k++) {
    if (k < limit) cJSON_AddItemToArray(a, v[k]);
    else cJSON_Delete(v[k]);
  }
  free(v);
  return a;
}

int tg__sq_search(tg_store *store, const tg_search_filter *f, cJSON **out,
                  char err[TG_ERRMSG]) {
  tg_sqlite *st = tg__sq(store);
  *out = NULL;
  /* every call written (the journals loaded) and indexed: the index runs
   * behind the audit */
  if (tg__sq_flushed(st, err) < 0 || tg__calls_indexed(st, err) < 0)
    return -EIO;
  const tg_search_filter g = *f;
  char why_m[256] = "", why_c[256] = "";
  cJSON *a = cJSON_CreateArray();
  if (!a) {
    tg__errf(err, TG_ERRMSG, "out of memory");
    return -ENOMEM;
  }
  int m = search_half(st, search_messages, &g, a, why_m, sizeof why_m, err);
  int c = m < 0 ? -1
                : search_half(st, search_calls, &g, a, why_c, sizeof why_c,
                              err);
  if (m < 0 || c < 0 || (m == 1 && c == 1)) {
    if (m == 1 && c == 1)
      tg__errf(err, TG_ERRMSG, "bad search query (FTS5 syntax: words, "
               "\"a phrase\", AND/OR/NOT, prefix*, a column: content, "
               "tool_calls, tool, args, result): %s", why_m);
    cJSON_Delete(a);
    return m == 1 && c == 1 ? -EINVAL : -EIO;
  }
  *out = best(a, g.limit);
  return 0;
}
