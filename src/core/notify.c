/*
 * notify.c — the notifications list (notify.h). The list is small and
 * fixed (TG_NOTIFY_MAX), so it is an array kept oldest first. Expiry is
 * checked against the runtime clock whenever the list changes or is read,
 * and an unref'd timer wakes at the next expiry so that subscribers hear of
 * it while the loop turns; it never keeps a host's loop alive.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "notify.h"
#include "core.h"
#include "base/util.h"

static const char *const level_names[] = {"info", "success", "warning",
                                          "error"};

const char *tg_notify_level_name(tg_notify_level level) {
  return (unsigned)level < 4 ? level_names[level] : NULL;
}

int tg__notify_level_of(const char *name) {
  for (int i = 0; name && i < 4; i++)
    if (strcmp(name, level_names[i]) == 0) return i;
  return -1;
}

static tg_notices *state(tg_core *core) {
  if (!core->notices && (core->notices = calloc(1, sizeof *core->notices)))
    core->notices->next_id = core->notices->next_sub = 1;
  return core->notices;
}

static cJSON *list_json(const tg_notices *s) {
  cJSON *a = cJSON_CreateArray();
  for (size_t i = 0; a && i < s->n; i++)
    cJSON_AddItemToArray(a, cJSON_Duplicate(s->list[i], 1));
  return a;
}

static void compact_subs(tg_notices *s) {
  size_t k = 0;
  for (size_t i = 0; i < s->nsubs; i++)
    if (s->subs[i].cb) s->subs[k++] = s->subs[i];
  s->nsubs = k;
}

/* Tells the subscribers, then frees `one` (no longer in the list, or a
 * copy). Subscribers may change the list or subscriptions meanwhile. */
static void tell(tg_core *core, const char *change, cJSON *one) {
  tg_notices *s = core->notices;
  size_t n = s->nsubs;
  if (n) {
    cJSON *list = list_json(s);
    s->telling++;
    for (size_t i = 0; i < n && i < s->nsubs; i++)
      if (s->subs[i].cb) s->subs[i].cb(core->rt, change, one, list, s->subs[i].ud);
    if (--s->telling == 0) compact_subs(s);
    cJSON_Delete(list);
  }
  cJSON_Delete(one);
}

/* Takes item i out of the list and returns it. */
static cJSON *take(tg_notices *s, size_t i) {
  cJSON *one = s->list[i];
  memmove(&s->list[i], &s->list[i + 1], (s->n - i - 1) * sizeof *s->list);
  s->n--;
  return one;
}

static int64_t expiry(const cJSON *n) {
  const cJSON *e = cJSON_GetObjectItemCaseSensitive(n, "expires_at");
  return cJSON_IsNumber(e) ? (int64_t)e->valuedouble : 0;
}

static void arm(tg_core *core);

/* Drops every notification the clock has passed, telling each. */
static void expire(tg_core *core) {
  tg_notices *s = core->notices;
  int64_t now = tg__clock_ms(core);
  for (size_t i = 0; s && i < s->n;) {
    int64_t e = expiry(s->list[i]);
    if (e && e <= now) tell(core, "expired", take(s, i));
    else i++;
  }
  if (s) arm(core);
}

void tg__notify_expire(tg_core *core) { expire(core); }

static void timer_cb(uv_timer_t *t) { expire(t->data); }

/* The timer waits for the earliest expiry (by the runtime clock's
 * distance to it: with an injected clock that stands still, it fires and
 * finds nothing to drop, and the next change re-arms it). */
static void arm(tg_core *core) {
  tg_notices *s = core->notices;
  int64_t first = 0;
  for (size_t i = 0; i < s->n; i++) {
    int64_t e = expiry(s->list[i]);
    if (e && (!first || e < first)) first = e;
  }
  if (!first) {
    if (s->timer) uv_timer_stop(s->timer);
    return;
  }
  if (!s->timer) {
    if (core->freeing || !(s->timer = malloc(sizeof *s->timer))) return;
    uv_timer_init(core->loop, s->timer);
    s->timer->data = core;
    uv_unref((uv_handle_t *)s->timer);
  }
  int64_t wait = first - tg__clock_ms(core);
  uv_update_time(core->loop);
  uv_timer_start(s->timer, timer_cb, wait > 0 ? (uint64_t)wait : 0, 0);
}

/* A notification is for a person to read: its strings are bounded, so a
 * policy that notifies megabytes keeps TG_NOTIFY_MAX small things, not
 * TG_NOTIFY_MAX big ones. Cut on a UTF-8 character boundary, marked. */
static void add_bounded(cJSON *o, const char *k, const char *v, size_t max) {
  size_t n = strlen(v);
  if (n <= max) {
    cJSON_AddStringToObject(o, k, v);
    return;
  }
  while (max > 0 && ((unsigned char)v[max] & 0xC0) == 0x80) max--;
  char *cut = malloc(max + 4);
  if (!cut) return;
  memcpy(cut, v, max);
  memcpy(cut + max, "\xe2\x80\xa6", 4); /* "…" and the NUL */
  cJSON_AddStringToObject(o, k, cut);
  free(cut);
}

