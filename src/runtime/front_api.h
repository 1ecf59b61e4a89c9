/*
 * front_api.h — what the runtime offers the fronts (the command line, the
 * Lua module, the tests) beyond the embedder's API of include/toolgate.h:
 * a dry run of a call (toolgate explain), the policy unit tests (toolgate
 * test), the runtime's database and memory, the host's redactor. The
 * fronts reach it through src/kit/kit.h; libtoolgate.so does not export
 * it.
 */
#ifndef TG_RUNTIME_FRONT_API_H
#define TG_RUNTIME_FRONT_API_H

#include "toolgate.h"
#include "core/memory.h"
#include "core/redact.h"
#include "core/taint.h"
#include "store/store_api.h"

/* ---- declared tools -----------------------------------------------------
 * Tools a configuration declares that nobody registers in this runtime
 * (the tools of toolgate.lua's upstream MCP servers: [{name, read_only}],
 * kit/declared_tools.h): `toolgate check` knows their names, `toolgate
 * test` judges a case naming one as a stand-in. Replaces the runtime's
 * list with a copy of decl. */
void tg_runtime_declare_tools(tg_runtime *rt, const struct cJSON *decl);

/* ---- tools that reach the network --------------------------------------
 * Globs of toolgate's tool names a configuration marks as reaching the
 * network whatever their input (toolgate.lua's servers.NAME.network);
 * policies read call.network. Replaces the runtime's globs with a copy
 * (NULL: none). A runtime given none asks the process's reader (set once
 * at start: main.c gives toolgate.lua's) when a rule first reads
 * call.network. */
void tg_runtime_declare_network(tg_runtime *rt, const struct cJSON *globs);
typedef int (*tg_runtime_network_reader)(const char *path,
                                         struct cJSON **out, char *err,
                                         size_t errlen);
/* stamp: the default file's (0: none), read again when it changes. */
void tg_runtime_set_network_reader(tg_runtime_network_reader fn,
                                   uint64_t (*stamp)(void));

/* ---- a session's taint, from the host (rt:taint & co.) ------------------
 * As a policy's tg.taint and tg.session_taint, for the program that
 * embeds the runtime: the host marks a session sensitive (level 1 to
 * TG_TAINT_LEVEL_MAX, a reason; the cause recorded as the host's, with no
 * call), reads it, and — a person's decision, as `toolgate approvals
 * clear-taint` — clears it. Kept where the runtime keeps taints: its
 * database, or its memory when storage is off. 0 (taint_of: 1 tainted,
 * 0 clean), or a negative errno with err (-EINVAL: a bad session, level
 * or reason; -ENOENT: untaint of a clean session). */
int tg_runtime_taint(tg_runtime *rt, const char *session, int level,
                     const char *reason, char err[TG_ERRMSG]);
int tg_runtime_taint_of(tg_runtime *rt, const char *session,
                        tg_taint *out, char err[TG_ERRMSG]);
int tg_runtime_untaint(tg_runtime *rt, const char *session,
                       char err[TG_ERRMSG]);
/* A taint read from a database (tg_store_taint), made this runtime's own
 * when it keeps taints in memory (storage off): its policies then see the
 * session as the runtime that keeps that database would, cause and time
 * as stored, nothing told or recorded. -EINVAL with err when the runtime
 * has a database of its own or the session id is bad. */
int tg__runtime_taint_seed(tg_runtime *rt, const char *session,
                           const tg_taint *t, char err[TG_ERRMSG]);
/* The remembered approvals of st (a database only read, the caller's,
 * open while the runtime uses it; NULL: none again) looked up by this
 * runtime, which has no database, as the runtime on st would: an ask
 * they cover is allowed; nothing is stored, counted or audited. -EINVAL
 * with err when the runtime has a database of its own. */
int tg__runtime_read_approvals(tg_runtime *rt, tg_store *st,
                               char err[TG_ERRMSG]);
/* The id of the approval of st that last covered a call (0: none since
 * the last time asked), and forgets it. */
int64_t tg__runtime_read_approval_hit(tg_runtime *rt);
/* The session a call without one belongs to (tg_config.session). */
const char *tg__runtime_session(const tg_runtime *rt);

/* ---- how a decision is named ------------------------------------------
 * A rule that failed (it raised, or answered with something that is no
 * verdict: error code RULE_ERROR or BAD_VERDICT) fails closed: the call is
 * denied and ends with that error. Every front names it the same way, as
 * "error" by the rule that failed, never as a deny of that rule: this is
 * the word for a decision of verdict (tg_verdict_name's) and the
 * outcome's error code (NULL: none). */
