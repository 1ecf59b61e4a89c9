/*
 * lmodule.c — the host side of `require "toolgate"`: a runtime in-process
 * for scripts, editor plugins and the specs (SPEC §4). Reference:
 * lua/README.md. The policy side of the same name lives in
 * src/policy/api.c, inside each generation's own lua_State.
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
 *     (protect()), so no raise ever unwinds through the runtime's frames;
 *   - the runtime's state is C memory (lrt) the userdata points at: a
 *     runtime collected while the host is inside handle:wait() is closed
 *     when that outermost call returns, not under its feet.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lua/luacompat.h"
#include "lua/luajson.h"
#include "lua/luaoutcome.h"
#include "lua/luapaths.h"
#include "lua/luaraw.h"
#include <uv.h>
#include <cjson/cJSON.h>
#include "lua/luaarg.h" /* after lauxlib: argument errors name the method */
#include "toolgate.h"
#include "kit/kit.h"
#include "lmodule.h"

#define RT_MT "toolgate.runtime"
#define CALL_MT "toolgate.call"
#define BOX_MT "toolgate.json_box"

/* The positions in a running call's entry of the `calls` table. */
enum { ENTRY_HANDLE = 1, ENTRY_ON_DONE, ENTRY_ON_PROGRESS };

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

typedef struct {
  lrt *owner;        /* NULL once the call ended or the runtime closed */
  char id[128];
  int done;
  int outcome_ref;   /* from the end until the handle is collected */
  char *refused;     /* while tg_call_start runs: where the message of a
                        call refused at once (an unknown tool) goes */
  int was_refused;   /* it was: rt:call returns nil, message, code */
} lcall;

/* cJSON values built before C takes them (see the top comment). */
typedef struct {
  cJSON *j[3];
} json_box;

/* Attaching to a host's loop (the section at the end). */
static int defer_callback(lrt *r, lua_State *L, int nargs, const char *what);
static int defer_approver_body(lua_State *L);
static void rearm(lrt *r, lua_State *L);
static void detach_now(lrt *r, lua_State *L);

/* ---- strings and option tables ------------------------------------------- */

/* Is the value at idx exactly the string `want` (no NUL tricks)? */
static int is_str(lua_State *L, int idx, const char *want) {
  size_t n;
  if (lua_type(L, idx) != LUA_TSTRING) return 0;
  const char *s = lua_tolstring(L, idx, &n);
  return n == strlen(want) && memcmp(s, want, n) == 0;
}

static int known_name(const char *k, size_t n, const char *const *names) {
  for (; *names; names++)
    if (strlen(*names) == n && memcmp(*names, k, n) == 0) return 1;
  return 0;
}

static void raise_unknown_option(lua_State *L, const char *fn, int key,
                                 const char *const *names) {
  key = lua_absindex(L, key); /* the buffer below moves the top */
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  for (const char *const *n = names; *n; n++) {
    if (n != names) luaL_addstring(&b, ", ");
    luaL_addstring(&b, *n);
  }
  luaL_pushresult(&b);
  luaL_error(L, "%s: unknown option '%s' (known: %s)", fn,
             lua_tostring(L, key), lua_tostring(L, -1));
}

/* Copies the option table at idx into a new table left on the stack and
 * returns its index (0 when idx is nil). Raw: no __index or __pairs runs,
 * and the copy is ours, so nothing can change or free what we read from
 * it. A name not in `names` is an error naming it: a typo must not pass
 * as the default. */
static int copy_opts(lua_State *L, int idx, const char *fn,
                     const char *const *names) {
  if (lua_isnoneornil(L, idx)) return 0;
  idx = lua_absindex(L, idx);
  if (!lua_istable(L, idx))
    luaL_error(L, "%s: the options must be a table (got %s)", fn,
               luaL_typename(L, idx));
  lua_newtable(L);
  int copy = lua_gettop(L);
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    size_t n;
    if (lua_type(L, -2) != LUA_TSTRING)
      luaL_error(L, "%s: option names are strings (got a %s key)", fn,
                 luaL_typename(L, -2));
    const char *k = lua_tolstring(L, -2, &n);
    if (!known_name(k, n, names)) raise_unknown_option(L, fn, -2, names);
    lua_pushvalue(L, -2);
    lua_insert(L, -2);
    lua_rawset(L, copy);
  }
  return copy;
}

/* Pushes opts[k] (nil when there are no options). */
static int get_opt(lua_State *L, int o, const char *k) {
  if (!o) {
    lua_pushnil(L);
    return LUA_TNIL;
  }
  lua_getfield(L, o, k);
  return lua_type(L, -1);
}

/* ---- the JSON box ----------------------------------------------------------- */

static void box_clear(json_box *b) {
  for (size_t i = 0; i < sizeof b->j / sizeof *b->j; i++) {
    cJSON_Delete(b->j[i]);
    b->j[i] = NULL;
  }
}

static int box_gc(lua_State *L) {
  box_clear(luaL_checkudata(L, 1, BOX_MT));
  return 0;
}

/* A new empty box, left on the stack. */
static json_box *new_box(lua_State *L) {
  json_box *b = lua_newuserdatauv(L, sizeof *b, 0);
  memset(b, 0, sizeof *b);
  luaL_setmetatable(L, BOX_MT);
  return b;
}

/* ---- entering and leaving ---------------------------------------------- */

static lrt *check_rt(lua_State *L, int idx) {
  lrt_box *b = luaL_checkudata(L, idx, RT_MT);
  if (!b->r) luaL_error(L, "toolgate: this runtime is closed");
  return b->r;
}

static void unref(lua_State *L, int *ref) {
  if (*ref != LUA_NOREF) luaL_unref(L, LUA_REGISTRYINDEX, *ref);
  *ref = LUA_NOREF;
}

static void push_state(lua_State *L, lrt *r, const char *field) {
  lua_rawgeti(L, LUA_REGISTRYINDEX, r->state_ref);
  lua_getfield(L, -1, field);
  lua_remove(L, -2);
}

/* Keeps the error on top of the stack (popped) if it is the first since
 * the host entered, and stops the loop so it is raised soon. */
static void keep_error(lrt *r, lua_State *L) {
  if (r->has_err) {
    lua_pop(L, 1);
  } else {
    lua_rawseti(L, LUA_REGISTRYINDEX, r->err_ref);
    r->has_err = 1;
  }
  if (r->rt) uv_stop(tg_runtime_loop(r->rt));
}

/* Pushes the kept error and forgets it; 0 (nothing pushed) when none. */
static int take_error(lrt *r, lua_State *L) {
  if (!r->has_err) return 0;
  lua_rawgeti(L, LUA_REGISTRYINDEX, r->err_ref);
  lua_pushboolean(L, 0);
  lua_rawseti(L, LUA_REGISTRYINDEX, r->err_ref);
  r->has_err = 0;
  return 1;
}

/* Marks the handles of running calls as orphans: nothing in C will point
 * at them once the runtime is freed. */
static void detach_calls(lua_State *L, lrt *r) {
  push_state(L, r, "calls");
  lua_pushnil(L);
  while (lua_next(L, -2)) {
    lua_rawgeti(L, -1, ENTRY_HANDLE);
    lcall *c = lua_touserdata(L, -1);
    if (c) c->owner = NULL;
    lua_pop(L, 2);
  }
  lua_pop(L, 1);
}

/* The one way a runtime ends (rt:close, the collector, a failed
 * toolgate.new): cancels what still runs, without delivering callbacks,
 * and frees r. */
static void close_now(lrt *r, lua_State *L) {
  if (r->rt) {
    r->cur_L = NULL; /* callbacks during teardown are not delivered */
    tg_runtime_set_approver(r->rt, NULL, NULL);
    if (r->sub_id) tg_events_unsubscribe(r->rt, r->sub_id);
    if (r->state_ref != LUA_NOREF) detach_calls(L, r);
    if (r->state_ref != LUA_NOREF) detach_now(r, L); /* before the fd goes */
    tg_runtime_free(r->rt);
  }
  unref(L, &r->state_ref);
  unref(L, &r->err_ref);
  free(r);
}

/* Remembers the calling thread; returns the previous one to restore. */
static lua_State *enter(lrt *r, lua_State *L) {
  lua_State *prev = r->cur_L;
  r->cur_L = L;
  return prev;
}

/* Restores the previous thread. The outermost entry then closes a
 * runtime that was collected meanwhile (r is freed: a caller that does not
 * hold the runtime on its stack must not touch r after this) and raises a
 * callback's error. */
static void leave(lrt *r, lua_State *L, lua_State *prev) {
  r->cur_L = prev;
  if (prev) return;
  if (!r->close_pending) rearm(r, L); /* the call may have armed timers */
  int raise = take_error(r, L);
  if (r->close_pending) close_now(r, L);
  if (raise) lua_error(L);
}

/* libuv's loop is not re-entrant: a callback may start calls, cancel
 * them or answer approvals, but not run the loop (or close the runtime,
 * which runs it) — that is for the code that called rt:run / wait. */
static void refuse_in_callback(lua_State *L, lrt *r, const char *fn) {
  if (r->cur_L)
    luaL_error(L, "toolgate: %s cannot be used inside a callback (on_done, "
                  "on_progress, on_event, the approver, a host tool's run: "
                  "it waits with ctx.call); call it after "
                  "rt:run() or handle:wait() returns", fn);
}

/* Runs body(arg) under a protected call on L: the code the runtime's C
 * calls back must never unwind through the runtime's frames (a call would
 * be left half-done, and cur_L set for good). A raise is kept like a
 * callback's error. Returns 0, or -1 when body raised. */
static int protect(lrt *r, lua_State *L, lua_CFunction body, void *arg) {
  int top = lua_gettop(L), rc;
  if (!lua_checkstack(L, 4)) {
    uv_stop(tg_runtime_loop(r->rt));
    return -1;
  }
#if TG_LUA54
  lua_pushcfunction(L, body); /* a light C function: no allocation */
  lua_pushlightuserdata(L, arg);
  rc = lua_pcall(L, 1, 0, 0);
#else
  rc = lua_cpcall(L, body, arg); /* allocates its closure protected */
#endif
  if (rc != LUA_OK) keep_error(r, L);
  lua_settop(L, top);
  return rc == LUA_OK ? 0 : -1;
}

/* Calls the host function below nargs arguments (inside a protected
 * body); an error it raises is kept, prefixed with what it was, and nres
 * nils stand for its results. Returns 0, or -1 when it raised. */
static int callback(lrt *r, lua_State *L, int nargs, int nres,
                    const char *what) {
  if (r->deferring && nres == 0) return defer_callback(r, L, nargs, what);
  if (lua_pcall(L, nargs, nres, 0) == LUA_OK) return 0;
  const char *m = lua_tostring(L, -1);
  lua_pushfstring(L, "toolgate: error in %s callback: %s", what,
                  m ? m : "(non-string error)");
  lua_remove(L, -2);
  keep_error(r, L);
  for (int i = 0; i < nres; i++) lua_pushnil(L);
  return -1;
}

/* ---- call ends ----------------------------------------------------------- */

typedef struct {
  lrt *r;
  lcall *c;
  const tg_outcome *o;
} done_arg;

/* Pushes the call's entry (or nil) and takes it out of `calls`. */
static void untrack_call(lua_State *L, lrt *r, const char *id) {
  push_state(L, r, "calls");
  lua_getfield(L, -1, id);
  lua_pushnil(L);
  lua_setfield(L, -3, id);
  lua_remove(L, -2);
}

static int done_body(lua_State *L) {
  done_arg *d = lua_touserdata(L, 1);
  untrack_call(L, d->r, d->c->id);                  /* 2: the entry */
  tg__push_outcome(L, d->o);
  d->c->outcome_ref = luaL_ref(L, LUA_REGISTRYINDEX); /* the handle's */
  if (!lua_istable(L, 2)) return 0;
  lua_rawgeti(L, 2, ENTRY_ON_DONE);
  if (lua_isnil(L, -1)) return 0;
  lua_rawgeti(L, LUA_REGISTRYINDEX, d->c->outcome_ref);
  callback(d->r, L, 1, 0, "on_done");
  return 0;
}

