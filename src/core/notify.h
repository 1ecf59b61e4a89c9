/*
 * notify.h — notifications: a bounded list of short messages for
 * the user, each with a level, a title, an optional message, duration and
 * action; dismissed by id, expired by the runtime clock, the oldest
 * dropped past TG_NOTIFY_MAX. Showing one is a `notification` event, and
 * every change goes to the subscribers with the list after it. A slot of
 * the core (core->notices), made on first use.
 */
#ifndef TG_NOTIFY_H
#define TG_NOTIFY_H

#include <stdint.h>
#include <cjson/cJSON.h>
#include <uv.h>
#include "toolgate.h"

struct tg_core;

typedef struct {
  int id;
  tg_notify_cb cb;
  void *ud;
} tg_notify_sub;

typedef struct tg_notices {
  cJSON *list[TG_NOTIFY_MAX];  /* oldest first; each a notification object */
  size_t n;
  int64_t next_id;
  tg_notify_sub *subs;
  size_t nsubs, capsubs;
  int next_sub, telling;       /* unsubscribes only mark while telling */
  uv_timer_t *timer;           /* wakes at the next expiry (unref'd);
                                  freed by its close callback */
} tg_notices;

/* Parses "info", "success", "warning", "error"; -1 for anything else. */
int tg__notify_level_of(const char *name);

int64_t tg__notify(struct tg_core *core, const tg_notification *n,
                   char err[TG_ERRMSG]);
int tg__notify_dismiss(struct tg_core *core, int64_t id);
cJSON *tg__notifications(struct tg_core *core);
int tg__notify_subscribe(struct tg_core *core, tg_notify_cb cb, void *ud);
void tg__notify_unsubscribe(struct tg_core *core, int id);
/* Drops what the clock has passed (the clock was set). */
void tg__notify_expire(struct tg_core *core);
void tg__notify_free(struct tg_core *core);

#endif
