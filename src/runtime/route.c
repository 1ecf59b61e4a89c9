/*
 * route.c — model routing (toolgate.h tg_route): the host's
 * models configuration gives the baseline, the policies' routing hooks
 * adjust it in order, then the provider fallback routes around models
 * marked unavailable. The decision, with every hook that changed it and
 * why, is the return value and a `route` event (which the audit keeps).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "runtime.h"
#include "policy/chat_side.h"
#include "base/util.h"

static const char *const models_keys[] = {"routes", "default", "fallback",
                                          NULL};
static const char *const request_keys[] = {"requested_model", "task_weight",
                                           "context", "session", NULL};

static int known(const char *k, const char *const *keys) {
  for (; *keys; keys++)
    if (strcmp(k, *keys) == 0) return 1;
  return 0;
}

/* Every key of o is one of keys: a misspelt one must not pass for absent. */
static int check_keys(const cJSON *o, const char *const *keys,
                      const char *what, char err[TG_ERRMSG]) {
  for (const cJSON *it = o->child; it; it = it->next)
    if (!known(it->string, keys)) {
      char list[200] = "";
      for (size_t i = 0; keys[i]; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s",
                 i ? ", " : "", keys[i]);
      tg__errf(err, TG_ERRMSG, "%s: unknown key '%s' (known: %s)", what,
               it->string, list);
      return -EINVAL;
    }
  return 0;
}

static int is_name(const cJSON *v) {
  return cJSON_IsString(v) && v->valuestring[0] && strlen(v->valuestring) < 256;
}

static int check_routes(const cJSON *r, char err[TG_ERRMSG]) {
  if (!cJSON_IsObject(r)) {
    tg__errf(err, TG_ERRMSG, "models: 'routes' must be an object "
             "{task_weight: model}");
    return -EINVAL;
  }
  for (const cJSON *it = r->child; it; it = it->next)
    if (!is_name(it)) {
      tg__errf(err, TG_ERRMSG, "models: routes['%s'] must be a model name",
               it->string);
      return -EINVAL;
    }
  return 0;
}

static int check_fallback(const cJSON *f, char err[TG_ERRMSG]) {
  if (!cJSON_IsObject(f)) {
    tg__errf(err, TG_ERRMSG, "models: 'fallback' must be an object "
             "{model: [models...]} (\"*\": any model)");
    return -EINVAL;
  }
  for (const cJSON *it = f->child; it; it = it->next) {
    int ok = cJSON_IsArray(it) && it->child;
    for (const cJSON *m = it->child; ok && m; m = m->next) ok = is_name(m);
    if (!ok) {
      tg__errf(err, TG_ERRMSG, "models: fallback['%s'] must be a non-empty "
               "list of model names", it->string);
      return -EINVAL;
    }
  }
  return 0;
}

static int check_models(const cJSON *m, char err[TG_ERRMSG]) {
  if (!cJSON_IsObject(m)) {
    tg__errf(err, TG_ERRMSG, "models must be a JSON object {routes, default, "
             "fallback}");
    return -EINVAL;
  }
  const cJSON *r = cJSON_GetObjectItemCaseSensitive(m, "routes");
  const cJSON *d = cJSON_GetObjectItemCaseSensitive(m, "default");
  const cJSON *f = cJSON_GetObjectItemCaseSensitive(m, "fallback");
  if (check_keys(m, models_keys, "models", err) < 0 ||
      (r && check_routes(r, err) < 0) || (f && check_fallback(f, err) < 0))
    return -EINVAL;
  if (d && !is_name(d)) {
    tg__errf(err, TG_ERRMSG, "models: 'default' must be a model name");
    return -EINVAL;
  }
  return 0;
}

int tg_runtime_set_models(tg_runtime *rt, const cJSON *models,
                          char err[TG_ERRMSG]) {
  if (models && check_models(models, err) < 0) return -EINVAL;
  cJSON *copy = models ? cJSON_Duplicate(models, 1) : NULL;
  if (models && !copy) {
    tg__errf(err, TG_ERRMSG, "out of memory");
    return -ENOMEM;
  }
  cJSON_Delete(rt->models);
  rt->models = copy;
  return 0;
}

