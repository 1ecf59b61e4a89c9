-- toolgate.agents.claude_code — Claude Code's tools as toolgate's (see
-- toolgate.agent for what an entry holds and how to add one from a
-- policy file). File paths in Claude Code's inputs are absolute; toolgate
-- sees them relative to the session's cwd when inside it.
local agent = require "toolgate.agent"
local common = require "toolgate.agents.common"

local M = agent.table("claude-code")
M.rel = common.rel
local path_in = common.path_in

M.tools.Bash = common.bash { timeout = "timeout" }
M.tools.Read = common.read_file { what = "Read", path = "file_path",
  offset = "offset", limit = "limit" }
M.tools.Write = common.write_file { what = "Write", path = "file_path",
  content = "content" }
M.tools.Edit = common.edit { what = "the edit", path = "file_path" }
M.tools.MultiEdit = common.edit { what = "the edit", path = "file_path",
  edits = function(input)
    if type(input.edits) ~= "table" then return nil, "MultiEdit has no edits" end
    return input.edits
  end }
M.tools.LS = common.list_dir { what = "LS", path = "path" }

-- Tools toolgate has no executor for keep their input under a name of
-- toolgate's style; rules name them as they name any tool. Those that
-- name a file or folder give it to agent.paths, so that a rule walking
-- the paths of every call sees a notebook edit's file and where a search
-- looks (a search without `path` looks in the cwd).
local function own(name, read_only, field)
  local t = common.own(name, read_only)
  t.paths = field and path_in(field) or nil
  return t
end
-- Where a search looks: its folder (`path`, else the cwd) and the
-- pattern below it; Grep's `glob` without a "/" matches a file name at
-- any depth (ripgrep's --glob).
M.tools.Glob = common.glob("path", "pattern")
M.tools.Grep = common.grep("path", "glob")
M.tools.NotebookRead = own("notebook_read", true, "notebook_path")
M.tools.TodoWrite = own("todo_write", true)
M.tools.WebFetch = own("web_fetch", false)
M.tools.WebSearch = own("web_search", false)
M.tools.NotebookEdit = own("notebook_edit", false, "notebook_path")
M.tools.Task = own("task", false)

return M
