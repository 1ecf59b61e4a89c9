/*
 * register.c — the memory a generation's registrations keep, and the
 * commit that makes each registration all or nothing (generation.h).
 *
 * The memory comes from the Lua state's allocator (the sandbox's counting
 * one), so a policy that registers a million hooks runs into
 * policy_memory_cap like one that keeps a million tables, instead of
 * growing the process without bound; and an out-of-memory there is the
 * same event as Lua's own. Frees must say how big the block was: strings
 * are strlen + 1, lists are their capacity.
 */
#include <stdio.h>
#include <string.h>
#include "generation.h"
#include "sandbox.h"
#include "chat_side.h"

static void *reg_realloc(tg_generation *g, void *p, size_t old, size_t n) {
  void *ud;
  lua_Alloc f = lua_getallocf(g->L, &ud);
  return f(ud, p, p ? old : 0, n);
}

void *tg__reg_alloc(tg_generation *g, size_t size) {
  void *p = reg_realloc(g, NULL, 0, size);
  if (p) memset(p, 0, size);
  return p;
}

void tg__reg_free(tg_generation *g, void *p, size_t size) {
  if (p) reg_realloc(g, p, size, 0);
}

char *tg__reg_strdup(tg_generation *g, const char *s) {
  if (!s) return NULL;
  size_t n = strlen(s) + 1;
  char *p = reg_realloc(g, NULL, 0, n);
  if (p) memcpy(p, s, n);
  return p;
}

void tg__reg_strfree(tg_generation *g, char *s) {
  if (s) tg__reg_free(g, s, strlen(s) + 1);
}

int tg__reg_reserve(tg_generation *g, void **arr, size_t *cap, size_t n,
                    size_t size) {
  if (n < *cap) return 0;
  size_t want = *cap ? *cap * 2 : 8;
  if (want > (size_t)-1 / size) return -1;
  void *p = reg_realloc(g, *arr, *cap * size, want * size);
  if (!p) return -1;
  *arr = p;
  *cap = want;
  return 0;
}

/* ---- the commit ---------------------------------------------------------- */

/* "what ran out of memory ..." into g->broken: the cap's own words when the
 * cap refused it. */
static void set_broken(tg_generation *g) {
  char what[400];
  snprintf(what, sizeof what, "%stg.%s", g->commit_where, g->commit_fn);
  if (!tg__sandbox_describe_stop(g->sb, what, g->broken, sizeof g->broken))
    snprintf(g->broken, sizeof g->broken, "%s ran out of memory", what);
  size_t n = strlen(g->broken);
  snprintf(g->broken + n, sizeof g->broken - n,
           "; the policies are not loaded");
  g->commit_fn = NULL;
}

int tg__reg_broken(tg_generation *g) {
  if (g->commit_fn) set_broken(g);
  return g->broken[0] != '\0';
}

void tg__reg_check(lua_State *L, tg_generation *g) {
  if (!tg__reg_broken(g)) return;
  lua_pushstring(L, g->broken);
  lua_error(L);
}

void tg__reg_commit_begin(lua_State *L, tg_generation *g, const char *fn) {
  tg__reg_check(L, g);
  lua_Debug ar;
  g->commit_where[0] = '\0';
  if (lua_getstack(L, 1, &ar) && lua_getinfo(L, "Sl", &ar) &&
      ar.currentline > 0)
    snprintf(g->commit_where, sizeof g->commit_where, "%s:%d: ",
             ar.short_src, ar.currentline);
  g->commit_fn = fn;
}

void tg__reg_commit_end(tg_generation *g) { g->commit_fn = NULL; }

int tg__reg_commit_fail(lua_State *L, tg_generation *g) {
  set_broken(g);
  lua_pushstring(L, g->broken);
  return lua_error(L);
}

/* ---- freeing ------------------------------------------------------------- */

static void free_rules(tg_generation *g) {
  for (size_t i = 0; i < g->nrules; i++) {
    tg_rule *r = &g->rules[i];
    for (size_t k = 0; k < r->ntools; k++) tg__reg_strfree(g, r->tools[k]);
    tg__reg_free(g, r->tools, r->ntools * sizeof *r->tools);
    tg__reg_strfree(g, r->name);
    tg__reg_strfree(g, r->where);
  }
  tg__reg_free(g, g->rules, g->caprules * sizeof *g->rules);
}

static void free_hooks(tg_generation *g, tg_hook *h, size_t n, size_t cap) {
  for (size_t i = 0; i < n; i++) {
    tg__reg_strfree(g, h[i].tool);
    tg__reg_strfree(g, h[i].where);
  }
  tg__reg_free(g, h, cap * sizeof *h);
}

static void free_tools(tg_generation *g) {
  for (size_t i = 0; i < g->ntools; i++) {
    tg_tool *t = g->tools[i];
    tg__reg_strfree(g, t->name);
    tg__reg_strfree(g, t->description);
    tg__reg_strfree(g, t->where);
    tg_schema_free(t->validator);
    cJSON_Delete(t->schema);
    tg__reg_free(g, t, sizeof *t);
  }
  tg__reg_free(g, g->tools, g->captools * sizeof *g->tools);
}

static void free_handlers(tg_generation *g) {
  for (size_t i = 0; i < g->nhandlers; i++) {
    tg__reg_strfree(g, g->handlers[i].type);
    tg__reg_strfree(g, g->handlers[i].where);
  }
  tg__reg_free(g, g->handlers, g->caphandlers * sizeof *g->handlers);
  for (size_t i = 0; i < g->nlisters; i++)
    tg__reg_strfree(g, g->listers[i].where);
  tg__reg_free(g, g->listers, g->caplisters * sizeof *g->listers);
}

void tg__reg_free_all(tg_generation *g) {
  tg__chat_reg_free(g);
  free_rules(g);
  free_hooks(g, g->before, g->nbefore, g->capbefore);
  free_hooks(g, g->after, g->nafter, g->capafter);
  free_tools(g);
  free_handlers(g);
  g->nrules = g->nbefore = g->nafter = g->ntools = g->nhandlers = 0;
  g->nlisters = 0;
}
