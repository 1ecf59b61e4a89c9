/*
 * protocol.h — the agent hook protocol: one code path answers a hook
 * event, whether the event came over the control socket (a resident
 * instance, src/control/) or from `toolgate hook` answering in-process
 * (src/hook/hook_cmd.c). It is a layer of its own, under the control
 * socket and the fronts, because both reach it; what it needs of the
 * runtime is runtime/hook_services.h.
 *
 *   answer.c     tg_hook_answer: the event parsed, its tool call mapped,
 *                run through the chain with the agent's strategy, the
 *                outcome read
 *   explain_event.c  tg_hook_explain: the same answer for `toolgate
 *                explain --event`, with the mapped call, the rules'
 *                answers and what the chain saw
 *   (the mapping, in Lua (toolgate.agent) in the generation, is the
 *   runtime's: runtime/agent_map.c)
 *   reply.c      an answer in the agent's words (its dialect renders
 *                it), and the fail-safe answers (tg_hook_fallback)
 *   dialect.h    an agent's hook protocol as one value (names, events,
 *                canonical event, answer format, capabilities, install):
 *                dialects.c registers them, one line each, and
 *                dialect_<agent>.c is each
 *   text.c       the texts of an answer; a stable key order
 *   context.c    tools run for the model's context (context_from)
 *   record.c     the events that are not tool calls: prompts (turns),
 *                stops (usage), sessions — in the database when there is
 *   transcript.c the model and tokens an agent wrote to its transcript
 */
#ifndef TG_AGENT_PROTOCOL_H
#define TG_AGENT_PROTOCOL_H

#include <cjson/cJSON.h>
#include "toolgate.h"
#include "base/closer.h"
#include "base/json.h"
#include "base/util.h"
#include "chain/strategy.h"
#include "runtime/front_api.h"
#include "runtime/hook_services.h"
#include "store/store_api.h"
#include "dialect.h"

/* ---- answer.c ------------------------------------------------------------ */

/* The event in text[0, n) that agent d wrote, read once with the strict
 * parser (a key twice, 1e400, bad UTF-8: malformed) and made canonical
 * (dialect.h): an object with a hook_event_name (toolgate's name of the
 * event, or the agent's own when toolgate does not know it). The name
 * comes from the payload, or from event_name (--event NAME) when the
 * agent's payload carries none. When the canonical event is not the
 * agent's own, it holds the agent's under "agent_event" and its name
 * under "agent_event_name". NULL with why for a malformed one. */
cJSON *tg__hook_read_event(const tg_dialect *d, const char *text, size_t n,
                           const char *event_name, char *why, size_t len);
/* explain_event.c: the agent whose shape the parsed event has (as
 * tg_hook_detect_agent), NULL when it cannot tell. */
const char *tg__hook_agent_of(const cJSON *ev);
/* The agent's own event of a canonical one, and its name. */
const cJSON *tg__hook_native(const cJSON *event);
const char *tg__hook_native_name(const cJSON *event);
/* tg_hook_answer for an event already read (tg__hook_read_event; taken,
 * whatever is returned): req->event is not read again. */
int tg__hook_answer_read(tg_runtime *rt, const tg_hook_request *req,
                         cJSON *event, tg_hook_done_cb done, void *ud,
                         char err[TG_ERRMSG]);

/* tg__hook_answer_read for `toolgate explain --event`: the same answer,
 * with what the chain saw written into trace (an object, the caller's):
 * outcome, tool and args after the pre-hooks, rewritten, short_result,
 * remembered, fail_safe (why nothing could judge). The tools policy code
 * asks to run for the model's context are listed (context_calls), not
 * run. */
int tg__hook_answer_traced(tg_runtime *rt, const tg_hook_request *req,
                           cJSON *event, cJSON *trace, tg_hook_done_cb done,
                           void *ud, char err[TG_ERRMSG]);

/* ---- explain_event.c ---------------------------------------------------- */

/* Where `toolgate explain --event` reads the event's session's taint
 * and the remembered approvals from: the database `toolgate hook` would
 * keep them in, opened read-only by the caller (explain's runtime has
 * none: it records nothing), or why it was not consulted. */
typedef struct {
  tg_store *store;          /* NULL: not consulted, see not_read */
  const char *path;         /* the database's file, as shown */
  const char *not_read;     /* why not (--no-db, no such file) */
} tg_hook_stored;

