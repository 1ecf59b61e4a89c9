-- toolgate.agents.codex — Codex's tools as toolgate's (see toolgate.agent
-- for what an entry holds). Codex names its shell tools (shell,
-- exec_command) "Bash" in hooks, with tool_input {command}; apply_patch
-- carries Codex's own patch envelope in tool_input.command, which is
-- read into a unified diff for apply_patch's rules and the list of files
-- it touches (agent.paths); a pre-hook's rewrite of it cannot be given
-- back (the call is then denied).
local agent = require "toolgate.agent"
local common = require "toolgate.agents.common"

local M = agent.table("codex")

M.tools.Bash = common.bash { timeout = "timeout_ms" }
-- Codex's own names of its shell tools: a rule may name any of them.
M.tools.Bash.names = { "shell", "local_shell", "exec_command" }

-- apply_patch: Codex's envelope in command, patch or input (the one
-- string among them: two that differ leave open which one Codex applies).
M.tools.apply_patch = common.codex_patch { "command", "patch", "input" }

return M
