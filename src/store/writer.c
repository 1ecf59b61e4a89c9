/*
 * writer.c — a runtime's writer thread. The loop queues audit records
 * (each belongs to its call, core/sink.h) and jobs (usage, approvals);
 * the thread takes everything queued, writes it in one transaction, and
 * hands the lot back to the loop through a uv_async, where each record's
 * committed callback runs. So SQLite never writes on the loop thread, a
 * burst of calls costs one commit, and a call is answered only after its
 * record is in the file.
 *
 * A batch that fails is tried again (twice, after 50 and 100 ms: the
 * busy timeout has already waited for a lock), then item by item so one
 * bad item cannot sink the others; what still fails is reported in a
 * store_error event and its callbacks told (ok 0): never lost in silence.
 *
 * Threads: everything marked "mu" is shared; `pending` and the async's ref
 * are the loop's. The async is ref'd while anything is pending, so a loop
 * does not return while a call waits for its commit.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "store.h"
#include "base/closer.h"
#include "base/util.h"

typedef struct {
  uv_async_t async;
  tg_closer closer;
  struct tg_writer *w;       /* NULL once the writer is gone */
} async_box;

struct tg_writer {
  tg_store *st;
  sqlite3 *db;               /* the thread's connection */
  int shared;                /* db is st->db (":memory:") */
  sqlite3_stmt *insert;
  tg_audit_caps caps;
  uv_thread_t thread;
  int started;
  uv_mutex_t mu;
  uv_cond_t work;            /* the thread waits on it for work or quit */
  uv_cond_t written_cv;      /* tg__writer_wait/flush wait on it */
  /* mu: */
  tg_audit_rec *aq, **aq_tail;   /* queued */
  tg_job *jq, **jq_tail;
  tg_audit_rec *ad, **ad_tail;   /* answered, for the loop */
  tg_job *jd, **jd_tail;
  uint64_t queued, written;      /* items queued / written so far */
  int quit;
  int failed;                    /* items that could not be written */
  char fail_msg[TG_ERRMSG];
  /* the loop's: */
  async_box *box;
  size_t pending;                /* queued, not yet answered on the loop */
};

void tg__job_free(tg_job *j) {
  if (!j) return;
  free((char *)j->usage.session);
  free((char *)j->usage.model);
  free((char *)j->approval.tool);
  free((char *)j->approval.args_key);
  free((char *)j->approval.arg);
  free((char *)j->approval.glob);
  free((char *)j->approval.session);
  free((char *)j->approval.project);
  free(j->by);
  free(j);
}

/* ---- on the thread ---------------------------------------------------- */

static int run_job(tg_writer *w, tg_job *j) {
  char *e = j->err;
  size_t n = sizeof j->err;
  switch (j->kind) {
    case TG_JOB_USAGE:
      j->rc = tg__usage_insert(w->db, &j->usage, e, n);
      return j->rc;
    case TG_JOB_GRANT:
      j->id = tg__approval_insert(w->db, &j->approval, j->by, j->now_ms, e, n);
      j->rc = j->id > 0 ? 0 : (int)j->id;
      return j->rc;
    case TG_JOB_REVOKE:
      j->rc = tg__approval_revoke(w->db, j->id, j->now_ms, e, n);
      return j->rc == -ENOENT ? 0 : j->rc; /* an answer, not a failure */
  }
  return -EINVAL;
}

/* One transaction for the records and jobs given. SQLite's result code;
 * what went wrong in err. */
static int write_all(tg_writer *w, tg_audit_rec *recs, tg_job *jobs,
                     char *err, size_t errlen) {
  int rc = tg__db_exec(w->db, "BEGIN IMMEDIATE", err, errlen);
  for (tg_audit_rec *r = recs; rc == SQLITE_OK && r; r = r->next)
    if ((rc = tg__audit_insert(w->insert, r, &w->caps)) != SQLITE_OK)
      snprintf(err, errlen, "writing the audit record of %s: %s",
               r->call_id, sqlite3_errmsg(w->db));
  for (tg_job *j = jobs; rc == SQLITE_OK && j; j = j->next)
    if (run_job(w, j) < 0) {
      rc = SQLITE_ERROR;
      snprintf(err, errlen, "%s", j->err);
    }
  if (rc == SQLITE_OK) rc = tg__db_exec(w->db, "COMMIT", err, errlen);
  if (rc != SQLITE_OK) tg__db_exec(w->db, "ROLLBACK", NULL, 0);
  return rc;
}

static void mark_stored(tg_audit_rec *recs) {
  for (tg_audit_rec *r = recs; r; r = r->next) r->stored = 1;
}

static void note_failure(tg_writer *w, const char *why, int n) {
  uv_mutex_lock(&w->mu);
  w->failed += n;
  snprintf(w->fail_msg, sizeof w->fail_msg, "%s", why);
  uv_mutex_unlock(&w->mu);
}

