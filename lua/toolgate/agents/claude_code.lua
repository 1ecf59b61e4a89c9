-- toolgate.agents.claude_code — Claude Code's tools as toolgate's (see
-- toolgate.agent for what an entry holds and how to add one from a
-- policy file). File paths in Claude Code's inputs are absolute; toolgate
-- sees them relative to the session's cwd when inside it.
local agent = require "toolgate.agent"
local common = require "toolgate.agents.common"

local M = agent.table("claude-code")
local abs, copy = agent.abs, agent.copy

-- Claude Code's file tools read "~/x" as the home folder's x.
local function rel(path, cwd) return agent.rel(agent.home(path), cwd) end
M.rel = rel

local function file_path(input, ev)
  return type(input.file_path) == "string" and { rel(input.file_path, ev.cwd) } or nil
end

M.tools.Bash = common.bash { timeout = "timeout" }

M.tools.Read = {
  tool = "read_file",
  read_only = true,
  args = function(input, ev)
    if type(input.file_path) ~= "string" then return nil, "Read has no file_path" end
    return { path = rel(input.file_path, ev.cwd),
      offset = agent.int(input.offset, 1, 2 ^ 53),
      limit = agent.int(input.limit, 1, 2 ^ 53) }
  end,
  input = function(args, input, ev)
    local new = copy(input)
    new.file_path = abs(args.path, ev.cwd)
    new.offset, new.limit = args.offset, args.limit
    return new
  end,
  paths = file_path,
}

M.tools.Write = {
  tool = "write_file",
  args = function(input, ev)
    if type(input.file_path) ~= "string" then return nil, "Write has no file_path" end
    return { path = rel(input.file_path, ev.cwd), content = input.content }
  end,
  input = function(args, input, ev)
    local new = copy(input)
    new.file_path = abs(args.path, ev.cwd)
    new.content = args.content
    return new
  end,
  paths = file_path,
}

-- An edit is a patch of one file: the rules see apply_patch's shape.
local function edit(one)
  return {
    tool = "apply_patch",
    args = function(input, ev)
      if type(input.file_path) ~= "string" then return nil, "the edit has no file_path" end
      local edits = one and { input } or input.edits
      if type(edits) ~= "table" then return nil, "MultiEdit has no edits" end
      return { patch = agent.edit_patch(rel(input.file_path, ev.cwd), edits) }
    end,
    paths = file_path,
  }
end
M.tools.Edit = edit(true)
M.tools.MultiEdit = edit(false)

M.tools.LS = {
  tool = "list_dir",
  read_only = true,
  args = function(input, ev)
    return { path = type(input.path) == "string" and rel(input.path, ev.cwd) or nil }
  end,
  input = function(args, input, ev)
    local new = copy(input)
    new.path = abs(args.path, ev.cwd)
    return new
  end,
  paths = function(input, ev)
    return type(input.path) == "string" and { rel(input.path, ev.cwd) } or nil
  end,
}

-- Tools toolgate has no executor for keep their input under a name of
-- toolgate's style; rules name them as they name any tool.
M.tools.Glob = common.own("glob", true)
M.tools.Grep = common.own("grep", true)
M.tools.NotebookRead = common.own("notebook_read", true)
M.tools.TodoWrite = common.own("todo_write", true)
M.tools.WebFetch = common.own("web_fetch", false)
M.tools.WebSearch = common.own("web_search", false)
M.tools.NotebookEdit = common.own("notebook_edit", false)
M.tools.Task = common.own("task", false)

return M
