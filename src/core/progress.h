/*
 * progress.h — the progress manager: named items of work in
 * progress — indeterminate, determinate (current of total) or steps (i of
 * n, each labelled) — that may be cancellable, with subscribers told of
 * every change and given the live list. Hosts start their own items
 * (tg_progress_start); calls that report progress feed it too: the first
 * progress of a running call makes the item "call:<id>" (cancelling it
 * cancels the call), later ones move it, and the call's end removes it.
 * A slot of the core (core->progress), made on first use.
 */
#ifndef TG_PROGRESS_H
#define TG_PROGRESS_H

#include <stdint.h>
#include <stdio.h>
#include <cjson/cJSON.h>
#include "toolgate.h"

struct tg_core;

typedef struct {
  char *id, *label, *message, *call_id;
  tg_progress_kind kind;
  double current, total;
  tg_progress_cancel_fn cancel; /* NULL: not cancellable */
  void *ud;
  int cancel_requested;
  int64_t started_at;            /* runtime clock */
  double started_mono;           /* monotonic, for elapsed_ms */
} tg_progress_item;

typedef struct {
  int id;
  tg_progress_cb cb;
  void *ud;
} tg_progress_sub;

typedef struct tg_progress {
  tg_progress_item **v;          /* running items, oldest first */
  size_t n, cap;
  tg_progress_sub *subs;
  size_t nsubs, capsubs;
  int next_sub, telling;
} tg_progress;

int tg__progress_start(struct tg_core *core, const tg_progress_spec *spec,
                       char err[TG_ERRMSG]);
int tg__progress_update(struct tg_core *core, const char *id, double current,
                        const char *message);
/* ok 1: done; 0: failed with message. */
int tg__progress_end(struct tg_core *core, const char *id, int ok,
                     const char *message);
int tg__progress_cancel(struct tg_core *core, const char *id);
cJSON *tg__progress_list(struct tg_core *core);
int tg__progress_subscribe(struct tg_core *core, tg_progress_cb cb, void *ud);
void tg__progress_unsubscribe(struct tg_core *core, int id);

/* A running call reported progress (current/total < 0: unknown). */
void tg__progress_of_call(struct tg_core *core, const char *call_id,
                          const char *tool, double current, double total,
                          const char *message);
/* The call ended: its item, if it has one, leaves (done when ok). */
static inline void tg__progress_call_ended(struct tg_core *core,
                                           struct tg_progress *p,
                                           const char *call_id, int ok,
                                           const char *message) {
  if (p && p->n) {
    char id[160];
    snprintf(id, sizeof id, "call:%s", call_id);
    tg__progress_end(core, id, ok, message);
  }
}

void tg__progress_free(struct tg_core *core);

#endif
