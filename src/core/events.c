/*
 * events.c — the event bus. seq is owned here and only here; delivery is
 * in seq order to C subscribers, then to the policy generation's
 * tg.on_event handlers (errors there become `handler_error` events, which
 * are not fed back to policy handlers, so a failing handler cannot loop).
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "runtime/runtime.h"
#include "policy/generation.h"
#include "lua/luajson.h"
#include "policy/sandbox.h"

/* Every event type, once: the list handlers are checked against, and (in
 * debug builds) every emit. */
#define TG_EVENT_TYPES(X)                                                   \
  X(call_start) X(decision) X(hook) X(rewrite) X(validation_failed)        \
  X(approval_request) X(approval) X(attempt) X(retry) X(progress)         \
  X(result_truncated) X(call_end) X(rule_error) X(handler_error)          \
  X(policy_loaded) X(policy_error) X(file_change) X(control_busy)

#define TG_EVENT_NAME(t) #t,
#define TG_EVENT_TEXT(t) " " #t
static const char *const event_types[] = {TG_EVENT_TYPES(TG_EVENT_NAME)};
static const char event_types_text[] = TG_EVENT_TYPES(TG_EVENT_TEXT);

const char *tg_event_types(void) { return event_types_text + 1; }

int tg_event_type_known(const char *type) {
  for (size_t i = 0; type && i < sizeof event_types / sizeof *event_types; i++)
    if (strcmp(type, event_types[i]) == 0) return 1;
  return 0;
}

int tg_events_subscribe(tg_runtime *rt, tg_event_cb cb, void *ud) {
  tg_bus *b = &rt->bus;
  if (!cb) return -22;
  if (b->nsubs == b->capsubs) {
    size_t cap = b->capsubs ? b->capsubs * 2 : 4;
    tg_sub *s = realloc(b->subs, cap * sizeof *s);
    if (!s) return -12;
    b->subs = s;
    b->capsubs = cap;
  }
  b->subs[b->nsubs] = (tg_sub){b->next_id++, cb, ud};
  return b->subs[b->nsubs++].id;
}

/* Drops subscriptions marked dead (cb NULL) once no delivery walks the
 * array, so an unsubscribe inside a callback never shifts the others. */
static void compact_subs(tg_bus *b) {
  size_t k = 0;
  for (size_t i = 0; i < b->nsubs; i++)
    if (b->subs[i].cb) b->subs[k++] = b->subs[i];
  b->nsubs = k;
}

void tg_events_unsubscribe(tg_runtime *rt, int id) {
  tg_bus *b = &rt->bus;
  for (size_t i = 0; i < b->nsubs; i++)
    if (b->subs[i].id == id) b->subs[i].cb = NULL;
  if (!b->dispatching) compact_subs(b);
}

int tg__events_wanted(tg_runtime *rt, tg_generation *gen) {
  if (rt->bus.nsubs) return 1;
  if (!gen) gen = rt->gen;
  return gen && gen->nhandlers;
}

static void deliver_to_policy(tg_runtime *rt, tg_generation *g,
                              const cJSON *ev, const char *type) {
  if (!g || !g->nhandlers || g->in_handler) return;
  if (strcmp(type, "handler_error") == 0) return;
  lua_State *L = g->L;
  g->in_handler = 1;
  for (size_t i = 0; i < g->nhandlers; i++) {
    tg_handler *h = &g->handlers[i];
    if (h->type && strcmp(h->type, type) != 0) continue;
    lua_rawgeti(L, LUA_REGISTRYINDEX, h->fn_ref);  /* handler */
    if (tg_json_push(L, ev) < 0) {
      lua_pop(L, 1);
      continue;
    }
    if (tg__sandbox_pcall(g->sb, L, 1, 0) != LUA_OK) {
      const char *m = lua_tostring(L, -1);
      char stop[700], what[400];
      snprintf(what, sizeof what, "on_event handler defined at %s", h->where);
      if (tg__sandbox_describe_stop(g->sb, what, stop, sizeof stop)) m = stop;
      cJSON *d = cJSON_CreateObject();
      cJSON_AddStringToObject(d, "where", h->where);
      cJSON_AddStringToObject(d, "error", m ? m : "(non-string error)");
      lua_pop(L, 1);
      tg__emit(rt, g, "handler_error", NULL, d);
    }
  }
  g->in_handler = 0;
}

static void dispatch(tg_runtime *rt) {
  tg_bus *b = &rt->bus;
  b->dispatching = 1;
  while (b->head) {
    tg_queued_event *q = b->head;
    b->head = q->next;
    if (!b->head) b->tail = NULL;
    cJSON *type = cJSON_GetObjectItem(q->ev, "type");
    cJSON *cid = cJSON_GetObjectItem(q->ev, "call_id");
    cJSON *seq = cJSON_GetObjectItem(q->ev, "seq");
    tg_event view = {(uint64_t)seq->valuedouble, type->valuestring,
                     cJSON_IsString(cid) ? cid->valuestring : NULL, q->ev};
    /* Subscribers may unsubscribe while we loop: walk by index. */
    for (size_t i = 0; i < b->nsubs; i++)
      if (b->subs[i].cb) b->subs[i].cb(rt, &view, b->subs[i].ud);
    deliver_to_policy(rt, q->gen ? q->gen : rt->gen, q->ev, view.type);
    if (q->gen) tg__generation_unref(q->gen);
    cJSON_Delete(q->ev);
    free(q);
  }
  b->dispatching = 0;
  compact_subs(b);
}

void tg__emit(tg_runtime *rt, tg_generation *gen, const char *type,
              const char *call_id, cJSON *data) {
  assert(tg_event_type_known(type)); /* a new type goes in TG_EVENT_TYPES */
  uint64_t seq = ++rt->bus.seq;
  if (!tg__events_wanted(rt, gen)) {
    cJSON_Delete(data);
    return;
  }
  tg_queued_event *q = calloc(1, sizeof *q);
  cJSON *ev = cJSON_CreateObject();
  if (!q || !ev) {
    free(q);
    cJSON_Delete(ev);
    cJSON_Delete(data);
    return;
  }
  cJSON_AddNumberToObject(ev, "seq", (double)seq);
  cJSON_AddStringToObject(ev, "type", type);
  if (call_id) cJSON_AddStringToObject(ev, "call_id", call_id);
  cJSON_AddNumberToObject(ev, "ts_ms", tg__now_ms());
  if (data) { /* move data's members into ev, after the header */
    cJSON *it = data->child;
    data->child = NULL;
    while (it) {
      cJSON *nx = it->next;
      it->prev = it->next = NULL;
      /* cJSON copies the key before it frees the item's old one */
      cJSON_AddItemToObject(ev, it->string, it);
      it = nx;
    }
    cJSON_Delete(data);
  }
  q->ev = ev;
  q->gen = gen;
  if (gen) tg__generation_ref(gen);
  if (rt->bus.tail) rt->bus.tail->next = q; else rt->bus.head = q;
  rt->bus.tail = q;
  if (!rt->bus.dispatching) dispatch(rt);
}

void tg__bus_free(tg_runtime *rt) {
  tg_bus *b = &rt->bus;
  while (b->head) {
    tg_queued_event *q = b->head;
    b->head = q->next;
    if (q->gen) tg__generation_unref(q->gen);
    cJSON_Delete(q->ev);
    free(q);
  }
  free(b->subs);
  b->subs = NULL;
  b->nsubs = b->capsubs = 0;
}