/* A call of a tool that does not exist ends before tg_call_start returns
 * (its call_start and call_end events made, for the record); rt:call
 * answers it as the refusal it is, nil, message, "UNKNOWN_TOOL", and
 * on_done does not run. */
static int refused_at_once(lcall *c, const tg_outcome *o) {
  if (!c->refused || o->error.phase != TG_PHASE_VALIDATE ||
      tg_error_code_of(o->error.code) != TG_E_UNKNOWN_TOOL)
    return 0;
  snprintf(c->refused, TG_ERRMSG, "%s", o->error.message);
  c->was_refused = 1;
  return 1;
}

static void done_cb(tg_runtime *rt, const tg_outcome *o, void *ud) {
  lcall *c = ud;
  lrt *r = c->owner;
  c->done = 1;
  c->owner = NULL;
  if (refused_at_once(c, o)) return;
  if (!r || !r->cur_L) return; /* closing: the calls table goes whole */
  done_arg d = {r, c, o};
  protect(r, r->cur_L, done_body, &d); /* the handle may be collected after */
}

/* ---- events ---------------------------------------------------------------- */

typedef struct {
  lrt *r;
  const tg_event *ev;
} event_arg;

static void deliver_progress(lrt *r, lua_State *L, const tg_event *ev) {
  push_state(L, r, "calls");
  lua_getfield(L, -1, ev->call_id);
  if (lua_istable(L, -1)) {
    lua_rawgeti(L, -1, ENTRY_ON_PROGRESS);
    if (!lua_isnil(L, -1)) {
      tg__json_push(L, ev->data);
      callback(r, L, 1, 0, "on_progress");
    } else {
      lua_pop(L, 1);
    }
  }
  lua_pop(L, 2);
}

/* Handlers run in registration order, by id, up to the last id there was
 * when the event came: one a handler adds waits for the next event, one
 * it removes does not run. Indexing, not lua_next: lua_next over a table
 * changed meanwhile may raise. */
static int event_body(lua_State *L) {
  event_arg *a = lua_touserdata(L, 1);
  lrt *r = a->r;
  const tg_event *ev = a->ev;
  push_state(L, r, "handlers");
  int t = lua_gettop(L), last = r->next_handler;
  for (int id = 1; id <= last; id++) {
    lua_rawgeti(L, t, id); /* {fn, type} or nil */
    if (lua_istable(L, -1)) {
      lua_rawgeti(L, -1, 2);
      const char *want = lua_tostring(L, -1);
      int match = !want || strcmp(want, ev->type) == 0;
      lua_pop(L, 1);
      if (match) {
        lua_rawgeti(L, -1, 1);
        tg__json_push(L, ev->data);
        callback(r, L, 1, 0, "on_event");
      }
    }
    lua_pop(L, 1);
  }
  return 0;
}

static void event_cb(tg_runtime *rt, const tg_event *ev, void *ud) {
  lrt *r = ud;
  if (!r->cur_L) return; /* events during close: nobody is listening */
  event_arg a = {r, ev};
  protect(r, r->cur_L, event_body, &a);
}

static int progress_body(lua_State *L) {
  event_arg *a = lua_touserdata(L, 1);
  deliver_progress(a->r, L, a->ev);
  return 0;
}

/* A call's on_progress (tg_call_request.on_progress): only its own
 * progress events come here, no runtime-wide subscription needed. */
static void progress_cb(tg_runtime *rt, const tg_event *ev, void *ud) {
  lrt *r = ud;
  if (!r->cur_L || !ev->call_id) return; /* during close: nobody listens */
  event_arg a = {r, ev};
  protect(r, r->cur_L, progress_body, &a);
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
  lua_rawseti(L, -2, *counter + 1); /* may raise: count only once in */
  int id = ++*counter;
  lua_pushinteger(L, id);
  return 1;
}

/* rt:off_x(id): drops the handler from the state's list `list`. An id
 * that was never given out is ignored (not cut to some other id). */
static int remove_handler(lua_State *L, const char *list, int counter) {
  lrt *r = check_rt(L, 1);
  lua_Integer id = luaL_checkinteger(L, 2);
  if (id < 1 || id > counter) return 0;
  push_state(L, r, list);
  lua_pushnil(L);
  lua_rawseti(L, -2, (int)id);
  return 0;
}

/* rt:on_event([type,] fn) -> id */
static int l_on_event(lua_State *L) {
  lrt *r = check_rt(L, 1);
  int fi = lua_isfunction(L, 2) ? 2 : 3;
  if (fi == 3) {
    luaL_checkstring(L, 2);
    const char *type = tg__checknonul(L, 2, "rt:on_event", "the event type");
    if (!tg_event_type_known(type))
      return luaL_error(L, "rt:on_event: unknown event type '%s' (the types "
                           "are: %s)", type, tg_event_types());
  }
  luaL_checktype(L, fi, LUA_TFUNCTION);
  ensure_subscribed(r);
  return add_handler(L, r, "handlers", fi, fi == 3 ? 2 : 0,
                     &r->next_handler);
}

static int l_off_event(lua_State *L) {
  return remove_handler(L, "handlers", check_rt(L, 1)->next_handler);
}

/* ---- file changes ------------------------------------------------------------ */

typedef struct {
  lrt *r;
  const tg_file_change *ch;
} change_arg;

/* Each handler's glob is matched here, handlers in registration order
 * (indexing, as for events). */
static int change_body(lua_State *L) {
  change_arg *a = lua_touserdata(L, 1);
  lrt *r = a->r;
  push_state(L, r, "file_handlers");
  int t = lua_gettop(L), last = r->next_file_handler;
  for (int id = 1; id <= last; id++) {
    lua_rawgeti(L, t, id); /* {fn, glob} or nil */
    if (lua_istable(L, -1)) {
      lua_rawgeti(L, -1, 2);
      int match = tg_glob_match(lua_tostring(L, -1), a->ch->path);
      lua_pop(L, 1);
      if (match) {
        lua_rawgeti(L, -1, 1);
        tg__json_push(L, a->ch->json);
        callback(r, L, 1, 0, "on_file_change");
      }
    }
    lua_pop(L, 1);
  }
  return 0;
}

/* One C subscription for every path. */
static void change_cb(tg_runtime *rt, const tg_file_change *ch, void *ud) {
  lrt *r = ud;
  if (!r->cur_L) return; /* closing */
  change_arg a = {r, ch};
  protect(r, r->cur_L, change_body, &a);
}

/* rt:on_file_change(glob, fn) -> id */
static int l_on_file_change(lua_State *L) {
  lrt *r = check_rt(L, 1);
  luaL_checkstring(L, 2);
  const char *glob = tg__checknonul(L, 2, "rt:on_file_change", "the glob");
  luaL_checktype(L, 3, LUA_TFUNCTION);
  char why[TG_ERRMSG];
  if (tg_glob_check(glob, why, sizeof why) < 0)
    return luaL_error(L, "rt:on_file_change: %s", why);
  if (!r->change_sub) r->change_sub = tg_changes_subscribe(r->rt, "**", change_cb, r);
  if (r->change_sub < 0) {
    r->change_sub = 0;
    return luaL_error(L, "rt:on_file_change: out of memory");
  }
  return add_handler(L, r, "file_handlers", 3, 2, &r->next_file_handler);
}

static int l_off_file_change(lua_State *L) {
  return remove_handler(L, "file_handlers", check_rt(L, 1)->next_file_handler);
}

/* rt:recent_changes([n]) -> list of changes, oldest first */
static int l_recent_changes(lua_State *L) {
  lrt *r = check_rt(L, 1);
  lua_Number n = luaL_optnumber(L, 2, 0);
  /* checked as a double first: casting NaN or 1e300 is undefined */
  if (!(n >= 0 && n == floor(n)))
    return luaL_argerror(L, 2, "a whole number >= 0 expected");
  size_t want = n > 1e9 ? (size_t)1e9 : (size_t)n; /* more than are kept */
  json_box *b = new_box(L);
  b->j[0] = tg_changes_recent(r->rt, want);
  if (!b->j[0] || tg__json_push(L, b->j[0]) < 0)
    return luaL_error(L, "rt:recent_changes: out of memory");
  box_clear(b);
  return 1;
}

/* ---- approvals --------------------------------------------------------------- */

static int parse_answer(lua_State *L, int idx, tg_answer *a) {
  if (is_str(L, idx, "approve") || is_str(L, idx, "allow"))
    *a = TG_ANSWER_APPROVE;
  else if (is_str(L, idx, "always"))
    *a = TG_ANSWER_ALWAYS;
  else if (is_str(L, idx, "reject") || is_str(L, idx, "deny"))
    *a = TG_ANSWER_REJECT;
  else
    return -1;
  return 0;
}

static const char *const answer_opt_names[] = {
    "scope", "guidance", "arg", "glob", "where", "until", NULL};

/* An answer's options: what an always covers, and the guidance. */
typedef struct {
  tg_always_spec spec;
  int full;             /* a pattern, the project or an until: only
                           tg_approval_answer_always says those */
  const char *guidance;
} lanswer;

/* A string field of the copied options at o (NULL when absent); -1 when
 * it is there and not a string without NUL bytes. */
static int answer_str(lua_State *L, int o, const char *k, const char **out) {
  int ty = get_opt(L, o, k);
  int bad = ty != LUA_TNIL && (ty != LUA_TSTRING || tg__has_nul(L, -1));
  *out = ty == LUA_TSTRING && !bad ? lua_tostring(L, -1) : NULL;
  lua_pop(L, 1); /* the copied table keeps it */
  return bad ? -1 : 0;
}

/* until = ms since the epoch, or a time tg_time_parse takes ("2h",
 * "2025-07-01"). */
static int answer_until(lua_State *L, int o, int64_t *until, char *err) {
  int ty = get_opt(L, o, "until"), rc = 0;
  if (ty == LUA_TNUMBER) {
    lua_Number n = lua_tonumber(L, -1);
    if (!(n >= 0 && n <= 9e15)) rc = -1; /* NaN too */
    else *until = (int64_t)n;
  } else if (ty == LUA_TSTRING) {
    rc = tg__has_nul(L, -1) ||
                 tg_time_parse(lua_tostring(L, -1), 0, 1, until, err) < 0
             ? -1 : 0;
  } else if (ty != LUA_TNIL) {
    rc = -1;
  }
  lua_pop(L, 1);
  return rc;
}

/* The fields of an options table (copied at o) into a. */
static int answer_fields(lua_State *L, int o, lanswer *a, char *err) {
  const char *scope, *where;
  if (answer_str(L, o, "scope", &scope) < 0 ||
      answer_str(L, o, "where", &where) < 0 ||
      answer_str(L, o, "arg", &a->spec.arg) < 0 ||
      answer_str(L, o, "glob", &a->spec.glob) < 0 ||
      answer_str(L, o, "guidance", &a->guidance) < 0 ||
      answer_until(L, o, &a->spec.until_ms, err) < 0)
    return -1;
  int sc = !scope || !strcmp(scope, "tool") ? TG_SCOPE_TOOL
           : !strcmp(scope, "args")           ? TG_SCOPE_ARGS
           : !strcmp(scope, "pattern")        ? TG_SCOPE_PATTERN : -1;
  int wh = !where || !strcmp(where, "session") ? TG_WHERE_SESSION
           : !strcmp(where, "project")          ? TG_WHERE_PROJECT : -1;
  if (sc < 0 || wh < 0) return -1;
  a->spec.scope = (tg_always_scope)sc;
  a->spec.where = (tg_always_where)wh;
  a->full = sc == TG_SCOPE_PATTERN || wh == TG_WHERE_PROJECT ||
            a->spec.until_ms || a->spec.arg || a->spec.glob;
  return 0;
}

/* Reads {scope = "tool"|"args"|"pattern", arg, glob, where =
 * "session"|"project", until, guidance} or a guidance string at idx into
 * a. Pushes one value that keeps the strings alive. -1 for anything else,
 * a misspelt field included: a typo must not turn "these args" into "the
 * whole tool". */
