/*
 * runtime.c — the runtime object of the host module: toolgate.new,
 * rt:close and the collector, turning the loop (rt:run, rt:run_once, the
 * fd and timeout a host's own loop waits on), and entering and leaving
 * the runtime around anything that may run host code: the calling thread
 * is remembered for callbacks, a callback's raise is kept and raised
 * again from the method the host called (lua_module.h says why).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lua_module.h"
#include "lua/luaraw.h"
#include "lua/luacall.h"
#include "lua/luajson.h"
#include <uv.h>
#include "lua/luaarg.h" /* after lauxlib: argument errors name the method */

lrt *tg__lm_check_rt(lua_State *L, int idx) {
  lrt_box *b = luaL_checkudata(L, idx, RT_MT);
  if (!b->r) luaL_error(L, "toolgate: this runtime is closed");
  return b->r;
}

void tg__lm_unref(lua_State *L, int *ref) {
  if (*ref != LUA_NOREF) luaL_unref(L, LUA_REGISTRYINDEX, *ref);
  *ref = LUA_NOREF;
}

void tg__lm_state(lua_State *L, lrt *r, const char *field) {
  lua_rawgeti(L, LUA_REGISTRYINDEX, r->state_ref);
  lua_getfield(L, -1, field);
  lua_remove(L, -2);
}

/* Keeps the error on top of the stack (popped) if it is the first since
 * the host entered, and stops the loop so it is raised soon. */
void tg__lm_keep_error(lrt *r, lua_State *L) {
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
  tg__lm_state(L, r, "calls");
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
    if (r->state_ref != LUA_NOREF)
      tg__lm_detach_now(r, L); /* before the fd goes */
    tg_runtime_free(r->rt);
  }
  tg__lm_unref(L, &r->state_ref);
  tg__lm_unref(L, &r->err_ref);
  free(r);
}

/* Remembers the calling thread; returns the previous one to restore. */
lua_State *tg__lm_enter(lrt *r, lua_State *L) {
  lua_State *prev = r->cur_L;
  r->cur_L = L;
  return prev;
}

/* Restores the previous thread. The outermost entry then closes a
 * runtime that was collected meanwhile (r is freed: a caller that does not
 * hold the runtime on its stack must not touch r after this) and raises a
 * callback's error. */
void tg__lm_leave(lrt *r, lua_State *L, lua_State *prev) {
  r->cur_L = prev;
  if (prev) return;
  if (!r->close_pending)
    tg__lm_rearm(r, L); /* the call may have armed timers */
  int raise = take_error(r, L);
  if (r->close_pending) close_now(r, L);
  if (raise) lua_error(L);
}

/* libuv's loop is not re-entrant: a callback may start calls, cancel
 * them or answer approvals, but not run the loop (or close the runtime,
 * which runs it) — that is for the code that called rt:run / wait. */
