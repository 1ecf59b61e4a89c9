/* lualayer.h — what a layer function sees (tg_layer_ctx) as a Lua table,
 * one shape for the host module's layers and the policies' chat layers:
 * {session, turn, model?, project?, request?, tool?, call_id?, usage? =
 * {model?, input_tokens, output_tokens, cost}}. */
#ifndef TG_LUALAYER_H
#define TG_LUALAYER_H

#include "luacompat.h"
#include "toolgate.h"

/* Pushes ctx's table. Call it inside the layer's protected call: building
 * it may run out of memory, and a request that cannot be converted raises
 * "the chat request could not be given to the layer". */
void tg__push_layer_ctx(lua_State *L, const tg_layer_ctx *ctx);

/* Pushes a layer function's arguments: ctx's table, and for an `after`
 * layer also ok and the error (nil when ok). Returns how many. */
int tg__push_layer_args(lua_State *L, const tg_layer_ctx *ctx, int after);

#endif
