/*
 * on_event.c — a generation's tg.on_event handlers as listeners of the
 * event bus: the runtime installs tg__generation_scope as the bus's scope,
 * so events reach the handlers of the generation they were emitted under
 * (or the current one). Errors there become `handler_error` events, which
 * are not fed back to policy handlers, so a failing handler cannot loop.
 */
#include <stdio.h>
#include <string.h>
#include "generation.h"
#include "sandbox.h"
#include "core/core.h"
#include "lua/luajson.h"
#include "lua/luacall.h"

static void report(tg_generation *g, const tg_handler *h, const char *m) {
  char stop[700], what[400];
  snprintf(what, sizeof what, "on_event handler defined at %s", h->where);
  if (tg__sandbox_describe_stop(g->sb, what, stop, sizeof stop)) m = stop;
  cJSON *d = cJSON_CreateObject();
  cJSON_AddStringToObject(d, "where", h->where);
  cJSON_AddStringToObject(d, "error", m);
  tg__emit(g->core, g, "handler_error", NULL, d);
}

static void deliver(void *origin, const tg_event *ev) {
  tg_generation *g = origin;
  if (!g->nhandlers || g->in_handler) return;
  if (strcmp(ev->type, "handler_error") == 0) return;
  lua_State *L = g->L;
  g->in_handler = 1;
  for (size_t i = 0; i < g->nhandlers; i++) {
    tg_handler *h = &g->handlers[i];
    if (h->type && strcmp(h->type, ev->type) != 0) continue;
    lua_rawgeti(L, LUA_REGISTRYINDEX, h->fn_ref);  /* handler */
    if (tg__json_push(L, ev->data) < 0) {
      lua_pop(L, 1);
      continue;
    }
    if (tg__sandbox_pcall(g->sb, L, 1, 0) != LUA_OK) {
      report(g, h, tg__lua_error_text(L, -1, "(non-string error)"));
      lua_pop(L, 1);
    }
  }
  g->in_handler = 0;
}

static int listens(void *origin) { return tg__generation_listens(origin); }

static void ref(void *origin) { tg__generation_ref(origin); }
static void unref(void *origin) { tg__generation_unref(origin); }

const tg_bus_scope tg__generation_scope = {ref, unref, listens, deliver};
