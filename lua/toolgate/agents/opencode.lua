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
M.rel = common.rel

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

M.tools.read = common.read_file { what = "read", path = "filePath",
  offset = "offset", limit = "limit" }
M.tools.write = common.write_file { what = "write", path = "filePath",
  content = "content" }
-- edit: a patch of one file, as Claude Code's Edit.
M.tools.edit = common.edit { what = "edit", path = "filePath",
  edits = common.edits_of("oldString", "newString") }
-- apply_patch: Codex's envelope, in patchText.
M.tools.apply_patch = common.codex_patch { "patchText" }
M.tools.list = common.list_dir { what = "list", path = "path" }

-- Where a search looks: its folder (path, else the cwd) and the pattern
-- under it; grep's include without a "/" matches a file name at any depth.
M.tools.glob = common.glob("path", "pattern")
M.tools.grep = common.grep("path", "include")

M.tools.webfetch = common.own("web_fetch", false)
M.tools.websearch = common.own("web_search", false)
M.tools.task = common.own("task", false)
M.tools.todowrite = common.own("todo_write", true)
M.tools.skill = common.own("skill", true)

return M
