/*
 * dialect_gemini.c — Gemini CLI's hooks, as documented in its hooks
 * reference (https://geminicli.com/docs/hooks/reference, the repository's
 * docs/hooks/reference.md and docs/hooks/index.md).
 *
 * Events: BeforeTool and AfterTool (tool calls), BeforeAgent (a prompt),
 * AfterAgent (a turn's end), SessionStart, SessionEnd. The payload is
 * snake_case and names its event (hook_event_name, session_id,
 * transcript_path, cwd, timestamp, tool_name, tool_input, tool_response
 * {llmContent, returnDisplay, error?}, prompt): close to the canonical
 * shape, so the canonical event is a copy with toolgate's event name, and
 * an AfterTool whose tool_response has an error is a PostToolUseFailure.
 *
 * Answers (stdout JSON, exit 0): {"decision": "allow" | "deny", "reason",
 * "systemMessage", "hookSpecificOutput": {"tool_input" (BeforeTool: merged
 * over the model's arguments), "additionalContext" (AfterTool: appended to
 * the result)}}. An AfterTool "deny" replaces the result the model reads
 * with the reason. What cannot be said: an "ask" (the reference documents
 * allow and deny only), so an ask becomes a deny that says a human must
 * approve; text for the model before the tool (BeforeTool reads no
 * additionalContext); a rewrite that drops an argument (tool_input is
 * merged over the model's, so a dropped key would stay): denied instead.
 *
 * Failure: exit 2 blocks ("System Block ... used for security stops or
 * script failures", stderr the reason); any other exit is a warning and
 * the call proceeds, and a hook past its timeout (in milliseconds,
 * default 60000) is skipped. So the installed line turns every failure
 * into exit 2 for the tool events and the prompt, and exit 1 (a warning)
 * for AfterAgent (whose exit 2 means "retry the turn") and the sessions.
 *
 * Settings: .gemini/settings.json (--project), ~/.gemini/settings.json
 * (--user; $GEMINI_CLI_HOME/.gemini/settings.json when that is set: "the
 * root directory for Gemini CLI's user-level configuration", its
 * docs/reference/configuration.md), {"hooks": {EVENT: [{"matcher", "hooks": [{"type": "command",
 * "command", "timeout" (ms)}]}]}}; "*" matches every tool. The policies
 * are named by absolute path: Gemini replaces $GEMINI_PROJECT_DIR (and
 * $CLAUDE_PROJECT_DIR) in a command with the quoted path before the shell
 * reads it, which inside the line's double quotes would not be the path.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/json.h"
#include "dialect.h"

static const char *const aliases[] = {"gemini-cli", NULL};

static const tg_dialect_event events[] = {
    {"BeforeTool", TG_HOOK_EV_PRE},
    {"AfterTool", TG_HOOK_EV_POST},
    {"BeforeAgent", TG_HOOK_EV_PROMPT},
    {"AfterAgent", TG_HOOK_EV_STOP},
    {"SessionStart", TG_HOOK_EV_SESSION_START},
    {"SessionEnd", TG_HOOK_EV_SESSION_END},
    {NULL, TG_HOOK_EV_OTHER},
};

static cJSON *to_canonical(cJSON *native, const char *name,
                           tg_hook_event kind, char *why, size_t len) {
  (void)name;
  const cJSON *in = cJSON_GetObjectItemCaseSensitive(native, "tool_input");
  if (tg__hook_judged(kind) && in && !cJSON_IsObject(in)) {
    snprintf(why, len, "the hook event's tool_input is not a JSON object");
    return NULL;
  }
  cJSON *c = tg__dialect_copy_event(native);
  if (!c) {
    snprintf(why, len, "out of memory");
    return NULL;
  }
  const cJSON *resp = cJSON_GetObjectItemCaseSensitive(native,
                                                       "tool_response");
  const cJSON *err = cJSON_GetObjectItemCaseSensitive(resp, "error");
  if (kind == TG_HOOK_EV_POST && err && !cJSON_IsNull(err)) {
    const char *msg = cJSON_GetStringValue(
        cJSON_GetObjectItemCaseSensitive(err, "message"));
    if (!msg) msg = cJSON_GetStringValue(err);
    cJSON_AddStringToObject(c, "hook_event_name", "PostToolUseFailure");
    cJSON_AddStringToObject(c, "error", msg ? msg : "the tool failed");
  }
  return c;
}

/* A rewrite Gemini would merge over the model's arguments: every key of
 * the old input must be in the new one, or the dropped one would stay.
 * The new one's keys are looked up in a sorted index: the agent's input
 * may have many thousands. */
