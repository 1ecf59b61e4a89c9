/*
 * hook_services.h — the runtime's narrow API for the agent hook protocol
 * (src/agent/): run a call the way a strategy says, run a function in
 * the current generation's policy sandbox, and record what an agent's
 * hooks tell of (turns, usage, sessions) in the store, or in memory
 * without one. The protocol never sees the runtime's object.
 */
#ifndef TG_RUNTIME_HOOK_SERVICES_H
#define TG_RUNTIME_HOOK_SERVICES_H

#include <stddef.h>
#include <stdint.h>
#include <cjson/cJSON.h>
#include "toolgate.h"
#include "chain/strategy.h"

struct lua_State;

/* ---- calls --------------------------------------------------------------- */

/* Starts req through the chain of the current generation the way how
 * says (how must outlive the call: its seen is filled in when the call
 * ends, before done). done gets the outcome, maybe before this returns.
 * 0, or a negative errno with err (then done is not called). */
int tg__hooksvc_call(tg_runtime *rt, const tg_call_request *req,
                     tg_call_strategy *how, tg_done_cb done, void *ud,
                     char err[TG_ERRMSG]);

/* The dry run of req (tg_explain's JSON) the way how says: what the rules
 * answer an agent's call, by its names too. NULL with err. */
cJSON *tg__hooksvc_explain(tg_runtime *rt, const tg_call_request *req,
                           tg_call_strategy *how, char err[TG_ERRMSG]);

/* ---- the policy sandbox ---------------------------------------------------- */

/* The current generation's Lua state (NULL: none loaded) and the largest
 * JSON value (bytes) read back from it, as for args. */
struct lua_State *tg__hooksvc_policy_state(tg_runtime *rt, size_t *max_json);
/* Runs the function below nargs values on top of that state under the
 * policies' time limit and memory cap, leaving nres results: 0; or -1
 * with why in err, `what` naming the code that failed (the error popped). */
int tg__hooksvc_policy_pcall(tg_runtime *rt, int nargs, int nres,
                             const char *what, char *err, size_t errlen);

/* ---- an agent's tool call (agent_map.c) ------------------------------------- */

/* The agent's tool call as toolgate's. */
typedef struct {
  char *tool;
  char *server;                /* its MCP server (call.server), or NULL */
  cJSON *args;                 /* an object */
  int read_only;
  int mapped;                  /* a table entry (not the tool's own name) */
  char **names;                /* the agent's names of the call
                                  (NULL-terminated; the event's tool_name
                                  first), or NULL */
  cJSON *paths;                /* array of strings, or NULL */
  cJSON *result;               /* POST: what post-hooks see, or NULL */
} tg_agent_call;

/* agent.map(agent, event) in rt's current generation. -1 with why in
 * err: the event cannot be mapped (odd input), or the mapping raised (a
 * policy error): *raised tells which. */
int tg__agent_map(tg_runtime *rt, const char *agent, const cJSON *event,
                  tg_agent_call *out, int *raised, char *err, size_t errlen);
/* agent.unmap(...): the agent's input for a rewritten call, or NULL with
 * why in err. */
cJSON *tg__agent_unmap(tg_runtime *rt, const char *agent,
                       const cJSON *event, const char *tool,
                       const cJSON *args, char *err, size_t errlen);
void tg__agent_call_clear(tg_agent_call *m);
/* The agent whose mapping table knows `tool` by name (agent.which), into
 * agent ("" when none). 0, or -1 with why in err (the Lua raised). */
int tg__agent_which(tg_runtime *rt, const char *tool, char *agent,
                    size_t len, char *err, size_t errlen);
/* call.metadata of the agent's call: its name ("claude-code"), the
 * event's name, tool, input and fields (agent_cwd, agent_session_id, ...),
 * the paths the mapping found, the project (the cwd's real path). */
cJSON *tg__agent_metadata(const char *agent, const cJSON *event,
                          const tg_agent_call *m);
/* The hook event an agent would send for a call of its tool `tool` with
 * input (NULL: {}): PreToolUse, or PostToolUse with response (NULL:
 * none), in cwd (NULL: the current directory), in session (NULL: none).
 * For a call written in the agent's terms outside a hook (toolgate test,
 * toolgate explain TOOL JSON). */
cJSON *tg__agent_event(const char *tool, const cJSON *input,
                       const cJSON *response, const char *cwd,
                       const char *session);
