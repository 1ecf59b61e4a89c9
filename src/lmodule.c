/*
 * lmodule.c — the host side of `require "toolgate"`: a runtime in-process
 * for scripts, editor plugins and the specs (SPEC §4). Reference:
 * lua/toolgate.md. The policy side of the same name lives in
 * src/policy/api.c, inside each generation's own lua_State.
 *
 * Callbacks (on_done, on_progress, on_event, the approver) run only while
 * the host is inside one of our functions (rt:run, rt:run_once,
 * handle:wait, rt:call, rt:answer, ...), on the host thread that called it:
 * we remember that thread in `cur_L` for the duration. A callback that
 * raises stops the loop and the error is raised again from the function
 * the host called, so errors are never lost and never abort the process.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/glob.h"
#include "base/luacompat.h"
#include "policy/luajson.h"
#include "policy/luaoutcome.h"
#include "toolgate.h"

#define RT_MT "toolgate.runtime"
#define CALL_MT "toolgate.call"

typedef struct {
  tg_runtime *rt;
  lua_State *cur_L;  /* the host thread inside our API right now */
  int state_ref;     /* registry: {handlers={}, calls={}, approver=fn} */
  int err_ref;       /* first error raised by a callback, or LUA_NOREF */
  int sub_id;        /* our C event subscription (0: none yet) */
  int next_handler;
  int change_sub;    /* our tg_changes_subscribe("**") (0: none yet) */
  int next_file_handler;
  unsigned long long next_id; /* for calls the host does not name */
  size_t max_args_bytes;      /* applied to table args as they convert */
} lrt;

typedef struct {
  lrt *owner;        /* NULL once the runtime is closed */
  char id[128];
  int done;
  int anchor_ref;    /* keeps the handle alive while the call runs */
  int outcome_ref;
  int on_done_ref, on_progress_ref;
} lcall;

/* ---- entering and leaving ---------------------------------------------- */

static lrt *check_rt(lua_State *L, int idx) {
  lrt *r = luaL_checkudata(L, idx, RT_MT);
  if (!r->rt) luaL_error(L, "toolgate: this runtime is closed");
  return r;
}

/* Remembers the calling thread; returns the previous one to restore. */
static lua_State *enter(lrt *r, lua_State *L) {
  lua_State *prev = r->cur_L;
  r->cur_L = L;
  return prev;
}

/* Restores the previous thread and raises a callback's error, if any. */
static void leave(lrt *r, lua_State *L, lua_State *prev) {
  r->cur_L = prev;
  if (r->err_ref == LUA_NOREF || prev) return; /* outermost entry raises */
  lua_rawgeti(L, LUA_REGISTRYINDEX, r->err_ref);
  luaL_unref(L, LUA_REGISTRYINDEX, r->err_ref);
  r->err_ref = LUA_NOREF;
  lua_error(L);
}

/* libuv's loop is not re-entrant: a callback may start calls, cancel
 * them or answer approvals, but not run the loop (or close the runtime,
 * which runs it) — that is for the code that called rt:run / wait. */
static void refuse_in_callback(lua_State *L, lrt *r, const char *fn) {
  if (r->cur_L)
    luaL_error(L, "toolgate: %s cannot be used inside a callback (on_done, "
                  "on_progress, on_event, the approver); call it after "
                  "rt:run() or handle:wait() returns", fn);
}

/* Calls the function below nargs arguments; records an error. */
static void callback(lrt *r, lua_State *L, int nargs, int nres,
                     const char *what) {
  if (lua_pcall(L, nargs, nres, 0) == LUA_OK) return;
  const char *m = lua_tostring(L, -1);
  lua_pushfstring(L, "toolgate: error in %s callback: %s", what,
                  m ? m : "(non-string error)");
  lua_remove(L, -2);
  if (r->err_ref == LUA_NOREF) r->err_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  else lua_pop(L, 1);
  uv_stop(tg_runtime_loop(r->rt));
  for (int i = 0; i < nres; i++) lua_pushnil(L);
}

static void push_state(lua_State *L, lrt *r, const char *field) {
  lua_rawgeti(L, LUA_REGISTRYINDEX, r->state_ref);
  lua_getfield(L, -1, field);
  lua_remove(L, -2);
}

/* ---- outcomes ------------------------------------------------------------ */

static void set_str(lua_State *L, const char *k, const char *v) {
  if (!v) return;
  lua_pushstring(L, v);
  lua_setfield(L, -2, k);
}

static void unref(lua_State *L, int *ref) {
  if (*ref != LUA_NOREF) luaL_unref(L, LUA_REGISTRYINDEX, *ref);
  *ref = LUA_NOREF;
}

static void forget_call(lua_State *L, lrt *r, const char *id) {
  push_state(L, r, "calls");
  lua_pushnil(L);
  lua_setfield(L, -2, id);
  lua_pop(L, 1);
}

