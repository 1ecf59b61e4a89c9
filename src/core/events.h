/*
 * events.h — the event bus: a runtime-owned, strictly increasing seq and
 * in-order delivery to C subscribers and to a scope's listeners (policy
 * `tg.on_event` handlers: the runtime plugs the policy layer in as the
 * scope, so the bus never knows what a generation is). Emitting while
 * delivering queues the event, so every subscriber sees events in seq
 * order even when a handler causes new ones.
 */
#ifndef TG_EVENTS_H
#define TG_EVENTS_H

#include <stdint.h>
#include <stddef.h>
#include <cjson/cJSON.h>
#include "toolgate.h"

struct tg_core;

typedef struct {
  int id;
  tg_event_cb cb;
  void *ud;
  int calls;                    /* 1: every event; 0: only events of no
                                   call (tg_events_subscribe_runtime) */
} tg_sub;

/* Listeners that belong to an origin (a policy generation): an event is
 * delivered to the listeners of the origin it was emitted under, or of
 * the bus's current origin when it names none. The bus holds a reference
 * on an origin while an event of it is queued. */
typedef struct {
  void (*ref)(void *origin);
  void (*unref)(void *origin);
  int (*listens)(void *origin);                 /* any listener at all? */
  void (*deliver)(void *origin, const tg_event *ev);
} tg_bus_scope;

/* A call's own listeners (tg_call_request.on_event / on_progress): told of
 * the call's events as they are made. */
typedef struct {
  tg_event_cb on_event;         /* every event of the call */
  tg_event_cb on_progress;      /* its progress events */
  void *ud;
} tg_listener;

typedef struct tg_queued_event {
  cJSON *ev;
  void *origin;                 /* reference held; NULL: the current one */
  struct tg_queued_event *next;
} tg_queued_event;

typedef struct {
  uint64_t seq;
  tg_sub *subs;
  size_t nsubs, capsubs;
  size_t ncallsubs;             /* live subscribers that hear calls' events:
                                   none, and a call nobody else hears builds
                                   no event */
  int next_id;
  tg_queued_event *head, *tail;
  int dispatching;
  const tg_bus_scope *scope;    /* NULL: no scoped listeners */
  void *current;                /* the current origin (not referenced: its
                                   owner keeps it alive while current) */
} tg_bus;

/* The one way to make an event. Every event counts — its seq is taken
 * whether or not anyone listens, so numbering never depends on who does.
 *
 *   cJSON *d = tg__event_data(core, origin);  NULL: nobody listens
 *   if (d) { ...add fields... }
 *   tg__emit(core, origin, "type", call_id, d);
 *
 * tg__emit takes data (an object, or NULL for {}), adds seq, type,
 * call_id, ts_ms (monotonic) and ts (wall clock, ms since the epoch), and
 * delivers it or queues it. origin may be NULL (the current one).
 *
 * The _to forms also tell a call's own listener l (may be NULL), at once:
 * a call's events reach it in seq order, each before tg__emit_to returns,
 * whatever the bus is busy with. */
cJSON *tg__event_data(struct tg_core *core, void *origin);
void tg__emit(struct tg_core *core, void *origin, const char *type,
              const char *call_id, cJSON *data);
cJSON *tg__event_data_to(struct tg_core *core, void *origin,
                         const tg_listener *l);
void tg__emit_to(struct tg_core *core, void *origin, const char *type,
                 const char *call_id, cJSON *data, const tg_listener *l);

/* calls 0: the subscriber hears only the events of no call. */
int tg__events_subscribe(struct tg_core *core, tg_event_cb cb, void *ud,
                         int calls);
void tg__events_unsubscribe(struct tg_core *core, int id);
void tg__bus_free(struct tg_core *core);

#endif