/* ---- availability ----------------------------------------------------------- */

int tg_model_unavailable(tg_runtime *rt, const char *model, int64_t until_ms,
                         char err[TG_ERRMSG]) {
  if (!model || !*model || strlen(model) >= 256) {
    tg__errf(err, TG_ERRMSG, "a model name is a non-empty string");
    return -EINVAL;
  }
  if (!rt->unavailable && !(rt->unavailable = cJSON_CreateObject())) goto nomem;
  cJSON_DeleteItemFromObjectCaseSensitive(rt->unavailable, model);
  if (until_ms > tg__clock_ms(&rt->core) &&
      !cJSON_AddNumberToObject(rt->unavailable, model, (double)until_ms))
    goto nomem;
  return 0;
nomem:
  tg__errf(err, TG_ERRMSG, "out of memory");
  return -ENOMEM;
}

/* ms the model stays unavailable from now (0: it is available). */
static int64_t unavailable_for(tg_runtime *rt, const char *model) {
  const cJSON *u = cJSON_GetObjectItemCaseSensitive(rt->unavailable, model);
  if (!u) return 0;
  int64_t left = (int64_t)u->valuedouble - tg__clock_ms(&rt->core);
  return left > 0 ? left : 0;
}

/* ---- the decision ---------------------------------------------------------- */

static const char *str_item(const cJSON *o, const char *k) {
  return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k));
}

static int check_request(const cJSON *req, char err[TG_ERRMSG]) {
  if (!cJSON_IsObject(req)) {
    tg__errf(err, TG_ERRMSG, "a route request is a JSON object "
             "{requested_model?, task_weight?, context?, session?}");
    return -EINVAL;
  }
  if (check_keys(req, request_keys, "route request", err) < 0) return -EINVAL;
  for (int i = 0; i < 4; i++) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(req, request_keys[i]);
    int ok = !v || cJSON_IsNull(v) ||
             (i == 2 ? cJSON_IsObject(v) : is_name(v));
    if (!ok) {
      tg__errf(err, TG_ERRMSG, "route request: '%s' must be %s",
               request_keys[i], i == 2 ? "an object" : "a non-empty string");
      return -EINVAL;
    }
  }
  return 0;
}

static void add_str_or_null(cJSON *o, const char *k, const char *v) {
  if (v) cJSON_AddStringToObject(o, k, v);
  else cJSON_AddNullToObject(o, k);
}

/* The routing table's answer: routes[task_weight], else the requested
 * model, else the default. */
static void baseline(tg_runtime *rt, cJSON *d, const char *requested,
                     const char *weight) {
  const cJSON *routes = cJSON_GetObjectItemCaseSensitive(rt->models, "routes");
  const char *routed = weight ? str_item(routes, weight) : NULL;
  const char *dflt = str_item(rt->models, "default");
  char why[400];
  const char *pick = routed ? routed : requested ? requested : dflt;
  if (routed)
    snprintf(why, sizeof why, "routing table: task_weight '%s'", weight);
  else if (requested)
    snprintf(why, sizeof why, "requested");
  else if (dflt)
    snprintf(why, sizeof why, "routing table: default");
  else
    snprintf(why, sizeof why, "no model requested, no route, no default");
  add_str_or_null(d, "selected_model", pick);
  cJSON_AddStringToObject(d, "reason", why);
  cJSON *b = cJSON_AddObjectToObject(d, "baseline");
  add_str_or_null(b, "selected_model", pick);
  cJSON_AddStringToObject(b, "reason", why);
}

