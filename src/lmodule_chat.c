/*
 * lmodule_chat.c — the chat side for hosts (SPEC §6; lua/README.md "The
 * chat side"): turns and chats (rt:turn_begin, rt:chat_begin,
 * rt:chat_end), host layers (rt:layer), routing (rt:route, rt:set_models,
 * rt:model_unavailable), budgets (rt:budget_status, rt:budgets),
 * notifications (rt:notify, rt:dismiss, rt:notifications,
 * rt:on_notification), the progress manager (rt:progress_*,
 * rt:on_progress_change) and the clock (rt:set_clock, rt:now) — each a
 * thin wrapper over toolgate.h.
 *
 * Host code runs in two ways here. Subscribers (on_notification,
 * on_progress_change, a progress item's on_cancel) are callbacks like
 * on_event: an error they raise stops the loop and is raised again from
 * the method the host called. Layers are not: a layer that raises is
 * logged (a layer_error event) and skipped, so a turn never fails because
 * of one — that is what layers promise (toolgate.h, tg_layer).
 *
 * Ownership: what C keeps a pointer to (a layer's {r, id}, the clock's
 * time) is a userdata anchored in the runtime's state table, which
 * outlives the C runtime (lmodule.c: close_now frees the runtime first).
 * Option tables are copied raw and read strictly (tg__lm_copy_opts).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lua/luacompat.h"
#include "lua/luajson.h"
#include "lua/lualayer.h"
#include "lua/luaraw.h"
#include <uv.h>
#include <cjson/cJSON.h>
#include "lua/luaarg.h" /* after lauxlib: argument errors name the method */
#include "toolgate.h"
#include "lmodule.h"

#define CHAT_FIELD "chat"               /* [1] = the lchat userdata */
#define LAYERS_FIELD "chat_layers"      /* id -> {hlayer, before_chat = fn, ...} */
#define NOTIFY_FIELD "notify_handlers"  /* id -> fn */
#define PROGRESS_FIELD "progress_handlers" /* id -> fn */
#define CANCEL_FIELD "progress_cancel"  /* item id -> on_cancel */

/* Per runtime, anchored in its state table. */
typedef struct {
  lrt *r;
  int64_t clock_ms;  /* rt:set_clock's time */
  int notify_sub, progress_sub;     /* our C subscriptions (0: none) */
  int next_notify, next_progress;   /* handler ids given out */
} lchat;

