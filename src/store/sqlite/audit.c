/*
 * audit.c — the audit trail: one row of `calls` per call, whatever its end
 * (what was asked, how it was judged, how it ended). Rows are written by
 * the writer thread (writer.c) from the record the chain hands over
 * (core/sink.h): the args and the result are printed there, off the
 * loop, and kept up to audit_args_max /
 * audit_result_max bytes (cut at a UTF-8 boundary, the full size kept
 * beside). Read back as JSON for `toolgate log` and hosts; a coding
 * agent's calls with their hook events linked (below).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sqlite_store.h"
#include "base/util.h"
#include "base/json.h"

/* The one INSERT of a call row: the audit and the import (import.c) share it. */
const char tg__audit_insert_sql[] =
    "INSERT INTO calls (call_id, session, turn, tool, args, args_bytes,"
    " args_cut, verdict, rule, rule_where, reason, approval, approval_id,"
    " hooks, attempts, status, error_phase, error_code, error_message,"
    " error_suggestion, error_retryable, result, result_bytes, result_cut,"
    " truncated, ts, duration_ms, generation, parent_call, decided_by, agent,"
    " agent_event, agent_tool, agent_input, agent_call, agent_answer) VALUES"
    " (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15,"
    " ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29,"
    " ?30, ?31, ?32, ?33, ?34, ?35, ?36)";

int tg__audit_prepare(sqlite3 *db, sqlite3_stmt **st) {
  return sqlite3_prepare_v3(db, tg__audit_insert_sql, -1, SQLITE_PREPARE_PERSISTENT, st,
                            NULL);
}

/* The first max bytes of s (n long), not splitting a UTF-8 sequence. */
static size_t cut_at(const char *s, size_t n, size_t max) {
  if (n <= max) return n;
  size_t k = max;
  while (k > 0 && ((unsigned char)s[k] & 0xC0) == 0x80) k--;
  return k;
}

/* v's JSON text into columns text, bytes and cut (NULL v: NULLs). The
 * text is handed to SQLite with free() as its destructor. */
static void bind_json(sqlite3_stmt *st, int text, int bytes, int cut,
                      const cJSON *v, size_t max) {
  char *s = v ? tg_json_print(v, 0) : NULL;
  if (!s) {
    sqlite3_bind_null(st, text);
    sqlite3_bind_null(st, bytes);
    if (cut) sqlite3_bind_int(st, cut, 0);
    if (v) sqlite3_bind_text(st, text, "(out of memory)", -1, SQLITE_STATIC);
    return;
  }
  size_t n = strlen(s), k = cut_at(s, n, max);
  if (bytes) sqlite3_bind_int64(st, bytes, (sqlite3_int64)n);
  if (cut) sqlite3_bind_int(st, cut, k < n);
  sqlite3_bind_text(st, text, s, (int)k, free);
}

static void bind_error(sqlite3_stmt *st, const tg_err *e) {
  int has = e && e->phase != TG_PHASE_NONE;
  tg__bind_str(st, 17, has ? tg_phase_name(e->phase) : NULL);
  tg__bind_str(st, 18, has ? (e->code ? e->code : tg_error_code_name(TG_E_NOMEM))
                       : NULL);
  tg__bind_str(st, 19, has ? e->message : NULL);
  tg__bind_str(st, 20, has ? e->suggestion : NULL);
  if (has) sqlite3_bind_int(st, 21, e->retryable);
  else sqlite3_bind_null(st, 21);
}

