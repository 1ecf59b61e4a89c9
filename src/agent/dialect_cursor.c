/*
 * dialect_cursor.c — Cursor's hooks (https://cursor.com/docs/hooks; the
 * page was https://cursor.com/docs/agent/hooks): camelCase events whose
 * payload names them (hook_event_name), a flat snake_case answer on
 * stdout, exit 2 to block.
 *
 *   preToolUse         {tool_name: Shell | Read | Write | Grep | Task |
 *                      MCP:<tool>, tool_input, tool_use_id, cwd} ->
 *                      {permission: allow | deny, user_message,
 *                      agent_message, updated_input}; "ask" is accepted by
 *                      its schema but not enforced there, so an ask is
 *                      said as a deny that says a human must approve
 *   postToolUse        {tool_output (JSON text), duration} ->
 *                      {additional_context, updated_mcp_tool_output}; no
 *                      block after the tool: a post-hook's is said as
 *                      context
 *   postToolUseFailure {error_message, failure_type}: nothing to answer
 *   beforeSubmitPrompt {prompt} -> {continue}
 *   stop, subagentStop, sessionStart, sessionEnd: recorded, {}
 *
 * Every event carries conversation_id (the session), workspace_roots
 * and model; cwd is often empty, so the session's folder is the shell's
 * own cwd, else the first workspace root. A hook that exits 2 blocks the
 * action; any other failure lets it through unless the hook has
 * "failClosed": true, which the install writes on the hooks that block —
 * and such a hook that prints nothing counts as failed, so every answer
 * is a JSON object. The installed line turns every failure into exit 2
 * as well.
 *
 *   settings  .cursor/hooks.json (--project), ~/.cursor/hooks.json
 *             (--user): {"version": 1, "hooks": {EVENT: [{"command",
 *             "timeout" (s), "failClosed"}]}}; hooks see
 *             $CURSOR_PROJECT_DIR
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/json.h"
#include "dialect.h"

static const tg_dialect_event events[] = {
    {"preToolUse", TG_HOOK_EV_PRE},
    {"postToolUse", TG_HOOK_EV_POST},
    {"postToolUseFailure", TG_HOOK_EV_POST_FAILURE},
    {"beforeSubmitPrompt", TG_HOOK_EV_PROMPT},
    {"stop", TG_HOOK_EV_STOP},
    {"subagentStop", TG_HOOK_EV_STOP},
    {"sessionStart", TG_HOOK_EV_SESSION_START},
    {"sessionEnd", TG_HOOK_EV_SESSION_END},
    {NULL, TG_HOOK_EV_OTHER},
};

static const tg_dialect_place places[] = {
    {"--project", ".cursor/hooks.json", 0},
    {"--user", ".cursor/hooks.json", 1},
    {NULL, NULL, 0},
};

/* Every tool (no matcher): the policies decide which they care about. A
 * stop or a session only reports a hook that cannot answer. */
static const tg_dialect_hook hooks[] = {
    {"preToolUse", NULL, 1, 0},       {"postToolUse", NULL, 1, 0},
    {"beforeSubmitPrompt", NULL, 1, 0}, {"stop", NULL, 0, 0},
    {"sessionStart", NULL, 0, 0},     {"sessionEnd", NULL, 0, 0},
    {NULL, NULL, 0, 0},
};

static const char *str_of(const cJSON *o, const char *k) {
  return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k));
}

static int put(cJSON *o, const char *k, const cJSON *v) {
  if (!v) return 0;
  cJSON *c = cJSON_Duplicate(v, 1);
  return c && cJSON_AddItemToObject(o, k, c) ? 0 : -1;
}

/* The session's folder: the event's cwd, the shell's own, the first
 * workspace root; NULL when none is a non-empty string. */
static const char *folder_of(const cJSON *ev) {
  const char *c = str_of(ev, "cwd");
  if (c && *c) return c;
  c = str_of(cJSON_GetObjectItemCaseSensitive(ev, "tool_input"), "cwd");
  if (c && *c) return c;
  const cJSON *roots = cJSON_GetObjectItemCaseSensitive(ev, "workspace_roots");
  c = cJSON_GetStringValue(cJSON_GetArrayItem(roots, 0));
  return c && *c ? c : NULL;
}