static lchat *chat_of(lua_State *L, lrt *r) {
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

static lrt *rt_arg(lua_State *L) { return tg__lm_check_rt(L, 1); }

/* Pushes the value a box's slot holds (nil: none) and empties the slot. */
static int push_slot(lua_State *L, cJSON **slot, const char *fn) {
  cJSON *v = *slot;
  *slot = NULL; /* tg__lm_push_json takes it */
  if (!v) return luaL_error(L, "%s: out of memory", fn);
  tg__lm_push_json(L, v, fn);
  return 1;
}
static tg_runtime *crt(lrt *r) { return tg__lm_runtime(r); }

static int ok_or_fail(lua_State *L, int rc, const char *err) {
  if (rc >= 0) {
    lua_pushboolean(L, 1);
    return 1;
  }
  char code[32];
  return tg__lm_fail(L, err, uv_err_name_r(rc, code, sizeof code));
}

/* An optional string argument without NUL bytes. */
static const char *opt_str_arg(lua_State *L, int idx, const char *fn,
                               const char *what) {
  if (lua_isnoneornil(L, idx)) return NULL;
  luaL_checkstring(L, idx);
  return tg__checknonul(L, idx, fn, what);
}

/* A string option of the copied options at o (nil allowed). */
static const char *opt_field(lua_State *L, int o, const char *k,
                             const char *fn) {
  if (!o) return NULL;
  lua_getfield(L, o, k);
  int ty = lua_type(L, -1);
  if (ty != LUA_TNIL && ty != LUA_TSTRING)
    luaL_error(L, "%s: '%s' must be a string (got %s)", fn, k,
               luaL_typename(L, -1));
  char what[64];
  snprintf(what, sizeof what, "'%s'", k);
  const char *s = ty == LUA_TSTRING ? tg__checknonul(L, -1, fn, what) : NULL;
  lua_pop(L, 1); /* the copy keeps it alive */
  return s;
}

/* A table at idx as a JSON object (NULL for nil); raises otherwise. */
static cJSON *object_arg(lua_State *L, int idx, const char *fn,
                         const char *what) {
  if (lua_isnoneornil(L, idx)) return NULL;
  char why[TG_ERRMSG - 64];
  cJSON *j = lua_istable(L, idx) ? tg__json_from_lua(L, idx, why, sizeof why)
                                 : NULL;
  if (!lua_istable(L, idx)) snprintf(why, sizeof why, "must be a table");
  if (j && !cJSON_IsObject(j)) {
    cJSON_Delete(j);
    j = NULL;
    snprintf(why, sizeof why, "must be a table with keys (a JSON object)");
  }
  if (!j) luaL_error(L, "%s: %s %s", fn, what, why);
  return j;
}

/* ---- the clock ------------------------------------------------------------ */

static int64_t lua_clock(void *ud) { return ((lchat *)ud)->clock_ms; }

/* rt:set_clock(ms | nil): the runtime's time stands at ms (ms since the
 * epoch) until set again; nil: the system clock. */
static int l_set_clock(lua_State *L) {
  lrt *r = rt_arg(L);
  if (lua_isnoneornil(L, 2)) {
    tg_runtime_set_clock(crt(r), NULL, NULL);
    return 0;
  }
  lua_Number ms = luaL_checknumber(L, 2);
  if (!(ms == floor(ms) && fabs(ms) <= 9e15))
    return luaL_argerror(L, 2, "a whole number of ms since the epoch expected");
  lchat *c = chat_of(L, r);
  c->clock_ms = (int64_t)ms;
  lua_State *prev = tg__lm_enter(r, L); /* expiring notifications tells */
  tg_runtime_set_clock(crt(r), lua_clock, c);
  tg__lm_leave(r, L, prev);
  return 0;
}

static int l_now(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)tg_runtime_now(crt(rt_arg(L))));
  return 1;
}

/* ---- turns and chats ------------------------------------------------------- */

/* rt:turn_begin([session]) -> the session's new turn */
static int l_turn_begin(lua_State *L) {
  lrt *r = rt_arg(L);
  const char *session = opt_str_arg(L, 2, "rt:turn_begin", "the session");
  lua_State *prev = tg__lm_enter(r, L);
  int64_t turn = tg_turn_begin(crt(r), session);
  tg__lm_leave(r, L, prev);
  if (turn < 0) return luaL_error(L, "rt:turn_begin: out of memory");
  lua_pushinteger(L, (lua_Integer)turn);
  return 1;
}

/* rt:turn([session]) -> the session's current turn (0: none yet) */
static int l_turn(lua_State *L) {
  lrt *r = rt_arg(L);
  const char *session = opt_str_arg(L, 2, "rt:turn", "the session");
  lua_pushinteger(L, (lua_Integer)tg_turn_current(crt(r), session));
  return 1;
}

static const char *const chat_opt_names[] = {"session", "model", "project",
                                             "request", NULL};

