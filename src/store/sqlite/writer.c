/*
 * writer.c — a runtime's writer thread and its connection. The loop
 * queues audit records (each belongs to its call, core/sink.h) and jobs
 * (usage, approvals); the thread takes everything queued, writes it in
 * one transaction, and hands the lot back to the loop through a uv_async,
 * where each record's committed callback runs. A burst of calls costs one
 * commit, and a call is answered only after its record is in the file.
 *
 * Records the loop commits itself, on the same connection, when the
 * thread is idle (commit_on_loop): the records ended in one turn of the
 * loop, at its next turn (an idle handle: no system call to get there),
 * never waiting for a lock (busy: the thread takes them) and never
 * syncing (synchronous=NORMAL: a commit is a write into the WAL). For a lone call this spares the two thread
 * switches (wake the thread, be woken by it) that cost more than the
 * commit. The thread and the loop never use the connection at once:
 * thread_busy and loop_writing, under mu.
 *
 * Once the runtime has lived a moment (the thread's first idle tick,
 * POLL_MS) it has an audit journal (journal.c): the loop appends a turn's
 * records to it in one write() and answers them when it returns, whatever
 * the thread is doing; the thread loads them into calls behind a
 * watermark, LOAD_BEHIND records at a time (asked by the loop), at each
 * idle tick, before a batch with jobs (a flush before a read, a grant),
 * and when it stops. A commit costs a lone call about 35 µs of CPU; the
 * write() a few. A runtime that lives less than a tick (an agent's hook,
 * one call) commits as below and never makes a journal. Records the
 * journal cannot take (a write() that fails, a record the table would
 * refuse) are committed as below, their failures reported as below.
 *
 * Why the answer waits for the commit (or the journal's write), not only
 * the queue: the tool has
 * run by then, but its result has not reached the agent. Answering first
 * would let a crash (or a kill the agent provokes) between the answer and
 * the commit hand the agent a result — a file read, a secret — that the
 * audit never shows; waiting keeps "no answered call is missing from the
 * audit" (docs/storage.md, the SIGKILL test in spec/c/test_store.c). What
 * the wait costs is kept to the commit itself: the thread starts on a
 * record as soon as it is queued (it never lingers for company), the batch
 * is handed back before anything else (the approvals poll, checkpoints),
 * and records queued meanwhile share the next commit (group commit).
 *
 * A batch that fails is tried again (twice, after 50 and 100 ms: the
 * busy timeout has already waited for a lock), then item by item so one
 * bad item cannot sink the others; what still fails is reported in a
 * store_error event and its callbacks told (ok 0): never lost in silence.
 *
 * Batches: a commit costs about as much as 15 rows (the WAL frames of
 * each page it touched), so calls answered together share one. The
 * calls' full-text index is not in it: the thread indexes the calls
 * later, in a transaction of its own, once idle or every INDEX_BEHIND
 * calls (calls_index.c). The loop wakes the thread only for the first
 * item it queues, not for each.
 *
 * Checkpoints (copying the WAL into the file, with an fsync) would stall
 * the commit that triggers them: SQLite's automatic one is off on the
 * writer's connection. After a batch is handed back, when nothing is
 * queued and the WAL holds CHECKPOINT_PAGES, the checkpointer's thread
 * (checkpointer.c) copies it while the writer goes on; once the WAL holds
 * CHECKPOINT_MAX (16 MB) the writer checkpoints itself, whatever is
 * queued (maybe_checkpoint).
 *
 * Approvals: after a batch that stored or revoked one, and whenever
 * another connection has changed them (PRAGMA data_version, then the
 * `approvals` counter in meta; polled every POLL_MS when idle), the thread
 * loads the approvals in force and hands the snapshot to the loop, before
 * the callbacks of a batch with jobs (approvals.c); a batch of records
 * only looks after its answers.
 *
 * Threads: everything marked "mu" is shared; `pending` and the async's ref
 * are the loop's. The async is ref'd while anything is pending, so a loop
 * does not return while a call waits for its commit.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sqlite_store.h"
#include "base/closer.h"
#include "base/util.h"

#define POLL_MS 100          /* how often an idle thread looks for
                                approvals changed by other processes */
