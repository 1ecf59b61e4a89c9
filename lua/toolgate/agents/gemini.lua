-- toolgate.agents.gemini — Gemini CLI's tools as toolgate's (see
-- toolgate.agent for what an entry holds). Names and inputs as Gemini CLI
-- documents and declares them (https://geminicli.com/docs/reference/tools;
-- packages/core/src/tools/definitions/base-declarations.ts): paths are
-- relative to the project or absolute, and toolgate sees them where they
-- lead, relative to the session's cwd when inside it. Tools of MCP servers
-- arrive as mcp_<server>_<tool> and are toolgate's <server>__<tool> when
-- the event's mcp_context names them (see MCP tools below).
local agent = require "toolgate.agent"
local common = require "toolgate.agents.common"

local M = agent.table("gemini")
local abs, rel, one_of = agent.abs, common.rel, common.one_of
M.rel = rel

-- Path keys that name one thing (file_path, and the older absolute_path):
-- the one path among them; two that differ leave open which file the tool
-- opens (common.one_of).
local FILE = { "file_path", "absolute_path" }
local DIR = { "dir_path", "path", "directory" }

-- run_shell_command {command, description?, dir_path?, is_background?}:
-- exec, in dir_path when given. Its result's llmContent is what the model
-- reads: the post-hooks see it as the output.
local bash = common.bash {}
M.tools.run_shell_command = {
  tool = "exec",
  args = function(input, ev)
    local args, why = bash.args(input, ev)
    if not args then return nil, why end
    local dir, _, bad = one_of(input, DIR)
    if bad then return nil, "run_shell_command: " .. bad end
    if dir then args.cwd = rel(dir, ev.cwd) end
    return args
  end,
  input = function(args, input, ev)
    local new = bash.input(args, input, ev)
    local dir, key = one_of(input, DIR)
    -- the folder as the agent wrote it, unless a pre-hook moved it
    if args.cwd and not (dir and rel(dir, ev.cwd) == args.cwd) then
      new[key or "dir_path"] = abs(args.cwd, ev.cwd)
    end
    return new
  end,
  paths = common.path_in(DIR),
  result = function(resp)
    if type(resp) == "table" and type(resp.llmContent) == "string" then
      return { stdout = resp.llmContent }
    end
    return resp
  end,
}

M.tools.read_file = common.read_file { what = "read_file", path = FILE }
M.tools.write_file = common.write_file { what = "write_file", path = FILE,
  content = "content" }
-- replace {file_path, old_string, new_string, allow_multiple?}: a patch of
-- one file, as apply_patch's rules read it (a rewrite cannot go back).
M.tools.replace = common.edit { what = "replace", path = FILE }
M.tools.list_directory = common.list_dir { what = "list_directory", path = DIR }

