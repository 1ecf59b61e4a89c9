-- toolgate.agents.claude_code — Claude Code's tools as toolgate's (see
-- toolgate.agent for what an entry holds and how to add one from a
-- policy file). File paths in Claude Code's inputs are absolute; toolgate
-- sees them relative to the session's cwd when inside it.
local agent = require "toolgate.agent"
local common = require "toolgate.agents.common"

local M = agent.table("claude-code")
local abs, copy = agent.abs, agent.copy

-- A path of Claude Code's input as toolgate's args give it: "~/x" is the
-- home folder's x (as its file tools read it), and the path is where it
-- leads (symlinks followed), relative to the cwd inside it.
local function rel(path, cwd) return agent.where(agent.home(path), cwd) end
M.rel = rel

-- agent.paths of a tool whose input names one file or folder in `field`:
-- the path as the agent gave it ("~" expanded), which agent.map resolves
-- from the event's cwd as the kernel will (never cleaned as text first:
-- "lnk/../x" is not "x" when lnk is a symlink).
local function path_in(field)
  return function(input)
    return type(input[field]) == "string" and { agent.home(input[field]) } or nil
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
-- Where a search looks: its folder (`path`, else the cwd) and, for a
-- pattern, the folder joined with the pattern ("src/**/*.c"; an absolute
-- or "~" pattern as it is), so a rule sees "/home/u/.ssh/*" or "**/.env"
-- where the search reaches. Grep's `glob` without a "/" matches a file
-- name at any depth (ripgrep's --glob): it is given below "**/".
local function search_root(input, ev)
  if type(input.path) == "string" and input.path ~= "" then return agent.home(input.path) end
  return type(ev.cwd) == "string" and ev.cwd or "."
end

local function under(root, pat)
  local first = pat:sub(1, 1)
  if first == "/" or first == "~" then return agent.home(pat) end
  return root .. "/" .. pat
end

local function glob_paths(input, ev)
  local root = search_root(input, ev)
  local paths = { root }
  if type(input.pattern) == "string" and input.pattern ~= "" then
    paths[2] = under(root, input.pattern)
  end
  return paths
end

local function grep_paths(input, ev)
  local root = search_root(input, ev)
  local paths = { root }
  local g = input.glob
  if type(g) == "string" and g ~= "" then
    paths[2] = under(root, (g:find("/", 1, true) or g:find("^~")) and g or "**/" .. g)
  end
  return paths
end
M.tools.Glob = own("glob", true)
M.tools.Glob.paths = glob_paths
M.tools.Grep = own("grep", true)
M.tools.Grep.paths = grep_paths
M.tools.NotebookRead = own("notebook_read", true, "notebook_path")
M.tools.TodoWrite = own("todo_write", true)
M.tools.WebFetch = own("web_fetch", false)
M.tools.WebSearch = own("web_search", false)
M.tools.NotebookEdit = own("notebook_edit", false, "notebook_path")
M.tools.Task = own("task", false)

return M
