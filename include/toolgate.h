/*
 * toolgate.h — the one public header of libtoolgate.
 *
 * A runtime (tg_runtime) owns a libuv loop, the tool registry, the current
 * policy generation and the event bus. Calls run through the chain
 * (docs/policies.md, "The chain") as asynchronous state machines on that
 * loop; nothing here blocks.
 *
 * Ownership, in one place:
 *   - Strings and cJSON values passed *in* are copied; the caller keeps them.
 *   - Values handed *out* in callbacks (outcome, event, approval request)
 *     are owned by the runtime and valid only for the duration of the
 *     callback; copy what you keep (tg_outcome_to_json gives a new cJSON
 *     tree the caller frees with cJSON_Delete).
 *   - Functions return 0 on success or a negative errno-style code; where a
 *     message helps, it is written to `err` (a buffer of TG_ERRMSG bytes).
 */
#ifndef TOOLGATE_H
#define TOOLGATE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* TG_VERSION ("0.1.0") is not written here: the build passes it to
 * everything that links libtoolgate, from CMakeLists.txt's
 * project(VERSION), its one source. tg_version() gives the library's. */
#define TG_ERRMSG 512

/* What the library exports: exactly the functions declared here (it is
 * built with -fvisibility=hidden; spec/pkg/check_exports.sh checks). */
#if defined(__GNUC__) || defined(__clang__)
#define TG_API __attribute__((visibility("default")))
#else
#define TG_API
#endif

/* libuv and cJSON appear only as pointers: this header needs neither
 * uv.h nor cJSON.h. struct uv_loop_s is libuv's uv_loop_t and struct
 * cJSON is cJSON.h's cJSON, so a uv_loop_t * or struct cJSON * is passed and
 * received as is; include those headers to use them. */
struct uv_loop_s;
struct cJSON;

typedef struct tg_runtime tg_runtime;

/* ---- errors ------------------------------------------------------------ */

/* X-macro: one list gives the enum and the names. */
#define TG_PHASE_MAP(X) \
  X(NONE)               \
  X(AUTHORIZE)          \
  X(PRE_HOOK)           \
  X(VALIDATE)           \
  X(APPROVE)            \
  X(EXECUTE)            \
  X(TIMEOUT)            \
  X(CANCEL)             \
  X(UPSTREAM)           \
  X(POLICY)             \
  X(INTERNAL)

typedef enum {
#define TG_PHASE_ENUM(name) TG_PHASE_##name,
  TG_PHASE_MAP(TG_PHASE_ENUM)
#undef TG_PHASE_ENUM
  TG_PHASE__COUNT
} tg_phase;

TG_API const char *tg_phase_name(tg_phase phase);

/* The error codes the runtime itself emits, in one list: the name
 * (TG_E_<NAME>, and the string in tg_error_view.code), the phases it
 * occurs in (TG_PHASE_BIT of each), and one line of what happened and
 * what to do. Nothing in the runtime emits a code that is not here; a tool
 * may finish with a code of its own (tg_exec_finish_error's code, a Lua
 * tool's `return nil, {code = ...}`), which is not in the list.
 * docs/errors.md shows the same table; a test keeps them in
 * step. */
#define TG_PHASE_BIT(name) (1u << TG_PHASE_##name)
#define TG_ERROR_CODE_MAP(X)                                                  \
  X(UNKNOWN_TOOL, TG_PHASE_BIT(VALIDATE) | TG_PHASE_BIT(PRE_HOOK),            \
    "no tool has that name (as called, or as a pre-hook rerouted the call); " \
    "the tool did not run: call a registered tool")                           \
  X(INVALID_ARGS, TG_PHASE_BIT(VALIDATE),                                     \
    "the args are not one JSON object, or do not match the tool's schema; "   \
    "the tool did not run: fix them as the message says")                     \
  X(DENIED, TG_PHASE_BIT(AUTHORIZE),                                          \
    "a rule, or the default verdict, denied the call; the tool did not run: " \
    "do not retry the same call, change it or ask the user")                  \
  X(RULE_ERROR, TG_PHASE_BIT(POLICY),                                         \
    "a rule raised, was stopped by the time limit or memory cap, or changed " \
    "the call it judged; the call fails closed: fix the rule named")          \
  X(BAD_VERDICT, TG_PHASE_BIT(POLICY),                                        \
    "a rule returned something that is not a verdict; the call fails "        \
    "closed: a rule returns nothing, tg.allow(), tg.deny(reason) or "         \
    "tg.ask(prompt)")                                                         \
  X(HOOK_ERROR, TG_PHASE_BIT(POLICY),                                         \
    "a hook raised, was stopped by a limit, returned a bad value or left "    \
    "args that are not a JSON object; the tool did not run, or its result is " \
    "withheld: fix the hook named")                                           \
  X(ABORTED, TG_PHASE_BIT(PRE_HOOK) | TG_PHASE_BIT(POLICY),                   \
    "a hook returned tg.abort(reason): a pre-hook before the tool ran "       \
    "(status denied), a post-hook after it (the result is withheld)")         \
  X(REJECTED, TG_PHASE_BIT(APPROVE),                                          \
    "the approver or the approve mode rejected the call, or no answer came "  \
    "in time; the tool did not run: follow the user's guidance, if any")      \
  X(CANCELLED, TG_PHASE_BIT(CANCEL),                                          \
    "the call was cancelled before, between or during its attempts; do not "  \
    "assume the tool finished")                                               \
  X(TIMEOUT, TG_PHASE_BIT(TIMEOUT),                                           \
    "the tool ran past its timeout and was stopped, partial output kept; "    \
    "retryable: try again or ask for less work")                              \
  X(NOMEM, TG_PHASE_BIT(INTERNAL),                                            \
    "the runtime ran out of memory handling the call")                        \
  X(TOOL_ERROR, TG_PHASE_BIT(EXECUTE),                                        \
    "the tool failed without a code of its own; the message says why")        \
  X(TOOL_RAISED, TG_PHASE_BIT(EXECUTE),                                       \
    "a Lua tool raised an error; what it did before may have happened")       \
  X(BAD_RESULT, TG_PHASE_BIT(EXECUTE),                                        \
    "a Lua tool returned a value that is not JSON")                           \
  X(TIME_LIMIT, TG_PHASE_BIT(EXECUTE),                                        \
    "a Lua tool ran past the policy time limit without yielding and was "     \
    "stopped; not retried: its side effects may have happened")               \
  X(MEMORY_CAP, TG_PHASE_BIT(EXECUTE),                                        \
    "a Lua tool took its generation past the policy memory cap and was "      \
    "stopped; not retried")                                                   \
  X(BAD_ARGS, TG_PHASE_BIT(EXECUTE),                                          \
    "exec, a file tool or a Lua tool cannot use an argument that passed the " \
    "schema: fix it as the message says")                                     \
  X(SPAWN_FAILED, TG_PHASE_BIT(EXECUTE),                                      \
    "exec could not start the command (not found, not executable, a bad "     \
    "cwd); the message says why")                                             \
  X(NO_WORKSPACE, TG_PHASE_BIT(EXECUTE),                                      \
    "the file tools have no workspace root: the host sets workspace_roots")   \
  X(OUTSIDE_WORKSPACE, TG_PHASE_BIT(EXECUTE),                                 \
    "the path leads outside every workspace root (.., an absolute path, a "   \
    "symlink): use a path inside the workspace")                              \
  X(BAD_PATH, TG_PHASE_BIT(EXECUTE),                                          \
    "the path is empty, too long, loops through symlinks or names no file "   \
    "the tool can use: fix the path")                                         \
  X(NOT_FOUND, TG_PHASE_BIT(EXECUTE),                                         \
    "the file or a directory on its path does not exist: list_dir shows "     \
    "what is there")                                                          \
  X(ALREADY_EXISTS, TG_PHASE_BIT(EXECUTE),                                    \
    "a patch creates a file, or renames one to a name, that already exists: " \
    "patch the existing file instead")                                        \
  X(NOT_A_DIRECTORY, TG_PHASE_BIT(EXECUTE),                                   \
    "a directory was needed but the path, or a component of it, is a file")   \
  X(NOT_A_REGULAR_FILE, TG_PHASE_BIT(EXECUTE),                                \
    "the path is a directory, device, FIFO or socket; the file tools read "   \
    "and write regular files only")                                           \
  X(BROKEN_SYMLINK, TG_PHASE_BIT(EXECUTE),                                    \
    "the path goes through a dangling symlink, which the file tools do not "  \
    "follow")                                                                 \
  X(PERMISSION_DENIED, TG_PHASE_BIT(EXECUTE),                                 \
    "the operating system refused access to the file or a directory on its "  \
    "path")                                                                   \
  X(NO_SPACE, TG_PHASE_BIT(EXECUTE),                                          \
    "the disk or the quota is full: free space, then try again")              \
  X(TOO_LARGE, TG_PHASE_BIT(EXECUTE),                                         \
    "the file is over file_max_bytes: work on a smaller file or raise the "   \
    "limit")                                                                  \
  X(BINARY_FILE, TG_PHASE_BIT(EXECUTE),                                       \
    "read_file got offset or limit for a file that is not UTF-8 text: read "  \
    "it whole (it comes back base64-encoded)")                                \
  X(PATCH_PARSE, TG_PHASE_BIT(EXECUTE),                                       \
    "apply_patch could not parse the patch: send a unified diff")             \
  X(PATCH_CONFLICT, TG_PHASE_BIT(EXECUTE),                                    \
    "the patch does not apply to the file as it is, or two of its sections "  \
    "clash over a file; nothing was changed: read the file, redo the patch")  \
  X(ROLLBACK_FAILED, TG_PHASE_BIT(EXECUTE),                                   \
    "a patch failed part way and undoing the files it had written failed "    \
    "too: the message names the files left changed")                          \
  X(IO_ERROR, TG_PHASE_BIT(EXECUTE),                                          \
    "a file tool hit another operating system error (or ran out of memory);"  \
    " the message says which")                                                \
  X(UPSTREAM_UNAVAILABLE, TG_PHASE_BIT(UPSTREAM),                             \
    "the upstream MCP server of the tool is not running (it crashed, is "     \
    "restarting or could not start) or went away during the call; the "       \
    "message names it; retryable: try again shortly")                         \
  X(UPSTREAM_ERROR, TG_PHASE_BIT(UPSTREAM),                                   \
    "the upstream MCP server answered the call with a protocol error or "     \
    "with something that is not a tool result; the message names the "        \
    "server and says what it answered")

