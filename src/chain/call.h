/*
 * call.h — one call's state machine. call.c drives the stages in the
 * chain's order (docs/policies.md, "The chain"); each stage lives in its
 * own file and either finishes at once
 * (TG_NEXT), ends the call (TG_END), or returns TG_WAIT after arranging for
 * a callback (approval answer, back-off timer, tool finish) that resumes
 * the machine with tg__call_advance.
 */
#ifndef TG_CALL_H
#define TG_CALL_H

#include <stdint.h>
#include "base/closer.h"
#include "core/core.h"
#include "core/error.h"
#include "core/sink.h"
#include "base/util.h"
#include "policy/generation.h"
#include "lua/luaraw.h"
#include "chain/strategy.h"

typedef enum { TG_NEXT, TG_WAIT, TG_END } tg_step;

typedef enum {
  TG_STAGE_START,
  TG_STAGE_AUTHORIZE,
  TG_STAGE_PRE_HOOKS,
  TG_STAGE_REJUDGE,       /* rules again when hooks rewrote the call */
  TG_STAGE_VALIDATE,
  TG_STAGE_APPROVE,
  TG_STAGE_EXECUTE,       /* retry / timeout / progress / execute loop */
  TG_STAGE_LIMIT,         /* result limit on the final result */
  TG_STAGE_POST_HOOKS,
  TG_STAGE_END
} tg_stage;


typedef struct tg_exec tg_exec;
typedef struct tg_call tg_call;

typedef struct tg_always tg_always;

/* The chain's state in one runtime (the runtime embeds it). */
typedef struct tg_chain {
  tg_core *core;
  tg_generation *gen;            /* the current generation: the runtime
                                    sets it on every swap and holds its
                                    reference */
  tg_call *calls;                /* calls in flight (doubly linked) */
  uint64_t next_call_no;
  uint64_t next_approval_id;
  tg_approver_cb approver;
  void *approver_ud;
  tg_always *always;             /* remembered approve-always answers */
} tg_chain;

/* Where the attempt loop is (execute.c). */
typedef enum { TG_EXEC_START, TG_EXEC_RUNNING, TG_EXEC_BACKOFF } tg_exec_stage;

struct tg_call {
  tg_chain *ch;
  tg_core *core;                 /* ch->core */
  tg_call *prev, *next;          /* ch->calls list */
  char *id, *tool_name, *session; /* id and session may point into idbuf /
                                    ch->core->session: see call_free_strings */
  char idbuf[32];
  int64_t turn;
  cJSON *args;                   /* the args as judged (owned) */
  cJSON *metadata;               /* owned, an object; NULL: {} */
  tg_generation *gen;            /* reference held for the call's life */
  const tg_tool *tool;
  int call_ref;                  /* the call table in gen->L */
  tg_stage stage;
  int attempt;
  tg_verdict verdict;
  char *rule, *reason;           /* the decision and who made it */
  int remembered;                /* allowed by a remembered approval */
  int rejudged;
  cJSON *short_result;           /* a pre-hook's tg.result (owned) */
  int has_short;
  uint64_t approval_id;          /* 0: none pending */
  tg_exec *exec;                 /* the running attempt, if any */
  uv_timer_t *wait_timer;        /* back-off / approval timeout (lazy) */
  cJSON *result;                 /* owned */
  tg_err error;
  tg_status status;
  int truncated;
  int cancel_requested;
  int advancing;                 /* re-entrancy guard for tg__call_advance */
  int cancel_handled;
  int rewritten;                 /* hooks changed the args or the tool */
  int approve_answer;            /* 0 pending, TG_ANSWER_* once answered */
  tg_approver_cb approver;       /* the call's own approver (NULL: the
                                    chain's) and its ud */
  void *approver_ud;
  tg_exec_stage exec_state;
  double start_ms;
  tg_done_cb done;
  void *done_ud;
  tg_listener listen;            /* the request's on_event / on_progress */
  tg_closer closer;              /* its wait timer (base/closer.h) */
  int depth;                     /* 0, or how deep inside ctx.call nesting */
  int dry_run;                   /* explain's call: judged, never started */
  tg_call_strategy *how;         /* how it meets its tool (strategy.h);
                                    NULL: the tool runs, the approver asks */
  tg_tool own_tool;              /* how->own_tool as a tool: judged, never
                                    run */
  int no_tool;                   /* ended where the tool would run, with
                                    nothing to give: no post-hook runs */
  char *project;                 /* the request's, or NULL: the runtime's */
  int how_recorded;              /* how->seen taken before the audit */
  char *bad_args;                /* why the args were refused (owned): the
                                  * call ends VALIDATE INVALID_ARGS at start */
  /* What the audit record adds (storage on: core->sink.audit). */
  const char *rule_where;        /* the deciding rule's file:line (in gen) */
  const char *approval_how;      /* how an ask ended (static), or NULL */
  int64_t approval_ref;          /* the stored approval that covered it */
  cJSON *hooks_log;              /* [{stage, hook, what}] of the hooks that
                                    rewrote (owned; only with storage on) */
  int hook_args;                 /* a pre-hook returned tg.args */
  double start_wall_ms;          /* wall clock at the start (storage on) */
  double duration_ms;            /* start to the end of the chain */
  tg_audit_rec audit;            /* handed to the store at the end; the
                                    call waits for it to be committed */
  int tool_layered;              /* the before_tool layers ran: after_tool
                                    runs when the call ends (layers.h) */
  /* the audit's redacted copies, when something had to be masked */
  cJSON *red_args, *red_result, *red_hooks, *red_agent_input;
  char *red_reason;
  tg_err red_error;
  char *first_name;              /* a pre-hook rerouted the call: the name
                                  * it had, which the hook walk still
                                  * reads (owned) */
};

