/*
 * runtime.h — the runtime object: the composition root. It embeds each
 * layer's state and wires the layers together; it is the only place that
 * sees them all (src/runtime/: this object, its reload triggers, the
 * public API's entry points). Everything mutable lives here or below it:
 * two runtimes in one process share nothing.
 */
#ifndef TG_RUNTIME_H
#define TG_RUNTIME_H

#include <stdint.h>
#include <stddef.h>
#include <uv.h>
#include <cjson/cJSON.h>
#include "toolgate.h"
#include "core/core.h"
#include "chain/call.h"
#include "front_api.h"

typedef struct tg_watch tg_watch;
typedef struct tg_control tg_control;
typedef struct tg_embed tg_embed;

struct tg_runtime {
  tg_core core;              /* what every layer shares (core/core.h) */
  tg_chain chain;            /* the calls (chain/call.h); chain.gen is the
                                current generation, holding one reference */
  uv_loop_t own_loop;        /* used when the host gave no loop */
  int owns_loop;
  char *session;
  char *policies_dir;
  uint64_t gen_counter;      /* number of the last generation built */
  /* Reload triggers (watch.c, the control front src/control/); NULL: off. Their handles are
   * unref'd: they never keep a host's loop alive. */
  tg_watch *watch;           /* the policies folder watch + debounce */
  uv_signal_t *reload_signal; /* SIGHUP, only when asked for */
  tg_control *control;       /* the control socket server (src/control/) */
  void (*control_stop)(tg_runtime *rt); /* how it stops (set with it) */
  tg_embed *embed;           /* embed.c: the pump a host's loop turns us
                                with; NULL until a host asks */
  /* Storage (store/store.h): NULL when off. core.cfg.db and .project
   * point at the copies here. */
  struct tg_store *store;
  char *db;
  char *project;
  /* Without one: the approvals of a database only read, looked up as
   * the store's (read_approvals.c); NULL: none. The caller's. */
  struct tg_store *read_approvals;
  int64_t read_approval_hit; /* the id that last covered a call; 0 */
  /* model routing (route.c) */
  cJSON *models;             /* tg_runtime_set_models' copy; NULL: none */
  cJSON *unavailable;        /* {model: until_ms} (tg_model_unavailable) */
  /* `toolgate test`'s reader of a case's agent event (front_api.h),
   * installed from above; NULL: a case's event is Claude Code's shape */
  tg_case_event_reader case_reader;
};

/* What a successful reload made. */
typedef struct {
  uint64_t generation;
  size_t files;
  double duration_ms;        /* building and swapping the generation */
} tg_reload_info;

/* The one reload path every trigger takes (tg_runtime_load_policies, the
 * folder watch, the reload signal, the control socket): builds a new
 * generation from dir (NULL: the folder loaded last) beside the current
 * one and swaps it in only if every file loaded. Emits policy_loaded
 * {generation, files, duration_ms, trigger} or policy_error {error, file?,
 * line?, generation (the one that stays), trigger}. info may be NULL. */
int tg__reload(tg_runtime *rt, const char *dir, const char *trigger,
               tg_reload_info *info, char err[TG_ERRMSG]);

/* The one way a usage record enters (chat.c; storage's tg_record_usage
 * at merge): the budgets' states for it are made from the ledger as it
 * is, the ledger records it, the budgets count it and tell the levels it
 * passed. rec->ts_ms 0: now. Returns 0 or -ENOMEM (not recorded). */
int tg__runtime_record_usage(tg_runtime *rt, const tg_usage_rec *rec);
/* Usage that commit writes (the ledger, or the database in one
 * transaction with what it belongs to, then telling the ledger's stored):
 * budgets prepare before it and count after it when it returns > 0 (0:
 * not this caller's to count; < 0: failed). Missing times and sessions
 * are filled in recs first. commit's result. tg__runtime_record_usage is
 * this with the ledger's record as commit. */
int tg__runtime_usage_commit(tg_runtime *rt, tg_usage_rec *recs, size_t n,
                             int (*commit)(void *ud), void *ud);
/* The ledger budgets see with storage on (usage_store.c): 0 or -ENOMEM. */
int tg__usage_store_open(tg_usage_ledger *out, struct tg_store *store);

/* chat.c: the chat side's state set up at creation and freed at the end
 * (the usage ledger, the progress manager's cancel). */
int tg__chat_init(tg_runtime *rt, char err[TG_ERRMSG]);
/* tg_turn_begin with the turn given (> 0: a database counted it, for
 * another process too), or the next (0). */
int64_t tg__turn_set(tg_runtime *rt, const char *session, int64_t turn);
void tg__chat_free(tg_runtime *rt);

#endif
