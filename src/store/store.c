/*
 * store.c — a store as the fronts see it (tg_store_*, store_api.h: a database
 * opened on the caller's thread) and as a runtime uses it (the writer
 * thread, the sink the chain reaches it through).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "store.h"
#include "base/project.h"
#include "base/util.h"
#include "base/json.h"

#define AUDIT_ARGS_MAX (64u << 10)
#define AUDIT_RESULT_MAX (16u << 10)

static int64_t now_ms(void) { return (int64_t)tg__wall_ms(); }

static void store_free(tg_store *st) {
  if (!st) return;
  tg__writer_stop(st->w);
  tg__snap_free(st->snap);
  sqlite3_close(st->db);
  free(st->path);
  free(st);
}

/* A store with its caller's connection open on path (made by resolve). */
static tg_store *store_new(char *path, int create, int shared,
                           char err[TG_ERRMSG]) {
  tg_store *st = calloc(1, sizeof *st);
  if (!st) {
    free(path);
    tg__errf(err, TG_ERRMSG, "out of memory");
    return NULL;
  }
  st->path = path;
  st->db = tg__db_open(path, create, shared, err);
  if (!st->db) {
    store_free(st);
    return NULL;
  }
  if (tg__seal_key_load(st->db, st->seal_key) < 0) {
    tg__errf(err, TG_ERRMSG, "database %s: it has no approval key (the "
             "'keys' table was edited): move it aside", path);
    store_free(st);
    return NULL;
  }
  return st;
}

tg_store *tg_store_open(const char *path, int create, char err[TG_ERRMSG]) {
  char *p = tg__db_resolve(path, create, err);
  return p ? store_new(p, create, 0, err) : NULL;
}

void tg_store_close(tg_store *st) {
  if (st && !st->core) store_free(st); /* a runtime's is the runtime's */
}

const char *tg_store_path(const tg_store *st) { return st->path; }

/* ---- a runtime's store ---------------------------------------------------- */

tg_store *tg__store_start(tg_core *core, char err[TG_ERRMSG]) {
  char *p = tg__db_resolve(core->cfg.db, 1, err);
  if (!p) return NULL;
  int memory = tg__db_is_memory(p);
  tg_store *st = store_new(p, 1, memory, err);
  if (!st) return NULL;
  st->core = core;
  /* the loop's connection only reads: writes are the writer's */
  if (!memory) tg__db_exec(st->db, "PRAGMA query_only=1", NULL, 0);
  sqlite3 *wdb = memory ? st->db : tg__db_open(st->path, 1, 0, err);
  tg_audit_caps caps = {core->cfg.audit_args_max, core->cfg.audit_result_max};
  if (!caps.args_max) caps.args_max = AUDIT_ARGS_MAX;
  if (!caps.result_max) caps.result_max = AUDIT_RESULT_MAX;
  st->w = wdb ? tg__writer_start(st, wdb, &caps, err) : NULL; /* owns wdb */
  if (!st->w) {
    st->core = NULL;
    store_free(st);
    return NULL;
  }
  return st;
}

void tg__store_drain(tg_store *st) {
  if (st) tg__writer_drain(st->w);
}

void tg__store_free(tg_store *st) { store_free(st); }

static void sink_audit(void *ud, tg_audit_rec *rec) {
  tg__writer_audit(((tg_store *)ud)->w, rec);
}

static int sink_find(void *ud, tg_approval_query *q, int64_t *id) {
  return tg__approval_find(ud, q, id);
}

/* A grant job with its own copies of a's strings; the args (a->args_key)
 * sealed: their digest and masked copy, never the text (approval_seal.c).
 * Made on the caller's thread: the policies' redactor runs there. */
static tg_job *grant_job(tg_store *st, const tg_approval *a, const char *by) {
  tg_job *j = calloc(1, sizeof *j);
  if (!j) return NULL;
  j->kind = TG_JOB_GRANT;
  j->now_ms = now_ms();
  j->approval = *a;
  j->approval.tool = tg__strdup(a->tool);
  j->approval.args_key = j->approval.args_digest = NULL;
  j->approval.args_preview = NULL;
  char *digest = NULL, *preview = NULL;
  if (a->args_key &&
      tg__seal_args(st->seal_key, st->core ? &st->core->redact : NULL,
                    a->args_key, &digest, &preview) == 0) {
    j->approval.args_digest = digest;
    j->approval.args_preview = preview;
  }
  j->approval.arg = tg__strdup(a->arg);
  j->approval.glob = tg__strdup(a->glob);
  j->approval.session = tg__strdup(a->session);
  j->approval.project = tg__strdup(a->project);
  j->by = tg__strdup(by);
  if (!j->approval.tool || (a->args_key && !j->approval.args_digest) ||
      (a->arg && !j->approval.arg) || (a->glob && !j->approval.glob) ||
      (a->session && !j->approval.session) ||
      (a->project && !j->approval.project) || (by && !j->by)) {
    tg__job_free(j);
    return NULL;
  }
  return j;
}