static void done_cb(tg_runtime *rt, const tg_outcome *o, void *ud) {
  lcall *c = ud;
  lrt *r = c->owner;
  c->done = 1;
  if (!r || !r->cur_L) return; /* closing: l_close drops the refs */
  lua_State *L = r->cur_L;
  tg_push_outcome(L, o);
  c->outcome_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  forget_call(L, r, c->id);
  if (c->on_done_ref != LUA_NOREF) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, c->on_done_ref);
    lua_rawgeti(L, LUA_REGISTRYINDEX, c->outcome_ref);
    callback(r, L, 1, 0, "on_done");
  }
  unref(L, &c->on_done_ref);
  unref(L, &c->on_progress_ref);
  unref(L, &c->anchor_ref); /* last: the handle may be collected after */
}

/* ---- events ---------------------------------------------------------------- */

static void deliver_progress(lrt *r, lua_State *L, const tg_event *ev) {
  push_state(L, r, "calls");
  lua_getfield(L, -1, ev->call_id);
  lua_remove(L, -2);
  lcall *c = lua_touserdata(L, -1);
  lua_pop(L, 1);
  if (!c || c->on_progress_ref == LUA_NOREF) return;
  lua_rawgeti(L, LUA_REGISTRYINDEX, c->on_progress_ref);
  tg_json_push(L, ev->data);
  callback(r, L, 1, 0, "on_progress");
}

