/*
 * chat_side.h — what a policy generation registers for the chat side
 * and runs when the runtime asks:
 *   - layers: tg.before_chat(fn) / tg.after_chat(fn) (chat_layers.c);
 *   - routing hooks: tg.route_model(fn) (chat_route.c);
 *   - budgets: tg.budget{...}, tg.budget_status(name) (budget.c);
 *   - tg.notify (chat_api.c).
 * Every policy function here runs under the sandbox's time limit and
 * memory cap (tg__sandbox_pcall); one that raises or overruns is a
 * layer_error event {layer, where, error} and is skipped: a turn, a
 * route, a usage record never fails because of it.
 *
 * Registrations live in g->chat, their memory from the generation's
 * allocator like every registration (register.c). Budget states (what a
 * period spent, which levels fired) are the runtime's bookkeeping,
 * malloc'd, bounded per budget, and derived again from the usage ledger
 * whenever they are lost.
 */
#ifndef TG_POLICY_CHAT_H
#define TG_POLICY_CHAT_H

#include <stdint.h>
#include <stddef.h>
#include <cjson/cJSON.h>
#include "lua/luacompat.h"
#include "toolgate.h"
#include "core/usage.h"
#include "base/period.h"

struct tg_generation;

typedef struct {
  int fn_ref;
  char *where;                  /* file:line where fn was defined */
} tg_chat_fn;

/* The alert levels, in order; a budget's threshold for each (a fraction of
 * its limit), <= 0 when the level is off. */
enum { TG_LEVEL_INFO, TG_LEVEL_WARNING, TG_LEVEL_CRITICAL, TG_LEVEL_EXCEEDED,
       TG_LEVEL__COUNT };
extern const char *const tg__budget_level_names[TG_LEVEL__COUNT + 1]; /* NULL-ended */

/* What one period (of one session, for "session" budgets) spent. */
typedef struct {
  char *session;                /* "session" budgets: whose; else NULL */
  int64_t start, end;           /* [start, end); end 0: never rolls */
  double spent;
  unsigned fired;               /* bit per level told for this period */
  uint64_t used;                /* last use, for eviction */
} tg_budget_state;

#define TG_BUDGET_STATES 256    /* per budget; the least used goes */

typedef struct {
  char *name, *where;
  double limit;
  tg_period period;
  char *session, *project, *model; /* scope: NULL matches any */
  double thresholds[TG_LEVEL__COUNT];
  int on_alert_ref;             /* LUA_NOREF: none */
  int notify;                   /* send a notification per alert */
  int tokens;                   /* unit "tokens": counts input + output
                                   tokens, not cost (an agent's hooks
                                   know tokens, not prices) */
  tg_budget_state *states;      /* malloc'd */
  size_t nstates, capstates;
  uint64_t tick;
  int64_t now_start, now_end;   /* the calendar period the clock was in
                                   last: localtime and mktime once a
                                   period, not once a record */
} tg_budget;

typedef struct tg_chat_reg {
  tg_chat_fn *before, *after, *route;
  size_t nbefore, capbefore, nafter, capafter, nroute, caproute;
  tg_budget *budgets;
  size_t nbudgets, capbudgets;
} tg_chat_reg;

/* ---- chat_api.c: tg.before_chat, tg.after_chat, tg.route_model,
 * tg.budget, tg.budget_status, tg.notify (upvalue 1: the generation) */
int tg__l_before_chat(lua_State *L);
int tg__l_after_chat(lua_State *L);
int tg__l_route_model(lua_State *L);
int tg__l_budget(lua_State *L);
int tg__l_budget_status(lua_State *L);
int tg__l_notify(lua_State *L);

/* ---- chat_layers.c */
/* Runs g's before_chat (after 0) or after_chat (after 1) layers on ctx,
 * in registration order. */
void tg__policy_chat_layers(struct tg_generation *g, int after,
                            const tg_layer_ctx *ctx);

/* ---- chat_route.c */
/* Runs g's routing hooks on decision (an object with requested_model,
 * selected_model, reason, task_weight, context, session, hooks []): each
 * may change selected_model and reason; those that do are appended to
 * hooks as {where, from, to, reason}, those that fail to errors as
 * {where, error} (and are layer_error events). */
void tg__policy_route(struct tg_generation *g, cJSON *decision);

/* ---- budget.c */
/* A usage record is about to enter the ledger: the states it falls in are
 * made (derived from the ledger as it is, without it). */
void tg__budgets_prepare(struct tg_generation *g, const tg_usage_rec *r);
/* It entered the ledger: counted, and every level it made a budget pass
 * is told (budget_alert event, on_alert, a notification). */
void tg__budgets_count(struct tg_generation *g, const tg_usage_rec *r);
/* g has replaced old: budgets by the same name, period and scope keep
 * their states; a changed limit re-evaluates them (levels no longer
 * reached may fire again, levels newly reached fire now). */
void tg__budgets_adopt(struct tg_generation *g, struct tg_generation *old);
/* The status of budget `name` (session: for "session" budgets; NULL: the
 * default). NULL with err when there is no such budget. */
cJSON *tg__budget_status(struct tg_generation *g, const char *name,
                         const char *session, char err[TG_ERRMSG]);
cJSON *tg__budgets_status(struct tg_generation *g);

/* What g registered, for `toolgate check` (tg__generation_describe):
 * {before_chat [where], after_chat [...], route_model [...],
 *  budgets [{name, limit, period, scope, thresholds, where}]}. */
void tg__chat_describe(const struct tg_generation *g, cJSON *into);

/* Frees g->chat (before g's Lua state closes). */
void tg__chat_reg_free(struct tg_generation *g);

/* The error a chat-side policy callback (a layer, a routing hook, a
 * budget's on_alert) left on top of g->L, as "<error> (in <what>)" or the
 * limit that stopped it; pops it. */
void tg__chat_error_text(struct tg_generation *g, const char *what, char *msg,
                         size_t len);

#endif