static cJSON *to_canonical(cJSON *ev, const char *name, tg_hook_event kind,
                           char *why, size_t len) {
  (void)name;
  cJSON *c = cJSON_CreateObject();
  const char *sid = str_of(ev, "session_id"), *conv = str_of(ev, "conversation_id");
  const char *dir = folder_of(ev), *tool = str_of(ev, "tool_name");
  int bad = !c;
  if (!bad && (conv || sid))
    bad = !cJSON_AddStringToObject(c, "session_id", conv ? conv : sid);
  if (!bad && dir) bad = !cJSON_AddStringToObject(c, "cwd", dir);
  if (!bad) bad = put(c, "model", cJSON_GetObjectItemCaseSensitive(ev, "model"));
  if (!bad && tool && !strncmp(tool, "MCP:", 4)) {
    /* an MCP tool has no server name in Cursor's events: mcp__TOOL */
    size_t n = strlen(tool) + 2;
    char *m = malloc(n);
    if (m) snprintf(m, n, "mcp__%s", tool + 4);
    bad = !m || !cJSON_AddStringToObject(c, "tool_name", m);
    free(m);
  } else if (!bad) {
    bad = put(c, "tool_name", cJSON_GetObjectItemCaseSensitive(ev, "tool_name"));
  }
  if (!bad) bad = put(c, "tool_input", cJSON_GetObjectItemCaseSensitive(ev, "tool_input"));
  if (!bad) bad = put(c, "tool_use_id", cJSON_GetObjectItemCaseSensitive(ev, "tool_use_id"));
  if (!bad && kind == TG_HOOK_EV_POST) {
    /* tool_output is JSON text ({"output", "exitCode"} for Shell): the
     * result is what it says, or the text itself */
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(ev, "tool_output");
    const char *t = cJSON_GetStringValue(o);
    char msg[64];
    cJSON *parsed = t ? tg_json_parse(t, strlen(t), NULL, msg, sizeof msg) : NULL;
    if (parsed) bad = !cJSON_AddItemToObject(c, "tool_response", parsed);
    else bad = put(c, "tool_response", o);
  }
  if (!bad && kind == TG_HOOK_EV_POST_FAILURE)
    bad = put(c, "error", cJSON_GetObjectItemCaseSensitive(ev, "error_message"));
  if (!bad && kind == TG_HOOK_EV_PROMPT)
    bad = put(c, "prompt", cJSON_GetObjectItemCaseSensitive(ev, "prompt"));
  if (bad) {
    snprintf(why, len, "out of memory");
    cJSON_Delete(c);
    return NULL;
  }
  return c;
}

static void render(const tg_hook_say *s, cJSON *out, int *exit_code) {
  (void)exit_code; /* exit 2 blocks as it is */
  char buf[2048];
  if (s->event == TG_HOOK_EV_PRE) {
    tg_hook_verdict v = tg__hook_said_verdict(s);
    const char *reason = tg__hook_some(tg__hook_said_reason(s, buf, sizeof buf),
                                       "decided by toolgate");
    if (v == TG_HOOK_DENY) {
      cJSON_AddStringToObject(out, "permission", "deny");
      cJSON_AddStringToObject(out, "user_message", reason);
      cJSON_AddStringToObject(out, "agent_message", reason);
    } else if (v == TG_HOOK_ALLOW) {
      cJSON_AddStringToObject(out, "permission", "allow");
      if (s->updated_input)
        cJSON_AddItemToObject(out, "updated_input",
                              cJSON_Duplicate(s->updated_input, 1));
    }
    return;
  }
  if (s->event == TG_HOOK_EV_POST) {
    /* a block cannot be said after the tool: the model is told instead */
    char *ctx = NULL;
    const char *c = s->context && *s->context ? s->context : NULL;
    if (s->block) {
      const char *r = tg__hook_some(s->reason, "blocked by toolgate");
      size_t n = strlen(r) + (c ? strlen(c) : 0) + 200;
      ctx = malloc(n);
      if (ctx)
        snprintf(ctx, n, "toolgate's post-hooks would block here, and a "
                 "Cursor hook cannot block after the tool ran (its result is "
                 "already read): %s%s%s", r, c ? "\n\n" : "", c ? c : "");
      c = ctx;
    }
    if (c) cJSON_AddStringToObject(out, "additional_context", c);
    if (s->updated_mcp_output)
      cJSON_AddItemToObject(out, "updated_mcp_tool_output",
                            cJSON_Duplicate(s->updated_mcp_output, 1));
    free(ctx);
    return;
  }
  /* a prompt goes on: the chat layers see it, they do not stop it */
  const char *own = str_of(s->native, "hook_event_name");
  if (own && !strcmp(own, "beforeSubmitPrompt"))
    cJSON_AddTrueToObject(out, "continue");
}

/* A preToolUse of the shell command `true` in cwd, as Cursor sends it. */
static cJSON *check_event(const char *cwd) {
  cJSON *ev = cJSON_CreateObject();
  cJSON_AddStringToObject(ev, "conversation_id", "toolgate-install-check");
  cJSON_AddStringToObject(ev, "hook_event_name", "preToolUse");
  cJSON_AddItemToObject(ev, "workspace_roots", cJSON_CreateStringArray(&cwd, 1));
  cJSON_AddStringToObject(ev, "tool_name", "Shell");
  cJSON *in = cJSON_AddObjectToObject(ev, "tool_input");
  cJSON_AddStringToObject(in, "command", "true");
  cJSON_AddStringToObject(in, "cwd", cwd);
  cJSON_AddStringToObject(ev, "cwd", cwd);
  return ev;
}

const tg_dialect tg__dialect_cursor = {
    .name = "cursor",
    .title = "Cursor",
    .program = "cursor-agent",
    .pre_allow_plain = 1, .pre_ask = 0, .pre_rewrite = 1,
    .permission_rewrite = 0, .pre_context = 0, .post_context = 1,
    .post_block = 0,
    .events = events,
    .to_canonical = to_canonical,
    .render = render,
    .ask_degraded = "a Cursor preToolUse hook cannot ask",
    .answer_always = 1,
    .install = {
        .places = places, .hooks = hooks, .flat = 1,
        TG_DIALECT_EXIT_2_COMMAND,
        .timeout_scale = 1, .top = "{\"version\": 1}",
        .project_var = "CURSOR_PROJECT_DIR",
        .check_event = check_event, .check_event_name = "preToolUse",
        .fail_closed_key = "failClosed",
    },
};
