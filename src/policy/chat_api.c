/*
 * chat_api.c — the policy side of the chat (chat_side.h): tg.before_chat,
 * tg.after_chat, tg.route_model and tg.budget register while the files
 * load; tg.budget_status and tg.notify work at any time. As in api.c,
 * every argument is read raw and checked before anything is taken, keys
 * strictly (tg__check_keys); then the registration commits, taking only
 * memory the generation owns at once (register.c).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "chat_side.h"
#include "generation.h"
#include "core/notify.h"
#include "lua/luajson.h"
#include "lua/luaraw.h"
#include "base/jsonnum.h"

static const char *const budget_keys[] = {"name", "limit", "period", "scope",
                                          "thresholds", "on_alert", "notify",
                                          "unit", NULL};
static const char *const scope_keys[] = {"session", "project", "model", NULL};
static const char *const notify_keys[] = {"duration_ms", "action", NULL};
static const char *const action_keys[] = {"label", "command", NULL};

static tg_generation *gen_of(lua_State *L) {
  return (tg_generation *)lua_touserdata(L, lua_upvalueindex(1));
}

/* g->chat, made on first use (in a commit: a failure breaks g). */
static tg_chat_reg *reg_of(lua_State *L, tg_generation *g) {
  if (!g->chat && !(g->chat = tg__reg_alloc(g, sizeof *g->chat)))
    tg__reg_commit_fail(L, g);
  return g->chat;
}

/* tg.before_chat(fn), tg.after_chat(fn), tg.route_model(fn): fn joins the
 * list, in registration order. */
static int add_fn(lua_State *L, const char *fn, int which) {
  tg_generation *g = tg__api_loading(L, fn);
  if (!lua_isfunction(L, 1))
    return luaL_error(L, "tg.%s: give a function (got %s)", fn,
                      luaL_typename(L, 1));
  tg__reg_commit_begin(L, g, fn);
  tg_chat_reg *c = reg_of(L, g);
  tg_chat_fn **list = which == 0 ? &c->before : which == 1 ? &c->after : &c->route;
  size_t *n = which == 0 ? &c->nbefore : which == 1 ? &c->nafter : &c->nroute;
  size_t *cap = which == 0 ? &c->capbefore : which == 1 ? &c->capafter
                                                        : &c->caproute;
  if (tg__reg_reserve(g, (void **)list, cap, *n, sizeof **list) < 0)
    return tg__reg_commit_fail(L, g);
  tg_chat_fn *f = &(*list)[(*n)++]; /* owned by g from here on */
  f->fn_ref = LUA_NOREF;
  if (!(f->where = tg__api_where(g, L, 1))) return tg__reg_commit_fail(L, g);
  lua_pushvalue(L, 1);
  f->fn_ref = luaL_ref(L, LUA_REGISTRYINDEX); /* last: it may raise */
  tg__reg_commit_end(g);
  return 0;
}

int tg__l_before_chat(lua_State *L) { return add_fn(L, "before_chat", 0); }
int tg__l_after_chat(lua_State *L) { return add_fn(L, "after_chat", 1); }
int tg__l_route_model(lua_State *L) { return add_fn(L, "route_model", 2); }

/* ---- tg.budget ---------------------------------------------------------- */

/* A string field of t (nil allowed): no NUL, not empty. */
static const char *opt_string(lua_State *L, int t, const char *k,
                              const char *fn) {
  int ty = tg__rawgetfield(L, t, k);
  lua_pop(L, 1);
  if (ty == LUA_TNIL) return NULL;
  tg__rawgetfield(L, t, k);
  if (ty != LUA_TSTRING || !*lua_tostring(L, -1))
    luaL_error(L, "%s: '%s' must be a non-empty string (got %s)", fn, k,
               luaL_typename(L, -1));
  tg__checknonul(L, -1, fn, k);
  const char *s = lua_tostring(L, -1); /* t keeps it alive */
  lua_pop(L, 1);
  return s;
}

typedef struct {
  const char *name, *session, *project, *model;
  double limit, thresholds[TG_LEVEL__COUNT];
  int period, notify, tokens;
} budget_spec;

static void read_scope(lua_State *L, int t, budget_spec *b, const char *fn) {
  int ty = tg__rawgetfield(L, t, "scope");
  int s = lua_gettop(L);
  if (ty != LUA_TNIL && ty != LUA_TTABLE)
    luaL_error(L, "%s: 'scope' must be a table {session=, project=, model=} "
                  "(got %s)", fn, luaL_typename(L, s));
  if (ty == LUA_TTABLE) {
    char what[300];
    snprintf(what, sizeof what, "%s scope", fn);
    tg__check_keys(L, s, what, scope_keys);
    b->session = opt_string(L, s, "session", what);
    b->project = opt_string(L, s, "project", what);
    b->model = opt_string(L, s, "model", what);
  }
  lua_pop(L, 1); /* t keeps the strings alive through scope */
}