-- Where a search looks: its folder (dir_path, else the cwd) and the
-- folder joined with its pattern, so a rule sees "**/.env" where the
-- search reaches (as Claude Code's Glob and Grep).
M.tools.glob = common.glob(DIR, "pattern")

-- grep_search (search_file_content before): its include pattern matches a
-- file name at any depth
local grep = common.own("grep", true)
do
  local by_pattern = common.search_paths(DIR, "include_pattern", true)
  local by_include = common.search_paths(DIR, "include", true)
  grep.paths = function(input, ev)
    if input.include_pattern ~= nil then return by_pattern(input, ev) end
    return by_include(input, ev)
  end
end
grep.names = { "grep_search", "search_file_content" }
M.tools.grep_search = grep
M.tools.search_file_content = grep

-- read_many_files {include: [paths or globs], exclude?}: every file it may
-- read, as written from the cwd
M.tools.read_many_files = common.own("read_many_files", true)
do
  local root_of = common.search_root(DIR)
  M.tools.read_many_files.paths = function(input, ev)
    local out = {}
    local inc = input.include or input.paths
    for _, p in ipairs(type(inc) == "table" and inc or {}) do
      if type(p) == "string" then out[#out + 1] = common.under(root_of(input, ev), p) end
    end
    return out
  end
end

M.tools.web_fetch = common.own("web_fetch", false)
M.tools.google_web_search = common.own("web_search", false)
M.tools.save_memory = common.own("save_memory", false)
M.tools.write_todos = common.own("todo_write", true)

-- MCP tools. Gemini CLI names one mcp_<server>_<tool>
-- (https://geminicli.com/docs/tools/mcp-server, "Tool naming and
-- namespaces"; packages/core/src/tools/mcp-tool.ts generateValidName) and
-- its hooks get that name as tool_name, with mcp_context {server_name,
-- tool_name} from its registry (https://geminicli.com/docs/hooks/reference,
-- BeforeTool; packages/core/src/core/coreToolHookTriggers.ts). The name
-- alone cannot be split: "_" is the separator and may be in the server's
-- or the tool's name ("mcp_a_b_c"), a server called "mcp_a" gets no second
-- prefix, and characters outside [A-Za-z0-9_.:-] become "_". So the call
-- is toolgate's <server>__<tool> (as Claude Code's mcp__<server>__<tool>:
-- one rule on github__create_issue covers both and the MCP gateway) only
-- when mcp_context names a server and tool whose name, made as Gemini
-- makes it, is the event's tool_name, and the server's name is one
-- toolgate's own servers could have with "__" read as the first
-- separator. Otherwise it fails closed: the call stays under its raw name
-- (mcp_a_b_c), which only a rule naming that covers, and the default asks
-- about.

-- Gemini CLI's qualified name of a server's tool (generateValidName): the
-- "mcp_" prefix unless the joined name has it, every other character
-- outside [A-Za-z0-9_.:-] as "_" — per UTF-16 unit, as JavaScript strings
-- count: a character past U+FFFF (four bytes of UTF-8) is two, any other
-- one, and so is a byte that is not UTF-8 (Gemini's text would hold a
-- U+FFFD there) — past 63 its middle as "...".
local function gemini_name(server, tool)
  local n = server .. "_" .. tool
  if n:sub(1, 4) ~= "mcp_" then n = "mcp_" .. n end
  n = n:gsub("[\240-\244][\128-\191][\128-\191][\128-\191]", "__")
  n = n:gsub("[\194-\223][\128-\191]", "_")
  n = n:gsub("[\224-\239][\128-\191][\128-\191]", "_")
  n = n:gsub("[^A-Za-z0-9_.:%-]", "_")
  if n:find("^[^A-Za-z_]") then n = "_" .. n end
  if #n > 63 then n = n:sub(1, 30) .. "..." .. n:sub(-30) end
  return n
end

-- toolgate's name of the event's MCP tool, or nil when it cannot be told.
local function mcp_name(ev)
  local c = type(ev) == "table" and ev.mcp_context
  if type(c) ~= "table" then return nil end
  local s, t = c.server_name, c.tool_name
  if type(s) ~= "string" or type(t) ~= "string" or t == "" or #t > 128 then return nil end
  -- a server name of toolgate's (letters, digits, '-', '_'; at most 64)
  -- without "__" or a last "_": the first "__" of s__t is the separator
  if #s > 64 or not s:find("^[A-Za-z0-9_-]+$") or s:find("__", 1, true)
      or s:sub(-1) == "_" then
    return nil
  end
  if gemini_name(s, t) ~= ev.tool_name then return nil end
  return s .. "__" .. t
end
M.mcp_name = mcp_name

-- The entry of an mcp_... tool without one of its own: judged under
-- toolgate's name when known, else its own; the input as args, and back.
local mcp_entry = {
  tool = function(_, ev) return mcp_name(ev) or ev.tool_name end,
  server = function(_, ev) return mcp_name(ev) and ev.mcp_context.server_name end,
  mcp = true,
  args = function(input) return input end,
  input = function(args) return args end,
}
setmetatable(M.tools, { __index = function(_, name)
  if type(name) == "string" and name:sub(1, 4) == "mcp_" and #name > 4 then
    return mcp_entry
  end
end })

return M
