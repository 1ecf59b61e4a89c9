/*
 * export.c — a session as one document, and back: the JSON export
 * (lossless: {format, version, session, messages, calls, and taint when
 * the session is sensitive, which an import does not restore}; the rows' own
 * ids are left out, so export -> import -> export gives the same bytes,
 * the session's id aside when it had to change), the import (every value
 * checked and masked (core/redact.h) before anything is written, then the
 * backend stores it all or nothing), and the renderings (render.c) from
 * the same document.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "store.h"
#include "base/util.h"
#include "base/json.h"

#define EXPORT_FORMAT "toolgate-session"
#define EXPORT_VERSION 1
#define IMPORT_MAX_ITEMS 1000000

/* ---- export ------------------------------------------------------------ */

cJSON *tg__session_doc(tg_store *st, const char *id, char err[TG_ERRMSG]) {
  cJSON *s = tg_store_session(st, id, err);
  if (!s) return NULL;
  cJSON *doc = cJSON_CreateObject();
  cJSON_AddStringToObject(doc, "format", EXPORT_FORMAT);
  cJSON_AddNumberToObject(doc, "version", EXPORT_VERSION);
  cJSON *msgs = cJSON_DetachItemFromObjectCaseSensitive(s, "messages");
  cJSON *calls = cJSON_DetachItemFromObjectCaseSensitive(s, "calls");
  cJSON *m;
  cJSON_ArrayForEach(m, msgs) cJSON_DeleteItemFromObjectCaseSensitive(m, "id");
  cJSON_ArrayForEach(m, calls) {
    cJSON_DeleteItemFromObjectCaseSensitive(m, "id");
    cJSON_DeleteItemFromObjectCaseSensitive(m, "session");
  }
  cJSON_AddItemToObject(doc, "session", s);
  cJSON_AddItemToObject(doc, "messages", msgs);
  cJSON_AddItemToObject(doc, "calls", calls);
  /* when and why it became sensitive; an import does not restore it (a
   * taint guards a live session, and a person cleared or kept it there) */
  char why[TG_ERRMSG];
  cJSON *taint = tg_store_taint(st, id, why);
  if (cJSON_IsObject(taint)) {
    cJSON_DeleteItemFromObjectCaseSensitive(taint, "session");
    cJSON_AddItemToObject(doc, "taint", taint);
  } else {
    cJSON_Delete(taint);
  }
  return doc;
}

static char *json_text(const cJSON *doc) {
  char *t = tg_json_print(doc, 1);
  if (!t) return NULL;
  size_t n = strlen(t);
  char *r = realloc(t, n + 2);
  if (!r) {
    free(t);
    return NULL;
  }
  r[n] = '\n';
  r[n + 1] = '\0';
  return r;
}

char *tg_store_export(tg_store *st, const char *session,
                      tg_export_format format, char err[TG_ERRMSG]) {
  if (format != TG_EXPORT_JSON && format != TG_EXPORT_MARKDOWN &&
      format != TG_EXPORT_HTML) {
    tg__errf(err, TG_ERRMSG, "unknown export format %d", (int)format);
    return NULL;
  }
  cJSON *doc = tg__session_doc(st, session, err);
  if (!doc) return NULL;
  /* stored rows were masked on the way in; the redactors may have grown
   * since (and a file from elsewhere was not): mask again on the way out */
  tg__redact_tree(tg__store_redactor(st), doc);
  char *out = format == TG_EXPORT_JSON       ? json_text(doc)
              : format == TG_EXPORT_MARKDOWN ? tg__render_markdown(doc)
                                             : tg__render_html(doc);
  cJSON_Delete(doc);
  if (!out) tg__errf(err, TG_ERRMSG, "out of memory");
  return out;
}

/* ---- import: checks ---------------------------------------------------- */

typedef struct {
  char *err;
  cJSON *skipped;
  char path[160];
} checker;

static int bad(checker *c, const char *key, const char *what) {
  tg__errf(c->err, TG_ERRMSG, "%s.%s: %s", c->path, key, what);
  return -1;
}