int tg__audit_insert(sqlite3_stmt *st, const tg_audit_rec *r,
                     const tg_audit_caps *caps) {
  tg__bind_str(st, 1, r->call_id);
  tg__bind_str(st, 2, r->session);
  sqlite3_bind_int64(st, 3, r->turn);
  tg__bind_str(st, 4, r->tool);
  bind_json(st, 5, 6, 7, r->args, caps->args_max);
  tg__bind_str(st, 8, r->no_verdict ? NULL : tg_verdict_name(r->verdict));
  tg__bind_str(st, 9, r->rule);
  tg__bind_str(st, 10, r->rule_where);
  tg__bind_str(st, 11, r->reason);
  tg__bind_str(st, 12, r->approval);
  if (r->approval_id) sqlite3_bind_int64(st, 13, r->approval_id);
  else sqlite3_bind_null(st, 13);
  bind_json(st, 14, 0, 0, r->hooks, SIZE_MAX);
  sqlite3_bind_int(st, 15, r->attempts);
  tg__bind_str(st, 16, tg_status_name(r->status));
  bind_error(st, r->error);
  bind_json(st, 22, 23, 24, r->result, caps->result_max);
  sqlite3_bind_int(st, 25, r->truncated);
  sqlite3_bind_int64(st, 26, r->ts_ms);
  sqlite3_bind_double(st, 27, r->duration_ms);
  sqlite3_bind_int64(st, 28, (sqlite3_int64)r->generation);
  tg__bind_str(st, 29, r->parent_call);
  tg__bind_str(st, 30, r->decided_by);
  const tg_audit_agent *a = &r->agent;
  tg__bind_str(st, 31, a->name);
  tg__bind_str(st, 32, a->name ? a->event : NULL);
  tg__bind_str(st, 33, a->name ? a->tool : NULL);
  bind_json(st, 34, 0, 0, a->name ? a->input : NULL, caps->args_max);
  tg__bind_str(st, 35, a->name ? a->tool_use_id : NULL);
  tg__bind_str(st, 36, a->name ? a->answer : NULL);
  int rc = sqlite3_step(st);
  sqlite3_reset(st); /* every parameter is bound again next time */
  return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* ---- reading ---------------------------------------------------------- */

enum {
  C_ID, C_CALL_ID, C_SESSION, C_TURN, C_TOOL, C_ARGS, C_ARGS_BYTES,
  C_ARGS_CUT, C_VERDICT, C_RULE, C_RULE_WHERE, C_REASON, C_APPROVAL,
  C_APPROVAL_ID, C_HOOKS, C_ATTEMPTS, C_STATUS, C_ERROR_PHASE, C_ERROR_CODE,
  C_ERROR_MESSAGE, C_ERROR_SUGGESTION, C_ERROR_RETRYABLE, C_RESULT,
  C_RESULT_BYTES, C_RESULT_CUT, C_TRUNCATED, C_TS, C_DURATION, C_GENERATION,
  C_PARENT, C_DECIDED_BY, C_AGENT, C_AGENT_EVENT, C_AGENT_TOOL,
  C_AGENT_INPUT, C_AGENT_CALL, C_AGENT_ANSWER
};

static const char select_cols[] =
    "SELECT id, call_id, session, turn, tool, args, args_bytes, args_cut,"
    " verdict, rule, rule_where, reason, approval, approval_id, hooks,"
    " attempts, status, error_phase, error_code, error_message,"
    " error_suggestion, error_retryable, result, result_bytes, result_cut,"
    " truncated, ts, duration_ms, generation, parent_call, decided_by, agent,"
    " agent_event, agent_tool, agent_input, agent_call, agent_answer"
    " FROM calls";

static const char *col_text(sqlite3_stmt *st, int i) {
  return (const char *)sqlite3_column_text(st, i);
}

static int is_null(sqlite3_stmt *st, int i) {
  return sqlite3_column_type(st, i) == SQLITE_NULL;
}

static void add_text(cJSON *o, const char *k, sqlite3_stmt *st, int i) {
  const char *s = col_text(st, i);
  if (s) cJSON_AddStringToObject(o, k, s);
  else cJSON_AddNullToObject(o, k);
}

static void add_int(cJSON *o, const char *k, sqlite3_stmt *st, int i) {
  if (is_null(st, i)) cJSON_AddNullToObject(o, k);
  else cJSON_AddNumberToObject(o, k, (double)sqlite3_column_int64(st, i));
}

/* A stored JSON text: parsed strictly (the file is input like any other),
 * or kept as a string when cut or not JSON. */
static void add_json(cJSON *o, const char *k, sqlite3_stmt *st, int i,
                     int cut) {
  const char *s = col_text(st, i);
  cJSON *v = NULL;
  if (s && !cut)
    v = tg_json_parse(s, (size_t)sqlite3_column_bytes(st, i), NULL, NULL, 0);
  if (!v) v = s ? cJSON_CreateString(s) : cJSON_CreateNull();
  cJSON_AddItemToObject(o, k, v);
}

static cJSON *row_error(sqlite3_stmt *st) {
  if (is_null(st, C_ERROR_CODE) && is_null(st, C_ERROR_PHASE))
    return cJSON_CreateNull();
  cJSON *e = cJSON_CreateObject();
  add_text(e, "phase", st, C_ERROR_PHASE);
  add_text(e, "code", st, C_ERROR_CODE);
  add_text(e, "message", st, C_ERROR_MESSAGE);
  if (!is_null(st, C_ERROR_SUGGESTION))
    add_text(e, "suggestion", st, C_ERROR_SUGGESTION);
  cJSON_AddBoolToObject(e, "retryable",
                        sqlite3_column_int(st, C_ERROR_RETRYABLE));
  return e;
}

static cJSON *row_decision(sqlite3_stmt *st) {
  cJSON *d = cJSON_CreateObject();
  add_text(d, "verdict", st, C_VERDICT);
  add_text(d, "rule", st, C_RULE);
  add_text(d, "where", st, C_RULE_WHERE);
  add_text(d, "reason", st, C_REASON);
  add_text(d, "approval", st, C_APPROVAL);
  add_int(d, "approval_id", st, C_APPROVAL_ID);
  /* a row from before who decided was kept: as its rule says */
  const char *by = col_text(st, C_DECIDED_BY);
  if (by) cJSON_AddStringToObject(d, "by", by);
  else if (!is_null(st, C_VERDICT))
    cJSON_AddStringToObject(d, "by", is_null(st, C_RULE) ? "default" : "rule");
  else cJSON_AddNullToObject(d, "by");
  return d;
}

static cJSON *row_json(sqlite3_stmt *st) {
  cJSON *o = cJSON_CreateObject();
  add_int(o, "id", st, C_ID);
  add_text(o, "call_id", st, C_CALL_ID);
  add_text(o, "session", st, C_SESSION);
  add_int(o, "turn", st, C_TURN);
  add_text(o, "tool", st, C_TOOL);
  int args_cut = sqlite3_column_int(st, C_ARGS_CUT);
  add_json(o, "args", st, C_ARGS, args_cut);
  add_int(o, "args_bytes", st, C_ARGS_BYTES);
  if (args_cut) cJSON_AddTrueToObject(o, "args_cut");
  cJSON_AddItemToObject(o, "decision", row_decision(st));
  if (!is_null(st, C_HOOKS)) add_json(o, "hooks", st, C_HOOKS, 0);
  add_int(o, "attempts", st, C_ATTEMPTS);
  add_text(o, "status", st, C_STATUS);
  cJSON_AddItemToObject(o, "error", row_error(st));
  int result_cut = sqlite3_column_int(st, C_RESULT_CUT);
  add_json(o, "result", st, C_RESULT, result_cut);
  add_int(o, "result_bytes", st, C_RESULT_BYTES);
  if (result_cut) cJSON_AddTrueToObject(o, "result_cut");
  if (sqlite3_column_int(st, C_TRUNCATED)) cJSON_AddTrueToObject(o, "truncated");
  add_int(o, "ts", st, C_TS);
  cJSON_AddNumberToObject(o, "duration_ms", sqlite3_column_double(st, C_DURATION));
  add_int(o, "generation", st, C_GENERATION);
  if (!is_null(st, C_PARENT)) add_text(o, "parent_call", st, C_PARENT);
  if (!is_null(st, C_AGENT)) {
    cJSON *a = cJSON_CreateObject();
    add_text(a, "name", st, C_AGENT);
    add_text(a, "event", st, C_AGENT_EVENT);
    add_text(a, "tool", st, C_AGENT_TOOL);
    add_json(a, "input", st, C_AGENT_INPUT, 0);
    add_text(a, "tool_use_id", st, C_AGENT_CALL);
    add_text(a, "answer", st, C_AGENT_ANSWER);
    cJSON_AddItemToObject(o, "agent", a);
  }
  return o;
}

static int known_status(const char *s) {
  for (int i = TG_STATUS_OK; i <= TG_STATUS_TIMEOUT; i++)
    if (strcmp(s, tg_status_name((tg_status)i)) == 0) return 1;
  return 0;
}

/* The lowest id a call started at or after since_ms can have, without an
 * index on ts: calls are committed about in the order they end, and one
 * that started at since ended after it, so no row before the first that
 * ended a minute (SINCE_SLACK_MS: the writer's queue, its retries) before
 * since can be one. A binary search over the rowid: log2(n) point reads. */
#define SINCE_SLACK_MS 60000

static int64_t first_id_since(sqlite3 *db, int64_t since_ms) {
  sqlite3_stmt *st = NULL;
  int64_t lo = 0, hi = INT64_MAX, bound = since_ms - SINCE_SLACK_MS;
  if (sqlite3_prepare_v2(db, "SELECT id, ts + coalesce(duration_ms, 0) FROM "
                         "calls WHERE id >= ?1 ORDER BY id LIMIT 1", -1, &st,
                         NULL) != SQLITE_OK)
    return 0; /* no bound: the scan is only slower */
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    sqlite3_bind_int64(st, 1, mid);
    if (sqlite3_step(st) != SQLITE_ROW) {
      hi = mid; /* no row at or after mid */
    } else if (sqlite3_column_double(st, 1) < (double)bound) {
      lo = sqlite3_column_int64(st, 0) + 1;
    } else {
      hi = mid;
    }
    sqlite3_reset(st);
  }
  sqlite3_finalize(st);
  return lo;
}

