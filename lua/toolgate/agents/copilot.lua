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
M.rel = common.rel
local path_of = common.path_in("path")

local function output(resp)
  if type(resp) == "table" then
    local t = resp.textResultForLlm or resp.text_result_for_llm
    if type(t) == "string" then return { stdout = t } end
  end
  return resp
end

M.tools.bash = common.bash {}
M.tools.bash.result = output

M.tools.view = common.read_file { what = "view", path = "path" }
M.tools.create = common.write_file { what = "create", path = "path",
  content = "file_text" }

-- edit {path, old_str, new_str} (an insert has no old text)
local edit = common.edit { what = "the edit", path = "path",
  edits = function(input)
    local old = input.command == "insert" and "" or input.old_str
    return { { old_string = old, new_string = input.new_str } }
  end }
M.tools.edit = edit

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
    if t == "apply_patch" then return edit.args(input, ev) end
    return input
  end,
  paths = path_of,
}

-- apply_patch carries Codex's patch envelope (input, or patch)
M.tools.apply_patch = common.codex_patch { "input", "patch" }

M.tools.glob = common.glob("path", "pattern")

-- grep and rg take ripgrep's flags; a glob without "/" matches a file
-- name at any depth
local grep = common.grep("path", "glob")
grep.names = { "grep", "rg" }
M.tools.grep = grep
M.tools.rg = grep

M.tools.web_fetch = common.own("web_fetch", false)
M.tools.web_search = common.own("web_search", false)
M.tools.task = common.own("task", false)
M.tools.ask_user = common.own("ask_user", true)
M.tools.update_todo = common.own("todo_write", true)

return M
