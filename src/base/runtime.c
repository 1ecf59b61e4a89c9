/*
 * runtime.c — the runtime object: creation, policy generations, C tool
 * registry, teardown. The chain lives in src/chain, policies in src/policy.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "runtime.h"
#include "../chain/call.h"
#include "../chain/validate.h"
#include "../exec/builtin.h"
#include "../exec/fs_confine.h"
#include "changes.h"
#include "../exec/process.h"
#include "../policy/generation.h"
#include "../policy/watch.h"
#include "control.h"

void tg_config_init(tg_config *cfg) {
  memset(cfg, 0, sizeof *cfg);
  cfg->default_verdict = TG_VERDICT_ASK;
  cfg->timeout_ms = 60000;
  cfg->approval_timeout_ms = 300000;
  cfg->progress_interval_ms = 1000;
  cfg->approve_mode = TG_APPROVE_CALLBACK;
  cfg->max_args_bytes = 16u << 20;
  cfg->builtin_tools = 1;
}

static void fill_defaults(tg_config *c) {
  if (c->default_verdict == TG_VERDICT_NONE) c->default_verdict = TG_VERDICT_ASK;
  if (!c->timeout_ms) c->timeout_ms = 60000;
  if (!c->approval_timeout_ms) c->approval_timeout_ms = 300000;
  if (!c->progress_interval_ms) c->progress_interval_ms = 1000;
  if (!c->max_args_bytes) c->max_args_bytes = 16u << 20;
}

tg_runtime *tg_runtime_new(const tg_config *cfg, uv_loop_t *loop,
                           char err[TG_ERRMSG]) {
  tg_runtime *rt = calloc(1, sizeof *rt);
  if (!rt) {
    tg__errf(err, TG_ERRMSG, "out of memory");
    return NULL;
  }
  if (cfg) rt->cfg = *cfg; else tg_config_init(&rt->cfg);
  fill_defaults(&rt->cfg);
  rt->session = tg__strdup(rt->cfg.session ? rt->cfg.session : "default");
  rt->cfg.session = rt->session;
  rt->cfg.policies_dir = NULL; /* kept in rt->policies_dir once loaded */
  rt->rng = rt->cfg.seed ? rt->cfg.seed : (uv_hrtime() | 1);
  rt->next_call_no = 1;
  rt->next_approval_id = 1;
  rt->bus.next_id = 1;
  if (loop) {
    rt->loop = loop;
  } else {
    int rc = uv_loop_init(&rt->own_loop);
    if (rc < 0) {
      tg__errf(err, TG_ERRMSG, "cannot create the event loop: %s",
               uv_strerror(rc));
      free(rt->session);
      free(rt);
      return NULL;
    }
    rt->loop = &rt->own_loop;
    rt->owns_loop = 1;
  }
  if (tg__fs_init(rt, err) < 0 ||
      (rt->cfg.builtin_tools && tg__builtins_register(rt, err) < 0)) {
    tg_runtime_free(rt);
    return NULL;
  }
  const char *dir = cfg ? cfg->policies_dir : NULL;
  if (tg_runtime_load_policies(rt, dir, err) < 0 ||
      (rt->cfg.watch_policies && tg_runtime_watch(rt, 1, err) < 0)) {
    tg_runtime_free(rt);
    return NULL;
  }
  return rt;
}

/* Adds file and line when the message starts "file:line:", as Lua's do. */
static void add_error_place(cJSON *d, const char *msg) {
  const char *colon = strchr(msg, ':');
  if (!colon || colon == msg || memchr(msg, '\n', (size_t)(colon - msg)))
    return;
  char *end = NULL;
  long line = strtol(colon + 1, &end, 10);
  if (end == colon + 1 || *end != ':' || line <= 0) return;
  char *file = strndup(msg, (size_t)(colon - msg));
  if (file) cJSON_AddStringToObject(d, "file", file);
  free(file);
  cJSON_AddNumberToObject(d, "line", (double)line);
}

