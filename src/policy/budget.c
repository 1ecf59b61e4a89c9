/*
 * budget.c — budgets (chat_side.h): tg.budget{name, limit, period,
 * scope, thresholds, on_alert} counts the usage records its scope selects
 * per period, and tells each alert level once per period: a budget_alert
 * event, the budget's on_alert(alert), and a notification.
 *
 * Why states are derived: what a period has spent is the ledger's sum
 * since the period's start (usage.h), and the levels that sum has passed
 * are the ones already told. So a state is built from the ledger whenever
 * it is missing — at start, for a new session, after a period rolls, after
 * an eviction — and nothing about alerts is stored anywhere else: with the
 * ledger in SQLite, a restart neither repeats an alert nor loses a level
 * that is still to come. Between builds a state counts the records it sees
 * (one sum per build, not per record). A reload hands states to the new
 * generation's budget of the same name, period and scope; a changed limit
 * is judged again against them (tg__budgets_adopt).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "chat_side.h"
#include "generation.h"
#include "sandbox.h"
#include "core/layers.h"
#include "core/notify.h"
#include "lua/luajson.h"
#include "base/util.h"

const char *const tg__budget_level_names[TG_LEVEL__COUNT + 1] = {
    "info", "warning", "critical", "exceeded", NULL};

/* ---- levels ---------------------------------------------------------------- */

/* The levels spent has reached, one bit each. The tolerance keeps a
 * hundred records of 0.01 from missing a limit of 1.00 by a rounding. */
static unsigned reached(const tg_budget *b, double spent) {
  unsigned m = 0;
  for (int i = 0; i < TG_LEVEL__COUNT; i++)
    if (b->thresholds[i] > 0 &&
        spent + 1e-9 * b->limit >= b->thresholds[i] * b->limit)
      m |= 1u << i;
  return m;
}

static const char *level_name(const tg_budget *b, double spent) {
  unsigned m = reached(b, spent);
  for (int i = TG_LEVEL__COUNT - 1; i >= 0; i--)
    if (m & (1u << i)) return tg__budget_level_names[i];
  return "ok";
}

/* ---- states ---------------------------------------------------------------- */

