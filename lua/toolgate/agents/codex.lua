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

-- The patch's text: the one string among command, patch and input. Two
-- that differ leave open which one Codex applies: what the rules judged
-- could then be another patch than the one that runs.
local function patch_text(input)
  local text
  for _, k in ipairs({ "command", "patch", "input" }) do
    local v = input[k]
    if type(v) == "string" then
      if text and v ~= text then
        return nil, "the patch fields (command, patch, input) disagree"
      end
      text = v
    end
  end
  return text
end

M.tools.apply_patch = {
  tool = "apply_patch",
  args = function(input, ev)
    local text, why = patch_text(input)
    local diff
    if text then diff, why = agent.codex_patch(text, ev.cwd) end
    if not diff then return nil, "apply_patch: " .. (why or "the patch is not a string") end
    return { patch = diff }
  end,
  paths = function(input, ev)
    local text = patch_text(input) -- nil when it is none (args said why)
    if not text then return nil end
    local _, paths = agent.codex_patch(text, ev.cwd)
    return paths
  end,
}

return M
