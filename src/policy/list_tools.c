/*
 * list_tools.c — tg.list_tools(fn): policy code that decides which tools a
 * front lists, and how they are described. Each hook gets the list as the
 * ones before it left it (an array of {name, description?, title?,
 * annotations?, inputSchema?, server?}) and returns the list to show: it
 * may drop tools, reorder them and change their description, title and
 * annotations — not add tools, rename them or change their schema (what
 * validation and the tool see stays what it is). A hook that raises or
 * returns something else is reported as a handler_error (naming
 * file:line) and its change is skipped. Listing is not guarding: the
 * rules still judge every call, listed or not. (The hooks register in
 * api.c, like every tg.* function.)
 */
#include <stdio.h>
#include <string.h>
#include "generation.h"
#include "sandbox.h"
#include "lua/luajson.h"
#include "lua/luacall.h"

static const cJSON *find(const cJSON *list, const char *name) {
  const cJSON *t;
  cJSON_ArrayForEach(t, list) {
    const char *n = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(t, "name"));
    if (n && !strcmp(n, name)) return t;
  }
  return NULL;
}

/* Takes the field from `from` into `to` when it has the right type. */
static void take(cJSON *to, const cJSON *from, const char *k, int string) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(from, k);
  if (!v || (string ? !cJSON_IsString(v) : !cJSON_IsObject(v))) return;
  cJSON_DeleteItemFromObjectCaseSensitive(to, k);
  cJSON_AddItemToObject(to, k, cJSON_Duplicate(v, 1));
}

/* The hook's answer, checked against what it was given: the tools it kept,
 * re-described. NULL with why when it is not a list of known tools. */
static cJSON *merge(const cJSON *given, const cJSON *got, char *why,
                    size_t len) {
  if (!cJSON_IsArray(got) && !(cJSON_IsObject(got) && !got->child)) {
    snprintf(why, len, "it must return a list of tools");
    return NULL;
  }
  cJSON *out = cJSON_CreateArray();
  const cJSON *t;
  cJSON_ArrayForEach(t, got) {
    const char *n = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(t, "name"));
    const cJSON *orig = n ? find(given, n) : NULL;
    if (!orig || find(out, n)) {
      snprintf(why, len, "it returned %s%.100s%s: a hook may drop tools and "
               "re-describe them, not add or rename them",
               n ? "the tool '" : "an entry without a name", n ? n : "",
               n ? (orig ? "' twice" : "', which it was not given") : "");
      cJSON_Delete(out);
      return NULL;
    }
    cJSON *c = cJSON_Duplicate(orig, 1);
    take(c, t, "description", 1);
    take(c, t, "title", 1);
    take(c, t, "annotations", 0);
    cJSON_AddItemToArray(out, c);
  }
  return out;
}

static void report(tg_generation *g, const tg_handler *h, const char *m) {
  char stop[700], what[400];
  snprintf(what, sizeof what, "list_tools hook defined at %s", h->where);
  if (tg__sandbox_describe_stop(g->sb, what, stop, sizeof stop)) m = stop;
  char msg[900];
  snprintf(msg, sizeof msg, "%s: %s (the list stays as the hooks before it "
           "left it)", h->where, m);
  cJSON *d = cJSON_CreateObject();
  cJSON_AddStringToObject(d, "where", h->where);
  cJSON_AddStringToObject(d, "error", msg);
  tg__emit(g->core, g, "handler_error", NULL, d);
}

/* One hook over list; the new list, or NULL (reported). */
static cJSON *run_one(tg_generation *g, const tg_handler *h, const cJSON *list) {
  lua_State *L = g->L;
  char why[512] = "";
  int top = lua_gettop(L);
  lua_rawgeti(L, LUA_REGISTRYINDEX, h->fn_ref);
  if (tg__json_push(L, list) < 0) {
    lua_settop(L, top);
    report(g, h, "the tool list does not fit in the policy memory");
    return NULL;
  }
  cJSON *out = NULL;
  if (tg__sandbox_pcall(g->sb, L, 1, 1) != LUA_OK) {
    report(g, h, tg__lua_error_text(L, -1, "(non-string error)"));
  } else {
    cJSON *got = tg__json_from_lua(L, -1, why, sizeof why);
    if (got) out = merge(list, got, why, sizeof why);
    cJSON_Delete(got);
    if (!out) report(g, h, why);
  }
  lua_settop(L, top);
  return out;
}

cJSON *tg__generation_list_tools(tg_generation *g, const cJSON *tools) {
  cJSON *list = cJSON_Duplicate(tools, 1);
  for (size_t i = 0; g && list && i < g->nlisters; i++) {
    cJSON *next = run_one(g, &g->listers[i], list);
    if (next) {
      cJSON_Delete(list);
      list = next;
    }
  }
  return list;
}
