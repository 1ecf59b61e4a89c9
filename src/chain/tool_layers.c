/*
 * tool_layers.c — the C layers around a call's tool (core/layers.h):
 * before_tool once the call has passed the rules, hooks,
 * validation and approval, just before its first attempt; after_tool
 * when that call ends, with its status. A call that never reaches its
 * tool (denied, aborted, answered by a pre-hook) runs neither. With no
 * C layer, this costs one test per call.
 */
#include "call.h"
#include "core/layers.h"

static tg_layer_ctx ctx_of(const tg_call *c) {
  tg_layer_ctx ctx = {0};
  ctx.session = c->session;
  ctx.turn = c->turn;
  ctx.tool = c->tool_name;
  ctx.call_id = c->id;
  return ctx;
}

void tg__call_before_tool(tg_call *c) {
  if (!tg__layers_any(c->core->layers, TG_LAYER_BEFORE_TOOL) &&
      !tg__layers_any(c->core->layers, TG_LAYER_AFTER_TOOL))
    return;
  c->tool_layered = 1;
  tg_layer_ctx ctx = ctx_of(c);
  tg__layers_run(c->core, TG_LAYER_BEFORE_TOOL, &ctx);
}

void tg__call_after_tool(tg_call *c) {
  tg_layer_ctx ctx = ctx_of(c);
  ctx.ok = c->status == TG_STATUS_OK;
  if (!ctx.ok)
    ctx.error = c->error.message ? c->error.message : tg_status_name(c->status);
  tg__layers_run(c->core, TG_LAYER_AFTER_TOOL, &ctx);
}