static void emit_reload_error(tg_runtime *rt, const char *msg,
                              const char *trigger) {
  cJSON *d = cJSON_CreateObject();
  cJSON_AddStringToObject(d, "error", msg);
  add_error_place(d, msg);
  cJSON_AddNumberToObject(d, "generation", (double)rt->gen->number);
  cJSON_AddStringToObject(d, "trigger", trigger);
  tg__emit(rt, NULL, "policy_error", NULL, d);
}

/* Makes g current; calls still running keep the generation they hold. */
static void swap_in(tg_runtime *rt, tg_generation *g, const char *dir) {
  rt->gen_counter = g->number;
  int moved = dir && (!rt->policies_dir || strcmp(dir, rt->policies_dir));
  if (dir && dir != rt->policies_dir) {
    char *copy = tg__strdup(dir);
    free(rt->policies_dir);
    rt->policies_dir = copy;
  }
  tg_generation *old = rt->gen;
  rt->gen = g;
  if (old) tg__generation_unref(old);
  if (rt->watch && (moved || tg__watch_lost(rt))) tg__watch_rearm(rt);
}

int tg__reload(tg_runtime *rt, const char *dir, const char *trigger,
               tg_reload_info *info, char err[TG_ERRMSG]) {
  char msg[TG_ERRMSG] = "";
  if (rt->freeing) {
    tg__errf(err, TG_ERRMSG, "the runtime is shutting down");
    return -ESHUTDOWN;
  }
  if (!dir) dir = rt->policies_dir; /* reload: the folder we loaded from */
  uint64_t t0 = uv_hrtime();
  tg_generation *g =
      tg__generation_load(rt, dir, rt->gen_counter + 1, msg, sizeof msg);
  if (!g) {
    tg__errf(err, TG_ERRMSG, "%s", msg);
    /* a reload failed: the old generation stays */
    if (rt->gen) emit_reload_error(rt, msg, trigger);
    return -EINVAL;
  }
  swap_in(rt, g, dir);
  double ms = (double)(uv_hrtime() - t0) / 1e6;
  if (info) *info = (tg_reload_info){g->number, g->nfiles, ms};
  cJSON *d = cJSON_CreateObject();
  cJSON_AddNumberToObject(d, "generation", (double)g->number);
  cJSON_AddNumberToObject(d, "files", (double)g->nfiles);
  cJSON_AddNumberToObject(d, "duration_ms", ms);
  cJSON_AddStringToObject(d, "trigger", trigger);
  tg__emit(rt, g, "policy_loaded", NULL, d);
  return 0;
}

int tg_runtime_load_policies(tg_runtime *rt, const char *dir,
                             char err[TG_ERRMSG]) {
  return tg__reload(rt, dir, "api", NULL, err);
}

uint64_t tg_runtime_generation(tg_runtime *rt) {
  return rt->gen ? rt->gen->number : 0;
}

uv_loop_t *tg_runtime_loop(tg_runtime *rt) { return rt->loop; }

int tg_runtime_run(tg_runtime *rt, tg_run_mode mode) {
  switch (mode) {
  case TG_RUN_ONCE: return uv_run(rt->loop, UV_RUN_ONCE);
  case TG_RUN_NOWAIT: return uv_run(rt->loop, UV_RUN_NOWAIT);
  default: return uv_run(rt->loop, UV_RUN_DEFAULT);
  }
}

const tg_tool *tg__find_tool(tg_runtime *rt, tg_generation *gen,
                             const char *name) {
  for (size_t i = 0; i < rt->nctools; i++)
    if (strcmp(rt->ctools[i]->name, name) == 0) return rt->ctools[i];
  if (gen)
    for (size_t i = 0; i < gen->ntools; i++)
      if (strcmp(gen->tools[i]->name, name) == 0) return gen->tools[i];
  return NULL;
}

static int copy_retry(tg_retry *r, const tg_tool_def *def, char *err) {
  r->attempts = def->retry_attempts > 0 ? def->retry_attempts : 1;
  r->initial_ms = def->retry_initial_ms ? def->retry_initial_ms : 200;
  r->max_ms = def->retry_max_ms ? def->retry_max_ms : 10000;
  r->multiplier = def->retry_multiplier > 0 ? def->retry_multiplier : 2.0;
  r->jitter = def->retry_jitter;
  if (r->jitter < 0 || r->jitter > 1) {
    tg__errf(err, TG_ERRMSG, "tool '%s': retry jitter must be within 0..1",
             def->name);
    return -EINVAL;
  }
  return 0;
}