static const char *dropped_key(const tg_hook_say *s) {
  const cJSON *old = cJSON_GetObjectItemCaseSensitive(s->native, "tool_input");
  const cJSON *now = s->updated_input, *k;
  size_t n = 0;
  /* none when it has no keys (or out of memory: searched one by one) */
  const cJSON **index =
      cJSON_IsObject(now) ? tg__json_members_sorted(now, &n) : NULL;
  const char *gone = NULL;
  cJSON_ArrayForEach(k, old) {
    if (!k->string) continue;
    if (!(index ? tg__json_members_find(index, n, k->string,
                                        strlen(k->string))
                : cJSON_GetObjectItemCaseSensitive(now, k->string))) {
      gone = k->string;
      break;
    }
  }
  free((void *)index);
  return gone;
}

static void render(const tg_hook_say *s, cJSON *out, int *exit_code) {
  (void)exit_code; /* exit 2 blocks, the reason on stderr */
  char buf[2048], drop[2300];
  if (s->event == TG_HOOK_EV_PRE) {
    tg_hook_verdict v = tg__hook_said_verdict(s);
    const char *reason = tg__hook_said_reason(s, buf, sizeof buf);
    const char *gone = s->updated_input && v != TG_HOOK_DENY
                           ? dropped_key(s) : NULL;
    if (gone) {
      snprintf(drop, sizeof drop, "the tool did not run: toolgate's "
               "pre-hooks rewrote this call without its argument '%s', and "
               "a Gemini CLI hook can only add or change arguments", gone);
      v = TG_HOOK_DENY;
      reason = drop;
    }
    if (v == TG_HOOK_ALLOW || v == TG_HOOK_DENY) {
      tg__hook_add_decision(out, tg__hook_verdict_word(v), reason,
                            "decided by toolgate");
      if (v == TG_HOOK_ALLOW && s->updated_input)
        cJSON_AddItemToObject(cJSON_AddObjectToObject(out, "hookSpecificOutput"),
                              "tool_input", cJSON_Duplicate(s->updated_input, 1));
    }
  } else if (s->event == TG_HOOK_EV_POST ||
             s->event == TG_HOOK_EV_POST_FAILURE) {
    if (s->block)
      tg__hook_add_decision(out, "deny", s->reason, "blocked by toolgate");
    if (s->context && *s->context)
      cJSON_AddStringToObject(cJSON_AddObjectToObject(out, "hookSpecificOutput"),
                              "additionalContext", s->context);
  }
  if (s->system_message && *s->system_message)
    cJSON_AddStringToObject(out, "systemMessage", s->system_message);
}

static cJSON *check_event(const char *cwd) {
  return tg__dialect_shell_check_event(cwd, "BeforeTool", "run_shell_command");
}

static const tg_dialect_place places[] = {
    {"--project", ".gemini/settings.json", 0},
    {"--user", ".gemini/settings.json", 1},
    {NULL, NULL, 0},
};

static const tg_dialect_hook hooks[] = {
    {"BeforeTool", "*", 1, 0},   {"AfterTool", "*", 1, 0},
    {"BeforeAgent", NULL, 1, 0}, {"AfterAgent", NULL, 0, 0},
    {"SessionStart", NULL, 0, 0}, {"SessionEnd", NULL, 0, 0},
    {NULL, NULL, 0, 0},
};

const tg_dialect tg__dialect_gemini = {
    .name = "gemini",
    .aliases = aliases,
    .title = "Gemini CLI",
    .program = "gemini",
    .pre_allow_plain = 1, .pre_ask = 0, .pre_rewrite = 1,
    .permission_rewrite = 0, .pre_context = 0, .post_context = 1,
    .failure_context = 1, .post_block = 1,
    .events = events,
    .to_canonical = to_canonical,
    .render = render,
    .ask_degraded = "a Gemini CLI hook cannot ask (its documented decisions "
                    "are allow and deny)",
    .install = {
        .places = places, .hooks = hooks,
        .home_var = "GEMINI_CLI_HOME", .home_file = ".gemini/settings.json",
        TG_DIALECT_EXIT_2_COMMAND,
        .timeout_scale = 1000,
        .check_event = check_event,
        .check_event_name = "BeforeTool",
        /* no hook runs in a folder not trusted (trust_gemini.c) */
        .folder_trust = tg__gemini_folder_trust,
    },
};
