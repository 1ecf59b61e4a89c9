/*
 * progress.c — the progress manager (progress.h). Items are few and live
 * while work runs; the list is searched linearly.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "progress.h"
#include "core.h"
#include "base/util.h"

static const char *const kind_names[] = {"indeterminate", "determinate",
                                         "steps"};

static tg_progress *state(tg_core *core) {
  if (!core->progress && (core->progress = calloc(1, sizeof *core->progress)))
    core->progress->next_sub = 1;
  return core->progress;
}

static long find(const tg_progress *p, const char *id) {
  for (size_t i = 0; p && id && i < p->n; i++)
    if (strcmp(p->v[i]->id, id) == 0) return (long)i;
  return -1;
}

static void item_free(tg_progress_item *it) {
  free(it->id);
  free(it->label);
  free(it->message);
  free(it->call_id);
  free(it);
}

static cJSON *item_json(const tg_progress_item *it, const char *st) {
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  cJSON_AddStringToObject(o, "id", it->id);
  if (it->label) cJSON_AddStringToObject(o, "label", it->label);
  cJSON_AddStringToObject(o, "kind", kind_names[it->kind]);
  if (it->kind == TG_PROGRESS_DETERMINATE) {
    cJSON_AddNumberToObject(o, "current", it->current);
    cJSON_AddNumberToObject(o, "total", it->total);
    double pct = it->total > 0 ? 100.0 * it->current / it->total : 0;
    cJSON_AddNumberToObject(o, "percent", pct > 100 ? 100 : pct);
  } else if (it->kind == TG_PROGRESS_STEPS) {
    cJSON_AddNumberToObject(o, "step", it->current);
    cJSON_AddNumberToObject(o, "steps", it->total);
  } else if (it->current >= 0) {
    cJSON_AddNumberToObject(o, "current", it->current);
  }
  if (it->message) cJSON_AddStringToObject(o, "message", it->message);
  cJSON_AddBoolToObject(o, "cancellable", it->cancel != NULL);
  if (it->cancel_requested) cJSON_AddTrueToObject(o, "cancel_requested");
  if (it->call_id) cJSON_AddStringToObject(o, "call_id", it->call_id);
  cJSON_AddStringToObject(o, "state", st);
  cJSON_AddNumberToObject(o, "started_at", (double)it->started_at);
  cJSON_AddNumberToObject(o, "elapsed_ms",
                          floor(tg__now_ms() - it->started_mono));
  return o;
}

static cJSON *list_json(const tg_progress *p) {
  cJSON *a = cJSON_CreateArray();
  for (size_t i = 0; a && p && i < p->n; i++)
    cJSON_AddItemToArray(a, item_json(p->v[i], "running"));
  return a;
}

static void compact_subs(tg_progress *p) {
  size_t k = 0;
  for (size_t i = 0; i < p->nsubs; i++)
    if (p->subs[i].cb) p->subs[k++] = p->subs[i];
  p->nsubs = k;
}

/* Tells the subscribers of a change to it (in state st). */
static void tell(tg_core *core, const char *change, const tg_progress_item *it,
                 const char *st) {
  tg_progress *p = core->progress;
  size_t n = p->nsubs;
  /* a subscriber that moves items on every change would nest without
   * end: deeper than 8, changes are made but not told */
  if (!n || p->telling > 8) return;
  cJSON *one = item_json(it, st), *list = list_json(p);
  p->telling++;
  for (size_t i = 0; i < n && i < p->nsubs; i++)
    if (p->subs[i].cb) p->subs[i].cb(core->rt, change, one, list, p->subs[i].ud);
  if (--p->telling == 0) compact_subs(p);
  cJSON_Delete(one);
  cJSON_Delete(list);
}

static int check_spec(const tg_progress_spec *s, char err[TG_ERRMSG]) {
  if (!s || !s->id || !*s->id) {
    tg__errf(err, TG_ERRMSG, "a progress item needs an id");
    return -EINVAL;
  }
  if ((unsigned)s->kind > TG_PROGRESS_STEPS) {
    tg__errf(err, TG_ERRMSG, "unknown progress kind");
    return -EINVAL;
  }
  if (s->kind != TG_PROGRESS_INDETERMINATE && !(s->total > 0 && isfinite(s->total))) {
    tg__errf(err, TG_ERRMSG, "a %s item needs a total > 0",
             kind_names[s->kind]);
    return -EINVAL;
  }
  return 0;
}

static tg_progress_item *add(tg_core *core, const tg_progress_spec *s,
                             const char *call_id) {
  tg_progress *p = state(core);
  if (!p) return NULL;
  if (p->n == p->cap) {
    size_t cap = p->cap ? p->cap * 2 : 8;
    tg_progress_item **v = realloc(p->v, cap * sizeof *v);
    if (!v) return NULL;
    p->v = v;
    p->cap = cap;
  }
  tg_progress_item *it = calloc(1, sizeof *it);
  if (!it) return NULL;
  it->id = tg__strdup(s->id);
  it->label = tg__strdup(s->label);
  it->call_id = tg__strdup(call_id);
  if (!it->id || (s->label && !it->label) || (call_id && !it->call_id)) {
    item_free(it);
    return NULL;
  }
  it->kind = s->kind;
  it->total = s->kind == TG_PROGRESS_INDETERMINATE ? -1 : s->total;
  it->current = s->kind == TG_PROGRESS_STEPS ? 0 : s->kind ? 0 : -1;
  it->cancel = s->cancel;
  it->ud = s->ud;
  it->started_at = tg__clock_ms(core);
  it->started_mono = tg__now_ms();
  p->v[p->n++] = it;
  return it;
}