/* Item by item, after the batch failed: each alone in its transaction. */
static void write_one_by_one(tg_writer *w, tg_audit_rec *recs,
                             tg_job *jobs) {
  char err[TG_ERRMSG];
  for (tg_audit_rec *r = recs; r; r = r->next) {
    tg_audit_rec *next = r->next;
    r->next = NULL;
    r->stored = write_all(w, r, NULL, err, sizeof err) == SQLITE_OK;
    r->next = next;
    if (!r->stored) note_failure(w, err, 1);
  }
  for (tg_job *j = jobs; j; j = j->next) {
    tg_job *next = j->next;
    j->next = NULL;
    if (write_all(w, NULL, j, err, sizeof err) != SQLITE_OK) {
      if (j->rc == 0) j->rc = -EIO;
      snprintf(j->err, sizeof j->err, "%s", err);
      note_failure(w, err, 1);
    }
    j->next = next;
  }
}

static void write_batch(tg_writer *w, tg_audit_rec *recs, tg_job *jobs) {
  char err[TG_ERRMSG] = "";
  for (int attempt = 0; attempt < 3; attempt++) {
    if (attempt) uv_sleep(50u * (unsigned)attempt);
    if (write_all(w, recs, jobs, err, sizeof err) == SQLITE_OK) {
      mark_stored(recs); /* jobs carry their own answer */
      return;
    }
  }
  write_one_by_one(w, recs, jobs);
}

static void append_answered(tg_writer *w, tg_audit_rec *recs, tg_job *jobs) {
  if (recs) {
    *w->ad_tail = recs;
    while (recs->next) recs = recs->next;
    w->ad_tail = &recs->next;
  }
  while (jobs) {
    tg_job *next = jobs->next;
    jobs->next = NULL;
    if (jobs->sync) {
      jobs->finished = 1; /* its waiter frees it; not touched after this */
    } else {
      *w->jd_tail = jobs;
      w->jd_tail = &jobs->next;
    }
    jobs = next;
  }
}

static void writer_main(void *arg) {
  tg_writer *w = arg;
  uv_mutex_lock(&w->mu);
  for (;;) {
    while (!w->quit && !w->aq && !w->jq) uv_cond_wait(&w->work, &w->mu);
    if (!w->aq && !w->jq) break; /* quit, with everything written */
    tg_audit_rec *recs = w->aq;
    tg_job *jobs = w->jq;
    uint64_t upto = w->queued;
    w->aq = NULL;
    w->aq_tail = &w->aq;
    w->jq = NULL;
    w->jq_tail = &w->jq;
    uv_mutex_unlock(&w->mu);
    write_batch(w, recs, jobs);
    uv_mutex_lock(&w->mu);
    append_answered(w, recs, jobs);
    w->written = upto;
    uv_cond_broadcast(&w->written_cv);
    uv_async_send(&w->box->async);
  }
  uv_mutex_unlock(&w->mu);
}

/* ---- on the loop -------------------------------------------------------- */

static void report_failures(tg_writer *w, int n, const char *msg) {
  cJSON *d = tg__event_data(w->st->core, NULL); /* NULL: nobody listens */
  if (d) {
    cJSON_AddStringToObject(d, "db", w->st->path);
    cJSON_AddStringToObject(d, "error", msg);
    cJSON_AddNumberToObject(d, "lost", n);
  }
  tg__emit(w->st->core, NULL, "store_error", NULL, d);
}

static void settle(tg_writer *w, size_t n) {
  w->pending -= n;
  if (!w->pending) uv_unref((uv_handle_t *)&w->box->async);
}

/* Answers what the thread has written: records' committed callbacks (a
 * call ends inside), jobs' stored callbacks. */
static void deliver(tg_writer *w) {
  char msg[TG_ERRMSG];
  uv_mutex_lock(&w->mu);
  tg_audit_rec *recs = w->ad;
  tg_job *jobs = w->jd;
  int failed = w->failed;
  snprintf(msg, sizeof msg, "%s", w->fail_msg);
  w->ad = NULL;
  w->ad_tail = &w->ad;
  w->jd = NULL;
  w->jd_tail = &w->jd;
  w->failed = 0;
  uv_mutex_unlock(&w->mu);
  if (failed) report_failures(w, failed, msg);
  while (recs) {
    tg_audit_rec *r = recs;
    recs = r->next; /* the callback may free r (its call) */
    settle(w, 1);
    r->committed(r, r->stored);
  }
  while (jobs) {
    tg_job *j = jobs;
    jobs = j->next;
    settle(w, 1);
    if (j->stored) j->stored(j->arg, j->rc == 0 ? j->id : 0);
    tg__job_free(j);
  }
}

static void async_cb(uv_async_t *a) {
  async_box *b = tg__owner_of(a, async_box, async);
  if (b->w) deliver(b->w);
}

static void box_closed(tg_closer *c) {
  free(tg__owner_of(c, async_box, closer));
}

