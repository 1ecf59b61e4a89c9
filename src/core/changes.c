/*
 * changes.c — file changes: queued per call, delivered when the call ends,
 * kept in a ring of the last TG_CHANGES_RING (see changes.h).
 *
 * Why after the call: a subscriber that reacts to a change (re-runs a
 * linter, reloads a buffer) should see the file as the call left it, and a
 * call that fails half-way and rolls back must not have announced anything.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "changes.h"
#include "base/glob.h"
#include "core.h"
#include "base/util.h"

static tg_changes *state(tg_core *core) {
  if (!core->changes) core->changes = calloc(1, sizeof *core->changes);
  if (core->changes && !core->changes->next_id) core->changes->next_id = 1;
  return core->changes;
}

/* ---- subscriptions ---------------------------------------------------- */

int tg__changes_subscribe(tg_core *core, const char *glob, tg_change_cb cb,
                         void *ud) {
  if (!cb || tg_glob_check(glob, NULL, 0) < 0) return -EINVAL;
  tg_changes *s = state(core);
  if (!s) return -ENOMEM;
  if (s->nsubs == s->capsubs) {
    size_t cap = s->capsubs ? s->capsubs * 2 : 4;
    tg_change_sub *n = realloc(s->subs, cap * sizeof *n);
    if (!n) return -ENOMEM;
    s->subs = n;
    s->capsubs = cap;
  }
  char *g = tg__strdup(glob);
  if (!g) return -ENOMEM;
  s->subs[s->nsubs] = (tg_change_sub){s->next_id++, g, cb, ud};
  return s->subs[s->nsubs++].id;
}

static void compact(tg_changes *s) {
  size_t k = 0;
  for (size_t i = 0; i < s->nsubs; i++) {
    if (s->subs[i].cb) s->subs[k++] = s->subs[i];
    else free(s->subs[i].glob);
  }
  s->nsubs = k;
  s->dead = 0;
}

void tg__changes_unsubscribe(tg_core *core, int id) {
  tg_changes *s = core->changes;
  if (!s) return;
  for (size_t i = 0; i < s->nsubs; i++)
    if (s->subs[i].id == id && s->subs[i].cb) {
      s->subs[i].cb = NULL; /* a delivery in progress skips it */
      s->dead = 1;
    }
  if (!s->delivering) compact(s);
}

/* ---- the ring ---------------------------------------------------------- */

static void ring_push(tg_changes *s, const cJSON *ch) {
  cJSON *copy = cJSON_Duplicate(ch, 1);
  if (!copy) return;
  cJSON_Delete(s->ring[s->head]); /* the oldest, once full */
  s->ring[s->head] = copy;
  s->head = (s->head + 1) % TG_CHANGES_RING;
  if (s->count < TG_CHANGES_RING) s->count++;
}

cJSON *tg__changes_recent(tg_core *core, size_t limit) {
  cJSON *a = cJSON_CreateArray();
  tg_changes *s = core->changes;
  if (!a || !s) return a;
  size_t n = limit && limit < s->count ? limit : s->count;
  for (size_t k = n; k > 0; k--) {
    size_t i = (s->head + TG_CHANGES_RING - k) % TG_CHANGES_RING;
    cJSON_AddItemToArray(a, cJSON_Duplicate(s->ring[i], 1));
  }
  return a;
}

/* ---- recording --------------------------------------------------------- */

static tg_change_batch *batch_of(tg_changes *s, const char *call_id) {
  for (tg_change_batch *b = s->pending; b; b = b->next)
    if (strcmp(b->call_id, call_id) == 0) return b;
  tg_change_batch *b = calloc(1, sizeof *b);
  if (!b) return NULL;
  b->call_id = tg__strdup(call_id);
  b->changes = cJSON_CreateArray();
  if (!b->call_id || !b->changes) {
    free(b->call_id);
    cJSON_Delete(b->changes);
    free(b);
    return NULL;
  }
  b->next = s->pending;
  s->pending = b;
  return b;
}

static cJSON *change_json(const char *call_id, const char *tool,
                          const tg_change_rec *ch) {
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  cJSON_AddStringToObject(o, "path", ch->path);
  cJSON_AddStringToObject(o, "type", ch->type);
  if (ch->old_path) cJSON_AddStringToObject(o, "old_path", ch->old_path);
  cJSON_AddStringToObject(o, "root", ch->root);
  cJSON_AddNumberToObject(o, "size", (double)ch->size);
  if (strcmp(ch->type, "deleted") != 0)
    cJSON_AddNumberToObject(o, "mtime", ch->mtime);
  cJSON_AddStringToObject(o, "tool", tool);
  cJSON_AddStringToObject(o, "call_id", call_id);
  return o;
}

