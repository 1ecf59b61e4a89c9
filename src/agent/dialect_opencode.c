/*
 * dialect_opencode.c — OpenCode, which runs no hook commands: its
 * extension point is a plugin (https://opencode.ai/docs/plugins/), a
 * JavaScript module whose "tool.execute.before" may throw to stop a tool
 * (the model reads the error) or change its args, and whose
 * "tool.execute.after" may change the output the model reads. toolgate's
 * plugin (share/opencode/toolgate.js, written by the install into
 * .opencode/plugins/ or ~/.config/opencode/plugins/) runs the installed
 * fail-closed line with one event on stdin, so both the event and the
 * answer are toolgate's own: the event is canonical already (PreToolUse,
 * PostToolUse with tool_response {title, output, metadata},
 * UserPromptSubmit, SessionStart, Stop; OpenCode's tool names and args),
 * and the answer is
 *
 *   before the tool   {"decision": "deny", "reason"} (the plugin throws),
 *                     {"decision": "allow", "reason", "args"?} (args
 *                     replace the tool's), or nothing
 *   after the tool    {"decision": "block", "reason"} (the result is
 *                     withheld: the model reads the reason instead),
 *                     {"output"} (the result as the post-hooks replaced
 *                     it: the model reads that), {"context"} (added to
 *                     the result), or nothing
 *
 * A plugin hook cannot ask: an ask is said as a deny that says a human
 * must approve. The plugin blocks on anything but exit 0 with an answer
 * it can read: a missing program, a crash, exit 2, its own time limit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/json.h"
#include "base/util.h"
#include "dialect.h"

static const tg_dialect_place places[] = {
    {"--project", ".opencode/plugins/toolgate.js", 0},
    {"--user", ".config/opencode/plugins/toolgate.js", 1},
    {NULL, NULL, 0},
};

/* One line, the plugin's, for every event it tells. */
static const tg_dialect_hook hooks[] = {
    {"PreToolUse", NULL, 1, 0},
    {NULL, NULL, 0, 0},
};

/* The text the model is to read of a result the post-hooks replaced: a
 * string as it is, else its "output" (OpenCode's {title, output,
 * metadata}) or "stdout" (exec's) when a string, else the JSON. */
static char *output_text(const cJSON *r) {
  const char *t = cJSON_GetStringValue(r);
  if (!t) t = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "output"));
  if (!t) t = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "stdout"));
  return t ? tg__strdup(t) : tg_json_print(r, 0);
}

static void render(const tg_hook_say *s, cJSON *out, int *exit_code) {
  (void)exit_code; /* the plugin blocks on any exit but 0 */
  char buf[2048];
  if (s->event == TG_HOOK_EV_PRE) {
    tg_hook_verdict v = tg__hook_said_verdict(s);
    if (v != TG_HOOK_DENY && v != TG_HOOK_ALLOW) return;
    tg__hook_add_decision(out, tg__hook_verdict_word(v),
                          tg__hook_said_reason(s, buf, sizeof buf),
                          "decided by toolgate");
    if (v == TG_HOOK_ALLOW && s->updated_input)
      cJSON_AddItemToObject(out, "args", cJSON_Duplicate(s->updated_input, 1));
    return;
  }
  if (s->event == TG_HOOK_EV_POST || s->event == TG_HOOK_EV_POST_FAILURE) {
    if (s->block) {
      tg__hook_add_decision(out, "block", s->reason, "blocked by toolgate");
      return;
    }
    if (s->updated_mcp_output) {
      char *text = output_text(s->updated_mcp_output);
      if (text) cJSON_AddStringToObject(out, "output", text);
      free(text);
    }
    if (s->context && *s->context)
      cJSON_AddStringToObject(out, "context", s->context);
  }
}

/* A PreToolUse of bash `true` in cwd, as the plugin sends it. */
static cJSON *check_event(const char *cwd) {
  return tg__dialect_shell_check_event(cwd, "PreToolUse", "bash");
}

const tg_dialect tg__dialect_opencode = {
    .name = "opencode",
    .title = "OpenCode",
    .program = "opencode",
    .pre_allow_plain = 1, .pre_ask = 0, .pre_rewrite = 1,
    .permission_rewrite = 0, .pre_context = 0, .post_context = 1,
    .post_block = 1,
    .render = render,
    .ask_degraded = "an OpenCode plugin cannot ask",
    .post_replace = 1,
    .install = {
        .places = places, .hooks = hooks, .flat = 1, /* doctor's reading */
        TG_DIALECT_EXIT_2_COMMAND,
        .timeout_scale = 1,
        .check_event = check_event, .check_event_name = "PreToolUse",
        .plugin = 1,
    },
};