#define CHECKPOINT_PAGES 1000 /* WAL pages worth a checkpoint when idle */
#define CHECKPOINT_MAX 4000  /* ... and at once, however busy */
#define INDEX_BEHIND 256     /* calls left unindexed before the thread
                                indexes them between batches, however busy
                                (when idle: at its next tick) */
#define INDEX_CHUNK 512      /* calls indexed in one transaction */
#define OPEN_AFTER 32        /* records committed as they came before the
                                runtime makes its journal */
#define LOAD_BEHIND 256      /* journal records the loop appends before it
                                asks the thread to load them (when idle:
                                at its next tick) */

typedef struct {
  uv_async_t async;          /* the thread's answers are ready */
  uv_idle_t idle;            /* the loop has records to commit */
  tg_closer closer;
  struct tg_writer *w;       /* NULL once the writer is gone */
} async_box;

struct tg_writer {
  tg_sqlite *st;
  sqlite3 *db;               /* the thread's connection */
  int shared;                /* db is st->db (":memory:") */
  sqlite3_stmt *insert;
  tg_checkpointer *checkpointer; /* NULL: the thread checkpoints itself */
  sqlite3_stmt *begin, *commit; /* BEGIN IMMEDIATE, COMMIT: prepared once */
  sqlite3_stmt *dv_query;        /* PRAGMA data_version */
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
  uint64_t queued, taken, written; /* items queued / taken by the thread
                                    / written, so far */
  int quit;
  int thread_busy;               /* the thread is on the connection (not
                                    waiting for work) */
  int loop_writing;              /* the loop is (commit_on_loop) */
  int failed;                    /* items that could not be written */
  char fail_msg[TG_ERRMSG];
  tg_snap *snap;                 /* approvals loaded for the loop */
  uint64_t journaled;            /* records appended to the journal */
  int load_asked;                /* the loop asks the thread to load it
                                    (or to make it) */
  uint64_t direct;               /* records committed as they came */
  /* the thread's: */
  int wal_pages;                 /* in the WAL since the last checkpoint */
  int asked_at;                  /* wal_pages when the checkpointer was
                                    last asked (0: since the WAL started
                                    over) */
  int64_t data_version;          /* PRAGMA data_version last seen */
  int64_t approvals_version;     /* meta's counter of the snapshot */
  int unindexed;                 /* calls stored and not yet indexed for
                                    search (at start: those a crash left,
                                    about) */
  /* the loop's: */
  async_box *box;
  size_t pending;                /* queued, not yet answered on the loop */
  tg_audit_rec *lq, **lq_tail;   /* records for the loop to commit */
  tg_journal *journal;           /* mu (set once by the thread). NULL:
                                    none yet, records are committed as
                                    they come */
  int no_journal;                /* the thread's: none to be made */
  tg_jbuf jb;                    /* the loop's: a turn's records, framed */
  uint64_t journaled_asked;      /* journaled when the thread was last
                                    asked to load */
  /* the thread's: */
  uint64_t loaded;               /* journal records loaded */
};

void tg__job_free(tg_job *j) {
  if (!j) return;
  free((char *)j->usage.session);
  free((char *)j->usage.model);
  free((char *)j->approval.tool);
  free((char *)j->approval.args_key);
  free((char *)j->approval.args_digest);
  free((char *)j->approval.args_preview);
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
    case TG_JOB_SYNC:
      return 0;
    case TG_JOB_CALL:
      j->id = j->fn(w->db, j->fn_arg, e, n);
      j->rc = j->id < 0 ? (int)j->id : 0;
      return j->rc;
  }
  return -EINVAL;
}

/* Runs a statement without rows (prepared once); the error in err. */
static int step_once(tg_writer *w, sqlite3_stmt *st, char *err,
                     size_t errlen) {
  int rc = sqlite3_step(st);
  sqlite3_reset(st);
  if (rc == SQLITE_DONE) return SQLITE_OK;
  snprintf(err, errlen, "%s", sqlite3_errmsg(w->db));
  return rc;
}

/* The records into calls, row by row: since version 8 no full-text
 * index is flushed per statement (calls_index.c), so a batch needs no
 * detour through a table of its own. */
static int write_records(tg_writer *w, tg_audit_rec *recs, char *err,
                         size_t errlen) {
  int rc = SQLITE_OK;
  for (tg_audit_rec *r = recs; rc == SQLITE_OK && r; r = r->next)
    if ((rc = tg__audit_insert(w->insert, r, &w->caps)) != SQLITE_OK)
      snprintf(err, errlen, "writing the audit record of %s: %s",
               r->call_id, sqlite3_errmsg(w->db));
  return rc;
}

