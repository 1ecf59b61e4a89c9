/*
 * chat.c — the chat side for hosts (lua/README.md "The chat side"): turns
 * and chats (rt:turn_begin, rt:chat_begin, rt:chat_end), routing
 * (rt:route, rt:set_models, rt:model_unavailable, toolgate.new's
 * `models`), budgets (rt:budget_status, rt:budgets) and the clock
 * (rt:set_clock, rt:now) — each a thin wrapper over toolgate.h.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "chat.h"
#include "lua/luaraw.h"
#include "lua/luajson.h"
#include "lua/luaarg.h" /* after lauxlib: argument errors name the method */

lchat *tg__lm_chat_of(lua_State *L, lrt *r) {
  tg__lm_push_state(L, r, CHAT_FIELD);
  lua_rawgeti(L, -1, 1);
  lchat *c = lua_touserdata(L, -1);
  if (!c) {
    lua_pop(L, 1);
    c = lua_newuserdatauv(L, sizeof *c, 0);
    memset(c, 0, sizeof *c);
    c->r = r;
    lua_rawseti(L, -2, 1);
  } else {
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  return c;
}

/* ---- the clock ------------------------------------------------------------ */

static int64_t lua_clock(void *ud) { return ((lchat *)ud)->clock_ms; }

/* rt:set_clock(ms | nil): the runtime's time stands at ms (ms since the
 * epoch) until set again; nil: the system clock. */
static int l_set_clock(lua_State *L) {
  lrt *r = tg__lm_check_rt(L, 1);
  if (lua_isnoneornil(L, 2)) {
    tg_runtime_set_clock(tg__lm_runtime(r), NULL, NULL);
    return 0;
  }
  lua_Number ms = luaL_checknumber(L, 2);
  if (!(ms == floor(ms) && fabs(ms) <= 9e15))
    return luaL_argerror(L, 2, "a whole number of ms since the epoch expected");
  lchat *c = tg__lm_chat_of(L, r);
  c->clock_ms = (int64_t)ms;
  lua_State *prev = tg__lm_enter(r, L); /* expiring notifications tells */
  tg_runtime_set_clock(tg__lm_runtime(r), lua_clock, c);
  tg__lm_leave(r, L, prev);
  return 0;
}

static int l_now(lua_State *L) {
  lua_pushinteger(
      L, (lua_Integer)tg_runtime_now(tg__lm_runtime(tg__lm_check_rt(L, 1))));
  return 1;
}

/* ---- turns and chats ------------------------------------------------------- */

/* rt:turn_begin([session]) -> the session's new turn */
static int l_turn_begin(lua_State *L) {
  lrt *r = tg__lm_check_rt(L, 1);
  const char *session =
      tg__lm_opt_str_arg(L, 2, "rt:turn_begin", "the session");
  lua_State *prev = tg__lm_enter(r, L);
  int64_t turn = tg_turn_begin(tg__lm_runtime(r), session);
  tg__lm_leave(r, L, prev);
  if (turn < 0) return luaL_error(L, "rt:turn_begin: out of memory");
  lua_pushinteger(L, (lua_Integer)turn);
  return 1;
}

/* rt:turn([session]) -> the session's current turn (0: none yet) */
static int l_turn(lua_State *L) {
  lrt *r = tg__lm_check_rt(L, 1);
  const char *session = tg__lm_opt_str_arg(L, 2, "rt:turn", "the session");
  lua_pushinteger(L, (lua_Integer)tg_turn_current(tg__lm_runtime(r), session));
  return 1;
}

static const char *const chat_opt_names[] = {"session", "model", "project",
                                             "request", NULL};

/* rt:chat_begin{session?, model?, project?, request?} -> true | nil, err */
static int l_chat_begin(lua_State *L) {
  lrt *r = tg__lm_check_rt(L, 1);
  int o = tg__lm_copy_opts(L, 2, "rt:chat_begin", chat_opt_names);
  tg_chat_request q = {0};
  q.session = tg__lm_opt_string(L, o, "rt:chat_begin", "session");
  q.model = tg__lm_opt_string(L, o, "rt:chat_begin", "model");
  q.project = tg__lm_opt_string(L, o, "rt:chat_begin", "project");
  if (o) lua_getfield(L, o, "request");
  else lua_pushnil(L);
  cJSON *req = tg__lm_object_arg(L, -1, "rt:chat_begin:", "'request'");
  q.request = req;
  char err[TG_ERRMSG] = "";
  lua_State *prev = tg__lm_enter(r, L);
  int rc = tg_chat_begin(tg__lm_runtime(r), &q, err);
  cJSON_Delete(req); /* before leave, which may raise */
  tg__lm_leave(r, L, prev);
  return tg__lm_ok_or_fail(L, rc, err);
}

static const char *const usage_opt_names[] = {"model", "input_tokens",
                                              "output_tokens", "cost", NULL};

static double usage_number(lua_State *L, int o, const char *k, int whole) {
  lua_getfield(L, o, k);
  double v = 0;
  if (!lua_isnil(L, -1)) {
    v = lua_type(L, -1) == LUA_TNUMBER ? (double)lua_tonumber(L, -1) : -1;
    if (!(v >= 0 && v <= 9e15) || (whole && v != floor(v)))
      luaL_error(L, "rt:chat_end: usage.%s must be a%s number >= 0", k,
                 whole ? " whole" : "");
  }
  lua_pop(L, 1);
  return v;
}

/* rt:chat_end(ok, err, usage, session) -> true | nil, err */
static int l_chat_end(lua_State *L) {
  lrt *r = tg__lm_check_rt(L, 1);
  luaL_checktype(L, 2, LUA_TBOOLEAN);
  lua_settop(L, 5); /* the options copy goes above */
  tg_chat_result res = {0};
  res.ok = lua_toboolean(L, 2);
  res.error = tg__lm_opt_str_arg(L, 3, "rt:chat_end", "the error");
  tg_chat_usage u = {0};
  int o = tg__lm_copy_opts(L, 4, "rt:chat_end usage", usage_opt_names);
  res.session = tg__lm_opt_str_arg(L, 5, "rt:chat_end", "the session");
  if (o) {
    u.model = tg__lm_opt_string(L, o, "rt:chat_end usage", "model");
    u.input_tokens = (int64_t)usage_number(L, o, "input_tokens", 1);
    u.output_tokens = (int64_t)usage_number(L, o, "output_tokens", 1);
    u.cost = usage_number(L, o, "cost", 0);
    res.usage = &u;
  }
  char err[TG_ERRMSG] = "";
  lua_State *prev = tg__lm_enter(r, L);
  int rc = tg_chat_end(tg__lm_runtime(r), &res, err);
  tg__lm_leave(r, L, prev);
  return tg__lm_ok_or_fail(L, rc, err);
}

/* ---- routing ------------------------------------------------------------------ */

/* rt:set_models(models | nil) -> true | nil, err */
static int l_set_models(lua_State *L) {
  lrt *r = tg__lm_check_rt(L, 1);
  cJSON *m = tg__lm_object_arg(L, 2, "rt:set_models:", "the models");
  char err[TG_ERRMSG] = "";
  int rc = tg_runtime_set_models(tg__lm_runtime(r), m, err);
  cJSON_Delete(m);
  return tg__lm_ok_or_fail(L, rc, err);
}

void tg__lm_chat_new(lua_State *L, lrt *r, int o) {
  if (!o) return;
  lua_getfield(L, o, "models");
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    return;
  }
  cJSON *m = tg__lm_object_arg(L, -1, "toolgate.new:", "'models'");
  char err[TG_ERRMSG] = "";
  int rc = tg_runtime_set_models(tg__lm_runtime(r), m, err);
  cJSON_Delete(m);
  if (rc < 0) luaL_error(L, "toolgate.new: %s", err);
  lua_pop(L, 1);
}

