/*
 * import.c — a session of a JSON export stored (export.c checked and
 * masked it), for the backend's table (store.h): the session under its
 * id or a fresh one when the file has it already, its messages, its
 * calls, in one SAVEPOINT: all or nothing.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sqlite_store.h"
#include "base/json.h"
#include "base/util.h"

typedef struct {
  const cJSON *doc;
  const tg_import_session *s;
  char id[TG_SESSION_ID_MAX];
  int renamed;
  int64_t messages, calls;
} importer;

static void bind_s(sqlite3_stmt *st, int i, const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  if (cJSON_IsString(v))
    sqlite3_bind_text(st, i, v->valuestring, -1, SQLITE_STATIC);
  else sqlite3_bind_null(st, i);
}

static void bind_n(sqlite3_stmt *st, int i, const cJSON *o, const char *k,
                   int real) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  if (!cJSON_IsNumber(v)) sqlite3_bind_null(st, i);
  else if (real) sqlite3_bind_double(st, i, v->valuedouble);
  else sqlite3_bind_int64(st, i, (sqlite3_int64)v->valuedouble);
}

static void bind_b(sqlite3_stmt *st, int i, const cJSON *o, const char *k) {
  sqlite3_bind_int(st, i, cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, k)));
}

/* A JSON member as stored text: a cut one as its string, null or absent
 * as NULL, any other value printed. -1 when out of memory. */
static int bind_j(sqlite3_stmt *st, int i, const cJSON *o, const char *k,
                  int cut) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  if (!v || cJSON_IsNull(v)) return sqlite3_bind_null(st, i), 0;
  if (cut) return sqlite3_bind_text(st, i, v->valuestring, -1, SQLITE_STATIC), 0;
  char *t = tg_json_print(v, 0);
  if (!t) return -1;
  sqlite3_bind_text(st, i, t, -1, free);
  return 0;
}

static int step_done(sqlite3_stmt *st) {
  int rc = sqlite3_step(st);
  sqlite3_reset(st);
  return rc == SQLITE_DONE ? 0 : -1;
}

static int put_messages(sqlite3 *db, importer *im) {
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(db, "INSERT INTO messages (session, role, content,"
                         " tool_calls, ts) VALUES (?1, ?2, ?3, ?4, ?5)", -1,
                         &st, NULL) != SQLITE_OK)
    return -1;
  int rc = 0;
  const cJSON *m;
  cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(im->doc, "messages")) {
    sqlite3_bind_text(st, 1, im->id, -1, SQLITE_STATIC);
    bind_s(st, 2, m, "role");
    bind_s(st, 3, m, "content");
    if (bind_j(st, 4, m, "tool_calls", 0) < 0 ||
        (bind_n(st, 5, m, "ts", 0), step_done(st) < 0)) {
      rc = -1;
      break;
    }
    im->messages++;
  }
  sqlite3_finalize(st);
  return rc;
}

static int put_call(sqlite3_stmt *st, const char *session, const cJSON *k) {
  const cJSON *d = cJSON_GetObjectItemCaseSensitive(k, "decision");
  const cJSON *e = cJSON_GetObjectItemCaseSensitive(k, "error");
  int args_cut = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(k, "args_cut"));
  int res_cut = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(k, "result_cut"));
  bind_s(st, 1, k, "call_id");
  sqlite3_bind_text(st, 2, session, -1, SQLITE_STATIC);
  sqlite3_bind_int64(st, 3, 0);
  bind_n(st, 3, k, "turn", 0);
  if (!cJSON_GetObjectItemCaseSensitive(k, "turn")) sqlite3_bind_int(st, 3, 0);
  bind_s(st, 4, k, "tool");
  if (bind_j(st, 5, k, "args", args_cut) < 0) return -1;
  bind_n(st, 6, k, "args_bytes", 0);
  sqlite3_bind_int(st, 7, args_cut);
  bind_s(st, 8, d, "verdict");
  bind_s(st, 9, d, "rule");
  bind_s(st, 10, d, "where");
  bind_s(st, 11, d, "reason");
  bind_s(st, 12, d, "approval");
  bind_n(st, 13, d, "approval_id", 0);
  if (bind_j(st, 14, k, "hooks", 0) < 0) return -1;
  bind_n(st, 15, k, "attempts", 0);
  if (!cJSON_GetObjectItemCaseSensitive(k, "attempts")) sqlite3_bind_int(st, 15, 0);
  bind_s(st, 16, k, "status");
  int has_e = cJSON_IsObject(e);
  bind_s(st, 17, has_e ? e : NULL, "phase");
  bind_s(st, 18, has_e ? e : NULL, "code");
  bind_s(st, 19, has_e ? e : NULL, "message");
  bind_s(st, 20, has_e ? e : NULL, "suggestion");
  if (has_e) bind_b(st, 21, e, "retryable");
  else sqlite3_bind_null(st, 21);
  if (bind_j(st, 22, k, "result", res_cut) < 0) return -1;
  bind_n(st, 23, k, "result_bytes", 0);
  sqlite3_bind_int(st, 24, res_cut);
  bind_b(st, 25, k, "truncated");
  bind_n(st, 26, k, "ts", 0);
  bind_n(st, 27, k, "duration_ms", 1);
  bind_n(st, 28, k, "generation", 0);
  bind_s(st, 29, k, "parent_call");
  bind_s(st, 30, d, "by");
  /* an agent's call: what its hook added (the links are read, not kept) */
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(k, "agent");
  int has_a = cJSON_IsObject(a);
  bind_s(st, 31, has_a ? a : NULL, "name");
  bind_s(st, 32, has_a ? a : NULL, "event");
  bind_s(st, 33, has_a ? a : NULL, "tool");
  if (bind_j(st, 34, has_a ? a : NULL, "input", 0) < 0) return -1;
  bind_s(st, 35, has_a ? a : NULL, "tool_use_id");
  bind_s(st, 36, has_a ? a : NULL, "answer");
  return step_done(st);
}

