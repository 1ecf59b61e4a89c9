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
#include <limits.h>
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

/* ---- a record's column values, encoded ---------------------------------
 * The 36 values of a row, in the insert's order, each a tag byte and its
 * value: 0 NULL, 1 an integer (8 bytes, little-endian), 2 a double (its 8
 * bytes, as stored in memory), 3 a text (4 bytes of length, the bytes).
 * The journal (journal.c) keeps records so; the insert binds them. */

enum { V_NULL, V_INT, V_DOUBLE, V_TEXT };

void tg__jbuf_put(tg_jbuf *b, const void *p, size_t n) {
  if (b->oom) return;
  if (b->len + n > b->cap) {
    size_t cap = b->cap ? b->cap : 512;
    while (cap < b->len + n) cap *= 2;
    unsigned char *q = realloc(b->p, cap);
    if (!q) {
      b->oom = 1;
      return;
    }
    b->p = q;
    b->cap = cap;
  }
  memcpy(b->p + b->len, p, n);
  b->len += n;
}

static void put_tag(tg_jbuf *b, unsigned char tag) { tg__jbuf_put(b, &tag, 1); }

static void put_u64(tg_jbuf *b, unsigned char tag, uint64_t v) {
  unsigned char x[9] = {tag};
  for (int i = 0; i < 8; i++) x[1 + i] = (unsigned char)(v >> (8 * i));
  tg__jbuf_put(b, x, 9);
}

static void put_int(tg_jbuf *b, int64_t v) { put_u64(b, V_INT, (uint64_t)v); }

static void put_double(tg_jbuf *b, double d) {
  uint64_t v;
  memcpy(&v, &d, sizeof v);
  put_u64(b, V_DOUBLE, v);
}

static void put_text(tg_jbuf *b, const char *s, size_t n) {
  if (!s) {
    put_tag(b, V_NULL);
    return;
  }
  if (n > UINT32_MAX) n = UINT32_MAX;
  unsigned char x[5] = {V_TEXT, (unsigned char)n, (unsigned char)(n >> 8),
                        (unsigned char)(n >> 16), (unsigned char)(n >> 24)};
  tg__jbuf_put(b, x, 5);
  tg__jbuf_put(b, s, n);
}

static void put_str(tg_jbuf *b, const char *s) {
  put_text(b, s, s ? strlen(s) : 0);
}

/* v's JSON text, its full size and whether it was cut (NULL v: NULLs;
 * bytes/cut 0: the column is not there). */
static void put_json(tg_jbuf *b, const cJSON *v, size_t max, int bytes,
                     int cut) {
  char *s = v ? tg_json_print(v, 0) : NULL;
  if (!s) {
    if (v) put_str(b, "(out of memory)");
    else put_tag(b, V_NULL);
    if (bytes) put_tag(b, V_NULL);
    if (cut) put_int(b, 0);
    return;
  }
  size_t n = strlen(s), k = cut_at(s, n, max);
  put_text(b, s, k);
  if (bytes) put_int(b, (int64_t)n);
  if (cut) put_int(b, k < n);
  free(s);
}

static void put_error(tg_jbuf *b, const tg_err *e) {
  int has = e && e->phase != TG_PHASE_NONE;
  put_str(b, has ? tg_phase_name(e->phase) : NULL);
  put_str(b, has ? (e->code ? e->code : tg_error_code_name(TG_E_NOMEM))
                 : NULL);
  put_str(b, has ? e->message : NULL);
  put_str(b, has ? e->suggestion : NULL);
  if (has) put_int(b, e->retryable);
  else put_tag(b, V_NULL);
}

