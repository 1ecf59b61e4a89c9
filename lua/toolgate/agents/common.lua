-- toolgate.agents.common — entries the agents' mapping tables share.
local agent = require "toolgate.agent"

local M = {}
local copy, rel = agent.copy, agent.rel

-- The longest exec timeout (the exec tool's schema maximum, 24 h).
local MAX_TIMEOUT_MS = 86400000

-- A shell tool: {command, <timeout field in ms>?} -> exec {command,
-- timeout_ms?}. opts.timeout names the agent's timeout field (nil: none).
function M.bash(opts)
  return {
    tool = "exec",
    args = function(input)
      if type(input.command) ~= "string" then return nil, "the shell call has no command" end
      return { command = input.command,
        timeout_ms = opts.timeout and agent.int(input[opts.timeout], 1, MAX_TIMEOUT_MS) or nil }
    end,
    input = function(args, input)
      local new = copy(input)
      new.command = args.command
      if opts.timeout and args.timeout_ms then new[opts.timeout] = args.timeout_ms end
      return new
    end,
  }
end

-- A tool of the agent's own that toolgate has no executor for: judged
-- under `name` with the agent's input as its args.
function M.own(name, read_only)
  return {
    tool = name,
    read_only = read_only,
    args = function(input) return input end,
    input = function(args) return args end,
  }
end

return M
