/*
 * runtime.c — the runtime object: creation, wiring of the layers (the bus's
 * policy scope, the chain's current generation), the reload path, C tool
 * registration, teardown.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "runtime.h"
#include "chain/call.h"
#include "tools/builtin.h"
#include "tools/fs_confine.h"
#include "core/changes.h"
#include "core/network.h"
#include "proc/process.h"
#include "policy/generation.h"
#include "policy/chat_side.h"
#include "policy/api_redact.h"
#include "watch.h"
#include "embed.h"
#include "store/store.h"
#include "base/project.h"

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

/* The project approvals are remembered for (a folder named in the config
 * must be one; without one, the current directory if it still exists),
 * and the database, wired into the chain through core.sink. */
static int open_storage(tg_runtime *rt, char err[TG_ERRMSG]) {
  tg_config *c = &rt->core.cfg;
  rt->project = tg__project_dir(c->project, c->project ? err : NULL);
  if (c->project && !rt->project) return -1;
  c->project = rt->project;
  if (c->db && !(rt->db = tg__strdup(c->db))) {
    tg__errf(err, TG_ERRMSG, "out of memory");
    return -1;
  }
  c->db = rt->db;
  if (c->db_off) return 0;
  if (!(rt->store = tg__store_start(&rt->core, err))) return -1;
  tg__store_sink(rt->store, &rt->core.sink);
  return 0;
}

/* The calls still running are cancelled; the ones ending wait for their
 * audit record, which comes back through the loop. */
static void end_calls(tg_runtime *rt) {
  while (rt->chain.calls) {
    tg_call *c = rt->chain.calls;
    while (c && c->stage == TG_STAGE_END) c = c->next; /* being recorded */
    if (!c) {
      uv_run(rt->core.loop, UV_RUN_ONCE);
      continue;
    }
    if (tg__chain_cancel(&rt->chain, c->id) < 0) break;
    uv_run(rt->core.loop, UV_RUN_NOWAIT);
    if (rt->chain.calls == c) uv_run(rt->core.loop, UV_RUN_ONCE);
  }
  tg__store_drain(rt->store); /* usage and approvals queued meanwhile */
}

