/*
 * calls.c — rt:call and its handle (wait, cancel, done, outcome, id), the
 * call's end and progress delivered to on_done / on_progress, and
 * rt:explain, which reads the same request. What a running call needs is
 * one entry of the runtime's `calls` table (lua_module.h, ownership).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lua_module.h"
#include "lua/luaraw.h"
#include "lua/luajson.h"
#include "lua/luaoutcome.h"
#include <uv.h>
#include "lua/luaarg.h" /* after lauxlib: argument errors name the method */

typedef struct {
  lrt *r;
  lcall *c;
  const tg_outcome *o;
} done_arg;

/* Pushes the call's entry (or nil) and takes it out of `calls`. */
static void untrack_call(lua_State *L, lrt *r, const char *id) {
  tg__lm_state(L, r, "calls");
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
  tg__lm_callback(d->r, L, 1, 0, "on_done");
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
  /* the handle may be collected after */
  tg__lm_protect(r, r->cur_L, done_body, &d);
}

/* A call's progress event, for the protected body that delivers it. */
typedef struct {
  lrt *r;
  const tg_event *ev;
} event_arg;

static void deliver_progress(lrt *r, lua_State *L, const tg_event *ev) {
  tg__lm_state(L, r, "calls");
  lua_getfield(L, -1, ev->call_id);
  if (lua_istable(L, -1)) {
    lua_rawgeti(L, -1, ENTRY_ON_PROGRESS);
    if (!lua_isnil(L, -1)) {
      tg__json_push(L, ev->data);
      tg__lm_callback(r, L, 1, 0, "on_progress");
    } else {
      lua_pop(L, 1);
    }
  }
  lua_pop(L, 2);
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
  tg__lm_protect(r, r->cur_L, progress_body, &a);
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
  int ty = tg__lm_get_opt(L, o, "id");
  if (ty != LUA_TNIL && ty != LUA_TSTRING)
    luaL_error(L, "%s: 'id' must be a string", fn);
  req->id = tg__checknonul(L, -1, fn, "'id'");
  if (req->id && strlen(req->id) >= sizeof ((lcall *)0)->id)
    luaL_error(L, "%s: 'id' is longer than 127 bytes", fn);
  ty = tg__lm_get_opt(L, o, "session");
  if (ty != LUA_TNIL && ty != LUA_TSTRING)
    luaL_error(L, "%s: 'session' must be a string", fn);
  req->session = tg__checknonul(L, -1, fn, "'session'");
  if (tg__lm_get_opt(L, o, "turn") != LUA_TNIL) {
    lua_Number n = lua_tonumber(L, -1);
    /* checked as a double first: casting NaN or 1e300 is undefined */
    if (lua_type(L, -1) != LUA_TNUMBER || !(n == floor(n) && fabs(n) <= 9e15))
      luaL_error(L, "%s: 'turn' must be a whole number", fn);
    req->turn = (int64_t)n;
  }
  const char *cbs[] = {"on_done", "on_progress"};
  for (int i = 0; i < 2; i++) {
    ty = tg__lm_get_opt(L, o, cbs[i]);
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
    box->j[0] = tg__lm_object_of(L, 3, r->max_args_bytes, "args", err);
    if (!box->j[0]) return -1;
    req->args = box->j[0];
  } else if (ty != LUA_TNIL && ty != LUA_TNONE) {
    snprintf(err, TG_ERRMSG, "args must be a table or a JSON string (got %s)",
             luaL_typename(L, 3));
    return -1;
  }
  if (tg__lm_get_opt(L, o, "metadata") != LUA_TNIL) {
    box->j[1] = tg__lm_object_of(L, -1, 0, "metadata", err);
    if (!box->j[1]) return -1;
    req->metadata = box->j[1];
  }
  lua_pop(L, 1);
  return 0;
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
  tg__lm_state(L, r, "calls");
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
  tg__lm_get_opt(L, o, "on_done");
  lua_rawseti(L, -2, ENTRY_ON_DONE);
  tg__lm_get_opt(L, o, "on_progress");
  lua_rawseti(L, -2, ENTRY_ON_PROGRESS);
  lua_rawset(L, calls);
}