/* The WHERE clause for f into sql; the values bound in order by bind(). */
static void where_clause(const tg_audit_filter *f, char *sql, size_t len) {
  size_t n = strlen(sql);
  n += (size_t)snprintf(sql + n, len - n, " WHERE 1");
  if (f->session) n += (size_t)snprintf(sql + n, len - n, " AND session = ?");
  if (f->tool) n += (size_t)snprintf(sql + n, len - n, " AND tool = ?");
  if (f->status) n += (size_t)snprintf(sql + n, len - n, " AND status = ?");
  if (f->call_id) n += (size_t)snprintf(sql + n, len - n, " AND call_id = ?");
  if (f->since_ms)
    n += (size_t)snprintf(sql + n, len - n, " AND ts >= ? AND id >= ?");
  if (f->after_id > 0) snprintf(sql + n, len - n, " AND id > ?");
}

static void bind_filter(sqlite3 *db, sqlite3_stmt *st,
                        const tg_audit_filter *f, size_t limit) {
  int i = 1;
  if (f->session) tg__bind_str(st, i++, f->session);
  if (f->tool) tg__bind_str(st, i++, f->tool);
  if (f->status) tg__bind_str(st, i++, f->status);
  if (f->call_id) tg__bind_str(st, i++, f->call_id);
  if (f->since_ms) {
    sqlite3_bind_int64(st, i++, f->since_ms);
    sqlite3_bind_int64(st, i++, first_id_since(db, f->since_ms));
  }
  if (f->after_id > 0) sqlite3_bind_int64(st, i++, f->after_id);
  sqlite3_bind_int64(st, i, (sqlite3_int64)limit);
}

