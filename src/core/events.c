/*
 * events.c — the event bus. seq is taken here and only here, by every
 * event; delivery is in seq order to C subscribers, then to the scope's
 * listeners (policy tg.on_event handlers, wired in by the runtime).
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core.h"
#include "base/util.h"

/* Every event type, once: the list handlers are checked against, and (in
 * debug builds) every emit. */
#define TG_EVENT_TYPES(X)                                                   \
  X(call_start) X(decision) X(hook) X(rewrite) X(validation_failed)        \
  X(approval_request) X(approval) X(attempt) X(retry) X(progress)         \
  X(result_truncated) X(call_end) X(rule_error) X(handler_error)          \
  X(policy_loaded) X(policy_error) X(file_change) X(control_busy)          \
  X(store_error) X(session_tainted)                                        \
  /* the chat side */                                                      \
  X(turn_begin) X(chat_begin) X(chat_end) X(layer_error) X(route)          \
  X(budget_alert) X(notification)

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

int tg__events_subscribe(tg_core *core, tg_event_cb cb, void *ud,
                         int calls) {
  tg_bus *b = &core->bus;
  if (!cb) return -22;
  if (b->nsubs == b->capsubs) {
    size_t cap = b->capsubs ? b->capsubs * 2 : 4;
    tg_sub *s = realloc(b->subs, cap * sizeof *s);
    if (!s) return -12;
    b->subs = s;
    b->capsubs = cap;
  }
  b->subs[b->nsubs] = (tg_sub){b->next_id++, cb, ud, calls != 0};
  if (calls) b->ncallsubs++;
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

void tg__events_unsubscribe(tg_core *core, int id) {
  tg_bus *b = &core->bus;
  for (size_t i = 0; i < b->nsubs; i++)
    if (b->subs[i].id == id && b->subs[i].cb) {
      b->subs[i].cb = NULL;
      if (b->subs[i].calls) b->ncallsubs--;
    }
  if (!b->dispatching) compact_subs(b);
}

/* Does anyone on the bus want an event (of a call, or of none)? */
static int wanted(const tg_bus *b, void *origin, int of_call) {
  if (of_call ? b->ncallsubs : b->nsubs) return 1;
  if (!origin) origin = b->current;
  return origin && b->scope && b->scope->listens(origin);
}

static int listening(const tg_listener *l, const char *type) {
  return l && (l->on_event ||
               (l->on_progress && type && strcmp(type, "progress") == 0));
}

cJSON *tg__event_data_to(tg_core *core, void *origin, const tg_listener *l) {
  return wanted(&core->bus, origin, 1) || (l && (l->on_event || l->on_progress))
             ? cJSON_CreateObject()
             : NULL;
}

cJSON *tg__event_data(tg_core *core, void *origin) {
  return tg__event_data_to(core, origin, NULL);
}

/* Copies first: a listener may end its call, freeing what l points into. */
static void tell(tg_core *core, const tg_listener *l, cJSON *ev, uint64_t seq,
                 const char *type) {
  tg_listener own = *l;
  const char *id = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ev, "call_id"));
  tg_event view = {seq, type, id, ev};
  if (own.on_event) own.on_event(core->rt, &view, own.ud);
  if (own.on_progress && strcmp(type, "progress") == 0)
    own.on_progress(core->rt, &view, own.ud);
}

static void dispatch(tg_core *core) {
  tg_bus *b = &core->bus;
  b->dispatching = 1;
  while (b->head) {
    tg_queued_event *q = b->head;
    b->head = q->next;
    if (!b->head) b->tail = NULL;
    cJSON *type = cJSON_GetObjectItemCaseSensitive(q->ev, "type");
    cJSON *cid = cJSON_GetObjectItemCaseSensitive(q->ev, "call_id");
    cJSON *seq = cJSON_GetObjectItemCaseSensitive(q->ev, "seq");
    tg_event view = {(uint64_t)seq->valuedouble, type->valuestring,
                     cJSON_IsString(cid) ? cid->valuestring : NULL, q->ev};
    /* Subscribers may unsubscribe while we loop: walk by index. */
    for (size_t i = 0; i < b->nsubs; i++)
      if (b->subs[i].cb && (b->subs[i].calls || !view.call_id))
        b->subs[i].cb(core->rt, &view, b->subs[i].ud);
    void *origin = q->origin ? q->origin : b->current;
    if (origin && b->scope) b->scope->deliver(origin, &view);
    if (q->origin) b->scope->unref(q->origin);
    cJSON_Delete(q->ev);
    free(q);
  }
  b->dispatching = 0;
  compact_subs(b);
}

/* Moves data's members into ev, after the header. */
static void move_members(cJSON *ev, cJSON *data) {
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

static cJSON *make_event(uint64_t seq, const char *type, const char *call_id,
                         cJSON *data) {
  cJSON *ev = cJSON_CreateObject();
  if (!ev) {
    cJSON_Delete(data);
    return NULL;
  }
  cJSON_AddNumberToObject(ev, "seq", (double)seq);
  cJSON_AddStringToObject(ev, "type", type);
  if (call_id) cJSON_AddStringToObject(ev, "call_id", call_id);
  cJSON_AddNumberToObject(ev, "ts_ms", tg__now_ms());
  cJSON_AddNumberToObject(ev, "ts", tg__wall_ms());
  if (data) move_members(ev, data);
  return ev;
}

static void enqueue(tg_core *core, void *origin, cJSON *ev) {
  tg_bus *b = &core->bus;
  tg_queued_event *q = calloc(1, sizeof *q);
  if (!q) {
    cJSON_Delete(ev);
    return;
  }
  q->ev = ev;
  q->origin = origin && b->scope ? origin : NULL;
  if (q->origin) b->scope->ref(q->origin);
  if (b->tail) b->tail->next = q; else b->head = q;
  b->tail = q;
  if (!b->dispatching) dispatch(core);
}

void tg__emit_to(tg_core *core, void *origin, const char *type,
                 const char *call_id, cJSON *data, const tg_listener *l) {
  assert(tg_event_type_known(type)); /* a new type goes in TG_EVENT_TYPES */
  uint64_t seq = ++core->bus.seq;
  int bus = wanted(&core->bus, origin, call_id != NULL);
  int own = listening(l, type);
  if (!bus && !own) {
    cJSON_Delete(data);
    return;
  }
  cJSON *ev = make_event(seq, type, call_id, data);
  if (!ev) return;
  tg__redact_tree(&core->redact, ev); /* nothing secret leaves (redact.c) */
  if (own) tell(core, l, ev, seq, type);
  if (bus) enqueue(core, origin, ev);
  else cJSON_Delete(ev);
}

void tg__emit(tg_core *core, void *origin, const char *type,
              const char *call_id, cJSON *data) {
  tg__emit_to(core, origin, type, call_id, data, NULL);
}

void tg__bus_free(tg_core *core) {
  tg_bus *b = &core->bus;
  while (b->head) {
    tg_queued_event *q = b->head;
    b->head = q->next;
    if (q->origin) b->scope->unref(q->origin);
    cJSON_Delete(q->ev);
    free(q);
  }
  free(b->subs);
  b->subs = NULL;
  b->nsubs = b->capsubs = b->ncallsubs = 0;
}
