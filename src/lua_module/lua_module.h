/*
 * lua_module.h — what the parts of the Lua host module share: the module
 * behind `require "toolgate"` (toolgate.so), a runtime in-process for
 * scripts, editor plugins and the specs. Reference: lua/README.md. The
 * policy side of the same name lives in src/policy/api.c, inside each
 * generation's own lua_State. One file per concern: module.c (luaopen),
 * runtime.c (the runtime object: new, close, the loop, entering and
 * leaving), new_options.c (toolgate.new's options), options.c and box.c
 * (reading the host's arguments, the JSON box), calls.c, events.c,
 * approvals.c, policies.c, attach.c (a host's luv loop), store.c and
 * sessions.c (storage), schema.c, the host tools (tools.c, tool_run.c,
 * tool_ctx.c; tool.h) and the chat side (chat.c, chat_layers.c, notify.c;
 * chat.h). Each lists its methods in a luaL_Reg table of its own.
 *
 * Callbacks (on_done, on_progress, on_event, the approver) run only while
 * the host is inside one of our functions (rt:run, rt:run_once,
 * handle:wait, rt:call, rt:answer, ...), on the host thread that called it:
 * we remember that thread in `cur_L` for the duration. A callback that
 * raises stops the loop and the error is raised again from the function
 * the host called, so errors are never lost and never abort the process.
 *
 * Ownership, so that a raise at any point (a bad option, out of memory, an
 * error from a callback) leaks nothing and leaves nothing half-done:
 *   - every option is checked before anything is taken; option tables are
 *     copied raw into a private table first, so no __index runs and every
 *     string we hand to C stays anchored on our stack;
 *   - cJSON values built on the way live in a json_box userdata until C
 *     takes them: the box's __gc frees them if we never get that far;
 *   - what a running call needs (its handle, on_done, on_progress) is one
 *     entry of the runtime's `calls` table, not registry references: the
 *     call's end, or closing the runtime, drops it whole;
 *   - code the runtime's C calls back runs under a protected call
 *     (tg__lm_protect), so no raise ever unwinds through the runtime's
 *     frames;
 *   - the runtime's state is C memory (lrt) the userdata points at: a
 *     runtime collected while the host is inside handle:wait() is closed
 *     when that outermost call returns, not under its feet.
 */
#ifndef TG_LUA_MODULE_H
#define TG_LUA_MODULE_H

#include <stddef.h>
#include <stdint.h>
#include "lua/luacompat.h"
#include <cjson/cJSON.h>
#include "toolgate.h"
#include "kit/kit.h"

#define RT_MT "toolgate.runtime"
#define CALL_MT "toolgate.call"
#define BOX_MT "toolgate.json_box"

/* The positions in a running call's entry of the `calls` table. */
enum { ENTRY_HANDLE = 1, ENTRY_ON_DONE, ENTRY_ON_PROGRESS };

/* The runtime object (runtime.c). */
typedef struct lrt {
  tg_runtime *rt;
  lua_State *cur_L;  /* the host thread inside our API right now */
  int state_ref;     /* registry: {handlers, calls, file_handlers, approver} */
  int err_ref;       /* a registry slot reserved by toolgate.new for the
                        first error a callback raised: storing into an
                        existing slot never allocates, so never raises */
  int has_err;
  int close_pending; /* collected while the host was inside our API */
  int sub_id;        /* our C event subscription (0: none yet) */
  int next_handler;
  int change_sub;    /* our tg_changes_subscribe("**") (0: none yet) */
  int next_file_handler;
  unsigned long long next_id; /* for calls the host does not name */
  size_t max_args_bytes;      /* applied to table args as they convert */
  int attached;      /* rt:attach: state.attach holds arm/stop/defer */
  int deferring;     /* rt:attach{schedule = fn}: callbacks go through it */
} lrt;

/* The runtime userdata: NULL once closed. */
typedef struct {
  lrt *r;
} lrt_box;

/* A call's handle (calls.c). */
typedef struct {
  lrt *owner;        /* NULL once the call ended or the runtime closed */
  char id[128];
  int done;
  int outcome_ref;   /* from the end until the handle is collected */
  char *refused;     /* while tg_call_start runs: where the message of a
                        call refused at once (an unknown tool) goes */
  int was_refused;   /* it was: rt:call returns nil, message, code */
} lcall;

/* cJSON values built before C takes them (see the top comment; box.c). */
typedef struct {
  cJSON *j[3];
} json_box;

/* An answer's options: what an always covers, and the guidance
 * (approvals.c). */