/* rt:route{requested_model?, task_weight?, context?, session?} ->
 * decision | nil, err */
static int l_route(lua_State *L) {
  lrt *r = tg__lm_check_rt(L, 1);
  luaL_checktype(L, 2, LUA_TTABLE);
  char err[TG_ERRMSG] = "";
  cJSON **d = tg__lm_box(L); /* leave may raise: the box frees it then */
  cJSON *q = tg__json_from_lua(L, 2, err, sizeof err);
  if (!q) return tg__lm_fail(L, err, "EINVAL");
  lua_State *prev = tg__lm_enter(r, L);
  *d = tg_route(tg__lm_runtime(r), q, err);
  cJSON_Delete(q);
  tg__lm_leave(r, L, prev);
  if (!*d) return tg__lm_fail(L, err, "EINVAL");
  return tg__lm_push_slot(L, d, "rt:route");
}

/* rt:model_unavailable(name, until_ms) -> true | nil, err */
static int l_model_unavailable(lua_State *L) {
  lrt *r = tg__lm_check_rt(L, 1);
  luaL_checkstring(L, 2);
  const char *name = tg__checknonul(L, 2, "rt:model_unavailable", "the model");
  lua_Number until = luaL_checknumber(L, 3);
  if (!(until == floor(until) && fabs(until) <= 9e15))
    return luaL_argerror(L, 3, "a whole number of ms since the epoch expected");
  char err[TG_ERRMSG] = "";
  return tg__lm_ok_or_fail(
      L, tg_model_unavailable(tg__lm_runtime(r), name, (int64_t)until, err),
      err);
}

/* ---- budgets ------------------------------------------------------------------ */

/* rt:budget_status(name [, session]) -> status | nil, err, "ENOENT" */
static int l_budget_status(lua_State *L) {
  lrt *r = tg__lm_check_rt(L, 1);
  luaL_checkstring(L, 2);
  const char *name = tg__checknonul(L, 2, "rt:budget_status", "the name");
  const char *session =
      tg__lm_opt_str_arg(L, 3, "rt:budget_status", "the session");
  char err[TG_ERRMSG] = "";
  cJSON **st = tg__lm_box(L); /* first: nothing is taken if it raises */
  if (!(*st = tg_budget_status(tg__lm_runtime(r), name, session, err)))
    return tg__lm_fail(L, err, "ENOENT");
  return tg__lm_push_slot(L, st, "rt:budget_status");
}

static int l_budgets(lua_State *L) {
  lrt *r = tg__lm_check_rt(L, 1);
  cJSON **all = tg__lm_box(L);
  *all = tg_budgets(tg__lm_runtime(r));
  return tg__lm_push_slot(L, all, "rt:budgets");
}

const luaL_Reg tg__lm_chat_methods[] = {
    {"set_clock", l_set_clock},
    {"now", l_now},
    {"turn_begin", l_turn_begin},
    {"turn", l_turn},
    {"chat_begin", l_chat_begin},
    {"chat_end", l_chat_end},
    {"set_models", l_set_models},
    {"route", l_route},
    {"model_unavailable", l_model_unavailable},
    {"budget_status", l_budget_status},
    {"budgets", l_budgets},
    {NULL, NULL}};