static void event_cb(tg_runtime *rt, const tg_event *ev, void *ud) {
  lrt *r = ud;
  lua_State *L = r->cur_L;
  if (!L) return; /* events during close: nobody is listening */
  if (ev->call_id && strcmp(ev->type, "progress") == 0)
    deliver_progress(r, L, ev);
  push_state(L, r, "handlers");
  int t = lua_gettop(L);
  lua_pushnil(L);
  while (lua_next(L, t)) { /* value: {fn, type} */
    lua_rawgeti(L, -1, 2);
    const char *want = lua_tostring(L, -1);
    int match = !want || strcmp(want, ev->type) == 0;
    lua_pop(L, 1);
    if (match) {
      lua_rawgeti(L, -1, 1);
      tg_json_push(L, ev->data);
      callback(r, L, 1, 0, "on_event");
    }
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
}

static void ensure_subscribed(lrt *r) {
  if (!r->sub_id) r->sub_id = tg_events_subscribe(r->rt, event_cb, r);
}

/* Adds {fn, filter} (filter: an event type or a glob; 0: none) to the
 * state's list `list` under a new id, and returns the id. */
static int add_handler(lua_State *L, lrt *r, const char *list, int fn,
                       int filter, int *counter) {
  push_state(L, r, list);
  lua_createtable(L, 2, 0);
  lua_pushvalue(L, fn);
  lua_rawseti(L, -2, 1);
  if (filter) {
    lua_pushvalue(L, filter);
    lua_rawseti(L, -2, 2);
  }
  int id = ++*counter;
  lua_rawseti(L, -2, id);
  lua_pushinteger(L, id);
  return 1;
}

/* rt:off_x(id): drops the handler from the state's list `list`. */
static int remove_handler(lua_State *L, const char *list) {
  lrt *r = check_rt(L, 1);
  lua_Integer id = luaL_checkinteger(L, 2);
  push_state(L, r, list);
  lua_pushnil(L);
  lua_rawseti(L, -2, (int)id);
  return 0;
}

/* rt:on_event([type,] fn) -> id */
static int l_on_event(lua_State *L) {
  lrt *r = check_rt(L, 1);
  int fi = lua_isfunction(L, 2) ? 2 : 3;
  if (fi == 3) luaL_checkstring(L, 2);
  luaL_checktype(L, fi, LUA_TFUNCTION);
  ensure_subscribed(r);
  return add_handler(L, r, "handlers", fi, fi == 3 ? 2 : 0,
                     &r->next_handler);
}

static int l_off_event(lua_State *L) {
  return remove_handler(L, "handlers");
}

/* ---- file changes ------------------------------------------------------------ */

/* One C subscription for every path; each handler's glob is matched here,
 * handlers in registration order. */
static void change_cb(tg_runtime *rt, const tg_file_change *ch, void *ud) {
  lrt *r = ud;
  lua_State *L = r->cur_L;
  if (!L) return; /* closing */
  push_state(L, r, "file_handlers");
  int t = lua_gettop(L);
  for (int id = 1; id <= r->next_file_handler; id++) {
    lua_rawgeti(L, t, id);                        /* {fn, glob} or nil */
    if (lua_istable(L, -1)) {
      lua_rawgeti(L, -1, 2);
      int match = tg_glob_match(lua_tostring(L, -1), ch->path);
      lua_pop(L, 1);
      if (match) {
        lua_rawgeti(L, -1, 1);
        tg_json_push(L, ch->json);
        callback(r, L, 1, 0, "on_file_change");
      }
    }
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
}

/* rt:on_file_change(glob, fn) -> id */
static int l_on_file_change(lua_State *L) {
  lrt *r = check_rt(L, 1);
  const char *glob = luaL_checkstring(L, 2);
  luaL_checktype(L, 3, LUA_TFUNCTION);
  char why[TG_ERRMSG];
  if (tg__glob_check(glob, why, sizeof why) < 0)
    return luaL_error(L, "rt:on_file_change: %s", why);
  if (!r->change_sub) r->change_sub = tg_changes_subscribe(r->rt, "**", change_cb, r);
  if (r->change_sub < 0) {
    r->change_sub = 0;
    return luaL_error(L, "rt:on_file_change: out of memory");
  }
  return add_handler(L, r, "file_handlers", 3, 2, &r->next_file_handler);
}

static int l_off_file_change(lua_State *L) {
  return remove_handler(L, "file_handlers");
}

/* rt:recent_changes([n]) -> list of changes, oldest first */
static int l_recent_changes(lua_State *L) {
  lrt *r = check_rt(L, 1);
  lua_Number n = luaL_optnumber(L, 2, 0);
  if (n < 0 || n != (lua_Number)(long long)n)
    return luaL_argerror(L, 2, "a whole number >= 0 expected");
  cJSON *a = tg_changes_recent(r->rt, (size_t)n);
  int rc = a ? tg_json_push(L, a) : -1;
  cJSON_Delete(a);
  if (rc < 0) return luaL_error(L, "rt:recent_changes: out of memory");
  return 1;
}

/* ---- approvals --------------------------------------------------------------- */

static int parse_answer(lua_State *L, int idx, tg_answer *a) {
  const char *s = lua_tostring(L, idx);
  if (!s) return -1;
  if (!strcmp(s, "approve") || !strcmp(s, "allow")) *a = TG_ANSWER_APPROVE;
  else if (!strcmp(s, "always")) *a = TG_ANSWER_ALWAYS;
  else if (!strcmp(s, "reject") || !strcmp(s, "deny")) *a = TG_ANSWER_REJECT;
  else return -1;
  return 0;
}

/* Reads {scope = "tool"|"args", guidance = "..."} or a guidance string. */
static int answer_opts(lua_State *L, int idx, tg_always_scope *scope,
                       const char **guidance) {
  *scope = TG_SCOPE_TOOL;
  *guidance = NULL;
  if (lua_type(L, idx) == LUA_TSTRING) {
    *guidance = lua_tostring(L, idx);
    return 0;
  }
  if (lua_isnoneornil(L, idx)) return 0;
  if (!lua_istable(L, idx)) return -1;
  lua_getfield(L, idx, "scope");
  const char *sc = lua_tostring(L, -1);
  lua_pop(L, 1);
  if (sc && !strcmp(sc, "args")) *scope = TG_SCOPE_ARGS;
  else if (sc && strcmp(sc, "tool")) return -1;
  lua_getfield(L, idx, "guidance");
  *guidance = lua_tostring(L, -1); /* the table keeps it alive */
  lua_pop(L, 1);
  return 0;
}

static const char *const answer_usage =
    "answer must be \"approve\", \"always\" or \"reject\", optionally "
    "followed by {scope = \"tool\"|\"args\", guidance = \"...\"}";

static void approver_cb(tg_runtime *rt, const tg_approval_request *q,
                        void *ud) {
  lrt *r = ud;
  lua_State *L = r->cur_L;
  if (!L) {
    tg_approval_answer(rt, q->approval_id, TG_ANSWER_REJECT, TG_SCOPE_TOOL,
                       "the runtime is closing");
    return;
  }
  int top = lua_gettop(L);
  push_state(L, r, "approver");
  lua_createtable(L, 0, 7);
  lua_pushinteger(L, (lua_Integer)q->approval_id);
  lua_setfield(L, -2, "approval_id");
  set_str(L, "call_id", q->call_id);
  set_str(L, "tool", q->tool);
  set_str(L, "session", q->session);
  set_str(L, "prompt", q->prompt);
  set_str(L, "rule", q->rule);
  if (tg_json_push(L, q->args) == 0) lua_setfield(L, -2, "args");
  callback(r, L, 1, 2, "approver");
  tg_answer a;
  tg_always_scope scope;
  const char *guidance;
  if (!lua_isnil(L, top + 1)) { /* answered now; nil: answers later */
    if (parse_answer(L, top + 1, &a) < 0 ||
        answer_opts(L, top + 2, &scope, &guidance) < 0) {
      lua_pushfstring(L, "toolgate: the approver returned a bad answer; %s",
                      answer_usage);
      if (r->err_ref == LUA_NOREF) r->err_ref = luaL_ref(L, LUA_REGISTRYINDEX);
      a = TG_ANSWER_REJECT;
      guidance = "the approver failed";
      scope = TG_SCOPE_TOOL;
    }
    tg_approval_answer(rt, q->approval_id, a, scope, guidance);
  }
  lua_settop(L, top);
}

static int set_approver(lua_State *L, lrt *r, int idx) {
  const char *mode = lua_tostring(L, idx);
  if (lua_isfunction(L, idx)) {
    push_state(L, r, "approver");
    lua_pop(L, 1);
    lua_rawgeti(L, LUA_REGISTRYINDEX, r->state_ref);
    lua_pushvalue(L, idx);
    lua_setfield(L, -2, "approver");
    lua_pop(L, 1);
    tg_runtime_set_approve_mode(r->rt, TG_APPROVE_CALLBACK);
    tg_runtime_set_approver(r->rt, approver_cb, r);
  } else if (mode && !strcmp(mode, "allow")) {
    tg_runtime_set_approve_mode(r->rt, TG_APPROVE_ALLOW);
  } else if (mode && !strcmp(mode, "deny")) {
    tg_runtime_set_approve_mode(r->rt, TG_APPROVE_DENY);
  } else {
    return luaL_error(L, "toolgate: approve must be a function(request), "
                         "\"allow\" or \"deny\" (got %s)",
                      mode ? mode : luaL_typename(L, idx));
  }
  return 0;
}

static int l_set_approver(lua_State *L) {
  lrt *r = check_rt(L, 1);
  luaL_checkany(L, 2);
  return set_approver(L, r, 2);
}

/* rt:answer(approval_id, "approve"|"always"|"reject", opts) -> true | nil, err */
static int l_answer(lua_State *L) {
  lrt *r = check_rt(L, 1);
  lua_Integer id = luaL_checkinteger(L, 2);
  tg_answer a;
  tg_always_scope scope;
  const char *guidance;
  if (parse_answer(L, 3, &a) < 0 || answer_opts(L, 4, &scope, &guidance) < 0)
    return luaL_error(L, "toolgate: rt:answer: %s", answer_usage);
  lua_State *prev = enter(r, L);
  int rc = tg_approval_answer(r->rt, (uint64_t)id, a, scope, guidance);
  leave(r, L, prev);
  if (rc < 0) {
    lua_pushnil(L);
    lua_pushfstring(L, "no pending approval %d (answered, timed out or "
                       "cancelled)", (int)id);
    return 2;
  }
  lua_pushboolean(L, 1);
  return 1;
}

/* ---- toolgate.new ------------------------------------------------------- */

static uint64_t opt_u64(lua_State *L, int t, const char *k, uint64_t dflt) {
  lua_getfield(L, t, k);
  uint64_t v = dflt;
  if (!lua_isnil(L, -1)) {
    int ok = 0;
    lua_Number n = lua_tonumberx(L, -1, &ok);
    if (!ok || n < 0 || n > 9e15)
      luaL_error(L, "toolgate.new: '%s' must be a number >= 0", k);
    v = (uint64_t)n;
  }
  lua_pop(L, 1);
  return v;
}

static const char *opt_str(lua_State *L, int t, const char *k) {
  lua_getfield(L, t, k);
  int ty = lua_type(L, -1);
  if (ty != LUA_TNIL && ty != LUA_TSTRING)
    luaL_error(L, "toolgate.new: '%s' must be a string (got %s)", k,
               luaL_typename(L, -1));
  const char *s = lua_tostring(L, -1);
  lua_pop(L, 1); /* the options table keeps the string alive */
  return s;
}

static tg_verdict opt_verdict(lua_State *L, int t) {
  const char *v = opt_str(L, t, "default_verdict");
  if (!v) return TG_VERDICT_ASK;
  if (!strcmp(v, "ask")) return TG_VERDICT_ASK;
  if (!strcmp(v, "allow")) return TG_VERDICT_ALLOW;
  if (!strcmp(v, "deny")) return TG_VERDICT_DENY;
  luaL_error(L, "toolgate.new: 'default_verdict' must be \"ask\", \"allow\" "
                "or \"deny\" (got \"%s\")", v);
  return TG_VERDICT_ASK;
}

/* workspace = "dir" or {"dir", ...} -> a NULL-terminated array in a
 * userdata left on the stack (the GC frees it; the runtime copies the
 * roots). NULL when absent. */
static const char *const *opt_roots(lua_State *L, int t) {
  lua_getfield(L, t, "workspace");
  int ty = lua_type(L, -1), v = lua_gettop(L);
  if (ty == LUA_TNIL) {
    lua_pop(L, 1);
    return NULL;
  }
  if (ty != LUA_TSTRING && ty != LUA_TTABLE)
    luaL_error(L, "toolgate.new: 'workspace' must be a directory or a list "
                  "of directories (got %s)", luaL_typename(L, -1));
  size_t n = ty == LUA_TSTRING ? 1 : lua_rawlen(L, v);
  const char **roots = lua_newuserdatauv(L, (n + 1) * sizeof *roots, 0);
  for (size_t i = 0; i < n; i++) {
    if (ty == LUA_TTABLE) lua_rawgeti(L, v, (int)i + 1);
    else lua_pushvalue(L, v);
    if (lua_type(L, -1) != LUA_TSTRING)
      luaL_error(L, "toolgate.new: workspace[%d] must be a string", (int)i + 1);
    roots[i] = lua_tostring(L, -1); /* the options table keeps it alive */
    lua_pop(L, 1);
  }
  roots[n] = NULL;
  lua_remove(L, v); /* leaves the userdata */
  return roots;
}

/* Reads every option before anything is allocated: luaL_error longjmps. */
static void read_config(lua_State *L, int t, tg_config *cfg) {
  tg_config_init(cfg);
  if (lua_isnoneornil(L, t)) return;
  luaL_checktype(L, t, LUA_TTABLE);
  cfg->policies_dir = opt_str(L, t, "policies");
  cfg->session = opt_str(L, t, "session");
  cfg->default_verdict = opt_verdict(L, t);
  cfg->timeout_ms = opt_u64(L, t, "timeout_ms", cfg->timeout_ms);
  cfg->approval_timeout_ms =
      opt_u64(L, t, "approval_timeout_ms", cfg->approval_timeout_ms);
  cfg->progress_interval_ms =
      opt_u64(L, t, "progress_interval_ms", cfg->progress_interval_ms);
  cfg->seed = opt_u64(L, t, "seed", 0);
  cfg->max_args_bytes = (size_t)opt_u64(L, t, "max_args_bytes", cfg->max_args_bytes);
  cfg->exec_output_cap =
      (size_t)opt_u64(L, t, "exec_output_cap", cfg->exec_output_cap);
  cfg->kill_grace_ms = opt_u64(L, t, "kill_grace_ms", cfg->kill_grace_ms);
  cfg->file_max_bytes = (size_t)opt_u64(L, t, "file_max_bytes", 0);
  cfg->workspace_roots = opt_roots(L, t);
  lua_getfield(L, t, "builtin_tools");
  if (!lua_isnil(L, -1) && !lua_isboolean(L, -1))
    luaL_error(L, "toolgate.new: 'builtin_tools' must be a boolean (got %s)",
               luaL_typename(L, -1));
  cfg->builtin_tools = lua_isnil(L, -1) || lua_toboolean(L, -1);
  lua_pop(L, 1);
  lua_getfield(L, t, "watch");
  if (!lua_isnil(L, -1) && !lua_isboolean(L, -1))
    luaL_error(L, "toolgate.new: 'watch' must be a boolean (got %s)",
               luaL_typename(L, -1));
  cfg->watch_policies = lua_toboolean(L, -1);
  lua_pop(L, 1);
  lua_getfield(L, t, "trusted_policies");
  if (!lua_isnil(L, -1) && !lua_isboolean(L, -1))
    luaL_error(L, "toolgate.new: 'trusted_policies' must be a boolean (got %s)",
               luaL_typename(L, -1));
  cfg->trusted_policies = lua_toboolean(L, -1);
  lua_pop(L, 1);
  cfg->policy_time_limit_ms = (uint32_t)opt_u64(L, t, "policy_time_limit_ms", 0);
  cfg->policy_memory_cap = (size_t)opt_u64(L, t, "policy_memory_cap", 0);
  lua_getfield(L, t, "approve");
  int ty = lua_type(L, -1);
  if (ty != LUA_TNIL && ty != LUA_TFUNCTION && ty != LUA_TSTRING)
    luaL_error(L, "toolgate.new: 'approve' must be a function, \"allow\" or "
                  "\"deny\"");
  lua_pop(L, 1);
}

/* toolgate.new{...} -> rt | nil, err */
static int l_new(lua_State *L) {
  tg_config cfg;
  read_config(L, 1, &cfg);
  lrt *r = lua_newuserdatauv(L, sizeof *r, 0);
  memset(r, 0, sizeof *r);
  r->state_ref = r->err_ref = LUA_NOREF;
  r->max_args_bytes = cfg.max_args_bytes;
  luaL_setmetatable(L, RT_MT);
  char err[TG_ERRMSG] = "";
  r->rt = tg_runtime_new(&cfg, NULL, err);
  if (!r->rt) {
    lua_pushnil(L);
    lua_pushstring(L, err);
    return 2;
  }
  lua_createtable(L, 0, 3);
  lua_newtable(L);
  lua_setfield(L, -2, "handlers");
  lua_newtable(L);
  lua_setfield(L, -2, "calls");
  lua_newtable(L);
  lua_setfield(L, -2, "file_handlers");
  r->state_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  if (!lua_isnoneornil(L, 1)) {
    lua_getfield(L, 1, "approve");
    if (!lua_isnil(L, -1)) set_approver(L, r, lua_gettop(L));
    lua_pop(L, 1);
  }
  return 1;
}

/* ---- calls ----------------------------------------------------------------- */

static int opt_fn_ref(lua_State *L, int t, const char *k) {
  lua_getfield(L, t, k);
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    return LUA_NOREF;
  }
  if (!lua_isfunction(L, -1))
    luaL_error(L, "rt:call: '%s' must be a function", k);
  return luaL_ref(L, LUA_REGISTRYINDEX);
}

/* Converts the args (table or JSON text) at idx; NULL + message on error. */
static cJSON *args_of(lua_State *L, int idx, size_t max_bytes,
                      tg_call_request *req, char *err) {
  if (lua_type(L, idx) == LUA_TSTRING) {
    req->args_json = lua_tostring(L, idx);
    return NULL;
  }
  if (lua_isnoneornil(L, idx)) return NULL;
  if (!lua_istable(L, idx)) {
    snprintf(err, TG_ERRMSG, "args must be a table or a JSON string (got %s)",
             luaL_typename(L, idx));
    return NULL;
  }
  cJSON *j = tg_json_from_lua_max(L, idx, max_bytes, err, TG_ERRMSG);
  if (j && !cJSON_IsObject(j)) {
    snprintf(err, TG_ERRMSG, "args must be an object, not a list");
    cJSON_Delete(j);
    return NULL;
  }
  return j;
}

/* Reads opts {id, session, turn, metadata} into req; returns metadata
 * (caller frees) or NULL. Raises on wrong types before any allocation. */
static void read_call_opts(lua_State *L, int o, tg_call_request *req) {
  if (lua_isnoneornil(L, o)) return;
  luaL_checktype(L, o, LUA_TTABLE);
  lua_getfield(L, o, "id");
  lua_getfield(L, o, "session");
  lua_getfield(L, o, "turn");
  if (!lua_isnil(L, -3) && lua_type(L, -3) != LUA_TSTRING)
    luaL_error(L, "rt:call: 'id' must be a string");
  if (!lua_isnil(L, -2) && lua_type(L, -2) != LUA_TSTRING)
    luaL_error(L, "rt:call: 'session' must be a string");
  if (!lua_isnil(L, -1) && lua_type(L, -1) != LUA_TNUMBER)
    luaL_error(L, "rt:call: 'turn' must be a number");
  req->id = lua_tostring(L, -3);
  req->session = lua_tostring(L, -2);
  req->turn = (int64_t)lua_tonumber(L, -1);
  if (req->id && strlen(req->id) >= sizeof ((lcall *)0)->id)
    luaL_error(L, "rt:call: 'id' is longer than 127 bytes");
  lua_pop(L, 3); /* the opts table keeps the strings alive */
}

static cJSON *call_metadata(lua_State *L, int o, char *err, int *bad) {
  *bad = 0;
  if (lua_isnoneornil(L, o)) return NULL;
  lua_getfield(L, o, "metadata");
  cJSON *m = NULL;
  if (!lua_isnil(L, -1)) {
    m = tg_json_from_lua(L, -1, err, TG_ERRMSG);
    *bad = !m || !cJSON_IsObject(m);
    if (*bad && m) snprintf(err, TG_ERRMSG, "metadata must be a table");
  }
  lua_pop(L, 1);
  return m;
}

/* rt:call(tool, args, opts) -> handle | nil, err */
static int l_call(lua_State *L) {
  lrt *r = check_rt(L, 1);
  tg_call_request req;
  memset(&req, 0, sizeof req);
  req.tool = luaL_checkstring(L, 2);
  read_call_opts(L, 4, &req);
  lcall *c = lua_newuserdatauv(L, sizeof *c, 0);   /* the handle */
  memset(c, 0, sizeof *c);
  c->anchor_ref = c->outcome_ref = c->on_done_ref = c->on_progress_ref = LUA_NOREF;
  luaL_setmetatable(L, CALL_MT);
  int h = lua_gettop(L);
  if (!lua_isnoneornil(L, 4)) {
    c->on_done_ref = opt_fn_ref(L, 4, "on_done");
    c->on_progress_ref = opt_fn_ref(L, 4, "on_progress");
  }
  char err[TG_ERRMSG] = "";
  int bad = 0;
  cJSON *args = args_of(L, 3, r->max_args_bytes, &req, err);
  cJSON *meta = err[0] ? NULL : call_metadata(L, 4, err, &bad);
  if (err[0] || bad) {
    cJSON_Delete(args);
    cJSON_Delete(meta);
    unref(L, &c->on_done_ref);
    unref(L, &c->on_progress_ref);
    lua_pushnil(L);
    lua_pushstring(L, err);
    return 2;
  }
  req.args = args;
  req.metadata = meta;
  if (c->on_progress_ref != LUA_NOREF) ensure_subscribed(r);
  c->owner = r;
  lua_pushvalue(L, h);
  c->anchor_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  /* We name the call ourselves so progress events find the handle; an id
   * the host chose may not be one that is running, ours skip such ids. */
  push_state(L, r, "calls");
  int calls = lua_gettop(L);
  if (req.id) {
    snprintf(c->id, sizeof c->id, "%s", req.id);
    lua_getfield(L, calls, c->id);
    int taken = !lua_isnil(L, -1);
    lua_pop(L, 1);
    if (taken) {
      lua_settop(L, h);
      cJSON_Delete(args);
      cJSON_Delete(meta);
      unref(L, &c->anchor_ref);
      unref(L, &c->on_done_ref);
      unref(L, &c->on_progress_ref);
      lua_pushnil(L);
      lua_pushfstring(L, "a call with id '%s' is already running", c->id);
      return 2;
    }
  } else {
    for (;;) {
      snprintf(c->id, sizeof c->id, "call-%llu", ++r->next_id);
      lua_getfield(L, calls, c->id);
      int taken = !lua_isnil(L, -1);
      lua_pop(L, 1);
      if (!taken) break;
    }
  }
  req.id = c->id;
  lua_pushvalue(L, h);
  lua_setfield(L, calls, c->id);
  lua_settop(L, h);
  lua_State *prev = enter(r, L);
  int rc = tg_call_start(r->rt, &req, done_cb, c, err);
  cJSON_Delete(args);
  cJSON_Delete(meta);
  if (rc < 0) {
    forget_call(L, r, c->id);
    unref(L, &c->anchor_ref);
    unref(L, &c->on_done_ref);
    unref(L, &c->on_progress_ref);
    r->cur_L = prev;
    lua_pushnil(L);
    lua_pushstring(L, err);
    return 2;
  }
  leave(r, L, prev);
  lua_settop(L, h);
  return 1;
}

static lcall *check_call(lua_State *L) {
  return luaL_checkudata(L, 1, CALL_MT);
}

static int l_call_cancel(lua_State *L) {
  lcall *c = check_call(L);
  if (c->done || !c->owner || !c->owner->rt) {
    lua_pushnil(L);
    lua_pushstring(L, "the call has already ended");
    return 2;
  }
  lrt *r = c->owner;
  lua_State *prev = enter(r, L);
  int rc = tg_call_cancel(r->rt, c->id);
  leave(r, L, prev);
  if (rc < 0) {
    lua_pushnil(L);
    lua_pushstring(L, "the call is past the point where it can be cancelled");
    return 2;
  }
  lua_pushboolean(L, 1);
  return 1;
}

/* handle:wait() -> outcome: runs the loop until this call has ended. */
static int l_call_wait(lua_State *L) {
  lcall *c = check_call(L);
  while (!c->done) {
    if (!c->owner || !c->owner->rt)
      return luaL_error(L, "toolgate: the runtime was closed before the call "
                           "ended");
    lrt *r = c->owner;
    refuse_in_callback(L, r, "handle:wait()");
    lua_State *prev = enter(r, L);
    int more = uv_run(tg_runtime_loop(r->rt), UV_RUN_ONCE);
    leave(r, L, prev);
    if (!more && !c->done)
      return luaL_error(L, "toolgate: call %s cannot finish: nothing is left "
                           "to run (bug)", c->id);
  }
  if (c->outcome_ref == LUA_NOREF) {
    lua_pushnil(L);
    lua_pushstring(L, "the runtime was closed before the call ended");
    return 2;
  }
  lua_rawgeti(L, LUA_REGISTRYINDEX, c->outcome_ref);
  return 1;
}

static int l_call_done(lua_State *L) {
  lua_pushboolean(L, check_call(L)->done);
  return 1;
}

static int l_call_outcome(lua_State *L) {
  lcall *c = check_call(L);
  if (!c->done || c->outcome_ref == LUA_NOREF) return 0;
  lua_rawgeti(L, LUA_REGISTRYINDEX, c->outcome_ref);
  return 1;
}

static int l_call_index(lua_State *L) {
  lcall *c = check_call(L);
  const char *k = luaL_checkstring(L, 2);
  if (!strcmp(k, "id")) {
    lua_pushstring(L, c->id);
    return 1;
  }
  luaL_getmetatable(L, CALL_MT);
  lua_getfield(L, -1, "__methods");
  lua_getfield(L, -1, k);
  return 1;
}

static int l_call_gc(lua_State *L) {
  lcall *c = check_call(L);
  unref(L, &c->outcome_ref);
  return 0;
}

/* ---- the loop and the rest ---------------------------------------------- */

static int run_loop(lua_State *L, uv_run_mode mode) {
  lrt *r = check_rt(L, 1);
  refuse_in_callback(L, r, mode == UV_RUN_DEFAULT ? "rt:run()" : "rt:run_once()");
  lua_State *prev = enter(r, L);
  int more = uv_run(tg_runtime_loop(r->rt), mode);
  leave(r, L, prev);
  lua_pushboolean(L, more);
  return 1;
}

static int l_run(lua_State *L) { return run_loop(L, UV_RUN_DEFAULT); }
static int l_run_once(lua_State *L) { return run_loop(L, UV_RUN_NOWAIT); }

static int l_fd(lua_State *L) {
  lua_pushinteger(L, uv_backend_fd(tg_runtime_loop(check_rt(L, 1)->rt)));
  return 1;
}

static int l_timeout(lua_State *L) {
  lua_pushinteger(L, uv_backend_timeout(tg_runtime_loop(check_rt(L, 1)->rt)));
  return 1;
}

static int l_generation(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)tg_runtime_generation(check_rt(L, 1)->rt));
  return 1;
}

