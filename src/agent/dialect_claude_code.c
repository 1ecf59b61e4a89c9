/*
 * dialect_claude_code.c — Claude Code's hooks (https://code.claude.com/
 * docs/en/hooks): its events are the canonical ones, its answers the
 * Claude shape (dialect_claude_shape.c), and its hooks can say
 * everything toolgate says. A hook that fails — exit 127, a crash, past
 * its timeout — is a non-blocking error there ("other exit codes ...
 * non-blocking error"; "a timed-out command hook doesn't block"): the
 * installed line turns each into exit 2, which blocks.
 *
 *   settings  .claude/settings.json (--project), .claude/settings.local.json
 *             (--local), ~/.claude/settings.json (--user):
 *             {"hooks": {EVENT: [{"matcher", "hooks": [{"type":
 *             "command", "command", "timeout" (s)}]}]}}
 */
#include "dialect.h"

static const char *const aliases[] = {"claude", NULL};

static const tg_dialect_place places[] = {
    {"--project", ".claude/settings.json", 0},
    {"--local", ".claude/settings.local.json", 0},
    {"--user", ".claude/settings.json", 1},
    {NULL, NULL, 0},
};

/* Tool events match every tool: the policies decide which they care
 * about. A stop or a session only reports a hook that cannot answer. */
static const tg_dialect_hook hooks[] = {
    {"PreToolUse", "*", 1, 0},        {"PermissionRequest", "*", 1, 0},
    {"PostToolUse", "*", 1, 0},       {"UserPromptSubmit", NULL, 1, 0},
    {"Stop", NULL, 0, 0},             {"SessionStart", NULL, 0, 0},
    {"SessionEnd", NULL, 0, 0},       {NULL, NULL, 0, 0},
};

const tg_dialect tg__dialect_claude_code = {
    .name = "claude-code",
    .aliases = aliases,
    .title = "Claude Code",
    .program = "claude",
    .pre_allow_plain = 1, .pre_ask = 1, .pre_rewrite = 1,
    .permission_rewrite = 1, .pre_context = 1, .post_context = 1,
    .failure_context = 1,
    .post_block = 1,
    TG_CLAUDE_SHAPE,
    .install = {
        .places = places, .hooks = hooks,
        .project_var = "CLAUDE_PROJECT_DIR",
        /* https://code.claude.com/docs/en/settings: "disableAllHooks" */
        .off_switch = "disableAllHooks",
        TG_CLAUDE_SHAPE_INSTALL,
    },
};
