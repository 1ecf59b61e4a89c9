/*
 * tools.c — rt:tool{name, run = function(args, ctx) ... end}: tools
 * written in the host's own Lua, registered on the public C tool API
 * (tg_tool_register) and served through the same chain as every tool.
 * This file reads the definition and is the tool's C side (start,
 * cancel); tool_run.c runs each attempt.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tool.h"
#include "lua/luaraw.h"
#include "lua/luajson.h"
#include "lua/luaarg.h" /* after lauxlib: argument errors name the method */

static void tool_start(tg_exec *ex, const cJSON *args, void *ud) {
  htool *t = ud;
  hrun *h = calloc(1, sizeof *h);
  if (!h) {
    tg_exec_finish_error(ex, NULL, tg_error_code_name(TG_E_NOMEM),
                         "out of memory starting a host tool", 0);
    return;
  }
  h->t = t;
  h->ex = ex;
  h->cur = h->total = -1;
  h->next = t->runs;
  t->runs = h;
  run_wake w = {h, WAKE_START, args, NULL, NULL};
  tg__lm_run_resume_with(h, &w);
}

/* A timeout or a cancel: run gets to see it (see the top comment). */
static void tool_cancel(tg_exec *ex, void *ud) {
  htool *t = ud;
  hrun *h = t->runs;
  while (h && h->ex != ex) h = h->next;
  if (!h || (h->flags & (RUN_CANCELLED | RUN_ENDED))) return;
  h->flags |= RUN_CANCELLED;
  if (h->flags & RUN_RESUMED) return; /* it ends when run returns or yields */
  if (!tg__lm_thread(t->r)) { /* closing: no host code runs now */
    tg__lm_run_set_error(h, tg_error_code_name(TG_E_CANCELLED), "cancelled", 0);
    tg__lm_run_end(h);
    return;
  }
  if (h->flags & RUN_NESTED) { /* its (cancelled) outcome resumes run */
    tg_exec_call_cancel(ex, h->call_id);
    return;
  }
  if (!(h->flags & RUN_WAITING)) return; /* a resume under way ends it */
  uv_timer_stop(&h->timer);
  int kind = h->wait_kind;
  h->flags &= ~RUN_WAITING;
  if (kind == WAIT_CALL) { /* the call was not started: it will not be */
    free(h->call_tool);
    cJSON_Delete(h->call_args);
    h->call_tool = NULL;
    h->call_args = NULL;
    run_wake w = {h, WAKE_FAILED, NULL, NULL,
              h->flags & RUN_AS_EXEC ? "ctx.exec: the tool is being cancelled"
                                     : "ctx.call: the tool is being cancelled"};
    tg__lm_run_resume_with(h, &w);
    return;
  }
  tg__lm_run_resume(h, kind == WAIT_SLEEP ? WAKE_FALSE : WAKE_NONE);
}

/* ---- rt:tool{...} ---------------------------------------------------------------- */

static const char *const tool_opt_names[] = {
    "name", "description", "schema", "read_only", "timeout_ms",
    "max_result_bytes", "retry", "run", NULL};
static const char *const retry_opt_names[] = {
    "attempts", "initial_ms", "max_ms", "multiplier", "jitter", NULL};

/* A number option within lo..hi (whole when whole is set); dflt when
 * absent. */
static double opt_num(lua_State *L, int o, const char *k, double dflt,
                      double lo, double hi, int whole) {
  lua_getfield(L, o, k);
  double v = dflt;
  if (!lua_isnil(L, -1)) {
    int isnum = 0;
    v = (double)lua_tonumberx(L, -1, &isnum);
    if (!isnum || !(v >= lo && v <= hi) || (whole && v != floor(v))) {
      char range[64]; /* lua_pushfstring has no %g */
      snprintf(range, sizeof range, "from %g to %g", lo, hi);
      luaL_error(L, "rt:tool: '%s' must be a %s %s", k,
                 whole ? "whole number" : "number", range);
    }
  }
  lua_pop(L, 1);
  return v;
}

static void opt_type(lua_State *L, int o, const char *k, int type,
                     const char *what) {
  lua_getfield(L, o, k);
  if (!lua_isnil(L, -1) && lua_type(L, -1) != type)
    luaL_error(L, "rt:tool: '%s' must be %s (got %s)", k, what,
               luaL_typename(L, -1));
  lua_pop(L, 1);
}