const char *tg_decision_word(const char *verdict, const char *error_code);

/* ---- explain (dry run) -------------------------------------------------
 * What the chain would decide for a call, without running it: the rules
 * in evaluation order with what each answered (they are evaluated for
 * real, against the current generation — rules are judges and should
 * have no side effects; ones that do will have them), the rules not
 * consulted and why, the final verdict and the rule that made it (or the
 * default and why), whether the approver would be asked, the schema check,
 * and the pre-hooks and post-hooks that would run, in run order. Neither
 * the hooks nor the tool run; no event is emitted. Rules see
 * call.dry_run == true. Returns NULL with err for a malformed request or
 * an unknown tool. Caller frees with cJSON_Delete. Shape:
 * {tool, args, session, generation, tool_info {where, read_only},
 *  rules [{name, priority, where, status: "answered"|"no answer"|"error"|
 *          "skipped"|"not reached", answer?, reason?, error?, fail?}],
 *  decision {verdict, rule, where?, reason?, by_default, why, remembered?},
 *  approval?, validation {ok, error?}, pre_hooks [{tool, where}],
 *  post_hooks [...], hooks_run, notes [...]} */
struct cJSON *tg_explain(tg_runtime *rt, const tg_call_request *req,
                         char err[TG_ERRMSG]);

/* ---- policy tests (toolgate test) ---------------------------------------
 * Runs the policy unit tests of a policies folder against the runtime's
 * current generation: the cases of the *_test.lua files in dir and in
 * dir/tests/ (dir NULL: the folder the policies were loaded from). Each
 * case goes through the real chain — rules, pre-hooks, rules again after
 * a rewrite, schema, post-hooks, events — with the tool replaced by the
 * case's fixture (`result` or `error`; with neither, the call stops
 * before the tool and no post-hook runs); no tool runs, an ask is
 * approved without asking. run (may be NULL) is a Lua pattern a case's
 * name must match (string.find). Returns the report, or NULL with err
 * when a test file does not load or a case is malformed (file:line:
 * message), there is no test file, or no case matches run. Shape:
 * {dir, generation, files [...], passed, failed, filtered,
 *  cases [{name, file, line, where, tool, passed, failures [...],
 *          decision {verdict, rule, where?, reason?}, status, error,
 *          tool_run, args_run, result}]}. Caller frees with cJSON_Delete. */
struct cJSON *tg_policy_test(tg_runtime *rt, const char *dir, const char *run,
               char err[TG_ERRMSG]);

/* How a case's agent event is read: the agent protocol (a layer above
 * the runtime) installs it with tg__policy_test_reader, so that a case
 * may be an agent's native event (Gemini CLI's, Copilot CLI's, ...).
 * agent: the case's agent (NULL: told by the event's shape), checked
 * against the agents and their aliases ("did you mean"); event_name: the
 * case's event_name (NULL: the payload's, else the agent's pre-tool
 * event); native: the event as the agent sends it (NULL: the case is a
 * tool and args: only the agent's name is checked). Sets *agent_out (the
 * canonical name, static) and *canonical (NULL when native is; the
 * caller's). 0, or -1 with why. */
typedef int (*tg_case_event_reader)(const char *agent, const char *event_name,
                                    const struct cJSON *native,
                                    const char **agent_out,
                                    struct cJSON **canonical, char *why,
                                    size_t len);
void tg__policy_test_reader(tg_runtime *rt, tg_case_event_reader reader);

/* ---- the runtime's database and memory -------------------------------- */

/* The runtime's database, or NULL when storage is off. Owned by the
 * runtime: do not close it. */
tg_store *tg_runtime_store(tg_runtime *rt);

/* tg_memory_record and tg_memory_recall (store/store_api.h) on a
 * runtime's store, the session and project left NULL being
 * the runtime's (tg_config.session, tg_config.project): what policies'
 * tg.memory does. -ENOTSUP / NULL with err when storage is off. */
int64_t tg_runtime_remember(tg_runtime *rt, const tg_memory *m,
                            char err[TG_ERRMSG]);
struct cJSON *tg_runtime_recall(tg_runtime *rt,
                                const tg_recall_filter *f,
                                char err[TG_ERRMSG]);

/* ---- redaction (core/redact.h says where a redactor runs) -------------- */

/* Sets (fn NULL: removes) the host's redactor. */
void tg_runtime_set_redactor(tg_runtime *rt, tg_redactor_fn fn, void *ud);

#endif