int tg__audit_encode(tg_jbuf *b, const tg_audit_rec *r,
                     const tg_audit_caps *caps) {
  put_str(b, r->call_id);
  put_str(b, r->session);
  put_int(b, r->turn);
  put_str(b, r->tool);
  put_json(b, r->args, caps->args_max, 1, 1);
  put_str(b, r->no_verdict ? NULL : tg_verdict_name(r->verdict));
  put_str(b, r->rule);
  put_str(b, r->rule_where);
  put_str(b, r->reason);
  put_str(b, r->approval);
  if (r->approval_id) put_int(b, r->approval_id);
  else put_tag(b, V_NULL);
  put_json(b, r->hooks, SIZE_MAX, 0, 0);
  put_int(b, r->attempts);
  put_str(b, tg_status_name(r->status));
  put_error(b, r->error);
  put_json(b, r->result, caps->result_max, 1, 1);
  put_int(b, r->truncated);
  put_int(b, r->ts_ms);
  put_double(b, r->duration_ms);
  put_int(b, (int64_t)r->generation);
  put_str(b, r->parent_call);
  put_str(b, r->decided_by);
  const tg_audit_agent *a = &r->agent;
  put_str(b, a->name);
  put_str(b, a->name ? a->event : NULL);
  put_str(b, a->name ? a->tool : NULL);
  put_json(b, a->name ? a->input : NULL, caps->args_max, 0, 0);
  put_str(b, a->name ? a->tool_use_id : NULL);
  put_str(b, a->name ? a->answer : NULL);
  return b->oom ? -1 : 0;
}

static uint64_t get_u64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

/* Binds an encoded record (p, n: read from a file, so checked) and runs
 * the insert; the text is bound in place. SQLITE_FORMAT (which SQLite
 * itself no longer returns) when p is not 36 values. */
int tg__audit_insert_encoded(sqlite3_stmt *st, const unsigned char *p,
                             size_t n) {
  const unsigned char *end = p + n;
  int rc = SQLITE_OK;
  for (int col = 1; col <= TG_AUDIT_COLUMNS && rc == SQLITE_OK; col++) {
    if (p >= end) rc = SQLITE_FORMAT;
    else if (*p == V_NULL) {
      sqlite3_bind_null(st, col);
      p++;
    } else if ((*p == V_INT || *p == V_DOUBLE) && end - p >= 9) {
      uint64_t v = get_u64(p + 1);
      if (*p == V_INT) sqlite3_bind_int64(st, col, (sqlite3_int64)v);
      else {
        double d;
        memcpy(&d, &v, sizeof d);
        sqlite3_bind_double(st, col, d);
      }
      p += 9;
    } else if (*p == V_TEXT && end - p >= 5) {
      size_t len = (size_t)p[1] | (size_t)p[2] << 8 | (size_t)p[3] << 16 |
                   (size_t)p[4] << 24;
      if ((size_t)(end - p - 5) < len || len > INT_MAX) rc = SQLITE_FORMAT;
      else sqlite3_bind_text(st, col, (const char *)p + 5, (int)len,
                             SQLITE_STATIC);
      p += 5 + len;
    } else rc = SQLITE_FORMAT;
  }
  if (rc == SQLITE_OK && p != end) rc = SQLITE_FORMAT;
  if (rc == SQLITE_OK) {
    rc = sqlite3_step(st);
    rc = rc == SQLITE_DONE ? SQLITE_OK : rc;
  }
  sqlite3_reset(st); /* every parameter is bound again next time */
  sqlite3_clear_bindings(st);
  return rc;
}

int tg__audit_insert(sqlite3_stmt *st, const tg_audit_rec *r,
                     const tg_audit_caps *caps) {
  tg_jbuf b = {0};
  int rc = tg__audit_encode(&b, r, caps) < 0
               ? SQLITE_NOMEM
               : tg__audit_insert_encoded(st, b.p, b.len);
  free(b.p);
  return rc;
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
  const char *id = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(a, "tool_use_id"));
  const char *event = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(a, "event"));
  const char *session = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(rec, "session"));
  if (!id || !session) return;
  sqlite3_stmt *st = is_after(event) ? before : after;
  sqlite3_bind_text(st, 1, session, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 2, id, -1, SQLITE_STATIC);
  sqlite3_bind_int64(st, 3, (sqlite3_int64)cJSON_GetNumberValue(
                                cJSON_GetObjectItemCaseSensitive(rec, "id")));
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
