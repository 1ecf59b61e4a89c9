/*
 * taint.c — sessions' taints, for the backend's table (store.h; schema
 * step 6). A raise is one upsert on the writer that keeps the higher
 * level, so two processes tainting one session at once keep the first
 * cause of the highest level; reads go to the caller's connection. Session
 * ids, reasons and call ids are hostile text: bound, never spliced.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "sqlite_store.h"
#include "base/util.h"

typedef struct {
  const char *id;
  const tg_taint *t;
} taint_w;

static void bind_opt(sqlite3_stmt *st, int k, const char *s) {
  tg__bind_str(st, k, s && *s ? s : NULL);
}

static int64_t taint_write(sqlite3 *db, void *arg, char *err, size_t errlen) {
  taint_w *w = arg;
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(
      db, "INSERT INTO taints (session, level, reason, call_id, tool, ts)"
      " VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (session) DO UPDATE SET"
      " level = excluded.level, reason = excluded.reason,"
      " call_id = excluded.call_id, tool = excluded.tool, ts = excluded.ts"
      " WHERE excluded.level > taints.level", -1, &st, NULL);
  if (rc == SQLITE_OK) {
    tg__bind_str(st, 1, w->id);
    sqlite3_bind_int(st, 2, w->t->level);
    tg__bind_str(st, 3, w->t->reason);
    bind_opt(st, 4, w->t->call_id);
    bind_opt(st, 5, w->t->tool);
    sqlite3_bind_int64(st, 6, w->t->ts_ms);
    rc = sqlite3_step(st);
  }
  if (rc != SQLITE_DONE)
    snprintf(err, errlen, "session %s: keeping its taint: %s", w->id,
             sqlite3_errmsg(db));
  sqlite3_finalize(st);
  return rc != SQLITE_DONE ? -EIO : sqlite3_changes(db) > 0;
}

int tg__sq_taint_raise(tg_store *st, const char *id, const tg_taint *t,
                       char err[TG_ERRMSG]) {
  taint_w w = {id, t};
  int64_t rc = tg__sq_write(tg__sq(st), taint_write, &w, err);
  return (int)rc;
}

static void column(sqlite3_stmt *q, int k, char *dst, size_t cap) {
  const char *s = (const char *)sqlite3_column_text(q, k);
  snprintf(dst, cap, "%s", s ? s : "");
}

int tg__sq_taint_read(tg_store *store, const char *id, tg_taint *out,
                      char err[TG_ERRMSG]) {
  tg_sqlite *st = tg__sq(store);
  /* no flush: every raise waited for its commit (tg__sq_write) */
  sqlite3_stmt *q = NULL;
  int found = 0;
  memset(out, 0, sizeof *out);
  int rc = sqlite3_prepare_v2(st->db, "SELECT level, reason, call_id, tool,"
                              " ts FROM taints WHERE session = ?1", -1, &q,
                              NULL);
  if (rc == SQLITE_OK) {
    tg__bind_str(q, 1, id);
    rc = sqlite3_step(q);
  }
  if (rc == SQLITE_ROW) {
    out->level = sqlite3_column_int(q, 0);
    column(q, 1, out->reason, sizeof out->reason);
    column(q, 2, out->call_id, sizeof out->call_id);
    column(q, 3, out->tool, sizeof out->tool);
    out->ts_ms = sqlite3_column_int64(q, 4);
    found = out->level > 0;
    rc = SQLITE_DONE;
  }
  if (rc != SQLITE_DONE)
    tg__db_error(st->db, st->base.path, "cannot read its taints", err);
  sqlite3_finalize(q);
  return rc == SQLITE_DONE ? found : -EIO;
}

static int64_t clear_write(sqlite3 *db, void *arg, char *err, size_t errlen) {
  const char *id = arg;
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db, "DELETE FROM taints WHERE session = ?1",
                              -1, &st, NULL);
  if (rc == SQLITE_OK) {
    tg__bind_str(st, 1, id);
    rc = sqlite3_step(st);
  }
  if (rc != SQLITE_DONE)
    snprintf(err, errlen, "session %s: clearing its taint: %s", id,
             sqlite3_errmsg(db));
  sqlite3_finalize(st);
  return rc != SQLITE_DONE ? -EIO : sqlite3_changes(db) > 0 ? 0 : -ENOENT;
}

int tg__sq_taint_clear(tg_store *st, const char *id, char err[TG_ERRMSG]) {
  int64_t rc = tg__sq_write(tg__sq(st), clear_write, (void *)id, err);
  if (rc == -ENOENT)
    snprintf(err, TG_ERRMSG, "session %s is not tainted", id);
  return (int)rc;
}