/* rt:call(tool, args, opts) -> handle | nil, err */
static int l_call(lua_State *L) {
  lrt *r = tg__lm_check_rt(L, 1);
  tg_call_request req;
  memset(&req, 0, sizeof req);
  char err[TG_ERRMSG] = "";
  int o = tg__lm_copy_opts(L, 4, "rt:call", call_opt_names);
  json_box *box = tg__lm_new_box(L);
  if (read_request(L, r, o, "rt:call", &req, box, err) < 0)
    return tg__lm_fail(L, err, "EINVAL");
  lcall *c = new_handle(L);
  int h = lua_gettop(L);
  if (name_call(L, r, c, req.id, err) < 0) return tg__lm_fail(L, err, "EEXIST");
  int calls = h + 1, key = h + 2;
  req.id = c->id;
  track_call(L, calls, key, h, o);
  c->owner = r;
  if (tg__lm_get_opt(L, o, "on_progress") != LUA_TNIL) {
    req.on_progress = progress_cb;
    req.events_ud = r;
  }
  /* Nothing between enter and leave may raise (cur_L would stay set). */
  lua_State *prev = tg__lm_enter(r, L);
  c->refused = err;
  int rc = tg_call_start(r->rt, &req, done_cb, c, err);
  c->refused = NULL;
  if (rc < 0 || c->was_refused) { /* untrack, without allocating */
    c->owner = NULL;
    lua_pushvalue(L, key);
    lua_pushnil(L);
    lua_rawset(L, calls);
  }
  tg__lm_box_clear(box);
  tg__lm_leave(r, L, prev);
  char code[32];
  if (c->was_refused) return tg__lm_fail(L, err, "UNKNOWN_TOOL");
  if (rc < 0)
    return tg__lm_fail(L, err, tg__lm_errno_name(rc, code, sizeof code));
  lua_pushvalue(L, h);
  return 1;
}

static lcall *check_call(lua_State *L) {
  return luaL_checkudata(L, 1, CALL_MT);
}

static int l_call_cancel(lua_State *L) {
  lcall *c = check_call(L);
  if (c->done || !c->owner)
    return tg__lm_fail(L, "the call has already ended", "ENOENT");
  lrt *r = c->owner;
  lua_State *prev = tg__lm_enter(r, L);
  int rc = tg_call_cancel(r->rt, c->id);
  tg__lm_leave(r, L, prev); /* r may be gone now (see leave) */
  if (rc < 0)
    return tg__lm_fail(
        L, "the call is past the point where it can be cancelled", "ENOENT");
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
    tg__lm_refuse_in_callback(L, r, "handle:wait()");
    lua_State *prev = tg__lm_enter(r, L);
    int more = uv_run(tg_runtime_loop(r->rt), UV_RUN_ONCE);
    tg__lm_leave(r, L, prev); /* r may be gone now (see leave) */
    if (!more && !c->done)
      return luaL_error(L, "toolgate: call %s cannot finish: nothing is left "
                           "to run (bug)", c->id);
  }
  if (c->outcome_ref == LUA_NOREF)
    return tg__lm_fail(L, "the runtime was closed before the call ended",
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
  if (tg__lm_is_str(L, 2, "id")) {
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
  tg__lm_unref(L, &c->outcome_ref);
  return 0;
}

/* rt:explain(tool, args, opts) -> explanation | nil, err (tg_explain) */
static int l_explain(lua_State *L) {
  lrt *r = tg__lm_check_rt(L, 1);
  tg_call_request req;
  memset(&req, 0, sizeof req);
  char err[TG_ERRMSG] = "";
  int o = tg__lm_copy_opts(L, 4, "rt:explain", explain_opt_names);
  json_box *box = tg__lm_new_box(L);
  if (read_request(L, r, o, "rt:explain", &req, box, err) < 0)
    return tg__lm_fail(L, err, "EINVAL");
  box->j[2] = tg_explain(r->rt, &req, err);
  if (!box->j[2])
    return tg__lm_fail(L, err, tg_tool_exists(r->rt, req.tool) ? "EINVAL"
                                                        : "UNKNOWN_TOOL");
  if (tg__json_push(L, box->j[2]) < 0)
    return tg__lm_fail(L, "the explanation is nested too deeply", "EINVAL");
  tg__lm_box_clear(box);
  return 1;
}

const luaL_Reg tg__lm_call_methods[] = {
    {"call", l_call},
    {"explain", l_explain},
    {NULL, NULL}};

static const luaL_Reg handle_methods[] = {{"cancel", l_call_cancel},
                                          {"wait", l_call_wait},
                                          {"done", l_call_done},
                                          {"outcome", l_call_outcome},
                                          {NULL, NULL}};

void tg__lm_calls_open(lua_State *L) {
  luaL_newmetatable(L, CALL_MT);
  lua_newtable(L);
  luaL_setfuncs(L, handle_methods, 0);
  lua_setfield(L, -2, "__methods");
  lua_pushcfunction(L, l_call_index);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, l_call_gc);
  lua_setfield(L, -2, "__gc");
  lua_pop(L, 1);
}
