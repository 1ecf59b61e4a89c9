/*
 * approvals.c — remembered approvals in the database: stored by the writer
 * (an approve-always answer) or by `toolgate approvals grant`, revoked by
 * `toolgate approvals revoke`, and looked up when a call asks. The lookup
 * is the one read the loop makes itself: one prepared statement over the
 * approvals of the call's tool (an index of the ones in force), each then
 * checked by the rule every approval follows (core/approval.c). README,
 * "Storage", gives its measured cost.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "store.h"
#include "base/util.h"

static const char find_sql[] =
    "SELECT id, scope, args_key, arg, glob, place, session, project, expires"
    " FROM approvals WHERE tool = ?1 AND revoked IS NULL"
    " AND (expires IS NULL OR expires > ?2)"
    " AND ((place = 'session' AND session = ?3)"
    " OR (place = 'project' AND project = ?4))";

static void bind_str(sqlite3_stmt *st, int i, const char *s) {
  if (s) sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
  else sqlite3_bind_null(st, i);
}

static const char *col(sqlite3_stmt *st, int i) {
  return (const char *)sqlite3_column_text(st, i);
}

/* The row as an approval (borrowing the statement's strings). */
static int row_approval(sqlite3_stmt *st, const char *tool, tg_approval *a) {
  int scope = tg__scope_of(col(st, 1)), where = tg__where_of(col(st, 5));
  if (scope < 0 || where < 0) return -1; /* a row edited by hand: skip */
  *a = (tg_approval){.id = sqlite3_column_int64(st, 0),
                     .scope = (tg_always_scope)scope,
                     .tool = tool,
                     .args_key = col(st, 2),
                     .arg = col(st, 3),
                     .glob = col(st, 4),
                     .where = (tg_always_where)where,
                     .session = col(st, 6),
                     .project = col(st, 7),
                     .until_ms = sqlite3_column_int64(st, 8)};
  return 0;
}

int tg__approval_find(tg_store *st, tg_approval_query *q, int64_t *id) {
  if (!st->find && sqlite3_prepare_v3(st->db, find_sql, -1,
                                      SQLITE_PREPARE_PERSISTENT, &st->find,
                                      NULL) != SQLITE_OK)
    return 0; /* cannot read: nothing is remembered, so the call asks */
  sqlite3_stmt *s = st->find;
  bind_str(s, 1, q->tool);
  sqlite3_bind_int64(s, 2, q->now_ms);
  bind_str(s, 3, q->session);
  bind_str(s, 4, q->project);
  int hit = 0;
  tg_approval a;
  while (!hit && sqlite3_step(s) == SQLITE_ROW)
    if (row_approval(s, q->tool, &a) == 0 && tg__approval_covers(&a, q)) {
      hit = 1;
      *id = a.id;
    }
  sqlite3_reset(s);
  return hit;
}

int64_t tg__approval_insert(sqlite3 *db, const tg_approval *a, const char *by,
                            int64_t now_ms, char *err, size_t errlen) {
  static const char sql[] =
      "INSERT INTO approvals (tool, scope, args_key, arg, glob, place,"
      " session, project, created, expires, by)"
      " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)";
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
  if (rc == SQLITE_OK) {
    int proj = a->where == TG_WHERE_PROJECT;
    bind_str(st, 1, a->tool);
    bind_str(st, 2, tg__scope_name(a->scope));
    bind_str(st, 3, a->scope == TG_SCOPE_ARGS ? a->args_key : NULL);
    bind_str(st, 4, a->scope == TG_SCOPE_PATTERN ? a->arg : NULL);
    bind_str(st, 5, a->scope == TG_SCOPE_PATTERN ? a->glob : NULL);
    bind_str(st, 6, tg__where_name(a->where));
    bind_str(st, 7, proj ? NULL : a->session);
    bind_str(st, 8, proj ? a->project : NULL);
    sqlite3_bind_int64(st, 9, now_ms);
    if (a->until_ms) sqlite3_bind_int64(st, 10, a->until_ms);
    bind_str(st, 11, by);
    rc = sqlite3_step(st);
  }
  int64_t id = rc == SQLITE_DONE ? sqlite3_last_insert_rowid(db) : 0;
  if (!id) snprintf(err, errlen, "storing the approval: %s", sqlite3_errmsg(db));
  sqlite3_finalize(st);
  return id ? id : -EIO;
}

int tg__approval_revoke(sqlite3 *db, int64_t id, int64_t now_ms, char *err,
                        size_t errlen) {
  static const char sql[] =
      "UPDATE approvals SET revoked = ?2 WHERE id = ?1 AND revoked IS NULL"
      " AND (expires IS NULL OR expires > ?2)";
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
  if (rc == SQLITE_OK) {
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int64(st, 2, now_ms);
    rc = sqlite3_step(st);
  }
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE) {
    snprintf(err, errlen, "revoking approval %lld: %s", (long long)id,
             sqlite3_errmsg(db));
    return -EIO;
  }
  if (sqlite3_changes(db) == 0) {
    snprintf(err, errlen, "no approval in force has id %lld (see "
             "'toolgate approvals list')", (long long)id);
    return -ENOENT;
  }
  return 0;
}

static void add_opt(cJSON *o, const char *k, sqlite3_stmt *st, int i) {
  if (sqlite3_column_type(st, i) == SQLITE_NULL) return;
  if (sqlite3_column_type(st, i) == SQLITE_INTEGER)
    cJSON_AddNumberToObject(o, k, (double)sqlite3_column_int64(st, i));
  else
    cJSON_AddStringToObject(o, k, col(st, i));
}

static cJSON *approval_json(sqlite3_stmt *st) {
  cJSON *o = cJSON_CreateObject();
  static const char *const names[] = {"id", "tool", "scope", "args", "arg",
                                      "glob", "where", "session", "project",
                                      "created", "until", "revoked", "by"};
  for (int i = 0; i < 13; i++) {
    const char *s = i == 3 ? col(st, i) : NULL;
    cJSON *args = s ? tg_json_parse(s, strlen(s), NULL, NULL, 0) : NULL;
    if (args) cJSON_AddItemToObject(o, "args", args);
    else add_opt(o, names[i], st, i);
  }
  return o;
}

cJSON *tg__approvals_query(sqlite3 *db, int all, int64_t now_ms,
                           char err[TG_ERRMSG]) {
  static const char sql[] =
      "SELECT id, tool, scope, args_key, arg, glob, place, session, project,"
      " created, expires, revoked, by FROM approvals"
      " WHERE ?1 OR (revoked IS NULL AND (expires IS NULL OR expires > ?2))"
      " ORDER BY id";
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
    tg__errf(err, TG_ERRMSG, "reading approvals: %s", sqlite3_errmsg(db));
    return NULL;
  }
  sqlite3_bind_int(st, 1, all != 0);
  sqlite3_bind_int64(st, 2, now_ms);
  cJSON *out = cJSON_CreateArray();
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW)
    cJSON_AddItemToArray(out, approval_json(st));
  if (rc != SQLITE_DONE) {
    tg__errf(err, TG_ERRMSG, "reading approvals: %s", sqlite3_errmsg(db));
    cJSON_Delete(out);
    out = NULL;
  }
  sqlite3_finalize(st);
  return out;
}
