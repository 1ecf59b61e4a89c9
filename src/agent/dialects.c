/*
 * dialects.c — the registry of the agents `toolgate hook` speaks for: one
 * line each below. An agent is its dialect (src/agent/dialect_<agent>.c,
 * see dialect.h), its Lua mapping table (lua/toolgate/agents/, named in
 * toolgate.agent's M.modules) and this line; the hook command, install,
 * uninstall, explain and doctor find it here.
 */
#include <stdio.h>
#include <string.h>
#include "toolgate.h"
#include "dialect.h"

#define TG_DIALECTS(X) \
  X(claude_code)       \
  X(codex)             \
  X(gemini)            \
  X(copilot)           \
  /* one line per agent, above; registry order is doctor's and --help's */

#define DECLARE(n) extern const tg_dialect tg__dialect_##n;
TG_DIALECTS(DECLARE)
#define ENTRY(n) &tg__dialect_##n,
static const tg_dialect *const all[] = {TG_DIALECTS(ENTRY) NULL};

const tg_dialect *tg__dialect_at(size_t i) {
  return i < sizeof all / sizeof *all ? all[i] : NULL;
}

const tg_dialect *tg__dialect(const char *name) {
  for (size_t i = 0; name && all[i]; i++) {
    if (!strcmp(all[i]->name, name)) return all[i];
    for (const char *const *a = all[i]->aliases; a && *a; a++)
      if (!strcmp(*a, name)) return all[i];
  }
  return NULL;
}

const char *tg__dialect_names(void) {
  static char names[256];
  if (!names[0]) {
    size_t n = 0;
    for (size_t i = 0; all[i] && n < sizeof names; i++)
      n += (size_t)snprintf(names + n, sizeof names - n, "%s%s",
                            i ? ", " : "", all[i]->name);
  }
  return names;
}

int tg_hook_agent_known(const char *agent) {
  return tg__dialect(agent) != NULL;
}