/* Keys of o not in known[] go to the skipped list (and are not read). */
static void note_unknown(checker *c, const cJSON *o, const char *const *known) {
  const cJSON *k;
  cJSON_ArrayForEach(k, o) {
    int found = 0;
    for (const char *const *n = known; *n; n++)
      if (!strcmp(k->string, *n)) found = 1;
    if (!found && cJSON_GetArraySize(c->skipped) < 100) {
      char p[400];
      snprintf(p, sizeof p, "%s.%.200s (unknown key)", c->path, k->string);
      cJSON_AddItemToArray(c->skipped, cJSON_CreateString(p));
    }
  }
}

enum { OPT = 1, NUL_OK = 2 };

/* A string member (NULL when absent or null and allowed). */
static int want_str(checker *c, const cJSON *o, const char *k, int flags,
                    size_t max, const char **out) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  *out = NULL;
  if (!v) return flags & OPT ? 0 : bad(c, k, "is missing");
  if (cJSON_IsNull(v)) return flags & NUL_OK ? 0 : bad(c, k, "is null");
  if (!cJSON_IsString(v)) return bad(c, k, "must be a string");
  if (strlen(v->valuestring) > max) return bad(c, k, "is too long");
  *out = v->valuestring;
  return 0;
}

/* A whole number member in [lo, hi]; *is_null when null and allowed. */
static int want_int(checker *c, const cJSON *o, const char *k, int flags,
                    double lo, double hi, int64_t *out, int *is_null) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  *out = 0;
  if (is_null) *is_null = 1;
  if (!v) return flags & OPT ? 0 : bad(c, k, "is missing");
  if (cJSON_IsNull(v)) return flags & NUL_OK ? 0 : bad(c, k, "is null");
  if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) ||
      v->valuedouble < lo || v->valuedouble > hi)
    return bad(c, k, "must be a whole number in range");
  *out = (int64_t)v->valuedouble;
  if (is_null) *is_null = 0;
  return 0;
}

static int want_bool(checker *c, const cJSON *o, const char *k, int *out) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  *out = 0;
  if (!v) return 0;
  if (!cJSON_IsBool(v)) return bad(c, k, "must be true or false");
  *out = cJSON_IsTrue(v);
  return 0;
}

#define TIME_MAX 9.0e15


static int check_session(checker *c, const cJSON *s, tg_import_session *out) {
  static const char *const known[] = {"id", "project", "title", "started",
                                      "ended", "agent", "turn", NULL};
  snprintf(c->path, sizeof c->path, "$.session");
  if (!cJSON_IsObject(s)) return bad(c, "", "must be an object");
  note_unknown(c, s, known);
  char why[TG_ERRMSG];
  if (want_str(c, s, "id", 0, TG_SESSION_ID_MAX - 1, &out->id) < 0 ||
      want_str(c, s, "project", OPT | NUL_OK, 4096, &out->project) < 0 ||
      want_str(c, s, "title", OPT | NUL_OK, 4096, &out->title) < 0 ||
      want_int(c, s, "started", 0, 0, TIME_MAX, &out->started, NULL) < 0 ||
      want_int(c, s, "ended", OPT | NUL_OK, 0, TIME_MAX, &out->ended,
               &out->ended_null) < 0 ||
      want_str(c, s, "agent", OPT | NUL_OK, 64, &out->agent) < 0 ||
      want_int(c, s, "turn", OPT, 0, TIME_MAX, &out->turn, NULL) < 0)
    return -1;
  for (const char *p = out->id; *p; p++)
    if ((unsigned char)*p < 0x20 || *p == 0x7f) {
      snprintf(why, sizeof why, "has a control character");
      return bad(c, "id", why);
    }
  if (!*out->id) return bad(c, "id", "is empty");
  return 0;
}

static int check_message(checker *c, const cJSON *m) {
  static const char *const known[] = {"role", "content", "tool_calls", "ts",
                                      NULL};
  static const char *const roles[] = {"system", "user", "assistant", "tool"};
  if (!cJSON_IsObject(m)) return bad(c, "", "must be an object");
  note_unknown(c, m, known);
  const char *role, *content;
  int64_t ts;
  if (want_str(c, m, "role", 0, 16, &role) < 0 ||
      want_str(c, m, "content", OPT | NUL_OK, TG_MESSAGE_MAX, &content) < 0 ||
      want_int(c, m, "ts", 0, 0, TIME_MAX, &ts, NULL) < 0)
    return -1;
  for (size_t i = 0; i < 4; i++)
    if (!strcmp(role, roles[i])) return 0;
  return bad(c, "role", "must be system, user, assistant or tool");
}