void tg__lm_refuse_in_callback(lua_State *L, lrt *r, const char *fn) {
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
int tg__lm_protect(lrt *r, lua_State *L, lua_CFunction body, void *arg) {
  int top = lua_gettop(L), rc;
  if (!lua_checkstack(L, 4)) {
    uv_stop(tg_runtime_loop(r->rt));
    return -1;
  }
  rc = tg__lua_pcall_c(L, body, arg, 0);
  if (rc != LUA_OK) tg__lm_keep_error(r, L);
  lua_settop(L, top);
  return rc == LUA_OK ? 0 : -1;
}

/* Calls the host function below nargs arguments (inside a protected
 * body); an error it raises is kept, prefixed with what it was, and nres
 * nils stand for its results. Returns 0, or -1 when it raised. */
int tg__lm_callback(lrt *r, lua_State *L, int nargs, int nres,
                    const char *what) {
  if (r->deferring && nres == 0)
    return tg__lm_defer_callback(r, L, nargs, what);
  if (lua_pcall(L, nargs, nres, 0) == LUA_OK) return 0;
  lua_pushfstring(L, "toolgate: error in %s callback: %s", what,
                  tg__lua_error_text(L, -1, "(non-string error)"));
  lua_remove(L, -2);
  tg__lm_keep_error(r, L);
  for (int i = 0; i < nres; i++) lua_pushnil(L);
  return -1;
}

/* ---- what the other parts reach the runtime object by ------------------ */

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

/* ---- toolgate.new, rt:close ------------------------------------------- */

/* toolgate.new{...} -> rt | nil, err */
int tg__lm_new(lua_State *L) {
  tg_config cfg;
  int o = tg__lm_copy_opts(L, 1, "toolgate.new", tg__lm_new_opt_names);
  tg__lm_read_config(L, o, &cfg);
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
  if (tg__lm_get_opt(L, o, "approve") != LUA_TNIL)
    tg__lm_set_approver(L, r, lua_gettop(L), "toolgate.new");
  tg__lm_chat_new(L, r, o); /* models: after creation, like set_models */
  lua_settop(L, self);
  return 1;
}

/* rt:close(): cancels calls still running and frees the runtime; their
 * on_done callbacks do not run. */
static int l_close(lua_State *L) {
  lrt_box *b = luaL_checkudata(L, 1, RT_MT);
  if (!b->r) return 0;
  tg__lm_refuse_in_callback(L, b->r, "rt:close()");
  lrt *r = b->r;
  b->r = NULL;
  close_now(r, L);
  return 0;
}

/* The collector: a runtime no longer referenced may still be inside our
 * API, reached through a handle (handle:wait() runs its loop): then the
 * outermost tg__lm_leave() closes it. */
int tg__lm_gc(lua_State *L) {
  lrt_box *b = luaL_checkudata(L, 1, RT_MT);
  lrt *r = b->r;
  b->r = NULL;
  if (!r) return 0;
  r->attached = 0; /* only when the Lua state closes: luv tidies its own */
  if (r->cur_L) r->close_pending = 1;
  else close_now(r, L);
  return 0;
}

/* ---- the loop ------------------------------------------------------------ */

static int run_loop(lua_State *L, uv_run_mode mode) {
  lrt *r = tg__lm_check_rt(L, 1);
  tg__lm_refuse_in_callback(
      L, r, mode == UV_RUN_DEFAULT ? "rt:run()" : "rt:run_once()");
  lua_State *prev = tg__lm_enter(r, L);
  int more = uv_run(tg_runtime_loop(r->rt), mode);
  tg__lm_leave(r, L, prev);
  lua_pushboolean(L, more);
  return 1;
}

static int l_run(lua_State *L) { return run_loop(L, UV_RUN_DEFAULT); }

/* rt:run_once() -> whether calls are pending (tg_runtime_run_once: polls
 * even when only the watch and the control socket are left) */
static int l_run_once(lua_State *L) {
  lrt *r = tg__lm_check_rt(L, 1);
  tg__lm_refuse_in_callback(L, r, "rt:run_once()");
  lua_State *prev = tg__lm_enter(r, L);
  int more = tg_runtime_run_once(r->rt);
  tg__lm_leave(r, L, prev);
  lua_pushboolean(L, more);
  return 1;
}

static int l_fd(lua_State *L) {
  int fd = tg_runtime_backend_fd(tg__lm_check_rt(L, 1)->rt);
  if (fd < 0) return luaL_error(L, "rt:fd(): %s", strerror(-fd));
  lua_pushinteger(L, fd);
  return 1;
}

/* rt:timeout() -> ms until rt:run_once() is due; -1: only when the fd is
 * readable (tg_runtime_timeout) */
static int l_timeout(lua_State *L) {
  lua_pushinteger(L, tg_runtime_timeout(tg__lm_check_rt(L, 1)->rt));
  return 1;
}

static int l_describe(lua_State *L) {
  lrt *r = tg__lm_check_rt(L, 1);
  json_box *b = tg__lm_new_box(L);
  b->j[0] = tg_runtime_describe(r->rt);
  if (!b->j[0] || tg__json_push(L, b->j[0]) < 0)
    return luaL_error(L, "toolgate: the description could not be built "
                         "(out of memory, or nested too deeply)");
  tg__lm_box_clear(b);
  return 1;
}

const luaL_Reg tg__lm_runtime_methods[] = {
    {"run", l_run},
    {"run_once", l_run_once},
    {"fd", l_fd},
    {"timeout", l_timeout},
    {"describe", l_describe},
    {"close", l_close},
    {NULL, NULL}};
