-- toolgate.agents.common — the entries the agents' mapping tables share,
-- as small factories: the agents' Read/Write/Edit-like tools differ only
-- in the names of their input's keys (file_path, filePath, path...), so
-- each agent's file names its keys and this file holds the logic once.
--
-- Every factory returns a plain entry (see toolgate.agent: tool, args,
-- input, paths...), which a policy file may change or replace like any
-- other. `what` in the options is the agent's own name of the tool, for
-- the error messages ("Read has no file_path").
--
-- A path key (`path` in the options) is either one key of the input
-- ("file_path": a missing or non-string value is no path), or a list of
-- keys that name the same thing ({"file_path", "absolute_path"}: the one
-- path among them; two that differ, or one that is not a string, are an
-- error, "what: why").
local agent = require "toolgate.agent"

local M = {}
local abs, copy = agent.abs, agent.copy

-- The longest exec timeout (the exec tool's schema maximum, 24 h).
local MAX_TIMEOUT_MS = 86400000

-- A path of an agent's input as toolgate's args give it: "~/x" is the
-- home folder's x (as the agents' file tools read it), and the path is
-- where it leads (symlinks followed), relative to the cwd inside it.
function M.rel(path, cwd) return agent.where(agent.home(path), cwd) end
local rel = M.rel

-- The one path among `fields` of input -> path, the key it came from; or
-- nil, nil, why when one is not a string or two differ (which file the
-- tool opens is then not known).
function M.one_of(input, fields)
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

-- A path key (see above) as {find(input) -> path?, key?, bad?; key: the
-- key a rewrite writes when the input had none; missing(bad): the error of
-- a call that needs the path and has none}.
local function path_key(key, what)
  if type(key) == "string" then
    return {
      key = key,
      find = function(input)
        if type(input[key]) == "string" then return input[key], key end
      end,
      missing = function() return what .. " has no " .. key end,
    }
  end
  return {
    key = key[1],
    find = function(input) return M.one_of(input, key) end,
    missing = function(bad) return what .. ": " .. (bad or "no " .. key[1]) end,
  }
end

-- agent.paths of a tool whose input names one file or folder under a path
-- key: the path as the agent gave it ("~" expanded), which agent.map
-- resolves from the event's cwd as the kernel will (never cleaned as text
-- first: "lnk/../x" is not "x" when lnk is a symlink).
function M.path_in(key)
  local k = path_key(key, "")
  return function(input)
    local p = k.find(input)
    return p and { agent.home(p) } or nil
  end
end

-- args and input of a tool that names one file: `extra(input, ev, args)`
-- adds its other args, `back(args, new)` puts them in the agent's input.
local function one_file(opts, tool, extra, back)
  local k = path_key(opts.path, opts.what)
  return {
    tool = tool,
    args = function(input, ev)
      local p, _, bad = k.find(input)
      if not p then return nil, k.missing(bad) end
      local args = { path = rel(p, ev.cwd) }
      if extra then extra(input, args) end
      return args
    end,
    input = function(args, input, ev)
      local new = copy(input)
      local _, key = k.find(input)
      new[key or k.key] = abs(args.path, ev.cwd)
      if back then back(args, new) end
      return new
    end,
    paths = M.path_in(opts.path),
  }
end

-- A read of one file: {what, path, offset?, limit?} -> read_file {path,
-- offset?, limit?} (offset and limit name the agent's keys of them, when
-- it has them).
function M.read_file(opts)
  local extra, back
  if opts.offset then
    extra = function(input, args)
      args.offset = agent.int(input[opts.offset], 1, 2 ^ 53)
      args.limit = agent.int(input[opts.limit], 1, 2 ^ 53)
    end
    back = function(args, new)
      new[opts.offset], new[opts.limit] = args.offset, args.limit
    end
  end
  local t = one_file(opts, "read_file", extra, back)
  t.read_only = true
  return t
end