/* rt:chat_begin{session?, model?, project?, request?} -> true | nil, err */
static int l_chat_begin(lua_State *L) {
  lrt *r = rt_arg(L);
  int o = tg__lm_copy_opts(L, 2, "rt:chat_begin", chat_opt_names);
  tg_chat_request q = {0};
  q.session = opt_field(L, o, "session", "rt:chat_begin");
  q.model = opt_field(L, o, "model", "rt:chat_begin");
  q.project = opt_field(L, o, "project", "rt:chat_begin");
  if (o) lua_getfield(L, o, "request");
  else lua_pushnil(L);
  cJSON *req = object_arg(L, -1, "rt:chat_begin:", "'request'");
  q.request = req;
  char err[TG_ERRMSG] = "";
  lua_State *prev = tg__lm_enter(r, L);
  int rc = tg_chat_begin(crt(r), &q, err);
  cJSON_Delete(req); /* before leave, which may raise */
  tg__lm_leave(r, L, prev);
  return ok_or_fail(L, rc, err);
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
  lrt *r = rt_arg(L);
  luaL_checktype(L, 2, LUA_TBOOLEAN);
  lua_settop(L, 5); /* the options copy goes above */
  tg_chat_result res = {0};
  res.ok = lua_toboolean(L, 2);
  res.error = opt_str_arg(L, 3, "rt:chat_end", "the error");
  tg_chat_usage u = {0};
  int o = tg__lm_copy_opts(L, 4, "rt:chat_end usage", usage_opt_names);
  res.session = opt_str_arg(L, 5, "rt:chat_end", "the session");
  if (o) {
    u.model = opt_field(L, o, "model", "rt:chat_end usage");
    u.input_tokens = (int64_t)usage_number(L, o, "input_tokens", 1);
    u.output_tokens = (int64_t)usage_number(L, o, "output_tokens", 1);
    u.cost = usage_number(L, o, "cost", 0);
    res.usage = &u;
  }
  char err[TG_ERRMSG] = "";
  lua_State *prev = tg__lm_enter(r, L);
  int rc = tg_chat_end(crt(r), &res, err);
  tg__lm_leave(r, L, prev);
  return ok_or_fail(L, rc, err);
}

/* ---- host layers ------------------------------------------------------------ */

typedef struct {
  lrt *r;
  int id;
} hlayer;

static const char *const layer_kinds[] = {"before_chat", "after_chat",
                                          "before_tool", "after_tool"};

typedef struct {
  const hlayer *h;
  int kind;
  const tg_layer_ctx *ctx;
} layer_arg;

/* The protected body: layers[id][kind](ctx [, ok, err]). */
static int layer_body(lua_State *L) {
  layer_arg *a = lua_touserdata(L, 1);
  tg__lm_push_state(L, a->h->r, LAYERS_FIELD);
  lua_rawgeti(L, -1, a->h->id);
  if (!lua_istable(L, -1)) return 0; /* removed */
  lua_getfield(L, -1, layer_kinds[a->kind]);
  if (!lua_isfunction(L, -1)) return 0;
  tg__push_layer_ctx(L, a->ctx);
  int n = 1;
  if (a->kind == 1 || a->kind == 3) {
    lua_pushboolean(L, a->ctx->ok);
    if (a->ctx->ok) lua_pushnil(L);
    else lua_pushstring(L, a->ctx->error ? a->ctx->error : "");
    n = 3;
  }
  lua_call(L, n, 0);
  return 0;
}

static int run_layer(int kind, const tg_layer_ctx *ctx, void *ud,
                     char err[TG_ERRMSG]) {
  const hlayer *h = ud;
  lua_State *L = tg__lm_thread(h->r);
  if (!L || !lua_checkstack(L, 8)) return 0; /* closing: no host code runs */
  layer_arg a = {h, kind, ctx};
  int top = lua_gettop(L), rc;
#if TG_LUA54
  lua_pushcfunction(L, layer_body);
  lua_pushlightuserdata(L, &a);
  rc = lua_pcall(L, 1, 0, 0);
#else
  rc = lua_cpcall(L, layer_body, &a);
#endif
  if (rc != LUA_OK)
    snprintf(err, TG_ERRMSG, "%s", lua_type(L, -1) == LUA_TSTRING
                                       ? lua_tostring(L, -1)
                                       : "(an error that is not a string)");
  lua_settop(L, top);
  return rc == LUA_OK ? 0 : -1;
}