/* One transaction for the records and jobs given. SQLite's result code;
 * what went wrong in err. */
static void note_failure(tg_writer *w, const char *why, int n) {
  uv_mutex_lock(&w->mu);
  w->failed += n;
  snprintf(w->fail_msg, sizeof w->fail_msg, "%s", why);
  uv_mutex_unlock(&w->mu);
}

static int has_sync(const tg_job *j) {
  for (; j; j = j->next)
    if (j->kind == TG_JOB_SYNC) return 1;
  return 0;
}

static int write_all(tg_writer *w, tg_audit_rec *recs, tg_job *jobs,
                     char *err, size_t errlen) {
  /* a flush before a read: every journal beside the database (others',
   * dead ones') in first; a failure leaves them for the next (the read
   * goes on) */
  if (!w->shared && has_sync(jobs)) {
    char e[TG_ERRMSG];
    int64_t n = tg__journals_catch_up(w->db, w->insert, w->st->base.path,
                                      0, e, sizeof e);
    if (n > 0) w->unindexed += (int)n;
  }
  int rc = step_once(w, w->begin, err, errlen);
  int64_t loaded = 0;
  /* the journal first: a job (a flush before a read) comes after it */
  int refused = 0;
  if (rc == SQLITE_OK && w->journal && jobs && !w->shared &&
      (loaded = tg__journal_load_own(w->db, w->insert, w->journal, &refused,
                                     err, errlen)) < 0)
    rc = SQLITE_ERROR;
  if (refused) note_failure(w, err, refused); /* answered with the batch */
  if (rc == SQLITE_OK) rc = write_records(w, recs, err, errlen);
  for (tg_job *j = jobs; rc == SQLITE_OK && j; j = j->next)
    if (run_job(w, j) < 0) {
      rc = SQLITE_ERROR;
      snprintf(err, errlen, "%s", j->err);
    }
  if (rc == SQLITE_OK) rc = step_once(w, w->commit, err, errlen);
  if (rc != SQLITE_OK) tg__db_exec(w->db, "ROLLBACK", NULL, 0);
  else w->unindexed += (int)loaded;
  return rc;
}

/* The journal's records into calls, in a transaction of their own (the
 * thread's; with jobs, write_all does it). A failure is no loss: the
 * records stay in the journal for the next try. */
static void load_journal(tg_writer *w) {
  char err[TG_ERRMSG];
  uv_mutex_lock(&w->mu);
  if (!w->journal) w->load_asked = 0;
  uv_mutex_unlock(&w->mu);
  if (!w->journal) return;
  uv_mutex_lock(&w->mu);
  uint64_t upto = w->journaled;
  w->load_asked = 0;
  uv_mutex_unlock(&w->mu);
  if (upto == w->loaded) return;
  int64_t n = -1;
  int refused = 0;
  int rc = step_once(w, w->begin, err, sizeof err);
  if (rc == SQLITE_OK &&
      (n = tg__journal_load_own(w->db, w->insert, w->journal, &refused, err,
                                sizeof err)) < 0)
    rc = SQLITE_ERROR;
  if (rc == SQLITE_OK) rc = step_once(w, w->commit, err, sizeof err);
  if (rc != SQLITE_OK) {
    tg__db_exec(w->db, "ROLLBACK", NULL, 0);
    return;
  }
  w->loaded = upto; /* at least: the journal may hold more */
  w->unindexed += (int)n;
  if (refused) { /* answered already: said as soon as known */
    note_failure(w, err, refused);
    uv_mutex_lock(&w->mu);
    uv_async_send(&w->box->async);
    uv_mutex_unlock(&w->mu);
  }
}

/* The journal, made once OPEN_AFTER records were committed as they came:
 * a runtime with fewer calls (an agent's hook: one) commits its records
 * rather than pay a journal's making and loading; one that cannot make it
 * (a folder it cannot write) too. */