static void keep(tg_writer *w) {
  if (w->pending++ == 0) uv_ref((uv_handle_t *)&w->box->async);
}

void tg__writer_audit(tg_writer *w, tg_audit_rec *rec) {
  rec->next = NULL;
  rec->stored = 0;
  keep(w);
  uv_mutex_lock(&w->mu);
  *w->aq_tail = rec;
  w->aq_tail = &rec->next;
  w->queued++;
  uv_cond_signal(&w->work);
  uv_mutex_unlock(&w->mu);
}

void tg__writer_job(tg_writer *w, tg_job *job) {
  job->next = NULL;
  if (!job->sync) keep(w);
  uv_mutex_lock(&w->mu);
  *w->jq_tail = job;
  w->jq_tail = &job->next;
  w->queued++;
  uv_cond_signal(&w->work);
  uv_mutex_unlock(&w->mu);
}

void tg__writer_wait(tg_writer *w, tg_job *job) {
  uv_mutex_lock(&w->mu);
  while (!job->finished) uv_cond_wait(&w->written_cv, &w->mu);
  uv_mutex_unlock(&w->mu);
}

void tg__writer_flush(tg_writer *w) {
  uv_mutex_lock(&w->mu);
  uint64_t upto = w->queued;
  while (w->written < upto) uv_cond_wait(&w->written_cv, &w->mu);
  uv_mutex_unlock(&w->mu);
}

void tg__writer_drain(tg_writer *w) {
  uv_loop_t *loop = w->st->core->loop;
  while (w->pending) uv_run(loop, UV_RUN_ONCE);
}

/* ---- life cycle --------------------------------------------------------- */

static int init_sync(tg_writer *w, char err[TG_ERRMSG]) {
  if (uv_mutex_init(&w->mu) < 0) goto fail;
  if (uv_cond_init(&w->work) < 0) {
    uv_mutex_destroy(&w->mu);
    goto fail;
  }
  if (uv_cond_init(&w->written_cv) < 0) {
    uv_cond_destroy(&w->work);
    uv_mutex_destroy(&w->mu);
    goto fail;
  }
  return 0;
fail:
  tg__errf(err, TG_ERRMSG, "database %s: cannot set up its writer thread",
           w->st->path);
  return -1;
}

static int start_async(tg_writer *w, char err[TG_ERRMSG]) {
  async_box *b = calloc(1, sizeof *b);
  if (!b || uv_async_init(w->st->core->loop, &b->async, async_cb) < 0) {
    free(b);
    tg__errf(err, TG_ERRMSG, "database %s: cannot set up its writer "
             "thread", w->st->path);
    return -1;
  }
  b->w = w;
  b->closer.closed = box_closed;
  uv_unref((uv_handle_t *)&b->async); /* ref'd only while items wait */
  w->box = b;
  return 0;
}

static void close_async(tg_writer *w) {
  if (!w->box) return;
  w->box->w = NULL;
  tg__close(&w->box->closer, (uv_handle_t *)&w->box->async, 0);
  w->box = NULL;
}

tg_writer *tg__writer_start(tg_store *st, sqlite3 *db,
                            const tg_audit_caps *caps, char err[TG_ERRMSG]) {
  tg_writer *w = calloc(1, sizeof *w);
  if (!w) {
    tg__errf(err, TG_ERRMSG, "out of memory");
    return NULL;
  }
  w->st = st;
  w->db = db;
  w->shared = db == st->db;
  w->caps = *caps;
  w->aq_tail = &w->aq;
  w->jq_tail = &w->jq;
  w->ad_tail = &w->ad;
  w->jd_tail = &w->jd;
  if (tg__audit_prepare(db, &w->insert) != SQLITE_OK) {
    tg__db_error(db, st->path, "cannot prepare its audit insert", err);
    free(w);
    return NULL;
  }
  if (init_sync(w, err) < 0) {
    sqlite3_finalize(w->insert);
    free(w);
    return NULL;
  }
  if (start_async(w, err) < 0) {
    tg__writer_stop(w);
    return NULL;
  }
  if (uv_thread_create(&w->thread, writer_main, w) < 0) {
    tg__errf(err, TG_ERRMSG, "database %s: cannot start its writer thread",
             st->path);
    tg__writer_stop(w);
    return NULL;
  }
  w->started = 1;
  return w;
}

void tg__writer_stop(tg_writer *w) {
  if (!w) return;
  if (w->started) {
    uv_mutex_lock(&w->mu);
    w->quit = 1;
    uv_cond_signal(&w->work);
    uv_mutex_unlock(&w->mu);
    uv_thread_join(&w->thread);
    deliver(w); /* what was written after the last turn of the loop */
  }
  close_async(w);
  sqlite3_finalize(w->insert);
  if (!w->shared) sqlite3_close(w->db);
  uv_cond_destroy(&w->written_cv);
  uv_cond_destroy(&w->work);
  uv_mutex_destroy(&w->mu);
  free(w);
}
