/*
 * dialect_common.c — what the dialects share: toolgate's (the canonical)
 * event names and kinds, an agent's event names read through its table,
 * and an answer after the agent's limits (what it cannot say is degraded:
 * an ask becomes a deny that says a human must approve; a plain allow
 * becomes no decision, which for such an agent is the same as allowing).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "toolgate.h"
#include "dialect.h"
#include "base/json.h"

const tg_dialect_event tg__hook_canonical_events[] = {
    {"PreToolUse", TG_HOOK_EV_PRE},
    {"PermissionRequest", TG_HOOK_EV_PERMISSION},
    {"PostToolUse", TG_HOOK_EV_POST},
    {"PostToolUseFailure", TG_HOOK_EV_POST_FAILURE},
    {"UserPromptSubmit", TG_HOOK_EV_PROMPT},
    {"Stop", TG_HOOK_EV_STOP},
    {"SubagentStop", TG_HOOK_EV_STOP},
    {"SessionStart", TG_HOOK_EV_SESSION_START},
    {"SessionEnd", TG_HOOK_EV_SESSION_END},
    {NULL, TG_HOOK_EV_OTHER},
};

static tg_hook_event kind_in(const tg_dialect_event *t, const char *name) {
  for (; name && t && t->name; t++)
    if (!strcmp(t->name, name)) return t->kind;
  return TG_HOOK_EV_OTHER;
}

tg_hook_event tg__hook_event_kind(const char *name) {
  return kind_in(tg__hook_canonical_events, name);
}

int tg_hook_event_known(const char *event) {
  return tg__hook_event_kind(event) != TG_HOOK_EV_OTHER;
}

tg_hook_event tg__dialect_kind(const tg_dialect *d, const char *name) {
  tg_hook_event k =
      kind_in(d && d->events ? d->events : tg__hook_canonical_events, name);
  if (k == TG_HOOK_EV_OTHER && d && d->events_and_canonical)
    k = kind_in(tg__hook_canonical_events, name);
  return k;
}

const char *tg__hook_kind_name(tg_hook_event kind) {
  for (const tg_dialect_event *t = tg__hook_canonical_events; t->name;
       t++)
    if (t->kind == kind) return t->name;
  return NULL;
}

const char *tg__hook_verdict_word(tg_hook_verdict v) {
  return v == TG_HOOK_ALLOW ? "allow" : v == TG_HOOK_DENY ? "deny" : "ask";
}

const char *tg__hook_some(const char *s, const char *dflt) {
  return s && *s ? s : dflt;
}

tg_hook_verdict tg__hook_said_verdict(const tg_hook_say *s) {
  tg_hook_verdict v = s->verdict;
  if (s->event == TG_HOOK_EV_PRE) {
    if (v == TG_HOOK_ASK && !s->agent->pre_ask) v = TG_HOOK_DENY;
    if (v == TG_HOOK_ALLOW && !s->updated_input && !s->agent->pre_allow_plain)
      v = TG_HOOK_NONE;
  } else if (s->event == TG_HOOK_EV_PERMISSION) {
    if (s->updated_input && !s->agent->permission_rewrite) v = TG_HOOK_NONE;
  }
  return v;
}

const char *tg__hook_said_reason(const tg_hook_say *s, char *buf,
                                 size_t len) {
  if (s->event != TG_HOOK_EV_PRE || s->verdict != TG_HOOK_ASK ||
      s->agent->pre_ask)
    return s->reason;
  snprintf(buf, len, "toolgate wants the user to approve this call first, "
           "and %s: the tool did not run. Ask the user to run it, or to "
           "allow it with a rule. (%s)",
           tg__hook_some(s->agent->ask_degraded, "this agent's hook cannot ask"),
           tg__hook_some(s->reason, "no reason given"));
  return buf;
}

void tg__hook_add_decision(cJSON *out, const char *word, const char *reason,
                           const char *dflt) {
  cJSON_AddStringToObject(out, "decision", word);
  cJSON_AddStringToObject(out, "reason", tg__hook_some(reason, dflt));
}

cJSON *tg__dialect_copy_event(const cJSON *native) {
  cJSON *c = cJSON_CreateObject();
  const cJSON *k;
  if (!c) return NULL;
  cJSON_ArrayForEach(k, native) {
    if (!k->string || !strcmp(k->string, "hook_event_name")) continue;
    cJSON *v = cJSON_Duplicate(k, 1);
    if (!v) {
      cJSON_Delete(c);
      return NULL;
    }
    cJSON_AddItemToObject(c, k->string, v);
  }
  return c;
}

cJSON *tg__dialect_object_of(const char *s, const char *what, char *why,
                             size_t len) {
  char msg[300];
  cJSON *o = tg_json_parse(s, strlen(s), NULL, msg, sizeof msg);
  if (!o) {
    snprintf(why, len, "%s: a string that is not valid JSON: %s", what, msg);
    return NULL;
  }
  if (!cJSON_IsObject(o)) {
    snprintf(why, len, "%s: JSON text of another value than an object",
             what);
    cJSON_Delete(o);
    return NULL;
  }
  return o;
}

cJSON *tg__dialect_shell_check_event(const char *cwd, const char *event,
                                     const char *tool) {
  cJSON *ev = cJSON_CreateObject();
  cJSON_AddStringToObject(ev, "session_id", "toolgate-install-check");
  cJSON_AddStringToObject(ev, "cwd", cwd);
  cJSON_AddStringToObject(ev, "hook_event_name", event);
  cJSON_AddStringToObject(ev, "tool_name", tool);
  cJSON_AddStringToObject(cJSON_AddObjectToObject(ev, "tool_input"), "command",
                          "true");
  return ev;
}

int tg__dialect_place_path(const tg_dialect_install *in,
                           const tg_dialect_place *pl, char *out,
                           size_t len) {
  const char *v = in->home_var ? getenv(in->home_var) : NULL;
  const char *home = getenv("HOME");
  out[0] = '\0';
  if (!pl->in_home) {
    snprintf(out, len, "%s", pl->file);
    return 0;
  }
  /* the agent's home, when its variable names one: a relative one is
   * from the agent's own working folder, not known here (and HOME's file
   * is then not the one it reads) */
  if (v && *v && in->home_file) {
    if (v[0] != '/') return -1;
    snprintf(out, len, "%s/%s", v, in->home_file);
    return 0;
  }
  if (!home || home[0] != '/') return -1;
  snprintf(out, len, "%s/%s", home, pl->file);
  return 0;
}