static void open_journal(tg_writer *w) {
  char err[TG_ERRMSG];
  uv_mutex_lock(&w->mu);
  int due = w->direct >= OPEN_AFTER;
  uv_mutex_unlock(&w->mu);
  if (w->journal || w->no_journal || !due) return;
  w->no_journal = 1; /* tried once */
  if (w->shared) return;
  tg_journal *j = tg__journal_open(w->db, w->st->base.path, err);
  if (!j) return;
  uv_mutex_lock(&w->mu);
  w->journal = j;
  uv_mutex_unlock(&w->mu);
}

/* Journals of processes that died since (a crash, a kill), loaded at
 * the thread's idle ticks while it has a journal of its own: their rows
 * get ids soon after they were written, as the audit's time filter
 * expects (audit.c, first_id_since). */
static void catch_up_dead(tg_writer *w) {
  char err[TG_ERRMSG];
  if (!w->journal) return;
  int64_t n = tg__journals_catch_up(w->db, w->insert, w->st->base.path, 1,
                                    err, sizeof err);
  if (n > 0) w->unindexed += (int)n;
}

/* Counts records committed as they came (mu held); asks the thread to
 * make the journal once there were OPEN_AFTER. */
static void count_direct(tg_writer *w, const tg_audit_rec *recs) {
  uint64_t before = w->direct;
  for (; recs; recs = recs->next) w->direct++;
  if (before < OPEN_AFTER && w->direct >= OPEN_AFTER) {
    w->load_asked = 1;
    uv_cond_signal(&w->work);
  }
}

static void mark_stored(tg_audit_rec *recs) {
  for (tg_audit_rec *r = recs; r; r = r->next) r->stored = 1;
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

static int64_t int_query(sqlite3 *db, const char *sql) {
  sqlite3_stmt *st = NULL;
  int64_t v = -1;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW)
    v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return v;
}

/* Reloads the approvals for the loop when they changed: by our own batch
 * (force), or by another connection. Returns 1 when a snapshot waits for
 * the loop. */
static int refresh_approvals(tg_writer *w, int force) {
  int64_t dv = -1;
  if (sqlite3_step(w->dv_query) == SQLITE_ROW)
    dv = sqlite3_column_int64(w->dv_query, 0);
  sqlite3_reset(w->dv_query);
  if (!force && dv == w->data_version) return 0;
  w->data_version = dv;
  int64_t av = tg__approvals_version(w->db);
  if (!force && av == w->approvals_version) return 0;
  tg_snap *s = tg__snap_load(w->db, (int64_t)tg__wall_ms());
  if (!s) {
    w->data_version = -1; /* could not read: try again next time */
    return 0;
  }
  w->approvals_version = av;
  uv_mutex_lock(&w->mu);
  tg__snap_free(w->snap); /* one the loop has not taken yet */
  w->snap = s;
  uv_mutex_unlock(&w->mu);
  return 1;
}

/* SQLite tells the pages in the WAL after each commit (the thread's). */
static int wal_hook(void *arg, sqlite3 *db, const char *name, int pages) {
  ((tg_writer *)arg)->wal_pages = pages;
  return SQLITE_OK;
}

/* Checkpoints when idle (idle: nothing queued) on the checkpointer's
 * thread, so the next batch does not wait for its fsync. Commits made
 * while it runs stay in the WAL, and the WAL starts over only after a
 * checkpoint that copied all of it: if calls never pause long enough for
 * one, the WAL reaches CHECKPOINT_MAX and the thread checkpoints itself,
 * between two batches, which always ends with all of it copied (readers
 * aside). */
static void maybe_checkpoint(tg_writer *w, int idle) {
  if (w->wal_pages < w->asked_at) w->asked_at = 0; /* the WAL started over */
  if (w->wal_pages < (idle ? w->asked_at + CHECKPOINT_PAGES : CHECKPOINT_MAX))
    return;
  if (w->checkpointer && w->wal_pages < CHECKPOINT_MAX) {
    /* once per CHECKPOINT_PAGES written, not after every batch while the
     * WAL waits to start over */
    tg__checkpointer_ask(w->checkpointer);
    w->asked_at = w->wal_pages;
    return;
  }
  /* PASSIVE: never waits for readers (log --follow); what it leaves, the
   * next one takes */
  sqlite3_wal_checkpoint_v2(w->db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL,
                            NULL);
  w->wal_pages = 0;
  w->asked_at = 0;
}

