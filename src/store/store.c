/*
 * store.c — a store as the public API sees it (tg_store_*: a database
 * opened on the caller's thread) and as a runtime uses it (the sink the
 * chain reaches it through, the usage it queues), whatever the backend:
 * which backend opens a path, the checks and the sealing every backend
 * relies on, then a call through the backend's table (store.h).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "store.h"
#include "base/project.h"
#include "base/timeparse.h"
#include "base/util.h"
#include "base/json.h"

#define AUDIT_ARGS_MAX (64u << 10)
#define AUDIT_RESULT_MAX (16u << 10)

/* The backends built in, tried in order: the first that claims a path
 * opens it; one without claims (the default) takes what is left. */
static const tg_store_backend *const backends[] = {&tg__sqlite_backend};

static int64_t now_ms(void) { return (int64_t)tg__wall_ms(); }

static const tg_store_backend *backend_for(const char *path) {
  const tg_store_backend *fallback = NULL;
  for (size_t i = 0; i < sizeof backends / sizeof *backends; i++) {
    if (!backends[i]->claims) {
      if (!fallback) fallback = backends[i];
    } else if (path && backends[i]->claims(path)) {
      return backends[i];
    }
  }
  return fallback;
}

static tg_store *open_store(const char *path, int create, tg_core *core,
                            const tg_audit_caps *caps, char err[TG_ERRMSG]) {
  const tg_store_backend *be = backend_for(path);
  if (!be) {
    tg__errf(err, TG_ERRMSG, "database %s: no storage backend takes it",
             path ? path : "(default)");
    return NULL;
  }
  return be->open(path, create, core, caps, err);
}

tg_store *tg_store_open(const char *path, int create, char err[TG_ERRMSG]) {
  return open_store(path, create, NULL, NULL, err);
}

tg_store *tg_store_open_read(const char *path, char err[TG_ERRMSG]) {
  return open_store(path, TG_STORE_OPEN_READ, NULL, NULL, err);
}

void tg_store_close(tg_store *st) {
  if (st && !st->core) st->be->close(st); /* a runtime's is the runtime's */
}

const char *tg_store_path(const tg_store *st) { return st->path; }

tg_redactor *tg__store_redactor(tg_store *st) {
  return st->core ? &st->core->redact : NULL;
}

/* ---- a runtime's store ---------------------------------------------------- */

tg_store *tg__store_start(tg_core *core, char err[TG_ERRMSG]) {
  tg_audit_caps caps = {core->cfg.audit_args_max, core->cfg.audit_result_max};
  if (!caps.args_max) caps.args_max = AUDIT_ARGS_MAX;
  if (!caps.result_max) caps.result_max = AUDIT_RESULT_MAX;
  return open_store(core->cfg.db, 1, core, &caps, err);
}

void tg__store_drain(tg_store *st) {
  if (st) st->be->drain(st);
}

void tg__store_free(tg_store *st) {
  if (st) st->be->close(st);
}

static void sink_audit(void *ud, tg_audit_rec *rec) {
  tg_store *st = ud;
  st->be->audit_append(st, rec);
}

int tg__approval_find(tg_store *st, tg_approval_query *q, int64_t *id) {
  q->digest_key = st->seal_key;
  return st->be->approval_find(st, q, id);
}

static int sink_find(void *ud, tg_approval_query *q, int64_t *id) {
  return tg__approval_find(ud, q, id);
}

int tg__seal_args(const uint8_t key[TG_SHA256_SIZE], tg_redactor *r,
                  const char *args_key, char **digest, char **preview) {
  *digest = malloc(2 * TG_SHA256_SIZE + 1);
  *preview = tg__redact_str(r, args_key);
  if (!*preview) *preview = tg__strdup(args_key);
  if (!*digest || !*preview) {
    free(*digest);
    free(*preview);
    *digest = *preview = NULL;
    return -ENOMEM;
  }
  tg__args_digest(key, args_key, *digest);
  return 0;
}

/* a as a backend stores it: the args (a->args_key) sealed into their
 * digest and masked copy, never the text (*digest, *preview malloc'd).
 * Made on the caller's thread: the policies' redactor runs there. */
static int sealed(tg_store *st, const tg_approval *a, tg_approval *out,
                  char **digest, char **preview) {
  *out = *a;
  out->args_key = out->args_digest = out->args_preview = NULL;
  *digest = *preview = NULL;
  if (a->args_key &&
      tg__seal_args(st->seal_key, tg__store_redactor(st), a->args_key, digest,
                    preview) < 0)
    return -ENOMEM;
  out->args_digest = *digest;
  out->args_preview = *preview;
  return 0;
}

static int sink_add(void *ud, const tg_approval *a, const char *call_id,
                    void (*stored)(void *arg, int64_t id), void *arg) {
  tg_store *st = ud;
  tg_approval s;
  char *digest, *preview;
  int rc = sealed(st, a, &s, &digest, &preview) < 0
               ? -1
               : st->be->approval_add(st, &s, call_id, stored, arg);
  free(digest);
  free(preview);
  return rc;
}

/* A policy's memory: the runtime's session and project unless given. */
static int64_t sink_remember(void *ud, const tg_memory *m, char *err) {
  tg_store *st = ud;
  tg_memory c = *m;
  if (!c.session) c.session = st->core->cfg.session;
  if (!c.project) c.project = st->core->cfg.project;
  return tg_memory_record(st, &c, err);
}

