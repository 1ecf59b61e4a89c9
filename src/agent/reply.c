/*
 * reply.c — what toolgate says to a coding agent, in the agent's
 * words: the JSON its hook protocol reads on stdout and the exit code.
 * One place for both agents (their differences are the table below), for
 * the answers of the chain and for the fail-safe ones the front gives
 * when nothing could judge (tg_hook_fallback): the same shapes whatever
 * path the answer took.
 *
 * Exit codes: 0 with the JSON on stdout (or nothing: the agent goes on
 * as it would without the hook); 2 only for a fail-safe deny of an event
 * that could not be read (its name unknown), with the reason on stderr,
 * which both agents treat as blocking a tool call. Never another code: an
 * agent takes any other for "the hook failed, carry on".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "protocol.h"

/* Claude Code takes every PreToolUse decision and a PermissionRequest
 * rewrite. Codex (its hooks' output parser) refuses PreToolUse "allow"
 * without updatedInput and "ask" — each fails open there, the tool runs
 * — and a PermissionRequest updatedInput fails closed. */
static const tg_hook_agent agents[] = {
    {"claude-code", 1, 1, 1},
    {"codex", 0, 0, 0},
};

const tg_hook_agent *tg__hook_agent(const char *name) {
  for (size_t i = 0; name && i < sizeof agents / sizeof *agents; i++)
    if (strcmp(agents[i].name, name) == 0) return &agents[i];
  return NULL;
}

int tg_hook_agent_known(const char *agent) {
  return tg__hook_agent(agent) != NULL;
}

static const struct {
  const char *name;
  tg_hook_event kind;
} event_names[] = {
    {"PreToolUse", TG_HOOK_EV_PRE},
    {"PermissionRequest", TG_HOOK_EV_PERMISSION},
    {"PostToolUse", TG_HOOK_EV_POST},
    {"PostToolUseFailure", TG_HOOK_EV_POST_FAILURE},
    {"UserPromptSubmit", TG_HOOK_EV_PROMPT},
    {"Stop", TG_HOOK_EV_STOP},
    {"SubagentStop", TG_HOOK_EV_STOP},
    {"SessionStart", TG_HOOK_EV_SESSION_START},
    {"SessionEnd", TG_HOOK_EV_SESSION_END},
};

int tg_hook_event_known(const char *event) {
  return tg__hook_event_kind(event) != TG_HOOK_EV_OTHER;
}

tg_hook_event tg__hook_event_kind(const char *name) {
  for (size_t i = 0; name && i < sizeof event_names / sizeof *event_names; i++)
    if (strcmp(event_names[i].name, name) == 0) return event_names[i].kind;
  return TG_HOOK_EV_OTHER;
}

static const char *event_name(tg_hook_event e) {
  for (size_t i = 0; i < sizeof event_names / sizeof *event_names; i++)
    if (event_names[i].kind == e) return event_names[i].name;
  return NULL;
}

static const char *verdict_word(tg_hook_verdict v) {
  return v == TG_HOOK_ALLOW ? "allow" : v == TG_HOOK_DENY ? "deny" : "ask";
}

/* Agents refuse an empty reason for a deny or a block. */
static const char *some(const char *s, const char *dflt) {
  return s && *s ? s : dflt;
}

static cJSON *specific(cJSON *out, tg_hook_event e) {
  cJSON *h = cJSON_AddObjectToObject(out, "hookSpecificOutput");
  cJSON_AddStringToObject(h, "hookEventName", event_name(e));
  return h;
}

static void add_context(cJSON *h, const char *ctx) {
  if (ctx && *ctx) cJSON_AddStringToObject(h, "additionalContext", ctx);
}

/* PreToolUse, after the agent's limits: Codex cannot ask (a deny that
 * says so: toolgate's rule wanted a human) nor allow without a rewrite
 * (no decision: the same, for Codex, as allowing). */
