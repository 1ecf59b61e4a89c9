/*
 * usage_store.c — the usage ledger budgets see (core/usage.h), with
 * storage on: every record is kept in memory (exact, project included)
 * and written to the database (durable); sums come from the database, so
 * a budget's spent and passed levels survive a restart — except for a
 * budget scoped to a project, which the database's ledger has no column
 * for: that one sums this process's records only.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include "runtime.h"
#include "store/store.h"

typedef struct {
  tg_usage_ledger mem;       /* usage_mem.c */
  tg_store *store;
} store_ledger;

static int rec_store(void *ud, const tg_usage_rec *r) {
  store_ledger *l = ud;
  int rc = l->mem.record(l->mem.ud, r);
  tg_usage u = {r->session, r->turn, r->model, r->input_tokens,
                r->output_tokens, r->cost, r->ts_ms};
  char err[TG_ERRMSG];
  /* queued for the writer; a failure there is a store_error event */
  (void)tg__store_record_usage(l->store, &u, err);
  return rc;
}

/* The database has it: only our copy (project-scoped sums read it). */
static int stored_store(void *ud, const tg_usage_rec *r) {
  store_ledger *l = ud;
  return l->mem.record(l->mem.ud, r);
}

static int sum_store(void *ud, const tg_usage_query *q, tg_usage_sum *out) {
  store_ledger *l = ud;
  if (q->project) return l->mem.sum(l->mem.ud, q, out);
  tg_usage_filter f = {q->session, q->model, NULL,
                       q->since_ms == INT64_MIN ? 0 : q->since_ms, 0};
  tg_usage_total t;
  char err[TG_ERRMSG];
  if (tg_store_usage(l->store, &f, &t, err) < 0)
    return l->mem.sum(l->mem.ud, q, out); /* the database failed: ours */
  *out = (tg_usage_sum){t.records, t.input_tokens, t.output_tokens, t.cost};
  return 0;
}

static void free_store(void *ud) {
  store_ledger *l = ud;
  if (l->mem.free) l->mem.free(l->mem.ud);
  free(l);
}

int tg__usage_store_open(tg_usage_ledger *out, tg_store *store) {
  store_ledger *l = calloc(1, sizeof *l);
  if (!l || tg__usage_mem_open(&l->mem) < 0) {
    free(l);
    return -ENOMEM;
  }
  l->store = store;
  *out = (tg_usage_ledger){l, rec_store, stored_store, sum_store, free_store};
  return 0;
}