static cJSON *sink_recall(void *ud, const tg_recall_filter *f, char *err) {
  tg_store *st = ud;
  tg_recall_filter c = *f;
  if (!c.session) c.session = st->core->cfg.session;
  if (!c.project) c.project = st->core->cfg.project;
  return tg_memory_recall(st, &c, err);
}

static int sink_taint_raise(void *ud, const char *session, const tg_taint *t,
                            char *err) {
  return tg__store_taint_raise(ud, session, t, err);
}

static int sink_taint_read(void *ud, const char *session, tg_taint *out,
                           char *err) {
  return tg__store_taint_read(ud, session, out, err);
}

void tg__store_sink(tg_store *st, tg_sink *out) {
  *out = (tg_sink){st, sink_audit, sink_find, sink_add, sink_remember,
                   sink_recall, sink_taint_raise, sink_taint_read};
}

int tg__usage_check(const tg_usage *u, char err[TG_ERRMSG]) {
  if (!u || !u->model || !*u->model) {
    tg__errf(err, TG_ERRMSG, "a usage record needs the model's name");
    return -EINVAL;
  }
  if (u->input_tokens < 0 || u->output_tokens < 0 || !isfinite(u->cost) ||
      u->cost < 0 || u->ts_ms < 0) {
    tg__errf(err, TG_ERRMSG, "a usage record's tokens, cost and time are "
             "numbers >= 0");
    return -EINVAL;
  }
  return 0;
}

int tg__store_record_usage(tg_store *st, const tg_usage *u,
                           char err[TG_ERRMSG]) {
  int rc = tg__usage_check(u, err);
  if (rc < 0) return rc;
  tg_usage c = *u;
  if (!c.session) c.session = st->core->cfg.session;
  if (!c.ts_ms) c.ts_ms = now_ms();
  return st->be->usage_append(st, &c, err);
}

/* ---- reads and administration (toolgate.h) -------------------------------- */

cJSON *tg_store_audit(tg_store *st, const tg_audit_filter *f,
                      char err[TG_ERRMSG]) {
  return st->be->audit_read(st, f, err);
}

cJSON *tg_store_approvals(tg_store *st, int all, char err[TG_ERRMSG]) {
  return st->be->approvals_read(st, all, err);
}

int tg_store_usage(tg_store *st, const tg_usage_filter *f,
                   tg_usage_total *out, char err[TG_ERRMSG]) {
  static const tg_usage_filter none;
  tg_usage_filter g = f ? *f : none;
  if (g.period && (g.since_ms = tg__period_start(g.period, now_ms())) < 0) {
    tg__errf(err, TG_ERRMSG, "unknown period '%s' (" TG_PERIODS ")",
             g.period);
    return -EINVAL;
  }
  g.period = NULL;
  return st->be->usage_sum(st, &g, out, err);
}

/* What spec asks to store, as an approval (project and key malloc'd into
 * *project and *key). */
static int spec_approval(tg_store *st, const tg_always_spec *s,
                         tg_approval *a, char **project, char **key,
                         char err[TG_ERRMSG]) {
  int rc = tg__always_spec_check(s, tg__store_redactor(st), now_ms(), err);
  if (rc < 0) return rc;
  if (!s->tool || !*s->tool) {
    tg__errf(err, TG_ERRMSG, "an approval needs the tool it is for");
    return -EINVAL;
  }
  if (s->scope == TG_SCOPE_ARGS && !cJSON_IsObject(s->args)) {
    tg__errf(err, TG_ERRMSG, "an approval of exact args needs the args "
             "(a JSON object)");
    return -EINVAL;
  }
  if (s->where == TG_WHERE_SESSION && (!s->session || !*s->session)) {
    tg__errf(err, TG_ERRMSG, "an approval for a session needs the session");
    return -EINVAL;
  }
  if (s->where == TG_WHERE_PROJECT &&
      !(*project = tg__project_dir(s->project, err)))
    return -EINVAL;
  if (s->scope == TG_SCOPE_ARGS && !(*key = tg_json_print_sorted(s->args))) {
    tg__errf(err, TG_ERRMSG, "out of memory");
    return -ENOMEM;
  }
  *a = (tg_approval){.scope = s->scope, .tool = s->tool, .args_key = *key,
                     .arg = s->arg, .glob = s->glob, .where = s->where,
                     .session = s->session, .project = *project,
                     .until_ms = s->until_ms};
  return 0;
}

int64_t tg_store_grant(tg_store *st, const tg_always_spec *spec,
                       char err[TG_ERRMSG]) {
  char *project = NULL, *key = NULL, *digest = NULL, *preview = NULL;
  tg_approval a, s;
  int64_t rc = spec_approval(st, spec, &a, &project, &key, err);
  if (rc == 0 && sealed(st, &a, &s, &digest, &preview) < 0) {
    tg__errf(err, TG_ERRMSG, "out of memory");
    rc = -ENOMEM;
  }
  if (rc == 0) rc = st->be->approval_grant(st, &s, "grant", err);
  free(digest);
  free(preview);
  free(project);
  free(key);
  return rc;
}

int tg_store_revoke(tg_store *st, int64_t id, char err[TG_ERRMSG]) {
  return st->be->approval_revoke(st, id, err);
}