static int answer_opts(lua_State *L, int idx, lanswer *a, const char *fn,
                       char *err) {
  idx = lua_absindex(L, idx);
  memset(a, 0, sizeof *a);
  if (lua_isnoneornil(L, idx)) {
    lua_pushnil(L);
    return 0;
  }
  if (lua_type(L, idx) == LUA_TSTRING) {
    lua_pushvalue(L, idx);
    if (tg__has_nul(L, -1)) return -1;
    a->guidance = lua_tostring(L, -1);
    return 0;
  }
  if (!lua_istable(L, idx)) {
    lua_pushnil(L);
    return -1;
  }
  int o = copy_opts(L, idx, fn, answer_opt_names); /* stays: the anchor */
  return answer_fields(L, o, a, err);
}

/* Answers approval id as the host said. -ENOENT etc. with err. */
static int give_answer(lrt *r, uint64_t id, tg_answer ans, const lanswer *a,
                       char *err) {
  if (ans == TG_ANSWER_ALWAYS && a->full)
    return tg_approval_answer_always(r->rt, id, &a->spec, err);
  int rc = tg_approval_answer(r->rt, id, ans, a->spec.scope, a->guidance);
  if (rc < 0)
    snprintf(err, TG_ERRMSG, "no pending approval %lld (answered, timed out "
             "or cancelled)", (long long)id);
  return rc;
}

static const char *const answer_usage =
    "answer must be \"approve\", \"always\" or \"reject\", optionally "
    "followed by {scope = \"tool\"|\"args\"|\"pattern\", arg = \"name\", "
    "glob = \"...\", where = \"session\"|\"project\", until = time, "
    "guidance = \"...\"}";

static void set_str(lua_State *L, const char *k, const char *v) {
  if (!v) return;
  lua_pushstring(L, v);
  lua_setfield(L, -2, k);
}

typedef struct {
  lrt *r;
  const tg_approval_request *q;
  int answered;
  int failed;        /* the approver raised or answered badly */
} approver_arg;

static void push_request(lua_State *L, const tg_approval_request *q) {
  lua_createtable(L, 0, 7);
  lua_pushinteger(L, (lua_Integer)q->approval_id);
  lua_setfield(L, -2, "approval_id");
  set_str(L, "call_id", q->call_id);
  set_str(L, "tool", q->tool);
  set_str(L, "session", q->session);
  set_str(L, "prompt", q->prompt);
  set_str(L, "rule", q->rule);
  if (tg__json_push(L, q->args) == 0) lua_setfield(L, -2, "args");
}

/* Asks the host's approver and answers when it returned an answer. Nil:
 * it answers later with rt:answer. */
static int approver_body(lua_State *L) {
  approver_arg *a = lua_touserdata(L, 1);
  lrt *r = a->r;
  push_state(L, r, "approver");
  push_request(L, a->q);
  a->failed = 1; /* until we know better: a raise below is a failure */
  if (callback(r, L, 1, 2, "approver") < 0) return 0; /* 2, 3 */
  a->failed = 0;
  if (lua_isnil(L, 2)) return 0;
  tg_answer ans;
  lanswer la;
  char err[TG_ERRMSG] = "";
  if (parse_answer(L, 2, &ans) < 0 ||
      answer_opts(L, 3, &la, "the approver's answer", err) < 0 ||
      give_answer(r, a->q->approval_id, ans, &la, err) == -EINVAL) {
    lua_pushfstring(L, "toolgate: the approver returned a bad answer; %s",
                    err[0] ? err : answer_usage);
    keep_error(r, L);
    a->failed = 1;
    return 0;
  }
  a->answered = 1;
  return 0;
}

static void approver_cb(tg_runtime *rt, const tg_approval_request *q,
                        void *ud) {
  lrt *r = ud;
  if (!r->cur_L) {
    tg_approval_answer(rt, q->approval_id, TG_ANSWER_REJECT, TG_SCOPE_TOOL,
                       "the runtime is closing");
    return;
  }
  approver_arg a = {r, q, 0, 0};
  lua_CFunction body = r->deferring ? defer_approver_body : approver_body;
  if (protect(r, r->cur_L, body, &a) < 0) a.failed = 1;
  if (a.failed && !a.answered) /* a failed approver rejects, now */
    tg_approval_answer(rt, q->approval_id, TG_ANSWER_REJECT, TG_SCOPE_TOOL,
                       "the approver failed");
}

/* "allow" / "deny" as an approve mode; -1 for anything else. */
static int approve_mode(lua_State *L, int idx) {
  if (is_str(L, idx, "allow")) return TG_APPROVE_ALLOW;
  if (is_str(L, idx, "deny")) return TG_APPROVE_DENY;
  return -1;
}

static void raise_bad_approver(lua_State *L, const char *fn, int idx) {
  luaL_error(L, "%s: approve must be a function(request), \"allow\" or "
                "\"deny\" (got %s)", fn,
             lua_type(L, idx) == LUA_TSTRING ? lua_tostring(L, idx)
                                             : luaL_typename(L, idx));
}

static void set_approver(lua_State *L, lrt *r, int idx, const char *fn) {
  if (lua_isfunction(L, idx)) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, r->state_ref);
    lua_pushvalue(L, idx);
    lua_setfield(L, -2, "approver"); /* first: it is what may raise */
    lua_pop(L, 1);
    tg_runtime_set_approve_mode(r->rt, TG_APPROVE_CALLBACK);
    tg_runtime_set_approver(r->rt, approver_cb, r);
    return;
  }
  int mode = approve_mode(L, idx);
  if (mode < 0) raise_bad_approver(L, fn, idx);
  tg_runtime_set_approve_mode(r->rt, (tg_approve_mode)mode);
}

static int l_set_approver(lua_State *L) {
  lrt *r = check_rt(L, 1);
  luaL_checkany(L, 2);
  set_approver(L, r, 2, "rt:set_approver");
  return 0;
}

/* rt:answer(approval_id, "approve"|"always"|"reject", opts) -> true | nil, err */
static int l_answer(lua_State *L) {
  lrt *r = check_rt(L, 1);
  lua_Integer id = luaL_checkinteger(L, 2);
  tg_answer a;
  lanswer la;
  char err[TG_ERRMSG] = "";
  if (parse_answer(L, 3, &a) < 0 || answer_opts(L, 4, &la, "rt:answer", err) < 0)
    return luaL_error(L, "toolgate: rt:answer: %s", err[0] ? err : answer_usage);
  lua_State *prev = enter(r, L);
  int rc = give_answer(r, (uint64_t)id, a, &la, err);
  leave(r, L, prev);
  if (rc == -EINVAL) return luaL_error(L, "toolgate: rt:answer: %s", err);
  if (rc < 0) {
    lua_pushnil(L);
    lua_pushstring(L, err);
    lua_pushliteral(L, "ENOENT");
    return 3;
  }
  lua_pushboolean(L, 1);
  return 1;
}

/* ---- toolgate.new ------------------------------------------------------- */

static const char *const new_opt_names[] = {
    "policies", "session", "default_verdict", "timeout_ms",
    "approval_timeout_ms", "progress_interval_ms", "seed", "max_args_bytes",
    "approve", "watch", "workspace", "file_max_bytes", "builtin_tools",
    "exec_output_cap", "kill_grace_ms", "trusted_policies",
    "policy_time_limit_ms", "policy_memory_cap",
    "db", "audit_args_max", "audit_result_max", "project",
    "models", /* the chat side: lmodule_chat.c */
    NULL};

static uint64_t opt_u64(lua_State *L, int o, const char *k, uint64_t dflt) {
  uint64_t v = dflt;
  if (get_opt(L, o, k) != LUA_TNIL) {
    int ok = 0;
    lua_Number n = lua_tonumberx(L, -1, &ok);
    if (!ok || !(n >= 0 && n <= 9e15)) /* so: NaN too, before the cast */
      luaL_error(L, "toolgate.new: '%s' must be a number >= 0", k);
    v = (uint64_t)n;
  }
  lua_pop(L, 1);
  return v;
}

static int opt_bool(lua_State *L, int o, const char *k, int dflt) {
  int ty = get_opt(L, o, k), v = dflt;
  if (ty != LUA_TNIL && ty != LUA_TBOOLEAN)
    luaL_error(L, "toolgate.new: '%s' must be a boolean (got %s)", k,
               luaL_typename(L, -1));
  if (ty == LUA_TBOOLEAN) v = lua_toboolean(L, -1);
  lua_pop(L, 1);
  return v;
}

/* A string option; the copied options table keeps it alive. */
static const char *opt_str(lua_State *L, int o, const char *k) {
  int ty = get_opt(L, o, k);
  if (ty != LUA_TNIL && ty != LUA_TSTRING)
    luaL_error(L, "toolgate.new: '%s' must be a string (got %s)", k,
               luaL_typename(L, -1));
  char what[64];
  snprintf(what, sizeof what, "'%s'", k);
  const char *s = tg__checknonul(L, -1, "toolgate.new", what);
  lua_pop(L, 1);
  return s;
}

static tg_verdict opt_verdict(lua_State *L, int o) {
  get_opt(L, o, "default_verdict");
  tg_verdict v = TG_VERDICT_ASK;
  if (is_str(L, -1, "allow")) v = TG_VERDICT_ALLOW;
  else if (is_str(L, -1, "deny")) v = TG_VERDICT_DENY;
  else if (!lua_isnil(L, -1) && !is_str(L, -1, "ask"))
    luaL_error(L, "toolgate.new: 'default_verdict' must be \"ask\", "
                  "\"allow\" or \"deny\" (got %s)",
               lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1)
                                              : luaL_typename(L, -1));
  lua_pop(L, 1);
  return v;
}

/* workspace = "dir" or {"dir", ...} -> a NULL-terminated array in a
 * userdata left on the stack, over a table of the strings, also left
 * there: ours, so they stay alive however the host's table changes (the
 * runtime copies the roots). NULL when absent. */
static const char *const *opt_roots(lua_State *L, int o) {
  int ty = get_opt(L, o, "workspace"), v = lua_gettop(L);
  if (ty == LUA_TNIL) {
    lua_pop(L, 1);
    return NULL;
  }
  if (ty != LUA_TSTRING && ty != LUA_TTABLE)
    luaL_error(L, "toolgate.new: 'workspace' must be a directory or a list "
                  "of directories (got %s)", luaL_typename(L, -1));
  size_t n = ty == LUA_TSTRING ? 1 : lua_rawlen(L, v);
  if (n > 4096) luaL_error(L, "toolgate.new: 'workspace' lists more than "
                              "4096 directories");
  lua_createtable(L, (int)n, 0);
  int keep = lua_gettop(L);
  const char **roots = lua_newuserdatauv(L, (n + 1) * sizeof *roots, 0);
  for (size_t i = 0; i < n; i++) {
    if (ty == LUA_TTABLE) lua_rawgeti(L, v, (int)i + 1);
    else lua_pushvalue(L, v);
    if (lua_type(L, -1) != LUA_TSTRING)
      luaL_error(L, "toolgate.new: workspace[%d] must be a string", (int)i + 1);
    roots[i] = tg__checknonul(L, -1, "toolgate.new", "a workspace directory");
    lua_rawseti(L, keep, (int)i + 1);
  }
  roots[n] = NULL;
  lua_remove(L, v); /* leaves the strings and the array */
  return roots;
}

/* db = "path" | ":memory:" | false (no storage) | nil (the default file);
 * audit_args_max, audit_result_max; project = "dir". */
