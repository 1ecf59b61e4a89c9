/*
 * dialect_copilot.c — GitHub Copilot CLI's hooks, as documented in the
 * hooks reference (https://docs.github.com/en/copilot/reference/
 * hooks-reference; earlier at .../copilot-cli-reference/cli-hooks-reference).
 *
 * Events are configured in camelCase (preToolUse, permissionRequest,
 * postToolUse, postToolUseFailure, userPromptSubmitted, agentStop,
 * subagentStop, sessionStart, sessionEnd), and then the payload does not
 * name its event: the installed line passes --event NAME. Its fields are
 * camelCase (sessionId, cwd, timestamp, toolName, toolArgs, toolResult
 * {resultType, textResultForLlm}, error, prompt, transcriptPath); toolArgs
 * is "unknown" — an object, or the arguments as JSON text, which is read
 * with the strict parser (text that is not one JSON object is a malformed
 * event: the fail-safe answer). The PascalCase ("VS Code compatible")
 * payloads, which name themselves in hook_event_name and use snake_case
 * (tool_input, tool_result), are read too.
 *
 * Answers (stdout JSON, exit 0): preToolUse {permissionDecision: allow |
 * deny | ask, permissionDecisionReason, modifiedArgs}; permissionRequest
 * {behavior: allow | deny, message}; postToolUse {modifiedResult
 * {resultType: "success", textResultForLlm}, additionalContext};
 * postToolUseFailure {additionalContext}. What cannot be said: text for
 * the model before the tool (preToolUse reads no additionalContext), a
 * rewrite at permissionRequest (no updated input there: the prompt is
 * left to the user), systemMessage. A post-hook's block (tg.abort) is said
 * as a modifiedResult holding the reason: the model reads it instead of
 * the tool's result.
 *
 * Failure: the reference says a preToolUse command hook that crashes or
 * exits non-zero denies the call, but a timeout is "always fail-open",
 * and for every other event a failing hook is logged and skipped (its
 * earlier version said so of every event, preToolUse included). So
 * toolgate's own answers exit 0 only (a deny is said on stdout), and the
 * installed line turns any other exit — a missing binary, a crash, its
 * watcher's kill before the agent's timeout — into a deny on stdout with
 * exit 0, which every version reads as a deny; for the events that
 * cannot block, into exit 1 (logged).
 *
 * Settings: a file of its own, .github/hooks/toolgate.json (--project;
 * Copilot loads every JSON file of that folder) or ~/.copilot/hooks/
 * toolgate.json ($COPILOT_HOME/hooks/ when set; --user): {"version": 1, "hooks": {EVENT: [{"type":
 * "command", "bash", "timeoutSec"}]}} — flat, no matcher (every tool).
 */
#include <stdio.h>
#include <string.h>
#include "dialect.h"

static const char *const aliases[] = {"copilot-cli", "github-copilot", NULL};

static const tg_dialect_event events[] = {
    {"preToolUse", TG_HOOK_EV_PRE},
    {"permissionRequest", TG_HOOK_EV_PERMISSION},
    {"postToolUse", TG_HOOK_EV_POST},
    {"postToolUseFailure", TG_HOOK_EV_POST_FAILURE},
    {"userPromptSubmitted", TG_HOOK_EV_PROMPT},
    {"agentStop", TG_HOOK_EV_STOP},
    {"subagentStop", TG_HOOK_EV_STOP},
    {"sessionStart", TG_HOOK_EV_SESSION_START},
    {"sessionEnd", TG_HOOK_EV_SESSION_END},
    {NULL, TG_HOOK_EV_OTHER},
};

/* camelCase field -> the canonical one */
static const char *const renamed[][2] = {
    {"sessionId", "session_id"},        {"toolName", "tool_name"},
    {"toolArgs", "tool_input"},         {"toolResult", "tool_response"},
    {"tool_result", "tool_response"},   {"transcriptPath", "transcript_path"},
    {"stopReason", "stop_reason"},      {"initialPrompt", "initial_prompt"},
};

static const char *canonical_key(const char *k) {
  for (size_t i = 0; i < sizeof renamed / sizeof *renamed; i++)
    if (!strcmp(renamed[i][0], k)) return renamed[i][1];
  return k;
}

