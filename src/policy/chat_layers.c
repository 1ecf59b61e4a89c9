/*
 * chat_layers.c — the policies' chat layers (chat_side.h): tg.before_chat(fn)
 * and tg.after_chat(fn), in registration order. Each layer gets a table
 * of its own, built inside its protected call (so the memory cap and the
 * time limit cover building it too, and one layer cannot change what the
 * next sees): fn(ctx) before, fn(ctx, ok, err) after, ctx = {session,
 * turn, model?, project?, request?, usage?}. What a layer returns is
 * ignored: layers observe; the chat goes on whatever they do.
 */
#include <stdio.h>
#include <string.h>
#include "chat_side.h"
#include "generation.h"
#include "sandbox.h"
#include "core/layers.h"
#include "lua/lualayer.h"

void tg__chat_error_text(tg_generation *g, const char *what, char *msg,
                         size_t len) {
  lua_State *L = g->L;
  if (!tg__sandbox_describe_stop(g->sb, what, msg, len))
    snprintf(msg, len, "%s (in %s)",
             lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1)
                                            : "(an error that is not a string)",
             what);
  lua_pop(L, 1);
}

typedef struct {
  const tg_chat_fn *f;
  const tg_layer_ctx *ctx;
  int after;
} layer_arg;

/* The protected body: layer(ctx [, ok, err]). */
static int run_layer(lua_State *L) {
  layer_arg *a = lua_touserdata(L, 1);
  lua_settop(L, 0);
  lua_rawgeti(L, LUA_REGISTRYINDEX, a->f->fn_ref);
  int n = tg__push_layer_args(L, a->ctx, a->after);
  lua_call(L, n, 0);
  return 0;
}

static void report(tg_generation *g, const char *layer, const tg_chat_fn *f,
                   const tg_layer_ctx *ctx) {
  char what[400], msg[TG_ERRMSG];
  snprintf(what, sizeof what, "%s layer defined at %s", layer, f->where);
  tg__chat_error_text(g, what, msg, sizeof msg);
  tg__layer_error(g->core, g, layer, f->where, msg, ctx);
}

void tg__policy_chat_layers(tg_generation *g, int after,
                            const tg_layer_ctx *ctx) {
  const tg_chat_reg *c = g->chat;
  size_t n = !c ? 0 : after ? c->nafter : c->nbefore;
  const char *layer = after ? "after_chat" : "before_chat";
  for (size_t i = 0; i < n; i++) {
    const tg_chat_fn *f = after ? &c->after[i] : &c->before[i];
    layer_arg a = {f, ctx, after};
    lua_State *L = g->L;
    lua_pushcfunction(L, run_layer);
    lua_pushlightuserdata(L, &a);
    if (tg__sandbox_pcall(g->sb, L, 1, 0) != LUA_OK) report(g, layer, f, ctx);
  }
}
