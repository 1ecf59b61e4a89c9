/*
 * strategy.h — how one call meets its tool, set once by whoever starts it
 * and read by the chain at the few points where it matters, so that the
 * stages need not know who called: an ordinary call (no strategy) runs its
 * tool and asks the approver; an agent's hook before its tool says the
 * tool does not run here and an ask is left to the agent; after it, that
 * the tool's result is given and the post stage judges it; a policy test
 * case (toolgate test), that the result is given and an ask is approved.
 */
#ifndef TG_STRATEGY_H
#define TG_STRATEGY_H

#include <cjson/cJSON.h>
#include "toolgate.h"
#include "core/sink.h"

typedef enum {
  TG_TOOL_RUNS = 0,     /* the tool runs here (every ordinary call) */
  TG_TOOL_ELSEWHERE,    /* it does not run here (an agent runs it after
                           the answer): the call ends before the tool, no
                           post-hook runs; a pre-hook's tg.result is kept */
  TG_TOOL_GIVEN         /* its result or error is given (below) instead of
                           running it, one attempt; with neither, the call
                           ends before the tool and no post-hook runs */
} tg_tool_how;

typedef enum {
  TG_ASK_APPROVER = 0,  /* the approver answers (or approve_mode) */
  TG_ASK_LEFT,          /* an ask is the caller's to put (the agent asks
                           its user): no approval stage */
  TG_ASK_APPROVED       /* approved without asking (a test case goes on) */
} tg_ask_how;

/* What the chain saw that the outcome does not carry: filled in when the
 * call ends, owned by the strategy's user (tg__call_seen_clear). */
typedef struct {
  char *reason;         /* the deciding rule's reason or prompt */
  char *rule_where;     /* the deciding rule's file:line */
  cJSON *args;          /* the args after the pre-hooks */
  char *tool;           /* the tool after the pre-hooks */
  int no_tool;          /* the call ended where the tool would run, with
                           nothing to give: the post-hooks were skipped */
  int remembered;       /* a remembered approve-always allowed it */
  int short_circuit;    /* a pre-hook answered with tg.result */
  cJSON *short_result;  /* ... this value */
  cJSON *metadata;      /* call.metadata as policy code left it (with
                           keep_metadata; NULL when it was not JSON) */
} tg_call_seen;

typedef struct {
  tg_tool_how tool;
  tg_ask_how ask;
  int judged;           /* the caller judged the call already (an agent's
                           tool that ran): no rules, no pre-hooks; the
                           given result goes straight to the post-hooks */
  int keep_metadata;    /* seen.metadata: what policy code left for the
                           caller in call.metadata */
  const cJSON *result;  /* TG_TOOL_GIVEN: what the tool returns (any JSON
                           value; has_result, as null is one), or */
  int has_result;
  const cJSON *error;   /* {code, message?, retryable?}: how it fails */
  /* The tool the call stands for when no tool has its name (an agent's
   * own tool, like Claude Code's Glob): never run, so only its name and
   * read_only count. NULL: none. */
  const char *own_tool;
  int own_tool_read_only;
  const char *own_tool_server; /* an agent's MCP tool's server (call.server) */
  /* The agent's names of the call (NULL-terminated: "Bash", and Codex's
   * "shell"...; NULL: none): while the call's tool is still the one it
   * was mapped to, a rule or hook naming one of them covers it as one
   * naming the tool does. Set by the agent's front from its mapping, never
   * from the call's metadata (policy code may write that). */
  const char *const *agent_names;
  tg_call_seen seen;    /* filled in when the call ends */
  /* With storage on: called when the call is through, seen filled in,
   * before its audit record is written, so that the record says what the
   * caller makes of the outcome (an agent's hook: what the agent is told,
   * who decided). It may set rec's decided_by, no_verdict and agent (its
   * strings and agent.input must live until the call's done callback);
   * agent.input is masked by the chain after it. NULL: none. */
  void (*recording)(void *ud, const tg_outcome *o, tg_audit_rec *rec);
  void *recording_ud;
} tg_call_strategy;

/* Frees what a call recorded in s. */
void tg__call_seen_clear(tg_call_seen *s);

#endif