static void read_thresholds(lua_State *L, int t, budget_spec *b,
                            const char *fn) {
  static const double dflt[TG_LEVEL__COUNT] = {0.50, 0.75, 0.90, 1.00};
  int ty = tg__rawgetfield(L, t, "thresholds");
  int th = lua_gettop(L);
  memcpy(b->thresholds, dflt, sizeof dflt);
  if (ty == LUA_TNIL) {
    lua_pop(L, 1);
    return;
  }
  if (ty != LUA_TTABLE)
    luaL_error(L, "%s: 'thresholds' must be a table {info=, warning=, "
                  "critical=, exceeded=} (got %s)", fn, luaL_typename(L, th));
  char what[300];
  snprintf(what, sizeof what, "%s thresholds", fn);
  tg__check_keys(L, th, what, tg__budget_level_names);
  double last = 0;
  for (int i = 0; i < TG_LEVEL__COUNT; i++) {
    const char *k = tg__budget_level_names[i];
    b->thresholds[i] = 0; /* a level not listed is off */
    if (tg__rawgetfield(L, th, k) != LUA_TNIL) {
      double v = lua_type(L, -1) == LUA_TNUMBER ? (double)lua_tonumber(L, -1)
                                                 : NAN;
      if (!(v > 0 && v <= 100))
        luaL_error(L, "%s: '%s' must be a fraction of the limit > 0 (0.75 is "
                      "75%%)", what, k);
      if (v <= last) {
        char nums[80]; /* lua_pushfstring has no %g */
        snprintf(nums, sizeof nums, "(%g) must be above the level before it "
                 "(%g)", v, last);
        luaL_error(L, "%s: '%s' %s", what, k, nums);
      }
      b->thresholds[i] = last = v;
    }
    lua_pop(L, 1);
  }
  if (last == 0) luaL_error(L, "%s: no level is set", what);
  lua_pop(L, 1);
}

/* Reads and checks the spec table at 1; leaves on_alert (or nil) at 2. */
static void read_budget(lua_State *L, tg_generation *g, budget_spec *b) {
  tg__check_keys(L, 1, "tg.budget", budget_keys);
  b->name = opt_string(L, 1, "name", "tg.budget");
  if (!b->name) luaL_error(L, "tg.budget: 'name' must be a non-empty string");
  char fn[200];
  snprintf(fn, sizeof fn, "tg.budget '%.100s'", b->name);
  tg__rawgetfield(L, 1, "limit");
  b->limit = lua_type(L, -1) == LUA_TNUMBER ? (double)lua_tonumber(L, -1) : NAN;
  lua_pop(L, 1);
  if (!(b->limit > 0 && b->limit < 1e15))
    luaL_error(L, "%s: 'limit' must be a number > 0", fn);
  const char *period = opt_string(L, 1, "period", fn);
  if ((b->period = tg__period_of(period)) < 0)
    luaL_error(L, "%s: 'period' must be %s (got %s)", fn, TG_PERIOD_NAMES,
               period ? period : "nothing");
  const char *unit = opt_string(L, 1, "unit", fn);
  if (unit && strcmp(unit, "cost") && strcmp(unit, "tokens"))
    luaL_error(L, "%s: 'unit' must be \"cost\" (the default) or \"tokens\" "
               "(got %s)", fn, unit);
  b->tokens = unit && !strcmp(unit, "tokens");
  read_scope(L, 1, b, fn);
  read_thresholds(L, 1, b, fn);
  int ty = tg__rawgetfield(L, 1, "notify");
  if (ty != LUA_TNIL && ty != LUA_TBOOLEAN)
    luaL_error(L, "%s: 'notify' must be a boolean", fn);
  b->notify = ty == LUA_TNIL || lua_toboolean(L, -1);
  lua_pop(L, 1);
  ty = tg__rawgetfield(L, 1, "on_alert");                 /* 2 */
  if (ty != LUA_TNIL && ty != LUA_TFUNCTION)
    luaL_error(L, "%s: 'on_alert' must be a function (got %s)", fn,
               luaL_typename(L, -1));
  for (size_t i = 0; g->chat && i < g->chat->nbudgets; i++)
    if (strcmp(g->chat->budgets[i].name, b->name) == 0)
      luaL_error(L, "tg.budget: a budget named '%s' already exists (%s)",
                 b->name, g->chat->budgets[i].where);
}