#define TG_MAX_CALL_DEPTH 8

/* The project the call belongs to: its request's ("": none), else the
 * runtime's. */
static inline const char *tg__call_project(const tg_call *c) {
  return c->project ? c->project : c->core->cfg.project;
}

/* Starts a call made by a tool of another call (ctx.call): like
 * tg_call_start, one level deeper; refused (-ELOOP) past the limit. */
int tg__call_start_nested(tg_chain *ch, const tg_call_request *req,
                          int parent_depth, tg_done_cb done, void *ud,
                          char err[TG_ERRMSG]);

/* The request's args as a new JSON object (args, or args_json parsed),
 * refused with a message in err when malformed, too big or too deep. */
cJSON *tg__call_parse_args(tg_chain *ch, const tg_call_request *req,
                           char *err);

/* A call record for req (copied), taking args, with the id `id` when req
 * has none; bad_args (copied, may be NULL) says why its args text was
 * refused. Not started, not in ch->calls. NULL when out of memory (args
 * freed). Free with tg__call_free_fields and free. */
tg_call *tg__call_new(tg_chain *ch, const tg_call_request *req,
                      cJSON *args, const char *id, const char *bad_args);

/* Frees what the call owns (strings, JSON, Lua refs, its generation
 * reference), not the struct or its timer. */
void tg__call_free_fields(tg_call *c);

/* The call's events: data for one (NULL: nobody listens, not even the
 * call's own listener), and the event itself (core/events.h). */
cJSON *tg__call_event_data_slow(tg_call *c);
void tg__call_emit_slow(tg_call *c, const char *type, cJSON *data);

/* Is the call heard at all? The bus's own answer for an event under the
 * call's generation, made without a call: the hot path of a call nobody
 * watches only counts its seqs. */
static inline int tg__call_heard(const tg_call *c) {
  return c->core->bus.ncallsubs || tg__generation_listens(c->gen) ||
         c->listen.on_event || c->listen.on_progress;
}

static inline cJSON *tg__call_event_data(tg_call *c) {
  return tg__call_heard(c) ? tg__call_event_data_slow(c) : NULL;
}

static inline void tg__call_emit(tg_call *c, const char *type, cJSON *data) {
  if (data || tg__call_heard(c)) tg__call_emit_slow(c, type, data);
  else c->core->bus.seq++; /* every event counts, heard or not */
}