static void pre_tool_use(const tg_hook_say *s, cJSON *out) {
  tg_hook_verdict v = s->verdict;
  const char *reason = s->reason;
  char buf[2048];
  if (v == TG_HOOK_ASK && !s->agent->pre_ask) {
    snprintf(buf, sizeof buf, "toolgate wants the user to approve this call "
             "first, and a Codex hook cannot ask: the tool did not run. Ask "
             "the user to run it, or to allow it with a rule. (%s)",
             some(reason, "no reason given"));
    v = TG_HOOK_DENY;
    reason = buf;
  }
  if (v == TG_HOOK_ALLOW && !s->updated_input && !s->agent->pre_allow_plain)
    v = TG_HOOK_NONE;
  if (v == TG_HOOK_NONE && !(s->context && *s->context)) return;
  cJSON *h = specific(out, TG_HOOK_EV_PRE);
  if (v != TG_HOOK_NONE) {
    cJSON_AddStringToObject(h, "permissionDecision", verdict_word(v));
    cJSON_AddStringToObject(h, "permissionDecisionReason",
                            some(reason, "decided by toolgate"));
    if (s->updated_input && v != TG_HOOK_DENY)
      cJSON_AddItemToObject(h, "updatedInput",
                            cJSON_Duplicate(s->updated_input, 1));
  }
  add_context(h, s->context);
}

/* PermissionRequest: allow or deny the prompt the agent is about to show;
 * an ask shows it (no decision). A rewrite Codex cannot take leaves the
 * prompt to the user too. */
static void permission_request(const tg_hook_say *s, cJSON *out) {
  tg_hook_verdict v = s->verdict;
  if (s->updated_input && !s->agent->permission_rewrite) v = TG_HOOK_NONE;
  if (v != TG_HOOK_ALLOW && v != TG_HOOK_DENY) return;
  cJSON *d = cJSON_AddObjectToObject(specific(out, TG_HOOK_EV_PERMISSION),
                                     "decision");
  cJSON_AddStringToObject(d, "behavior", verdict_word(v));
  if (v == TG_HOOK_DENY)
    cJSON_AddStringToObject(d, "message", some(s->reason, "denied by toolgate"));
  else if (s->updated_input)
    cJSON_AddItemToObject(d, "updatedInput", cJSON_Duplicate(s->updated_input, 1));
}

static void post_tool_use(const tg_hook_say *s, cJSON *out) {
  if (s->block) {
    cJSON_AddStringToObject(out, "decision", "block");
    cJSON_AddStringToObject(out, "reason", some(s->reason, "blocked by toolgate"));
  }
  if (!(s->context && *s->context) && !s->updated_mcp_output) return;
  cJSON *h = specific(out, s->event);
  add_context(h, s->context);
  if (s->updated_mcp_output)
    cJSON_AddItemToObject(h, "updatedMCPToolOutput",
                          cJSON_Duplicate(s->updated_mcp_output, 1));
}

const char *tg__hook_told(const tg_hook_say *s, int more_context) {
  int ctx = more_context || (s->context && *s->context);
  tg_hook_verdict v = s->verdict;
  if (s->event == TG_HOOK_EV_PRE) {
    if (v == TG_HOOK_ASK && !s->agent->pre_ask) v = TG_HOOK_DENY;
    if (v == TG_HOOK_ALLOW && !s->updated_input && !s->agent->pre_allow_plain)
      v = TG_HOOK_NONE;
  } else if (s->event == TG_HOOK_EV_PERMISSION) {
    if (s->updated_input && !s->agent->permission_rewrite) v = TG_HOOK_NONE;
    if (v == TG_HOOK_ASK) v = TG_HOOK_NONE; /* the agent's prompt shows */
    ctx = 0;
  } else if (s->event == TG_HOOK_EV_POST ||
             s->event == TG_HOOK_EV_POST_FAILURE) {
    return s->block ? "block" : s->updated_mcp_output ? "output"
           : ctx ? "context" : NULL;
  } else {
    return NULL;
  }
  if (v != TG_HOOK_NONE) return verdict_word(v);
  return ctx ? "context" : NULL;
}

static char *line_of(const char *s) {
  size_t n = strlen(s);
  char *l = malloc(n + 2);
  if (!l) return NULL;
  memcpy(l, s, n);
  l[n] = '\n';
  l[n + 1] = '\0';
  return l;
}

