/*
 * usage_mem.c — the usage ledger in memory (usage.h): the records of this
 * runtime's life. The ledger budgets see without storage, and with it the
 * exact half of runtime/usage_store.c (the database's ledger has no
 * project column). A sum walks every record; budgets sum only when they
 * build a state, so that is rare. Strings are interned: a long session
 * repeats the same session, project and model in every record.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "usage.h"

typedef struct {
  const char *session, *project, *model; /* interned */
  int64_t input_tokens, output_tokens, ts_ms;
  double cost;
} mem_rec;

typedef struct {
  mem_rec *v;
  size_t n, cap;
  char **names;               /* the interned strings */
  size_t nnames, capnames;
} mem_ledger;

static const char *intern(mem_ledger *m, const char *s) {
  if (!s) return NULL;
  for (size_t i = m->nnames; i-- > 0;) /* recent ones first */
    if (strcmp(m->names[i], s) == 0) return m->names[i];
  if (m->nnames == m->capnames) {
    size_t cap = m->capnames ? m->capnames * 2 : 8;
    char **v = realloc(m->names, cap * sizeof *v);
    if (!v) return NULL;
    m->names = v;
    m->capnames = cap;
  }
  size_t len = strlen(s) + 1;
  char *copy = malloc(len);
  if (!copy) return NULL;
  memcpy(copy, s, len);
  return m->names[m->nnames++] = copy;
}

static int mem_record(void *ud, const tg_usage_rec *r) {
  mem_ledger *m = ud;
  if (m->n == m->cap) {
    size_t cap = m->cap ? m->cap * 2 : 64;
    mem_rec *v = realloc(m->v, cap * sizeof *v);
    if (!v) return -ENOMEM;
    m->v = v;
    m->cap = cap;
  }
  mem_rec x = {intern(m, r->session), intern(m, r->project),
               intern(m, r->model), r->input_tokens, r->output_tokens,
               r->ts_ms, r->cost};
  if ((r->session && !x.session) || (r->project && !x.project) ||
      (r->model && !x.model))
    return -ENOMEM;
  m->v[m->n++] = x;
  return 0;
}

/* Interned: a pointer compare would do, but the query's strings are not. */
static int same(const char *want, const char *have) {
  return !want || (have && strcmp(want, have) == 0);
}

static int mem_sum(void *ud, const tg_usage_query *q, tg_usage_sum *out) {
  const mem_ledger *m = ud;
  memset(out, 0, sizeof *out);
  for (size_t i = 0; i < m->n; i++) {
    const mem_rec *r = &m->v[i];
    if (r->ts_ms < q->since_ms || !same(q->session, r->session) ||
        !same(q->project, r->project) || !same(q->model, r->model))
      continue;
    out->records++;
    out->input_tokens += r->input_tokens;
    out->output_tokens += r->output_tokens;
    out->cost += r->cost;
  }
  return 0;
}

static void mem_free(void *ud) {
  mem_ledger *m = ud;
  if (!m) return;
  for (size_t i = 0; i < m->nnames; i++) free(m->names[i]);
  free(m->names);
  free(m->v);
  free(m);
}

int tg__usage_mem_open(tg_usage_ledger *l) {
  mem_ledger *m = calloc(1, sizeof *m);
  if (!m) return -ENOMEM;
  /* stored: in memory, a record the database holds is kept like any other */
  *l = (tg_usage_ledger){m, mem_record, mem_record, mem_sum, mem_free};
  return 0;
}