int tg_tool_register(tg_runtime *rt, const tg_tool_def *def,
                     char err[TG_ERRMSG]) {
  if (!def || !def->name || !*def->name || !def->start) {
    tg__errf(err, TG_ERRMSG, "a C tool needs a name and a start function");
    return -EINVAL;
  }
  char why[TG_ERRMSG];
  if (def->schema && tg_schema_check(def->schema, why, sizeof why) < 0) {
    tg__errf(err, TG_ERRMSG, "tool '%s': %s", def->name, why);
    return -EINVAL;
  }
  if (tg__find_tool(rt, rt->gen, def->name)) {
    tg__errf(err, TG_ERRMSG, "tool '%s' is already registered", def->name);
    return -EEXIST;
  }
  tg_tool *t = calloc(1, sizeof *t);
  tg_tool **grown = realloc(rt->ctools, (rt->nctools + 1) * sizeof *grown);
  if (!t || !grown) {
    free(t);
    if (grown) rt->ctools = grown;
    tg__errf(err, TG_ERRMSG, "out of memory");
    return -ENOMEM;
  }
  rt->ctools = grown;
  if (copy_retry(&t->retry, def, err) < 0) {
    free(t);
    return -EINVAL;
  }
  t->name = tg__strdup(def->name);
  t->description = tg__strdup(def->description);
  t->schema = def->schema ? cJSON_Duplicate(def->schema, 1) : NULL;
  t->read_only = def->read_only;
  t->timeout_ms = def->timeout_ms;
  t->max_result_bytes = def->max_result_bytes;
  t->kind = TG_TOOL_C;
  t->where = tg__strdup("C");
  t->start = def->start;
  t->cancel = def->cancel;
  t->ud = def->ud;
  t->run_ref = t->retryable_ref = LUA_NOREF;
  rt->ctools[rt->nctools++] = t;
  return 0;
}

cJSON *tg_runtime_describe(tg_runtime *rt) {
  cJSON *d = tg__generation_describe(rt->gen);
  cJSON *tools = cJSON_GetObjectItem(d, "tools");
  for (size_t i = 0; i < rt->nctools; i++) {
    cJSON *t = cJSON_CreateObject();
    cJSON_AddStringToObject(t, "name", rt->ctools[i]->name);
    cJSON_AddBoolToObject(t, "read_only", rt->ctools[i]->read_only);
    cJSON_AddStringToObject(t, "where", "C");
    cJSON_AddItemToArray(tools, t);
  }
  return d;
}

void tg_runtime_free(tg_runtime *rt) {
  if (!rt) return;
  rt->freeing = 1;
  /* Triggers first: no reload may start while the runtime comes apart. */
  tg__watch_stop(rt);
  tg__reload_signal_stop(rt);
  tg__control_stop(rt);
  /* Cancel what still runs, then let the loop finish their endings and
   * close callbacks: nothing is freed under a live handle. */
  while (rt->calls) {
    tg_call *c = rt->calls;
    if (tg_call_cancel(rt, c->id) < 0) break;
    uv_run(rt->loop, UV_RUN_NOWAIT);
    if (rt->calls == c) uv_run(rt->loop, UV_RUN_ONCE);
  }
  tg__procs_shutdown(rt); /* commands a cancelled Lua tool left dying */
  if (rt->gen) tg__generation_unref(rt->gen);
  rt->gen = NULL;
  uv_run(rt->loop, UV_RUN_NOWAIT); /* close callbacks of freed attempts */
  for (size_t i = 0; i < rt->nctools; i++) tg__tool_free(rt->ctools[i]);
  free(rt->ctools);
  tg__always_free(rt);
  tg__changes_free(rt);
  tg__fs_free(rt);
  tg__bus_free(rt);
  if (rt->owns_loop) {
    uv_run(rt->loop, UV_RUN_DEFAULT);
    uv_loop_close(rt->loop);
  }
  free(rt->session);
  free(rt->policies_dir);
  free(rt);
}