static void read_retry(lua_State *L, int o, tg_tool_def *def) {
  lua_getfield(L, o, "retry");
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    return;
  }
  if (!lua_istable(L, -1))
    luaL_error(L, "rt:tool: 'retry' must be a table {attempts=, initial_ms=, "
                  "max_ms=, multiplier=, jitter=}");
  int ro = tg__lm_copy_opts(L, -1, "rt:tool retry", retry_opt_names);
  def->retry_attempts = (int)opt_num(L, ro, "attempts", 1, 1, 100, 1);
  def->retry_initial_ms = (uint64_t)opt_num(L, ro, "initial_ms", 200, 0, 9e15, 1);
  def->retry_max_ms = (uint64_t)opt_num(L, ro, "max_ms", 10000, 0, 9e15, 1);
  def->retry_multiplier = opt_num(L, ro, "multiplier", 2, 1, 100, 0);
  def->retry_jitter = opt_num(L, ro, "jitter", 0, 0, 1, 0);
  lua_pop(L, 2);
}

/* Reads every option but the schema; raises on a wrong one. */
static void read_def(lua_State *L, int o, tg_tool_def *def) {
  def->name = tg__lm_opt_string(L, o, "rt:tool", "name");
  if (!def->name || !*def->name)
    luaL_error(L, "rt:tool: 'name' must be a non-empty string");
  opt_type(L, o, "run", LUA_TFUNCTION, "a function");
  lua_getfield(L, o, "run");
  if (lua_isnil(L, -1))
    luaL_error(L, "rt:tool '%s': 'run' must be a function (got nil)",
               def->name);
  lua_pop(L, 1);
  def->description = tg__lm_opt_string(L, o, "rt:tool", "description");
  opt_type(L, o, "read_only", LUA_TBOOLEAN, "a boolean");
  opt_type(L, o, "schema", LUA_TTABLE, "a table (a JSON Schema)");
  lua_getfield(L, o, "read_only");
  def->read_only = lua_toboolean(L, -1);
  lua_pop(L, 1);
  def->timeout_ms = (uint64_t)opt_num(L, o, "timeout_ms", 0, 0, 9e15, 1);
  def->max_result_bytes =
      (size_t)opt_num(L, o, "max_result_bytes", 0, 0, 9e15, 1);
  read_retry(L, o, def);
  def->start = tool_start;
  def->cancel = tool_cancel;
}

/* state.host_tools[name] = {htool, run}; returns the htool. */
static htool *anchor_tool(lua_State *L, lrt *r, int o, const char *name) {
  size_t n = strlen(name) + 1;
  tg__lm_push_state(L, r, TOOLS_FIELD);
  lua_createtable(L, 2, 0);
  htool *t = lua_newuserdatauv(L, sizeof *t + n, 0);
  memset(t, 0, sizeof *t);
  t->r = r;
  memcpy(t->name, name, n);
  lua_rawseti(L, -2, 1);
  lua_getfield(L, o, "run");
  lua_rawseti(L, -2, 2);
  lua_setfield(L, -2, name);
  lua_pop(L, 1);
  return t;
}

static void unanchor_tool(lua_State *L, lrt *r, const char *name) {
  tg__lm_push_state(L, r, TOOLS_FIELD);
  lua_pushnil(L);
  lua_setfield(L, -2, name);
  lua_pop(L, 1);
}

/* rt:tool{name, run, description?, schema?, read_only?, timeout_ms?,
 * max_result_bytes?, retry?} -> true | nil, message, code */
int tg__lm_tool(lua_State *L) {
  lrt *r = tg__lm_check_rt(L, 1);
  luaL_checktype(L, 2, LUA_TTABLE);
  int o = tg__lm_copy_opts(L, 2, "rt:tool", tool_opt_names);
  tg_tool_def def;
  memset(&def, 0, sizeof def);
  read_def(L, o, &def);
  tg_runtime *rt = tg__lm_runtime(r);
  char err[TG_ERRMSG];
  if (tg_tool_exists(rt, def.name)) {
    snprintf(err, sizeof err, "rt:tool: a tool named '%s' already exists "
             "(host tools live as long as the runtime)", def.name);
    return tg__lm_fail(L, err, "EEXIST");
  }
  def.ud = anchor_tool(L, r, o, def.name);
  lua_getfield(L, o, "schema");
  cJSON *schema = NULL;
  if (!lua_isnil(L, -1)) { /* last: from here nothing raises until freed */
    char why[TG_ERRMSG / 2];
    schema = tg__json_from_lua(L, -1, why, sizeof why);
    if (!schema || !cJSON_IsObject(schema)) {
      cJSON_Delete(schema);
      unanchor_tool(L, r, def.name);
      return luaL_error(L, "rt:tool '%s': the schema must be a JSON object%s%s",
                        def.name, schema ? "" : ": ", schema ? "" : why);
    }
  }
  def.schema = schema;
  int rc = tg_tool_register(rt, &def, err);
  cJSON_Delete(schema);
  if (rc == 0) {
    lua_pushboolean(L, 1);
    return 1;
  }
  unanchor_tool(L, r, def.name);
  if (rc == -EINVAL) return luaL_error(L, "rt:tool: %s", err);
  char code[32];
  return tg__lm_fail(L, err, tg__lm_errno_name(rc, code, sizeof code));
}