static cJSON *make(const tg_notification *n, int64_t id, int64_t now) {
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  cJSON_AddNumberToObject(o, "id", (double)id);
  cJSON_AddStringToObject(o, "level", tg_notify_level_name(n->level));
  add_bounded(o, "title", n->title, TG_NOTIFY_TITLE_MAX);
  if (n->message) add_bounded(o, "message", n->message, TG_NOTIFY_MESSAGE_MAX);
  if (n->duration_ms) {
    cJSON_AddNumberToObject(o, "duration_ms", (double)n->duration_ms);
    cJSON_AddNumberToObject(o, "expires_at", (double)now + (double)n->duration_ms);
  }
  if (n->action_label) {
    cJSON *a = cJSON_AddObjectToObject(o, "action");
    add_bounded(a, "label", n->action_label, TG_NOTIFY_TITLE_MAX);
    if (n->action_command)
      add_bounded(a, "command", n->action_command, TG_NOTIFY_MESSAGE_MAX);
  }
  add_bounded(o, "source", n->source ? n->source : "host", TG_NOTIFY_TITLE_MAX);
  cJSON_AddNumberToObject(o, "created_at", (double)now);
  return o;
}

static void emit_shown(tg_core *core, const cJSON *o) {
  cJSON *d = tg__event_data(core, NULL); /* NULL: nobody listens */
  if (d)
    for (const cJSON *it = o->child; it; it = it->next)
      cJSON_AddItemToObject(d, it->string, cJSON_Duplicate(it, 1));
  tg__emit(core, NULL, "notification", NULL, d);
}

int64_t tg__notify(tg_core *core, const tg_notification *n,
                   char err[TG_ERRMSG]) {
  if (!n || !n->title || !*n->title || !tg_notify_level_name(n->level)) {
    tg__errf(err, TG_ERRMSG, "a notification needs a title and a level "
             "(info, success, warning or error)");
    return -EINVAL;
  }
  if (n->duration_ms > (uint64_t)1 << 52) {
    tg__errf(err, TG_ERRMSG, "duration_ms is too large");
    return -EINVAL;
  }
  tg_notices *s = state(core);
  if (s && s->telling > 8) { /* a subscriber that notifies on every change */
    tg__errf(err, TG_ERRMSG, "notifications shown from inside subscribers "
             "nest more than 8 deep");
    return -ELOOP;
  }
  cJSON *o = s ? make(n, s->next_id, tg__clock_ms(core)) : NULL;
  if (!o) {
    tg__errf(err, TG_ERRMSG, "out of memory");
    return -ENOMEM;
  }
  int64_t id = s->next_id++;
  expire(core);
  /* a subscriber told of a drop may show one more: make room until there
   * is (each round drops one of theirs too, and they nest boundedly) */
  while (s->n >= TG_NOTIFY_MAX) tell(core, "dropped", take(s, 0));
  s->list[s->n++] = o;
  arm(core);
  emit_shown(core, o);
  tell(core, "shown", cJSON_Duplicate(o, 1));
  return id;
}

int tg__notify_dismiss(tg_core *core, int64_t id) {
  tg_notices *s = core->notices;
  for (size_t i = 0; s && i < s->n; i++) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(s->list[i], "id");
    if ((int64_t)v->valuedouble != id) continue;
    tell(core, "dismissed", take(s, i));
    arm(core);
    return 0;
  }
  return -ENOENT;
}

cJSON *tg__notifications(tg_core *core) {
  if (core->notices) expire(core);
  return core->notices ? list_json(core->notices) : cJSON_CreateArray();
}

int tg__notify_subscribe(tg_core *core, tg_notify_cb cb, void *ud) {
  tg_notices *s = state(core);
  if (!cb) return -EINVAL;
  if (!s) return -ENOMEM;
  if (s->nsubs == s->capsubs) {
    size_t cap = s->capsubs ? s->capsubs * 2 : 4;
    tg_notify_sub *v = realloc(s->subs, cap * sizeof *v);
    if (!v) return -ENOMEM;
    s->subs = v;
    s->capsubs = cap;
  }
  s->subs[s->nsubs] = (tg_notify_sub){s->next_sub++, cb, ud};
  return s->subs[s->nsubs++].id;
}

void tg__notify_unsubscribe(tg_core *core, int id) {
  tg_notices *s = core->notices;
  for (size_t i = 0; s && i < s->nsubs; i++)
    if (s->subs[i].id == id) s->subs[i].cb = NULL;
  if (s && !s->telling) compact_subs(s);
}

static void timer_closed(uv_handle_t *h) { free(h); }

void tg__notify_free(tg_core *core) {
  tg_notices *s = core->notices;
  if (!s) return;
  for (size_t i = 0; i < s->n; i++) cJSON_Delete(s->list[i]);
  free(s->subs);
  if (s->timer) uv_close((uv_handle_t *)s->timer, timer_closed);
  free(s);
  core->notices = NULL;
}
