/*
 * tool_names.c — the tool names policies write (a rule's tools, a hook's
 * tool): how they match a call's tool, and which of them match no tool at
 * all. A typo there ("exce", "wirte_file", "bash") is not an error at load
 * time — the tool may be registered by the host later — but `toolgate
 * check` warns about it with the nearest known name (and --strict refuses
 * it), since a rule or hook that names no known tool never applies.
 *
 * Known are toolgate's tools (registered now), the agents' tools as their
 * mapping tables name them (lua/toolgate/agents/: "Bash", "MultiEdit",
 * Codex's "shell") and the toolgate tools those map to ("glob",
 * "web_fetch"), and an agent's MCP tools by their form
 * (mcp__SERVER__TOOL: the agent's own MCP servers are its configuration,
 * not toolgate's). The tables are the one list of the agents' names: a
 * policy file that adds an entry makes its name known.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "generation.h"
#include "sandbox.h"
#include "base/glob.h"
#include "base/util.h"
#include "lua/luaraw.h"

int tg__tool_name_is_glob(const char *name) {
  return strcmp(name, "*") != 0 && strpbrk(name, "*?[{\\") != NULL;
}

int tg__tool_name_matches(const char *name, const char *tool) {
  if (strcmp(name, "*") == 0) return 1;
  if (tg__tool_name_is_glob(name)) return tg_glob_match(name, tool);
  return strcmp(name, tool) == 0;
}

int tg__tool_names_match(const char *name, const char *tool,
                         const char *const *also) {
  if (tg__tool_name_matches(name, tool)) return 1;
  for (size_t i = 0; also && also[i]; i++)
    if (tg__tool_name_matches(name, also[i])) return 1;
  return 0;
}

/* The names a rule or hook may write, with the nearest to a typo. */
typedef struct {
  char **names;
  size_t n, cap;
  char registered[300];   /* the registered tools, for a hint */
  size_t rlen;
  char why[300];          /* why the agents' names are not known, or "" */
  cJSON *agent;           /* {name: {tool: [agents]}} of the agents' names */
  cJSON *used;            /* the caller's: those of them the policies name */
} known_names;

/* k->agent[name][tool] gets agent. */
static void note_agent_name(known_names *k, const char *name,
                            const char *agent, const char *tool) {
  if (!name || !agent || !tool) return;
  if (!k->agent && !(k->agent = cJSON_CreateObject())) return;
  cJSON *by = cJSON_GetObjectItemCaseSensitive(k->agent, name);
  if (!by) by = cJSON_AddObjectToObject(k->agent, name);
  cJSON *who = by ? cJSON_GetObjectItemCaseSensitive(by, tool) : NULL;
  if (by && !who) who = cJSON_AddArrayToObject(by, tool);
  if (who) cJSON_AddItemToArray(who, cJSON_CreateString(agent));
}

static void add_name(known_names *k, const char *name) {
  if (!name || !*name) return;
  for (size_t i = 0; i < k->n; i++)
    if (!strcmp(k->names[i], name)) return;
  if (k->n == k->cap) {
    size_t cap = k->cap ? k->cap * 2 : 64;
    char **p = realloc(k->names, cap * sizeof *p);
    if (!p) return;
    k->names = p;
    k->cap = cap;
  }
  char *d = tg__strdup(name);
  if (d) k->names[k->n++] = d;
}

static void add_registered(known_names *k, const char *tool) {
  add_name(k, tool);
  if (k->rlen < sizeof k->registered - 1) {
    int w = snprintf(k->registered + k->rlen, sizeof k->registered - k->rlen,
                     "%s%s", k->rlen ? ", " : "", tool);
    k->rlen = w < 0 ? k->rlen : k->rlen + (size_t)w;
    if (k->rlen >= sizeof k->registered) k->rlen = sizeof k->registered - 1;
  }
}

/* The agents' names: require("toolgate.agent").known_names() in the
 * generation's own state, under its limits (a policy file may have
 * extended the tables). */
static void add_agent_names(const tg_generation *g, known_names *k) {
  lua_State *L = g->L;
  int top = lua_gettop(L);
  if (luaL_loadstring(L, "local a = require 'toolgate.agent' "
                         "return a.known_names()") != LUA_OK ||
      tg__sandbox_pcall(g->sb, L, 0, 1) != LUA_OK || !lua_istable(L, -1)) {
    const char *m = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1)
                                                   : "it gave no list";
    snprintf(k->why, sizeof k->why, "%s", m);
    lua_settop(L, top);
    return;
  }
  int t = lua_gettop(L);
  for (lua_Integer i = 1;; i++) {
    lua_rawgeti(L, t, i); /* void on LuaJIT: read the type after */
    if (lua_type(L, -1) != LUA_TTABLE) break;
    const char *name = tg__rawgetstring(L, -1, "name");
    const char *tool = tg__rawgetstring(L, -1, "tool");
    add_name(k, name);
    add_name(k, tool);
    note_agent_name(k, name, tg__rawgetstring(L, -1, "agent"), tool);
    lua_pop(L, 1);
  }
  lua_settop(L, top);
}