/* A key two of the payload's may become (tool_input: toolArgs, and
 * itself). The payload's own keys are unique (the strict parser), so only
 * these can meet twice: the others are not searched for, which for an
 * event of many keys would cost their number squared. */
static int renamed_to(const char *k) {
  for (size_t i = 0; i < sizeof renamed / sizeof *renamed; i++)
    if (!strcmp(renamed[i][1], k)) return 1;
  return 0;
}

/* The tool's arguments as an object: as given, or read from their JSON
 * text; none (null, absent) is {}. NULL with why. */
static cJSON *arguments(const cJSON *args, char *why, size_t len) {
  if (!args || cJSON_IsNull(args)) return cJSON_CreateObject();
  if (cJSON_IsObject(args)) return cJSON_Duplicate(args, 1);
  if (cJSON_IsString(args))
    return tg__dialect_object_of(args->valuestring, "the tool's arguments "
                                 "(toolArgs)", why, len);
  snprintf(why, len, "the tool's arguments (toolArgs) are neither an object "
           "nor JSON text");
  return NULL;
}

static cJSON *to_canonical(cJSON *native, const char *name,
                           tg_hook_event kind, char *why, size_t len) {
  (void)name;
  cJSON *c = cJSON_CreateObject();
  const cJSON *k;
  if (!c) {
    snprintf(why, len, "out of memory");
    return NULL;
  }
  cJSON_ArrayForEach(k, native) {
    if (!k->string || !strcmp(k->string, "hook_event_name")) continue;
    const char *key = canonical_key(k->string);
    if (renamed_to(key) && cJSON_GetObjectItemCaseSensitive(c, key)) {
      /* toolArgs and tool_input both: which one runs is not known */
      snprintf(why, len, "the hook event names '%s' twice (as %s)", key,
               k->string);
      cJSON_Delete(c);
      return NULL;
    }
    cJSON *v = !strcmp(key, "tool_input") && tg__hook_judged(kind)
                   ? arguments(k, why, len) : cJSON_Duplicate(k, 1);
    if (!v) {
      cJSON_Delete(c);
      return NULL;
    }
    cJSON_AddItemToObject(c, key, v);
  }
  if (tg__hook_judged(kind) &&
      !cJSON_GetObjectItemCaseSensitive(c, "tool_input"))
    cJSON_AddItemToObject(c, "tool_input", cJSON_CreateObject());
  /* a result that is not a success is a failure (the VS Code payload's
   * result_type: failure, denied, error) */
  const cJSON *res = cJSON_GetObjectItemCaseSensitive(c, "tool_response");
  const char *type = cJSON_GetStringValue(
      cJSON_GetObjectItemCaseSensitive(res, "resultType"));
  if (!type) type = cJSON_GetStringValue(
      cJSON_GetObjectItemCaseSensitive(res, "result_type"));
  if (kind == TG_HOOK_EV_POST && type && strcmp(type, "success")) {
    const char *text = cJSON_GetStringValue(
        cJSON_GetObjectItemCaseSensitive(res, "textResultForLlm"));
    if (!text) text = cJSON_GetStringValue(
        cJSON_GetObjectItemCaseSensitive(res, "text_result_for_llm"));
    cJSON_AddStringToObject(c, "hook_event_name", "PostToolUseFailure");
    if (!cJSON_GetObjectItemCaseSensitive(c, "error"))
      cJSON_AddStringToObject(c, "error", text ? text : type);
  }
  return c;
}

static void deny(cJSON *out, const char *reason) {
  tg__claude_shape_decision(out, TG_HOOK_DENY, reason, "denied by toolgate");
}

