/*
 * tool_names.c — the tool names policies write (a rule's tools, a hook's
 * tool): how they match a call's tool, and which of them match no tool at
 * all. A typo there ("exce", "wirte_file") is not an error at load time —
 * the tool may be registered by the host later — but `toolgate check`
 * warns about it (and --strict refuses it), since a rule or hook that
 * names no registered tool never applies.
 */
#include <stdio.h>
#include <string.h>
#include "generation.h"
#include "base/glob.h"

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

/* The registered tools, C ones first: callback per name until it
 * returns nonzero. */
typedef int (*name_fn)(const char *tool, void *ud);

static int each_tool(const tg_generation *g, name_fn fn, void *ud) {
  for (size_t i = 0; i < g->core->nctools; i++)
    if (fn(g->core->ctools[i]->name, ud)) return 1;
  for (size_t i = 0; i < g->ntools; i++)
    if (fn(g->tools[i]->name, ud)) return 1;
  return 0;
}

static int covers(const char *tool, void *name) {
  return tg__tool_name_matches(name, tool);
}

/* Edit distance of a and b when it is at most 2, else 3 (short names:
 * a bounded table). */
static size_t distance(const char *a, const char *b) {
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

typedef struct {
  const char *name;
  const char *best;
  size_t best_d;
  char list[300];
  size_t len;
} near_ctx;

static int note_tool(const char *tool, void *ud) {
  near_ctx *n = ud;
  size_t d = distance(n->name, tool);
  if (d < n->best_d) {
    n->best_d = d;
    n->best = tool;
  }
  if (n->len < sizeof n->list - 1) {
    int w = snprintf(n->list + n->len, sizeof n->list - n->len, "%s%s",
                     n->len ? ", " : "", tool);
    n->len = w < 0 ? n->len : n->len + (size_t)w;
    if (n->len >= sizeof n->list) n->len = sizeof n->list - 1;
  }
  return 0;
}

/* One warning: who names `name`, and what the registered tools are (or
 * the one it was probably meant to be). */
static void warn(const tg_generation *g, cJSON *warnings, const char *who,
                 const char *name) {
  if (strcmp(name, "*") == 0 || each_tool(g, covers, (void *)name)) return;
  near_ctx n = {name, NULL, 3, "", 0};
  each_tool(g, note_tool, &n);
  char hint[400], w[900];
  if (n.best && !tg__tool_name_is_glob(name))
    snprintf(hint, sizeof hint, "did you mean '%s'?", n.best);
  else
    snprintf(hint, sizeof hint, "registered: %s", n.len ? n.list : "none");
  if (tg__tool_name_is_glob(name))
    snprintf(w, sizeof w, "%s has the glob '%s', but no registered tool "
             "matches it (%s)", who, name, hint);
  else
    snprintf(w, sizeof w, "%s names the tool '%s', but no tool has that "
             "name (%s)", who, name, hint);
  cJSON_AddItemToArray(warnings, cJSON_CreateString(w));
}

static void warn_hooks(const tg_generation *g, cJSON *warnings, int after) {
  const tg_hook *h = after ? g->after : g->before;
  size_t n = after ? g->nafter : g->nbefore;
  for (size_t i = 0; i < n; i++) {
    char who[400];
    snprintf(who, sizeof who, "tg.%s hook at %s", after ? "after_tool"
                                                       : "before_tool",
             h[i].where);
    warn(g, warnings, who, h[i].tool);
  }
}

void tg__tool_name_warnings(const tg_generation *g, cJSON *warnings) {
  for (size_t i = 0; i < g->nrules; i++) {
    const tg_rule *r = &g->rules[i];
    char who[400];
    snprintf(who, sizeof who, "rule '%s' (%s)", r->name, r->where);
    for (size_t k = 0; k < r->ntools; k++) warn(g, warnings, who, r->tools[k]);
  }
  warn_hooks(g, warnings, 0);
  warn_hooks(g, warnings, 1);
}
