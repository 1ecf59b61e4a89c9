/*
 * changes.h — the file changes the built-in file tools make: queued per
 * call while it runs, delivered when it ends (after its call_end event) to
 * glob subscribers (C: tg_changes_subscribe; policies: tg.on_file_change),
 * as `file_change` events, and into a ring of the most recent ones.
 *
 * This is a tool-level tracker, not an OS watcher: it sees what toolgate's
 * own tools change, with the call that changed it. Its state is a slot of
 * the core (core->changes, made on first use).
 */
#ifndef TG_CHANGES_H
#define TG_CHANGES_H

#include <stdint.h>
#include <stddef.h>
#include <cjson/cJSON.h>
#include "toolgate.h"
#include "events.h"

#define TG_CHANGES_RING 256

struct tg_core;

/* Hears a call's changes for its origin (a policy generation's
 * tg.on_file_change handlers: the chain passes them in). */
typedef void (*tg_change_listener)(void *origin, const cJSON *change,
                                   const char *path);

typedef struct {
  int id;
  char *glob;
  tg_change_cb cb;
  void *ud;
} tg_change_sub;

/* The changes of one call still running. */
typedef struct tg_change_batch {
  char *call_id;
  cJSON *changes;                /* array of change objects, in order */
  struct tg_change_batch *next;
} tg_change_batch;

typedef struct tg_changes {
  cJSON *ring[TG_CHANGES_RING];  /* oldest at (head - count) mod size */
  size_t head, count;
  tg_change_sub *subs;
  size_t nsubs, capsubs;
  int next_id;
  int delivering;                /* unsubscribes only mark while > 0 */
  int dead;                      /* marked subscriptions to compact */
  tg_change_batch *pending;
} tg_changes;

/* One change, as the tools report it. */
typedef struct {
  const char *root, *path, *type, *old_path;
  int64_t size;
  double mtime;
} tg_change_rec;

/* Queues a change made by `tool` in call `call_id`; it is delivered when
 * that call ends. Returns 0 or -ENOMEM. */
int tg__changes_record(struct tg_core *core, const char *call_id, const char *tool,
                       const tg_change_rec *ch);

/* Called once a call has emitted call_end: its changes go to the ring,
 * out as `file_change` events (under origin), to C subscribers and to
 * listener(origin, ...), in the order they were made. */
void tg__changes_call_ended(struct tg_core *core, void *origin,
                            tg_change_listener listener, const char *call_id,
                            const tg_listener *own);

/* tg_changes_subscribe / _unsubscribe / _recent of the public API. */
int tg__changes_subscribe(struct tg_core *core, const char *glob,
                          tg_change_cb cb, void *ud);
void tg__changes_unsubscribe(struct tg_core *core, int id);
cJSON *tg__changes_recent(struct tg_core *core, size_t limit);

void tg__changes_free(struct tg_core *core);

#endif