static int same_str(const char *a, const char *b) {
  return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* Does the budget's scope select the record? */
static int selects(const tg_budget *b, const tg_usage_rec *r) {
  return (!b->session || same_str(b->session, r->session)) &&
         (!b->project || same_str(b->project, r->project)) &&
         (!b->model || same_str(b->model, r->model));
}

/* Builds st for the period of `at` (and session) from the ledger. */
static void derive(tg_generation *g, tg_budget *b, tg_budget_state *st,
                   int64_t at) {
  if (tg__period_bounds(b->period, at, &st->start, &st->end) < 0) {
    st->start = at; /* no local time: count from now, for a day */
    st->end = at + 86400000;
  }
  tg_usage_query q = {b->period == TG_PERIOD_SESSION ? st->session : b->session,
                      b->project, b->model, st->start};
  tg_usage_sum sum = {0};
  const tg_usage_ledger *l = &g->core->usage;
  if (!l->sum || l->sum(l->ud, &q, &sum) < 0) memset(&sum, 0, sizeof sum);
  st->spent = b->tokens ? (double)sum.input_tokens + (double)sum.output_tokens
                        : sum.cost;
  st->fired = reached(b, st->spent); /* told before the state was lost */
}

static void state_clear(tg_budget_state *st) {
  free(st->session);
  st->session = NULL;
}

static tg_budget_state *find_state(tg_budget *b, const char *session) {
  for (size_t i = 0; i < b->nstates; i++)
    if (same_str(b->states[i].session, session)) return &b->states[i];
  return NULL;
}

/* A free slot: a new one, or the least used one's, cleared. */
static tg_budget_state *new_slot(tg_budget *b) {
  if (b->nstates == b->capstates && b->capstates < TG_BUDGET_STATES) {
    size_t cap = b->capstates ? b->capstates * 2 : 4;
    tg_budget_state *v = realloc(b->states, cap * sizeof *v);
    if (v) {
      b->states = v;
      b->capstates = cap;
    }
  }
  if (b->nstates < b->capstates) {
    tg_budget_state *st = &b->states[b->nstates++];
    memset(st, 0, sizeof *st);
    return st;
  }
  if (!b->nstates) return NULL;
  tg_budget_state *lru = &b->states[0];
  for (size_t i = 1; i < b->nstates; i++)
    if (b->states[i].used < lru->used) lru = &b->states[i];
  state_clear(lru); /* derivable again: only recent use is lost */
  memset(lru, 0, sizeof *lru);
  return lru;
}

/* The state of the period holding `at` (of session, for "session"
 * budgets), built or rolled as needed; NULL when out of memory. Pointers
 * into b->states are valid until the next call that may add one. */
static tg_budget_state *state_at(tg_generation *g, tg_budget *b,
                                 const char *session, int64_t at) {
  if (b->period != TG_PERIOD_SESSION) session = NULL;
  else if (!session) session = g->core->cfg.session;
  tg_budget_state *st = find_state(b, session);
  if (st && (st->end == 0 || (at >= st->start && at < st->end))) {
    st->used = ++b->tick;
    return st;
  }
  if (!st) {
    char *copy = tg__strdup(session);
    if ((session && !copy) || !(st = new_slot(b))) {
      free(copy);
      return NULL;
    }
    st->session = copy;
  }
  derive(g, b, st, at); /* new, or its period rolled (or the clock went back) */
  st->used = ++b->tick;
  return st;
}

/* ---- alerts ---------------------------------------------------------------- */

/* What an alert needs of its state, copied: on_alert may make states. */
typedef struct {
  double spent;
  int64_t start, end;
  char session[256];
  int has_session;
} snapshot;

static snapshot snap(const tg_budget_state *st) {
  snapshot s = {st->spent, st->start, st->end, "", st->session != NULL};
  if (st->session) snprintf(s.session, sizeof s.session, "%s", st->session);
  return s;
}

static const char *period_text(tg_period p) {
  static const char *const t[] = {"this session", "today", "this week",
                                  "this month", "in total"};
  return t[p];
}

static void add_times(cJSON *o, const tg_budget *b, int64_t start,
                      int64_t end) {
  if (end) {
    cJSON_AddNumberToObject(o, "period_start", (double)start);
    cJSON_AddNumberToObject(o, "resets_at", (double)end);
  } else {
    cJSON_AddNullToObject(o, "period_start");
    cJSON_AddNullToObject(o, "resets_at");
  }
}

static cJSON *alert_json(const tg_budget *b, const snapshot *s, int level) {
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  char msg[600];
  snprintf(msg, sizeof msg, b->tokens
           ? "budget '%s' %s %g%% (%s): %.0f of %.0f tokens used %s"
           : "budget '%s' %s %g%% (%s): %.2f of %.2f spent %s",
           b->name, level == TG_LEVEL_EXCEEDED ? "is past" : "passed",
           b->thresholds[level] * 100, tg__budget_level_names[level],
           s->spent, b->limit, period_text(b->period));
  cJSON_AddStringToObject(o, "budget", b->name);
  cJSON_AddStringToObject(o, "level", tg__budget_level_names[level]);
  cJSON_AddNumberToObject(o, "threshold", b->thresholds[level]);
  cJSON_AddNumberToObject(o, "spent", s->spent);
  cJSON_AddNumberToObject(o, "limit", b->limit);
  cJSON_AddNumberToObject(o, "percent", 100 * s->spent / b->limit);
  cJSON_AddStringToObject(o, "period", tg__period_name(b->period));
  add_times(o, b, s->start, s->end);
  if (s->has_session) cJSON_AddStringToObject(o, "session", s->session);
  cJSON_AddStringToObject(o, "message", msg);
  return o;
}

typedef struct {
  int ref;
  const cJSON *alert;
} on_alert_arg;

static int run_on_alert(lua_State *L) {
  on_alert_arg *a = lua_touserdata(L, 1);
  lua_settop(L, 0);
  lua_rawgeti(L, LUA_REGISTRYINDEX, a->ref);
  if (tg__json_push(L, a->alert) < 0)
    luaL_error(L, "the alert could not be given to on_alert");
  lua_call(L, 1, 0);
  return 0;
}

static void call_on_alert(tg_generation *g, const tg_budget *b,
                          const cJSON *alert) {
  lua_State *L = g->L;
  on_alert_arg a = {b->on_alert_ref, alert};
  lua_pushcfunction(L, run_on_alert);
  lua_pushlightuserdata(L, &a);
  if (tg__sandbox_pcall(g->sb, L, 1, 0) == LUA_OK) return;
  char what[400], msg[TG_ERRMSG];
  snprintf(what, sizeof what, "on_alert of budget '%s' (%s)", b->name, b->where);
  tg__chat_error_text(g, what, msg, sizeof msg);
  tg__layer_error(g->core, g, "on_alert", b->where, msg, NULL);
}

static void notify(tg_generation *g, const tg_budget *b, int level,
                   const cJSON *alert) {
  static const tg_notify_level map[TG_LEVEL__COUNT] = {
      TG_NOTIFY_INFO, TG_NOTIFY_WARNING, TG_NOTIFY_ERROR, TG_NOTIFY_ERROR};
  char title[300], source[300];
  snprintf(title, sizeof title, "Budget '%s': %s", b->name,
           tg__budget_level_names[level]);
  snprintf(source, sizeof source, "budget %s", b->name);
  tg_notification n = {map[level], title,
                       cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(alert, "message")),
                       0, NULL, NULL, source};
  char err[TG_ERRMSG];
  tg__notify(g->core, &n, err); /* out of memory: the event has told it */
}