static int known_status(const char *s) {
  for (int i = TG_STATUS_OK; i <= TG_STATUS_TIMEOUT; i++)
    if (strcmp(s, tg_status_name((tg_status)i)) == 0) return 1;
  return 0;
}

/* An agent's call: the strings its hook added; the links (judged_call,
 * ran) are read from the rows, so taken and not kept. */
static int check_agent(checker *c, const cJSON *a) {
  static const char *const known[] = {"name", "event", "tool", "tool_use_id",
                                      "answer", "input", "judged_call",
                                      "ran", NULL};
  const char *s;
  if (!cJSON_IsObject(a)) return bad(c, "agent", "must be an object");
  note_unknown(c, a, known);
  if (want_str(c, a, "name", 0, 64, &s) < 0) return -1;
  for (const char *const *f = known + 1; strcmp(*f, "input"); f++)
    if (want_str(c, a, *f, OPT | NUL_OK, 4096, &s) < 0) return -1;
  return 0;
}

static int check_call(checker *c, const cJSON *k) {
  static const char *const known[] = {
      "call_id", "turn", "tool", "args", "args_bytes", "args_cut",
      "decision", "hooks", "attempts", "status", "error", "result",
      "result_bytes", "result_cut", "truncated", "ts", "duration_ms",
      "generation", "parent_call", "agent", NULL};
  static const char *const dknown[] = {"verdict", "rule", "where", "reason",
                                       "approval", "by", "approval_id", NULL};
  static const char *const eknown[] = {"phase", "code", "message",
                                       "suggestion", "retryable", NULL};
  if (!cJSON_IsObject(k)) return bad(c, "", "must be an object");
  note_unknown(c, k, known);
  const char *s;
  int64_t n;
  int b, isnull;
  if (want_str(c, k, "call_id", 0, 4096, &s) < 0 ||
      want_str(c, k, "tool", 0, 4096, &s) < 0 ||
      want_str(c, k, "status", 0, 32, &s) < 0)
    return -1;
  if (!known_status(s)) return bad(c, "status", "is not a known status");
  if (want_int(c, k, "turn", OPT, 0, TIME_MAX, &n, NULL) < 0 ||
      want_int(c, k, "attempts", OPT, 0, 1e9, &n, NULL) < 0 ||
      want_int(c, k, "args_bytes", OPT | NUL_OK, 0, 1e15, &n, &isnull) < 0 ||
      want_int(c, k, "result_bytes", OPT | NUL_OK, 0, 1e15, &n, &isnull) < 0 ||
      want_int(c, k, "generation", OPT | NUL_OK, 0, TIME_MAX, &n, &isnull) < 0 ||
      want_int(c, k, "ts", 0, 0, TIME_MAX, &n, NULL) < 0 ||
      want_bool(c, k, "args_cut", &b) < 0 ||
      (b && !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(k, "args")) &&
       bad(c, "args", "must be a string when args_cut") < 0) ||
      want_bool(c, k, "result_cut", &b) < 0 ||
      (b && !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(k, "result")) &&
       bad(c, "result", "must be a string when result_cut") < 0) ||
      want_bool(c, k, "truncated", &b) < 0 ||
      want_str(c, k, "parent_call", OPT, 4096, &s) < 0)
    return -1;
  const cJSON *d = cJSON_GetObjectItemCaseSensitive(k, "duration_ms");
  if (d && !(cJSON_IsNumber(d) && isfinite(d->valuedouble) &&
             d->valuedouble >= 0))
    return bad(c, "duration_ms", "must be a number >= 0");
  const cJSON *dec = cJSON_GetObjectItemCaseSensitive(k, "decision");
  if (dec) {
    if (!cJSON_IsObject(dec)) return bad(c, "decision", "must be an object");
    note_unknown(c, dec, dknown);
    for (const char *const *f = dknown; f[1]; f++)
      if (want_str(c, dec, *f, OPT | NUL_OK, 4096, &s) < 0) return -1;
    if (want_int(c, dec, "approval_id", OPT | NUL_OK, 0, 9e15, &n, &isnull) < 0)
      return -1;
  }
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(k, "agent");
  if (a && check_agent(c, a) < 0) return -1;
  const cJSON *e = cJSON_GetObjectItemCaseSensitive(k, "error");
  if (e && !cJSON_IsNull(e)) {
    if (!cJSON_IsObject(e)) return bad(c, "error", "must be an object or null");
    note_unknown(c, e, eknown);
    for (const char *const *f = eknown; f[1]; f++)
      if (want_str(c, e, *f, OPT | NUL_OK, 65536, &s) < 0) return -1;
    if (want_bool(c, e, "retryable", &b) < 0) return -1;
  }
  return 0;
}

