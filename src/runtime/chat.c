/*
 * chat.c — the chat side's entry points (toolgate.h "the chat
 * side"): the clock, turns, chats and their layers, the usage that feeds
 * the budgets, notifications and the progress manager. The runtime is the
 * one place that sees both the C layers (core) and the policies' (the
 * current generation), so the composition lives here: C layers first,
 * then the policies', each kind in registration order.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "runtime.h"
#include "core/layers.h"
#include "core/notify.h"
#include "core/progress.h"
#include "core/turns.h"
#include "policy/chat_side.h"
#include "base/util.h"
#include "base/json.h"

/* ---- set-up ------------------------------------------------------------- */

static int cancel_call(tg_core *core, const char *id) {
  return tg__chain_cancel(&core->rt->chain, id);
}

int tg__chat_init(tg_runtime *rt, char err[TG_ERRMSG]) {
  rt->core.cancel_call = cancel_call;
  /* storage on: budgets sum the database's ledger (usage_store.c) */
  int rc = rt->store ? tg__usage_store_open(&rt->core.usage, rt->store)
                     : tg__usage_mem_open(&rt->core.usage);
  if (rc < 0) {
    tg__errf(err, TG_ERRMSG, "out of memory");
    return -ENOMEM;
  }
  return 0;
}

void tg__chat_free(tg_runtime *rt) {
  tg_core *core = &rt->core;
  if (core->usage.free) core->usage.free(core->usage.ud);
  memset(&core->usage, 0, sizeof core->usage);
  tg__turns_free(core);
  tg__layers_free(core);
  tg__notify_free(core);
  tg__progress_free(core);
  cJSON_Delete(rt->models);
  cJSON_Delete(rt->unavailable);
  rt->models = rt->unavailable = NULL;
}

/* ---- the clock ------------------------------------------------------------ */

void tg_runtime_set_clock(tg_runtime *rt, tg_clock_fn fn, void *ud) {
  rt->core.clock = fn;
  rt->core.clock_ud = ud;
  tg__notify_expire(&rt->core);
}

int64_t tg_runtime_now(tg_runtime *rt) { return tg__clock_ms(&rt->core); }

/* ---- turns ------------------------------------------------------------------ */

int64_t tg_turn_begin(tg_runtime *rt, const char *session) {
  return tg__turn_set(rt, session, 0);
}

int64_t tg__turn_set(tg_runtime *rt, const char *session, int64_t turn) {
  tg_session_state *s = tg__session_state(&rt->core, session, 1);
  if (!s) return -ENOMEM;
  /* first: every layer of the turn sees it */
  s->turn = turn > 0 ? turn : s->turn + 1;
  turn = s->turn;
  cJSON *d = tg__event_data(&rt->core, NULL); /* NULL: nobody listens */
  if (d) {
    cJSON_AddStringToObject(d, "session", s->session);
    cJSON_AddNumberToObject(d, "turn", (double)turn);
  }
  tg__emit(&rt->core, NULL, "turn_begin", NULL, d);
  return turn;
}

int64_t tg_turn_current(tg_runtime *rt, const char *session) {
  return tg__turn_of(&rt->core, session);
}

/* ---- chats -------------------------------------------------------------------- */

/* The policies' layers of kind `after`, under a reference: a C layer may
 * reload the policies meanwhile. */
static void policy_layers(tg_runtime *rt, int after, const tg_layer_ctx *ctx) {
  tg_generation *g = rt->chain.gen;
  if (!g || !g->chat || !(after ? g->chat->nafter : g->chat->nbefore)) return;
  tg__generation_ref(g);
  tg__policy_chat_layers(g, after, ctx);
  tg__generation_unref(g);
}

static void run_layers(tg_runtime *rt, int after, const tg_layer_ctx *ctx) {
  tg__layers_run(&rt->core, after ? TG_LAYER_AFTER_CHAT : TG_LAYER_BEFORE_CHAT,
                 ctx);
  policy_layers(rt, after, ctx);
}

static int check_chat_request(const tg_chat_request *req, char err[TG_ERRMSG]) {
  if (!req) {
    tg__errf(err, TG_ERRMSG, "no chat request");
    return -EINVAL;
  }
  if (req->request && (!cJSON_IsObject(req->request) ||
                       tg__json_too_deep(req->request))) {
    tg__errf(err, TG_ERRMSG, "the chat request must be a JSON object nested "
             "at most %d deep", TG_JSON_MAX_DEPTH);
    return -EINVAL;
  }
  return 0;
}