/* Tells level of b, in the order the issue names: event, callback,
 * notification. */
static void alert(tg_generation *g, const tg_budget *b, const snapshot *s,
                  int level) {
  cJSON *a = alert_json(b, s, level);
  if (!a) return;
  cJSON *d = tg__event_data(g->core, g); /* NULL: nobody listens */
  if (d)
    for (const cJSON *it = a->child; it; it = it->next)
      cJSON_AddItemToObject(d, it->string, cJSON_Duplicate(it, 1));
  tg__emit(g->core, g, "budget_alert", NULL, d);
  if (b->on_alert_ref != LUA_NOREF) call_on_alert(g, b, a);
  if (b->notify) notify(g, b, level, a);
  cJSON_Delete(a);
}

/* Marks and tells every level st has reached and not told. */
static void tell_new_levels(tg_generation *g, tg_budget *b,
                            tg_budget_state *st) {
  unsigned fresh = reached(b, st->spent) & ~st->fired;
  if (!fresh) return;
  st->fired |= fresh;
  snapshot s = snap(st); /* st may move while alerts run policy code */
  for (int i = 0; i < TG_LEVEL__COUNT; i++)
    if (fresh & (1u << i)) alert(g, b, &s, i);
}

/* ---- the ledger's records ------------------------------------------------- */

/* Does the record count now: selected, and in the period the clock is in?
 * A record of a period already over (a host reporting late, an import) is
 * in the ledger, so in the sums; it alerts nobody about a closed period. */
static int counts_now(tg_generation *g, tg_budget *b,
                      const tg_usage_rec *r) {
  if (!selects(b, r)) return 0;
  if (b->period == TG_PERIOD_SESSION || b->period == TG_PERIOD_TOTAL) return 1;
  int64_t now = tg__clock_ms(g->core);
  if (!(now >= b->now_start && now < b->now_end) &&
      tg__period_bounds(b->period, now, &b->now_start, &b->now_end) < 0) {
    b->now_start = b->now_end = 0;
    return 1;
  }
  return r->ts_ms >= b->now_start && r->ts_ms < b->now_end;
}