/* TG_E_NONE is no code: no error, or a code not in the list (a tool's own).
 * The codes are TG_E_NONE + 1 .. TG_E__COUNT - 1, in the list's order. */
typedef enum {
  TG_E_NONE = 0,
#define TG_ERROR_CODE_ENUM(name, phases, doc) TG_E_##name,
  TG_ERROR_CODE_MAP(TG_ERROR_CODE_ENUM)
#undef TG_ERROR_CODE_ENUM
  TG_E__COUNT
} tg_error_code;

/* "UNKNOWN_TOOL" for TG_E_UNKNOWN_TOOL; NULL for TG_E_NONE and values out
 * of range. */
TG_API const char *tg_error_code_name(tg_error_code code);
/* The code's line of documentation; NULL when it has no name. */
TG_API const char *tg_error_code_doc(tg_error_code code);
/* The phases the code occurs in: TG_PHASE_BIT of each; 0 when it has no
 * name. */
TG_API unsigned tg_error_code_phases(tg_error_code code);
/* The code named name (as in tg_error_view.code), or TG_E_NONE when name
 * is NULL or not in the list. */
TG_API tg_error_code tg_error_code_of(const char *name);
/* The names of every code, in the list's order, NULL-terminated; static. */
TG_API const char *const *tg_error_codes(void);

typedef struct {
  tg_phase phase;       /* TG_PHASE_NONE when there is no error */
  const char *code;     /* short machine code, e.g. "DENIED", "INVALID_ARGS":
                           a tg_error_code's name, or a tool's own code */
  const char *message;  /* what the agent / user reads */
  const char *suggestion; /* may be NULL */
  int retryable;
} tg_error_view;

/* ---- status and verdicts -------------------------------------------- */

#define TG_STATUS_MAP(X) \
  X(OK, "ok")            \
  X(ERROR, "error")      \
  X(DENIED, "denied")    \
  X(REJECTED, "rejected") \
  X(CANCELLED, "cancelled") \
  X(TIMEOUT, "timeout")

typedef enum {
#define TG_STATUS_ENUM(name, str) TG_STATUS_##name,
  TG_STATUS_MAP(TG_STATUS_ENUM)
#undef TG_STATUS_ENUM
} tg_status;

TG_API const char *tg_status_name(tg_status s);

typedef enum {
  TG_VERDICT_NONE = 0, /* the rule did not answer */
  TG_VERDICT_ALLOW,
  TG_VERDICT_DENY,
  TG_VERDICT_ASK
} tg_verdict;

TG_API const char *tg_verdict_name(tg_verdict v);

/* ---- configuration --------------------------------------------------- */

typedef enum {
  TG_APPROVE_CALLBACK = 0, /* ask the approver set with tg_runtime_set_approver;
                              with none set, an ask is rejected */
  TG_APPROVE_DENY,         /* non-interactive: every ask is rejected */
  TG_APPROVE_ALLOW         /* non-interactive: every ask is approved */
} tg_approve_mode;

typedef struct {
  const char *policies_dir;   /* NULL: no policies (only C tools, defaults) */
  const char *session;        /* default session id; NULL: "default" */
  tg_verdict default_verdict; /* for tools not read-only when no rule answers;
                                 TG_VERDICT_NONE means the default, ASK */
  uint64_t timeout_ms;        /* default per-attempt timeout; 0: 60000 */
  uint64_t approval_timeout_ms; /* 0: 300000 (5 min); a timeout rejects */
  uint64_t progress_interval_ms; /* 0: 1000 */
  tg_approve_mode approve_mode;
  uint64_t seed;              /* jitter RNG seed; 0: from the clock */
  size_t max_args_bytes;      /* 0: 16 MiB; bigger args JSON is refused */

  /* Built-in executors (exec, file tools). */
  int builtin_tools;          /* register them: 1 after tg_config_init */
  size_t exec_output_cap;     /* bytes kept per stream, head + tail; 0: 1 MiB */
  uint64_t kill_grace_ms;     /* SIGTERM to SIGKILL on timeout/cancel; 0: 2000 */
  const char *const *workspace_roots; /* NULL-terminated list the file tools
                                         are confined to; NULL: the cwd */
  size_t file_max_bytes;      /* largest file read/written; 0: 16 MiB */

  /* Policy sandbox and reload. */
  int trusted_policies;       /* 1: policies get the full standard library */
  uint32_t policy_time_limit_ms; /* per call from C into policy code; 0: 500 */
  size_t policy_memory_cap;   /* bytes per generation (Lua 5.4); 0: 64 MiB */
  int watch_policies;         /* reload when policies_dir changes */

  /* Storage (see "storage" below). */
  const char *db;             /* the database file; NULL: the default,
                                 ${XDG_STATE_HOME:-~/.local/state}/toolgate/
                                 toolgate.db; ":memory:": a private one that
                                 lives as long as the runtime */
  int db_off;                 /* 1: no database — no audit, approve-always
                                 remembered in memory for this runtime */
  size_t audit_args_max;      /* bytes of args JSON kept per call; 0: 64 KiB */
  size_t audit_result_max;    /* bytes of result JSON kept; 0: 16 KiB */
  const char *project;        /* the project approvals are remembered for;
                                 NULL: the current directory */
} tg_config;

