/*
 * memory.c — memories, for the backend's table (store.h; the checks and
 * masks are store/memory_api.c's): recorded for one session or one
 * project, recalled by full-text relevance (FTS5 bm25 over kind and
 * content). A recall query
 * is natural text (an agent's question), so it is taken as words — each
 * quoted, any may match — never as FTS5 syntax that could fail to parse.
 * Project scope is matched on the project's real path, so two folders are
 * two projects, and a session memory is only its session's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sqlite_store.h"
#include "base/util.h"
#include "base/json.h"

typedef struct {
  const tg_memory *m;
  const char *scope, *project, *metadata;
  int64_t now;
} memory_w;

static int64_t memory_insert(sqlite3 *db, void *arg, char *err,
                             size_t errlen) {
  memory_w *w = arg;
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db, "INSERT INTO memories (kind, content,"
                              " metadata, scope, session, project, created)"
                              " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)", -1, &st,
                              NULL);
  if (rc == SQLITE_OK) {
    tg__bind_str(st, 1, w->m->kind);
    tg__bind_str(st, 2, w->m->content);
    tg__bind_str(st, 3, w->metadata);
    tg__bind_str(st, 4, w->scope);
    tg__bind_str(st, 5, w->m->session);
    tg__bind_str(st, 6, w->project);
    sqlite3_bind_int64(st, 7, w->now);
    rc = sqlite3_step(st);
  }
  if (rc != SQLITE_DONE)
    snprintf(err, errlen, "storing a memory: %s", sqlite3_errmsg(db));
  sqlite3_finalize(st);
  return rc == SQLITE_DONE ? (int64_t)sqlite3_last_insert_rowid(db) : -EIO;
}

int64_t tg__sq_memory_add(tg_store *st, const tg_memory *m,
                          const char *project, const char *metadata,
                          char err[TG_ERRMSG]) {
  memory_w w = {m, m->scope, project, metadata, (int64_t)tg__wall_ms()};
  return tg__sq_write(tg__sq(st), memory_insert, &w, err);
}

/* ---- recall ------------------------------------------------------------- */

/* text as an FTS5 query of its words, each quoted, joined by OR; NULL when
 * it has none (or out of memory: *nomem). Word: letters, digits, any byte
 * of a UTF-8 sequence. */
static char *words_query(const char *text, int *nomem) {
  size_t n = strlen(text), o = 0;
  char *q = malloc(n * 5 + 8);
  *nomem = !q;
  if (!q) return NULL;
  int words = 0;
  for (size_t i = 0; i < n;) {
    unsigned char c = (unsigned char)text[i];
    int w = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
            (c >= 'A' && c <= 'Z') || c >= 0x80 || c == '_';
    if (!w) {
      i++;
      continue;
    }
    if (words++ && words <= 64) o += (size_t)sprintf(q + o, " OR ");
    if (words <= 64) q[o++] = '"';
    while (i < n) {
      c = (unsigned char)text[i];
      if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
            (c >= 'A' && c <= 'Z') || c >= 0x80 || c == '_'))
        break;
      if (words <= 64) q[o++] = (char)c;
      i++;
    }
    if (words <= 64) q[o++] = '"';
  }
  q[o] = '\0';
  if (!words) {
    free(q);
    return NULL;
  }
  return q;
}

static const char recall_sql[] =
    "SELECT m.id, m.kind, m.content, m.metadata, m.scope, m.session,"
    " m.project, m.created, -bm25(memories_fts) AS score"
    " FROM memories_fts JOIN memories m ON m.id = memories_fts.rowid"
    " WHERE memories_fts MATCH ?1 AND ("
    "  (?2 AND m.scope = 'session' AND m.session = ?3) OR"
    "  (?4 AND m.scope = 'project' AND m.project = ?5))"
    " AND -bm25(memories_fts) >= ?6"
    " ORDER BY score DESC, m.id DESC LIMIT ?7";

static cJSON *memory_row(sqlite3_stmt *q) {
  static const char *const names[] = {"id", "kind", "content", "metadata",
                                      "scope", "session", "project",
                                      "created"};
  cJSON *o = cJSON_CreateObject();
  for (int i = 0; o && i < 8; i++) {
    int t = sqlite3_column_type(q, i);
    if (t == SQLITE_NULL) {
      cJSON_AddNullToObject(o, names[i]);
    } else if (t == SQLITE_INTEGER) {
      cJSON_AddNumberToObject(o, names[i], (double)sqlite3_column_int64(q, i));
    } else if (i == 3) { /* metadata: JSON the store wrote */
      const char *s = (const char *)sqlite3_column_text(q, i);
      cJSON *v = tg_json_parse(s, strlen(s), NULL, NULL, 0);
      cJSON_AddItemToObject(o, names[i], v ? v : cJSON_CreateString(s));
    } else {
      cJSON_AddStringToObject(o, names[i],
                              (const char *)sqlite3_column_text(q, i));
    }
  }
  if (o) cJSON_AddNumberToObject(o, "score", sqlite3_column_double(q, 8));
  return o;
}

cJSON *tg__sq_memory_recall(tg_store *store, const tg_recall_filter *f,
                            const char *project, char err[TG_ERRMSG]) {
  tg_sqlite *st = tg__sq(store);
  err[0] = '\0';
  int want_s = !f->scope || !strcmp(f->scope, "session");
  int want_p = !f->scope || !strcmp(f->scope, "project");
  int nomem = 0;
  char *q = words_query(f->query, &nomem);
  if (nomem) {
    tg__errf(err, TG_ERRMSG, "out of memory");
    return NULL;
  }
  cJSON *out = cJSON_CreateArray();
  if (!q || !out) return out; /* no words: nothing matches */
  sqlite3_stmt *s = NULL;
  int rc = tg__sq_flushed(st, err) < 0 ? SQLITE_ERROR
           : sqlite3_prepare_v2(st->db, recall_sql, -1, &s, NULL);
  if (rc == SQLITE_OK) {
    sqlite3_bind_text(s, 1, q, -1, SQLITE_STATIC);
    sqlite3_bind_int(s, 2, want_s && f->session);
    tg__bind_str(s, 3, f->session);
    sqlite3_bind_int(s, 4, want_p && project);
    tg__bind_str(s, 5, project);
    sqlite3_bind_double(s, 6, f->min_score);
    sqlite3_bind_int64(s, 7, (sqlite3_int64)(f->limit ? f->limit : 10));
    size_t tokens = 0;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
      size_t t = ((size_t)sqlite3_column_bytes(s, 2) + 3) / 4;
      if (f->max_tokens && tokens + t > f->max_tokens) continue;
      tokens += t;
      cJSON_AddItemToArray(out, memory_row(s));
    }
    if (rc == SQLITE_DONE) rc = SQLITE_OK;
  }
  if (rc != SQLITE_OK) {
    if (s || !err[0]) tg__errf(err, TG_ERRMSG, "recalling: %s",
                               sqlite3_errmsg(st->db));
    cJSON_Delete(out);
    out = NULL;
  }
  sqlite3_finalize(s);
  free(q);
  return out;
}