static int before_chat(tg_runtime *rt, const tg_layer_ctx *c, void *ud,
                       char err[TG_ERRMSG]) {
  return run_layer(0, c, ud, err);
}
static int after_chat(tg_runtime *rt, const tg_layer_ctx *c, void *ud,
                      char err[TG_ERRMSG]) {
  return run_layer(1, c, ud, err);
}
static int before_tool(tg_runtime *rt, const tg_layer_ctx *c, void *ud,
                       char err[TG_ERRMSG]) {
  return run_layer(2, c, ud, err);
}
static int after_tool(tg_runtime *rt, const tg_layer_ctx *c, void *ud,
                      char err[TG_ERRMSG]) {
  return run_layer(3, c, ud, err);
}

static const char *const layer_opt_names[] = {
    "name", "before_chat", "after_chat", "before_tool", "after_tool", NULL};

/* rt:layer{name?, before_chat?, after_chat?, before_tool?, after_tool?}
 * -> id. Host layers run before the policies' and never stop what they
 * wrap: one that raises is a layer_error event. */
static int l_layer(lua_State *L) {
  lrt *r = rt_arg(L);
  int o = tg__lm_copy_opts(L, 2, "rt:layer", layer_opt_names);
  if (!o) return luaL_error(L, "rt:layer: give a table of layer functions");
  const char *name = opt_field(L, o, "name", "rt:layer");
  tg_layer l = {name ? name : "host", NULL, NULL, NULL, NULL, NULL};
  tg_layer_fn fns[] = {before_chat, after_chat, before_tool, after_tool};
  tg_layer_fn *slots[] = {&l.before_chat, &l.after_chat, &l.before_tool,
                          &l.after_tool};
  for (int k = 0; k < 4; k++) {
    lua_getfield(L, o, layer_kinds[k]);
    if (!lua_isnil(L, -1) && !lua_isfunction(L, -1))
      return luaL_error(L, "rt:layer: '%s' must be a function (got %s)",
                        layer_kinds[k], luaL_typename(L, -1));
    if (lua_isfunction(L, -1)) *slots[k] = fns[k];
    lua_pop(L, 1);
  }
  hlayer *h = lua_newuserdatauv(L, sizeof *h, 0);          /* anchored below */
  h->r = r;
  h->id = 0;
  l.ud = h;
  lua_setfield(L, o, "ud"); /* the options copy becomes the entry */
  char err[TG_ERRMSG] = "";
  int id = tg_layer_add(crt(r), &l, err);
  if (id < 0) return luaL_error(L, "rt:layer: %s", err);
  h->id = id;
  tg__lm_push_state(L, r, LAYERS_FIELD);
  lua_pushvalue(L, o);
  lua_rawseti(L, -2, id);
  lua_pushinteger(L, id);
  return 1;
}

/* rt:remove_layer(id) */
static int l_remove_layer(lua_State *L) {
  lrt *r = rt_arg(L);
  lua_Integer id = luaL_checkinteger(L, 2);
  if (id < 1 || id > INT32_MAX) return 0;
  tg_layer_remove(crt(r), (int)id);
  tg__lm_push_state(L, r, LAYERS_FIELD);
  lua_pushnil(L);
  lua_rawseti(L, -2, (int)id);
  return 0;
}

/* ---- routing ------------------------------------------------------------------ */

/* rt:set_models(models | nil) -> true | nil, err */
static int l_set_models(lua_State *L) {
  lrt *r = rt_arg(L);
  cJSON *m = object_arg(L, 2, "rt:set_models:", "the models");
  char err[TG_ERRMSG] = "";
  int rc = tg_runtime_set_models(crt(r), m, err);
  cJSON_Delete(m);
  return ok_or_fail(L, rc, err);
}

void tg__lm_chat_new(lua_State *L, lrt *r, int o) {
  if (!o) return;
  lua_getfield(L, o, "models");
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    return;
  }
  cJSON *m = object_arg(L, -1, "toolgate.new:", "'models'");
  char err[TG_ERRMSG] = "";
  int rc = tg_runtime_set_models(crt(r), m, err);
  cJSON_Delete(m);
  if (rc < 0) luaL_error(L, "toolgate.new: %s", err);
  lua_pop(L, 1);
}

