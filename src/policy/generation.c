/*
 * generation.c — loading the policies folder (its policy files, see
 * policy_files.c) in name order, into a fresh lua_State: each file runs
 * once, as text only, in its own environment whose reads fall back to the
 * standard globals. The files register rules, hooks, tools and event
 * handlers through the `toolgate` module (api.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "generation.h"
#include "lua/luacall.h"
#include "lua/luajson.h"
#include "sandbox.h"
#include "chat_side.h"
#include "base/util.h"

static int rule_cmp(const void *a, const void *b) {
  const tg_rule *x = a, *y = b;
  if (x->priority != y->priority) return x->priority < y->priority ? -1 : 1;
  return x->order < y->order ? -1 : (x->order > y->order);
}

/* The tg module and JSON marks, made inside a protected call: an
 * out-of-memory there fails the load instead of aborting the process. */
static int open_api(lua_State *L) {
  tg_generation *g = lua_touserdata(L, 1);
  tg__json_open(L);
  tg__policy_api_open(g);
  return 0;
}

static int open_api_protected(tg_generation *g, char *err, size_t errlen) {
  if (tg__lua_pcall_c(g->L, open_api, g, 0) == LUA_OK) return 0;
  tg__errf(err, errlen, "cannot set up the policy API: %s",
           tg__lua_error_text(g->L, -1, "out of memory"));
  lua_pop(g->L, 1);
  return -1;
}

/* Runs the files in order. A registration whose commit failed breaks the
 * generation even when the policy caught its error (register.c). */
static int load_files(tg_generation *g, char *err, size_t errlen) {
  int rc = 0;
  g->loading = 1;
  for (size_t i = 0; i < g->nfiles && rc == 0; i++) {
    rc = tg__run_file(g->L, g->sb, g->files[i], 0, NULL, err, errlen);
    if (rc) tg__api_suggest(err, errlen);
    if (tg__reg_broken(g)) {
      tg__errf(err, errlen, "%s", g->broken);
      rc = -1;
    }
  }
  g->loading = 0;
  return rc;
}

tg_generation *tg__generation_load(tg_core *core, const char *dir,
                                   uint64_t number, char *err, size_t errlen) {
  tg_generation *g = calloc(1, sizeof *g);
  if (!g) {
    tg__errf(err, errlen, "cannot load the policies: out of memory");
    return NULL;
  }
  g->core = core;
  g->number = number;
  g->refs = 1;
  g->L = tg__sandbox_new(&core->cfg, dir, &g->sb, err, errlen);
  if (!g->L) {
    free(g);
    return NULL;
  }
  if (open_api_protected(g, err, errlen) < 0) goto fail;
  if (dir && tg__list_files(dir, tg__is_policy_file, 0, &g->files, &g->nfiles,
                            err, errlen) < 0)
    goto fail;
  if (load_files(g, err, errlen) < 0) goto fail;
  if (g->nrules) qsort(g->rules, g->nrules, sizeof *g->rules, rule_cmp);
  return g;
fail:
  g->refs = 0;
  tg__generation_unref(g); /* refs 0 -> -1: frees */
  return NULL;
}

void tg__generation_ref(tg_generation *g) { g->refs++; }

void tg__generation_unref(tg_generation *g) {
  if (--g->refs > 0) return;
  if (g->L) tg__reg_free_all(g); /* through L's allocator: before it closes */
  for (size_t i = 0; i < g->nfiles; i++) free(g->files[i]);
  free(g->files);
  if (g->L) tg__sandbox_close(g->L, g->sb);
  free(g);
}

int tg__rule_covers(const tg_rule *r, const char *tool,
                    const char *const *also) {
  if (!r->tools) return 1;
  for (size_t i = 0; i < r->ntools; i++)
    if (tg__tool_names_match(r->tools[i], tool, also)) return 1;
  return 0;
}

void tg__hook_walk_start(tg_hook_walk *w, const tg_generation *g, int after,
                         const char *tool, const char *const *also) {
  *w = (tg_hook_walk){after ? g->after : g->before,
                      after ? g->nafter : g->nbefore, 0, tool, also, after, 0};
}

/* Three passes over the list, one per kind: "*", globs, exact names
 * (post-hooks: the other way round, each pass backwards). */
