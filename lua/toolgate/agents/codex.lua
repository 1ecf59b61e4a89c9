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

M.tools.apply_patch = {
  tool = "apply_patch",
  args = function(input, ev)
    local text = input.command
    if type(text) ~= "string" then text = input.patch end
    if type(text) ~= "string" then text = input.input end
    local diff, why = agent.codex_patch(text, ev.cwd)
    if not diff then return nil, "apply_patch: " .. why end
    return { patch = diff }
  end,
  paths = function(input, ev)
    local text = input.command or input.patch or input.input
    local _, paths = agent.codex_patch(text, ev.cwd)
    return paths
  end,
}

return M