void tg__budgets_prepare(tg_generation *g, const tg_usage_rec *r) {
  for (size_t i = 0; g->chat && i < g->chat->nbudgets; i++) {
    tg_budget *b = &g->chat->budgets[i];
    if (counts_now(g, b, r)) state_at(g, b, r->session, r->ts_ms);
  }
}

void tg__budgets_count(tg_generation *g, const tg_usage_rec *r) {
  for (size_t i = 0; g->chat && i < g->chat->nbudgets; i++) {
    tg_budget *b = &g->chat->budgets[i];
    if (!counts_now(g, b, r)) continue;
    tg_budget_state *st = state_at(g, b, r->session, r->ts_ms);
    if (!st) continue; /* out of memory: the next build counts it */
    st->spent += b->tokens ? (double)r->input_tokens + (double)r->output_tokens
                           : r->cost;
    tell_new_levels(g, b, st);
  }
}

/* ---- reloads ----------------------------------------------------------------- */

static tg_budget *same_budget(tg_generation *old, const tg_budget *b) {
  for (size_t i = 0; old && old->chat && i < old->chat->nbudgets; i++) {
    tg_budget *o = &old->chat->budgets[i];
    if (strcmp(o->name, b->name) == 0 && o->period == b->period &&
        o->tokens == b->tokens &&
        same_str(o->session, b->session) && same_str(o->project, b->project) &&
        same_str(o->model, b->model))
      return o;
  }
  return NULL;
}

void tg__budgets_adopt(tg_generation *g, tg_generation *old) {
  for (size_t i = 0; g->chat && i < g->chat->nbudgets; i++) {
    tg_budget *b = &g->chat->budgets[i];
    tg_budget *o = same_budget(old, b);
    if (!o || !o->nstates) continue;
    b->states = o->states;
    b->nstates = o->nstates;
    b->capstates = o->capstates;
    b->tick = o->tick;
    o->states = NULL;
    o->nstates = o->capstates = 0;
    int judged = o->limit != b->limit ||
                 memcmp(o->thresholds, b->thresholds, sizeof b->thresholds);
    for (size_t k = 0; judged && k < b->nstates; k++) {
      b->states[k].fired &= reached(b, b->states[k].spent);
      /* levels the new limit puts behind: told now, if the period holds */
      if (!b->states[k].end || tg__clock_ms(g->core) < b->states[k].end)
        tell_new_levels(g, b, &b->states[k]);
    }
  }
}

/* ---- status -------------------------------------------------------------------- */

static tg_budget *find_budget(tg_generation *g, const char *name) {
  for (size_t i = 0; g->chat && i < g->chat->nbudgets; i++)
    if (strcmp(g->chat->budgets[i].name, name) == 0) return &g->chat->budgets[i];
  return NULL;
}

static cJSON *status_of(tg_generation *g, tg_budget *b, const char *session) {
  tg_budget_state *st = state_at(g, b, session, tg__clock_ms(g->core));
  cJSON *o = cJSON_CreateObject();
  if (!o || !st) {
    cJSON_Delete(o);
    return NULL;
  }
  cJSON_AddStringToObject(o, "name", b->name);
  cJSON_AddNumberToObject(o, "spent", st->spent);
  cJSON_AddNumberToObject(o, "limit", b->limit);
  cJSON_AddStringToObject(o, "unit", b->tokens ? "tokens" : "cost");
  cJSON_AddNumberToObject(o, "percent", 100 * st->spent / b->limit);
  cJSON_AddStringToObject(o, "level", level_name(b, st->spent));
  cJSON_AddStringToObject(o, "period", tg__period_name(b->period));
  add_times(o, b, st->start, st->end);
  if (st->session) cJSON_AddStringToObject(o, "session", st->session);
  return o;
}

cJSON *tg__budget_status(tg_generation *g, const char *name,
                         const char *session, char err[TG_ERRMSG]) {
  tg_budget *b = find_budget(g, name);
  if (!b) {
    size_t n = g->chat ? g->chat->nbudgets : 0;
    tg__errf(err, TG_ERRMSG, "no budget named '%s' (%s%s)", name,
             n ? "the budgets: " : "no budget is declared",
             n ? g->chat->budgets[0].name : "");
    return NULL;
  }
  cJSON *o = status_of(g, b, session);
  if (!o) tg__errf(err, TG_ERRMSG, "out of memory");
  return o;
}

