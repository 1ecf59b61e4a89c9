/*
 * usage.h — the usage ledger, as budgets see it: one small seam, two
 * operations — record what a model call cost, and sum what a scope spent
 * since a time. Budgets keep no state that the ledger cannot give back:
 * what a period has spent, and so which alert levels it has passed, is
 * derived from these sums whenever a budget's state is (re)built (a
 * restart, a reload, a new period, a new session).
 *
 * Why a seam: the ledger is storage's (SQLite, src/store/ — a file that
 * outlives the process, so thresholds survive restarts). Until the
 * runtime is wired to it, usage_mem.c keeps the records in memory for the
 * runtime's life; the budgets do not know which one they talk to.
 *
 * Both operations run on the loop thread. record must not block (the
 * store queues it); sum may read (budgets call it only when they build a
 * state, not per record).
 */
#ifndef TG_USAGE_H
#define TG_USAGE_H

#include <stdint.h>
#include <stddef.h>

/* One model call's usage. Strings are borrowed for the duration of the
 * call; the ledger copies what it keeps. */
typedef struct {
  const char *session, *project, *model; /* project may be NULL */
  int64_t turn;
  int64_t input_tokens, output_tokens;
  double cost;
  int64_t ts_ms;               /* the runtime clock's ms since the epoch */
} tg_usage_rec;

/* Which records a sum counts: each string, when not NULL, must equal the
 * record's; since_ms counts records at or after it (INT64_MIN: all). */
typedef struct {
  const char *session, *project, *model;
  int64_t since_ms;
} tg_usage_query;

typedef struct {
  int64_t records, input_tokens, output_tokens;
  double cost;
} tg_usage_sum;

typedef struct tg_usage_ledger {
  void *ud;
  /* 0, or -ENOMEM (the record is lost; budgets do not count it). */
  int (*record)(void *ud, const tg_usage_rec *r);
  /* A record the database already holds (written in a transaction of its
   * own, as an agent's Stop writes its usage with its transcript mark):
   * kept where the ledger keeps copies of its own, not written again. */
  int (*stored)(void *ud, const tg_usage_rec *r);
  /* 0 with *out filled, or a negative code (budgets then count from 0). */
  int (*sum)(void *ud, const tg_usage_query *q, tg_usage_sum *out);
  void (*free)(void *ud);
} tg_usage_ledger;

/* Installs the in-memory ledger (usage_mem.c) in *l: 0 or -ENOMEM. */
int tg__usage_mem_open(tg_usage_ledger *l);

#endif