/* Drives the call until it waits or ends. */
void tg__call_advance(tg_call *c);

/* Records an error as the call's outcome (copies the strings). */
void tg__call_fail(tg_call *c, tg_status st, tg_phase phase, tg_error_code code,
                   int retryable, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

/* Lazily made timer shared by the waits that never overlap (approval
 * timeout, retry back-off). */
uv_timer_t *tg__call_wait_timer(tg_call *c);

/* Stages (one file each). */
tg_step tg__stage_authorize(tg_call *c);   /* authorize.c */
tg_step tg__stage_pre_hooks(tg_call *c);   /* hooks.c */
tg_step tg__stage_post_hooks(tg_call *c);  /* hooks.c */
tg_step tg__stage_validate(tg_call *c);    /* validate_stage.c */
tg_step tg__stage_approve(tg_call *c);     /* approve.c */
tg_step tg__stage_execute(tg_call *c);     /* execute.c */
tg_step tg__stage_limit(tg_call *c);       /* limit.c */

/* Cancels whatever the call waits for (approval, back-off, tool). */
void tg__approve_withdraw(tg_call *c);     /* approve.c */
/* execute.c: asks a running attempt to stop; 0 when none runs. */
int tg__execute_cancel(tg_call *c);

/* retry.c: the delay before attempt n+1 (n >= 1), with jitter. */
double tg__retry_delay_ms(uint64_t *rng, const tg_retry *r, int n);

/* Pushes the call table {id, tool, args, session, turn, attempt, metadata,
 * dry_run?} (built on first use) onto gen->L. */
void tg__call_push_table(tg_call *c);
/* Writes the call's facts (all but metadata) back into its call table and
 * drops any metatable policy code put on it: done before rules judge a
 * rewritten call again. */
void tg__call_restore_table(tg_call *c);

/* What is wrong with the args value at idx, or NULL: args are a JSON
 * object read raw, so a table with no metatable but tg.object's mark (an
 * __index or __pairs would show policy code one thing and the tool
 * another). Names the problem ("nil", "a table with a metatable"...). */
const char *tg__args_problem(lua_State *L, int idx);

/* Does the call table still hold the call's facts (id, tool, args,
 * session, turn, attempt, dry_run; no metatable)? Rules are judges: when
 * one changed them, what the later rules judged is not what would run. */
int tg__call_facts_intact(tg_call *c);

/* Runs a policy function (rule, hook) that is on top of gen->L under the
 * call's generation with nargs arguments below it. Returns 0 with nres
 * results left on the stack, or -1 with the error message (annotated with
 * `kind`, `name` (may be NULL) and `where`) written into msg. The message
 * is only formatted on failure: this is the hot path of every call. */
int tg__policy_pcall(tg_call *c, int nargs, int nres, const char *kind,
                     const char *name, const char *where, char *msg,
                     size_t msglen);

/* The kind of a verdict value a policy returned ("allow", "deny", "ask",
 * "abort", "args", "result"): NULL for nil, "" for anything that is not a
 * verdict table. Read raw, like every field of a value policy code returns
 * (tg__rawgetstring and friends, lua/luaraw.h): no metamethod runs.
 * Leaves the stack as it was. */
const char *tg__verdict_kind(lua_State *L, int idx);

/* What a rule answered (authorize.c; explain.c reports the same). */
typedef struct {
  enum { TG_RULE_SILENT, TG_RULE_ANSWERED, TG_RULE_RAISED, TG_RULE_BAD } kind;
  tg_verdict verdict; /* ANSWERED */
  char *text;         /* reason or prompt (ANSWERED, may be NULL), the error
                         (RAISED), what the rule (named, with file:line)
                         returned instead (BAD); malloc'd, the caller frees */
} tg_rule_answer;

/* Runs rule r on the call and says what it answered. */
void tg__rule_judge(tg_call *c, const tg_rule *r, tg_rule_answer *a);
/* The error when the call's facts changed while rules judged it
 * (tg__call_facts_intact); last is the last rule that ran. */
void tg__rules_changed_call(const tg_rule *last, char *msg, size_t len);

/* Pushes {phase, code, message, suggestion?, retryable} (hooks.c). */
void tg__push_error(lua_State *L, const tg_err *e);

/* approve.c: does a remembered approve-always cover this call? (Sets
 * c->approval_ref to the stored approval that does.) */
int tg__always_covers(tg_call *c);

/* hooks.c: notes, for the audit, that hook `where` (NULL: the pre-hooks,
 * in place) rewrote `what` ("args", "tool", "result", "abort"). */
void tg__hooks_log(tg_call *c, const char *stage, const char *where,
                   const char *what);

/* The public entry points (the runtime's api.c calls them). */
int tg__chain_call_start(tg_chain *ch, const tg_call_request *req,
                         tg_done_cb done, void *ud, char err[TG_ERRMSG]);
/* A call with its own approver: its asks go to approver (with
 * approver_ud) instead of the runtime's. Calls it starts (ctx.call) have
 * none of their own. */
int tg__chain_call_start_approved(tg_chain *ch, const tg_call_request *req,
                                  tg_approver_cb approver, void *approver_ud,
                                  tg_done_cb done, void *ud,
                                  char err[TG_ERRMSG]);
/* A call run the way how says (how must outlive it: how->seen is filled
 * in when it ends, before done). One whose tool does not run never waits
 * (without storage, it has ended when this returns 0). */
int tg__chain_call_with(tg_chain *ch, const tg_call_request *req,
                        tg_call_strategy *how, tg_done_cb done, void *ud,
                        char err[TG_ERRMSG]);
/* strategy.c: the tool stage of a call whose tool does not run here
 * (TG_TOOL_ELSEWHERE, TG_TOOL_GIVEN), and how->seen filled in when it
 * ends. */
tg_step tg__strategy_execute(tg_call *c);
void tg__strategy_record(tg_call *c);
int tg__chain_cancel(tg_chain *ch, const char *call_id);
int tg__chain_answer(tg_chain *ch, uint64_t approval_id, tg_answer answer,
                     tg_always_scope scope, const char *guidance);
int tg__chain_answer_always(tg_chain *ch, uint64_t approval_id,
                            const tg_always_spec *spec, char err[TG_ERRMSG]);
void tg__chain_set_approver(tg_chain *ch, tg_approver_cb cb, void *ud);
void tg__chain_set_approve_mode(tg_chain *ch, tg_approve_mode mode);
cJSON *tg__chain_explain(tg_chain *ch, const tg_call_request *req,
                         char err[TG_ERRMSG]);
/* tg__chain_explain of a call the way how says (an agent's: its own tool
 * judged by name, the agent's names covering it); how NULL: an ordinary
 * call. */
cJSON *tg__chain_explain_with(tg_chain *ch, const tg_call_request *req,
                              tg_call_strategy *how, char err[TG_ERRMSG]);
/* Gives c the strategy how (NULL: none) and, when how has an own tool
 * and no tool has c's name, that tool. */
void tg__call_set_strategy(tg_call *c, tg_call_strategy *how);
/* The tool named `name`: C tools first, then gen's Lua tools. */
const tg_tool *tg__chain_find_tool(tg_chain *ch, tg_generation *gen,
                                   const char *name);
/* The other names call c answers to (strategy.h: agent_names), while its
 * tool is the one the agent's call was mapped to; NULL: none. */
static inline const char *const *tg__call_also_names(const tg_call *c) {
  return c->how && c->how->agent_names && c->how->own_tool &&
                 strcmp(c->tool_name, c->how->own_tool) == 0
             ? c->how->agent_names
             : NULL;
}
/* The tool named `name` for call c: tg__chain_find_tool's, else the
 * strategy's own tool of that name (an agent's), else NULL. */
const tg_tool *tg__call_find_tool(tg_call *c, const char *name);

/* The C layers around the tool (core/layers.h): before_tool once, before
 * the first attempt; after_tool when such a call ends (tool_layers.c). */
void tg__call_before_tool(tg_call *c);
void tg__call_after_tool(tg_call *c);

/* Frees the remembered approvals (approve.c). */
void tg__always_free(tg_chain *ch);

#endif
