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

-- agent.paths of a tool whose input names one file or folder in `field`.
local function path_in(field)
  return function(input, ev)
    return type(input[field]) == "string" and { rel(input[field], ev.cwd) } or nil
  end
end
local file_path = path_in("file_path")

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
  paths = path_in("path"),
}

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
-- A glob pattern that is absolute, starts at the home folder or climbs
-- with ".." reaches past `path`: it is given too, from where the search
-- starts, so that a rule sees "/home/u/.ssh/*" where the search looks.
local function search_paths(input, ev)
  local paths = path_in("path")(input, ev) or {}
  local pat = input.pattern
  if type(pat) == "string" then
    local first = pat:sub(1, 1)
    if first == "/" or first == "~" then
      paths[#paths + 1] = rel(pat, ev.cwd)
    elseif pat:find("..", 1, true) then
      local root = type(input.path) == "string" and agent.home(input.path) or ev.cwd
      paths[#paths + 1] = rel(root .. "/" .. pat, ev.cwd)
    end
  end
  return #paths > 0 and paths or nil
end
M.tools.Glob = own("glob", true)
M.tools.Glob.paths = search_paths
M.tools.Grep = own("grep", true, "path")
M.tools.NotebookRead = own("notebook_read", true, "notebook_path")
M.tools.TodoWrite = own("todo_write", true)
M.tools.WebFetch = own("web_fetch", false)
M.tools.WebSearch = own("web_search", false)
M.tools.NotebookEdit = own("notebook_edit", false, "notebook_path")
M.tools.Task = own("task", false)

return M