/* rt:reload([dir]) -> generation | nil, "file:line: message" */
static int l_reload(lua_State *L) {
  lrt *r = check_rt(L, 1);
  const char *dir = luaL_optstring(L, 2, NULL);
  char err[TG_ERRMSG] = "";
  lua_State *prev = enter(r, L);
  int rc = tg_runtime_load_policies(r->rt, dir, err);
  leave(r, L, prev);
  if (rc < 0) {
    lua_pushnil(L);
    lua_pushstring(L, err);
    return 2;
  }
  lua_pushinteger(L, (lua_Integer)tg_runtime_generation(r->rt));
  return 1;
}

/* rt:explain(tool, args, opts) -> explanation | nil, err (tg_explain) */
static int l_explain(lua_State *L) {
  lrt *r = check_rt(L, 1);
  tg_call_request req;
  memset(&req, 0, sizeof req);
  req.tool = luaL_checkstring(L, 2);
  read_call_opts(L, 4, &req);
  char err[TG_ERRMSG] = "";
  int bad = 0;
  cJSON *args = args_of(L, 3, r->max_args_bytes, &req, err);
  cJSON *meta = err[0] ? NULL : call_metadata(L, 4, err, &bad);
  cJSON *j = NULL;
  if (!err[0] && !bad) {
    req.args = args;
    req.metadata = meta;
    j = tg_explain(r->rt, &req, err);
  }
  cJSON_Delete(args);
  cJSON_Delete(meta);
  if (!j || tg_json_push(L, j) < 0) {
    cJSON_Delete(j);
    lua_pushnil(L);
    lua_pushstring(L, err[0] ? err : "the explanation is nested too deeply");
    return 2;
  }
  cJSON_Delete(j);
  return 1;
}