/* ---- an agent's call, its events linked -------------------------------- */

/* One agent's tool call comes as up to three hook events, each its own
 * row: judged before it runs (PreToolUse, PermissionRequest), then seen
 * after (PostToolUse, or PostToolUseFailure) — when the agent ran it. The
 * agent's id of the call (tool_use_id) links them, within the session:
 * a judged row gets `ran` (the row after it, before any other judging
 * the same id, and how the tool ended), a row after gets `judged_call`
 * (the call id of the last row that judged it). Read, not stored: an import or a late event links the same way. */
static const char after_sql[] =
    "SELECT call_id, agent_event FROM calls WHERE session = ?1 AND"
    " agent_call = ?2 AND id > ?3 AND agent_event IN ('PostToolUse',"
    " 'PostToolUseFailure') AND NOT EXISTS (SELECT 1 FROM calls j WHERE"
    " j.session = ?1 AND j.agent_call = ?2 AND j.id > ?3 AND j.id < calls.id"
    " AND j.agent_event IN ('PreToolUse', 'PermissionRequest'))"
    " ORDER BY id LIMIT 1";
static const char before_sql[] =
    "SELECT call_id FROM calls WHERE session = ?1 AND agent_call = ?2 AND"
    " id < ?3 AND agent_event IN ('PreToolUse', 'PermissionRequest')"
    " ORDER BY id DESC LIMIT 1";