static int sink_add(void *ud, const tg_approval *a, const char *call_id,
                    void (*stored)(void *arg, int64_t id), void *arg) {
  tg_store *st = ud;
  tg_job *j = grant_job(st, a, call_id);
  if (!j) return -1;
  j->stored = stored;
  j->arg = arg;
  tg__writer_job(st->w, j);
  return 0;
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

void tg__store_sink(tg_store *st, tg_sink *out) {
  *out = (tg_sink){st, sink_audit, sink_find, sink_add, sink_remember,
                   sink_recall};
}

int tg__store_record_usage(tg_store *st, const tg_usage *u,
                           char err[TG_ERRMSG]) {
  int rc = tg__usage_check(u, err);
  if (rc < 0) return rc;
  tg_job *j = calloc(1, sizeof *j);
  if (!j) goto nomem;
  j->kind = TG_JOB_USAGE;
  j->usage = *u;
  j->usage.session = tg__strdup(u->session ? u->session : st->core->cfg.session);
  j->usage.model = tg__strdup(u->model);
  if (!j->usage.ts_ms) j->usage.ts_ms = now_ms();
  if (!j->usage.session || !j->usage.model) goto nomem;
  tg__writer_job(st->w, j);
  return 0;
nomem:
  tg__job_free(j);
  tg__errf(err, TG_ERRMSG, "out of memory");
  return -ENOMEM;
}

/* ---- reads and administration (toolgate.h) -------------------------------- */

/* A runtime's store first writes what its runtime queued (a host reads
 * its own writes) and takes in approvals others changed. */
int tg__store_flushed(tg_store *st, char err[TG_ERRMSG]) {
  if (!st->w || tg__writer_flush(st->w) == 0) return 0;
  tg__errf(err, TG_ERRMSG, "out of memory");
  return -ENOMEM;
}

cJSON *tg_store_audit(tg_store *st, const tg_audit_filter *f,
                      char err[TG_ERRMSG]) {
  return tg__store_flushed(st, err) < 0 ? NULL : tg__audit_query(st->db, f, err);
}

cJSON *tg_store_approvals(tg_store *st, int all, char err[TG_ERRMSG]) {
  return tg__store_flushed(st, err) < 0 ? NULL
                              : tg__approvals_query(st->db, all, now_ms(), err);
}

int tg_store_usage(tg_store *st, const tg_usage_filter *f,
                   tg_usage_total *out, char err[TG_ERRMSG]) {
  int rc = tg__store_flushed(st, err);
  return rc < 0 ? rc : tg__usage_sum(st->db, f, now_ms(), out, err);
}

/* Runs a job now: through the writer (waiting for it) or on our own
 * connection. Returns its rc; the job is freed. */
static int run_now(tg_store *st, tg_job *j, char err[TG_ERRMSG]) {
  int rc;
  if (st->w) {
    j->sync = 1;
    tg__writer_job(st->w, j);
    tg__writer_wait(st->w, j);
    rc = j->rc;
  } else if (j->kind == TG_JOB_CALL) {
    j->id = j->fn(st->db, j->fn_arg, j->err, sizeof j->err);
    rc = j->id < 0 ? (int)j->id : 0;
  } else if (j->kind == TG_JOB_GRANT) {
    j->id = tg__approval_insert(st->db, &j->approval, j->by, j->now_ms,
                                j->err, sizeof j->err);
    rc = j->id > 0 ? 0 : (int)j->id;
  } else {
    rc = tg__approval_revoke(st->db, j->id, j->now_ms, j->err, sizeof j->err);
  }
  if (rc < 0) tg__errf(err, TG_ERRMSG, "%s", j->err);
  return rc;
}

int64_t tg__store_write(tg_store *st, tg_job_fn fn, void *arg,
                        char err[TG_ERRMSG]) {
  tg_job *j = calloc(1, sizeof *j);
  if (!j) {
    tg__errf(err, TG_ERRMSG, "out of memory");
    return -ENOMEM;
  }
  j->kind = TG_JOB_CALL;
  j->fn = fn;
  j->fn_arg = arg;
  j->now_ms = now_ms();
  int64_t rc = run_now(st, j, err);
  if (rc == 0) rc = j->id;
  tg__job_free(j);
  return rc;
}

/* What spec asks to store, as an approval (project and key malloc'd into
 * *project and *key). */
static int spec_approval(tg_store *st, const tg_always_spec *s,
                         tg_approval *a, char **project, char **key,
                         char err[TG_ERRMSG]) {
  int rc = tg__always_spec_check(s, st->core ? &st->core->redact : NULL,
                                 now_ms(), err);
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
  char *project = NULL, *key = NULL;
  tg_approval a;
  int64_t rc = spec_approval(st, spec, &a, &project, &key, err);
  tg_job *j = rc < 0 ? NULL : grant_job(st, &a, "grant");
  if (rc == 0 && !j) {
    tg__errf(err, TG_ERRMSG, "out of memory");
    rc = -ENOMEM;
  }
  if (j) {
    rc = run_now(st, j, err);
    if (rc == 0) rc = j->id;
  }
  tg__job_free(j);
  free(project);
  free(key);
  return rc;
}

int tg_store_revoke(tg_store *st, int64_t id, char err[TG_ERRMSG]) {
  tg_job *j = calloc(1, sizeof *j);
  if (!j) {
    tg__errf(err, TG_ERRMSG, "out of memory");
    return -ENOMEM;
  }
  j->kind = TG_JOB_REVOKE;
  j->id = id;
  j->now_ms = now_ms();
  int rc = run_now(st, j, err);
  tg__job_free(j);
  return rc;
}
