/* lualayer.c — see lualayer.h. */
#include "lualayer.h"
#include "luajson.h"

static void set_str(lua_State *L, const char *k, const char *v) {
  if (!v) return;
  lua_pushstring(L, v);
  lua_setfield(L, -2, k);
}

static void push_usage(lua_State *L, const tg_chat_usage *u) {
  lua_createtable(L, 0, 4);
  set_str(L, "model", u->model);
  lua_pushinteger(L, (lua_Integer)u->input_tokens);
  lua_setfield(L, -2, "input_tokens");
  lua_pushinteger(L, (lua_Integer)u->output_tokens);
  lua_setfield(L, -2, "output_tokens");
  lua_pushnumber(L, u->cost);
  lua_setfield(L, -2, "cost");
}

void tg__push_layer_ctx(lua_State *L, const tg_layer_ctx *c) {
  lua_createtable(L, 0, 8);
  set_str(L, "session", c->session);
  lua_pushinteger(L, (lua_Integer)c->turn);
  lua_setfield(L, -2, "turn");
  set_str(L, "model", c->model);
  set_str(L, "project", c->project);
  set_str(L, "tool", c->tool);
  set_str(L, "call_id", c->call_id);
  if (c->request) {
    if (tg__json_push(L, c->request) < 0)
      luaL_error(L, "the chat request could not be given to the layer");
    lua_setfield(L, -2, "request");
  }
  if (c->usage) {
    push_usage(L, c->usage);
    lua_setfield(L, -2, "usage");
  }
}

int tg__push_layer_args(lua_State *L, const tg_layer_ctx *ctx, int after) {
  tg__push_layer_ctx(L, ctx);
  if (!after) return 1;
  lua_pushboolean(L, ctx->ok);
  if (ctx->ok) lua_pushnil(L);
  else lua_pushstring(L, ctx->error ? ctx->error : "");
  return 3;
}
