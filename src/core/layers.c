/*
 * layers.c — the C layers (layers.h). Why a list with marks: a layer may
 * add or remove layers (itself included) while a round runs; a removal
 * only marks the entry, and the round walks up to the count it started
 * with, so nothing shifts under it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "layers.h"
#include "core.h"
#include "base/util.h"

static const char *const kind_names[TG_LAYER__COUNT] = {
    "before_chat", "after_chat", "before_tool", "after_tool"};

const char *tg__layer_kind_name(tg_layer_kind k) { return kind_names[k]; }

static tg_layer_fn fn_of(const tg_layer *l, tg_layer_kind k) {
  switch (k) {
  case TG_LAYER_BEFORE_CHAT: return l->before_chat;
  case TG_LAYER_AFTER_CHAT: return l->after_chat;
  case TG_LAYER_BEFORE_TOOL: return l->before_tool;
  default: return l->after_tool;
  }
}

static void count(tg_layers *ls, const tg_layer *l, int delta) {
  for (int k = 0; k < TG_LAYER__COUNT; k++)
    if (fn_of(l, (tg_layer_kind)k)) ls->count[k] += (size_t)delta;
}

int tg__layers_add(tg_core *core, const tg_layer *l, char err[TG_ERRMSG]) {
  if (!l || (!l->before_chat && !l->after_chat && !l->before_tool &&
             !l->after_tool)) {
    tg__errf(err, TG_ERRMSG, "a layer needs at least one function");
    return -EINVAL;
  }
  if (!core->layers && !(core->layers = calloc(1, sizeof *core->layers)))
    goto nomem;
  tg_layers *ls = core->layers;
  if (ls->n == ls->cap) {
    size_t cap = ls->cap ? ls->cap * 2 : 4;
    tg_layer_entry *v = realloc(ls->v, cap * sizeof *v);
    if (!v) goto nomem;
    ls->v = v;
    ls->cap = cap;
  }
  char *name = tg__strdup(l->name ? l->name : "");
  if (!name) goto nomem;
  tg_layer_entry *e = &ls->v[ls->n++];
  *e = (tg_layer_entry){++ls->next_id, name, *l};
  e->l.name = name;
  count(ls, l, 1);
  return e->id;
nomem:
  tg__errf(err, TG_ERRMSG, "out of memory");
  return -ENOMEM;
}

static void compact(tg_layers *ls) {
  size_t k = 0;
  for (size_t i = 0; i < ls->n; i++) {
    if (ls->v[i].id) ls->v[k++] = ls->v[i];
    else free(ls->v[i].name);
  }
  ls->n = k;
}

void tg__layers_remove(tg_core *core, int id) {
  tg_layers *ls = core->layers;
  for (size_t i = 0; ls && i < ls->n; i++) {
    if (ls->v[i].id != id || !id) continue;
    count(ls, &ls->v[i].l, -1);
    ls->v[i].id = 0;
    if (!ls->running) compact(ls);
    return;
  }
}

void tg__layer_error(tg_core *core, void *origin, const char *layer,
                     const char *where, const char *msg,
                     const tg_layer_ctx *ctx) {
  cJSON *d = tg__event_data(core, origin); /* NULL: nobody listens */
  if (d) {
    cJSON_AddStringToObject(d, "layer", layer);
    cJSON_AddStringToObject(d, "where", where);
    cJSON_AddStringToObject(d, "error", msg && *msg ? msg : "(no message)");
    if (ctx && ctx->session) cJSON_AddStringToObject(d, "session", ctx->session);
    if (ctx) cJSON_AddNumberToObject(d, "turn", (double)ctx->turn);
    if (ctx && ctx->tool) cJSON_AddStringToObject(d, "tool", ctx->tool);
  }
  tg__emit(core, origin, "layer_error", ctx ? ctx->call_id : NULL, d);
}

void tg__layers_run(tg_core *core, tg_layer_kind k, const tg_layer_ctx *ctx) {
  tg_layers *ls = core->layers;
  if (!tg__layers_any(ls, k)) return;
  ls->running++;
  size_t n = ls->n; /* layers added meanwhile wait for the next round */
  for (size_t i = 0; i < n; i++) {
    tg_layer_fn fn = ls->v[i].id ? fn_of(&ls->v[i].l, k) : NULL;
    if (!fn) continue;
    char err[TG_ERRMSG] = "";
    if (fn(core->rt, ctx, ls->v[i].l.ud, err) == 0) continue;
    char where[300];
    snprintf(where, sizeof where, "C layer '%s'", ls->v[i].name);
    tg__layer_error(core, NULL, kind_names[k], where, err, ctx);
  }
  if (--ls->running == 0) compact(ls);
}

void tg__layers_free(tg_core *core) {
  tg_layers *ls = core->layers;
  if (!ls) return;
  for (size_t i = 0; i < ls->n; i++) free(ls->v[i].name);
  free(ls->v);
  free(ls);
  core->layers = NULL;
}