static void read_storage_config(lua_State *L, int o, tg_config *cfg) {
  int ty = get_opt(L, o, "db");
  if (ty == LUA_TBOOLEAN && !lua_toboolean(L, -1)) {
    cfg->db_off = 1;
  } else if (ty != LUA_TNIL && ty != LUA_TSTRING) {
    luaL_error(L, "toolgate.new: 'db' must be a file name, \":memory:\" "
                  "or false (got %s)", lua_type(L, -1) == LUA_TBOOLEAN
                                           ? "true" : luaL_typename(L, -1));
  }
  lua_pop(L, 1);
  if (!cfg->db_off) cfg->db = opt_str(L, o, "db");
  cfg->audit_args_max = (size_t)opt_u64(L, o, "audit_args_max", 0);
  cfg->audit_result_max = (size_t)opt_u64(L, o, "audit_result_max", 0);
  cfg->project = opt_str(L, o, "project");
}

/* Reads every option before anything is taken: luaL_error longjmps. */
static void read_config(lua_State *L, int o, tg_config *cfg) {
  tg_config_init(cfg);
  if (!o) return;
  cfg->policies_dir = opt_str(L, o, "policies");
  cfg->session = opt_str(L, o, "session");
  cfg->default_verdict = opt_verdict(L, o);
  cfg->timeout_ms = opt_u64(L, o, "timeout_ms", cfg->timeout_ms);
  cfg->approval_timeout_ms =
      opt_u64(L, o, "approval_timeout_ms", cfg->approval_timeout_ms);
  cfg->progress_interval_ms =
      opt_u64(L, o, "progress_interval_ms", cfg->progress_interval_ms);
  cfg->seed = opt_u64(L, o, "seed", 0);
  cfg->max_args_bytes = (size_t)opt_u64(L, o, "max_args_bytes", cfg->max_args_bytes);
  cfg->exec_output_cap =
      (size_t)opt_u64(L, o, "exec_output_cap", cfg->exec_output_cap);
  cfg->kill_grace_ms = opt_u64(L, o, "kill_grace_ms", cfg->kill_grace_ms);
  cfg->file_max_bytes = (size_t)opt_u64(L, o, "file_max_bytes", 0);
  cfg->workspace_roots = opt_roots(L, o);
  cfg->builtin_tools = opt_bool(L, o, "builtin_tools", 1);
  cfg->watch_policies = opt_bool(L, o, "watch", 0);
  cfg->trusted_policies = opt_bool(L, o, "trusted_policies", 0);
  uint64_t limit = opt_u64(L, o, "policy_time_limit_ms", 0);
  if (limit > UINT32_MAX)
    luaL_error(L, "toolgate.new: 'policy_time_limit_ms' is at most %u",
               (unsigned)UINT32_MAX);
  cfg->policy_time_limit_ms = (uint32_t)limit;
  cfg->policy_memory_cap = (size_t)opt_u64(L, o, "policy_memory_cap", 0);
  read_storage_config(L, o, cfg);
  if (get_opt(L, o, "approve") != LUA_TNIL && !lua_isfunction(L, -1) &&
      approve_mode(L, -1) < 0)
    raise_bad_approver(L, "toolgate.new", lua_gettop(L));
  lua_pop(L, 1);
}

/* toolgate.new{...} -> rt | nil, err */
static int l_new(lua_State *L) {
  tg_config cfg;
  int o = copy_opts(L, 1, "toolgate.new", new_opt_names);
  read_config(L, o, &cfg);
  lrt_box *b = lua_newuserdatauv(L, sizeof *b, 0);
  b->r = NULL;
  luaL_setmetatable(L, RT_MT);
  int self = lua_gettop(L);
  lrt *r = calloc(1, sizeof *r);
  if (!r) return luaL_error(L, "toolgate.new: out of memory");
  r->state_ref = r->err_ref = LUA_NOREF;
  r->max_args_bytes = cfg.max_args_bytes;
  b->r = r; /* from here the userdata's __gc frees all of it */
  char err[TG_ERRMSG] = "";
  r->rt = tg_runtime_new(&cfg, NULL, err);
  if (!r->rt) {
    b->r = NULL;
    close_now(r, L);
    lua_pushnil(L);
    lua_pushstring(L, err);
    lua_pushliteral(L, "EINVAL"); /* a policy file that fails to load */
    return 3;
  }
  lua_pushboolean(L, 0);
  r->err_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_createtable(L, 0, 4);
  lua_newtable(L);
  lua_setfield(L, -2, "handlers");
  lua_newtable(L);
  lua_setfield(L, -2, "calls");
  lua_newtable(L);
  lua_setfield(L, -2, "file_handlers");
  r->state_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  if (get_opt(L, o, "approve") != LUA_TNIL)
    set_approver(L, r, lua_gettop(L), "toolgate.new");
  tg__lm_chat_new(L, r, o); /* models: after creation, like set_models */
  lua_settop(L, self);
  return 1;
}

/* ---- calls ----------------------------------------------------------------- */

static const char *const call_opt_names[] = {
    "id", "session", "turn", "metadata", "on_done", "on_progress", NULL};
static const char *const explain_opt_names[] = {"id", "session", "turn",
                                                "metadata", NULL};

/* Reads opts (the private copy at o) {id, session, turn} into req and
 * checks on_done and on_progress; raises on a wrong type, before anything
 * is taken. */
static void read_call_opts(lua_State *L, int o, const char *fn,
                           tg_call_request *req) {
  if (!o) return;
  int ty = get_opt(L, o, "id");
  if (ty != LUA_TNIL && ty != LUA_TSTRING)
    luaL_error(L, "%s: 'id' must be a string", fn);
  req->id = tg__checknonul(L, -1, fn, "'id'");
  if (req->id && strlen(req->id) >= sizeof ((lcall *)0)->id)
    luaL_error(L, "%s: 'id' is longer than 127 bytes", fn);
  ty = get_opt(L, o, "session");
  if (ty != LUA_TNIL && ty != LUA_TSTRING)
    luaL_error(L, "%s: 'session' must be a string", fn);
  req->session = tg__checknonul(L, -1, fn, "'session'");
  if (get_opt(L, o, "turn") != LUA_TNIL) {
    lua_Number n = lua_tonumber(L, -1);
    /* checked as a double first: casting NaN or 1e300 is undefined */
    if (lua_type(L, -1) != LUA_TNUMBER || !(n == floor(n) && fabs(n) <= 9e15))
      luaL_error(L, "%s: 'turn' must be a whole number", fn);
    req->turn = (int64_t)n;
  }
  const char *cbs[] = {"on_done", "on_progress"};
  for (int i = 0; i < 2; i++) {
    ty = get_opt(L, o, cbs[i]);
    if (ty != LUA_TNIL && ty != LUA_TFUNCTION)
      luaL_error(L, "%s: '%s' must be a function (got %s)", fn, cbs[i],
                 luaL_typename(L, -1));
  }
  lua_pop(L, 5); /* the copy keeps the strings alive */
}

/* The request of rt:call / rt:explain (tool, args, opts copied at o) into
 * req, its cJSON values into the box. Raises for wrong types; returns -1
 * with err for a malformed request (what an agent may send: bad JSON, a
 * NUL in the tool name, args not an object). */
/* The table at idx as a JSON object (max_bytes: 0 for no limit), or NULL
 * with "<what>: why" in err. The caller owns the result. */
static cJSON *object_of(lua_State *L, int idx, size_t max_bytes,
                        const char *what, char *err) {
  char why[TG_ERRMSG - 16];
  cJSON *j = max_bytes ? tg__json_from_lua_max(L, idx, max_bytes, why, sizeof why)
                       : tg__json_from_lua(L, idx, why, sizeof why);
  if (j && !cJSON_IsObject(j)) {
    cJSON_Delete(j);
    j = NULL;
    snprintf(why, sizeof why, "must be a table with keys (a JSON object), "
             "not a list");
  }
  if (!j) snprintf(err, TG_ERRMSG, "%s: %s", what, why);
  return j;
}

static int read_request(lua_State *L, lrt *r, int o, const char *fn,
                        tg_call_request *req, json_box *box, char *err) {
  size_t n;
  req->tool = luaL_checklstring(L, 2, &n);
  read_call_opts(L, o, fn, req);
  if (memchr(req->tool, '\0', n)) {
    snprintf(err, TG_ERRMSG, "the tool name contains a NUL byte (at byte "
             "%zu); a tool name is plain text", strlen(req->tool));
    return -1;
  }
  int ty = lua_type(L, 3);
  if (ty == LUA_TSTRING) {
    req->args_json = lua_tolstring(L, 3, &n);
    if (memchr(req->args_json, '\0', n)) {
      snprintf(err, TG_ERRMSG, "args: the JSON text contains a NUL byte (at "
               "byte %zu); JSON text cannot", strlen(req->args_json));
      return -1;
    }
  } else if (ty == LUA_TTABLE) {
    box->j[0] = object_of(L, 3, r->max_args_bytes, "args", err);
    if (!box->j[0]) return -1;
    req->args = box->j[0];
  } else if (ty != LUA_TNIL && ty != LUA_TNONE) {
    snprintf(err, TG_ERRMSG, "args must be a table or a JSON string (got %s)",
             luaL_typename(L, 3));
    return -1;
  }
  if (get_opt(L, o, "metadata") != LUA_TNIL) {
    box->j[1] = object_of(L, -1, 0, "metadata", err);
    if (!box->j[1]) return -1;
    req->metadata = box->j[1];
  }
  lua_pop(L, 1);
  return 0;
}

/* nil, message, code: how a method fails in a way the host may handle
 * (luv's convention). code is a short stable string: an errno name
 * ("EINVAL", "EEXIST", "ENOENT") or one of toolgate.error_codes. */
static int fail(lua_State *L, const char *err, const char *code) {
  lua_pushnil(L);
  lua_pushstring(L, err);
  lua_pushstring(L, code);
  return 3;
}

/* The errno name of a negative code from the C API ("EINVAL"). */
static const char *errno_name(int rc, char *buf, size_t len) {
  return uv_err_name_r(rc, buf, len);
}

static lcall *new_handle(lua_State *L) {
  lcall *c = lua_newuserdatauv(L, sizeof *c, 0);
  memset(c, 0, sizeof *c);
  c->outcome_ref = LUA_NOREF;
  luaL_setmetatable(L, CALL_MT);
  return c;
}

/* Names the call (the host's id, or the next free call-N) and pushes the
 * calls table and the id. -1 with err when the host's id is running. */
static int name_call(lua_State *L, lrt *r, lcall *c, const char *want,
                     char *err) {
  push_state(L, r, "calls");
  int calls = lua_gettop(L);
  for (;;) {
    if (want) snprintf(c->id, sizeof c->id, "%s", want);
    else snprintf(c->id, sizeof c->id, "call-%llu", ++r->next_id);
    lua_pushstring(L, c->id);
    lua_pushvalue(L, -1);
    lua_rawget(L, calls);
    int taken = !lua_isnil(L, -1);
    lua_pop(L, 1);
    if (!taken) return 0;
    lua_pop(L, 1);
    if (want) {
      snprintf(err, TG_ERRMSG, "a call with id '%s' is already running", want);
      return -1;
    }
  }
}

/* calls[id] = {handle, on_done, on_progress}: what the running call needs,
 * dropped whole when it ends (or the runtime closes). */
static void track_call(lua_State *L, int calls, int key, int h, int o) {
  lua_pushvalue(L, key);
  lua_createtable(L, 3, 0);
  lua_pushvalue(L, h);
  lua_rawseti(L, -2, ENTRY_HANDLE);
  get_opt(L, o, "on_done");
  lua_rawseti(L, -2, ENTRY_ON_DONE);
  get_opt(L, o, "on_progress");
  lua_rawseti(L, -2, ENTRY_ON_PROGRESS);
  lua_rawset(L, calls);
}