int tg_chat_begin(tg_runtime *rt, const tg_chat_request *req,
                  char err[TG_ERRMSG]) {
  int rc = check_chat_request(req, err);
  if (rc < 0) return rc;
  tg_session_state *s = tg__session_state(&rt->core, req->session, 1);
  if (!s) goto nomem;
  if (s->chat_open) {
    tg__errf(err, TG_ERRMSG, "session '%s' has a chat open: end it with "
             "tg_chat_end first", s->session);
    return -EBUSY;
  }
  s->model = tg__strdup(req->model);
  s->project = tg__strdup(req->project);
  s->request = req->request ? cJSON_Duplicate(req->request, 1) : NULL;
  if ((req->model && !s->model) || (req->project && !s->project) ||
      (req->request && !s->request)) {
    tg__session_chat_clear(s);
    goto nomem;
  }
  s->chat_open = 1;
  s->chat_start_ms = tg__now_ms();
  /* what the event's listeners and the layers see are copies, made before
   * any of them runs: one may end this chat (and free what the session
   * holds), or begin turns of so many sessions that this one is forgotten
   * (turns.c) */
  char *name = tg__strdup(s->session);
  char *model = tg__strdup(s->model), *project = tg__strdup(s->project);
  cJSON *request = s->request ? cJSON_Duplicate(s->request, 1) : NULL;
  if (!name || (s->model && !model) || (s->project && !project) ||
      (s->request && !request)) {
    tg__session_chat_clear(s);
    rc = -ENOMEM;
  } else {
    tg_layer_ctx ctx = {name, s->turn, model, project, request,
                        NULL, NULL, 1, NULL, NULL};
    cJSON *d = tg__event_data(&rt->core, NULL); /* NULL: nobody listens */
    if (d) {
      cJSON_AddStringToObject(d, "session", name);
      cJSON_AddNumberToObject(d, "turn", (double)ctx.turn);
      if (model) cJSON_AddStringToObject(d, "model", model);
      if (project) cJSON_AddStringToObject(d, "project", project);
    }
    tg__emit(&rt->core, NULL, "chat_begin", NULL, d);
    run_layers(rt, 0, &ctx);
  }
  free(name);
  free(model);
  free(project);
  cJSON_Delete(request);
  if (rc == 0) return 0;
nomem:
  tg__errf(err, TG_ERRMSG, "out of memory");
  return -ENOMEM;
}

static int check_usage(const tg_chat_usage *u, char err[TG_ERRMSG]) {
  if (!u) return 0;
  if (u->input_tokens < 0 || u->output_tokens < 0 || !isfinite(u->cost) ||
      u->cost < 0) {
    tg__errf(err, TG_ERRMSG, "usage: tokens and cost must be numbers >= 0");
    return -EINVAL;
  }
  return 0;
}

typedef struct {
  tg_runtime *rt;
  const tg_usage_rec *rec;
  int rc;
} ledger_write;

static int write_to_ledger(void *ud) {
  ledger_write *w = ud;
  const tg_usage_ledger *l = &w->rt->core.usage;
  w->rc = l->record ? l->record(l->ud, w->rec) : -ENOSYS;
  return w->rc == 0;
}

int tg__runtime_record_usage(tg_runtime *rt, const tg_usage_rec *rec) {
  tg_usage_rec r = *rec;
  ledger_write w = {rt, &r, 0};
  tg__runtime_usage_commit(rt, &r, 1, write_to_ledger, &w);
  return w.rc;
}

int tg__runtime_usage_commit(tg_runtime *rt, tg_usage_rec *recs, size_t n,
                             int (*commit)(void *ud), void *ud) {
  for (size_t i = 0; i < n; i++) {
    if (!recs[i].ts_ms) recs[i].ts_ms = tg__clock_ms(&rt->core);
    if (!recs[i].session) recs[i].session = rt->core.cfg.session;
  }
  tg_generation *g = rt->chain.gen;
  if (g) tg__generation_ref(g);
  /* budgets build their states from the ledger before it has these */
  for (size_t i = 0; g && i < n; i++) tg__budgets_prepare(g, &recs[i]);
  int rc = commit(ud);
  for (size_t i = 0; g && rc > 0 && i < n; i++) tg__budgets_count(g, &recs[i]);
  if (g) tg__generation_unref(g);
  return rc;
}

static cJSON *usage_json(const tg_chat_usage *u) {
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  if (u->model) cJSON_AddStringToObject(o, "model", u->model);
  cJSON_AddNumberToObject(o, "input_tokens", (double)u->input_tokens);
  cJSON_AddNumberToObject(o, "output_tokens", (double)u->output_tokens);
  cJSON_AddNumberToObject(o, "cost", u->cost);
  return o;
}

static void emit_chat_end(tg_runtime *rt, const tg_layer_ctx *ctx,
                          double ms) {
  cJSON *d = tg__event_data(&rt->core, NULL); /* NULL: nobody listens */
  if (d) {
    cJSON_AddStringToObject(d, "session", ctx->session);
    cJSON_AddNumberToObject(d, "turn", (double)ctx->turn);
    if (ctx->model) cJSON_AddStringToObject(d, "model", ctx->model);
    cJSON_AddBoolToObject(d, "ok", ctx->ok);
    if (!ctx->ok) cJSON_AddStringToObject(d, "error", ctx->error ? ctx->error : "");
    if (ctx->usage) cJSON_AddItemToObject(d, "usage", usage_json(ctx->usage));
    cJSON_AddNumberToObject(d, "duration_ms", ms);
  }
  tg__emit(&rt->core, NULL, "chat_end", NULL, d);
}