cJSON *tg__budgets_status(tg_generation *g) {
  cJSON *a = cJSON_CreateArray();
  for (size_t i = 0; a && g->chat && i < g->chat->nbudgets; i++)
    cJSON_AddItemToArray(a, status_of(g, &g->chat->budgets[i], NULL));
  return a;
}

/* ---- describe and free ---------------------------------------------------------- */

static cJSON *fns_json(const tg_chat_fn *f, size_t n) {
  cJSON *a = cJSON_CreateArray();
  for (size_t i = 0; a && i < n; i++)
    cJSON_AddItemToArray(a, cJSON_CreateString(f[i].where));
  return a;
}

static cJSON *budget_json(const tg_budget *b) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "name", b->name);
  cJSON_AddNumberToObject(o, "limit", b->limit);
  cJSON_AddStringToObject(o, "unit", b->tokens ? "tokens" : "cost");
  cJSON_AddStringToObject(o, "period", tg__period_name(b->period));
  cJSON *s = cJSON_AddObjectToObject(o, "scope");
  if (b->session) cJSON_AddStringToObject(s, "session", b->session);
  if (b->project) cJSON_AddStringToObject(s, "project", b->project);
  if (b->model) cJSON_AddStringToObject(s, "model", b->model);
  cJSON *t = cJSON_AddObjectToObject(o, "thresholds");
  for (int i = 0; i < TG_LEVEL__COUNT; i++)
    if (b->thresholds[i] > 0)
      cJSON_AddNumberToObject(t, tg__budget_level_names[i], b->thresholds[i]);
  cJSON_AddBoolToObject(o, "on_alert", b->on_alert_ref != LUA_NOREF);
  cJSON_AddStringToObject(o, "where", b->where);
  return o;
}

void tg__chat_describe(const tg_generation *g, cJSON *into) {
  const tg_chat_reg *c = g->chat;
  cJSON *chat = cJSON_AddObjectToObject(into, "chat");
  cJSON_AddItemToObject(chat, "before_chat", fns_json(c ? c->before : NULL,
                                                      c ? c->nbefore : 0));
  cJSON_AddItemToObject(chat, "after_chat", fns_json(c ? c->after : NULL,
                                                     c ? c->nafter : 0));
  cJSON_AddItemToObject(chat, "route_model", fns_json(c ? c->route : NULL,
                                                      c ? c->nroute : 0));
  cJSON *b = cJSON_AddArrayToObject(chat, "budgets");
  for (size_t i = 0; c && i < c->nbudgets; i++)
    cJSON_AddItemToArray(b, budget_json(&c->budgets[i]));
}

static void free_fns(tg_generation *g, tg_chat_fn *f, size_t n, size_t cap) {
  for (size_t i = 0; i < n; i++) tg__reg_strfree(g, f[i].where);
  tg__reg_free(g, f, cap * sizeof *f);
}

void tg__chat_reg_free(tg_generation *g) {
  tg_chat_reg *c = g->chat;
  if (!c) return;
  free_fns(g, c->before, c->nbefore, c->capbefore);
  free_fns(g, c->after, c->nafter, c->capafter);
  free_fns(g, c->route, c->nroute, c->caproute);
  for (size_t i = 0; i < c->nbudgets; i++) {
    tg_budget *b = &c->budgets[i];
    for (size_t k = 0; k < b->nstates; k++) state_clear(&b->states[k]);
    free(b->states);
    tg__reg_strfree(g, b->name);
    tg__reg_strfree(g, b->where);
    tg__reg_strfree(g, b->session);
    tg__reg_strfree(g, b->project);
    tg__reg_strfree(g, b->model);
  }
  tg__reg_free(g, c->budgets, c->capbudgets * sizeof *c->budgets);
  tg__reg_free(g, c, sizeof *c);
  g->chat = NULL;
}