static cJSON *new_decision(tg_runtime *rt, const cJSON *req) {
  const char *requested = str_item(req, "requested_model");
  const char *weight = str_item(req, "task_weight");
  const char *session = str_item(req, "session");
  const cJSON *ctx = cJSON_GetObjectItemCaseSensitive(req, "context");
  cJSON *d = cJSON_CreateObject();
  if (!d) return NULL;
  add_str_or_null(d, "requested_model", requested);
  baseline(rt, d, requested, weight);
  add_str_or_null(d, "task_weight", weight);
  cJSON_AddItemToObject(d, "context", cJSON_IsObject(ctx)
                                          ? cJSON_Duplicate(ctx, 1)
                                          : cJSON_CreateObject());
  cJSON_AddStringToObject(d, "session", session ? session : rt->core.cfg.session);
  cJSON_AddArrayToObject(d, "hooks");
  cJSON_AddArrayToObject(d, "errors");
  return d;
}

/* The first model of list (an array) that is available and not `not`. */
static const char *first_available(tg_runtime *rt, const cJSON *list,
                                   const char *not) {
  for (const cJSON *m = list ? list->child : NULL; m; m = m->next)
    if (strcmp(m->valuestring, not) && !unavailable_for(rt, m->valuestring))
      return m->valuestring;
  return NULL;
}

static void fallback(tg_runtime *rt, cJSON *d) {
  const char *sel = str_item(d, "selected_model");
  int64_t left = sel ? unavailable_for(rt, sel) : 0;
  if (!left) {
    cJSON_AddTrueToObject(d, "available");
    return;
  }
  const cJSON *f = cJSON_GetObjectItemCaseSensitive(rt->models, "fallback");
  const char *to = first_available(rt, cJSON_GetObjectItemCaseSensitive(f, sel), sel);
  if (!to) to = first_available(rt, cJSON_GetObjectItemCaseSensitive(f, "*"), sel);
  char why[600];
  snprintf(why, sizeof why, "'%s' is unavailable for %lld s more%s", sel,
           (long long)((left + 999) / 1000),
           to ? "" : ", and no model of its fallback list is available");
  cJSON *fb = cJSON_AddObjectToObject(d, "fallback");
  cJSON_AddStringToObject(fb, "from", sel);
  add_str_or_null(fb, "to", to);
  cJSON_AddStringToObject(fb, "reason", why);
  cJSON_AddBoolToObject(d, "available", to != NULL);
  if (!to) return;
  cJSON_ReplaceItemInObjectCaseSensitive(d, "reason", cJSON_CreateString(why));
  cJSON_ReplaceItemInObjectCaseSensitive(d, "selected_model", cJSON_CreateString(to));
}

static void emit_route(tg_runtime *rt, const cJSON *d) {
  cJSON *e = tg__event_data(&rt->core, NULL); /* NULL: nobody listens */
  if (e)
    for (const cJSON *it = d->child; it; it = it->next)
      cJSON_AddItemToObject(e, it->string, cJSON_Duplicate(it, 1));
  tg__emit(&rt->core, NULL, "route", NULL, e);
}

cJSON *tg_route(tg_runtime *rt, const cJSON *request, char err[TG_ERRMSG]) {
  if (check_request(request, err) < 0) return NULL;
  cJSON *d = new_decision(rt, request);
  if (!d) {
    tg__errf(err, TG_ERRMSG, "out of memory");
    return NULL;
  }
  tg_generation *g = rt->chain.gen;
  cJSON_AddNumberToObject(d, "hooks_run",
                          g && g->chat ? (double)g->chat->nroute : 0);
  if (g && g->chat && g->chat->nroute) {
    tg__generation_ref(g); /* a hook's event handler may reload */
    tg__policy_route(g, d);
    tg__generation_unref(g);
  }
  if (!str_item(d, "selected_model")) {
    tg__errf(err, TG_ERRMSG, "no model selected: the request names no "
             "requested_model, the routing table has no route for its "
             "task_weight and no default, and no routing hook chose one");
    cJSON_Delete(d);
    return NULL;
  }
  fallback(rt, d);
  emit_route(rt, d);
  return d;
}
