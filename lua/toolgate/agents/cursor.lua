-- toolgate.agents.cursor — Cursor's tools as toolgate's (see toolgate.agent
-- for what an entry holds). Cursor's preToolUse names its tools Shell,
-- Read, Write, Grep, Task and MCP:<tool> (https://cursor.com/docs/hooks,
-- "preToolUse" and its matchers); their file paths are absolute, and
-- toolgate sees them relative to the session's cwd when inside it.
local agent = require "toolgate.agent"
local common = require "toolgate.agents.common"

local M = agent.table("cursor")
M.rel = common.rel
-- Its MCP tools come as MCP:<tool>, without the server (mcp__<tool> to
-- toolgate): call.server stays unset, whatever the tool's name holds.
M.mcp_unnamed = true

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

M.tools.Read = common.read_file { what = "Read", path = "file_path" }

-- Write: a whole file when it carries its content; without one it is
-- judged under its own name (its paths still known to the rules).
do
  local write = common.write_file { what = "Write", path = "file_path",
    content = "content" }
  M.tools.Write = {
    tool = function(input) return type(input.content) == "string" and "write_file" or "cursor_write" end,
    args = function(input, ev)
      if type(input.file_path) == "string" and type(input.content) ~= "string" then
        return input
      end
      return write.args(input, ev)
    end,
    input = function(args, input, ev)
      if args.path == nil then return args end -- judged under its own name
      return write.input(args, input, ev)
    end,
    paths = write.paths,
  }
end

-- Grep {pattern, file_path}: file_path is where it searches (a file or a
-- folder), the cwd without one.
M.tools.Grep = common.own("grep", true)
do
  local root = common.search_root("file_path")
  M.tools.Grep.paths = function(input, ev) return { root(input, ev) } end
end

M.tools.Task = common.own("task", false)

return M