/* tg_hook_explain with the session's stored taint (src, not NULL) made
 * the runtime's own before anything judges (tg__runtime_taint_seed; the
 * runtime keeps taints in memory), and said under "stored_taint":
 * {consulted, database, session, taint (tg_store_taint's: null when
 * clean), why (when not consulted)}; and with src's remembered approvals
 * looked up by the chain while it judges an event of a call about to
 * run (PreToolUse and its kin; tg__runtime_read_approvals),
 * said under "approvals": {consulted, database, answered_by (the one
 * that allowed the call, as tg_store_approvals lists it; null: none),
 * why (when not consulted)}. A database that cannot be read is an error
 * (NULL with err): the hook would not answer what explain says. */
cJSON *tg__hook_explain_stored(tg_runtime *rt, const tg_hook_request *req,
                               const tg_hook_stored *src,
                               char err[TG_ERRMSG]);

/* What `say` tells the agent, in one word, after the agent's limits (as
 * tg__hook_render puts it): "allow", "deny", "ask", "block", "output" (an
 * MCP tool's new output), "context" (only context for the model; also
 * when more_context: tools run for it may add some); NULL: nothing — the
 * agent's own flow decides. For the audit. */
const char *tg__hook_told(const tg_hook_say *say, int more_context);

/* Renders `say` into res (output, message, exit code). -ENOMEM. */
int tg__hook_render(const tg_hook_say *say, tg_hook_result *res);

/* The agent's tool call as toolgate's: tg__agent_map and its kin
 * (runtime/hook_services.h). */

/* text.c: the texts agent.context added (metadata.agent_context), in
 * order, as one (malloc'd; NULL: none); v as text for a message (a string
 * as itself, JSON else; cut; malloc'd); v's object keys in the order like
 * has them (then the new ones sorted), at every depth. */
char *tg__hook_context_text(const cJSON *meta);
char *tg__hook_shown(const cJSON *v);
void tg__hook_order_like(cJSON *v, const cJSON *like, int depth);

/* context.c: starts the calls policy code asked for in
 * meta.agent_context_calls (agent.context_from); done gets their text
 * (malloc'd, may be NULL) once all ended or were cut at deadline_ms —
 * maybe before this returns. 0: none asked (done is not called), 1:
 * started. */
int tg__hook_context_start(tg_runtime *rt, const cJSON *meta,
                           const cJSON *event, uint64_t deadline_ms,
                           void (*done)(void *ud, char *text), void *ud);

/* ---- case_event.c --------------------------------------------------------- */

/* Lets `toolgate test` cases on rt be agents' own events (event = the
 * JSON the agent sends, event_name when its payload lacks it), read as
 * the hook reads them, and checks a case's agent name ("did you mean"). */
void tg__hook_install_case_reader(tg_runtime *rt);

/* ---- record.c ----------------------------------------------------------- */

/* Records the prompt, stop or session's start or end (kind) that event
 * ev (named name, of agent) tells of; other kinds: nothing. 0, or -1 with
 * what went wrong in err (the agent is not stopped for it). */
int tg__hook_record(tg_runtime *rt, const char *agent, tg_hook_event kind,
                    const char *name, const cJSON *ev, char *err,
                    size_t errlen);
/* The project of the event's session: its cwd's real path (malloc'd), or
 * NULL when it has none that is a folder here. */
char *tg__hook_project(const cJSON *ev);

/* ---- transcript.c -------------------------------------------------------- */

/* How far a transcript was read (kept per session, as JSON). */
typedef struct {
  uint64_t offset;       /* bytes read up to (a line's end) */
  uint64_t dev, ino;     /* the file they were read from */
  double last_total;     /* Codex: the total_tokens counted last */
  char last_id[128];     /* Claude Code: the last message id counted */
} tg_hook_mark;

/* One model's usage in what was read. */
typedef struct {
  char model[128];
  int64_t input_tokens, output_tokens;
  int64_t cache_creation_input_tokens, cache_read_input_tokens;
  int64_t messages;
} tg_hook_usage;

#define TG_HOOK_MAX_USAGE_MODELS TG_HOOKSVC_MAX_SPEND
/* Reads what the agent appended to its transcript since *mark (updated):
 * usage per model into u (at most TG_HOOK_MAX_USAGE_MODELS), *n of them.
 * At most max bytes are read per call (the rest waits for the next Stop);
 * a truncated or replaced file is read from its start; a partial last
 * line waits; lines that are not JSON, or not the agent's usage, are
 * skipped. Only a regular file is read. 0, or a negative errno with err. */
int tg__hook_transcript_usage(const char *agent, const char *path,
                              const char *event_model, tg_hook_mark *mark,
                              size_t max, tg_hook_usage *u, int *n,
                              char err[TG_ERRMSG]);

#endif
