/*
 * backend.c — the SQLite backend's table (store/store.h) and its life:
 * opening a store on the caller's thread (one connection) or for a
 * runtime (the loop's read-only connection plus the writer thread's,
 * writer.c), where a write runs (tg__sq_write), and the audit, approval
 * and usage functions of the table, which are thin over audit.c,
 * approvals.c and usage.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "sqlite_store.h"
#include "base/util.h"

static int64_t now_ms(void) { return (int64_t)tg__wall_ms(); }

static void sq_free(tg_sqlite *st) {
  if (!st) return;
  tg__writer_stop(st->w);
  tg__snap_free(st->snap);
  sqlite3_close(st->db);
  free(st->base.path);
  free(st);
}

/* A store with its caller's connection open on path (taken). */
static tg_sqlite *sq_new(char *path, int create, int shared,
                         char err[TG_ERRMSG]) {
  tg_sqlite *st = calloc(1, sizeof *st);
  if (!st) {
    free(path);
    tg__errf(err, TG_ERRMSG, "out of memory");
    return NULL;
  }
  st->base.be = &tg__sqlite_backend;
  st->base.path = path;
  st->db = create == TG_STORE_OPEN_READ ? tg__db_open_read(path, err)
                                        : tg__db_open(path, create, shared, err);
  if (!st->db) {
    sq_free(st);
    return NULL;
  }
  if (tg__seal_key_load(st->db, st->base.seal_key) < 0) {
    tg__errf(err, TG_ERRMSG, "database %s: it has no approval key (the "
             "'keys' table was edited): move it aside", path);
    sq_free(st);
    return NULL;
  }
  return st;
}

static tg_store *sq_open(const char *path, int create, tg_core *core,
                         const tg_audit_caps *caps, char err[TG_ERRMSG]) {
  if (create == TG_STORE_OPEN_READ && core) {
    tg__errf(err, TG_ERRMSG, "a runtime's database is written: it is not "
             "opened read-only");
    return NULL;
  }
  char *p = tg__db_resolve(path, create > 0, err);
  if (!p) return NULL;
  int memory = core && tg__db_is_memory(p);
  tg_sqlite *st = sq_new(p, create, memory, err);
  if (st && create == TG_STORE_OPEN_READ) {
    /* a store only read answers approval_find too (explain --event asks
     * it as the hook's runtime would): the approvals in force now, read
     * once — nothing here changes them */
    st->snap = tg__snap_load(st->db, now_ms());
    if (!st->snap) {
      tg__errf(err, TG_ERRMSG, "database %s: its approvals cannot be read: "
               "%s", st->base.path, sqlite3_errmsg(st->db));
      sq_free(st);
      return NULL;
    }
  }
  if (!st || !core) return st ? &st->base : NULL;
  st->base.core = core;
  /* the loop's connection only reads: writes are the writer's */
  if (!memory) tg__db_exec(st->db, "PRAGMA query_only=1", NULL, 0);
  sqlite3 *wdb = memory ? st->db : tg__db_open(st->base.path, 1, 0, err);
  st->w = wdb ? tg__writer_start(st, wdb, caps, err) : NULL; /* owns wdb */
  if (!st->w) {
    sq_free(st);
    return NULL;
  }
  return &st->base;
}

static void sq_drain(tg_store *st) { tg__writer_drain(tg__sq(st)->w); }

static void sq_close(tg_store *st) { sq_free(tg__sq(st)); }

/* ---- where writes run ------------------------------------------------------ */

/* A runtime's store first writes what its runtime queued (a host reads
 * its own writes) and takes in approvals others changed. */
int tg__sq_flushed(tg_sqlite *st, char err[TG_ERRMSG]) {
  if (!st->w) {
    /* the audit journals beside the database loaded first (journal.c);
     * one that cannot be (a database we may only read) is read without */
    char e[TG_ERRMSG];
    if (!tg__db_is_memory(st->base.path))
      tg__journals_catch_up(st->db, NULL, st->base.path, 0, e, sizeof e);
    return 0;
  }
  if (tg__writer_flush(st->w) == 0) return 0;
  tg__errf(err, TG_ERRMSG, "out of memory");
  return -ENOMEM;
}

/* Runs a job now: through the writer (waiting for it) or on our own
 * connection. Returns its rc; the caller frees the job. */
static int run_now(tg_sqlite *st, tg_job *j, char err[TG_ERRMSG]) {
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
  } else if (j->kind == TG_JOB_USAGE) {
    rc = tg__usage_insert(st->db, &j->usage, j->err, sizeof j->err);
  } else {
    rc = tg__approval_revoke(st->db, j->id, j->now_ms, j->err, sizeof j->err);
  }
  if (rc < 0) tg__errf(err, TG_ERRMSG, "%s", j->err);
  return rc;
}