tg_runtime *tg_runtime_new(const tg_config *cfg, uv_loop_t *loop,
                           char err[TG_ERRMSG]) {
  tg_runtime *rt = calloc(1, sizeof *rt);
  if (!rt) {
    tg__errf(err, TG_ERRMSG, "out of memory");
    return NULL;
  }
  if (cfg) rt->core.cfg = *cfg; else tg_config_init(&rt->core.cfg);
  fill_defaults(&rt->core.cfg);
  rt->session = tg__strdup(rt->core.cfg.session ? rt->core.cfg.session : "default");
  rt->core.cfg.session = rt->session;
  rt->core.cfg.policies_dir = NULL; /* kept in rt->policies_dir once loaded */
  rt->core.rng = rt->core.cfg.seed ? rt->core.cfg.seed : (uv_hrtime() | 1);
  rt->chain.next_call_no = 1;
  rt->chain.next_approval_id = 1;
  rt->core.bus.next_id = 1;
  rt->core.rt = rt;
  rt->core.bus.scope = &tg__generation_scope; /* policy on_event handlers */
  /* tg.redact of the current generation (policy/api_redact.c) */
  rt->core.redact.policy = tg__policy_redact;
  rt->core.redact.origin = &rt->core.bus.current;
  rt->chain.core = &rt->core;
  if (loop) {
    rt->core.loop = loop;
  } else {
    int rc = uv_loop_init(&rt->own_loop);
    if (rc < 0) {
      tg__errf(err, TG_ERRMSG, "cannot create the event loop: %s",
               uv_strerror(rc));
      free(rt->session);
      free(rt);
      return NULL;
    }
    rt->core.loop = &rt->own_loop;
    rt->owns_loop = 1;
  }
  if (open_storage(rt, err) < 0 || tg__chat_init(rt, err) < 0 ||
      tg__fs_init(&rt->core, err) < 0 ||
      (rt->core.cfg.builtin_tools &&
       tg__builtins_register(&rt->core, err) < 0)) {
    tg_runtime_free(rt);
    return NULL;
  }
  const char *dir = cfg ? cfg->policies_dir : NULL;
  if (tg_runtime_load_policies(rt, dir, err) < 0 ||
      (rt->core.cfg.watch_policies && tg_runtime_watch(rt, 1, err) < 0)) {
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
  cJSON_AddNumberToObject(d, "generation", (double)rt->chain.gen->number);
  cJSON_AddStringToObject(d, "trigger", trigger);
  tg__emit(&rt->core, NULL, "policy_error", NULL, d);
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
  tg_generation *old = rt->chain.gen;
  rt->chain.gen = g;
  rt->core.bus.current = g; /* events of no call go to its handlers */
  if (old) tg__budgets_adopt(g, old); /* budgets keep their periods */
  if (old) tg__generation_unref(old);
  if (rt->watch && (moved || tg__watch_lost(rt))) tg__watch_rearm(rt);
}

int tg__reload(tg_runtime *rt, const char *dir, const char *trigger,
               tg_reload_info *info, char err[TG_ERRMSG]) {
  char msg[TG_ERRMSG] = "";
  if (rt->core.freeing) {
    tg__errf(err, TG_ERRMSG, "the runtime is shutting down");
    return -ESHUTDOWN;
  }
  if (!dir) dir = rt->policies_dir; /* reload: the folder we loaded from */
  uint64_t t0 = uv_hrtime();
  tg_generation *g =
      tg__generation_load(&rt->core, dir, rt->gen_counter + 1, msg, sizeof msg);
  if (!g) {
    tg__errf(err, TG_ERRMSG, "%s", msg);
    /* a reload failed: the old generation stays */
    if (rt->chain.gen) emit_reload_error(rt, msg, trigger);
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
  tg__emit(&rt->core, g, "policy_loaded", NULL, d);
  return 0;
}

int tg_runtime_load_policies(tg_runtime *rt, const char *dir,
                             char err[TG_ERRMSG]) {
  return tg__reload(rt, dir, "api", NULL, err);
}

uint64_t tg_runtime_generation(tg_runtime *rt) {
  return rt->chain.gen ? rt->chain.gen->number : 0;
}

uv_loop_t *tg_runtime_loop(tg_runtime *rt) { return rt->core.loop; }

int tg_runtime_run(tg_runtime *rt, tg_run_mode mode) {
  switch (mode) {
  case TG_RUN_ONCE: return uv_run(rt->core.loop, UV_RUN_ONCE);
  case TG_RUN_NOWAIT: return uv_run(rt->core.loop, UV_RUN_NOWAIT);
  default: return uv_run(rt->core.loop, UV_RUN_DEFAULT);
  }
}

int tg_tool_register(tg_runtime *rt, const tg_tool_def *def,
                     char err[TG_ERRMSG]) {
  if (!def || !def->name || !*def->name || !def->start) {
    tg__errf(err, TG_ERRMSG, "a C tool needs a name and a start function");
    return -EINVAL;
  }
  if (tg__generation_find_tool(rt->chain.gen, def->name)) {
    tg__errf(err, TG_ERRMSG, "tool '%s' is already registered", def->name);
    return -EEXIST;
  }
  return tg__core_add_tool(&rt->core, def, err);
}

cJSON *tg_runtime_describe(tg_runtime *rt) {
  cJSON *d = tg__generation_describe(rt->chain.gen);
  cJSON *tools = cJSON_GetObjectItemCaseSensitive(d, "tools");
  for (size_t i = 0; i < rt->core.nctools; i++)
    cJSON_AddItemToArray(tools, tg__tool_describe(rt->core.ctools[i]));
  return d;
}

cJSON *tg_runtime_list_tools(tg_runtime *rt, const cJSON *tools) {
  if (!cJSON_IsArray(tools)) return NULL;
  return tg__generation_list_tools(rt->chain.gen, tools);
}

void tg_runtime_free(tg_runtime *rt) {
  if (!rt) return;
  rt->core.freeing = 1;
  /* Triggers first: no reload may start while the runtime comes apart. */
  tg__watch_stop(rt);
  tg__reload_signal_stop(rt);
  if (rt->control_stop) rt->control_stop(rt);
  tg__embed_stop(rt);
  /* Cancel what still runs, then let the loop finish their endings and
   * close callbacks: nothing is freed under a live handle. */
  end_calls(rt);
  tg__procs_shutdown(&rt->core); /* commands a cancelled Lua tool left dying */
  if (rt->chain.gen) tg__generation_unref(rt->chain.gen);
  rt->chain.gen = NULL;
  rt->core.bus.current = NULL;
  uv_run(rt->core.loop, UV_RUN_NOWAIT); /* close callbacks of freed attempts */
  for (size_t i = 0; i < rt->core.nctools; i++) tg__tool_free(rt->core.ctools[i]);
  free(rt->core.ctools);
  cJSON_Delete(rt->core.declared_tools);
  tg__network_free(&rt->core);
  tg__store_free(rt->store); /* its thread is done: no callback after */
  rt->core.sink = (tg_sink){0};
  tg__always_free(&rt->chain);
  tg__changes_free(&rt->core);
  tg__fs_free(&rt->core);
  tg__chat_free(rt);
  tg__bus_free(&rt->core);
  if (rt->owns_loop) {
    uv_run(rt->core.loop, UV_RUN_DEFAULT);
    uv_loop_close(rt->core.loop);
  }
  free(rt->session);
  free(rt->policies_dir);
  free(rt->db);
  free(rt->project);
  free(rt);
}
