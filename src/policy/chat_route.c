/*
 * chat_route.c — the policies' routing hooks (chat_side.h): tg.route_model(fn),
 * run in registration order after the routing table's baseline and before
 * the provider fallback (runtime/route.c). Each hook gets a decision table
 * of its own, {requested_model, selected_model, reason, task_weight,
 * context, session}, built inside its protected call; it changes
 * selected_model and reason in place, or returns a table that has them.
 * Only those two are read back, raw; a key the decision does not have
 * (decision.model = "x") is an error, not a silence: the hook meant
 * something that would not happen.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "chat_side.h"
#include "generation.h"
#include "sandbox.h"
#include "core/layers.h"
#include "lua/luajson.h"
#include "lua/luaraw.h"
#include "base/util.h"

#define MODEL_MAX 256
#define REASON_MAX 1024

static const char *const decision_keys[] = {
    "requested_model", "selected_model", "reason", "task_weight", "context",
    "session", NULL};

typedef struct {
  const tg_chat_fn *f;
  const cJSON *decision;
  char model[MODEL_MAX];        /* out: what the hook left */
  char reason[REASON_MAX];      /* out: "" when none */
} route_arg;

/* Strings directly (the hot path: a hook per route), the context as JSON. */
static void push_decision(lua_State *L, const cJSON *d) {
  lua_createtable(L, 0, 6);
  for (int i = 0; decision_keys[i]; i++) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(d, decision_keys[i]);
    if (!v || cJSON_IsNull(v)) continue;
    if (cJSON_IsString(v)) lua_pushstring(L, v->valuestring);
    else if (tg__json_push(L, v) < 0)
      luaL_error(L, "the decision could not be given to the hook");
    lua_setfield(L, -2, decision_keys[i]);
  }
}

static int known(const char *k) {
  for (int i = 0; decision_keys[i]; i++)
    if (strcmp(k, decision_keys[i]) == 0) return 1;
  return 0;
}

/* Raises when the table at t has a key the decision does not. */
static void check_decision_keys(lua_State *L, int t) {
  lua_pushnil(L);
  while (lua_next(L, t)) { /* raw */
    lua_pop(L, 1);
    if (lua_type(L, -1) == LUA_TSTRING && known(lua_tostring(L, -1))) continue;
    if (lua_type(L, -1) == LUA_TSTRING)
      luaL_error(L, "the decision has no field '%s' (a routing hook sets "
                    "selected_model and reason)", lua_tostring(L, -1));
    luaL_error(L, "the decision has a %s key; a routing hook sets "
                  "selected_model and reason", luaL_typename(L, -1));
  }
}

/* The protected body: hook(decision), then what it left, read back. */
static int run_hook(lua_State *L) {
  route_arg *a = lua_touserdata(L, 1);
  lua_settop(L, 0);
  push_decision(L, a->decision);                             /* 1 */
  lua_rawgeti(L, LUA_REGISTRYINDEX, a->f->fn_ref);
  lua_pushvalue(L, 1);
  lua_call(L, 1, 1);                                         /* 2 */
  int t = lua_isnil(L, 2) ? 1 : 2;
  if (!lua_istable(L, t))
    luaL_error(L, "a routing hook returns nothing or the decision (got %s)",
               luaL_typename(L, t));
  check_decision_keys(L, t);
  size_t n = 0;
  const char *m = tg__rawgetfield(L, t, "selected_model") == LUA_TSTRING
                      ? lua_tolstring(L, -1, &n) : NULL;
  if (!m || !n || n >= MODEL_MAX || strlen(m) != n)
    luaL_error(L, "selected_model must be a model name (a non-empty string "
                  "of at most %d bytes)", MODEL_MAX - 1);
  memcpy(a->model, m, n + 1);
  int ty = tg__rawgetfield(L, t, "reason");
  if (ty != LUA_TNIL && ty != LUA_TSTRING)
    luaL_error(L, "reason must be a string (got %s)", luaL_typename(L, -1));
  if (ty == LUA_TSTRING) snprintf(a->reason, REASON_MAX, "%s", lua_tostring(L, -1));
  return 0;
}

static void report(tg_generation *g, const tg_chat_fn *f, cJSON *d) {
  char what[400], msg[TG_ERRMSG];
  snprintf(what, sizeof what, "routing hook defined at %s", f->where);
  tg__chat_error_text(g, what, msg, sizeof msg);
  tg_layer_ctx ctx = {0};
  ctx.session = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(d, "session"));
  tg__layer_error(g->core, g, "route_model", f->where, msg, &ctx);
  cJSON *e = cJSON_CreateObject(); /* the decision says it too */
  if (!e) return;
  cJSON_AddStringToObject(e, "where", f->where);
  cJSON_AddStringToObject(e, "error", msg);
  cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(d, "errors"), e);
}

/* Sets decision[k] to the string v. */
static void set(cJSON *d, const char *k, const char *v) {
  cJSON *s = cJSON_CreateString(v);
  if (s) cJSON_ReplaceItemInObjectCaseSensitive(d, k, s);
}

static void note_change(cJSON *d, const tg_chat_fn *f, const char *from,
                        const route_arg *a) {
  cJSON *h = cJSON_CreateObject();
  if (!h) return;
  cJSON_AddStringToObject(h, "where", f->where);
  if (from) cJSON_AddStringToObject(h, "from", from);
  else cJSON_AddNullToObject(h, "from");
  cJSON_AddStringToObject(h, "to", a->model);
  cJSON_AddStringToObject(h, "reason", a->reason);
  cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(d, "hooks"), h);
}

void tg__policy_route(tg_generation *g, cJSON *decision) {
  const tg_chat_reg *c = g->chat;
  for (size_t i = 0; c && i < c->nroute; i++) {
    route_arg a = {&c->route[i], decision, "", ""};
    lua_State *L = g->L;
    lua_pushcfunction(L, run_hook);
    lua_pushlightuserdata(L, &a);
    if (tg__sandbox_pcall(g->sb, L, 1, 0) != LUA_OK) {
      report(g, a.f, decision);
      continue;
    }
    const char *was = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(decision,
                                                               "selected_model"));
    const char *why = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(decision, "reason"));
    int moved = !was || strcmp(was, a.model) != 0;
    if (!moved && why && strcmp(why, a.reason) == 0) continue;
    if (!moved && !a.reason[0]) continue; /* it only cleared the reason */
    if (moved && !a.reason[0])
      snprintf(a.reason, sizeof a.reason, "set by the routing hook at %s",
               a.f->where);
    char *from = tg__strdup(was);
    note_change(decision, a.f, from, &a);
    free(from);
    set(decision, "selected_model", a.model);
    set(decision, "reason", a.reason);
  }
}