/* rt:call(tool, args, opts) -> handle | nil, err */
static int l_call(lua_State *L) {
  lrt *r = check_rt(L, 1);
  tg_call_request req;
  memset(&req, 0, sizeof req);
  char err[TG_ERRMSG] = "";
  int o = copy_opts(L, 4, "rt:call", call_opt_names);
  json_box *box = new_box(L);
  if (read_request(L, r, o, "rt:call", &req, box, err) < 0)
    return fail(L, err, "EINVAL");
  lcall *c = new_handle(L);
  int h = lua_gettop(L);
  if (name_call(L, r, c, req.id, err) < 0) return fail(L, err, "EEXIST");
  int calls = h + 1, key = h + 2;
  req.id = c->id;
  track_call(L, calls, key, h, o);
  c->owner = r;
  if (get_opt(L, o, "on_progress") != LUA_TNIL) {
    req.on_progress = progress_cb;
    req.events_ud = r;
  }
  /* Nothing between enter and leave may raise (cur_L would stay set). */
  lua_State *prev = enter(r, L);
  c->refused = err;
  int rc = tg_call_start(r->rt, &req, done_cb, c, err);
  c->refused = NULL;
  if (rc < 0 || c->was_refused) { /* untrack, without allocating */
    c->owner = NULL;
    lua_pushvalue(L, key);
    lua_pushnil(L);
    lua_rawset(L, calls);
  }
  box_clear(box);
  leave(r, L, prev);
  char code[32];
  if (c->was_refused) return fail(L, err, "UNKNOWN_TOOL");
  if (rc < 0) return fail(L, err, errno_name(rc, code, sizeof code));
  lua_pushvalue(L, h);
  return 1;
}

static lcall *check_call(lua_State *L) {
  return luaL_checkudata(L, 1, CALL_MT);
}

static int l_call_cancel(lua_State *L) {
  lcall *c = check_call(L);
  if (c->done || !c->owner)
    return fail(L, "the call has already ended", "ENOENT");
  lrt *r = c->owner;
  lua_State *prev = enter(r, L);
  int rc = tg_call_cancel(r->rt, c->id);
  leave(r, L, prev); /* r may be gone now (see leave) */
  if (rc < 0)
    return fail(L, "the call is past the point where it can be cancelled",
                "ENOENT");
  lua_pushboolean(L, 1);
  return 1;
}

/* handle:wait() -> outcome: runs the loop until this call has ended. */
static int l_call_wait(lua_State *L) {
  lcall *c = check_call(L);
  while (!c->done) {
    lrt *r = c->owner;
    if (!r)
      return luaL_error(L, "toolgate: the runtime was closed before the call "
                           "ended");
    refuse_in_callback(L, r, "handle:wait()");
    lua_State *prev = enter(r, L);
    int more = uv_run(tg_runtime_loop(r->rt), UV_RUN_ONCE);
    leave(r, L, prev); /* r may be gone now (see leave) */
    if (!more && !c->done)
      return luaL_error(L, "toolgate: call %s cannot finish: nothing is left "
                           "to run (bug)", c->id);
  }
  if (c->outcome_ref == LUA_NOREF)
    return fail(L, "the runtime was closed before the call ended",
                "ECANCELED");
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
  luaL_checkstring(L, 2);
  if (is_str(L, 2, "id")) {
    lua_pushstring(L, c->id);
    return 1;
  }
  luaL_getmetatable(L, CALL_MT);
  lua_getfield(L, -1, "__methods");
  lua_pushvalue(L, 2);
  lua_rawget(L, -2);
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

/* rt:run_once() -> whether calls are pending (tg_runtime_run_once: polls
 * even when only the watch and the control socket are left) */
static int l_run_once(lua_State *L) {
  lrt *r = check_rt(L, 1);
  refuse_in_callback(L, r, "rt:run_once()");
  lua_State *prev = enter(r, L);
  int more = tg_runtime_run_once(r->rt);
  leave(r, L, prev);
  lua_pushboolean(L, more);
  return 1;
}

static int l_fd(lua_State *L) {
  int fd = tg_runtime_backend_fd(check_rt(L, 1)->rt);
  if (fd < 0) return luaL_error(L, "rt:fd(): %s", strerror(-fd));
  lua_pushinteger(L, fd);
  return 1;
}

/* rt:timeout() -> ms until rt:run_once() is due; -1: only when the fd is
 * readable (tg_runtime_timeout) */
static int l_timeout(lua_State *L) {
  lua_pushinteger(L, tg_runtime_timeout(check_rt(L, 1)->rt));
  return 1;
}

static int l_generation(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)tg_runtime_generation(check_rt(L, 1)->rt));
  return 1;
}

/* An optional path argument; -1 with err when it holds a NUL byte (no
 * such file can exist: the path C would see is another one). */
static int opt_path(lua_State *L, int idx, const char **path, char *err) {
  size_t n;
  *path = luaL_optlstring(L, idx, NULL, &n);
  if (*path && memchr(*path, '\0', n)) {
    snprintf(err, TG_ERRMSG, "the path contains a NUL byte (at byte %zu)",
             strlen(*path));
    return -1;
  }
  return 0;
}

/* rt:reload([dir]) -> generation | nil, "file:line: message" */
static int l_reload(lua_State *L) {
  lrt *r = check_rt(L, 1);
  const char *dir;
  char err[TG_ERRMSG] = "";
  if (opt_path(L, 2, &dir, err) < 0) return fail(L, err, "EINVAL");
  lua_State *prev = enter(r, L);
  int rc = tg_runtime_load_policies(r->rt, dir, err);
  leave(r, L, prev);
  char code[32];
  if (rc < 0) return fail(L, err, errno_name(rc, code, sizeof code));
  lua_pushinteger(L, (lua_Integer)tg_runtime_generation(r->rt));
  return 1;
}

/* rt:explain(tool, args, opts) -> explanation | nil, err (tg_explain) */
static int l_explain(lua_State *L) {
  lrt *r = check_rt(L, 1);
  tg_call_request req;
  memset(&req, 0, sizeof req);
  char err[TG_ERRMSG] = "";
  int o = copy_opts(L, 4, "rt:explain", explain_opt_names);
  json_box *box = new_box(L);
  if (read_request(L, r, o, "rt:explain", &req, box, err) < 0)
    return fail(L, err, "EINVAL");
  box->j[2] = tg_explain(r->rt, &req, err);
  if (!box->j[2])
    return fail(L, err, tg_tool_exists(r->rt, req.tool) ? "EINVAL"
                                                        : "UNKNOWN_TOOL");
  if (tg__json_push(L, box->j[2]) < 0)
    return fail(L, "the explanation is nested too deeply", "EINVAL");
  box_clear(box);
  return 1;
}

/* rt:test([dir] [, {run = pattern}]) -> report | nil, err: the policy
 * unit tests of dir (default: the policies folder), as `toolgate test`
 * runs them (tg_policy_test). */
static const char *const test_opt_names[] = {"run", NULL};

static int l_test(lua_State *L) {
  lrt *r = check_rt(L, 1);
  const char *dir, *run = NULL;
  char err[TG_ERRMSG] = "";
  if (opt_path(L, 2, &dir, err) < 0) return fail(L, err, "EINVAL");
  int o = copy_opts(L, 3, "rt:test", test_opt_names);
  if (get_opt(L, o, "run") != LUA_TNIL) {
    if (lua_type(L, -1) != LUA_TSTRING || tg__has_nul(L, -1))
      return luaL_error(L, "rt:test: 'run' must be a Lua pattern (a string)");
    run = lua_tostring(L, -1); /* the options copy keeps it */
  }
  json_box *box = new_box(L);
  lua_State *prev = enter(r, L);
  box->j[2] = tg_policy_test(r->rt, dir, run, err);
  leave(r, L, prev);
  if (!box->j[2]) return fail(L, err, "EINVAL");
  if (tg__json_push(L, box->j[2]) < 0)
    return fail(L, "the report is nested too deeply", "EINVAL");
  box_clear(box);
  return 1;
}

/* rt:listen([path]) -> path | nil, err: the control socket (toolgate reload) */
static int l_listen(lua_State *L) {
  lrt *r = check_rt(L, 1);
  const char *path;
  char err[TG_ERRMSG] = "";
  if (opt_path(L, 2, &path, err) < 0) return fail(L, err, "EINVAL");
  lua_State *prev = enter(r, L);
  int rc = tg_runtime_listen(r->rt, path, err);
  leave(r, L, prev); /* re-arms an attached host: the socket's fd is new */
  char code[32];
  if (rc < 0) return fail(L, err, errno_name(rc, code, sizeof code));
  lua_pushstring(L, tg_runtime_control_path(r->rt));
  return 1;
}

static int l_describe(lua_State *L) {
  lrt *r = check_rt(L, 1);
  json_box *b = new_box(L);
  b->j[0] = tg_runtime_describe(r->rt);
  if (!b->j[0] || tg__json_push(L, b->j[0]) < 0)
    return luaL_error(L, "toolgate: the description could not be built "
                         "(out of memory, or nested too deeply)");
  box_clear(b);
  return 1;
}

/* rt:close(): cancels calls still running and frees the runtime; their
 * on_done callbacks do not run. */
static int l_close(lua_State *L) {
  lrt_box *b = luaL_checkudata(L, 1, RT_MT);
  if (!b->r) return 0;
  refuse_in_callback(L, b->r, "rt:close()");
  lrt *r = b->r;
  b->r = NULL;
  close_now(r, L);
  return 0;
}

/* The collector: a runtime no longer referenced may still be inside our
 * API, reached through a handle (handle:wait() runs its loop): then the
 * outermost leave() closes it. */
static int l_gc(lua_State *L) {
  lrt_box *b = luaL_checkudata(L, 1, RT_MT);
  lrt *r = b->r;
  b->r = NULL;
  if (!r) return 0;
  r->attached = 0; /* only when the Lua state closes: luv tidies its own */
  if (r->cur_L) r->close_pending = 1;
  else close_now(r, L);
  return 0;
}

/* ---- attaching to a host's loop (luv) ------------------------------------
 * rt:attach(uv) lets a luv loop (Neovim's vim.loop, luvit, require "luv")
 * turn the runtime's: a luv poll on rt:fd() and one luv timer re-armed
 * from rt:timeout() call rt:run_once(), and every outermost call into the
 * runtime re-arms the timer (leave -> rearm), since it may have started
 * timers or fds. The luv side is Lua (ATTACH_LUA, below), so no C symbol
 * of luv is needed: any luv works. The poll is ref'd only while calls are
 * pending, so it keeps a luvit script alive as rt:run() would, and never
 * an idle one. While attached, the runtime stays alive (the luv callbacks
 * hold it) until rt:detach() or rt:close().
 *
 * With schedule (Neovim: vim.schedule), on_done, on_progress, on_event,
 * on_file_change and the approver are not called inside the luv callback
 * (Neovim's "fast" context, where vim.api raises E5560) but handed to
 * schedule, in order; the approver's answer is then given with rt:answer.
 * An error they raise is raised in the host's context (prefixed as
 * always). Errors the pump catches (a callback's when nothing schedules)
 * go to on_error, else through schedule, else to stderr: a luv callback
 * must not raise (plain luv exits the process then). */