/* Fills a config with the defaults above. */
TG_API void tg_config_init(tg_config *cfg);

/* Creates a runtime. `loop` may be NULL (the runtime makes and owns one)
 * or a loop the host owns and runs (it must outlive the runtime).
 * Loads cfg->policies_dir if set. Returns NULL and fills err on failure. */
TG_API tg_runtime *tg_runtime_new(const tg_config *cfg, struct uv_loop_s *loop,
                                  char err[TG_ERRMSG]);

/* Cancels calls still running, runs the loop until they have ended, closes
 * every handle, frees everything. Safe with NULL. */
TG_API void tg_runtime_free(tg_runtime *rt);

TG_API struct uv_loop_s *tg_runtime_loop(tg_runtime *rt);

/* How tg_runtime_run runs the loop: the values of libuv's uv_run_mode
 * (UV_RUN_DEFAULT, UV_RUN_ONCE, UV_RUN_NOWAIT). */
typedef enum {
  TG_RUN_DEFAULT = 0, /* until no call, timer or handle keeps it alive */
  TG_RUN_ONCE = 1,    /* one iteration, waiting for I/O if there is none */
  TG_RUN_NOWAIT = 2   /* one iteration, without waiting */
} tg_run_mode;

/* Runs the loop as uv_run(loop, mode) does. Returns uv_run's value:
 * non-zero when something is still pending. */
TG_API int tg_runtime_run(tg_runtime *rt, tg_run_mode mode);

/* SIGKILLs, at once, every process group the runtime's tools still run
 * (exec, ctx.exec). For a host that is about to exit without waiting for
 * the calls to end (a second Ctrl-C): no command outlives it. Touches
 * nothing else; tg_runtime_free is still needed to free memory. */
TG_API void tg_runtime_kill_processes(tg_runtime *rt);

/* Loads (or reloads) the policies in dir into a new generation and makes it
 * current if every file loaded. On failure the old generation stays, err
 * names file:line:message, and -EINVAL is returned. */
TG_API int tg_runtime_load_policies(tg_runtime *rt, const char *dir,
                                    char err[TG_ERRMSG]);

/* The number of the current policy generation (0 before any load). */
TG_API uint64_t tg_runtime_generation(tg_runtime *rt);

/* A JSON description of what is registered: rules in evaluation order,
 * hooks in run order, tools (Lua tools in registration order, then C
 * tools in registration order: {name, description?, read_only, schema?,
 * group?, where, ...}), event handlers and tg.list_tools hooks
 * ("list_tools": [{where}]). Caller frees with cJSON_Delete. */
TG_API struct cJSON *tg_runtime_describe(tg_runtime *rt);

/* The tool list a front shows (tools: an array of objects with a "name";
 * MCP's Tool fields, and "server" for a gateway's tools) after the current
 * generation's tg.list_tools hooks: the tools they kept, in their order,
 * with the description, title and annotations they gave. A hook that
 * fails is reported as a handler_error event and skipped. A new array the
 * caller frees; NULL when tools is not an array or memory ran out. */
TG_API struct cJSON *tg_runtime_list_tools(tg_runtime *rt,
                                           const struct cJSON *tools);

/* ---- events ---------------------------------------------------------- */

typedef struct {
  uint64_t seq;          /* strictly increasing per runtime */
  const char *type;      /* "call_start", "decision", "hook", ... */
  const char *call_id;   /* may be NULL for runtime-wide events */
  const struct cJSON *data; /* the whole event as a JSON object,
                               incl. seq/type */
} tg_event;

typedef void (*tg_event_cb)(tg_runtime *rt, const tg_event *ev, void *ud);

/* Returns a subscription id (> 0) or a negative code. */
TG_API int tg_events_subscribe(tg_runtime *rt, tg_event_cb cb, void *ud);
/* The same, for the events of no call only (policy_loaded, policy_error,
 * handler_error of a policy handler, control_busy): a front that follows
 * reloads without hearing every call's events, which a call nobody hears
 * does not build. tg_events_unsubscribe ends it. */
TG_API int tg_events_subscribe_runtime(tg_runtime *rt, tg_event_cb cb,
                                       void *ud);

/* The event types the runtime emits, space-separated ("call_start
 * decision ..."), and whether `type` is one of them: a handler for a type
 * that is not (a typo) would never run, so tg.on_event and rt:on_event
 * refuse it. */
TG_API const char *tg_event_types(void);
TG_API int tg_event_type_known(const char *type);
TG_API void tg_events_unsubscribe(tg_runtime *rt, int id);

/* ---- calls ------------------------------------------------------------ */

typedef struct {
  const char *id;        /* NULL: the runtime makes one ("call-N") */
  const char *tool;
  const struct cJSON *args; /* an object; NULL means {} */
  const char *args_json; /* alternative to args: raw JSON text */
  const char *session;   /* NULL: the runtime's default */
  int64_t turn;
  const struct cJSON *metadata; /* an object or NULL */
  /* This call's own events (call_id is its id), told as each is made, in
   * seq order, all before done: on_event gets every one, on_progress only
   * `progress` (either may be NULL). A front that serves one call (a
   * progress token, a spinner) needs no runtime-wide subscription. */
  tg_event_cb on_event;
  tg_event_cb on_progress;
  void *events_ud;
  /* The project folder the call belongs to: approvals remembered for a
   * project cover it there (and are remembered there). NULL: the
   * runtime's (tg_config.project). An agent's hook gives the session's
   * cwd, so one resident instance serves several projects. */
  const char *project;
} tg_call_request;

typedef struct {
  const char *id;
  const char *tool;
  tg_status status;
  const struct cJSON *result; /* NULL when the call produced none */
  tg_error_view error;   /* phase NONE on success */
  tg_verdict verdict;    /* the decision that let the call run (or not) */
  const char *rule;      /* the rule that made it; NULL for the default */
  int attempts;
  double duration_ms;
  int truncated;         /* the result limit cut the result */
} tg_outcome;

typedef void (*tg_done_cb)(tg_runtime *rt, const tg_outcome *out, void *ud);

/* Starts a call. done is called exactly once, from the loop or (for calls
 * refused at once, e.g. an unknown tool) before tg_call_start returns —
 * with storage on, always from the loop, once the call's audit record is
 * committed (see "storage").
 * Returns 0, or a negative code with err filled when the request itself is
 * malformed (no tool name, a req->args tree that is not a JSON object or
 * breaks the parser's rules): then done is not called. Args *text*
 * (req->args_json, the agent's bytes) that does not parse — bad syntax, a
 * key twice, 1e400, invalid UTF-8, too deep or too big — is not a
 * malformed request: the call ends with VALIDATE INVALID_ARGS, and no rule,
 * hook or tool sees it. */
TG_API int tg_call_start(tg_runtime *rt, const tg_call_request *req,
                         tg_done_cb done, void *ud, char err[TG_ERRMSG]);

/* Cancels a running call by id. Returns 0, or -ENOENT if no such call is
 * running. The call ends with status "cancelled" and its partial output. */
TG_API int tg_call_cancel(tg_runtime *rt, const char *call_id);

/* The outcome as the JSON object of `toolgate call --json`:
 * {"id","tool","status","result","error","decision":{"verdict","rule"},
 *  "attempts","duration_ms"}. Caller frees with cJSON_Delete. */
TG_API struct cJSON *tg_outcome_to_json(const tg_outcome *out);

/* ---- approvals ------------------------------------------------------- */

typedef enum {
  TG_ANSWER_APPROVE = 1,
  TG_ANSWER_ALWAYS,     /* approve and remember for the session */
  TG_ANSWER_REJECT,
  /* Nobody can be asked here (a front that cannot reach a human for this
   * call): a reject, said as such — "approval was not possible here" —
   * with the guidance saying why. */
  TG_ANSWER_UNAVAILABLE
} tg_answer;