/* rt:route{requested_model?, task_weight?, context?, session?} ->
 * decision | nil, err */
static int l_route(lua_State *L) {
  lrt *r = rt_arg(L);
  luaL_checktype(L, 2, LUA_TTABLE);
  char err[TG_ERRMSG] = "";
  cJSON **d = tg__lm_box(L); /* leave may raise: the box frees it then */
  cJSON *q = tg__json_from_lua(L, 2, err, sizeof err);
  if (!q) return tg__lm_fail(L, err, "EINVAL");
  lua_State *prev = tg__lm_enter(r, L);
  *d = tg_route(crt(r), q, err);
  cJSON_Delete(q);
  tg__lm_leave(r, L, prev);
  if (!*d) return tg__lm_fail(L, err, "EINVAL");
  return push_slot(L, d, "rt:route");
}

/* rt:model_unavailable(name, until_ms) -> true | nil, err */
static int l_model_unavailable(lua_State *L) {
  lrt *r = rt_arg(L);
  luaL_checkstring(L, 2);
  const char *name = tg__checknonul(L, 2, "rt:model_unavailable", "the model");
  lua_Number until = luaL_checknumber(L, 3);
  if (!(until == floor(until) && fabs(until) <= 9e15))
    return luaL_argerror(L, 3, "a whole number of ms since the epoch expected");
  char err[TG_ERRMSG] = "";
  return ok_or_fail(L, tg_model_unavailable(crt(r), name, (int64_t)until, err),
                    err);
}

/* ---- budgets ------------------------------------------------------------------ */

/* rt:budget_status(name [, session]) -> status | nil, err, "ENOENT" */
static int l_budget_status(lua_State *L) {
  lrt *r = rt_arg(L);
  luaL_checkstring(L, 2);
  const char *name = tg__checknonul(L, 2, "rt:budget_status", "the name");
  const char *session = opt_str_arg(L, 3, "rt:budget_status", "the session");
  char err[TG_ERRMSG] = "";
  cJSON **st = tg__lm_box(L); /* first: nothing is taken if it raises */
  if (!(*st = tg_budget_status(crt(r), name, session, err)))
    return tg__lm_fail(L, err, "ENOENT");
  return push_slot(L, st, "rt:budget_status");
}

static int l_budgets(lua_State *L) {
  lrt *r = rt_arg(L);
  cJSON **all = tg__lm_box(L);
  *all = tg_budgets(crt(r));
  return push_slot(L, all, "rt:budgets");
}

/* ---- notifications --------------------------------------------------------- */

static const char *const notify_opt_names[] = {"duration_ms", "action", NULL};
static const char *const action_opt_names[] = {"label", "command", NULL};

static int level_arg(lua_State *L, int idx) {
  static const char *const names[] = {"info", "success", "warning", "error",
                                      NULL};
  return luaL_checkoption(L, idx, NULL, names);
}

/* rt:notify(level, title [, message [, {duration_ms, action}]]) -> id |
 * nil, err */
static int l_notify(lua_State *L) {
  lrt *r = rt_arg(L);
  tg_notification n = {0};
  n.level = (tg_notify_level)level_arg(L, 2);
  luaL_checkstring(L, 3);
  n.title = tg__checknonul(L, 3, "rt:notify", "the title");
  n.message = opt_str_arg(L, 4, "rt:notify", "the message");
  int o = tg__lm_copy_opts(L, 5, "rt:notify", notify_opt_names);
  if (o) {
    lua_getfield(L, o, "duration_ms");
    lua_Number d = lua_isnil(L, -1) ? 0 : luaL_checknumber(L, -1);
    if (!(d >= 0 && d <= 9e15 && d == floor(d)))
      return luaL_error(L, "rt:notify: 'duration_ms' must be a whole number "
                           ">= 0");
    n.duration_ms = (uint64_t)d;
    lua_getfield(L, o, "action");
    int a = tg__lm_copy_opts(L, -1, "rt:notify action", action_opt_names);
    if (a) {
      n.action_label = opt_field(L, a, "label", "rt:notify action");
      n.action_command = opt_field(L, a, "command", "rt:notify action");
      if (!n.action_label)
        return luaL_error(L, "rt:notify action: 'label' is required");
    }
  }
  char err[TG_ERRMSG] = "";
  lua_State *prev = tg__lm_enter(r, L);
  int64_t id = tg_notify(crt(r), &n, err);
  tg__lm_leave(r, L, prev);
  if (id < 0) return tg__lm_fail(L, err, "EINVAL");
  lua_pushinteger(L, (lua_Integer)id);
  return 1;
}