static const char ATTACH_LUA[] =
    "local busy, usage = ...\n"
    "local pcall, error, select, tostring, type =\n"
    "  pcall, error, select, tostring, type\n"
    "local unpack = table.unpack or unpack\n"
    "local stderr = io and io.stderr\n"
    "return function(rt, uv, schedule, on_error)\n"
    "  if type(uv.new_poll) ~= 'function' or type(uv.new_timer) ~= 'function'\n"
    "  then error('rt:attach: give the luv module (vim.loop in Neovim, '\n"
    "    .. 'require \"luv\"): this one has no new_poll or new_timer', 0) end\n"
    "  local run_once, timeout, answer = rt.run_once, rt.timeout, rt.answer\n"
    "  local a, pump = {}\n"
    "  local poll, err = uv.new_poll(rt:fd())\n"
    "  if not poll then error('rt:attach: uv.new_poll: ' .. tostring(err), 0) end\n"
    "  local timer, terr = uv.new_timer()\n"
    "  if not timer then poll:close()\n"
    "    error('rt:attach: uv.new_timer: ' .. tostring(terr), 0) end\n"
    "  local function report(msg)\n"
    "    msg = tostring(msg)\n"
    "    if on_error then\n"
    "      local ok, e = pcall(on_error, msg)\n"
    "      if ok then return end\n"
    "      msg = msg .. ' (and on_error raised: ' .. tostring(e) .. ')'\n"
    "    end\n"
    "    if schedule and pcall(schedule, function() error(msg, 0) end) then\n"
    "      return end\n"
    "    if stderr then stderr:write(msg, '\\n') end\n"
    "  end\n"
    "  pump = function()\n"
    "    local ok, e = pcall(run_once, rt)\n"
    "    if not ok then report(e) end\n"
    "  end\n"
    "  function a.arm()\n"
    "    local ms = timeout(rt)\n"
    "    if ms < 0 then timer:stop() else timer:start(ms, 0, pump) end\n"
    "    if busy(rt) then poll:ref() else poll:unref() end\n"
    "  end\n"
    "  function a.stop()\n"
    "    if not poll:is_closing() then poll:close() end\n"
    "    if not timer:is_closing() then timer:close() end\n"
    "  end\n"
    "  if schedule then\n"
    "    function a.defer(what, fn, ...)\n"
    "      local n, args = select('#', ...), { ... }\n"
    "      schedule(function()\n"
    "        local ok, e = pcall(fn, unpack(args, 1, n))\n"
    "        if not ok then error('toolgate: error in ' .. what ..\n"
    "          ' callback: ' .. tostring(e), 0) end\n"
    "      end)\n"
    "    end\n"
    "    function a.defer_approve(approver, req)\n"
    "      schedule(function()\n"
    "        if busy(rt) == nil then return end\n"
    "        local ok, ans, opts = pcall(approver, req)\n"
    "        local why\n"
    "        if not ok then why = 'error in approver callback: ' .. tostring(ans)\n"
    "        elseif ans == nil then return\n"
    "        elseif pcall(answer, rt, req.approval_id, ans, opts) then return\n"
    "        else why = 'the approver returned a bad answer; ' .. usage end\n"
    "        pcall(answer, rt, req.approval_id, 'reject', 'the approver failed')\n"
    "        error('toolgate: ' .. why, 0)\n"
    "      end)\n"
    "    end\n"
    "  end\n"
    "  timer:unref()\n"
    "  local ok, e = pcall(function()\n"
    "    assert(poll:start('r', function(perr)\n"
    "      if perr then report('toolgate: polling rt:fd() failed: ' ..\n"
    "        tostring(perr)) else pump() end\n"
    "    end))\n"
    "    a.arm()\n"
    "  end)\n"
    "  if not ok then a.stop(); error('rt:attach: ' .. tostring(e), 0) end\n"
    "  return a\n"
    "end\n";

/* busy(rt) -> true while calls are pending, false when idle, nil when the
 * runtime is closed (for ATTACH_LUA). */
static int l_busy(lua_State *L) {
  lrt_box *b = luaL_checkudata(L, 1, RT_MT);
  if (!b->r) return 0;
  lua_pushboolean(L, uv_loop_alive(tg_runtime_loop(b->r->rt)));
  return 1;
}

/* Calls state.attach[fn] protected; 0, or -1 with the error on top. */
static int call_attached(lrt *r, lua_State *L, const char *fn) {
  if (!lua_checkstack(L, 4)) return 0;
  push_state(L, r, "attach"); /* our plain tables: nothing here raises */
  lua_getfield(L, -1, fn);
  lua_remove(L, -2);
  if (lua_pcall(L, 0, 0, 0) == LUA_OK) return 0;
  return -1;
}

/* After an outermost call into the runtime: the host's timer follows
 * rt:timeout() again. A failure (luv raised) is raised by leave(). */
static void rearm(lrt *r, lua_State *L) {
  if (r->attached && call_attached(r, L, "arm") < 0) keep_error(r, L);
}

/* Stops and closes the luv handles; the runtime is left as before attach. */
static void detach_now(lrt *r, lua_State *L) {
  if (!r->attached) return;
  if (call_attached(r, L, "stop") < 0) lua_pop(L, 1); /* closing anyway */
  r->attached = r->deferring = 0;
  lua_rawgeti(L, LUA_REGISTRYINDEX, r->state_ref);
  lua_pushnil(L);
  lua_setfield(L, -2, "attach"); /* an existing key: no allocation */
  lua_pop(L, 1);
}

/* callback() with schedule: fn and its nargs arguments on top become
 * defer(what, fn, ...), which hands them to schedule. */
static int defer_callback(lrt *r, lua_State *L, int nargs, const char *what) {
  int fn = lua_gettop(L) - nargs;
  push_state(L, r, "attach");
  lua_getfield(L, -1, "defer");
  lua_remove(L, -2);
  lua_insert(L, fn);
  lua_pushstring(L, what);
  lua_insert(L, fn + 1);
  if (lua_pcall(L, nargs + 2, 0, 0) == LUA_OK) return 0;
  const char *m = lua_tostring(L, -1);
  lua_pushfstring(L, "toolgate: cannot schedule the %s callback: %s", what,
                  m ? m : "(non-string error)");
  lua_remove(L, -2);
  keep_error(r, L);
  return -1;
}

/* approver_cb with schedule: the approver runs later, from the host's
 * context, and answers with rt:answer; a raise here (schedule failed)
 * rejects at once. */
static int defer_approver_body(lua_State *L) {
  approver_arg *a = lua_touserdata(L, 1);
  push_state(L, a->r, "attach");
  lua_getfield(L, -1, "defer_approve");
  push_state(L, a->r, "approver");
  push_request(L, a->q);
  lua_call(L, 2, 0);
  return 0;
}

static const char *const attach_opt_names[] = {"schedule", "on_error", NULL};

/* Pushes opts[k], which must be a function or nil. */
static void opt_fn(lua_State *L, int o, const char *k) {
  int ty = get_opt(L, o, k);
  if (ty != LUA_TNIL && ty != LUA_TFUNCTION)
    luaL_error(L, "rt:attach: '%s' must be a function (got %s)", k,
               luaL_typename(L, -1));
}

/* rt:attach(uv, {schedule = fn, on_error = fn}) -> rt */
static int l_attach(lua_State *L) {
  lrt *r = check_rt(L, 1);
  if (lua_type(L, 2) != LUA_TTABLE && lua_type(L, 2) != LUA_TUSERDATA)
    return luaL_error(L, "rt:attach: give the luv module (vim.loop in "
                         "Neovim, require \"luv\"), not %s",
                      luaL_typename(L, 2));
  int o = copy_opts(L, 3, "rt:attach", attach_opt_names);
  if (r->attached)
    return luaL_error(L, "rt:attach: already attached; rt:detach() first");
  lua_pushvalue(L, lua_upvalueindex(1)); /* the ATTACH_LUA factory */
  lua_pushvalue(L, 1);
  lua_pushvalue(L, 2);
  opt_fn(L, o, "schedule");
  int deferring = lua_isfunction(L, -1);
  opt_fn(L, o, "on_error");
  lua_call(L, 4, 1); /* raises when luv refuses: nothing is kept then */
  lua_rawgeti(L, LUA_REGISTRYINDEX, r->state_ref);
  lua_insert(L, -2);
  lua_setfield(L, -2, "attach");
  r->attached = 1;
  r->deferring = deferring;
  lua_settop(L, 1);
  return 1;
}

/* rt:detach(): the host's loop no longer turns the runtime. */
static int l_detach(lua_State *L) {
  detach_now(check_rt(L, 1), L);
  return 0;
}

/* Adds attach and detach to the methods table on top; attach's upvalue is
 * the factory ATTACH_LUA returns. */
static void add_attach_methods(lua_State *L) {
  if (luaL_loadbuffer(L, ATTACH_LUA, sizeof ATTACH_LUA - 1, "=toolgate.attach"))
    lua_error(L);
  lua_pushcfunction(L, l_busy);
  lua_pushstring(L, answer_usage);
  lua_call(L, 2, 1);
  lua_pushcclosure(L, l_attach, 1);
  lua_setfield(L, -2, "attach");
  lua_pushcfunction(L, l_detach);
  lua_setfield(L, -2, "detach");
}

/* ---- storage (lua/README.md, "Storage") --------------------------------------
 * The runtime's database: its audit trail, remembered approvals and usage
 * ledger. Each of these reads or writes on the host's thread, after what
 * the runtime queued is written (tg_store_*): the host reads its own
 * writes. With storage off (db = false) they return nil, "storage is off",
 * "ENOTSUP"; a failure of the database nil, message, "EIO".
 * Options are checked before anything is done; a wrong type raises. */

/* The runtime's store, or pushes nil, "storage is off" (returns NULL). */
static tg_store *store_of(lua_State *L, lrt *r) {
  tg_store *st = tg_runtime_store(r->rt);
  if (!st) {
    lua_pushnil(L);
    lua_pushliteral(L, "storage is off (toolgate.new{db = false})");
    lua_pushliteral(L, "ENOTSUP");
  }
  return st;
}

/* A string option of fn (NULL when absent); the copy keeps it alive. */
static const char *sopt_str(lua_State *L, int o, const char *fn,
                            const char *k) {
  int ty = get_opt(L, o, k);
  if (ty != LUA_TNIL && ty != LUA_TSTRING)
    luaL_error(L, "%s: '%s' must be a string (got %s)", fn, k,
               luaL_typename(L, -1));
  char what[64];
  snprintf(what, sizeof what, "'%s'", k);
  const char *v = ty == LUA_TNIL ? NULL : tg__checknonul(L, -1, fn, what);
  lua_pop(L, 1);
  return v;
}

/* A whole number >= 0 (dflt when absent). */
static int64_t sopt_int(lua_State *L, int o, const char *fn, const char *k,
                        int64_t dflt) {
  int64_t v = dflt;
  if (get_opt(L, o, k) != LUA_TNIL) {
    int ok = 0;
    lua_Number n = lua_tonumberx(L, -1, &ok);
    if (!ok || !(n >= 0 && n <= 9e15) || n != floor(n))
      luaL_error(L, "%s: '%s' must be a whole number >= 0", fn, k);
    v = (int64_t)n;
  }
  lua_pop(L, 1);
  return v;
}

/* A time: ms since the epoch, or a string tg_time_parse takes (dir as
 * there: -1 "since", +1 "until"). 0 when absent. */
static int64_t sopt_time(lua_State *L, int o, const char *fn, const char *k,
                         int dir) {
  int64_t v = 0;
  char err[TG_ERRMSG];
  if (get_opt(L, o, k) == LUA_TSTRING) {
    if (tg__has_nul(L, -1) || tg_time_parse(lua_tostring(L, -1), 0, dir, &v,
                                            err) < 0)
      luaL_error(L, "%s: '%s': %s", fn, k,
                 tg__has_nul(L, -1) ? "contains a NUL byte" : err);
    lua_pop(L, 1);
    return v;
  }
  lua_pop(L, 1);
  return sopt_int(L, o, fn, k, 0);
}

/* Pushes the JSON j (freed) or raises. */
static int push_json_result(lua_State *L, cJSON *j, const char *err) {
  if (!j) return fail(L, err, "EIO");
  json_box *b = new_box(L);
  b->j[0] = j;
  if (tg__json_push(L, j) < 0)
    return luaL_error(L, "toolgate: the records are nested too deeply");
  box_clear(b);
  return 1;
}

static const char *const audit_opt_names[] = {
    "session", "tool", "status", "call_id", "since", "after", "limit", NULL};

/* rt:audit{session, tool, status, call_id, since, after, limit} -> records */
static int l_audit(lua_State *L) {
  lrt *r = check_rt(L, 1);
  const char *fn = "rt:audit";
  int o = copy_opts(L, 2, fn, audit_opt_names);
  tg_audit_filter f = {sopt_str(L, o, fn, "session"),
                       sopt_str(L, o, fn, "tool"),
                       sopt_str(L, o, fn, "call_id"),
                       sopt_str(L, o, fn, "status"),
                       sopt_time(L, o, fn, "since", -1),
                       sopt_int(L, o, fn, "after", 0),
                       (size_t)sopt_int(L, o, fn, "limit", 0)};
  tg_store *st = store_of(L, r);
  if (!st) return 3;
  char err[TG_ERRMSG] = "";
  return push_json_result(L, tg_store_audit(st, &f, err), err);
}