static int put_calls(sqlite3 *db, importer *im) {
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(db, tg__audit_insert_sql, -1, &st, NULL) != SQLITE_OK) return -1;
  int rc = 0;
  const cJSON *k;
  cJSON_ArrayForEach(k, cJSON_GetObjectItemCaseSensitive(im->doc, "calls")) {
    if (put_call(st, im->id, k) < 0) {
      rc = -1;
      break;
    }
    im->calls++;
  }
  sqlite3_finalize(st);
  return rc;
}

/* The session's id, or a fresh one when the file has it already. */
static int pick_id(sqlite3 *db, importer *im) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db, "SELECT 1 FROM sessions WHERE id = ?1", -1,
                              &st, NULL);
  if (rc != SQLITE_OK) return -1;
  snprintf(im->id, sizeof im->id, "%s", im->s->id);
  for (int tries = 0; tries < 8; tries++) {
    sqlite3_bind_text(st, 1, im->id, -1, SQLITE_STATIC);
    rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc != SQLITE_ROW) break;
    im->renamed = 1;
    tg__session_fresh_id(im->id);
  }
  sqlite3_finalize(st);
  return rc == SQLITE_DONE ? 0 : -1;
}

static int put_session(sqlite3 *db, importer *im) {
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(db, "INSERT INTO sessions (id, project, title,"
                         " started, ended, agent, turn) VALUES (?1, ?2, ?3,"
                         " ?4, ?5, ?6, ?7)", -1, &st, NULL) != SQLITE_OK)
    return -1;
  sqlite3_bind_text(st, 1, im->id, -1, SQLITE_STATIC);
  if (im->s->project) sqlite3_bind_text(st, 2, im->s->project, -1, SQLITE_STATIC);
  if (im->s->title) sqlite3_bind_text(st, 3, im->s->title, -1, SQLITE_STATIC);
  sqlite3_bind_int64(st, 4, im->s->started);
  if (!im->s->ended_null) sqlite3_bind_int64(st, 5, im->s->ended);
  if (im->s->agent) sqlite3_bind_text(st, 6, im->s->agent, -1, SQLITE_STATIC);
  sqlite3_bind_int64(st, 7, im->s->turn);
  int rc = step_done(st);
  sqlite3_finalize(st);
  return rc;
}

static int64_t import_all(sqlite3 *db, void *arg, char *err, size_t errlen) {
  importer *im = arg;
  if (tg__savepoint(db, err, errlen) < 0) return -EIO;
  int ok = pick_id(db, im) == 0 && put_session(db, im) == 0 &&
           put_messages(db, im) == 0 && put_calls(db, im) == 0;
  if (!ok) snprintf(err, errlen, "importing: %s", sqlite3_errmsg(db));
  tg__savepoint_end(db, ok);
  return ok ? 0 : -EIO;
}

int tg__sq_session_import(tg_store *st, const cJSON *doc,
                          const tg_import_session *s, tg_import_report *rep,
                          char err[TG_ERRMSG]) {
  importer im = {.doc = doc, .s = s};
  int64_t rc = tg__sq_write(tg__sq(st), import_all, &im, err);
  if (rc < 0) return (int)rc;
  snprintf(rep->session, sizeof rep->session, "%s", im.id);
  rep->renamed = im.renamed;
  rep->messages = im.messages;
  rep->calls = im.calls;
  return 0;
}