/* rt:dismiss(id) -> true | nil, err, "ENOENT" */
static int l_dismiss(lua_State *L) {
  lrt *r = rt_arg(L);
  lua_Integer id = luaL_checkinteger(L, 2);
  lua_State *prev = tg__lm_enter(r, L);
  int rc = tg_notify_dismiss(crt(r), (int64_t)id);
  tg__lm_leave(r, L, prev);
  return ok_or_fail(L, rc, "no notification has that id (dismissed, "
                           "expired or dropped?)");
}

static int l_notifications(lua_State *L) {
  lrt *r = rt_arg(L);
  cJSON **list = tg__lm_box(L);
  lua_State *prev = tg__lm_enter(r, L); /* expiry tells subscribers */
  *list = tg_notifications(crt(r));
  tg__lm_leave(r, L, prev);
  return push_slot(L, list, "rt:notifications");
}

/* A subscriber's call: handlers[1..last](change, one, list). */
typedef struct {
  lrt *r;
  const char *field, *change, *what;
  const cJSON *one, *list;
  int last;
} sub_arg;

static int sub_body(lua_State *L) {
  sub_arg *a = lua_touserdata(L, 1);
  tg__lm_push_state(L, a->r, a->field);
  int t = lua_gettop(L);
  for (int id = 1; id <= a->last; id++) {
    lua_rawgeti(L, t, id);
    if (!lua_isfunction(L, -1)) {
      lua_pop(L, 1);
      continue;
    }
    lua_pushstring(L, a->change);
    if (tg__json_push(L, a->one) < 0) lua_pushnil(L);
    if (tg__json_push(L, a->list) < 0) lua_newtable(L);
    tg__lm_callback(a->r, L, 3, a->what);
  }
  return 0;
}

static void tell(lchat *c, const char *field, int last, const char *what,
                 const char *change, const cJSON *one, const cJSON *list) {
  lua_State *L = tg__lm_thread(c->r);
  if (!L) return; /* closing */
  sub_arg a = {c->r, field, change, what, one, list, last};
  tg__lm_protect(c->r, L, sub_body, &a);
}

static void notify_cb(tg_runtime *rt, const char *change, const cJSON *one,
                      const cJSON *list, void *ud) {
  lchat *c = ud;
  tell(c, NOTIFY_FIELD, c->next_notify, "on_notification", change, one, list);
}

static void progress_cb(tg_runtime *rt, const char *change, const cJSON *one,
                        const cJSON *list, void *ud) {
  lchat *c = ud;
  tell(c, PROGRESS_FIELD, c->next_progress, "on_progress_change", change, one,
       list);
}

/* Adds fn (at 2) to handlers `field` under the next id. */
static int add_sub(lua_State *L, const char *field, int *next) {
  lrt *r = rt_arg(L);
  luaL_checktype(L, 2, LUA_TFUNCTION);
  tg__lm_push_state(L, r, field);
  lua_pushvalue(L, 2);
  lua_rawseti(L, -2, *next + 1); /* may raise: count only once in */
  lua_pushinteger(L, ++*next);
  return 1;
}

static int l_on_notification(lua_State *L) {
  lrt *r = rt_arg(L);
  lchat *c = chat_of(L, r);
  if (!c->notify_sub) {
    int id = tg_notify_subscribe(crt(r), notify_cb, c);
    if (id < 0) return luaL_error(L, "rt:on_notification: out of memory");
    c->notify_sub = id;
  }
  return add_sub(L, NOTIFY_FIELD, &c->next_notify);
}