/* rt:approvals{all = bool} -> list */
static int l_approvals(lua_State *L) {
  lrt *r = check_rt(L, 1);
  static const char *const names[] = {"all", NULL};
  int o = copy_opts(L, 2, "rt:approvals", names);
  int ty = get_opt(L, o, "all");
  if (ty != LUA_TNIL && ty != LUA_TBOOLEAN)
    return luaL_error(L, "rt:approvals: 'all' must be a boolean");
  int all = lua_toboolean(L, -1);
  tg_store *st = store_of(L, r);
  if (!st) return 3;
  char err[TG_ERRMSG] = "";
  return push_json_result(L, tg_store_approvals(st, all, err), err);
}

static const char *const grant_opt_names[] = {
    "tool", "scope", "args", "arg", "glob", "where", "session", "project",
    "until", NULL};

/* rt:grant{tool, scope, args, arg, glob, where, session, project, until}
 * -> id | nil, err */
static int l_grant(lua_State *L) {
  lrt *r = check_rt(L, 1);
  const char *fn = "rt:grant";
  int o = copy_opts(L, 2, fn, grant_opt_names);
  lanswer a;
  char err[TG_ERRMSG] = "";
  memset(&a, 0, sizeof a);
  if (!o || answer_fields(L, o, &a, err) < 0)
    return luaL_error(L, "%s: %s", fn, err[0] ? err :
                      "takes {tool = name, scope = \"tool\"|\"args\"|"
                      "\"pattern\", args, arg, glob, where = \"session\"|"
                      "\"project\", session, project, until}");
  a.spec.tool = sopt_str(L, o, fn, "tool");
  a.spec.session = sopt_str(L, o, fn, "session");
  a.spec.project = sopt_str(L, o, fn, "project");
  json_box *box = new_box(L);
  if (get_opt(L, o, "args") != LUA_TNIL &&
      !(box->j[0] = object_of(L, lua_gettop(L), r->max_args_bytes, "'args'",
                              err)))
    return luaL_error(L, "%s: %s", fn, err);
  a.spec.args = box->j[0];
  tg_store *st = store_of(L, r);
  if (!st) return 3;
  int64_t id = tg_store_grant(st, &a.spec, err);
  box_clear(box);
  if (id < 0) return fail(L, err, "EIO");
  lua_pushinteger(L, (lua_Integer)id);
  return 1;
}

/* rt:revoke(id) -> true | nil, err */
static int l_revoke(lua_State *L) {
  lrt *r = check_rt(L, 1);
  lua_Integer id = luaL_checkinteger(L, 2);
  tg_store *st = store_of(L, r);
  if (!st) return 3;
  char err[TG_ERRMSG] = "";
  int rc = tg_store_revoke(st, (int64_t)id, err);
  char code[32];
  if (rc < 0) return fail(L, err, errno_name(rc, code, sizeof code));
  lua_pushboolean(L, 1);
  return 1;
}

static const char *const usage_opt_names[] = {
    "session", "turn", "model", "input_tokens", "output_tokens", "cost", "ts",
    NULL};

/* rt:record_usage{model, input_tokens, output_tokens, cost, session, turn,
 * ts} -> true | nil, err */
static int l_record_usage(lua_State *L) {
  lrt *r = check_rt(L, 1);
  const char *fn = "rt:record_usage";
  luaL_checktype(L, 2, LUA_TTABLE);
  int o = copy_opts(L, 2, fn, usage_opt_names);
  tg_usage u = {sopt_str(L, o, fn, "session"), sopt_int(L, o, fn, "turn", 0),
                sopt_str(L, o, fn, "model"),
                sopt_int(L, o, fn, "input_tokens", 0),
                sopt_int(L, o, fn, "output_tokens", 0), 0,
                sopt_time(L, o, fn, "ts", -1)};
  if (get_opt(L, o, "cost") != LUA_TNIL) {
    int ok = 0;
    u.cost = lua_tonumberx(L, -1, &ok);
    if (!ok || !(u.cost >= 0 && u.cost < HUGE_VAL))
      return luaL_error(L, "%s: 'cost' must be a number >= 0", fn);
  }
  if (!u.model) return luaL_error(L, "%s: 'model' is required", fn);
  char err[TG_ERRMSG] = "";
  lua_State *prev = enter(r, L); /* budget alerts and notifications tell */
  int rc = tg_record_usage(r->rt, &u, err);
  leave(r, L, prev);
  char code[32];
  if (rc < 0) return fail(L, err, errno_name(rc, code, sizeof code));
  lua_pushboolean(L, 1);
  return 1;
}

static const char *const sum_opt_names[] = {"session", "model", "period",
                                            "since", "until", NULL};

/* rt:usage{session, model, period | since, until} -> {records,
 * input_tokens, output_tokens, cost, since} | nil, err */
static int l_usage(lua_State *L) {
  lrt *r = check_rt(L, 1);
  const char *fn = "rt:usage";
  int o = copy_opts(L, 2, fn, sum_opt_names);
  tg_usage_filter f = {sopt_str(L, o, fn, "session"),
                       sopt_str(L, o, fn, "model"),
                       sopt_str(L, o, fn, "period"),
                       sopt_time(L, o, fn, "since", -1),
                       sopt_time(L, o, fn, "until", 1)};
  tg_store *st = store_of(L, r);
  if (!st) return 3;
  tg_usage_total t;
  char err[TG_ERRMSG] = "";
  if (tg_store_usage(st, &f, &t, err) < 0) return fail(L, err, "EIO");
  lua_createtable(L, 0, 5);
  lua_pushinteger(L, (lua_Integer)t.records);
  lua_setfield(L, -2, "records");
  lua_pushinteger(L, (lua_Integer)t.input_tokens);
  lua_setfield(L, -2, "input_tokens");
  lua_pushinteger(L, (lua_Integer)t.output_tokens);
  lua_setfield(L, -2, "output_tokens");
  lua_pushnumber(L, t.cost);
  lua_setfield(L, -2, "cost");
  lua_pushinteger(L, (lua_Integer)t.since_ms);
  lua_setfield(L, -2, "since");
  return 1;
}

static const char *const session_opt_names[] = {"id", "project", "title",
                                                "started", NULL};

/* rt:session{id, project, title, started} -> id | nil, err, code: begins
 * a session (a fresh id when none is given) or resumes one */
static int l_session(lua_State *L) {
  lrt *r = check_rt(L, 1);
  const char *fn = "rt:session";
  int o = copy_opts(L, 2, fn, session_opt_names);
  tg_session_spec s = {sopt_str(L, o, fn, "id"), sopt_str(L, o, fn, "project"),
                       sopt_str(L, o, fn, "title"),
                       sopt_time(L, o, fn, "started", -1)};
  tg_store *st = store_of(L, r);
  if (!st) return 3;
  char err[TG_ERRMSG] = "", id[TG_SESSION_ID_MAX], code[32];
  int rc = tg_session_begin(st, &s, id, err);
  if (rc < 0) return fail(L, err, errno_name(rc, code, sizeof code));
  lua_pushstring(L, id);
  return 1;
}

/* rt:end_session(id) -> true | nil, err, code */
static int l_end_session(lua_State *L) {
  lrt *r = check_rt(L, 1);
  luaL_checktype(L, 2, LUA_TSTRING);
  const char *id = tg__checknonul(L, 2, "rt:end_session", "the id");
  tg_store *st = store_of(L, r);
  if (!st) return 3;
  char err[TG_ERRMSG] = "", code[32];
  int rc = tg_session_end(st, id, err);
  if (rc < 0) return fail(L, err, errno_name(rc, code, sizeof code));
  lua_pushboolean(L, 1);
  return 1;
}

static const char *const message_opt_names[] = {
    "session", "role", "content", "tool_calls", "ts", NULL};

/* rt:message{session, role, content, tool_calls, ts} -> id | nil, err,
 * code */
static int l_message(lua_State *L) {
  lrt *r = check_rt(L, 1);
  const char *fn = "rt:message";
  luaL_checktype(L, 2, LUA_TTABLE);
  int o = copy_opts(L, 2, fn, message_opt_names);
  tg_message m = {sopt_str(L, o, fn, "session"), sopt_str(L, o, fn, "role"),
                  sopt_str(L, o, fn, "content"), NULL,
                  sopt_time(L, o, fn, "ts", -1)};
  char err[TG_ERRMSG] = "", why[TG_ERRMSG - 32], code[32];
  json_box *box = new_box(L);
  if (get_opt(L, o, "tool_calls") != LUA_TNIL) {
    if (!lua_istable(L, -1))
      return luaL_error(L, "%s: 'tool_calls' must be a table", fn);
    box->j[0] = tg__json_from_lua_max(L, lua_gettop(L), TG_MESSAGE_MAX, why,
                                      sizeof why);
    if (!box->j[0]) return luaL_error(L, "%s: 'tool_calls': %s", fn, why);
  }
  m.tool_calls = box->j[0];
  tg_store *st = store_of(L, r);
  if (!st) return 3;
  int64_t id = tg_message_record(st, &m, err);
  box_clear(box);
  if (id < 0) return fail(L, err, errno_name((int)id, code, sizeof code));
  lua_pushinteger(L, (lua_Integer)id);
  return 1;
}

/* rt:sessions{limit} -> list | nil, err */
static int l_sessions(lua_State *L) {
  lrt *r = check_rt(L, 1);
  static const char *const names[] = {"limit", NULL};
  int o = copy_opts(L, 2, "rt:sessions", names);
  size_t limit = (size_t)sopt_int(L, o, "rt:sessions", "limit", 0);
  tg_store *st = store_of(L, r);
  if (!st) return 3;
  char err[TG_ERRMSG] = "";
  return push_json_result(L, tg_store_sessions(st, limit, err), err);
}

/* rt:search(query, {session, limit}) -> hits | nil, err, code ("EINVAL":
 * a query FTS5 cannot parse) */
static int l_search(lua_State *L) {
  lrt *r = check_rt(L, 1);
  const char *fn = "rt:search";
  static const char *const names[] = {"session", "limit", NULL};
  luaL_checktype(L, 2, LUA_TSTRING);
  tg_search_filter f = {tg__checknonul(L, 2, fn, "the query"), NULL, 0};
  int o = copy_opts(L, 3, fn, names);
  f.session = sopt_str(L, o, fn, "session");
  f.limit = (size_t)sopt_int(L, o, fn, "limit", 0);
  tg_store *st = store_of(L, r);
  if (!st) return 3;
  char err[TG_ERRMSG] = "", code[32];
  cJSON *hits = NULL;
  int rc = tg_store_search(st, &f, &hits, err);
  if (rc < 0) return fail(L, err, errno_name(rc, code, sizeof code));
  return push_json_result(L, hits, err);
}

static const char *const remember_opt_names[] = {
    "kind", "content", "metadata", "scope", "session", "project", NULL};

/* rt:remember{kind, content, metadata, scope, session, project} -> id |
 * nil, err, code */
static int l_remember(lua_State *L) {
  lrt *r = check_rt(L, 1);
  const char *fn = "rt:remember";
  luaL_checktype(L, 2, LUA_TTABLE);
  int o = copy_opts(L, 2, fn, remember_opt_names);
  tg_memory m = {sopt_str(L, o, fn, "kind"), sopt_str(L, o, fn, "content"),
                 NULL, sopt_str(L, o, fn, "scope"),
                 sopt_str(L, o, fn, "session"), sopt_str(L, o, fn, "project")};
  char err[TG_ERRMSG] = "", why[TG_ERRMSG - 32], code[32];
  json_box *box = new_box(L);
  if (get_opt(L, o, "metadata") != LUA_TNIL) {
    box->j[0] = tg__json_from_lua_max(L, lua_gettop(L), TG_MESSAGE_MAX, why,
                                      sizeof why);
    if (!box->j[0]) return luaL_error(L, "%s: 'metadata': %s", fn, why);
  }
  m.metadata = box->j[0];
  int64_t id = tg_runtime_remember(r->rt, &m, err);
  box_clear(box);
  if (id < 0) return fail(L, err, errno_name((int)id, code, sizeof code));
  lua_pushinteger(L, (lua_Integer)id);
  return 1;
}