typedef enum {
  TG_SCOPE_TOOL = 0,    /* approve-always covers the whole tool */
  TG_SCOPE_ARGS,        /* only these exact args */
  TG_SCOPE_PATTERN      /* a glob on one named argument: see
                           tg_approval_answer_always */
} tg_always_scope;

typedef struct {
  uint64_t approval_id;  /* pass back to tg_approval_answer */
  const char *call_id;
  const char *tool;
  const struct cJSON *args;
  const char *session;
  const char *prompt;    /* the rule's ask text */
  const char *rule;
} tg_approval_request;

/* The approver is told of each ask; it answers now or later with
 * tg_approval_answer. Answers after the timeout, or for a call that has
 * been cancelled, are ignored (-ENOENT). */
typedef void (*tg_approver_cb)(tg_runtime *rt, const tg_approval_request *req,
                               void *ud);

TG_API void tg_runtime_set_approver(tg_runtime *rt, tg_approver_cb cb,
                                    void *ud);
TG_API void tg_runtime_set_approve_mode(tg_runtime *rt, tg_approve_mode mode);

TG_API int tg_approval_answer(tg_runtime *rt, uint64_t approval_id,
                              tg_answer answer, tg_always_scope scope,
                              const char *guidance);

/* ---- C tools ---------------------------------------------------------- */

typedef struct tg_exec tg_exec; /* one running attempt of a tool */

/* Called to start one attempt. The tool finishes it, now or later, with
 * tg_exec_finish_ok / tg_exec_finish_error, exactly once. A tool that arms
 * its own uv timer here should call uv_update_time first: the loop's
 * cached clock may be stale (policy loading, a long Lua hook). */
typedef void (*tg_tool_start_fn)(tg_exec *ex, const struct cJSON *args,
                                 void *ud);
/* Called when the attempt is cancelled or times out: stop for real, then
 * finish (partial output may be passed to tg_exec_finish_error as result). */
typedef void (*tg_tool_cancel_fn)(tg_exec *ex, void *ud);

typedef struct {
  const char *name;
  const char *description;
  const struct cJSON *schema; /* JSON Schema for args, or NULL */
  int read_only;
  uint64_t timeout_ms;       /* 0: the runtime default */
  size_t max_result_bytes;   /* 0: no limit */
  int retry_attempts;        /* 0 or 1: no retry */
  uint64_t retry_initial_ms, retry_max_ms;
  double retry_multiplier, retry_jitter;
  tg_tool_start_fn start;
  tg_tool_cancel_fn cancel;  /* may be NULL: the result is then dropped */
  void *ud;
  /* Where the tool comes from, for policies: an upstream MCP server's name
   * for the tools a gateway forwards to it. Rules and hooks see it as
   * call.server (absent when NULL); tg_runtime_describe as "group". */
  const char *group;
} tg_tool_def;

TG_API int tg_tool_register(tg_runtime *rt, const tg_tool_def *def,
                            char err[TG_ERRMSG]);

/* Result ownership passes to the runtime. code is the tool's own (NULL:
 * TOOL_ERROR); a tool may also pass one of the runtime's, by
 * tg_error_code_name. The error's phase is EXECUTE, or UPSTREAM for the
 * codes that occur only there (a gateway's tool: UPSTREAM_UNAVAILABLE,
 * UPSTREAM_ERROR). */
TG_API void tg_exec_finish_ok(tg_exec *ex, struct cJSON *result);
TG_API void tg_exec_finish_error(tg_exec *ex, struct cJSON *partial_result,
                                 const char *code, const char *message,
                                 int retryable);
/* Reports progress (current/total may be negative: unknown). */
TG_API void tg_exec_progress(tg_exec *ex, double current, double total,
                             const char *message);
TG_API const char *tg_exec_call_id(const tg_exec *ex);
TG_API int tg_exec_attempt(const tg_exec *ex);
TG_API tg_runtime *tg_exec_runtime(tg_exec *ex);

/* ---- file changes (built-in file tools) ------------------------------ */

/* A change one of the file tools (write_file, apply_patch) made. Delivered
 * after the call that made it has ended (after its call_end event); a call
 * that changed nothing (a patch that did not apply) reports nothing. */
typedef struct {
  const char *path;      /* relative to its workspace root, '/'-separated */
  const char *type;      /* "created", "modified", "deleted" or "renamed" */
  const char *old_path;  /* renamed: the path it had before; else NULL */
  const char *root;      /* the workspace root it is under (resolved) */
  int64_t size;          /* bytes after the change; 0 when deleted */
  double mtime;          /* seconds since the epoch after the change;
                            0 when deleted */
  const char *tool;      /* the tool that made it */
  const char *call_id;   /* the call that made it */
  const struct cJSON *json; /* the same as a JSON object (in the ring) */
} tg_file_change;

typedef void (*tg_change_cb)(tg_runtime *rt, const tg_file_change *ch,
                             void *ud);

/* Calls cb for each change whose path matches glob: `*` stays within a
 * path segment, `**` crosses segments (a whole `**` segment also matches
 * none), `?` is one character, `[a-z]`/`[!a-z]` a set, `{a,b}` either
 * alternative (groups nest; at most 256 alternatives), `\` quotes.
 * Returns a subscription id (> 0), or -EINVAL for a malformed glob, or
 * -ENOMEM. Subscribers may unsubscribe from inside their callback. */
TG_API int tg_changes_subscribe(tg_runtime *rt, const char *glob,
                                tg_change_cb cb, void *ud);
TG_API void tg_changes_unsubscribe(tg_runtime *rt, int id);

/* The most recent changes (at most limit; 0: all the ring holds, which is
 * the last 256), oldest first, as a JSON array of
 * {path, type, old_path?, root, size, mtime?, tool, call_id}.
 * Caller frees with cJSON_Delete. */
TG_API struct cJSON *tg_changes_recent(tg_runtime *rt, size_t limit);

/* ---- hot reload triggers ------------------------------------------
 * Every trigger takes the path of tg_runtime_load_policies: a new
 * generation beside the old, swapped in only when every file loaded;
 * policy_loaded {generation, files, duration_ms, trigger} or policy_error
 * {error, file?, line?, generation, trigger} tell the outcome. trigger is
 * "api", "watch", "signal" or "control". The handles these add are
 * unref'd: they never keep the loop running on their own (uv_run returns
 * when no call is pending), and tg_runtime_free closes them. */

/* Watches the policies folder (on = 1) or stops (on = 0); tg_config's
 * watch_policies does the same at creation. Saves are debounced (75 ms of
 * quiet); only *.lua files that are not dot files count, so editor temp
 * files and backups do not; atomic saves (temp file + rename), deletions
 * and new files are all picked up. The folder itself is watched, not its
 * subfolders. */
TG_API int tg_runtime_watch(tg_runtime *rt, int on, char err[TG_ERRMSG]);

/* Reloads when the process gets signum (usually SIGHUP); 0 stops. The
 * library installs no signal handler unless asked here. */
TG_API int tg_runtime_reload_on_signal(tg_runtime *rt, int signum,
                                       char err[TG_ERRMSG]);

/* The control socket's well-known path for a policies folder:
 * $XDG_RUNTIME_DIR/toolgate/<hash>.sock, else /tmp/toolgate-<uid>/
 * <hash>.sock, <hash> from realpath(policies_dir). Fails if the folder
 * does not exist or the socket folder is not private to this user. */
TG_API int tg_control_path(const char *policies_dir, char *buf, size_t len,
                           char err[TG_ERRMSG]);

/* Every control socket of the instances running for a policies folder:
 * the folder's own path (tg_control_path) and those of the instances that
 * found it taken and listen beside it (<hash>.<pid>.<n>.sock; see
 * tg_runtime_listen). Calls fn for each socket file there (one whose
 * instance has gone may still answer -ECONNREFUSED); fn returning non-zero
 * stops. Returns how many fn was called for, or < 0 with err as
 * tg_control_path. */