/* The calls past the index's watermark into it, INDEX_CHUNK to a
 * transaction of their own, after their answers went (calls_index.c);
 * records queued meanwhile go first (what is left waits for the next
 * batch or tick). A failure is no loss (the rows are stored; the next try
 * or a search indexes them). */
static void index_calls(tg_writer *w) {
  char err[TG_ERRMSG];
  for (;;) {
    int64_t n = -1;
    int rc = step_once(w, w->begin, err, sizeof err);
    if (rc == SQLITE_OK &&
        (n = tg__calls_index_some(w->db, INDEX_CHUNK, err, sizeof err)) < 0)
      rc = SQLITE_ERROR;
    if (rc == SQLITE_OK) rc = step_once(w, w->commit, err, sizeof err);
    if (rc != SQLITE_OK) {
      tg__db_exec(w->db, "ROLLBACK", NULL, 0);
      return;
    }
    if (n < INDEX_CHUNK) break;
    uv_mutex_lock(&w->mu);
    int waiting = w->queued != w->taken;
    uv_mutex_unlock(&w->mu);
    if (waiting) return;
  }
  w->unindexed = 0;
}

/* Did this batch store or revoke an approval? */
static int touches_approvals(const tg_job *j) {
  for (; j; j = j->next)
    if ((j->kind == TG_JOB_GRANT || j->kind == TG_JOB_REVOKE) && j->rc == 0)
      return 1;
  return 0;
}

/* Waits for work (mu held); polls for other processes' approvals while
 * idle. 0 when there is none and the thread should quit. */
static int wait_for_work(tg_writer *w) {
  while (!w->quit && (w->queued == w->taken || w->loop_writing)) {
    w->thread_busy = 0;
    int rc = 0;
    if (!w->load_asked || w->loop_writing)
      rc = uv_cond_timedwait(&w->work, &w->mu, POLL_MS * 1000000ull);
    w->thread_busy = 1; /* the loop commits only while this is 0 */
    if (w->loop_writing) continue;
    if (w->load_asked) {
      uv_mutex_unlock(&w->mu);
      open_journal(w);
      load_journal(w);
      uv_mutex_lock(&w->mu);
      continue;
    }
    if (rc != UV_ETIMEDOUT) continue;
    uv_mutex_unlock(&w->mu);
    open_journal(w);
    load_journal(w);
    catch_up_dead(w);
    int fresh = refresh_approvals(w, 0);
    if (w->unindexed) index_calls(w);
    maybe_checkpoint(w, 1);
    uv_mutex_lock(&w->mu);
    if (fresh) uv_async_send(&w->box->async);
  }
  return w->queued != w->taken;
}

static void writer_main(void *arg) {
  tg_writer *w = arg;
  uv_mutex_lock(&w->mu);
  w->thread_busy = 1;
  while (wait_for_work(w)) {
    tg_audit_rec *recs = w->aq;
    tg_job *jobs = w->jq;
    uint64_t upto = w->queued;
    w->taken = upto;
    w->aq = NULL;
    w->aq_tail = &w->aq;
    w->jq = NULL;
    w->jq_tail = &w->jq;
    uv_mutex_unlock(&w->mu);
    write_batch(w, recs, jobs);
    /* A batch with jobs reloads the approvals before its answers: a grant
     * or revoke is in force when its caller hears of it, and a flush
     * (tg__writer_flush) sees what other processes changed. A batch of
     * audit records only looks for others' changes after its answers:
     * nothing in it waits for them, and they cost its calls a query. */
    int first = jobs != NULL;
    if (first) refresh_approvals(w, touches_approvals(jobs));
    for (tg_audit_rec *r = recs; r; r = r->next) w->unindexed += r->stored;
    uv_mutex_lock(&w->mu);
    count_direct(w, recs);
    append_answered(w, recs, jobs);
    w->written = upto;
    uv_cond_broadcast(&w->written_cv);
    uv_async_send(&w->box->async);
    int idle = w->queued == w->taken;
    uv_mutex_unlock(&w->mu);
    if (!first && refresh_approvals(w, 0)) uv_async_send(&w->box->async);
    if (w->unindexed >= INDEX_BEHIND) index_calls(w);
    maybe_checkpoint(w, idle); /* after the batch is answered */
    uv_mutex_lock(&w->mu);
  }
  uv_mutex_unlock(&w->mu);
  load_journal(w); /* all of it, before the journal goes */
  /* a short-lived runtime (an agent's hook: one call) leaves its few
   * calls to the next search or writer rather than pay an index
   * transaction on its way out; many are indexed now */
  if (w->unindexed >= INDEX_BEHIND) index_calls(w);
}