static int remove_sub(lua_State *L, const char *field) {
  lrt *r = rt_arg(L);
  lua_Integer id = luaL_checkinteger(L, 2);
  if (id < 1 || id > INT32_MAX) return 0;
  tg__lm_push_state(L, r, field);
  lua_pushnil(L);
  lua_rawseti(L, -2, (int)id);
  return 0;
}

static int l_off_notification(lua_State *L) {
  return remove_sub(L, NOTIFY_FIELD);
}

/* ---- the progress manager ---------------------------------------------------- */

typedef struct {
  lrt *r;
  const char *id;
} cancel_arg;

static int cancel_body(lua_State *L) {
  cancel_arg *a = lua_touserdata(L, 1);
  tg__lm_push_state(L, a->r, CANCEL_FIELD);
  lua_getfield(L, -1, a->id);
  if (!lua_isfunction(L, -1)) return 0;
  lua_pushstring(L, a->id);
  tg__lm_callback(a->r, L, 1, "on_cancel");
  return 0;
}

static void on_cancel(tg_runtime *rt, const char *id, void *ud) {
  lchat *c = ud;
  lua_State *L = tg__lm_thread(c->r);
  if (!L) return;
  cancel_arg a = {c->r, id};
  tg__lm_protect(c->r, L, cancel_body, &a);
}

static const char *const progress_opt_names[] = {"id", "label", "kind",
                                                 "total", "on_cancel", NULL};

/* rt:progress_start{id, label?, kind?, total?, on_cancel?} -> true |
 * nil, err, code */
static int l_progress_start(lua_State *L) {
  static const char *const kinds[] = {"indeterminate", "determinate", "steps",
                                      NULL};
  lrt *r = rt_arg(L);
  int o = tg__lm_copy_opts(L, 2, "rt:progress_start", progress_opt_names);
  if (!o) return luaL_error(L, "rt:progress_start: give {id = ..., ...}");
  tg_progress_spec s = {0};
  s.id = opt_field(L, o, "id", "rt:progress_start");
  s.label = opt_field(L, o, "label", "rt:progress_start");
  lua_getfield(L, o, "kind");
  s.kind = (tg_progress_kind)luaL_checkoption(L, -1, "indeterminate", kinds);
  lua_getfield(L, o, "total");
  s.total = lua_isnil(L, -1) ? 0 : (double)luaL_checknumber(L, -1);
  lua_getfield(L, o, "on_cancel");
  if (!lua_isnil(L, -1) && !lua_isfunction(L, -1))
    return luaL_error(L, "rt:progress_start: 'on_cancel' must be a function");
  int cancellable = lua_isfunction(L, -1);
  lchat *c = chat_of(L, r);
  if (cancellable) {
    s.cancel = on_cancel;
    s.ud = c;
  }
  char err[TG_ERRMSG] = "";
  lua_State *prev = tg__lm_enter(r, L);
  int rc = tg_progress_start(crt(r), &s, err);
  tg__lm_leave(r, L, prev);
  if (rc == 0 && cancellable) {
    tg__lm_push_state(L, r, CANCEL_FIELD);
    lua_getfield(L, o, "on_cancel");
    lua_setfield(L, -2, s.id);
  }
  return ok_or_fail(L, rc, err);
}

static const char *id_arg(lua_State *L, const char *fn) {
  luaL_checkstring(L, 2);
  return tg__checknonul(L, 2, fn, "the id");
}

static int progress_end(lua_State *L, int ok) {
  lrt *r = rt_arg(L);
  const char *fn = ok ? "rt:progress_done" : "rt:progress_fail";
  const char *id = id_arg(L, fn);
  const char *msg = ok ? NULL : opt_str_arg(L, 3, fn, "the message");
  lua_State *prev = tg__lm_enter(r, L);
  int rc = ok ? tg_progress_done(crt(r), id) : tg_progress_fail(crt(r), id, msg);
  tg__lm_leave(r, L, prev);
  if (rc == 0) { /* its on_cancel goes with it */
    tg__lm_push_state(L, r, CANCEL_FIELD);
    lua_pushnil(L);
    lua_setfield(L, -2, id);
    lua_pop(L, 1);
  }
  return ok_or_fail(L, rc, "no progress item has that id");
}