const tg_hook *tg__hook_walk_next(tg_hook_walk *w) {
  for (; w->pass < 3; w->pass++, w->k = 0) {
    tg_hook_kind want = (tg_hook_kind)(w->after ? 2 - w->pass : w->pass);
    while (w->k < w->n) {
      size_t i = w->k++;
      const tg_hook *h = &w->hooks[w->after ? w->n - 1 - i : i];
      if (h->kind != want) continue;
      if (!w->tool || tg__tool_names_match(h->tool, w->tool, w->also))
        return h;
    }
  }
  return NULL;
}

/* The hooks of one list in run order, as {tool, where} (tool NULL: all). */
cJSON *tg__hooks_describe(const tg_generation *g, int after, const char *tool,
                          const char *const *also) {
  cJSON *a = cJSON_CreateArray();
  tg_hook_walk w;
  tg__hook_walk_start(&w, g, after, tool, also);
  for (const tg_hook *h; (h = tg__hook_walk_next(&w));) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "tool", h->tool);
    cJSON_AddStringToObject(o, "where", h->where);
    cJSON_AddItemToArray(a, o);
  }
  return a;
}

static cJSON *describe_rules(const tg_generation *g, cJSON *warnings) {
  cJSON *a = cJSON_CreateArray();
  for (size_t i = 0; i < g->nrules; i++) {
    const tg_rule *r = &g->rules[i];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", r->name);
    cJSON_AddNumberToObject(o, "priority", r->priority);
    cJSON *tools = cJSON_AddArrayToObject(o, "tools");
    if (!r->tools) cJSON_AddItemToArray(tools, cJSON_CreateString("*"));
    for (size_t k = 0; k < r->ntools; k++)
      cJSON_AddItemToArray(tools, cJSON_CreateString(r->tools[k]));
    cJSON_AddStringToObject(o, "fail", r->fail_open ? "open" : "closed");
    cJSON_AddStringToObject(o, "where", r->where);
    cJSON_AddItemToArray(a, o);
    if (i > 0 && g->rules[i - 1].priority == r->priority) {
      char w[512];
      snprintf(w, sizeof w,
               "rules '%s' and '%s' share priority %d: the one registered "
               "first runs first",
               g->rules[i - 1].name, r->name, r->priority);
      cJSON_AddItemToArray(warnings, cJSON_CreateString(w));
    }
  }
  return a;
}

cJSON *tg__generation_describe(const tg_generation *g) {
  cJSON *d = cJSON_CreateObject();
  cJSON *warnings = cJSON_CreateArray();
  cJSON_AddNumberToObject(d, "generation", g ? (double)g->number : 0);
  cJSON *files = cJSON_AddArrayToObject(d, "files");
  cJSON *tools = cJSON_CreateArray();
  if (g) {
    for (size_t i = 0; i < g->nfiles; i++)
      cJSON_AddItemToArray(files, cJSON_CreateString(g->files[i]));
    cJSON_AddItemToObject(d, "rules", describe_rules(g, warnings));
    cJSON *hooks = cJSON_AddObjectToObject(d, "hooks");
    cJSON_AddItemToObject(hooks, "before", tg__hooks_describe(g, 0, NULL, NULL));
    cJSON_AddItemToObject(hooks, "after", tg__hooks_describe(g, 1, NULL, NULL));
    for (size_t i = 0; i < g->ntools; i++)
      cJSON_AddItemToArray(tools, tg__tool_describe(g->tools[i]));
    cJSON *lt = cJSON_AddArrayToObject(d, "list_tools");
    for (size_t i = 0; i < g->nlisters; i++) {
      cJSON *o = cJSON_CreateObject();
      cJSON_AddStringToObject(o, "where", g->listers[i].where);
      cJSON_AddItemToArray(lt, o);
    }
    cJSON *h = cJSON_AddArrayToObject(d, "event_handlers");
    for (size_t i = 0; i < g->nhandlers; i++) {
      cJSON *o = cJSON_CreateObject();
      cJSON_AddStringToObject(o, "type", g->handlers[i].type ? g->handlers[i].type : "*");
      cJSON_AddStringToObject(o, "where", g->handlers[i].where);
      cJSON_AddItemToArray(h, o);
    }
  }
  if (g) tg__chat_describe(g, d);
  if (g)
    tg__tool_name_warnings(g, warnings,
                           cJSON_AddObjectToObject(d, "agent_names"));
  cJSON_AddItemToObject(d, "tools", tools);
  cJSON_AddItemToObject(d, "warnings", warnings);
  return d;
}

const tg_tool *tg__generation_find_tool(const tg_generation *g,
                                        const char *name) {
  for (size_t i = 0; g && i < g->ntools; i++)
    if (strcmp(g->tools[i]->name, name) == 0) return g->tools[i];
  return NULL;
}