static void known_load(const tg_generation *g, known_names *k) {
  memset(k, 0, sizeof *k);
  for (size_t i = 0; i < g->core->nctools; i++)
    add_registered(k, g->core->ctools[i]->name);
  for (size_t i = 0; i < g->ntools; i++) add_registered(k, g->tools[i]->name);
  const cJSON *d;
  cJSON_ArrayForEach(d, g->core->declared_tools) /* toolgate.lua's servers' */
    add_name(k, cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(d, "name")));
  add_agent_names(g, k);
}

static void known_free(known_names *k) {
  for (size_t i = 0; i < k->n; i++) free(k->names[i]);
  free(k->names);
  cJSON_Delete(k->agent);
}

/* An agent's MCP tool by its form: mcp__SERVER__TOOL, SERVER and TOOL
 * not empty; or a glob over them (mcp__*, mcp__github__*). */
static int agent_mcp_form(const char *name) {
  if (strncmp(name, "mcp__", 5) || !name[5]) return 0;
  if (tg__tool_name_is_glob(name)) return 1;
  const char *sep = strstr(name + 5, "__");
  return sep && sep > name + 5 && sep[2];
}

size_t tg__name_distance(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  if (la > 62 || lb > 62 || (la > lb ? la - lb : lb - la) > 2) return 3;
  size_t d[64][64];
  for (size_t i = 0; i <= la; i++) d[i][0] = i;
  for (size_t j = 0; j <= lb; j++) d[0][j] = j;
  for (size_t i = 1; i <= la; i++)
    for (size_t j = 1; j <= lb; j++) {
      size_t best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
      if (d[i - 1][j] + 1 < best) best = d[i - 1][j] + 1;
      if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
      /* a swap of two neighbours ("exce") is one typo */
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
          d[i - 2][j - 2] + 1 < best)
        best = d[i - 2][j - 2] + 1;
      d[i][j] = best;
    }
  return d[la][lb] > 2 ? 3 : d[la][lb];
}

/* The known name nearest to `name` (at most 2 edits; a name that differs
 * only in case first: "bash" is "Bash"), or NULL. */
static const char *nearest(const known_names *k, const char *name) {
  const char *best = NULL;
  size_t best_d = 3;
  for (size_t i = 0; i < k->n; i++) {
    if (!strcasecmp(k->names[i], name)) return k->names[i];
    size_t d = tg__name_distance(name, k->names[i]);
    if (d < best_d) best_d = d, best = k->names[i];
  }
  return best;
}

static int covered(const known_names *k, const char *name) {
  if (strcmp(name, "*") == 0 || agent_mcp_form(name)) return 1;
  for (size_t i = 0; i < k->n; i++)
    if (tg__tool_name_matches(name, k->names[i])) return 1;
  return 0;
}

/* One warning: who names `name`, and the name it was probably meant to
 * be (or the registered tools). */
static void warn(const known_names *k, cJSON *warnings, const char *who,
                 const char *name) {
  const cJSON *as = k->agent ? cJSON_GetObjectItemCaseSensitive(k->agent, name)
                             : NULL;
  if (as && k->used && !cJSON_GetObjectItemCaseSensitive(k->used, name))
    cJSON_AddItemToObject(k->used, name, cJSON_Duplicate(as, 1));
  if (covered(k, name)) return;
  int glob = tg__tool_name_is_glob(name);
  const char *best = glob ? NULL : nearest(k, name);
  char hint[400], w[900];
  if (best)
    snprintf(hint, sizeof hint, "did you mean '%s'?", best);
  else
    snprintf(hint, sizeof hint, "registered: %s; or an agent's tool "
             "(Bash, Edit, Read, ... — docs/agent-hooks.md)",
             k->rlen ? k->registered : "none");
  if (glob)
    snprintf(w, sizeof w, "%s has the glob '%s', but no known tool "
             "matches it (%s)", who, name, hint);
  else
    snprintf(w, sizeof w, "%s names the tool '%s', but no tool has that "
             "name (%s)", who, name, hint);
  cJSON_AddItemToArray(warnings, cJSON_CreateString(w));
}

static void warn_hooks(const tg_generation *g, const known_names *k,
                       cJSON *warnings, int after) {
  const tg_hook *h = after ? g->after : g->before;
  size_t n = after ? g->nafter : g->nbefore;
  for (size_t i = 0; i < n; i++) {
    char who[400];
    snprintf(who, sizeof who, "tg.%s hook at %s", after ? "after_tool"
                                                       : "before_tool",
             h[i].where);
    warn(k, warnings, who, h[i].tool);
  }
}

void tg__tool_name_warnings(const tg_generation *g, cJSON *warnings,
                            cJSON *agent_names) {
  known_names k;
  known_load(g, &k);
  k.used = agent_names;
  if (k.why[0]) {
    char w[500];
    snprintf(w, sizeof w, "the agents' tool names cannot be listed "
             "(toolgate.agent.known_names): %s", k.why);
    cJSON_AddItemToArray(warnings, cJSON_CreateString(w));
  }
  for (size_t i = 0; i < g->nrules; i++) {
    const tg_rule *r = &g->rules[i];
    char who[400];
    snprintf(who, sizeof who, "rule '%s' (%s)", r->name, r->where);
    for (size_t j = 0; j < r->ntools; j++) warn(&k, warnings, who, r->tools[j]);
  }
  warn_hooks(g, &k, warnings, 0);
  warn_hooks(g, &k, warnings, 1);
  known_free(&k);
}