/* Sets how for the agent's call m (m must outlive the call): its tool
 * judged under the name it was mapped to, never run here; the agent's
 * names cover it; what policy code leaves in call.metadata kept. */
void tg__agent_strategy(tg_call_strategy *how, const tg_agent_call *m);

/* ---- what is recorded -------------------------------------------------------- */

/* An agent's tool call nothing could judge (its mapping failed, or
 * raised): what the audit keeps of it (hook_audit.c). */
typedef struct {
  const char *call_id, *session;  /* session NULL: the runtime's */
  int64_t turn;
  const char *agent, *event;      /* "gemini", the agent's event name */
  const char *tool;               /* the agent's name of its tool */
  const cJSON *input;             /* its input, as sent (redacted here) */
  const char *tool_use_id;
  const char *answer;             /* what the fail-safe told the agent */
  tg_verdict verdict;             /* on_error's */
  int no_verdict;
  const char *why;                /* why the mapping failed */
  int raised;                     /* the mapping raised (a policy error) */
} tg_hooksvc_unjudged;
/* Records w with storage on, decided by "fail-safe: mapping failed: WHY"
 * (status error: HOOK_ERROR when it raised, else INVALID_ARGS): 1, and
 * done(ud) runs on the loop once it is written (or could not be); 0: no
 * database (or no memory), nothing recorded, done is not called. */
int tg__hooksvc_record_unjudged(tg_runtime *rt, const tg_hooksvc_unjudged *w,
                                void (*done)(void *ud), void *ud);
/* A permission request carries no tool_use_id: the one of the session's
 * most recent judged pre-tool record when that record is the same
 * agent's, of the same tool, with the same input (a digest of it as the
 * audit keeps it, redacted); malloc'd, NULL: none (or no database). */
char *tg__hooksvc_permission_link(tg_runtime *rt, const char *session,
                                  const char *agent, const char *tool,
                                  const cJSON *input);

/* 0 when id is a session id the store takes, else -EINVAL with why. */
int tg__hooksvc_session_check(const char *id, char err[TG_ERRMSG]);
/* The project folder of an agent's cwd (its real path, malloc'd), or NULL
 * when it is not a folder here. */
char *tg__hooksvc_project(const char *cwd);
/* The session's turn: as the database counted it (another hook process
 * may have), else as this runtime did; 0 before its first prompt. */
int64_t tg__hooksvc_turn(tg_runtime *rt, const char *session);
/* A prompt: the session's turn goes up by one (in the database with one,
 * where the session is noted as agent's in project, else in memory). 0,
 * or -1 with err. */
int tg__hooksvc_prompt_counted(tg_runtime *rt, const char *session,
                               const char *agent, const char *project,
                               char err[TG_ERRMSG]);
/* The prompt kept as the session's user message (with a database only).
 * 0, or -1 with err. */
int tg__hooksvc_prompt_kept(tg_runtime *rt, const char *session,
                            const char *prompt, char err[TG_ERRMSG]);
/* The session's start (start 1) or end noted (with a database only). 0,
 * or -1 with err. */
int tg__hooksvc_session_noted(tg_runtime *rt, const char *session,
                              const char *agent, const char *project,
                              int start, char err[TG_ERRMSG]);
/* How far the session's transcript was read (the text the front wrote,
 * malloc'd; NULL: not yet) and its turn: one read of its row. 0, or a
 * negative errno with err. */
int tg__hooksvc_mark_get(tg_runtime *rt, const char *session, char **mark,
                         int64_t *turn, char err[TG_ERRMSG]);

/* One model's spend read from a transcript. */
typedef struct {
  const char *model;
  int64_t input_tokens;   /* all the model read: fresh and cached */
  int64_t output_tokens;
} tg_hook_spend;
/* At most this many spends (models) are recorded for one stop. */
#define TG_HOOKSVC_MAX_SPEND 8

/* Moves the session's mark from old to neu and records the n spends
 * (turn turn) as usage the budgets count: together, in one transaction
 * with a database. 0 (also when another reader moved the mark first: it
 * counts them), or a negative errno with err. */
int tg__hooksvc_stop_commit(tg_runtime *rt, const char *session,
                            const char *agent, const char *project,
                            int64_t turn, const char *old, const char *neu,
                            const tg_hook_spend *spend, size_t n,
                            char err[TG_ERRMSG]);

#endif
