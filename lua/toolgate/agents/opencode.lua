-- toolgate.agents.opencode — OpenCode's tools as toolgate's (see
-- toolgate.agent for what an entry holds). The names and arguments are
-- OpenCode's own (its plugin's tool.execute.before sees them:
-- https://opencode.ai/docs/plugins/): bash {command, timeout (ms),
-- workdir}, read {filePath, offset, limit}, write {filePath, content},
-- edit {filePath, oldString, newString, replaceAll}, apply_patch
-- {patchText} (Codex's patch envelope), glob, grep, list, webfetch, ...
-- File paths are absolute; toolgate sees them relative to the session's
-- cwd when inside it.
local agent = require "toolgate.agent"
local common = require "toolgate.agents.common"

local M = agent.table("opencode")
local abs, copy = agent.abs, agent.copy

local function rel(path, cwd) return agent.where(agent.home(path), cwd) end
M.rel = rel

local function path_in(field)
  return function(input)
    return type(input[field]) == "string" and { agent.home(input[field]) } or nil
  end
end
local file_path = path_in("filePath")

-- bash: exec, in its workdir when it names one. Its result arrives as
-- {title, output, metadata = {output, exit}}: post-hooks read exec's
-- {stdout, exit_code}.
M.tools.bash = common.bash { timeout = "timeout" }
do
  local args, input = M.tools.bash.args, M.tools.bash.input
  M.tools.bash.args = function(i, ev)
    local a, why = args(i, ev)
    if a and type(i.workdir) == "string" and i.workdir ~= "" then a.cwd = i.workdir end
    return a, why
  end
  M.tools.bash.input = function(a, i, ev)
    local new = input(a, i, ev)
    if a.cwd ~= nil then new.workdir = a.cwd end
    return new
  end
  M.tools.bash.result = function(response)
    if type(response) ~= "table" then return response end
    local meta = type(response.metadata) == "table" and response.metadata or {}
    return { stdout = response.output, exit_code = meta.exit }
  end
end

M.tools.read = {
  tool = "read_file",
  read_only = true,
  args = function(input, ev)
    if type(input.filePath) ~= "string" then return nil, "read has no filePath" end
    return { path = rel(input.filePath, ev.cwd),
      offset = agent.int(input.offset, 1, 2 ^ 53),
      limit = agent.int(input.limit, 1, 2 ^ 53) }
  end,
  input = function(args, input, ev)
    local new = copy(input)
    new.filePath = abs(args.path, ev.cwd)
    new.offset, new.limit = args.offset, args.limit
    return new
  end,
  paths = file_path,
}

M.tools.write = {
  tool = "write_file",
  args = function(input, ev)
    if type(input.filePath) ~= "string" then return nil, "write has no filePath" end
    return { path = rel(input.filePath, ev.cwd), content = input.content }
  end,
  input = function(args, input, ev)
    local new = copy(input)
    new.filePath = abs(args.path, ev.cwd)
    new.content = args.content
    return new
  end,
  paths = file_path,
}

-- edit: a patch of one file, as Claude Code's Edit.
M.tools.edit = {
  tool = "apply_patch",
  args = function(input, ev)
    if type(input.filePath) ~= "string" then return nil, "edit has no filePath" end
    return { patch = agent.edit_patch(rel(input.filePath, ev.cwd),
      { { old_string = input.oldString, new_string = input.newString } }) }
  end,
  paths = file_path,
}

-- apply_patch: Codex's envelope, in patchText.
M.tools.apply_patch = {
  tool = "apply_patch",
  args = function(input, ev)
    local diff, why = agent.codex_patch(input.patchText, ev.cwd)
    if not diff then return nil, "apply_patch: " .. (why or "no patchText") end
    return { patch = diff }
  end,
  paths = function(input, ev)
    local _, paths = agent.codex_patch(input.patchText, ev.cwd)
    return paths
  end,
}

M.tools.list = {
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

-- Where a search looks: its folder (path, else the cwd) and the pattern
-- under it; grep's include without a "/" matches a file name at any depth.
local function search_root(input, ev)
  if type(input.path) == "string" and input.path ~= "" then return agent.home(input.path) end
  return type(ev.cwd) == "string" and ev.cwd or "."
end
local function under(root, pat)
  local first = pat:sub(1, 1)
  if first == "/" or first == "~" then return agent.home(pat) end
  return root .. "/" .. pat
end

M.tools.glob = common.own("glob", true)
M.tools.glob.paths = function(input, ev)
  local root = search_root(input, ev)
  local paths = { root }
  if type(input.pattern) == "string" and input.pattern ~= "" then
    paths[2] = under(root, input.pattern)
  end
  return paths
end

M.tools.grep = common.own("grep", true)
M.tools.grep.paths = function(input, ev)
  local root = search_root(input, ev)
  local paths = { root }
  local g = input.include
  if type(g) == "string" and g ~= "" then
    paths[2] = under(root, (g:find("/", 1, true) or g:find("^~")) and g or "**/" .. g)
  end
  return paths
end

M.tools.webfetch = common.own("web_fetch", false)
M.tools.websearch = common.own("web_search", false)
M.tools.task = common.own("task", false)
M.tools.todowrite = common.own("todo_write", true)
M.tools.skill = common.own("skill", true)

return M