int64_t tg__sq_write(tg_sqlite *st, tg_job_fn fn, void *arg,
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

/* ---- audit ------------------------------------------------------------------ */

static void sq_audit_append(tg_store *st, tg_audit_rec *rec) {
  tg__writer_audit(tg__sq(st)->w, rec);
}

static cJSON *sq_audit_read(tg_store *st, const tg_audit_filter *f,
                            char err[TG_ERRMSG]) {
  tg_sqlite *s = tg__sq(st);
  return tg__sq_flushed(s, err) < 0 ? NULL : tg__audit_query(s->db, f, err);
}

/* ---- approvals -------------------------------------------------------------- */

static int sq_approval_find(tg_store *st, tg_approval_query *q, int64_t *id) {
  return tg__snap_find(tg__sq(st)->snap, q, id);
}

/* A grant job with its own copies of a's (sealed) strings. */
static tg_job *grant_job(const tg_approval *a, const char *by) {
  tg_job *j = calloc(1, sizeof *j);
  if (!j) return NULL;
  j->kind = TG_JOB_GRANT;
  j->now_ms = now_ms();
  j->approval = *a;
  j->approval.tool = tg__strdup(a->tool);
  j->approval.args_key = NULL;
  j->approval.args_digest = tg__strdup(a->args_digest);
  j->approval.args_preview = tg__strdup(a->args_preview);
  j->approval.arg = tg__strdup(a->arg);
  j->approval.glob = tg__strdup(a->glob);
  j->approval.session = tg__strdup(a->session);
  j->approval.project = tg__strdup(a->project);
  j->by = tg__strdup(by);
  if (!j->approval.tool || (a->args_digest && !j->approval.args_digest) ||
      (a->args_preview && !j->approval.args_preview) ||
      (a->arg && !j->approval.arg) || (a->glob && !j->approval.glob) ||
      (a->session && !j->approval.session) ||
      (a->project && !j->approval.project) || (by && !j->by)) {
    tg__job_free(j);
    return NULL;
  }
  return j;
}

static int sq_approval_add(tg_store *st, const tg_approval *a, const char *by,
                           void (*stored)(void *arg, int64_t id), void *arg) {
  tg_job *j = grant_job(a, by);
  if (!j) return -1;
  j->stored = stored;
  j->arg = arg;
  tg__writer_job(tg__sq(st)->w, j);
  return 0;
}

static int64_t sq_approval_grant(tg_store *st, const tg_approval *a,
                                 const char *by, char err[TG_ERRMSG]) {
  tg_job *j = grant_job(a, by);
  if (!j) {
    tg__errf(err, TG_ERRMSG, "out of memory");
    return -ENOMEM;
  }
  int64_t rc = run_now(tg__sq(st), j, err);
  if (rc == 0) rc = j->id;
  tg__job_free(j);
  return rc;
}

static int sq_approval_revoke(tg_store *st, int64_t id, char err[TG_ERRMSG]) {
  tg_job *j = calloc(1, sizeof *j);
  if (!j) {
    tg__errf(err, TG_ERRMSG, "out of memory");
    return -ENOMEM;
  }
  j->kind = TG_JOB_REVOKE;
  j->id = id;
  j->now_ms = now_ms();
  int rc = run_now(tg__sq(st), j, err);
  tg__job_free(j);
  return rc;
}

static cJSON *sq_approvals_read(tg_store *st, int all, char err[TG_ERRMSG]) {
  tg_sqlite *s = tg__sq(st);
  return tg__sq_flushed(s, err) < 0
             ? NULL
             : tg__approvals_query(s->db, all, now_ms(), err);
}

/* ---- usage ---------------------------------------------------------------- */

static int sq_usage_append(tg_store *st, const tg_usage *u,
                           char err[TG_ERRMSG]) {
  tg_job *j = calloc(1, sizeof *j);
  if (!j) goto nomem;
  j->kind = TG_JOB_USAGE;
  j->usage = *u;
  j->usage.session = tg__strdup(u->session);
  j->usage.model = tg__strdup(u->model);
  if (!j->usage.session || !j->usage.model) goto nomem;
  tg_sqlite *s = tg__sq(st);
  if (s->w) {
    tg__writer_job(s->w, j); /* a failure there is a store_error event */
    return 0;
  }
  int rc = run_now(s, j, err);
  tg__job_free(j);
  return rc;
nomem:
  tg__job_free(j);
  tg__errf(err, TG_ERRMSG, "out of memory");
  return -ENOMEM;
}

static int sq_usage_sum(tg_store *st, const tg_usage_filter *f,
                        tg_usage_total *out, char err[TG_ERRMSG]) {
  tg_sqlite *s = tg__sq(st);
  int rc = tg__sq_flushed(s, err);
  return rc < 0 ? rc : tg__usage_sum(s->db, f, out, err);
}

const tg_store_backend tg__sqlite_backend = {
    .name = "sqlite",
    .claims = NULL, /* the default: every path no other backend claims */
    .open = sq_open,
    .drain = sq_drain,
    .close = sq_close,
    .audit_append = sq_audit_append,
    .audit_read = sq_audit_read,
    .approval_find = sq_approval_find,
    .approval_add = sq_approval_add,
    .approval_grant = sq_approval_grant,
    .approval_revoke = sq_approval_revoke,
    .approvals_read = sq_approvals_read,
    .usage_append = sq_usage_append,
    .usage_sum = sq_usage_sum,
    .session_put = tg__sq_session_put,
    .session_end = tg__sq_session_end,
    .message_add = tg__sq_message_add,
    .session_read = tg__sq_session_read,
    .sessions_read = tg__sq_sessions_read,
    .search = tg__sq_search,
    .session_import = tg__sq_session_import,
    .agent_session = tg__sq_agent_session,
    .agent_read = tg__sq_agent_read,
    .agent_stop = tg__sq_agent_stop,
    .taint_raise = tg__sq_taint_raise,
    .taint_read = tg__sq_taint_read,
    .taint_clear = tg__sq_taint_clear,
    .memory_add = tg__sq_memory_add,
    .memory_recall = tg__sq_memory_recall,
};
