-- toolgate.agents.gemini — Gemini CLI's tools as toolgate's (see
-- toolgate.agent for what an entry holds). Names and inputs as Gemini CLI
-- documents and declares them (https://geminicli.com/docs/reference/tools;
-- packages/core/src/tools/definitions/base-declarations.ts): paths are
-- relative to the project or absolute, and toolgate sees them where they
-- lead, relative to the session's cwd when inside it. Tools of MCP servers
-- arrive as mcp_<server>_<tool> and keep that name (a server or tool name
-- may hold "_": the split is not known).
local agent = require "toolgate.agent"
local common = require "toolgate.agents.common"

local M = agent.table("gemini")
local abs, copy = agent.abs, agent.copy

local function rel(path, cwd) return agent.where(agent.home(path), cwd) end
M.rel = rel

-- The one path among fields (file_path, and the older absolute_path):
-- two that differ leave open which file the tool opens.
local function one_of(input, fields)
  local found, key
  for _, k in ipairs(fields) do
    local v = input[k]
    if v ~= nil then
      if type(v) ~= "string" then return nil, nil, k .. " is not a string" end
      if found and v ~= found then
        return nil, nil, "the path fields (" .. table.concat(fields, ", ") .. ") disagree"
      end
      found, key = v, key or k
    end
  end
  return found, key
end

local FILE = { "file_path", "absolute_path" }
local DIR = { "dir_path", "path", "directory" }

local function paths_of(fields)
  return function(input)
    local p = one_of(input, fields)
    return p and { agent.home(p) } or nil
  end
end

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
  paths = paths_of(DIR),
  result = function(resp)
    if type(resp) == "table" and type(resp.llmContent) == "string" then
      return { stdout = resp.llmContent }
    end
    return resp
  end,
}

M.tools.read_file = {
  tool = "read_file",
  read_only = true,
  args = function(input, ev)
    local p, _, bad = one_of(input, FILE)
    if not p then return nil, "read_file: " .. (bad or "no file_path") end
    return { path = rel(p, ev.cwd) }
  end,
  input = function(args, input, ev)
    local new = copy(input)
    local _, key = one_of(input, FILE)
    new[key or "file_path"] = abs(args.path, ev.cwd)
    return new
  end,
  paths = paths_of(FILE),
}

M.tools.write_file = {
  tool = "write_file",
  args = function(input, ev)
    local p, _, bad = one_of(input, FILE)
    if not p then return nil, "write_file: " .. (bad or "no file_path") end
    return { path = rel(p, ev.cwd), content = input.content }
  end,
  input = function(args, input, ev)
    local new = copy(input)
    local _, key = one_of(input, FILE)
    new[key or "file_path"] = abs(args.path, ev.cwd)
    new.content = args.content
    return new
  end,
  paths = paths_of(FILE),
}

-- replace {file_path, old_string, new_string, allow_multiple?}: a patch of
-- one file, as apply_patch's rules read it (a rewrite cannot go back).
M.tools.replace = {
  tool = "apply_patch",
  args = function(input, ev)
    local p, _, bad = one_of(input, FILE)
    if not p then return nil, "replace: " .. (bad or "no file_path") end
    return { patch = agent.edit_patch(rel(p, ev.cwd), { input }) }
  end,
  paths = paths_of(FILE),
}

M.tools.list_directory = {
  tool = "list_dir",
  read_only = true,
  args = function(input, ev)
    local p, _, bad = one_of(input, DIR)
    if bad then return nil, "list_directory: " .. bad end
    return { path = p and rel(p, ev.cwd) or nil }
  end,
  input = function(args, input, ev)
    local new = copy(input)
    local _, key = one_of(input, DIR)
    new[key or "dir_path"] = abs(args.path, ev.cwd)
    return new
  end,
  paths = paths_of(DIR),
}

-- Where a search looks: its folder (dir_path, else the cwd) and the
-- folder joined with its pattern, so a rule sees "**/.env" where the
-- search reaches (as Claude Code's Glob and Grep).
local function root_of(input, ev)
  local d = one_of(input, DIR)
  if d and d ~= "" then return agent.home(d) end
  return type(ev.cwd) == "string" and ev.cwd or "."
end

local function under(root, pat)
  local first = pat:sub(1, 1)
  if first == "/" or first == "~" then return agent.home(pat) end
  return root .. "/" .. pat
end

local function search_paths(field, anywhere)
  return function(input, ev)
    local root = root_of(input, ev)
    local out = { root }
    local g = input[field]
    if type(g) == "string" and g ~= "" then
      if anywhere and not g:find("/", 1, true) and not g:find("^~") then g = "**/" .. g end
      out[2] = under(root, g)
    end
    return out
  end
end

M.tools.glob = common.own("glob", true)
M.tools.glob.paths = search_paths("pattern", false)

-- grep_search (search_file_content before): its include pattern matches a
-- file name at any depth
local grep = common.own("grep", true)
grep.paths = function(input, ev)
  local g = input.include_pattern ~= nil and "include_pattern" or "include"
  return search_paths(g, true)(input, ev)
end
grep.names = { "grep_search", "search_file_content" }
M.tools.grep_search = grep
M.tools.search_file_content = grep

-- read_many_files {include: [paths or globs], exclude?}: every file it may
-- read, as written from the cwd
M.tools.read_many_files = common.own("read_many_files", true)
M.tools.read_many_files.paths = function(input, ev)
  local out = {}
  local inc = input.include or input.paths
  for _, p in ipairs(type(inc) == "table" and inc or {}) do
    if type(p) == "string" then out[#out + 1] = under(root_of(input, ev), p) end
  end
  return out
end

M.tools.web_fetch = common.own("web_fetch", false)
M.tools.google_web_search = common.own("web_search", false)
M.tools.save_memory = common.own("save_memory", false)
M.tools.write_todos = common.own("todo_write", true)

return M
