/*
 * dialect_codex.c — Codex's hooks (https://developers.openai.com/codex/
 * hooks): Claude Code's event and answer shapes (dialect_claude_shape.c),
 * with less said: its hooks' output parser refuses a PreToolUse "allow"
 * without updatedInput and an "ask" — each fails open there, the tool
 * runs — so toolgate says no decision for the first (the same, for
 * Codex, as allowing) and a deny that says a human must approve for the
 * second; a PermissionRequest updatedInput fails closed, so a rewrite
 * there leaves the prompt to the user. Exit 2 with the reason on stderr
 * blocks; the installed line turns any other failure into it.
 *
 *   settings  .codex/hooks.json (--project), $CODEX_HOME/hooks.json
 *             (--user; ~/.codex/hooks.json when CODEX_HOME is not set),
 *             Claude Code's JSON shape; Codex sends tool events only for
 *             its shell (as Bash), apply_patch and MCP tools
 *
 * Codex reads hooks "next to active config layers" (its hooks page, "Where
 * Codex looks for hooks"), and its user layer is CODEX_HOME, default
 * ~/.codex (https://developers.openai.com/codex/environment-variables:
 * "Sets the root for Codex state, including config"): with CODEX_HOME
 * set, ~/.codex/hooks.json is never read. A project's .codex/ layer is
 * read only in a project Codex trusts, whatever CODEX_HOME says.
 */
#include "dialect.h"

static const tg_dialect_place places[] = {
    {"--project", ".codex/hooks.json", 0},
    {"--user", ".codex/hooks.json", 1},
    {NULL, NULL, 0},
};

#define TOOLS "Bash|apply_patch|mcp__.*"
static const tg_dialect_hook hooks[] = {
    {"PreToolUse", TOOLS, 1, 0},
    {"PermissionRequest", TOOLS, 1, 0},
    {"PostToolUse", TOOLS, 1, 0},
    {"UserPromptSubmit", NULL, 1, 0},
    {"Stop", NULL, 0, 0},
    {"SessionStart", NULL, 0, 0},
    {NULL, NULL, 0, 0},
};

const tg_dialect tg__dialect_codex = {
    .name = "codex",
    .title = "Codex",
    .program = "codex",
    .pre_allow_plain = 0, .pre_ask = 0, .pre_rewrite = 1,
    .permission_rewrite = 0, .pre_context = 1, .post_context = 1,
    .failure_context = 1,
    .post_block = 1,
    TG_CLAUDE_SHAPE,
    .ask_degraded = "a Codex hook cannot ask",
    .install = {
        .places = places, .hooks = hooks,
        .home_var = "CODEX_HOME", .home_file = "hooks.json",
        TG_CLAUDE_SHAPE_INSTALL,
    },
};