typedef int (*tg_control_path_fn)(const char *path, void *ud);
TG_API int tg_control_paths(const char *policies_dir, tg_control_path_fn fn,
                            void *ud, char err[TG_ERRMSG]);

/* Listens for control requests on path. NULL: tg_control_path of the
 * loaded policies folder (its parent is made 0700), or, when another
 * instance listens there already, a path of this runtime's own beside it,
 * so that any number of instances can run on one folder and `toolgate
 * reload` (tg_control_paths) reaches them all; when the one on the
 * folder's path stops, one beside it moves there within about a second
 * (tg_runtime_control_path then says the new path). A stale socket file
 * (nobody listening) is replaced; a live one at a path given fails with
 * -EADDRINUSE.
 * Requests are one JSON line: {"cmd":"reload"} answers {"ok":true,
 * "generation":N,"files":n,"duration_ms":x} or {"ok":false,"error":
 * "file:line: message","generation":N}; {"cmd":"status"} answers
 * {"ok":true,"generation":N,"policies":DIR,"pid":P}. */
TG_API int tg_runtime_listen(tg_runtime *rt, const char *path,
                             char err[TG_ERRMSG]);

/* The path listened on, or NULL. */
TG_API const char *tg_runtime_control_path(tg_runtime *rt);

/* The client side: sends one request line to the socket at path and
 * returns the reply line (malloc'd, no newline; caller frees). Blocks up
 * to timeout_ms (0: 30 s). -ENOENT or -ECONNREFUSED: no instance listens
 * there. */
TG_API int tg_control_request(const char *path, const char *request,
                              char **reply, uint64_t timeout_ms,
                              char err[TG_ERRMSG]);

/* ---- embedding in a host's loop ----------------------------------------
 * For a host with a loop of its own (an editor, luv, a GUI toolkit) that
 * let the runtime make its loop (tg_runtime_new with loop NULL): the
 * host's loop turns the runtime's without blocking in it. The contract:
 *   - watch tg_runtime_backend_fd() for readability, and keep one timer
 *     of tg_runtime_timeout() ms (none when it is -1);
 *   - when the fd is readable or the timer fires, call
 *     tg_runtime_run_once();
 *   - after tg_runtime_run_once() and after any other call into the
 *     runtime (tg_call_start, tg_call_cancel, tg_approval_answer, a reload,
 *     tg_runtime_listen, a C tool finishing), re-arm the timer from
 *     tg_runtime_timeout(): the call may have started timers or opened fds.
 * Calls then finish (timers, processes, file tools), and the folder watch
 * and the control socket work while no call is pending; an idle runtime
 * costs nothing (the fd is quiet, the timeout -1 or a real deadline).
 * Callbacks run inside tg_runtime_run_once, on the host's thread; none may
 * call tg_runtime_run_once or tg_runtime_free. */

/* The fd (epoll) that is readable when the runtime has I/O to handle; a
 * negative code when the runtime cannot be embedded (out of memory). */
TG_API int tg_runtime_backend_fd(tg_runtime *rt);

/* Milliseconds until the runtime needs tg_runtime_run_once even if the fd
 * stays quiet: 0 now, -1 never (until the fd is readable or the host calls
 * into the runtime again). Unlike uv_backend_timeout, right also when only
 * unref'd handles (the watch, the control socket) are left, and 0 while
 * new fds wait to be added to the backend fd. */
TG_API int tg_runtime_timeout(tg_runtime *rt);

/* One turn of the loop that does not block: due timers, ready fds, pending
 * callbacks, closes — also when only unref'd handles are left (unlike
 * uv_run(UV_RUN_NOWAIT), which then does nothing). Returns 1 while calls
 * (or other ref'd work) are pending, 0 when the runtime is idle. */
TG_API int tg_runtime_run_once(tg_runtime *rt);

/* ---- what a file-touching action touches --------------------------------
 * A judge never re-parses what an executor parses: these are the code
 * that acts, for rules and hosts to read what it will touch. */

/* The files a unified diff touches, as apply_patch's own parser reads
 * them: a JSON array of {"op": "modify" | "create" | "delete" | "rename",
 * "path": the file it leaves (for a delete: the one it removes), "from":
 * the old name of a rename, "mode": git's new mode when given}. NULL with
 * err when apply_patch would refuse the text (it then touches nothing).
 * cJSON_Delete it. */
TG_API struct cJSON *tg_patch_files(const char *text, size_t len, char *err,
                                    size_t errlen);

/* Where path leads from the absolute folder cwd (unused for an absolute
 * path) when a program opens or creates it, as the kernel walks it:
 * symlinks followed (a dangling one to where a create lands), `..`
 * applied to the real parent, names below a missing folder as written.
 * Only lstat and readlink. A malloc'd absolute path, or NULL with why: a
 * symlink loop, a component that is not a directory, a /proc/self link
 * (it names the files of whichever process opens it). */
TG_API char *tg_path_resolve(const char *cwd, const char *path, char *why,
                             size_t whylen);

/* ---- host tools and the version (issue 10) ----------------------------
 * What a host needs to serve tools of its own beside the policies' (the
 * Lua module's rt:tool is built on these): the version, whether a name is
 * taken, and for a running attempt its session and calls of other tools. */

/* The library's version, "major.minor.patch" (TG_VERSION when it was
 * built); static. */
TG_API const char *tg_version(void);

/* 1 when a call of `name` would find a tool now (a C tool, or one of the
 * current policy generation), else 0. */
TG_API int tg_tool_exists(tg_runtime *rt, const char *name);

/* The session of the attempt's call; NULL once the call has let go of the
 * attempt (a tool that could not be stopped and finishes late). */
TG_API const char *tg_exec_session(const tg_exec *ex);

/* Starts call `id` of `tool` with `args` (an object, borrowed; NULL: {})
 * from inside a running attempt, as a Lua tool's ctx.call does: through
 * the whole chain (rules, hooks, approval, retry), one level deeper than
 * the attempt's call (at most 8 levels: -ELOOP beyond), with its session
 * and turn and metadata {"parent_call": <the attempt's call id>}. done is
 * called once, maybe before this returns. Returns 0, or a negative code
 * with err (then done is not called): -ESRCH when the attempt has
 * finished, -EEXIST when a call with that id runs. By convention the id
 * is "<the attempt's call id>.<n>". */
TG_API int tg_exec_call(tg_exec *ex, const char *id, const char *tool,
                 const struct cJSON *args, tg_done_cb done, void *ud,
                 char err[TG_ERRMSG]);
/* Cancels call `id` started with tg_exec_call; only while the attempt
 * runs (before its tool finished it). Its done callback still comes. */
TG_API void tg_exec_call_cancel(tg_exec *ex, const char *id);

/* ---- JSON Schema ----------------------------------------------------------
 * The validator the chain checks tool args with, for hosts to use on their
 * own: draft 2020-12 (the default) and draft-07 (by "$schema"), every
 * keyword of both; `format` is an annotation only; `pattern` is ECMA-262
 * as PCRE2 runs it, every match bounded. docs/json-schema.md says
 * what exactly. A compiled schema is not changed by validating: any number
 * of threads may validate with one at once. */
typedef struct tg_schema tg_schema;

/* Compiles schema (copied: the caller keeps it). NULL with "schema at
 * $.path: what was wrong" in err: a keyword of the wrong JSON type, a
 * pattern that does not compile or is not ECMA-262, a keyword of the other
 * draft, an unknown $schema, a $ref to anything outside the schema (remote
 * references are refused, except the draft-07 meta-schema, which is built
 * in), a $ref loop that would never end. */
TG_API tg_schema *tg_schema_compile(const struct cJSON *schema, char err[TG_ERRMSG]);

/* 0 when value is valid; -EINVAL with "$.path.to[2].value: what failed"
 * (the first failure) in err; -ENOMEM. */
