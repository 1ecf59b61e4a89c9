/*
 * case_event.c — `toolgate test`'s reader of a case written as an agent's
 * own event (event = the JSON the agent sends). The runner
 * (runtime/policy_test.c) sits below the agent protocol, so it cannot
 * read an agent's dialect itself: the fronts that run cases install this
 * reader (tg__hook_install_case_reader) and the runner calls it. The
 * event is read by the code `toolgate hook` reads events with
 * (tg__hook_read_event), so a case judges what the hook would.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "protocol.h"
#include "policy/generation.h"

static const char *str(const cJSON *o, const char *k) {
  return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k));
}

/* The name nearest to name among the agents and their aliases, or among
 * d's events (d non-NULL); NULL when none is two typos away. */
static const char *nearest(const char *name, const tg_dialect *d) {
  const char *best = NULL;
  size_t best_d = 3;
  const tg_dialect *a;
#define TRY(s)                                                               \
  do {                                                                       \
    size_t n_ = tg__name_distance(name, (s));                                \
    if (n_ < best_d) best_d = n_, best = (s);                                \
  } while (0)
  if (d) {
    for (const tg_dialect_event *e = d->events; e && e->name; e++) TRY(e->name);
    return best;
  }
  for (size_t i = 0; (a = tg__dialect_at(i)); i++) {
    TRY(a->name);
    for (const char *const *al = a->aliases; al && *al; al++) TRY(*al);
  }
#undef TRY
  return best;
}

/* The agent's name of its pre-tool event. */
static const char *pre_tool_name(const tg_dialect *d) {
  for (const tg_dialect_event *e = d->events; e && e->name; e++)
    if (e->kind == TG_HOOK_EV_PRE) return e->name;
  return "PreToolUse";
}

static int read_case(const char *agent, const char *event_name,
                     const cJSON *native, const char **agent_out,
                     cJSON **canonical, char *why, size_t len) {
  *canonical = NULL;
  if (!agent && native) {
    agent = tg__hook_agent_of(native);
    /* Claude Code's names without its marks: as before, Claude Code's
     * (an OpenCode event says agent = "opencode" or toolgate_agent) */
    if (!agent) agent = "claude-code";
  }
  const tg_dialect *d = tg__dialect(agent);
  if (!d) {
    const char *near = agent ? nearest(agent, NULL) : NULL;
    snprintf(why, len, "unknown agent '%s'%s%s%s (agents: %s)",
             agent ? agent : "", near ? ", did you mean '" : "",
             near ? near : "", near ? "'?" : "", tg__dialect_names());
    return -1;
  }
  *agent_out = d->name;
  if (!native) return 0;
  if (event_name && tg__dialect_kind(d, event_name) == TG_HOOK_EV_OTHER) {
    const char *near = nearest(event_name, d);
    snprintf(why, len, "%s has no event '%s'%s%s%s", d->title, event_name,
             near ? ", did you mean '" : "", near ? near : "",
             near ? "'?" : "");
    return -1;
  }
  /* the name: the case's, else the payload's, else the pre-tool event */
  cJSON *ev = cJSON_Duplicate(native, 1);
  if (!ev) {
    snprintf(why, len, "out of memory");
    return -1;
  }
  const char *name = event_name ? event_name
                     : str(ev, "hook_event_name") ? NULL : pre_tool_name(d);
  if (name && !d->event_from_arg) {
    cJSON_DeleteItemFromObjectCaseSensitive(ev, "hook_event_name");
    cJSON_AddStringToObject(ev, "hook_event_name", name);
  }
  char *text = cJSON_PrintUnformatted(ev);
  cJSON_Delete(ev);
  if (!text) {
    snprintf(why, len, "out of memory");
    return -1;
  }
  char what[TG_ERRMSG];
  cJSON *canon = tg__hook_read_event(d, text, strlen(text),
                                     d->event_from_arg ? name : NULL, what,
                                     sizeof what);
  free(text);
  if (!canon) {
    snprintf(why, len, "%s's event cannot be read: %s", d->title, what);
    return -1;
  }
  if (!tg__hook_judged(tg__hook_event_kind(str(canon, "hook_event_name")))) {
    snprintf(why, len, "%s's event '%s' is not a tool call's (give "
             "event_name = \"%s\" or another tool call's event)", d->title,
             tg__hook_native_name(canon), pre_tool_name(d));
    cJSON_Delete(canon);
    return -1;
  }
  *canonical = canon;
  return 0;
}

void tg__hook_install_case_reader(tg_runtime *rt) {
  tg__policy_test_reader(rt, read_case);
}