int tg__changes_record(tg_core *core, const char *call_id, const char *tool,
                       const tg_change_rec *ch) {
  tg_changes *s = state(core);
  tg_change_batch *b = s ? batch_of(s, call_id) : NULL;
  cJSON *o = b ? change_json(call_id, tool, ch) : NULL;
  if (!o) return -ENOMEM;
  cJSON_AddItemToArray(b->changes, o);
  return 0;
}

/* ---- delivery ---------------------------------------------------------- */

static const char *str_of(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

static tg_file_change view_of(const cJSON *o) {
  const cJSON *size = cJSON_GetObjectItemCaseSensitive(o, "size");
  const cJSON *mtime = cJSON_GetObjectItemCaseSensitive(o, "mtime");
  tg_file_change v = {str_of(o, "path"), str_of(o, "type"),
                      str_of(o, "old_path"), str_of(o, "root"),
                      cJSON_IsNumber(size) ? (int64_t)size->valuedouble : 0,
                      cJSON_IsNumber(mtime) ? mtime->valuedouble : 0,
                      str_of(o, "tool"), str_of(o, "call_id"), o};
  return v;
}

static void notify_subscribers(tg_core *core, tg_changes *s,
                               const tg_file_change *v) {
  s->delivering++;
  /* by index and count at entry: a callback may subscribe (realloc) or
   * unsubscribe (marks only) while we walk */
  size_t n = s->nsubs;
  for (size_t i = 0; i < n && i < s->nsubs; i++) {
    if (!s->subs[i].cb || !tg_glob_match(s->subs[i].glob, v->path)) continue;
    s->subs[i].cb(core->rt, v, s->subs[i].ud);
  }
  if (--s->delivering == 0 && s->dead) compact(s);
}

static void deliver_one(tg_core *core, void *origin,
                        tg_change_listener listener, const tg_listener *own,
                        const cJSON *ch) {
  tg_changes *s = core->changes;
  ring_push(s, ch);
  tg_file_change v = view_of(ch);
  cJSON *d = tg__event_data_to(core, origin, own);
  if (d) {
    cJSON_Delete(d);
    d = cJSON_Duplicate(ch, 1);
    cJSON_DeleteItemFromObjectCaseSensitive(d, "call_id"); /* in the header */
    /* "type" is the event's own ("file_change"): the change's is "change" */
    cJSON *type = cJSON_DetachItemFromObjectCaseSensitive(d, "type");
    if (type) cJSON_AddItemToObject(d, "change", type);
  }
  tg__emit_to(core, origin, "file_change", v.call_id, d, own);
  notify_subscribers(core, s, &v);
  if (origin && listener) listener(origin, ch, v.path);
}

void tg__changes_call_ended(tg_core *core, void *origin,
                            tg_change_listener listener, const char *call_id,
                            const tg_listener *own) {
  tg_changes *s = core->changes;
  if (!s || !s->pending) return; /* the common case: nothing to do */
  tg_change_batch **pp = &s->pending;
  while (*pp && strcmp((*pp)->call_id, call_id) != 0) pp = &(*pp)->next;
  tg_change_batch *b = *pp;
  if (!b) return;
  *pp = b->next; /* taken out first: a subscriber may start calls */
  for (cJSON *ch = b->changes->child; ch; ch = ch->next)
    deliver_one(core, origin, listener, own, ch);
  cJSON_Delete(b->changes);
  free(b->call_id);
  free(b);
}

void tg__changes_free(tg_core *core) {
  tg_changes *s = core->changes;
  if (!s) return;
  for (size_t i = 0; i < TG_CHANGES_RING; i++) cJSON_Delete(s->ring[i]);
  for (size_t i = 0; i < s->nsubs; i++) free(s->subs[i].glob);
  free(s->subs);
  while (s->pending) {
    tg_change_batch *b = s->pending;
    s->pending = b->next;
    cJSON_Delete(b->changes);
    free(b->call_id);
    free(b);
  }
  free(s);
  core->changes = NULL;
}