typedef struct {
  tg_always_spec spec;
  int full;             /* a pattern, the project or an until: only
                           tg_approval_answer_always says those */
  const char *guidance;
} lanswer;

/* What the approver is asked, and how it went (approvals.c, attach.c). */
typedef struct {
  lrt *r;
  const tg_approval_request *q;
  int answered;
  int failed;        /* the approver raised or answered badly */
} approver_arg;

/* The runtime's methods, one table per concern; module.c puts them all
 * in the runtime's metatable. */
extern const luaL_Reg tg__lm_runtime_methods[];
extern const luaL_Reg tg__lm_call_methods[];
extern const luaL_Reg tg__lm_event_methods[];
extern const luaL_Reg tg__lm_approval_methods[];
extern const luaL_Reg tg__lm_policy_methods[];
extern const luaL_Reg tg__lm_store_methods[];
extern const luaL_Reg tg__lm_session_methods[];
extern const luaL_Reg tg__lm_chat_methods[];
extern const luaL_Reg tg__lm_layer_methods[];
extern const luaL_Reg tg__lm_notify_methods[];
extern const luaL_Reg tg__lm_taint_methods[];   /* taint.c */

/* ---- options.c: reading the host's arguments, answering failures ---- */

/* Is the value at idx exactly the string `want` (no NUL tricks)? */
int tg__lm_is_str(lua_State *L, int idx, const char *want);
/* Copies the option table at idx raw into a new table on the stack and
 * returns its index (0 for nil); an option not in names raises. */
int tg__lm_copy_opts(lua_State *L, int idx, const char *fn,
                     const char *const *names);
/* Pushes opts[k] of the copy at o (nil when there are no options);
 * returns its type. */
int tg__lm_get_opt(lua_State *L, int o, const char *k);
/* Returns nil, err, code (pushed). */
int tg__lm_fail(lua_State *L, const char *err, const char *code);
/* The errno name of a negative code from the C API ("EINVAL"). */
const char *tg__lm_errno_name(int rc, char *buf, size_t len);
/* true, or nil, err, errno name of rc (< 0). */
int tg__lm_ok_or_fail(lua_State *L, int rc, const char *err);
/* An optional string argument without NUL bytes (NULL for nil). */
const char *tg__lm_opt_str_arg(lua_State *L, int idx, const char *fn,
                               const char *what);
/* The string option k of fn in the copied options at o (NULL when absent
 * or there are no options); raises for another type or a NUL byte. */
const char *tg__lm_opt_string(lua_State *L, int o, const char *fn,
                              const char *k);
/* A table at idx as a JSON object (NULL for nil); raises otherwise. */
cJSON *tg__lm_object_arg(lua_State *L, int idx, const char *fn,
                         const char *what);
/* The table at idx as a JSON object (max_bytes: 0 for no limit), or NULL
 * with "<what>: why" in err. The caller owns the result. */
cJSON *tg__lm_object_of(lua_State *L, int idx, size_t max_bytes,
                        const char *what, char *err);

/* ---- box.c: the JSON box ---- */

/* The box's metatable (luaopen). */
void tg__lm_box_open(lua_State *L);
/* A new empty box, left on the stack. */
json_box *tg__lm_new_box(lua_State *L);
/* Frees what the box holds. */
void tg__lm_box_clear(json_box *b);
/* A JSON box on the stack with one empty slot: what is put there is freed
 * by the box's __gc if a raise comes first (leave may raise). */
cJSON **tg__lm_box(lua_State *L);
/* Pushes the value a box's slot holds and empties the slot; raises
 * "fn: out of memory" for an empty one. */
int tg__lm_push_slot(lua_State *L, cJSON **slot, const char *fn);

/* ---- runtime.c: the runtime object, entering and leaving ---- */

/* The runtime at idx (raises when it is not one, or is closed). */
lrt *tg__lm_check_rt(lua_State *L, int idx);
tg_runtime *tg__lm_runtime(lrt *r);
/* The host thread inside one of the module's functions right now, on
 * which callbacks run; NULL when the host is not (the runtime closing). */
lua_State *tg__lm_thread(lrt *r);
/* Drops a registry reference (LUA_NOREF: none). */
void tg__lm_unref(lua_State *L, int *ref);
/* Pushes the runtime's private table's field (nil when unset). */
void tg__lm_state(lua_State *L, lrt *r, const char *field);
/* Pushes the runtime's private table `field`, made on first use; it lives
 * as long as the runtime. */
void tg__lm_push_state(lua_State *L, lrt *r, const char *field);
/* Keeps the error on top (popped) if it is the first since the host
 * entered, and stops the loop so it is raised soon. */
