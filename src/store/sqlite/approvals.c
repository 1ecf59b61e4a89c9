/*
 * approvals.c — remembered approvals in the database: stored by the writer
 * (an approve-always answer) or by `toolgate approvals grant`, revoked by
 * `toolgate approvals revoke`, and looked up when a call asks.
 *
 * The lookup runs on the loop, so it reads no file: the loop holds a
 * snapshot of the approvals in force, sorted by tool, that the writer
 * thread loads (tg__snap_load) at start, after it stores or revokes one,
 * and when another connection changed them — it polls PRAGMA data_version
 * and the `approvals` counter that triggers keep in `meta`, every 100 ms
 * when idle and after every batch (writer.c). Each entry is judged by the
 * rule every approval follows (core/approval.c). An approval of exact
 * args is stored as a digest and a masked copy (approval_seal.c): the
 * lookup digests the call's args under the database's key.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sqlite_store.h"
#include "base/util.h"
#include "base/json.h"

/* ---- the snapshot the loop looks up ----------------------------------- */

struct tg_snap {
  size_t n;
  tg_approval *a;            /* sorted by tool; the strings are the snap's */
};

static const char *col(sqlite3_stmt *st, int i) {
  return (const char *)sqlite3_column_text(st, i);
}

void tg__snap_free(tg_snap *s) {
  if (!s) return;
  for (size_t i = 0; i < s->n; i++) {
    tg_approval *a = &s->a[i];
    free((char *)a->tool);
    free((char *)a->args_digest);
    free((char *)a->arg);
    free((char *)a->glob);
    free((char *)a->session);
    free((char *)a->project);
  }
  free(s->a);
  free(s);
}

static char *dup_col(sqlite3_stmt *st, int i, int *nomem) {
  const char *v = col(st, i);
  char *d = v ? tg__strdup(v) : NULL;
  if (v && !d) *nomem = 1;
  return d;
}

/* The row as an approval with strings of its own; -1 for a row edited by
 * hand into something that is none (skipped) or out of memory (*nomem). */
static int row_approval(sqlite3_stmt *st, tg_approval *a, int *nomem) {
  int scope = tg__scope_of(col(st, 2)), where = tg__where_of(col(st, 6));
  if (scope < 0 || where < 0 || !col(st, 1)) return -1;
  *a = (tg_approval){.id = sqlite3_column_int64(st, 0),
                     .scope = (tg_always_scope)scope,
                     .tool = dup_col(st, 1, nomem),
                     .args_digest = dup_col(st, 3, nomem),
                     .arg = dup_col(st, 4, nomem),
                     .glob = dup_col(st, 5, nomem),
                     .where = (tg_always_where)where,
                     .session = dup_col(st, 7, nomem),
                     .project = dup_col(st, 8, nomem),
                     .until_ms = sqlite3_column_int64(st, 9)};
  return 0;
}

static int by_tool(const void *x, const void *y) {
  return strcmp(((const tg_approval *)x)->tool, ((const tg_approval *)y)->tool);
}

/* Appends the row to s (growing it); -1 when out of memory. */
static int snap_add(tg_snap *s, size_t *cap, sqlite3_stmt *st) {
  if (s->n == *cap) {
    size_t c = *cap ? *cap * 2 : 16;
    tg_approval *a = realloc(s->a, c * sizeof *a);
    if (!a) return -1;
    s->a = a;
    *cap = c;
  }
  int nomem = 0;
  if (row_approval(st, &s->a[s->n], &nomem) < 0) return 0;
  s->n++; /* counted even when out of memory: freed with the rest */
  return nomem ? -1 : 0;
}

tg_snap *tg__snap_load(sqlite3 *db, int64_t now_ms) {
  static const char sql[] =
      "SELECT id, tool, scope, args_digest, arg, glob, place, session,"
      " project, expires FROM approvals WHERE revoked IS NULL"
      " AND (expires IS NULL OR expires > ?1)";
  tg_snap *s = calloc(1, sizeof *s);
  sqlite3_stmt *st = NULL;
  size_t cap = 0;
  int rc = s ? sqlite3_prepare_v2(db, sql, -1, &st, NULL) : SQLITE_NOMEM;
  if (rc == SQLITE_OK) sqlite3_bind_int64(st, 1, now_ms);
  while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW)
    rc = snap_add(s, &cap, st) < 0 ? SQLITE_NOMEM : SQLITE_OK;
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE) {
    tg__snap_free(s);
    return NULL;
  }
  if (s->n) qsort(s->a, s->n, sizeof *s->a, by_tool);
  return s;
}

int tg__snap_find(const tg_snap *s, tg_approval_query *q, int64_t *id) {
  if (!s || !s->n || !q->tool) return 0;
  size_t lo = 0, hi = s->n; /* the first entry of the tool */
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (strcmp(s->a[mid].tool, q->tool) < 0) lo = mid + 1;
    else hi = mid;
  }
  for (size_t i = lo; i < s->n && !strcmp(s->a[i].tool, q->tool); i++)
    if (tg__approval_covers(&s->a[i], q)) {
      *id = s->a[i].id;
      return 1;
    }
  return 0;
}

int64_t tg__approvals_version(sqlite3 *db) {
  sqlite3_stmt *st = NULL;
  int64_t v = -1;
  if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = 'approvals'",
                         -1, &st, NULL) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW)
    v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return v;
}

int64_t tg__approval_insert(sqlite3 *db, const tg_approval *a, const char *by,
                            int64_t now_ms, char *err, size_t errlen) {
  static const char sql[] =
      "INSERT INTO approvals (tool, scope, args_digest, arg, glob, place,"
      " session, project, created, expires, by, args_preview)"
      " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)";
  sqlite3_stmt *st = NULL;
  if (a->scope == TG_SCOPE_ARGS && !a->args_digest) {
    snprintf(err, errlen, "storing the approval: its args are not sealed");
    return -EINVAL;
  }
  int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
  if (rc == SQLITE_OK) {
    int proj = a->where == TG_WHERE_PROJECT;
    tg__bind_str(st, 1, a->tool);
    tg__bind_str(st, 2, tg__scope_name(a->scope));
    int args = a->scope == TG_SCOPE_ARGS;
    tg__bind_str(st, 3, args ? a->args_digest : NULL); /* never args_key */
    tg__bind_str(st, 4, a->scope == TG_SCOPE_PATTERN ? a->arg : NULL);
    tg__bind_str(st, 5, a->scope == TG_SCOPE_PATTERN ? a->glob : NULL);
    tg__bind_str(st, 6, tg__where_name(a->where));
    tg__bind_str(st, 7, proj ? NULL : a->session);
    tg__bind_str(st, 8, proj ? a->project : NULL);
    sqlite3_bind_int64(st, 9, now_ms);
    if (a->until_ms) sqlite3_bind_int64(st, 10, a->until_ms);
    tg__bind_str(st, 11, by);
    tg__bind_str(st, 12, args ? a->args_preview : NULL);
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
      "SELECT id, tool, scope, args_preview, arg, glob, place, session,"
      " project, created, expires, revoked, by FROM approvals"
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
