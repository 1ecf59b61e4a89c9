-- toolgate.agents.cursor — Cursor's tools as toolgate's (see toolgate.agent
-- for what an entry holds). Cursor's preToolUse names its tools Shell,
-- Read, Write, Grep, Task and MCP:<tool> (https://cursor.com/docs/hooks,
-- "preToolUse" and its matchers); their file paths are absolute, and
-- toolgate sees them relative to the session's cwd when inside it.
local agent = require "toolgate.agent"
local common = require "toolgate.agents.common"

local M = agent.table("cursor")
local abs, copy = agent.abs, agent.copy

local function rel(path, cwd) return agent.where(agent.home(path), cwd) end
M.rel = rel

local function path_in(field)
  return function(input)
    return type(input[field]) == "string" and { agent.home(input[field]) } or nil
  end
end
local file_path = path_in("file_path")

-- Shell {command, cwd, timeout (ms)}: exec, in the shell's own cwd when it
-- names one. Its output arrives as {output, exitCode}: post-hooks read it
-- as exec's {stdout, exit_code}.
M.tools.Shell = common.bash { timeout = "timeout" }
do
  local args = M.tools.Shell.args
  M.tools.Shell.args = function(input, ev)
    local a, why = args(input, ev)
    if a and type(input.cwd) == "string" and input.cwd ~= "" then a.cwd = input.cwd end
    return a, why
  end
  M.tools.Shell.result = function(response)
    if type(response) ~= "table" then return response end
    return { stdout = response.output, exit_code = response.exitCode }
  end
end

M.tools.Read = {
  tool = "read_file",
  read_only = true,
  args = function(input, ev)
    if type(input.file_path) ~= "string" then return nil, "Read has no file_path" end
    return { path = rel(input.file_path, ev.cwd) }
  end,
  input = function(args, input, ev)
    local new = copy(input)
    new.file_path = abs(args.path, ev.cwd)
    return new
  end,
  paths = file_path,
}

-- Write: a whole file when it carries its content; without one it is
-- judged under its own name (its paths still known to the rules).
M.tools.Write = {
  tool = function(input) return type(input.content) == "string" and "write_file" or "cursor_write" end,
  args = function(input, ev)
    if type(input.file_path) ~= "string" then return nil, "Write has no file_path" end
    if type(input.content) ~= "string" then return input end
    return { path = rel(input.file_path, ev.cwd), content = input.content }
  end,
  input = function(args, input, ev)
    if args.path == nil then return args end -- judged under its own name
    local new = copy(input)
    new.file_path = abs(args.path, ev.cwd)
    new.content = args.content
    return new
  end,
  paths = file_path,
}

-- Grep {pattern, file_path}: file_path is where it searches (a file or a
-- folder), the cwd without one.
M.tools.Grep = common.own("grep", true)
M.tools.Grep.paths = function(input, ev)
  if type(input.file_path) == "string" and input.file_path ~= "" then
    return { agent.home(input.file_path) }
  end
  return { type(ev.cwd) == "string" and ev.cwd or "." }
end

M.tools.Task = common.own("task", false)

return M