TG_API int tg_schema_validate(const tg_schema *s, const struct cJSON *value, char *err,
                       size_t errlen);

/* Every failure, up to max (0: 100), as a JSON array of {path, keyword,
 * message} ({"path": "$.a", "keyword": "type", "message": "expected
 * string, got number"}); an empty array when value is valid. NULL when out
 * of memory (or s or value is NULL). Caller frees with cJSON_Delete. */
TG_API struct cJSON *tg_schema_errors(const tg_schema *s, const struct cJSON *value, size_t max);

TG_API void tg_schema_free(tg_schema *s);

/* ---- storage -----------------------------------------------------------
 * One SQLite database (tg_config.db) holds the audit trail — one record
 * per call, whatever its end — remembered approvals and the usage ledger.
 * The runtime writes from a thread of its own in batched transactions;
 * with storage on, a call's outcome (its done callback, its call_end
 * event) is handed out only once its record is committed, so no answered
 * call is missing from the audit after a crash. Done then always comes
 * from the loop, even for a call refused at once. The file is opened in
 * WAL mode with synchronous=NORMAL and a busy timeout, so other processes
 * (`toolgate log --follow`, a second runtime) use it at the same time.
 * tg_runtime_new fails, naming the file and the problem, when the database
 * cannot be used: corrupt, locked, unwritable, or from a newer toolgate. */

/* Remembered approvals. An approve-always answer says what it covers
 * (tg_always_scope: the whole tool, these exact args, or a glob on one
 * named argument — the glob of tg_changes_subscribe, on the argument's
 * string value: `command` = "npm test*"; `*` stops at '/', `**` does
 * not), where
 * (the call's session, or the runtime's project: tg_config.project) and
 * until when (0: forever). Stored in the database, it is honoured by every
 * runtime on that file; with storage off it lasts as long as the runtime.
 * A remembered approval only turns an ask into an allow: a rule that
 * denies still denies. */
typedef enum {
  TG_WHERE_SESSION = 0,
  TG_WHERE_PROJECT
} tg_always_where;

typedef struct {
  tg_always_scope scope;
  const char *arg;            /* PATTERN: the argument's name */
  const char *glob;           /* PATTERN: what its value must match */
  tg_always_where where;
  int64_t until_ms;           /* ms since the epoch; 0: forever */
  /* a grant without a call only (`toolgate approvals grant`); an answer
   * takes them from its call: */
  const char *tool;
  const struct cJSON *args;          /* ARGS: the args (an object) */
  const char *session;        /* where SESSION: the session */
  const char *project;        /* where PROJECT: the folder; NULL: the cwd */
} tg_always_spec;

/* Answers an ask with approve-always as spec says (its tool, args,
 * session and project fields are ignored: they are the call's). -EINVAL
 * with err for a bad spec (a pattern without arg or glob, a malformed
 * glob, an until in the past, a pattern holding what the redactors mask);
 * -ENOENT as tg_approval_answer.
 * tg_approval_answer(..., TG_ANSWER_ALWAYS, scope, ...) is this with
 * where SESSION and until 0 (a PATTERN scope needs this function). */
TG_API int tg_approval_answer_always(tg_runtime *rt, uint64_t approval_id,
                              const tg_always_spec *spec,
                              char err[TG_ERRMSG]);

/* Usage ledger: what model calls cost, for budgets. Public with the chat
 * side (below): an embedder that calls a model outside tg_chat_begin /
 * tg_chat_end still has its cost counted by the budgets this way. */
typedef struct {
  const char *session;        /* NULL: the runtime's default session */
  int64_t turn;
  const char *model;          /* required */
  int64_t input_tokens, output_tokens;
  double cost;                /* in the budget's currency */
  int64_t ts_ms;              /* ms since the epoch; 0: now */
} tg_usage;

/* Records a model call's usage (never blocks): the budgets count it, and
 * it goes to the database's ledger with storage on (queued for the
 * writer), else to this runtime's memory. -EINVAL for a record without a
 * model or with negative counts. */
TG_API int tg_record_usage(tg_runtime *rt, const tg_usage *u, char err[TG_ERRMSG]);

/* ---- the chat side (issue 13) ------------------------------------------
 * Around the model calls of a conversation: a turn counter per session,
 * layers (before_chat, after_chat, before_tool, after_tool), model
 * routing, budgets over the usage of model calls, notifications and a
 * progress manager. docs/chat.md has the whole picture.
 * Public because toolgate never calls a model itself: the embedder that
 * does (an editor, an agent loop, the Lua module) is the only one who
 * knows when a turn begins and a model call starts and ends, and it is
 * the one who shows the notifications and progress to its user. */

/* The runtime's wall clock, in ms since the epoch: budgets' periods (which
 * roll at local midnight, Monday, the 1st, in the process's time zone),
 * model availability, notification expiry and usage timestamps all read
 * it. fn NULL: the system clock. For tests and replays. Setting it
 * expires the notifications the new time has passed. */
typedef int64_t (*tg_clock_fn)(void *ud);
TG_API void tg_runtime_set_clock(tg_runtime *rt, tg_clock_fn fn, void *ud);
TG_API int64_t tg_runtime_now(tg_runtime *rt);

/* Turns. A session's turn number rises by exactly one at each
 * tg_turn_begin (a user turn: the user said something), from 1, before any
 * layer of the turn runs; a turn_begin event {session, turn} tells it.
 * Calls of that session started with turn 0 carry the session's current
 * turn (call.turn, call_start, audit). session NULL: the runtime's
 * default. Returns the new turn (>= 1), or -ENOMEM. */
TG_API int64_t tg_turn_begin(tg_runtime *rt, const char *session);
/* The session's current turn; 0 before its first tg_turn_begin. */
TG_API int64_t tg_turn_current(tg_runtime *rt, const char *session);

/* What a model call cost (all optional: 0 / NULL). */
typedef struct {
  const char *model;          /* NULL: the chat's model */
  int64_t input_tokens, output_tokens;
  double cost;                /* in the currency budgets are counted in */
} tg_chat_usage;

/* One model call of a session: tg_chat_begin before it is sent,
 * tg_chat_end when its answer (or its error) is in. One chat is open per
 * session at a time. */
typedef struct {
  const char *session;        /* NULL: the runtime's default */
  const char *model;          /* the model it goes to (tg_route's choice) */
  const char *project;        /* what budgets scoped to a project count
                                 (usage.project); NULL: none */
  const struct cJSON *request; /* what layers see as ctx.request: an object
                                  or NULL; copied */
} tg_chat_request;

/* Runs the before_chat layers (C layers, then the policies' in
 * registration order) and emits chat_begin {session, turn, model}.
 * -EBUSY when the session has a chat open (end it first), -EINVAL for a
 * request that is not an object or too deep. */
TG_API int tg_chat_begin(tg_runtime *rt, const tg_chat_request *req,
                         char err[TG_ERRMSG]);

typedef struct {
  const char *session;        /* NULL: the runtime's default */
  int ok;                     /* the model answered */
  const char *error;          /* !ok: what went wrong (layers see it) */
  const tg_chat_usage *usage; /* NULL: nothing to record */
} tg_chat_result;

/* Closes the session's open chat: records usage (when given) in the usage
 * ledger, which feeds the budgets (their alerts come before this returns),
 * runs the after_chat layers (C, then policies, in registration order) and
 * emits chat_end {session, turn, model, ok, error?, usage?, duration_ms}.
 * -ENOENT when the session has no chat open; -EINVAL for a usage with
 * negative or non-finite numbers. */
TG_API int tg_chat_end(tg_runtime *rt, const tg_chat_result *res,
                       char err[TG_ERRMSG]);