int tg__l_budget(lua_State *L) {
  tg_generation *g = tg__api_loading(L, "budget");
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_settop(L, 1);
  budget_spec s;
  memset(&s, 0, sizeof s);
  read_budget(L, g, &s);
  tg__reg_commit_begin(L, g, "budget");
  tg_chat_reg *c = reg_of(L, g);
  if (tg__reg_reserve(g, (void **)&c->budgets, &c->capbudgets, c->nbudgets,
                      sizeof *c->budgets) < 0)
    return tg__reg_commit_fail(L, g);
  tg_budget *b = &c->budgets[c->nbudgets++]; /* owned by g from here on */
  memset(b, 0, sizeof *b);
  b->on_alert_ref = LUA_NOREF;
  b->limit = s.limit;
  b->period = (tg_period)s.period;
  b->notify = s.notify;
  b->tokens = s.tokens;
  memcpy(b->thresholds, s.thresholds, sizeof b->thresholds);
  if (!(b->name = tg__reg_strdup(g, s.name)) ||
      (s.session && !(b->session = tg__reg_strdup(g, s.session))) ||
      (s.project && !(b->project = tg__reg_strdup(g, s.project))) ||
      (s.model && !(b->model = tg__reg_strdup(g, s.model))))
    return tg__reg_commit_fail(L, g);
  lua_Debug ar;
  char where[300] = "?";
  if (lua_getstack(L, 1, &ar) && lua_getinfo(L, "Sl", &ar))
    snprintf(where, sizeof where, "%s:%d", ar.short_src, ar.currentline);
  if (!(b->where = tg__reg_strdup(g, where))) return tg__reg_commit_fail(L, g);
  if (lua_isfunction(L, 2)) {
    lua_pushvalue(L, 2);
    b->on_alert_ref = luaL_ref(L, LUA_REGISTRYINDEX); /* last: it may raise */
  }
  tg__reg_commit_end(g);
  return 0;
}

/* tg.budget_status(name [, session]) -> {name, spent, limit, ...} */
int tg__l_budget_status(lua_State *L) {
  tg_generation *g = gen_of(L);
  luaL_checkstring(L, 1);
  const char *name = tg__checknonul(L, 1, "tg.budget_status", "the name");
  const char *session = NULL;
  if (!lua_isnoneornil(L, 2)) {
    luaL_checkstring(L, 2);
    session = tg__checknonul(L, 2, "tg.budget_status", "the session");
  }
  char err[TG_ERRMSG];
  cJSON *st = tg__budget_status(g, name, session, err);
  if (!st) return luaL_error(L, "tg.budget_status: %s", err);
  int rc = tg__json_push(L, st);
  cJSON_Delete(st);
  if (rc < 0) return luaL_error(L, "tg.budget_status: out of memory");
  return 1;
}

/* ---- tg.notify ------------------------------------------------------------ */

/* action = {label, command?} at idx into n (strings stay on the stack's
 * tables). */
static void read_action(lua_State *L, int idx, tg_notification *n) {
  if (lua_isnil(L, idx)) return;
  if (!lua_istable(L, idx))
    luaL_error(L, "tg.notify: 'action' must be a table {label=, command=}");
  tg__check_keys(L, idx, "tg.notify action", action_keys);
  n->action_label = opt_string(L, idx, "label", "tg.notify action");
  n->action_command = opt_string(L, idx, "command", "tg.notify action");
  if (!n->action_label)
    luaL_error(L, "tg.notify action: 'label' must be a non-empty string");
}

/* tg.notify(level, title [, message [, {duration_ms, action}]]) -> id */
int tg__l_notify(lua_State *L) {
  tg_generation *g = gen_of(L);
  tg_notification n = {0};
  int level = lua_type(L, 1) == LUA_TSTRING && !tg__has_nul(L, 1)
                  ? tg__notify_level_of(lua_tostring(L, 1)) : -1;
  if (level < 0)
    return luaL_error(L, "tg.notify: the level must be \"info\", \"success\", "
                         "\"warning\" or \"error\"");
  n.level = (tg_notify_level)level;
  luaL_checkstring(L, 2);
  n.title = tg__checknonul(L, 2, "tg.notify", "the title");
  if (!*n.title) return luaL_error(L, "tg.notify: the title is empty");
  if (!lua_isnoneornil(L, 3)) {
    luaL_checkstring(L, 3);
    n.message = tg__checknonul(L, 3, "tg.notify", "the message");
  }
  lua_settop(L, 4);
  if (!lua_isnil(L, 4)) {
    luaL_checktype(L, 4, LUA_TTABLE);
    tg__check_keys(L, 4, "tg.notify", notify_keys);
    int64_t ms = 0;
    if (tg__rawgetfield(L, 4, "duration_ms") != LUA_TNIL &&
        (lua_type(L, -1) != LUA_TNUMBER ||
         tg__int_of_double((double)lua_tonumber(L, -1), 0, TG_JSON_INT_MAX,
                           &ms) < 0))
      return luaL_error(L, "tg.notify: 'duration_ms' must be a whole number "
                           "of milliseconds >= 0");
    n.duration_ms = (uint64_t)ms;
    tg__rawgetfield(L, 4, "action");                      /* 6 */
    read_action(L, 6, &n);
  }
  lua_Debug ar;
  char where[300] = "policies";
  if (lua_getstack(L, 1, &ar) && lua_getinfo(L, "Sl", &ar))
    snprintf(where, sizeof where, "%s:%d", ar.short_src, ar.currentline);
  n.source = where;
  char err[TG_ERRMSG];
  int64_t id = tg__notify(g->core, &n, err);
  if (id < 0) return luaL_error(L, "tg.notify: %s", err);
  lua_pushinteger(L, (lua_Integer)id);
  return 1;
}