/* Every array item checked; c->path names the one that is wrong. */
static int check_list(checker *c, const cJSON *doc, const char *key,
                      int (*one)(checker *, const cJSON *)) {
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(doc, key);
  snprintf(c->path, sizeof c->path, "$");
  if (!a) return 0;
  if (!cJSON_IsArray(a)) return bad(c, key, "must be an array");
  if (cJSON_GetArraySize(a) > IMPORT_MAX_ITEMS) return bad(c, key, "has too many items");
  int i = 0;
  const cJSON *it;
  cJSON_ArrayForEach(it, a) {
    snprintf(c->path, sizeof c->path, "$.%s[%d]", key, i++);
    if (one(c, it) < 0) return -1;
  }
  return 0;
}

static int check_doc(checker *c, const cJSON *doc, tg_import_session *s) {
  static const char *const known[] = {"format", "version", "session",
                                      "messages", "calls", "taint", NULL};
  snprintf(c->path, sizeof c->path, "$");
  if (!cJSON_IsObject(doc)) {
    tg__errf(c->err, TG_ERRMSG, "not a toolgate export: the file is not a "
             "JSON object");
    return -1;
  }
  const cJSON *f = cJSON_GetObjectItemCaseSensitive(doc, "format");
  if (!cJSON_IsString(f) || strcmp(f->valuestring, EXPORT_FORMAT) != 0) {
    tg__errf(c->err, TG_ERRMSG, "not a toolgate export: $.format is not "
             "\"" EXPORT_FORMAT "\"");
    return -1;
  }
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(doc, "version");
  if (!cJSON_IsNumber(v) || v->valuedouble != EXPORT_VERSION) {
    char shown[64] = "(none)";
    if (cJSON_IsNumber(v)) tg_json_number_text(v->valuedouble, shown);
    tg__errf(c->err, TG_ERRMSG, "export version %s is not known: this "
             "toolgate (%s) reads version %d", shown, TG_VERSION,
             EXPORT_VERSION);
    return -1;
  }
  note_unknown(c, doc, known);
  if (check_session(c, cJSON_GetObjectItemCaseSensitive(doc, "session"), s) <
      0)
    return -1;
  return check_list(c, doc, "messages", check_message) < 0 ||
                 check_list(c, doc, "calls", check_call) < 0
             ? -1
             : 0;
}

int tg_store_import(tg_store *st, const char *text, size_t len,
                    tg_import_report *rep, char err[TG_ERRMSG]) {
  memset(rep, 0, sizeof *rep);
  if (len > TG_IMPORT_MAX) {
    tg__errf(err, TG_ERRMSG, "the file is over %u bytes", TG_IMPORT_MAX);
    return -EINVAL;
  }
  char why[TG_ERRMSG - 40];
  cJSON *doc = tg_json_parse(text, len, NULL, why, sizeof why);
  if (!doc) {
    tg__errf(err, TG_ERRMSG, "not JSON: %s", why);
    return -EINVAL;
  }
  /* an export was masked when written, but a file from elsewhere (made
   * by hand, or by a toolgate with other redactors) may hold credentials
   * the audit masks: masked before they are checked (the checker keeps
   * pointers into the document) and stored, like every row */
  tg__redact_tree(tg__store_redactor(st), doc);
  tg_import_session is = {0};
  checker c = {err, cJSON_CreateArray(), ""};
  if (!c.skipped || check_doc(&c, doc, &is) < 0) {
    cJSON_Delete(c.skipped);
    cJSON_Delete(doc);
    if (!c.skipped) tg__errf(err, TG_ERRMSG, "out of memory");
    return c.skipped ? -EINVAL : -ENOMEM;
  }
  int rc = st->be->session_import(st, doc, &is, rep, err);
  cJSON_Delete(doc);
  if (rc < 0) {
    cJSON_Delete(c.skipped);
    memset(rep, 0, sizeof *rep);
    return rc;
  }
  rep->skipped = c.skipped;
  return 0;
}