/* Layers from C. A layer is four optional functions; each sees ctx (valid
 * during the call) and may fail by returning non-zero with a message in
 * err: the failure is a layer_error event {layer, where, error, session,
 * turn, tool?} and the next layer runs — a layer never stops a turn, a
 * chat or a call. Layers of a kind run in registration order, C layers
 * before the policies' (tg.before_chat / tg.after_chat). The tool layers
 * run once per call that reaches its tool (not for a call denied, aborted
 * or answered by a pre-hook): before_tool before the first attempt,
 * after_tool when the call ends (ok, or its error's message). A layer may
 * be added or removed from inside a layer: that takes effect from the
 * next round. */
typedef struct {
  const char *session;
  int64_t turn;
  const char *model;             /* chat layers: the chat's model */
  const char *project;           /* chat layers: the chat's project */
  const struct cJSON *request;   /* chat layers: tg_chat_request.request */
  const char *tool;              /* tool layers: the tool */
  const char *call_id;           /* tool layers: the call */
  int ok;                        /* after_*: 1 when it succeeded */
  const char *error;             /* after_*: the error text when !ok */
  const tg_chat_usage *usage;    /* after_chat: what was recorded, or NULL */
} tg_layer_ctx;

typedef int (*tg_layer_fn)(tg_runtime *rt, const tg_layer_ctx *ctx,
                           void *ud, char err[TG_ERRMSG]);

typedef struct {
  const char *name;              /* for layer_error's `where`; copied */
  tg_layer_fn before_chat, after_chat, before_tool, after_tool;
  void *ud;
} tg_layer;

/* Returns the layer's id (> 0), or -EINVAL (no function set) / -ENOMEM. */
TG_API int tg_layer_add(tg_runtime *rt, const tg_layer *layer,
                        char err[TG_ERRMSG]);
TG_API void tg_layer_remove(tg_runtime *rt, int id);

/* Model routing. The models configuration, a JSON object:
 *   {"routes":   {"light": "small-model", "heavy": "big-model"},
 *    "default":  "mid-model",
 *    "fallback": {"big-model": ["mid-model", "small-model"],
 *                 "*": ["mid-model"]}}
 * routes map a request's task_weight to a model; default is the model of a
 * request that names none and has no route; fallback lists, per model
 * ("*": any model), what to use instead, in order, while it is
 * unavailable. Copied; NULL clears it. -EINVAL with what is wrong. */
TG_API int tg_runtime_set_models(tg_runtime *rt, const struct cJSON *models,
                                 char err[TG_ERRMSG]);

/* Routes a model request {requested_model?, task_weight?, context?,
 * session?}: the routing table gives the baseline (routes[task_weight],
 * else requested_model, else default); each tg.route_model hook of the
 * policies may then change selected_model and reason, in registration
 * order; then, when the selected model is unavailable, the first
 * available model of its fallback list replaces it. Returns the decision
 * {requested_model, selected_model, reason, task_weight, context, session,
 * baseline {selected_model, reason} (the routing table's), hooks_run,
 * hooks [{where, from, to, reason}] (each hook that changed it), errors
 * [{where, error}], fallback? {from, to (null: none available), reason},
 * available}, emitted as a route event; a hook that raises, overruns or
 * leaves a bad decision is skipped, in errors and a layer_error event. NULL with err
 * for a malformed request, or when no model is selected at all. Caller
 * frees with cJSON_Delete. */
TG_API struct cJSON *tg_route(tg_runtime *rt, const struct cJSON *request,
                              char err[TG_ERRMSG]);

/* Marks a model unavailable until until_ms (runtime clock, ms since the
 * epoch); fallback routes around it until then. until_ms <= now: it is
 * available again at once. */
TG_API int tg_model_unavailable(tg_runtime *rt, const char *model,
                                int64_t until_ms, char err[TG_ERRMSG]);

/* Budgets are declared by policies (tg.budget{...}). Their status: {name,
 * spent, limit, percent, level ("ok", "info", "warning", "critical",
 * "exceeded"), period, period_start, resets_at (null for "session" and
 * "total"), session?}. session: for a budget of period "session", whose
 * (NULL: the default). NULL with err for an unknown budget. Caller frees
 * with cJSON_Delete. */
TG_API struct cJSON *tg_budget_status(tg_runtime *rt, const char *name,
                                      const char *session,
                                      char err[TG_ERRMSG]);
/* Every budget's status, in declaration order (a JSON array). */
TG_API struct cJSON *tg_budgets(tg_runtime *rt);

/* Notifications: short messages for the user (a budget alert, a policy's
 * tg.notify), kept in a list of at most TG_NOTIFY_MAX (the oldest dropped)
 * until dismissed or, with a duration, expired. Every front shows them its
 * own way (the CLI on stderr). */
#define TG_NOTIFY_MAX 32
/* Longer titles (and action labels, sources) and messages (and action
 * commands) are cut there, on a character boundary, and end in "…". */
#define TG_NOTIFY_TITLE_MAX 256
#define TG_NOTIFY_MESSAGE_MAX 4096
typedef enum {
  TG_NOTIFY_INFO = 0,
  TG_NOTIFY_SUCCESS,
  TG_NOTIFY_WARNING,
  TG_NOTIFY_ERROR
} tg_notify_level;

TG_API const char *tg_notify_level_name(tg_notify_level level);

typedef struct {
  tg_notify_level level;
  const char *title;          /* required */
  const char *message;        /* may be NULL */
  uint64_t duration_ms;       /* 0: until dismissed (or dropped) */
  const char *action_label;   /* an optional action: a label for a button */
  const char *action_command; /* and a command for the front to run */
  const char *source;         /* who sent it ("policies/x.lua:3", "budget
                                 daily"); NULL: "host" */
} tg_notification;

/* Shows a notification: a `notification` event, then the subscribers.
 * Returns its id (> 0), or -EINVAL (no title, bad level) / -ENOMEM. */
TG_API int64_t tg_notify(tg_runtime *rt, const tg_notification *n,
                         char err[TG_ERRMSG]);
/* -ENOENT when no notification in the list has that id. */
TG_API int tg_notify_dismiss(tg_runtime *rt, int64_t id);
/* The list, oldest first: [{id, level, title, message?, duration_ms?,
 * expires_at?, action? {label, command?}, source, created_at}]. */
TG_API struct cJSON *tg_notifications(tg_runtime *rt);

/* Told of every change: change is "shown", "dismissed", "expired" or
 * "dropped" (pushed out by a newer one); notification is the one that
 * changed, list the list after the change. */
typedef void (*tg_notify_cb)(tg_runtime *rt, const char *change,
                             const struct cJSON *notification,
                             const struct cJSON *list, void *ud);
TG_API int tg_notify_subscribe(tg_runtime *rt, tg_notify_cb cb, void *ud);
TG_API void tg_notify_unsubscribe(tg_runtime *rt, int id);

/* The progress manager: named items of work in progress, for every front
 * to draw (a spinner, a progress bar, an MCP progress notification).
 * Running calls that report progress (exec's output, a Lua tool's
 * ctx.progress, tg_exec_progress) appear as items "call:<id>",
 * cancellable (a cancel cancels the call), and leave when the call ends. */
typedef enum {
  TG_PROGRESS_INDETERMINATE = 0, /* it runs: no idea how far it is */
  TG_PROGRESS_DETERMINATE,       /* current of total (percent) */
  TG_PROGRESS_STEPS              /* step current of total, each labelled */
} tg_progress_kind;

typedef void (*tg_progress_cancel_fn)(tg_runtime *rt, const char *id,
                                      void *ud);

typedef struct {
  const char *id;             /* unique among running items; required */
  const char *label;          /* what it is ("Indexing src/") */
  tg_progress_kind kind;
  double total;               /* DETERMINATE, STEPS: > 0 */
  tg_progress_cancel_fn cancel; /* NULL: not cancellable */
  void *ud;
} tg_progress_spec;