static int l_progress_done(lua_State *L) { return progress_end(L, 1); }
static int l_progress_fail(lua_State *L) { return progress_end(L, 0); }

/* rt:progress_update(id, current [, message]) -> true | nil, err */
static int l_progress_update(lua_State *L) {
  lrt *r = rt_arg(L);
  const char *id = id_arg(L, "rt:progress_update");
  double cur = (double)luaL_checknumber(L, 3);
  const char *msg = opt_str_arg(L, 4, "rt:progress_update", "the message");
  lua_State *prev = tg__lm_enter(r, L);
  int rc = tg_progress_update(crt(r), id, cur, msg);
  tg__lm_leave(r, L, prev);
  return ok_or_fail(L, rc, rc == -EINVAL ? "current must be a number >= 0"
                                         : "no progress item has that id");
}

/* rt:progress_cancel(id) -> true | nil, err, "ENOENT" | "ENOTSUP" */
static int l_progress_cancel(lua_State *L) {
  lrt *r = rt_arg(L);
  const char *id = id_arg(L, "rt:progress_cancel");
  lua_State *prev = tg__lm_enter(r, L);
  int rc = tg_progress_cancel(crt(r), id);
  tg__lm_leave(r, L, prev);
  return ok_or_fail(L, rc, rc == -ENOTSUP ? "the item is not cancellable"
                                          : "no progress item has that id");
}

static int l_progress(lua_State *L) {
  lrt *r = rt_arg(L);
  cJSON **list = tg__lm_box(L);
  *list = tg_progress_list(crt(r));
  return push_slot(L, list, "rt:progress");
}

static int l_on_progress_change(lua_State *L) {
  lrt *r = rt_arg(L);
  lchat *c = chat_of(L, r);
  if (!c->progress_sub) {
    int id = tg_progress_subscribe(crt(r), progress_cb, c);
    if (id < 0) return luaL_error(L, "rt:on_progress_change: out of memory");
    c->progress_sub = id;
  }
  return add_sub(L, PROGRESS_FIELD, &c->next_progress);
}

static int l_off_progress_change(lua_State *L) {
  return remove_sub(L, PROGRESS_FIELD);
}

/* ---- the methods ---------------------------------------------------------- */

static const luaL_Reg chat_methods[] = {
    {"set_clock", l_set_clock},
    {"now", l_now},
    {"turn_begin", l_turn_begin},
    {"turn", l_turn},
    {"chat_begin", l_chat_begin},
    {"chat_end", l_chat_end},
    {"layer", l_layer},
    {"remove_layer", l_remove_layer},
    {"set_models", l_set_models},
    {"route", l_route},
    {"model_unavailable", l_model_unavailable},
    {"budget_status", l_budget_status},
    {"budgets", l_budgets},
    {"notify", l_notify},
    {"dismiss", l_dismiss},
    {"notifications", l_notifications},
    {"on_notification", l_on_notification},
    {"off_notification", l_off_notification},
    {"progress_start", l_progress_start},
    {"progress_update", l_progress_update},
    {"progress_done", l_progress_done},
    {"progress_fail", l_progress_fail},
    {"progress_cancel", l_progress_cancel},
    {"progress", l_progress},
    {"on_progress_change", l_on_progress_change},
    {"off_progress_change", l_off_progress_change},
    {NULL, NULL}};

void tg__lm_chat_methods(lua_State *L, int idx) {
  idx = lua_absindex(L, idx);
  for (const luaL_Reg *f = chat_methods; f->name; f++) {
    lua_pushcfunction(L, f->func);
    lua_setfield(L, idx, f->name);
  }
}
