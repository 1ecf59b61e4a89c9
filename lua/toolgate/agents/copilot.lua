-- toolgate.agents.copilot — GitHub Copilot CLI's tools as toolgate's (see
-- toolgate.agent for what an entry holds). Names from the hooks reference
-- (https://docs.github.com/en/copilot/reference/hooks-reference, "Tool
-- names for hook matching": bash, powershell, view, create, edit, glob,
-- grep, web_fetch, task, ask_user); inputs as the CLI's tools take them
-- ({command} for bash, {path, view_range?} for view, {path, file_text} for
-- create, {path, old_str, new_str} for edit, {pattern, path?, glob?} for
-- grep and glob, {url} for web_fetch, {input | patch} in Codex's patch
-- envelope for apply_patch). powershell keeps its own name: its commands
-- are not sh, and toolgate's shell rules read sh.
local agent = require "toolgate.agent"
local common = require "toolgate.agents.common"

local M = agent.table("copilot")
local abs, copy = agent.abs, agent.copy

local function rel(path, cwd) return agent.where(agent.home(path), cwd) end
M.rel = rel

local function path_of(input)
  return type(input.path) == "string" and { agent.home(input.path) } or nil
end

local function output(resp)
  if type(resp) == "table" then
    local t = resp.textResultForLlm or resp.text_result_for_llm
    if type(t) == "string" then return { stdout = t } end
  end
  return resp
end

M.tools.bash = common.bash {}
M.tools.bash.result = output

M.tools.view = {
  tool = "read_file",
  read_only = true,
  args = function(input, ev)
    if type(input.path) ~= "string" then return nil, "view has no path" end
    return { path = rel(input.path, ev.cwd) }
  end,
  input = function(args, input, ev)
    local new = copy(input)
    new.path = abs(args.path, ev.cwd)
    return new
  end,
  paths = path_of,
}

M.tools.create = {
  tool = "write_file",
  args = function(input, ev)
    if type(input.path) ~= "string" then return nil, "create has no path" end
    return { path = rel(input.path, ev.cwd), content = input.file_text }
  end,
  input = function(args, input, ev)
    local new = copy(input)
    new.path = abs(args.path, ev.cwd)
    new.file_text = args.content
    return new
  end,
  paths = path_of,
}

local function edit_args(input, ev)
  if type(input.path) ~= "string" then return nil, "the edit has no path" end
  local old = input.command == "insert" and "" or input.old_str
  return { patch = agent.edit_patch(rel(input.path, ev.cwd),
    { { old_string = old, new_string = input.new_str } }) }
end

M.tools.edit = { tool = "apply_patch", args = edit_args, paths = path_of }

-- str_replace_editor {command: view | create | str_replace | insert |
-- undo_edit, path, ...}: the tool its command is
local editor_tool = { view = "read_file", create = "write_file",
  str_replace = "apply_patch", insert = "apply_patch" }
M.tools.str_replace_editor = {
  tool = function(input)
    return editor_tool[input.command] or "str_replace_editor"
  end,
  args = function(input, ev)
    local t = editor_tool[input.command]
    if t == "read_file" then return M.tools.view.args(input, ev) end
    if t == "write_file" then return M.tools.create.args(input, ev) end
    if t == "apply_patch" then return edit_args(input, ev) end
    return input
  end,
  paths = path_of,
}

-- apply_patch carries Codex's patch envelope (input, or patch)
local function patch_text(input)
  local text
  for _, k in ipairs({ "input", "patch" }) do
    local v = input[k]
    if type(v) == "string" then
      if text and v ~= text then return nil, "the patch fields (input, patch) disagree" end
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
    local text = patch_text(input)
    if not text then return nil end
    local _, paths = agent.codex_patch(text, ev.cwd)
    return paths
  end,
}

local function root_of(input, ev)
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
  local root = root_of(input, ev)
  local out = { root }
  if type(input.pattern) == "string" and input.pattern ~= "" then
    out[2] = under(root, input.pattern)
  end
  return out
end

-- grep and rg take ripgrep's flags; a glob without "/" matches a file
-- name at any depth
local grep = common.own("grep", true)
grep.paths = function(input, ev)
  local root = root_of(input, ev)
  local out = { root }
  local g = input.glob
  if type(g) == "string" and g ~= "" then
    out[2] = under(root, (g:find("/", 1, true) or g:find("^~")) and g or "**/" .. g)
  end
  return out
end
grep.names = { "grep", "rg" }
M.tools.grep = grep
M.tools.rg = grep

M.tools.web_fetch = common.own("web_fetch", false)
M.tools.web_search = common.own("web_search", false)
M.tools.task = common.own("task", false)
M.tools.ask_user = common.own("ask_user", true)
M.tools.update_todo = common.own("todo_write", true)

return M