/* -EEXIST when an item with that id runs; -EINVAL for a bad spec. */
TG_API int tg_progress_start(tg_runtime *rt, const tg_progress_spec *spec,
                             char err[TG_ERRMSG]);
/* Moves an item: current (DETERMINATE: of total; STEPS: the step number,
 * from 1; ignored for INDETERMINATE) and message (STEPS: the step's
 * label; may be NULL: unchanged). -ENOENT for an unknown id. */
TG_API int tg_progress_update(tg_runtime *rt, const char *id, double current,
                              const char *message);
/* Ends an item: done, or failed with a message; it leaves the list. */
TG_API int tg_progress_done(tg_runtime *rt, const char *id);
TG_API int tg_progress_fail(tg_runtime *rt, const char *id,
                            const char *message);
/* Asks a cancellable item to stop (its cancel function runs; the item
 * stays until its owner ends it). -ENOENT unknown, -ENOTSUP not
 * cancellable. */
TG_API int tg_progress_cancel(tg_runtime *rt, const char *id);
/* The running items, oldest first: [{id, label, kind, current?, total?,
 * percent?, step?, steps?, message?, cancellable, cancel_requested?,
 * call_id?, started_at, elapsed_ms}]. */
TG_API struct cJSON *tg_progress_list(tg_runtime *rt);

/* Told of every change: change is "start", "update", "done", "fail" or
 * "cancel"; item the item as it is now (state "running", "done" or
 * "failed"), list the running items after the change. */
typedef void (*tg_progress_cb)(tg_runtime *rt, const char *change,
                               const struct cJSON *item,
                               const struct cJSON *list, void *ud);
TG_API int tg_progress_subscribe(tg_runtime *rt, tg_progress_cb cb, void *ud);
TG_API void tg_progress_unsubscribe(tg_runtime *rt, int id);

/* ---- agent hooks (issue 14) --------------------------------------------
 * A coding agent's hook event — Claude Code's or Codex's JSON on the
 * stdin of the hook command it runs before and after each tool call —
 * answered from the policies: the agent's tool call is mapped onto
 * toolgate's (Bash -> exec, Edit -> apply_patch, mcp__s__t -> s__t, ...:
 * the Lua tables toolgate.agents.*, which policies may extend) and run
 * through the chain without its tool (nothing runs here): before
 * the tool (PreToolUse, PermissionRequest) the rules, the pre-hooks and
 * the rules again after a rewrite; after it (PostToolUse,
 * PostToolUseFailure) the post-hooks on the agent's own result. The
 * answer is in the agent's own format. docs/agent-hooks.md has the
 * mapping, the answers and the fail-safe rules. */

/* The largest hook event read, in bytes. */
#define TG_HOOK_MAX_EVENT (16u << 20)

typedef struct {
  const char *agent;       /* "claude-code", "codex", ... (an agent's
                              name or alias: tg_hook_agent_known) */
  const char *event;       /* the event's JSON text, as the agent wrote it */
  size_t event_len;
  const char *on_error;    /* the answer when nothing can judge (a
                              malformed event, a policy error): "deny"
                              (NULL), "ask" or "allow" */
  int toolgate_defaults;   /* 1: a verdict no rule made (the default) is
                              said to the agent as toolgate's; 0: left to
                              the agent's own permission flow */
  int64_t turn;            /* the session's turn, for the call (0: none) */
  uint64_t deadline_ms;    /* how long the tools policies run for the
                              model's context may take (0: 10000); they
                              are cancelled then, their output so far kept */
  const char *event_name;  /* the agent's name of the event, for an agent
                              whose payload does not carry it (the
                              installed line's --event NAME); NULL */
} tg_hook_request;

/* What the hook command prints and how it exits. */
typedef struct {
  int exit_code;           /* 0, or 2 (a blocking error, see message) */
  char *output;            /* stdout: "" or one JSON line (with \n) */
  char *message;           /* stderr: NULL or one line (with \n) */
} tg_hook_result;

typedef void (*tg_hook_done_cb)(tg_runtime *rt, const tg_hook_result *res,
                                void *ud);

/* Answers one hook event with the current generation. done is called
 * exactly once — usually before this returns (an event answered by rules
 * and hooks alone) — with the answer; a malformed event or a policy error
 * is answered as req->on_error says, with the reason in message. Returns
 * 0, or -EINVAL (an unknown agent or on_error, no done) with err; then
 * done is not called. */
TG_API int tg_hook_answer(tg_runtime *rt, const tg_hook_request *req,
                          tg_hook_done_cb done, void *ud,
                          char err[TG_ERRMSG]);

/* What toolgate makes of one hook event (`toolgate explain --event`), as
 * a new JSON object: {agent, agent_detected, event, agent_tool, call:
 * {tool, args, read_only, mapped, names, paths} (the mapped call; or
 * mapping_error), explain (tg_explain's dry run of it, before the tool;
 * or explain_error), judged: {outcome, tool, args, rewritten,
 * short_result, remembered, fail_safe, context_calls} (what the chain saw
 * answering it), answer: {exit_code, output (the JSON the agent reads, or
 * null), message}}. The answer is tg_hook_answer's, from the same code,
 * so runtime should record nothing (a runtime without a database): the
 * rules and pre-hooks run as they do for the agent, the tools policy
 * code asks to run for the model's context are listed, not run. agent
 * NULL: detected (tg_hook_detect_agent). NULL with err for an unknown
 * agent, or one that cannot be told ("give --agent NAME"). */
TG_API struct cJSON *tg_hook_explain(tg_runtime *rt, const tg_hook_request *req,
                                     char err[TG_ERRMSG]);
/* The agent whose hook wrote the event text: the one its toolgate_agent
 * names (toolgate's OpenCode plugin sends it); "codex" when it has a
 * turn_id, "cursor" a conversation_id; else the first agent
 * (claude-code, codex, gemini, copilot, ...) with an event of its
 * hook_event_name — NULL when that is Claude Code's name and the event
 * has neither transcript_path nor permission_mode (Claude Code's or
 * OpenCode's: the caller must be told which); with no name, one whose
 * payloads do not name their event when it has their keys (copilot:
 * sessionId, toolName); else (not JSON) "claude-code". */
TG_API const char *tg_hook_detect_agent(const char *event, size_t len);

/* The fail-safe answer, without a runtime (no Lua, no policies): what
 * on_error says for an event named event (NULL: the event could not be
 * read), with why as the reason. Fills out (free with
 * tg_hook_result_free); -EINVAL for an unknown agent, -ENOMEM. */
TG_API int tg_hook_fallback(const char *agent, const char *event,
                            const char *on_error, const char *why,
                            tg_hook_result *out);
TG_API void tg_hook_result_free(tg_hook_result *r);

/* 1 when agent is one `toolgate hook` speaks for, else 0. */
TG_API int tg_hook_agent_known(const char *agent);
/* 1 when on_error is NULL, "deny", "ask" or "allow", else 0. */
TG_API int tg_hook_on_error_known(const char *on_error);
/* 1 when toolgate answers or records the hook event named event
 * (PreToolUse, PermissionRequest, PostToolUse, PostToolUseFailure,
 * UserPromptSubmit, Stop, SubagentStop, SessionStart, SessionEnd), else 0:
 * an event `toolgate hook` passes over without loading anything. */
TG_API int tg_hook_event_known(const char *event);

/* The client side of the control socket's hook request (the one a
 * resident instance answers with tg_hook_answer): sends req to the
 * instance listening on socket_path and fills out with its answer.
 * Blocks up to timeout_ms (0: 10 s); no Lua, no policies. -ENOENT or
 * -ECONNREFUSED: no instance listens there; -ETIMEDOUT; -EPROTO: the
 * reply is not understood. */
TG_API int tg_hook_remote(const char *socket_path, const tg_hook_request *req,
                          tg_hook_result *out, uint64_t timeout_ms,
                          char err[TG_ERRMSG]);

#ifdef __cplusplus
}
#endif
#endif