static void render(const tg_hook_say *s, cJSON *out, int *exit_code) {
  char buf[2048];
  if (*exit_code == 2) { /* a blocking error: exit 2 is not one everywhere */
    deny(out, s->message);
    *exit_code = 0;
    return;
  }
  if (s->event == TG_HOOK_EV_PRE) {
    tg_hook_verdict v = tg__hook_said_verdict(s);
    const char *reason = tg__hook_said_reason(s, buf, sizeof buf);
    if (v == TG_HOOK_DENY) {
      deny(out, reason);
    } else if (v != TG_HOOK_NONE) {
      tg__claude_shape_decision(out, v, reason, "decided by toolgate");
      if (s->updated_input)
        cJSON_AddItemToObject(out, "modifiedArgs",
                              cJSON_Duplicate(s->updated_input, 1));
    }
  } else if (s->event == TG_HOOK_EV_PERMISSION) {
    tg_hook_verdict v = tg__hook_said_verdict(s);
    if (v == TG_HOOK_ALLOW || v == TG_HOOK_DENY) {
      cJSON_AddStringToObject(out, "behavior", tg__hook_verdict_word(v));
      if (v == TG_HOOK_DENY)
        cJSON_AddStringToObject(out, "message",
                                tg__hook_some(s->reason, "denied by toolgate"));
    }
  } else if (s->event == TG_HOOK_EV_POST ||
             s->event == TG_HOOK_EV_POST_FAILURE) {
    if (s->block && s->event == TG_HOOK_EV_POST) {
      cJSON *r = cJSON_AddObjectToObject(out, "modifiedResult");
      cJSON_AddStringToObject(r, "resultType", "success");
      cJSON_AddStringToObject(r, "textResultForLlm",
                              tg__hook_some(s->reason, "withheld by toolgate"));
    }
    if (s->context && *s->context)
      cJSON_AddStringToObject(out, "additionalContext", s->context);
  }
}

static cJSON *check_event(const char *cwd) {
  cJSON *ev = cJSON_CreateObject();
  cJSON_AddStringToObject(ev, "sessionId", "toolgate-install-check");
  cJSON_AddNumberToObject(ev, "timestamp", 0);
  cJSON_AddStringToObject(ev, "cwd", cwd);
  cJSON_AddStringToObject(ev, "toolName", "bash");
  cJSON_AddStringToObject(ev, "toolArgs", "{\"command\":\"true\"}");
  return ev;
}

static const tg_dialect_place places[] = {
    {"--project", ".github/hooks/toolgate.json", 0},
    {"--user", ".copilot/hooks/toolgate.json", 1},
    {NULL, NULL, 0},
};

/* Only the tool events before the tool can block; the others report. */
static const tg_dialect_hook hooks[] = {
    {"preToolUse", NULL, 1, 1},          {"permissionRequest", NULL, 1, 1},
    {"postToolUse", NULL, 0, 1},         {"postToolUseFailure", NULL, 0, 1},
    {"userPromptSubmitted", NULL, 0, 1}, {"agentStop", NULL, 0, 1},
    {"sessionStart", NULL, 0, 1},        {"sessionEnd", NULL, 0, 1},
    {NULL, NULL, 0, 0},
};

const tg_dialect tg__dialect_copilot = {
    .name = "copilot",
    .aliases = aliases,
    .title = "GitHub Copilot CLI",
    .program = "copilot",
    .pre_allow_plain = 1, .pre_ask = 1, .pre_rewrite = 1,
    .permission_rewrite = 0, .pre_context = 0, .post_context = 1,
    .failure_context = 1, .post_block = 1,
    .events = events,
    /* the canonical (PascalCase) names: the "VS Code compatible" payloads */
    .events_and_canonical = 1,
    .event_from_arg = 1,
    .to_canonical = to_canonical,
    .render = render,
    .install = {
        .places = places, .hooks = hooks, .flat = 1,
        .home_var = "COPILOT_HOME", .home_file = "hooks/toolgate.json",
        .command_key = "bash", .timeout_key = "timeoutSec",
        .timeout_scale = 1, .top = "{\"version\": 1}",
        .exit_2_blocks = 0,
        .fail_block = "echo \"{\\\"permissionDecision\\\":\\\"deny\\\","
                      "\\\"permissionDecisionReason\\\":\\\"toolgate: the "
                      "hook did not answer (exit $rc), so this call is "
                      "blocked; run toolgate hook install again\\\"}\"; "
                      "exit 0",
        .fail_report = "exit 1",
        .check_event = check_event,
        .check_event_name = "preToolUse",
    },
};
