/*
 * dialect_claude_shape.c — Claude Code's hook answer format, which Codex
 * reads too (their differences are capabilities, in their dialects): a
 * JSON object on stdout with exit 0, or exit 2 with the reason on stderr
 * (a blocking error). https://code.claude.com/docs/en/hooks,
 * https://developers.openai.com/codex/hooks
 *
 *   PreToolUse         hookSpecificOutput {hookEventName,
 *                      permissionDecision, permissionDecisionReason,
 *                      updatedInput?, additionalContext?}
 *   PermissionRequest  hookSpecificOutput.decision {behavior, message |
 *                      updatedInput}
 *   PostToolUse(Failure) decision "block" + reason; hookSpecificOutput
 *                      {additionalContext?, updatedMCPToolOutput?}
 *   any                systemMessage
 */
#include <stdio.h>
#include <string.h>
#include "dialect.h"

static cJSON *specific(cJSON *out, tg_hook_event e) {
  cJSON *h = cJSON_AddObjectToObject(out, "hookSpecificOutput");
  cJSON_AddStringToObject(h, "hookEventName", tg__hook_kind_name(e));
  return h;
}

static void add_context(cJSON *h, const char *ctx) {
  if (ctx && *ctx) cJSON_AddStringToObject(h, "additionalContext", ctx);
}

void tg__claude_shape_decision(cJSON *o, tg_hook_verdict v, const char *reason,
                               const char *dflt) {
  cJSON_AddStringToObject(o, "permissionDecision", tg__hook_verdict_word(v));
  cJSON_AddStringToObject(o, "permissionDecisionReason",
                          tg__hook_some(reason, dflt));
}

/* PreToolUse, after the agent's limits (tg__hook_said_verdict). */
static void pre_tool_use(const tg_hook_say *s, cJSON *out) {
  char buf[2048];
  tg_hook_verdict v = tg__hook_said_verdict(s);
  const char *reason = tg__hook_said_reason(s, buf, sizeof buf);
  if (v == TG_HOOK_NONE && !(s->context && *s->context)) return;
  cJSON *h = specific(out, TG_HOOK_EV_PRE);
  if (v != TG_HOOK_NONE) {
    tg__claude_shape_decision(h, v, reason, "decided by toolgate");
    if (s->updated_input && v != TG_HOOK_DENY)
      cJSON_AddItemToObject(h, "updatedInput",
                            cJSON_Duplicate(s->updated_input, 1));
  }
  add_context(h, s->context);
}

/* PermissionRequest: allow or deny the prompt the agent is about to show;
 * an ask shows it (no decision). A rewrite the agent cannot take leaves
 * the prompt to the user too. */
static void permission_request(const tg_hook_say *s, cJSON *out) {
  tg_hook_verdict v = tg__hook_said_verdict(s);
  if (v != TG_HOOK_ALLOW && v != TG_HOOK_DENY) return;
  cJSON *d = cJSON_AddObjectToObject(specific(out, TG_HOOK_EV_PERMISSION),
                                     "decision");
  cJSON_AddStringToObject(d, "behavior", tg__hook_verdict_word(v));
  if (v == TG_HOOK_DENY)
    cJSON_AddStringToObject(d, "message",
                            tg__hook_some(s->reason, "denied by toolgate"));
  else if (s->updated_input)
    cJSON_AddItemToObject(d, "updatedInput", cJSON_Duplicate(s->updated_input, 1));
}

static void post_tool_use(const tg_hook_say *s, cJSON *out) {
  if (s->block)
    tg__hook_add_decision(out, "block", s->reason, "blocked by toolgate");
  if (!(s->context && *s->context) && !s->updated_mcp_output) return;
  cJSON *h = specific(out, s->event);
  add_context(h, s->context);
  if (s->updated_mcp_output)
    cJSON_AddItemToObject(h, "updatedMCPToolOutput",
                          cJSON_Duplicate(s->updated_mcp_output, 1));
}

void tg__claude_shape_render(const tg_hook_say *s, cJSON *out,
                             int *exit_code) {
  (void)exit_code; /* exit 2 blocks as it is */
  if (s->event == TG_HOOK_EV_PRE) pre_tool_use(s, out);
  else if (s->event == TG_HOOK_EV_PERMISSION) permission_request(s, out);
  else if (s->event == TG_HOOK_EV_POST || s->event == TG_HOOK_EV_POST_FAILURE)
    post_tool_use(s, out);
  if (s->system_message && *s->system_message)
    cJSON_AddStringToObject(out, "systemMessage", s->system_message);
}

cJSON *tg__claude_shape_check_event(const char *cwd) {
  return tg__dialect_shell_check_event(cwd, "PreToolUse", "Bash");
}
