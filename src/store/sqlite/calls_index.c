/*
 * calls_index.c — the calls' full-text index (calls_fts), kept behind the
 * audit. Indexing a record costs more than writing it (FTS5 flushes a new
 * segment per statement): done by a trigger inside the audit's commit,
 * it doubled the time an answered call waits for its record. Since schema
 * version 8 the commit the answer waits for holds the row alone; the index
 * takes the rows past its watermark (meta 'calls_indexed', the highest
 * calls.id it holds) later, in a transaction of their own:
 *
 *  - the writer thread, once idle or once INDEX_BEHIND rows wait, and
 *    when it stops with that many left (writer.c), INDEX_CHUNK calls per
 *    transaction so
 *    that records queued meanwhile wait for one chunk at most;
 *  - a search, before it looks (tg__calls_indexed, through the writer):
 *    so search finds every record, also those a crash left unindexed;
 *  - triggers still index at once a row at or below the watermark (an id
 *    reused after a delete) and keep deletes and updates of indexed rows
 *    in step, whoever makes them.
 */
#include <stdio.h>
#include "sqlite_store.h"

/* The first `limit` calls past the watermark (-1: all) into the index,
 * and the watermark to the last of them. */
static const char index_behind[] =
    "INSERT INTO calls_fts(rowid, tool, args, result)"
    " SELECT id, tool, args, result FROM calls WHERE id >"
    " (SELECT value FROM meta WHERE key = 'calls_indexed') ORDER BY id"
    " LIMIT %d";
static const char move_mark[] =
    "UPDATE meta SET value = coalesce((SELECT max(id) FROM (SELECT id FROM"
    " calls WHERE id > meta.value ORDER BY id LIMIT %d)), value)"
    " WHERE key = 'calls_indexed'";

int64_t tg__calls_index_some(sqlite3 *db, int limit, char *err,
                             size_t errlen) {
  char sql[sizeof index_behind + sizeof move_mark + 16], *msg = NULL;
  int64_t n = 0;
  if (tg__savepoint(db, err, errlen) < 0) return -1;
  snprintf(sql, sizeof sql, index_behind, limit);
  int rc = sqlite3_exec(db, sql, NULL, NULL, &msg);
  if (rc == SQLITE_OK) {
    n = sqlite3_changes(db);
    snprintf(sql, sizeof sql, move_mark, limit);
    rc = sqlite3_exec(db, sql, NULL, NULL, &msg);
  }
  if (rc != SQLITE_OK)
    snprintf(err, errlen, "indexing the calls for search: %s",
             msg ? msg : sqlite3_errmsg(db));
  sqlite3_free(msg);
  tg__savepoint_end(db, rc == SQLITE_OK);
  return rc == SQLITE_OK ? n : -1;
}

int64_t tg__calls_index(sqlite3 *db, void *arg, char *err, size_t errlen) {
  (void)arg;
  return tg__calls_index_some(db, -1, err, errlen) < 0 ? -1 : 0;
}

int tg__calls_indexed(tg_sqlite *st, char err[TG_ERRMSG]) {
  return tg__sq_write(st, tg__calls_index, NULL, err) < 0 ? -1 : 0;
}