void tg__lm_keep_error(lrt *r, lua_State *L);
/* For methods that may run host code: entering the runtime remembers the
 * calling thread for callbacks; leaving restores it and, outermost,
 * raises what a callback raised (and closes a runtime collected
 * meanwhile: r is then freed). */
lua_State *tg__lm_enter(lrt *r, lua_State *L);
void tg__lm_leave(lrt *r, lua_State *L, lua_State *prev);
/* Raises when the host is inside a callback: libuv's loop is not
 * re-entrant. */
void tg__lm_refuse_in_callback(lua_State *L, lrt *r, const char *fn);
/* Runs body(arg) protected on L (a raise is kept and re-raised on leave);
 * 0, or -1 when body raised. */
int tg__lm_protect(lrt *r, lua_State *L, lua_CFunction body, void *arg);
/* Calls the host function below nargs arguments inside such a body; an
 * error it raises is kept, prefixed with what it was, and nres nils stand
 * for its results. 0, or -1 when it raised. */
int tg__lm_callback(lrt *r, lua_State *L, int nargs, int nres,
                    const char *what);
/* toolgate.new{...} -> rt | nil, err; the runtime userdata's __gc. */
int tg__lm_new(lua_State *L);
int tg__lm_gc(lua_State *L);

/* ---- new_options.c: toolgate.new's options ---- */

/* Reads every option of the copy at o (0: none) into cfg, before
 * anything is taken: raises for a bad one. */
void tg__lm_read_config(lua_State *L, int o, tg_config *cfg);
/* The names toolgate.new takes. */
extern const char *const tg__lm_new_opt_names[];

/* ---- approvals.c ---- */

/* "allow" / "deny" as an approve mode; -1 for anything else. */
int tg__lm_approve_mode(lua_State *L, int idx);
void tg__lm_raise_bad_approver(lua_State *L, const char *fn, int idx);
/* approve = the value at idx: a function(request) or a mode. */
void tg__lm_set_approver(lua_State *L, lrt *r, int idx, const char *fn);
/* The fields of an options table (copied at o) into a; -1 for a bad one
 * (why in err when there is more to say). */
int tg__lm_answer_fields(lua_State *L, int o, lanswer *a, char *err);
/* Pushes the approval request as the approver receives it. */
void tg__lm_push_request(lua_State *L, const tg_approval_request *q);
/* What an answer may be, for messages. */
extern const char *const tg__lm_answer_usage;

/* ---- attach.c: a host's luv loop turns the runtime ---- */

/* Adds attach and detach to the methods table on top. */
void tg__lm_add_attach_methods(lua_State *L);
/* After an outermost call into the runtime: the host's timer follows
 * rt:timeout() again. */
void tg__lm_rearm(lrt *r, lua_State *L);
/* Stops and closes the luv handles. */
void tg__lm_detach_now(lrt *r, lua_State *L);
/* tg__lm_callback with schedule: fn and its nargs arguments on top are
 * handed to it. */
int tg__lm_defer_callback(lrt *r, lua_State *L, int nargs, const char *what);
/* The approver with schedule (a protected body taking approver_arg). */
int tg__lm_defer_approver_body(lua_State *L);

/* ---- store.c: what storage methods share (sessions.c) ---- */

/* The runtime's store, or pushes nil, "storage is off", code (NULL). */
tg_store *tg__lm_store_of(lua_State *L, lrt *r);
/* Options of fn: a whole number >= 0, a time (ms since the epoch or what
 * tg_time_parse takes; dir as there). */
int64_t tg__lm_sopt_int(lua_State *L, int o, const char *fn, const char *k,
                        int64_t dflt);
int64_t tg__lm_sopt_time(lua_State *L, int o, const char *fn, const char *k,
                         int dir);
/* Pushes the JSON j (freed), or nil, err, "EIO" when j is NULL. */
int tg__lm_push_json_result(lua_State *L, cJSON *j, const char *err);

/* ---- the rest of luaopen_toolgate's parts ---- */

/* The handle's metatable (calls.c). */
void tg__lm_calls_open(lua_State *L);
/* toolgate.schema on the module table on top (schema.c). */
void tg__lm_schema_open(lua_State *L);
/* toolgate.new's `models` option (the copied options at o, 0: none)
 * applied to a new runtime; raises on a bad one (chat.c). */
void tg__lm_chat_new(lua_State *L, lrt *r, int o);
/* rt:tool{...} (tools.c). */
int tg__lm_tool(lua_State *L);

#endif
