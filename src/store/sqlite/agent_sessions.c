/*
 * agent_sessions.c — what a coding agent's hooks keep of a session
 * (schema step 4): the agent's name, the turn its prompts counted and how
 * far its transcript's usage was read. Each hook event is its own process
 * unless a resident instance answers, so this lives in the database, not
 * in a runtime: two hook processes of one session count one turn each,
 * and a Stop's usage is counted once however many processes read it.
 *
 * Every write makes the session when it is new (started now, the project
 * folder the agent gave, as given: it need not exist here), so a hook
 * installed in the middle of a session works. Session ids are the agent's
 * (hostile): checked like every session id (store/session_api.c), bound,
 * never used as a path.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sqlite_store.h"
#include "base/util.h"

typedef struct {
  const char *id, *agent, *project;
  tg_agent_op op;
  const char *old_mark, *new_mark;   /* tg__agent_stop's */
  int64_t now;
} agent_w;

/* Runs sql with ?1 id, ?2 agent, ?3 project, ?4 now, ?5 ?6 the marks. The
 * first column of its row (RETURNING), 0 without one; -EIO with err. */
static int64_t run(sqlite3 *db, const agent_w *w, const char *sql, char *err,
                   size_t errlen) {
  sqlite3_stmt *st = NULL;
  int64_t out = 0;
  int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
  if (rc == SQLITE_OK) {
    tg__bind_str(st, 1, w->id);
    tg__bind_str(st, 2, w->agent);
    tg__bind_str(st, 3, w->project);
    sqlite3_bind_int64(st, 4, w->now);
    tg__bind_str(st, 5, w->old_mark);
    tg__bind_str(st, 6, w->new_mark);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
      out = sqlite3_column_int64(st, 0);
      rc = sqlite3_step(st);
    }
  }
  if (rc != SQLITE_DONE)
    snprintf(err, errlen, "session %s: %s", w->id, sqlite3_errmsg(db));
  sqlite3_finalize(st);
  return rc == SQLITE_DONE ? out : -EIO;
}

/* On the writer: the session made if new, then the op — in the writer's
 * transaction (BEGIN IMMEDIATE), so a turn is counted once however many
 * processes count at the same time. */
static int64_t agent_write(sqlite3 *db, void *arg, char *err, size_t errlen) {
  static const char upsert[] =
      "INSERT INTO sessions (id, project, started, agent) VALUES (?1, ?3,"
      " ?4, ?2) ON CONFLICT (id) DO UPDATE SET agent = coalesce(?2, agent),"
      " project = coalesce(project, ?3)";
  static const char *const ops[] = {
      [TG_AGENT_NOTE] = NULL,
      [TG_AGENT_START] = "UPDATE sessions SET ended = NULL WHERE id = ?1",
      [TG_AGENT_END] = "UPDATE sessions SET ended = ?4 WHERE id = ?1",
      [TG_AGENT_TURN] =
          "UPDATE sessions SET turn = turn + 1 WHERE id = ?1 RETURNING turn"};
  agent_w *w = arg;
  int64_t rc = run(db, w, upsert, err, errlen);
  if (rc >= 0 && ops[w->op]) rc = run(db, w, ops[w->op], err, errlen);
  return rc;
}

int64_t tg__sq_agent_session(tg_store *st, const char *id, const char *agent,
                             const char *project, tg_agent_op op,
                             char err[TG_ERRMSG]) {
  agent_w w = {id, agent, project, op, NULL, NULL, (int64_t)tg__wall_ms()};
  return tg__sq_write(tg__sq(st), agent_write, &w, err);
}

/* A Stop's usage and the mark it moves, in one savepoint: counted once
 * (the mark moves only from where this reader read), and never the mark
 * without the records. */
typedef struct {
  agent_w w;
  const tg_usage *u;
  size_t n;
} stop_w;

static int64_t stop_write(sqlite3 *db, void *arg, char *err, size_t errlen) {
  static const char swap[] =
      "UPDATE sessions SET transcript_mark = ?6 WHERE id = ?1 AND"
      " transcript_mark IS ?5";
  stop_w *s = arg;
  if (tg__savepoint(db, err, errlen) < 0) return -EIO;
  int64_t rc = agent_write(db, &s->w, err, errlen);
  if (rc >= 0) rc = run(db, &s->w, swap, err, errlen);
  int moved = rc >= 0 && sqlite3_changes(db) == 1;
  for (size_t i = 0; moved && rc >= 0 && i < s->n; i++)
    rc = tg__usage_insert(db, &s->u[i], err, errlen);
  if (tg__savepoint_end(db, rc >= 0) < 0 && rc >= 0) {
    snprintf(err, errlen, "session %s: the usage could not be committed",
             s->w.id);
    rc = -EIO;
  }
  return rc < 0 ? rc : moved;
}

int tg__sq_agent_stop(tg_store *st, const char *id, const char *agent,
                      const char *project, const char *old_mark,
                      const char *new_mark, const tg_usage *u, size_t n,
                      char err[TG_ERRMSG]) {
  stop_w s = {{id, agent, project, TG_AGENT_NOTE, old_mark, new_mark,
               (int64_t)tg__wall_ms()}, u, n};
  int64_t rc = tg__sq_write(tg__sq(st), stop_write, &s, err);
  return rc < 0 ? (int)rc : rc > 0;
}

/* Reads the session's turn and mark on the caller's connection. */
int tg__sq_agent_read(tg_store *store, const char *id, int64_t *turn,
                      char **mark, char err[TG_ERRMSG]) {
  tg_sqlite *st = tg__sq(store);
  /* no flush: every write of these columns waited for its commit
   * (tg__sq_write), and a flush would take the write lock for a read */
  sqlite3_stmt *q = NULL;
  int rc = sqlite3_prepare_v2(st->db, "SELECT turn, transcript_mark FROM"
                              " sessions WHERE id = ?1", -1, &q, NULL);
  if (rc == SQLITE_OK) {
    tg__bind_str(q, 1, id);
    rc = sqlite3_step(q);
  }
  if (rc == SQLITE_ROW) {
    const char *m = (const char *)sqlite3_column_text(q, 1);
    if (turn) *turn = sqlite3_column_int64(q, 0);
    if (mark && m && !(*mark = tg__strdup(m))) rc = SQLITE_NOMEM;
    else rc = SQLITE_DONE;
  }
  if (rc != SQLITE_DONE)
    tg__db_error(st->db, st->base.path, "cannot read its sessions", err);
  sqlite3_finalize(q);
  return rc == SQLITE_DONE ? 0 : -EIO;
}