int tg__hook_render(const tg_hook_say *s, tg_hook_result *res) {
  memset(res, 0, sizeof *res);
  cJSON *out = cJSON_CreateObject();
  if (!out) return -ENOMEM;
  if (s->event == TG_HOOK_EV_PRE) pre_tool_use(s, out);
  else if (s->event == TG_HOOK_EV_PERMISSION) permission_request(s, out);
  else if (s->event == TG_HOOK_EV_POST || s->event == TG_HOOK_EV_POST_FAILURE)
    post_tool_use(s, out);
  if (s->system_message && *s->system_message)
    cJSON_AddStringToObject(out, "systemMessage", s->system_message);
  char *text = out->child ? tg_json_print(out, 0) : tg__strdup("");
  cJSON_Delete(out);
  res->output = text && *text ? line_of(text) : tg__strdup("");
  free(text);
  res->message = s->message && *s->message ? line_of(s->message) : NULL;
  res->exit_code = s->exit_code;
  if (!res->output || (s->message && *s->message && !res->message)) {
    tg_hook_result_free(res);
    return -ENOMEM;
  }
  return 0;
}

void tg_hook_result_free(tg_hook_result *r) {
  if (!r) return;
  free(r->output);
  free(r->message);
  r->output = r->message = NULL;
}

/* ---- fail safe ---------------------------------------------------------- */

static tg_hook_verdict on_error_verdict(const char *on_error) {
  if (on_error && !strcmp(on_error, "allow")) return TG_HOOK_ALLOW;
  if (on_error && !strcmp(on_error, "ask")) return TG_HOOK_ASK;
  return TG_HOOK_DENY;
}

int tg_hook_on_error_known(const char *on_error) {
  return !on_error || !strcmp(on_error, "deny") || !strcmp(on_error, "ask") ||
         !strcmp(on_error, "allow");
}

int tg_hook_fallback(const char *agent, const char *event,
                     const char *on_error, const char *why,
                     tg_hook_result *out) {
  tg_hook_say s;
  char reason[2048], msg[2048];
  memset(&s, 0, sizeof s);
  memset(out, 0, sizeof *out);
  s.agent = tg__hook_agent(agent);
  if (!s.agent) return -EINVAL;
  why = some(why, "an unknown error");
  tg_hook_verdict v = on_error_verdict(on_error);
  snprintf(msg, sizeof msg, "toolgate hook: %s (on_error: %s)", why,
           verdict_word(v));
  s.message = msg;
  tg_hook_event kind = tg__hook_event_kind(event);
  /* an event of nothing to judge (a prompt, a stop, a session, one
   * unknown): toolgate's failure never stops the agent there */
  if (!tg__hook_judged(kind) && event) return tg__hook_render(&s, out);
  if (!tg__hook_judged(kind)) { /* the event could not be read at all */
    if (v == TG_HOOK_ALLOW) return tg__hook_render(&s, out);
    if (v == TG_HOOK_DENY) {
      snprintf(msg, sizeof msg, "toolgate could not read the hook event, so "
               "the tool is blocked (on_error = deny): %s", why);
      s.exit_code = 2; /* blocks a tool call, the reason read from stderr */
      return tg__hook_render(&s, out);
    }
    kind = TG_HOOK_EV_PRE; /* ask: the only event an ask fits */
  }
  s.event = kind;
  if (kind == TG_HOOK_EV_POST || kind == TG_HOOK_EV_POST_FAILURE) {
    s.block = v == TG_HOOK_DENY;
    snprintf(reason, sizeof reason, "toolgate could not check this tool's "
             "result (on_error = %s): %s", verdict_word(v), why);
    if (s.block) s.reason = reason;
    else s.system_message = reason;
    return tg__hook_render(&s, out);
  }
  s.verdict = v;
  if (v == TG_HOOK_DENY)
    snprintf(reason, sizeof reason, "toolgate could not judge this call, so "
             "it is denied (on_error = deny); the tool did not run: %s", why);
  else if (v == TG_HOOK_ASK)
    snprintf(reason, sizeof reason, "toolgate could not judge this call "
             "(on_error = ask): %s. Approve only if you can judge it "
             "yourself.", why);
  else
    snprintf(reason, sizeof reason, "toolgate could not judge this call; "
             "allowed (on_error = allow): %s", why);
  s.reason = reason;
  return tg__hook_render(&s, out);
}