/* ---- on the loop -------------------------------------------------------- */

static void report_failures(tg_writer *w, int n, const char *msg) {
  cJSON *d = tg__event_data(w->st->base.core, NULL); /* NULL: nobody listens */
  if (d) {
    cJSON_AddStringToObject(d, "db", w->st->base.path);
    cJSON_AddStringToObject(d, "error", msg);
    cJSON_AddNumberToObject(d, "lost", n);
  }
  tg__emit(w->st->base.core, NULL, "store_error", NULL, d);
}

static void settle(tg_writer *w, size_t n) {
  w->pending -= n;
  if (!w->pending) uv_unref((uv_handle_t *)&w->box->async);
}

/* The approvals the thread loaded last, in place for the loop's lookups
 * (the loop's thread). */
static void take_snapshot(tg_writer *w) {
  uv_mutex_lock(&w->mu);
  tg_snap *snap = w->snap;
  w->snap = NULL;
  uv_mutex_unlock(&w->mu);
  if (!snap) return;
  tg__snap_free(w->st->snap);
  w->st->snap = snap;
}

/* Answers what the thread has written: records' committed callbacks (a
 * call ends inside), jobs' stored callbacks. */
static void deliver(tg_writer *w) {
  char msg[TG_ERRMSG];
  take_snapshot(w); /* first: a grant's memory copy goes once this has it */
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

static void keep(tg_writer *w) {
  if (w->pending++ == 0) uv_ref((uv_handle_t *)&w->box->async);
}

/* Counts one more item queued (mu held) and wakes the thread for the
 * first one: it may be idle; with items queued it is busy and takes them
 * all once its batch is answered. */
static void wake(tg_writer *w) {
  if (++w->queued - w->taken == 1) uv_cond_signal(&w->work);
}

/* Hands the records the loop holds to the thread (mu held): it is
 * busy, a job must come after them, or the loop could not write them. */
static void hand_to_thread(tg_writer *w, tg_audit_rec *recs) {
  while (recs) {
    tg_audit_rec *r = recs;
    recs = r->next;
    r->next = NULL;
    *w->aq_tail = r;
    w->aq_tail = &r->next;
    wake(w);
  }
}

/* The records the loop holds, committed by the loop itself when the
 * thread is idle: waking the thread and being woken by it cost a lone
 * call more than its commit (two thread switches, on a busy machine
 * each a wait for a core). Records ended in one turn of the loop share
 * the commit. The loop never waits for a lock: another process holding
 * the file, or any error, hands them to the thread, which waits, tries
 * again and reports as for its own batches. Answered in deliver, after
 * this, as the thread's are. */
/* The records the loop holds, appended to the journal in one write():
 * answered once it returns (deliver). 0, or -1: not appended (the caller
 * commits them as before). */
static int journal_on_loop(tg_writer *w, tg_audit_rec *recs) {
  uint64_t n = 0;
  w->jb.len = 0;
  w->jb.oom = 0;
  for (tg_audit_rec *r = recs; r; r = r->next, n++)
    /* a record the table refuses (no id, session or tool) is committed
     * as before, so its failure is reported before its answer */
    if (!r->call_id || !r->session || !r->tool ||
        tg__journal_add(&w->jb, r, &w->caps) < 0)
      return -1;
  if (tg__journal_append(w->journal, &w->jb) < 0) return -1;
  if (w->jb.cap > (1u << 20)) { /* a big result: not kept for the next */
    free(w->jb.p);
    w->jb = (tg_jbuf){0};
  }
  mark_stored(recs);
  uv_mutex_lock(&w->mu);
  append_answered(w, recs, NULL);
  w->journaled += n;
  if (w->journaled - w->journaled_asked >= LOAD_BEHIND) {
    w->journaled_asked = w->journaled;
    w->load_asked = 1;
    uv_cond_signal(&w->work);
  }
  uv_mutex_unlock(&w->mu);
  return 0;
}

static void commit_on_loop(tg_writer *w) {
  tg_audit_rec *recs = w->lq;
  if (!recs) return;
  w->lq = NULL;
  w->lq_tail = &w->lq;
  uv_mutex_lock(&w->mu);
  int journal = w->journal != NULL;
  uv_mutex_unlock(&w->mu);
  if (journal && journal_on_loop(w, recs) == 0) return;
  uv_mutex_lock(&w->mu);
  int mine = !w->thread_busy && w->queued == w->taken;
  if (mine) w->loop_writing = 1;
  else hand_to_thread(w, recs);
  uv_mutex_unlock(&w->mu);
  if (!mine) return;
  char err[TG_ERRMSG];
  sqlite3_busy_timeout(w->db, 0);
  int ok = write_all(w, recs, NULL, err, sizeof err) == SQLITE_OK;
  sqlite3_busy_timeout(w->db, TG_DB_BUSY_MS);
  if (ok) {
    mark_stored(recs);
    for (tg_audit_rec *r = recs; r; r = r->next) w->unindexed++;
  }
  uv_mutex_lock(&w->mu);
  w->loop_writing = 0;
  if (ok) append_answered(w, recs, NULL);
  else hand_to_thread(w, recs);
  if (ok) count_direct(w, recs);
  if (w->queued != w->taken) uv_cond_signal(&w->work);
  uv_mutex_unlock(&w->mu);
}

static void async_cb(uv_async_t *a) {
  async_box *b = tg__owner_of(a, async_box, async);
  if (b->w) deliver(b->w);
}

/* The loop's next turn, before it polls: no system call to get there. */
static void idle_cb(uv_idle_t *i) {
  async_box *b = tg__owner_of(i, async_box, idle);
  uv_idle_stop(i);
  if (!b->w) return;
  commit_on_loop(b->w);
  deliver(b->w);
}

static void box_closed(tg_closer *c) {
  free(tg__owner_of(c, async_box, closer));
}

/* A record waits for the loop's next turn (commit_on_loop, from the idle
 * handle's callback), with those that end before it. */
void tg__writer_audit(tg_writer *w, tg_audit_rec *rec) {
  rec->next = NULL;
  rec->stored = 0;
  keep(w);
  int first = !w->lq;
  *w->lq_tail = rec;
  w->lq_tail = &rec->next;
  if (first) uv_idle_start(&w->box->idle, idle_cb);
}

void tg__writer_job(tg_writer *w, tg_job *job) {
  job->next = NULL;
  if (!job->sync) keep(w);
  uv_mutex_lock(&w->mu);
  int journal = w->journal != NULL;
  uv_mutex_unlock(&w->mu);
  if (journal && w->lq) { /* in the journal, which the job's batch loads */
    tg_audit_rec *recs = w->lq;
    if (journal_on_loop(w, recs) == 0) {
      w->lq = NULL;
      w->lq_tail = &w->lq;
    }
  }
  uv_mutex_lock(&w->mu);
  /* the records the loop holds go first: a flush is written after them */
  hand_to_thread(w, w->lq);
  w->lq = NULL;
  w->lq_tail = &w->lq;
  *w->jq_tail = job;
  w->jq_tail = &job->next;
  wake(w);
  uv_mutex_unlock(&w->mu);
}

void tg__writer_wait(tg_writer *w, tg_job *job) {
  uv_mutex_lock(&w->mu);
  while (!job->finished) uv_cond_wait(&w->written_cv, &w->mu);
  uv_mutex_unlock(&w->mu);
  take_snapshot(w);
}

int tg__writer_flush(tg_writer *w) {
  tg_job *j = calloc(1, sizeof *j);
  if (!j) return -ENOMEM;
  j->kind = TG_JOB_SYNC; /* its batch checks for others' approvals too */
  j->sync = 1;
  tg__writer_job(w, j);
  tg__writer_wait(w, j);
  tg__job_free(j);
  return 0;
}

void tg__writer_drain(tg_writer *w) {
  uv_loop_t *loop = w->st->base.core->loop;
  while (w->pending) uv_run(loop, UV_RUN_ONCE);
}

/* ---- life cycle --------------------------------------------------------- */

static int prepare(sqlite3 *db, const char *sql, sqlite3_stmt **st) {
  return sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, st, NULL);
}

