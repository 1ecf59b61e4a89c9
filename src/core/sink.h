/*
 * sink.h — how the chain reaches storage without knowing it: a record of
 * each call's end, and remembered approvals. The runtime (the composition
 * root) fills core->sink with the store's functions; when storage is off
 * they are NULL and the chain does what it did without (answers at once,
 * keeps approvals in memory). Like a libuv request, a record finishes
 * through the callback it carries: the store never calls the chain by
 * name.
 */
#ifndef TG_SINK_H
#define TG_SINK_H

#include <stdint.h>
#include <cjson/cJSON.h>
#include "toolgate.h"
#include "core/approval.h"
#include "core/error.h"
#include "core/memory.h"
#include "core/taint.h"

/* What an agent's hook adds to its call's record (an agent's tool call,
 * judged before it runs or seen after): NULL name for any other call. */
typedef struct tg_audit_agent {
  const char *name;            /* "claude-code", "codex" */
  const char *event;           /* "PreToolUse", "PostToolUse", ... */
  const char *tool;            /* the agent's name of its tool ("Bash") */
  const cJSON *input;          /* the agent's tool input, as sent */
  const char *tool_use_id;     /* the agent's id of the tool call: links the
                                  events of one call (NULL: none given) */
  const char *answer;          /* what the agent was told: "allow", "deny",
                                  "ask", "block", "context", "output";
                                  NULL: nothing (the agent's own flow) */
} tg_audit_agent;

/* A call's audit record. Every pointer borrows the call's own
 * memory: the call neither changes nor frees any of it until committed()
 * has run, so the store reads them (on its writer thread) without a copy. */
typedef struct tg_audit_rec {
  const char *call_id, *session, *tool;
  const char *parent_call;     /* metadata.parent_call (ctx.call), or NULL */
  int64_t turn;
  const cJSON *args;           /* as judged and run */
  const cJSON *result;         /* NULL: none (or withheld) */
  const cJSON *hooks;          /* [{stage, hook, what}] that rewrote, or NULL */
  tg_verdict verdict;
  int no_verdict;              /* none was given (left to the agent, or
                                  seen after the agent ran it): verdict is
                                  not recorded */
  const char *rule, *rule_where, *reason; /* NULL: the default decided */
  /* who decided: "rule" (rule names it), "default" (toolgate's), "agent"
   * (left to the agent: toolgate said nothing), "remembered", "pre-hook",
   * "fail-safe" (nothing could judge: on_error answered); NULL: none
   * (a call seen after the agent ran it) */
  const char *decided_by;
  tg_audit_agent agent;        /* an agent's call (agent.name set) */
  const char *approval;        /* how an ask ended ("approve", "always",
                                  "reject", "timeout", "mode", "remembered"),
                                  NULL when nobody was asked */
  int64_t approval_id;         /* the stored approval that covered it */
  int attempts;
  tg_status status;
  const tg_err *error;         /* phase NONE: no error */
  int truncated;               /* the result limit cut the result */
  int64_t ts_ms;               /* wall clock at the call's start */
  double duration_ms;
  uint64_t generation;
  /* Runs on the loop thread once the record is in the database (ok 1) or
   * could not be written (ok 0: the store has said why, in a store_error
   * event). */
  void (*committed)(struct tg_audit_rec *rec, int ok);
  /* the store's own */
  struct tg_audit_rec *next;   /* its queue */
  int stored;                  /* written (1) or not (0) */
} tg_audit_rec;

typedef struct tg_sink {
  void *ud;                    /* the store (opaque here) */
  /* Queues rec; rec->committed runs later, never before this returns. */
  void (*audit)(void *ud, tg_audit_rec *rec);
  /* Is q covered by a stored approval? 1 with its id in *id, else 0.
   * Reads on the calling thread (an indexed lookup: docs/storage.md). */
  int (*approval_find)(void *ud, tg_approval_query *q, int64_t *id);
  /* Queues a to be stored (strings copied): 0, and stored(arg, id) runs
   * later on the loop thread with its row id (0: it could not be stored);
   * -1 when it cannot even be queued (out of memory: no callback). */
  int (*approval_add)(void *ud, const tg_approval *a, const char *call_id,
                      void (*stored)(void *arg, int64_t id), void *arg);
  /* Memory (tg.memory in policies): the read path and the write path of
   * the policy layer, on the loop thread, blocking for the commit or the
   * query. session NULL / project NULL: the runtime's. As
   * tg_memory_record / tg_memory_recall (store/store_api.h). */
  int64_t (*memory_record)(void *ud, const tg_memory *m, char *err);
  cJSON *(*memory_recall)(void *ud, const tg_recall_filter *f, char *err);
  /* A session's taint (core/taint.h), blocking on the loop thread like
   * memory: raise keeps the higher level (1: raised, 0: the level stored
   * was as high); read answers 1 tainted, 0
   * clean, or a negative errno. NULL with storage off (kept in memory). */
  int (*taint_raise)(void *ud, const char *session, const tg_taint *t,
                     char *err);
  int (*taint_read)(void *ud, const char *session, tg_taint *out, char *err);
} tg_sink;

#endif