/* rt:listen([path]) -> path | nil, err: the control socket (toolgate reload) */
static int l_listen(lua_State *L) {
  lrt *r = check_rt(L, 1);
  const char *path = luaL_optstring(L, 2, NULL);
  char err[TG_ERRMSG] = "";
  if (tg_runtime_listen(r->rt, path, err) < 0) {
    lua_pushnil(L);
    lua_pushstring(L, err);
    return 2;
  }
  lua_pushstring(L, tg_runtime_control_path(r->rt));
  return 1;
}

static int l_describe(lua_State *L) {
  cJSON *d = tg_runtime_describe(check_rt(L, 1)->rt);
  int rc = tg_json_push(L, d);
  cJSON_Delete(d);
  if (rc < 0) return luaL_error(L, "toolgate: description too deep");
  return 1;
}

/* Detaches (pass 0) or releases (pass 1) the handles of running calls. */
static void each_running(lua_State *L, lrt *r, int pass) {
  push_state(L, r, "calls");
  lua_pushnil(L);
  while (lua_next(L, -2)) {
    lcall *c = lua_touserdata(L, -1);
    if (pass == 0) {
      c->owner = NULL;
    } else {
      unref(L, &c->on_done_ref);
      unref(L, &c->on_progress_ref);
      unref(L, &c->anchor_ref);
    }
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
}

/* Closing cancels what still runs; their on_done callbacks do not run. */
static int l_close(lua_State *L) {
  lrt *r = luaL_checkudata(L, 1, RT_MT);
  if (!r->rt) return 0;
  refuse_in_callback(L, r, "rt:close()");
  r->cur_L = NULL; /* callbacks during teardown are not delivered */
  tg_runtime_set_approver(r->rt, NULL, NULL);
  if (r->sub_id) tg_events_unsubscribe(r->rt, r->sub_id);
  tg_runtime *rt = r->rt;
  r->rt = NULL;
  each_running(L, r, 0);
  tg_runtime_free(rt);
  each_running(L, r, 1); /* after: nothing in C points at them now */
  unref(L, &r->state_ref);
  unref(L, &r->err_ref);
  return 0;
}

static const luaL_Reg rt_methods[] = {
    {"call", l_call},           {"run", l_run},
    {"run_once", l_run_once},   {"fd", l_fd},
    {"timeout", l_timeout},     {"on_event", l_on_event},
    {"off_event", l_off_event}, {"answer", l_answer},
    {"set_approver", l_set_approver}, {"generation", l_generation},
    {"reload", l_reload},       {"describe", l_describe},
    {"explain", l_explain},     {"listen", l_listen},
    {"on_file_change", l_on_file_change},
    {"off_file_change", l_off_file_change},
    {"recent_changes", l_recent_changes},
    {"close", l_close},         {NULL, NULL}};

static const luaL_Reg call_methods[] = {{"cancel", l_call_cancel},
                                        {"wait", l_call_wait},
                                        {"done", l_call_done},
                                        {"outcome", l_call_outcome},
                                        {NULL, NULL}};

static const luaL_Reg module_fns[] = {{"new", l_new}, {NULL, NULL}};

int luaopen_toolgate(lua_State *L);
int luaopen_toolgate(lua_State *L) {
  tg_json_open(L);
  luaL_newmetatable(L, RT_MT);
  lua_newtable(L);
  luaL_setfuncs(L, rt_methods, 0);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, l_close);
  lua_setfield(L, -2, "__gc");
  lua_pop(L, 1);
  luaL_newmetatable(L, CALL_MT);
  lua_newtable(L);
  luaL_setfuncs(L, call_methods, 0);
  lua_setfield(L, -2, "__methods");
  lua_pushcfunction(L, l_call_index);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, l_call_gc);
  lua_setfield(L, -2, "__gc");
  lua_pop(L, 1);
  luaL_newlib(L, module_fns);
  tg_json_push_null(L);
  lua_setfield(L, -2, "null");
  lua_pushstring(L, TG_VERSION);
  lua_setfield(L, -2, "version");
  return 1;
}