static void finalize_all(tg_writer *w) {
  sqlite3_stmt *all[] = {w->insert, w->begin, w->commit, w->dv_query};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++)
    sqlite3_finalize(all[i]);
}

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
           w->st->base.path);
  return -1;
}

static int start_async(tg_writer *w, char err[TG_ERRMSG]) {
  async_box *b = calloc(1, sizeof *b);
  if (!b || uv_async_init(w->st->base.core->loop, &b->async, async_cb) < 0) {
    free(b);
    tg__errf(err, TG_ERRMSG, "database %s: cannot set up its writer "
             "thread", w->st->base.path);
    return -1;
  }
  uv_idle_init(w->st->base.core->loop, &b->idle);
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
  tg__close(&w->box->closer, (uv_handle_t *)&w->box->idle, 0);
  w->box = NULL;
}

tg_writer *tg__writer_start(tg_sqlite *st, sqlite3 *db,
                            const tg_audit_caps *caps, char err[TG_ERRMSG]) {
  tg_writer *w = calloc(1, sizeof *w);
  if (!w) {
    tg__errf(err, TG_ERRMSG, "out of memory");
    if (db != st->db) sqlite3_close(db);
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
  w->lq_tail = &w->lq;
  /* checkpoints are the thread's to time (maybe_checkpoint) */
  tg__db_exec(db, "PRAGMA wal_autocheckpoint=0", NULL, 0);
  sqlite3_wal_hook(db, wal_hook, w);
  if (tg__audit_prepare(db, &w->insert) != SQLITE_OK ||
      prepare(db, "BEGIN IMMEDIATE", &w->begin) != SQLITE_OK ||
      prepare(db, "COMMIT", &w->commit) != SQLITE_OK ||
      prepare(db, "PRAGMA data_version", &w->dv_query) != SQLITE_OK) {
    tg__db_error(db, st->base.path, "cannot prepare its audit insert", err);
    goto fail;
  }
  if (!w->shared) w->checkpointer = tg__checkpointer_start(st->base.path);
  if (init_sync(w, err) < 0) goto fail;
  if (!w->shared) { /* what dead processes left, before anything else */
    char e[TG_ERRMSG];
    tg__journals_catch_up(db, w->insert, st->base.path, 0, e, sizeof e);
  }
  /* calls a crash left unindexed (about: ids past the watermark) */
  int64_t behind = int_query(db, "SELECT coalesce((SELECT max(id) FROM "
                             "calls), 0) - (SELECT value FROM meta WHERE "
                             "key = 'calls_indexed')");
  w->unindexed = behind < 0 ? 0 : behind > INT_MAX ? INT_MAX : (int)behind;
  /* the approvals in force now, for the loop's first calls */
  w->data_version = int_query(db, "PRAGMA data_version");
  w->approvals_version = tg__approvals_version(db);
  if (!(st->snap = tg__snap_load(db, (int64_t)tg__wall_ms()))) {
    tg__db_error(db, st->base.path, "cannot read its approvals", err);
    tg__writer_stop(w);
    return NULL;
  }
  if (start_async(w, err) < 0) {
    tg__writer_stop(w);
    return NULL;
  }
  if (uv_thread_create(&w->thread, writer_main, w) < 0) {
    tg__errf(err, TG_ERRMSG, "database %s: cannot start its writer thread",
             st->base.path);
    tg__writer_stop(w);
    return NULL;
  }
  w->started = 1;
  return w;
fail: /* before the mutex and conditions exist */
  finalize_all(w);
  if (!w->shared) sqlite3_close(db);
  free(w);
  return NULL;
}

void tg__writer_stop(tg_writer *w) {
  if (!w) return;
  if (w->started) {
    uv_mutex_lock(&w->mu);
    hand_to_thread(w, w->lq); /* the thread writes them before it quits */
    w->lq = NULL;
    w->lq_tail = &w->lq;
    w->quit = 1;
    uv_cond_signal(&w->work);
    uv_mutex_unlock(&w->mu);
    uv_thread_join(&w->thread);
    deliver(w); /* what was written after the last turn of the loop */
  }
  tg__journal_close(w->db, w->insert, w->journal);
  free(w->jb.p);
  tg__checkpointer_stop(w->checkpointer);
  close_async(w);
  tg__snap_free(w->snap);
  finalize_all(w);
  if (!w->shared) sqlite3_close(w->db);
  uv_cond_destroy(&w->written_cv);
  uv_cond_destroy(&w->work);
  uv_mutex_destroy(&w->mu);
  free(w);
}