/* rt:recall(query, {scope, session, project, limit, min_score,
 * max_tokens}) -> memories | nil, err, code */
static int l_recall(lua_State *L) {
  lrt *r = check_rt(L, 1);
  const char *fn = "rt:recall";
  static const char *const names[] = {"scope", "session", "project", "limit",
                                      "min_score", "max_tokens", NULL};
  luaL_checktype(L, 2, LUA_TSTRING);
  tg_recall_filter f = {tg__checknonul(L, 2, fn, "the query"), NULL, NULL,
                        NULL, 0, 0, 0};
  int o = copy_opts(L, 3, fn, names);
  f.scope = sopt_str(L, o, fn, "scope");
  f.session = sopt_str(L, o, fn, "session");
  f.project = sopt_str(L, o, fn, "project");
  f.limit = (size_t)sopt_int(L, o, fn, "limit", 0);
  if (get_opt(L, o, "min_score") != LUA_TNIL) {
    int ok = 0;
    f.min_score = lua_tonumberx(L, -1, &ok);
    if (!ok || !(f.min_score >= 0 && f.min_score < HUGE_VAL))
      return luaL_error(L, "%s: 'min_score' must be a number >= 0", fn);
  }
  lua_pop(L, 1);
  f.max_tokens = (size_t)sopt_int(L, o, fn, "max_tokens", 0);
  if (!tg_runtime_store(r->rt)) return store_of(L, r), 3;
  char err[TG_ERRMSG] = "";
  cJSON *hits = tg_runtime_recall(r->rt, &f, err);
  if (!hits) return fail(L, err, "EINVAL");
  return push_json_result(L, hits, err);
}

/* rt:db() -> the database's path, or nil when storage is off */
static int l_db(lua_State *L) {
  lrt *r = check_rt(L, 1);
  tg_store *st = tg_runtime_store(r->rt);
  if (st) lua_pushstring(L, tg_store_path(st));
  else lua_pushnil(L);
  return 1;
}

static const luaL_Reg rt_methods[] = {
    {"call", l_call},           {"run", l_run},
    {"run_once", l_run_once},   {"fd", l_fd},
    {"timeout", l_timeout},     {"on_event", l_on_event},
    {"off_event", l_off_event}, {"answer", l_answer},
    {"set_approver", l_set_approver}, {"generation", l_generation},
    {"reload", l_reload},       {"describe", l_describe},
    {"explain", l_explain},     {"listen", l_listen},
    {"test", l_test},
    {"on_file_change", l_on_file_change},
    {"off_file_change", l_off_file_change},
    {"recent_changes", l_recent_changes},
    {"audit", l_audit},         {"approvals", l_approvals},
    {"grant", l_grant},         {"revoke", l_revoke},
    {"record_usage", l_record_usage}, {"usage", l_usage},
    {"session", l_session},     {"end_session", l_end_session},
    {"message", l_message},     {"sessions", l_sessions},
    {"search", l_search},
    {"remember", l_remember},   {"recall", l_recall},
    {"db", l_db},
    {"close", l_close},         {NULL, NULL}};

static const luaL_Reg call_methods[] = {{"cancel", l_call_cancel},
                                        {"wait", l_call_wait},
                                        {"done", l_call_done},
                                        {"outcome", l_call_outcome},
                                        {NULL, NULL}};

/* ---- toolgate.schema ------------------------------------------------------
 * The validator the chain uses, for the host's own values:
 * toolgate.schema(s) compiles s (a table, a boolean or JSON text) and
 * returns a validator; v:validate(value) answers true, or false and the
 * list of failures {path, keyword, message}. */

#define SCHEMA_MT "toolgate.schema"

typedef struct {
  tg_schema *s;
} lschema;

static int l_schema_gc(lua_State *L) {
  lschema *u = luaL_checkudata(L, 1, SCHEMA_MT);
  tg_schema_free(u->s);
  u->s = NULL;
  return 0;
}

/* The schema at idx as JSON (NULL with why in err). Raises nothing. */
static cJSON *schema_json(lua_State *L, int idx, char *err, size_t errlen) {
  if (lua_type(L, idx) == LUA_TSTRING) {
    static const char pre[] = "invalid JSON: ";
    size_t n;
    const char *text = lua_tolstring(L, idx, &n);
    snprintf(err, errlen, "%s", pre); /* errlen is TG_ERRMSG */
    return tg_json_parse(text, n, NULL, err + strlen(pre),
                         errlen - strlen(pre));
  }
  if (lua_istable(L, idx) || lua_isboolean(L, idx))
    return tg__json_from_lua(L, idx, err, errlen);
  snprintf(err, errlen, "the schema must be a table, a boolean or JSON text "
           "(got %s)", luaL_typename(L, idx));
  return NULL;
}

static int l_schema(lua_State *L) {
  lschema *u = lua_newuserdatauv(L, sizeof *u, 0); /* first: it may raise */
  u->s = NULL;
  luaL_setmetatable(L, SCHEMA_MT);
  char err[TG_ERRMSG];
  cJSON *j = schema_json(L, 1, err, sizeof err);
  if (j) u->s = tg_schema_compile(j, err);
  cJSON_Delete(j);
  if (!u->s) return luaL_error(L, "toolgate.schema: %s", err);
  return 1;
}

static int l_schema_validate(lua_State *L) {
  lschema *u = luaL_checkudata(L, 1, SCHEMA_MT);
  if (!u->s) return luaL_error(L, "toolgate.schema: this validator is freed");
  char err[TG_ERRMSG];
  cJSON *v = tg__json_from_lua(L, 2, err, sizeof err);
  if (!v) return luaL_error(L, "toolgate.schema: validate: %s", err);
  cJSON *errors = tg_schema_errors(u->s, v, 0);
  cJSON_Delete(v);
  if (!errors) return luaL_error(L, "toolgate.schema: out of memory");
  if (!errors->child) {
    cJSON_Delete(errors);
    lua_pushboolean(L, 1);
    return 1;
  }
  luaL_checkstack(L, 2, NULL);
  lua_pushboolean(L, 0);
  int rc = tg__json_push(L, errors); /* protected: it does not raise */
  cJSON_Delete(errors);
  if (rc != 0) return luaL_error(L, "toolgate.schema: out of memory");
  return 2;
}

/* The validator's metatable, and toolgate.schema on the module table at
 * the top of the stack. */
static void open_schema(lua_State *L) {
  static const luaL_Reg methods[] = {{"validate", l_schema_validate},
                                     {NULL, NULL}};
  luaL_newmetatable(L, SCHEMA_MT);
  lua_newtable(L);
  luaL_setfuncs(L, methods, 0);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, l_schema_gc);
  lua_setfield(L, -2, "__gc");
  lua_pop(L, 1);
  lua_pushcfunction(L, l_schema);
  lua_setfield(L, -2, "schema");
}

/* toolgate.resolve_path: relative to the host's cwd. */
static int l_resolve_path(lua_State *L) { return tg__lua_resolve_path(L, NULL); }

static const luaL_Reg module_fns[] = {
    {"new", l_new},
    {"patch_files", tg__lua_patch_files},   /* lua/luapaths.c */
    {"resolve_path", l_resolve_path},
    {NULL, NULL}};

int luaopen_toolgate(lua_State *L);
int luaopen_toolgate(lua_State *L) {
  tg__json_open(L);
  luaL_newmetatable(L, RT_MT);
  lua_newtable(L);
  luaL_setfuncs(L, rt_methods, 0);
  add_attach_methods(L);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, l_gc);
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
  luaL_newmetatable(L, BOX_MT);
  lua_pushcfunction(L, box_gc);
  lua_setfield(L, -2, "__gc");
  lua_pop(L, 1);
  luaL_newlib(L, module_fns);
  open_schema(L);
  tg__json_push_null(L);
  lua_setfield(L, -2, "null");
  lua_pushstring(L, TG_VERSION);
  lua_setfield(L, -2, "version");
  lua_pushstring(L, tg_event_types());
  lua_setfield(L, -2, "event_types");
  lua_createtable(L, 0, TG_E__COUNT - 1); /* name -> its line of doc */
  for (int i = TG_E_NONE + 1; i < TG_E__COUNT; i++) {
    lua_pushstring(L, tg_error_code_doc((tg_error_code)i));
    lua_setfield(L, -2, tg_error_code_name((tg_error_code)i));
  }
  lua_setfield(L, -2, "error_codes");
  tg__lm_conventions(L);
  return 1;
}

/* ---- the conventions of Lua C modules (issue 10) ------------------------
 * toolgate._VERSION (lua-cjson, luasocket); `local rt <close> =
 * toolgate.new{}` (Lua 5.4); argument errors that name the method even
 * through pcall (lua/luaarg.h); and rt:tool (lmodule_tool.c). */

void tg__lm_conventions(lua_State *L) {
  int mod = lua_gettop(L);
  lua_pushstring(L, tg_version());
  lua_setfield(L, mod, "_VERSION");
  tg__arg_names(L, mod);
  luaL_getmetatable(L, RT_MT);
  lua_getfield(L, -1, "__index");              /* mt, methods */
  lua_pushcfunction(L, tg__lm_tool);
  lua_setfield(L, -2, "tool");
  tg__lm_chat_methods(L, lua_gettop(L));       /* lmodule_chat.c */
  lua_getfield(L, -1, "close");
  lua_setfield(L, -3, "__close");              /* closes like rt:close() */
  tg__arg_names(L, -2);                        /* __gc; then the methods: */
  tg__arg_names(L, -1);                        /* close is 'close' */
  luaL_getmetatable(L, CALL_MT);
  lua_getfield(L, -1, "__methods");
  tg__arg_names(L, -2);
  tg__arg_names(L, -1);
  lua_settop(L, mod);
}

/* ---- what lmodule_tool.c uses of the runtime object (lmodule.h) ------- */

lrt *tg__lm_check_rt(lua_State *L, int idx) { return check_rt(L, idx); }
tg_runtime *tg__lm_runtime(lrt *r) { return r->rt; }
lua_State *tg__lm_thread(lrt *r) { return r->cur_L; }

void tg__lm_push_state(lua_State *L, lrt *r, const char *field) {
  lua_rawgeti(L, LUA_REGISTRYINDEX, r->state_ref);
  lua_getfield(L, -1, field);
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushvalue(L, -1);
    lua_setfield(L, -3, field);
  }
  lua_remove(L, -2);
}

int tg__lm_copy_opts(lua_State *L, int idx, const char *fn,
                     const char *const *names) {
  return copy_opts(L, idx, fn, names);
}

int tg__lm_fail(lua_State *L, const char *err, const char *code) {
  return fail(L, err, code);
}

/* ---- what lmodule_chat.c uses (lmodule.h) -------------------------------- */

lua_State *tg__lm_enter(lrt *r, lua_State *L) { return enter(r, L); }
void tg__lm_leave(lrt *r, lua_State *L, lua_State *prev) { leave(r, L, prev); }

int tg__lm_protect(lrt *r, lua_State *L, lua_CFunction body, void *arg) {
  return protect(r, L, body, arg);
}

int tg__lm_callback(lrt *r, lua_State *L, int nargs, const char *what) {
  return callback(r, L, nargs, 0, what);
}

cJSON **tg__lm_box(lua_State *L) { return &new_box(L)->j[0]; }

void tg__lm_push_json(lua_State *L, cJSON *v, const char *fn) {
  json_box *b = new_box(L);
  b->j[0] = v;
  if (!v) {
    lua_pop(L, 1);
    lua_pushnil(L);
    return;
  }
  if (tg__json_push(L, v) < 0) luaL_error(L, "%s: out of memory", fn);
  box_clear(b);
  lua_remove(L, -2); /* the box */
}
