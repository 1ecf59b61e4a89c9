/*
 * usage.c — the usage ledger: one row per model call (session, turn,
 * model, tokens, cost, time), summed from a time for budgets.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "sqlite_store.h"
#include "base/util.h"

int tg__usage_insert(sqlite3 *db, const tg_usage *u, char *err,
                     size_t errlen) {
  static const char sql[] =
      "INSERT INTO usage (ts, session, turn, model, input_tokens,"
      " output_tokens, cost) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)";
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
  if (rc == SQLITE_OK) {
    sqlite3_bind_int64(st, 1, u->ts_ms);
    sqlite3_bind_text(st, 2, u->session, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, u->turn);
    sqlite3_bind_text(st, 4, u->model, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 5, u->input_tokens);
    sqlite3_bind_int64(st, 6, u->output_tokens);
    sqlite3_bind_double(st, 7, u->cost);
    rc = sqlite3_step(st);
  }
  if (rc != SQLITE_DONE)
    snprintf(err, errlen, "storing usage: %s", sqlite3_errmsg(db));
  sqlite3_finalize(st);
  return rc == SQLITE_DONE ? 0 : -EIO;
}

int tg__usage_sum(sqlite3 *db, const tg_usage_filter *f, tg_usage_total *out,
                  char err[TG_ERRMSG]) {
  static const char sql[] =
      "SELECT count(*), total(input_tokens), total(output_tokens),"
      " total(cost) FROM usage WHERE ts >= ?1 AND (?2 = 0 OR ts < ?2)"
      " AND (?3 IS NULL OR session = ?3) AND (?4 IS NULL OR model = ?4)";
  static const tg_usage_filter none;
  if (!f) f = &none;
  int64_t since = f->since_ms;
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
  if (rc == SQLITE_OK) {
    sqlite3_bind_int64(st, 1, since);
    sqlite3_bind_int64(st, 2, f->until_ms);
    if (f->session) sqlite3_bind_text(st, 3, f->session, -1, SQLITE_STATIC);
    if (f->model) sqlite3_bind_text(st, 4, f->model, -1, SQLITE_STATIC);
    rc = sqlite3_step(st);
  }
  if (rc == SQLITE_ROW) {
    *out = (tg_usage_total){sqlite3_column_int64(st, 0),
                            (int64_t)sqlite3_column_double(st, 1),
                            (int64_t)sqlite3_column_double(st, 2),
                            sqlite3_column_double(st, 3), since};
  } else {
    tg__errf(err, TG_ERRMSG, "summing usage: %s", sqlite3_errmsg(db));
  }
  sqlite3_finalize(st);
  return rc == SQLITE_ROW ? 0 : -EIO;
}
