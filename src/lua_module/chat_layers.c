/*
 * chat_layers.c — host layers (rt:layer, rt:remove_layer): the host's
 * before_chat / after_chat / before_tool / after_tool functions. Unlike a
 * callback, a layer that raises is logged (a layer_error event) and
 * skipped, so a turn never fails because of one — what layers promise
 * (toolgate.h, tg_layer).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "chat.h"
#include "lua/luaraw.h"
#include "lua/luajson.h"
#include "lua/luacall.h"
#include "lua/lualayer.h"
#include "lua/luaarg.h" /* after lauxlib: argument errors name the method */

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
  int n = tg__push_layer_args(L, a->ctx, a->kind == 1 || a->kind == 3);
  lua_call(L, n, 0);
  return 0;
}

static int run_layer(int kind, const tg_layer_ctx *ctx, void *ud,
                     char err[TG_ERRMSG]) {
  const hlayer *h = ud;
  lua_State *L = tg__lm_thread(h->r);
  if (!L || !lua_checkstack(L, 8)) return 0; /* closing: no host code runs */
  layer_arg a = {h, kind, ctx};
  return tg__lua_protect(L, layer_body, &a, err, TG_ERRMSG,
                         "(an error that is not a string)");
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
  lrt *r = tg__lm_check_rt(L, 1);
  int o = tg__lm_copy_opts(L, 2, "rt:layer", layer_opt_names);
  if (!o) return luaL_error(L, "rt:layer: give a table of layer functions");
  const char *name = tg__lm_opt_string(L, o, "rt:layer", "name");
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
  int id = tg_layer_add(tg__lm_runtime(r), &l, err);
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
  lrt *r = tg__lm_check_rt(L, 1);
  lua_Integer id = luaL_checkinteger(L, 2);
  if (id < 1 || id > INT32_MAX) return 0;
  tg_layer_remove(tg__lm_runtime(r), (int)id);
  tg__lm_push_state(L, r, LAYERS_FIELD);
  lua_pushnil(L);
  lua_rawseti(L, -2, (int)id);
  return 0;
}

const luaL_Reg tg__lm_layer_methods[] = {
    {"layer", l_layer},
    {"remove_layer", l_remove_layer},
    {NULL, NULL}};