int tg__progress_start(tg_core *core, const tg_progress_spec *spec,
                       char err[TG_ERRMSG]) {
  int rc = check_spec(spec, err);
  if (rc < 0) return rc;
  if (find(core->progress, spec->id) >= 0) {
    tg__errf(err, TG_ERRMSG, "a progress item '%s' is running", spec->id);
    return -EEXIST;
  }
  tg_progress_item *it = add(core, spec, NULL);
  if (!it) {
    tg__errf(err, TG_ERRMSG, "out of memory");
    return -ENOMEM;
  }
  tell(core, "start", it, "running");
  return 0;
}

static int set_message(tg_progress_item *it, const char *message) {
  if (!message) return 0;
  char *m = tg__strdup(message);
  if (!m) return -ENOMEM;
  free(it->message);
  it->message = m;
  return 0;
}

int tg__progress_update(tg_core *core, const char *id, double current,
                        const char *message) {
  long i = find(core->progress, id);
  if (i < 0) return -ENOENT;
  tg_progress_item *it = core->progress->v[i];
  if (!isfinite(current) || current < 0) return -EINVAL;
  if (it->kind != TG_PROGRESS_INDETERMINATE) it->current = current;
  if (set_message(it, message) < 0) return -ENOMEM;
  tell(core, "update", it, "running");
  return 0;
}

int tg__progress_end(tg_core *core, const char *id, int ok,
                     const char *message) {
  tg_progress *p = core->progress;
  long i = find(p, id);
  if (i < 0) return -ENOENT;
  tg_progress_item *it = p->v[i];
  memmove(&p->v[i], &p->v[i + 1], (p->n - (size_t)i - 1) * sizeof *p->v);
  p->n--;
  if (ok && it->kind != TG_PROGRESS_INDETERMINATE) it->current = it->total;
  set_message(it, message); /* out of memory: the old message stays */
  tell(core, ok ? "done" : "fail", it, ok ? "done" : "failed");
  item_free(it);
  return 0;
}

int tg__progress_cancel(tg_core *core, const char *id) {
  long i = find(core->progress, id);
  if (i < 0) return -ENOENT;
  tg_progress_item *it = core->progress->v[i];
  if (!it->cancel) return -ENOTSUP;
  if (it->cancel_requested) return 0;
  it->cancel_requested = 1;
  /* subscribers and the owner may end the item from inside: copy first */
  char *copy = tg__strdup(it->id);
  tg_progress_cancel_fn fn = it->cancel;
  void *ud = it->ud;
  if (!copy) return -ENOMEM;
  tell(core, "cancel", it, "running");
  if (find(core->progress, copy) >= 0) fn(core->rt, copy, ud); /* still there */
  free(copy);
  return 0;
}

cJSON *tg__progress_list(tg_core *core) { return list_json(core->progress); }

int tg__progress_subscribe(tg_core *core, tg_progress_cb cb, void *ud) {
  tg_progress *p = state(core);
  if (!cb) return -EINVAL;
  if (!p) return -ENOMEM;
  if (p->nsubs == p->capsubs) {
    size_t cap = p->capsubs ? p->capsubs * 2 : 4;
    tg_progress_sub *v = realloc(p->subs, cap * sizeof *v);
    if (!v) return -ENOMEM;
    p->subs = v;
    p->capsubs = cap;
  }
  p->subs[p->nsubs] = (tg_progress_sub){p->next_sub++, cb, ud};
  return p->subs[p->nsubs++].id;
}

void tg__progress_unsubscribe(tg_core *core, int id) {
  tg_progress *p = core->progress;
  for (size_t i = 0; p && i < p->nsubs; i++)
    if (p->subs[i].id == id) p->subs[i].cb = NULL;
  if (p && !p->telling) compact_subs(p);
}

/* ---- calls ------------------------------------------------------------- */

static void cancel_call(tg_runtime *rt, const char *id, void *ud) {
  tg_core *core = ud;
  if (core->cancel_call && strncmp(id, "call:", 5) == 0)
    core->cancel_call(core, id + 5);
}

void tg__progress_of_call(tg_core *core, const char *call_id,
                          const char *tool, double current, double total,
                          const char *message) {
  char id[160];
  snprintf(id, sizeof id, "call:%s", call_id);
  long i = find(core->progress, id);
  tg_progress_item *it = i >= 0 ? core->progress->v[i] : NULL;
  const char *change = "update";
  if (!it) {
    tg_progress_spec s = {id, tool, total > 0 ? TG_PROGRESS_DETERMINATE
                                              : TG_PROGRESS_INDETERMINATE,
                          total, cancel_call, core};
    if (!(it = add(core, &s, call_id))) return;
    change = "start";
  }
  if (total > 0 && it->kind == TG_PROGRESS_INDETERMINATE)
    it->kind = TG_PROGRESS_DETERMINATE; /* the tool found out its total */
  if (total > 0) it->total = total;
  it->current = current;
  set_message(it, message);
  tell(core, change, it, "running");
}

void tg__progress_free(tg_core *core) {
  tg_progress *p = core->progress;
  if (!p) return;
  for (size_t i = 0; i < p->n; i++) item_free(p->v[i]);
  free(p->v);
  free(p->subs);
  free(p);
  core->progress = NULL;
}