-- A whole file written: {what, path, content} -> write_file {path,
-- content} (content names the agent's key of it).
function M.write_file(opts)
  return one_file(opts, "write_file",
    function(input, args) args.content = input[opts.content] end,
    function(args, new) new[opts.content] = args.content end)
end

-- An edit is a patch of one file: the rules see apply_patch's shape (a
-- rewrite cannot go back). {what, path, edits?}: edits(input) -> the
-- {{old_string=, new_string=}...} of the call, or nil, why; without it
-- the input is the one edit (Claude Code's shape).
function M.edit(opts)
  local k = path_key(opts.path, opts.what)
  local edits = opts.edits or function(input) return { input } end
  return {
    tool = "apply_patch",
    args = function(input, ev)
      local p, _, bad = k.find(input)
      if not p then return nil, k.missing(bad) end
      local list, why = edits(input)
      if not list then return nil, why end
      return { patch = agent.edit_patch(rel(p, ev.cwd), list) }
    end,
    paths = M.path_in(opts.path),
  }
end

-- The edits of a tool that takes one replacement under its own keys:
-- edits_of("oldString", "newString").
function M.edits_of(old, new)
  return function(input)
    return { { old_string = input[old], new_string = input[new] } }
  end
end

-- A folder listed: {what, path} -> list_dir {path?} (the cwd without one).
function M.list_dir(opts)
  local k = path_key(opts.path, opts.what)
  return {
    tool = "list_dir",
    read_only = true,
    args = function(input, ev)
      local p, _, bad = k.find(input)
      if bad then return nil, opts.what .. ": " .. bad end
      return { path = p and rel(p, ev.cwd) or nil }
    end,
    input = function(args, input, ev)
      local new = copy(input)
      local _, key = k.find(input)
      new[key or k.key] = abs(args.path, ev.cwd)
      return new
    end,
    paths = M.path_in(opts.path),
  }
end

-- A shell tool: {command, <timeout field in ms>?} -> exec {command,
-- timeout_ms?}. opts.timeout names the agent's timeout field (nil: none).
function M.bash(opts)
  return {
    tool = "exec",
    args = function(input)
      if type(input.command) ~= "string" then return nil, "the shell call has no command" end
      return { command = input.command,
        timeout_ms = opts.timeout and agent.int(input[opts.timeout], 1, MAX_TIMEOUT_MS) or nil }
    end,
    input = function(args, input)
      local new = copy(input)
      new.command = args.command
      if opts.timeout and args.timeout_ms then new[opts.timeout] = args.timeout_ms end
      return new
    end,
  }
end

-- Codex's patch envelope in one of `fields`: the one string among them.
-- Two that differ leave open which one the agent applies: what the rules
-- judged could then be another patch than the one that runs.
local function patch_text(input, fields)
  local text
  for _, k in ipairs(fields) do
    local v = input[k]
    if type(v) == "string" then
      if text and v ~= text then
        return nil, "the patch fields (" .. table.concat(fields, ", ") .. ") disagree"
      end
      text = v
    end
  end
  return text
end

-- apply_patch carrying Codex's envelope in `fields`: read into a unified
-- diff for apply_patch's rules and the list of files it touches
-- (agent.paths); a rewrite cannot be given back (the call is then denied).
function M.codex_patch(fields)
  return {
    tool = "apply_patch",
    args = function(input, ev)
      local text, why = patch_text(input, fields)
      local diff
      if text then diff, why = agent.codex_patch(text, ev.cwd) end
      if not diff then return nil, "apply_patch: " .. (why or "the patch is not a string") end
      return { patch = diff }
    end,
    paths = function(input, ev)
      local text = patch_text(input, fields) -- nil when it is none (args said why)
      if not text then return nil end
      local _, paths = agent.codex_patch(text, ev.cwd)
      return paths
    end,
  }
end

-- A tool of the agent's own that toolgate has no executor for: judged
-- under `name` with the agent's input as its args.
function M.own(name, read_only)
  return {
    tool = name,
    read_only = read_only,
    args = function(input) return input end,
    input = function(args) return args end,
  }
end

-- Searches: where a search looks is its folder (the path key `root`, else
-- the cwd) and, for a pattern, the folder joined with the pattern
-- ("src/**/*.c"; an absolute or "~" pattern as it is), so a rule sees
-- "/home/u/.ssh/*" or "**/.env" where the search reaches.
function M.search_root(root)
  local k = path_key(root, "")
  return function(input, ev)
    local d = k.find(input)
    if d and d ~= "" then return agent.home(d) end
    return type(ev.cwd) == "string" and ev.cwd or "."
  end
end

-- A pattern below the search's folder.
function M.under(root, pat)
  local first = pat:sub(1, 1)
  if first == "/" or first == "~" then return agent.home(pat) end
  return root .. "/" .. pat
end

-- agent.paths of a search under the path key `root` with its pattern in
-- `field`; `anywhere`: a pattern without a "/" matches a file name at any
-- depth (ripgrep's --glob), and is given below "**/".
function M.search_paths(root, field, anywhere)
  local root_of = M.search_root(root)
  return function(input, ev)
    local r = root_of(input, ev)
    local out = { r }
    local g = input[field]
    if type(g) == "string" and g ~= "" then
      if anywhere and not g:find("/", 1, true) and not g:find("^~") then g = "**/" .. g end
      out[2] = M.under(r, g)
    end
    return out
  end
end

-- glob {<root>?, pattern} and grep {<root>?, <glob>?}: judged under their
-- own names, with the paths they reach.
function M.glob(root, field)
  local t = M.own("glob", true)
  t.paths = M.search_paths(root, field or "pattern", false)
  return t
end

function M.grep(root, field)
  local t = M.own("grep", true)
  t.paths = M.search_paths(root, field, true)
  return t
end

return M