static int is_after(const char *event) {
  return event && (!strcmp(event, "PostToolUse") ||
                   !strcmp(event, "PostToolUseFailure"));
}

static void link_one(sqlite3_stmt *after, sqlite3_stmt *before, cJSON *rec) {
  cJSON *a = cJSON_GetObjectItemCaseSensitive(rec, "agent");
  const char *id = cJSON_GetStringValue(cJSON_GetObjectItem(a, "tool_use_id"));
  const char *event = cJSON_GetStringValue(cJSON_GetObjectItem(a, "event"));
  const char *session = cJSON_GetStringValue(cJSON_GetObjectItem(rec, "session"));
  if (!id || !session) return;
  sqlite3_stmt *st = is_after(event) ? before : after;
  sqlite3_bind_text(st, 1, session, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 2, id, -1, SQLITE_STATIC);
  sqlite3_bind_int64(st, 3, (sqlite3_int64)cJSON_GetNumberValue(
                                cJSON_GetObjectItem(rec, "id")));
  if (sqlite3_step(st) == SQLITE_ROW) {
    const char *call = col_text(st, 0);
    if (st == before) {
      cJSON_AddStringToObject(a, "judged_call", call ? call : "");
    } else {
      cJSON *ran = cJSON_CreateObject();
      cJSON_AddStringToObject(ran, "call_id", call ? call : "");
      const char *ev = col_text(st, 1);
      cJSON_AddStringToObject(ran, "ended", ev && !strcmp(ev, "PostToolUse")
                                                ? "ok" : "failed");
      cJSON_AddItemToObject(a, "ran", ran);
    }
  }
  sqlite3_reset(st);
  sqlite3_clear_bindings(st);
}

static void link_agent_calls(sqlite3 *db, cJSON *recs) {
  sqlite3_stmt *after = NULL, *before = NULL;
  int ready = 0;
  cJSON *rec;
  cJSON_ArrayForEach(rec, recs) {
    if (!cJSON_GetObjectItemCaseSensitive(rec, "agent")) continue;
    if (!ready && (sqlite3_prepare_v2(db, after_sql, -1, &after, NULL) !=
                       SQLITE_OK ||
                   sqlite3_prepare_v2(db, before_sql, -1, &before, NULL) !=
                       SQLITE_OK))
      break; /* unlinked: each row still says what it was */
    ready = 1;
    link_one(after, before, rec);
  }
  sqlite3_finalize(after);
  sqlite3_finalize(before);
}

cJSON *tg__audit_query(sqlite3 *db, const tg_audit_filter *f,
                       char err[TG_ERRMSG]) {
  static const tg_audit_filter none;
  if (!f) f = &none;
  if (f->status && !known_status(f->status)) {
    tg__errf(err, TG_ERRMSG, "unknown status '%s' (ok, error, denied, "
             "rejected, cancelled or timeout)", f->status);
    return NULL;
  }
  char sql[1024];
  /* the latest `limit`, given oldest first; after an id: the next ones */
  snprintf(sql, sizeof sql, "SELECT * FROM (%s", select_cols);
  where_clause(f, sql, sizeof sql);
  size_t n = strlen(sql);
  snprintf(sql + n, sizeof sql - n, " ORDER BY id %s LIMIT ?) ORDER BY id",
           f->after_id > 0 ? "ASC" : "DESC");
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
    tg__errf(err, TG_ERRMSG, "reading the audit: %s", sqlite3_errmsg(db));
    return NULL;
  }
  bind_filter(db, st, f, f->limit ? f->limit : 100);
  cJSON *out = cJSON_CreateArray();
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW)
    cJSON_AddItemToArray(out, row_json(st));
  if (rc != SQLITE_DONE) {
    tg__errf(err, TG_ERRMSG, "reading the audit: %s", sqlite3_errmsg(db));
    cJSON_Delete(out);
    out = NULL;
  }
  sqlite3_finalize(st);
  if (out) link_agent_calls(db, out);
  return out;
}
