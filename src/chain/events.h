/*
 * events.h — the event bus: a runtime-owned, strictly increasing seq and
 * in-order delivery to C subscribers and policy `tg.on_event` handlers.
 * Emitting while delivering queues the event, so every subscriber sees
 * events in seq order even when a handler causes new ones.
 */
#ifndef TG_EVENTS_H
#define TG_EVENTS_H

#include <stdint.h>
#include <stddef.h>
#include <cjson/cJSON.h>
#include "toolgate.h"

struct tg_generation;

typedef struct {
  int id;
  tg_event_cb cb;
  void *ud;
} tg_sub;

typedef struct tg_queued_event {
  cJSON *ev;
  struct tg_generation *gen; /* whose on_event handlers see it (ref held) */
  struct tg_queued_event *next;
} tg_queued_event;

typedef struct {
  uint64_t seq;
  tg_sub *subs;
  size_t nsubs, capsubs;
  int next_id;
  tg_queued_event *head, *tail;
  int dispatching;
} tg_bus;

/* Does anyone listen? Emitters use it to skip building event payloads. */
int tg__events_wanted(struct tg_runtime *rt, struct tg_generation *gen);

/* Emits an event: takes ownership of data (an object, or NULL for {}),
 * adds seq, type, call_id and ts, and delivers it (or queues it). gen may be
 * NULL (the current generation's handlers then see it). */
void tg__emit(struct tg_runtime *rt, struct tg_generation *gen,
              const char *type, const char *call_id, cJSON *data);

void tg__bus_free(struct tg_runtime *rt);

#endif