int tg_chat_end(tg_runtime *rt, const tg_chat_result *res,
                char err[TG_ERRMSG]) {
  const char *session = res ? res->session : NULL;
  tg_session_state *s = tg__session_state(&rt->core, session, 0);
  if (!res || !s || !s->chat_open) {
    tg__errf(err, TG_ERRMSG, "session '%s' has no chat open (tg_chat_begin "
             "opens one)", session ? session : rt->core.cfg.session);
    return -ENOENT;
  }
  int rc = check_usage(res->usage, err);
  if (rc < 0) return rc;
  /* the name is copied: what runs next (budget alerts, layers) may begin
   * turns of so many sessions that this one is forgotten (turns.c) */
  char *name = tg__strdup(s->session);
  if (!name) {
    tg__errf(err, TG_ERRMSG, "out of memory");
    return -ENOMEM;
  }
  /* the chat is closed first: a layer may open the next one */
  char *model = s->model, *project = s->project;
  cJSON *request = s->request;
  double ms = tg__now_ms() - s->chat_start_ms;
  int64_t turn = s->turn;
  s->model = s->project = NULL;
  s->request = NULL;
  s->chat_open = 0;
  tg_chat_usage u = res->usage ? *res->usage : (tg_chat_usage){0};
  if (res->usage && !u.model) u.model = model;
  tg_layer_ctx ctx = {name, turn, model, project, request, NULL, NULL,
                      res->ok != 0, res->ok ? NULL : res->error,
                      res->usage ? &u : NULL};
  if (res->usage) {
    tg_usage_rec rec = {name, project, u.model ? u.model : "", turn,
                        u.input_tokens, u.output_tokens, u.cost, 0};
    if (tg__runtime_record_usage(rt, &rec) < 0) rc = -ENOMEM;
  }
  run_layers(rt, 1, &ctx);
  emit_chat_end(rt, &ctx, ms);
  free(name);
  free(model);
  free(project);
  cJSON_Delete(request);
  if (rc < 0) tg__errf(err, TG_ERRMSG, "out of memory: the usage was not "
                       "recorded");
  return rc;
}

/* ---- layers, budgets, notifications, progress: the core's and the
 * policies', handed their part of the runtime ---------------------------- */

int tg_layer_add(tg_runtime *rt, const tg_layer *layer, char err[TG_ERRMSG]) {
  return tg__layers_add(&rt->core, layer, err);
}

void tg_layer_remove(tg_runtime *rt, int id) {
  tg__layers_remove(&rt->core, id);
}

cJSON *tg_budget_status(tg_runtime *rt, const char *name, const char *session,
                        char err[TG_ERRMSG]) {
  if (!name || !rt->chain.gen) {
    tg__errf(err, TG_ERRMSG, "no budget named '%s'", name ? name : "(null)");
    return NULL;
  }
  return tg__budget_status(rt->chain.gen, name, session, err);
}

cJSON *tg_budgets(tg_runtime *rt) {
  return rt->chain.gen ? tg__budgets_status(rt->chain.gen) : cJSON_CreateArray();
}

int64_t tg_notify(tg_runtime *rt, const tg_notification *n,
                  char err[TG_ERRMSG]) {
  return tg__notify(&rt->core, n, err);
}

int tg_notify_dismiss(tg_runtime *rt, int64_t id) {
  return tg__notify_dismiss(&rt->core, id);
}

cJSON *tg_notifications(tg_runtime *rt) { return tg__notifications(&rt->core); }

int tg_notify_subscribe(tg_runtime *rt, tg_notify_cb cb, void *ud) {
  return tg__notify_subscribe(&rt->core, cb, ud);
}

void tg_notify_unsubscribe(tg_runtime *rt, int id) {
  tg__notify_unsubscribe(&rt->core, id);
}

int tg_progress_start(tg_runtime *rt, const tg_progress_spec *spec,
                      char err[TG_ERRMSG]) {
  return tg__progress_start(&rt->core, spec, err);
}

int tg_progress_update(tg_runtime *rt, const char *id, double current,
                       const char *message) {
  return tg__progress_update(&rt->core, id, current, message);
}

int tg_progress_done(tg_runtime *rt, const char *id) {
  return tg__progress_end(&rt->core, id, 1, NULL);
}

int tg_progress_fail(tg_runtime *rt, const char *id, const char *message) {
  return tg__progress_end(&rt->core, id, 0, message);
}

int tg_progress_cancel(tg_runtime *rt, const char *id) {
  return tg__progress_cancel(&rt->core, id);
}

cJSON *tg_progress_list(tg_runtime *rt) { return tg__progress_list(&rt->core); }

int tg_progress_subscribe(tg_runtime *rt, tg_progress_cb cb, void *ud) {
  return tg__progress_subscribe(&rt->core, cb, ud);
}

void tg_progress_unsubscribe(tg_runtime *rt, int id) {
  tg__progress_unsubscribe(&rt->core, id);
}
