-- toolgate.agent — coding agents' own tools (Claude Code's Bash, Edit,
-- Read..., Codex's shell and apply_patch, Gemini CLI's run_shell_command,
-- Copilot CLI's bash, view, edit...) seen as toolgate's, so that
-- `toolgate hook` judges them with the same rules as every other call
-- (docs/agent-hooks.md).
--
-- Two sides:
--   * for policies: agent.of(call), agent.paths(call), agent.context(call,
--     text), agent.context_from(call, tool, args) — what an agent's call
--     was, the files it touches, and text (or a tool's output) for the
--     model;
--   * for the runtime (src/runtime/agent_map.c calls these in the policies'
--     own generation): agent.map(name, event) turns a hook event's tool
--     call into {tool, args, ...}; agent.unmap(name, event, tool, args)
--     turns a call a pre-hook rewrote back into the agent's tool input.
--
-- The mapping tables are toolgate.agents.<agent> (claude_code, codex,
-- gemini, copilot, cursor, opencode: see M.modules), most of their entries
-- made by toolgate.agents.common's factories (common.read_file{what=,
-- path=...}, common.write_file, common.edit, common.bash...). An entry is
-- a plain table: a policy file adds or replaces one without C:
--
--   local cc = require "toolgate.agents.claude_code"
--   cc.tools.NotebookEdit = { tool = "write_file",
--     args = function(input, ev) return { path = cc.rel(input.notebook_path, ev.cwd),
--                                         content = input.new_source } end }
--
-- An entry: tool (toolgate's name), args(input, ev) -> args, and
-- optionally read_only, input(args, input, ev) -> the agent's input again
-- (rewrites by pre-hooks; without it a rewrite cannot be given back and
-- the call is denied), paths(input, ev) -> the files it touches,
-- result(response, ev) -> what post-hooks see as the result, names = the
-- agent's other names of the tool (a rule naming one covers it). A tool that
-- has no entry keeps its own name (mcp__server__tool becomes
-- server__tool) and input.
--
-- Pure Lua, no I/O; runs in the policies' sandbox under its limits.

local M = {}

local sub, find, match, gsub = string.sub, string.find, string.match, string.gsub
local concat, insert = table.concat, table.insert

M.MAX_CONTEXT = 65536 -- bytes of one agent.context text

-- The agents `toolgate hook` speaks for, and their tables' modules.
M.modules = {
  ["claude-code"] = "toolgate.agents.claude_code",
  codex = "toolgate.agents.codex",
  gemini = "toolgate.agents.gemini",
  copilot = "toolgate.agents.copilot",
  cursor = "toolgate.agents.cursor",
  opencode = "toolgate.agents.opencode",
}

---------------------------------------------------------------------------
-- Paths

-- "/a/./b//c/../d" -> "/a/b/d", lexically, as the agent's absolute paths
-- are compared with its cwd: "/proj/src/../../etc" is not inside /proj.
function M.norm(path)
  local abs = sub(path, 1, 1) == "/"
  local out = {}
  for seg in path:gmatch("[^/]+") do
    if seg == ".." then
      if #out > 0 and out[#out] ~= ".." then out[#out] = nil
      elseif not abs then out[#out + 1] = ".." end
    elseif seg ~= "." then
      out[#out + 1] = seg
    end
  end
  local s = concat(out, "/")
  if abs then return "/" .. s end
  return s == "" and "." or s
end

-- The path as toolgate's file tools and rules see it: relative to the
-- agent's cwd when inside it ("src/a.c"), else absolute ("/etc/hosts").
function M.rel(path, cwd)
  if type(path) ~= "string" or path == "" then return path end
  if type(cwd) ~= "string" or cwd == "" then return M.norm(path) end
  if sub(path, 1, 1) ~= "/" then path = cwd .. "/" .. path end
  local p, c = M.norm(path), M.norm(cwd)
  if p == c then return "." end
  if c == "/" then return sub(p, 2) end
  if sub(p, 1, #c + 1) == c .. "/" then return sub(p, #c + 2) end
  return p
end

-- "~" and "~/x" as the home folder and its x, as Claude Code's file tools
-- read them (a shell's expansion; "~bob" is left alone): judged as a
-- folder "~" in the cwd, ~/.ssh/id_rsa would pass for a file of the
-- project. Raises when HOME does not say where home is: the file the
-- agent means is then not known, and the call is not judged.
function M.home(path)
  if type(path) ~= "string" or (path ~= "~" and sub(path, 1, 2) ~= "~/") then
    return path
  end
  local home = os.getenv("HOME")
  if type(home) ~= "string" or sub(home, 1, 1) ~= "/" then
    error("the path '" .. path .. "' starts with ~, and HOME does not say "
      .. "which folder that is", 0)
  end
  return home .. sub(path, 2)
end

-- The agent's absolute path for a path toolgate's way (a rewrite).
function M.abs(path, cwd)
  if type(path) ~= "string" or sub(path, 1, 1) == "/" or type(cwd) ~= "string" then
    return path
  end
  return M.norm(cwd .. "/" .. path)
end

---------------------------------------------------------------------------
-- Diffs: an edit or a Codex patch as the unified diff apply_patch takes,
-- so rules written for apply_patch read it. Line numbers are not known
-- from an edit (only its text), so hunks say @@ -1,n +1,m @@: the paths
-- and the lines removed and added are real, the positions are not.

local function lines_of(s)
  local t = {}
  if s == "" then return t end
  for line in (s:sub(-1) == "\n" and s or s .. "\n"):gmatch("([^\n]*)\n") do
    t[#t + 1] = line
  end
  return t
end

local function diff_name(rel, side)
  if sub(rel, 1, 1) == "/" then return rel end
  return side .. "/" .. rel
end

-- edits: {{old_string=, new_string=}...} of one file.
function M.edit_patch(rel, edits)
  local out = { "--- " .. diff_name(rel, "a"), "+++ " .. diff_name(rel, "b") }
  for _, e in ipairs(edits) do
    local old = lines_of(type(e.old_string) == "string" and e.old_string or "")
    local new = lines_of(type(e.new_string) == "string" and e.new_string or "")
    out[#out + 1] = ("@@ -%d,%d +%d,%d @@"):format(#old > 0 and 1 or 0, #old,
      #new > 0 and 1 or 0, #new)
    for _, l in ipairs(old) do out[#out + 1] = "-" .. l end
    for _, l in ipairs(new) do out[#out + 1] = "+" .. l end
  end
  return concat(out, "\n") .. "\n"
end

-- White space Rust's str::trim takes off the end of a line and Lua's %s
-- does not (U+0085, U+00A0, U+1680, U+2000-200A, U+2028, U+2029, U+202F,
-- U+205F, U+3000), as the end of a UTF-8 string.
local UNICODE_SPACE_END = { "\194[\133\160]$", "\225\154\128$",
  "\226\128[\128-\138\168\169\175]$", "\226\129\159$", "\227\128\128$" }

-- The path of a file header (Add, Delete, Update File) as Codex takes it:
-- it trims the header line before taking its path, so the rules must judge
-- "src/.env" for "*** Delete File: src/.env " (not "src/.env "). White
-- space only Rust trims is refused rather than guessed at.
local function header(l)
  if sub(l, 1, 4) ~= "*** " then return nil end
  local h = gsub(l, "%s+$", "")
  for _, ws in ipairs(UNICODE_SPACE_END) do
    if find(h, ws) then return nil, nil, nil, "ends in white space" end
  end
  return match(h, "^%*%*%* Add File: (.+)$"), match(h, "^%*%*%* Delete File: (.+)$"),
    match(h, "^%*%*%* Update File: (.+)$")
end

-- Codex's own patch envelope ("*** Begin Patch" ... "*** End Patch") as a
-- unified diff (its names relative to cwd), and the paths it touches as
-- the envelope gives them. Returns
-- nil, why when it is not one: a patch toolgate cannot read is not judged
-- as if it said nothing. Read as Codex reads it (codex-rs apply-patch's
-- parser): lines split by Rust's lines(), which drops the CR of a CRLF;
-- headers trimmed; nothing but blank lines after "*** End Patch".
function M.codex_patch(text, cwd)
  if type(text) ~= "string" then return nil, "the patch is not a string" end
  local ls = lines_of(text)
  for k, l in ipairs(ls) do ls[k] = gsub(l, "\r$", "") end
  local i = 1
  while ls[i] and match(ls[i], "^%s*$") do i = i + 1 end
  if not ls[i] or not match(ls[i], "^%*%*%* Begin Patch%s*$") then
    return nil, "the patch does not start with '*** Begin Patch'"
  end
  local out, paths, seen = {}, {}, {}
  -- the diff names files relative to cwd; the list keeps them as Codex
  -- got them, for agent.map to resolve as the kernel will
  local function path_of(p)
    if not seen[p] then seen[p] = true; paths[#paths + 1] = p end
    return M.where(p, cwd)
  end
  local hunk -- {start index in out, old count, new count}
  local function close_hunk()
    if hunk then
      out[hunk[1]] = ("@@ -%d,%d +%d,%d @@"):format(hunk[2] > 0 and 1 or 0,
        hunk[2], hunk[3] > 0 and 1 or 0, hunk[3])
      hunk = nil
    end
  end
  local function open_hunk()
    out[#out + 1] = "@@"
    hunk = { #out, 0, 0 }
  end
  local mode, ended = nil, false
  i = i + 1
  while ls[i] do
    local l = ls[i]
    local add, del, upd, bad = header(l)
    if bad then
      return nil, "line " .. i .. " of the patch: the file header " .. bad
    end
    if match(l, "^%*%*%* End Patch%s*$") then
      ended = true
      break
    elseif add then
      close_hunk()
      local p = path_of(add)
      out[#out + 1] = "--- /dev/null"
      out[#out + 1] = "+++ " .. diff_name(p, "b")
      open_hunk()
      mode = "add"
    elseif del then
      close_hunk()
      local p = path_of(del)
      out[#out + 1] = "--- " .. diff_name(p, "a")
      out[#out + 1] = "+++ /dev/null"
      mode = "delete"
    elseif upd then
      close_hunk()
      local p = path_of(upd)
      local to = ls[i + 1] and match(ls[i + 1], "^%*%*%* Move to: (.+)$")
      if to then i = i + 1 end
      out[#out + 1] = "--- " .. diff_name(p, "a")
      out[#out + 1] = "+++ " .. diff_name(to and path_of(to) or p, "b")
      mode = "update"
    elseif match(l, "^%*%*%* End of File") then -- a marker, no line
    elseif mode == "add" then
      if sub(l, 1, 1) ~= "+" then
        return nil, "line " .. i .. " of the patch: an added file's lines start with '+'"
      end
      out[#out + 1] = l
      hunk[3] = hunk[3] + 1
    elseif mode == "update" then
      if sub(l, 1, 2) == "@@" then
        close_hunk()
        open_hunk()
      else
        local c = sub(l, 1, 1)
        if not hunk then open_hunk() end
        if c == "-" then hunk[2] = hunk[2] + 1
        elseif c == "+" then hunk[3] = hunk[3] + 1
        elseif c == " " or l == "" then
          hunk[2], hunk[3] = hunk[2] + 1, hunk[3] + 1
          if l == "" then l = " " end
        else
          return nil, "line " .. i .. " of the patch: '" .. sub(l, 1, 40) .. "' is not a change line"
        end
        out[#out + 1] = l
      end
    elseif not match(l, "^%s*$") then
      return nil, "line " .. i .. " of the patch: '" .. sub(l, 1, 40) .. "' is outside any file"
    end
    i = i + 1
  end
  close_hunk()
  if not ended then return nil, "the patch does not end with '*** End Patch'" end
  for k = i + 1, #ls do -- Codex refuses an envelope that goes on
    if not match(ls[k], "^%s*$") then
      return nil, "line " .. k .. " of the patch: text after '*** End Patch'"
    end
  end
  if #paths == 0 then return nil, "the patch names no file" end
  return concat(out, "\n") .. "\n", paths
end

---------------------------------------------------------------------------
-- Mapping tables

local function copy(t)
  local c = {}
  for k, v in pairs(t) do c[k] = v end
  return c
end
M.copy = copy

-- A whole number in [lo, hi], or nil.
function M.int(v, lo, hi)
  if type(v) ~= "number" or v ~= math.floor(v) or v < lo or v > hi then return nil end
  return v
end

-- A new, empty mapping table for an agent.
function M.table(name)
  return { name = name, tools = {}, rel = M.rel, abs = M.abs, home = M.home, copy = copy }
end

local function load_table(name)
  local mod = M.modules[name]
  if not mod then return nil, "no mapping table for the agent '" .. tostring(name) .. "'" end
  return require(mod)
end

-- The entry for an agent's tool, made up for tools without one.
local function entry_for(t, name)
  local e = t.tools[name]
  if e then return e end
  if sub(name, 1, 5) == "mcp__" and #name > 5 then
    -- mcp__SERVER__TOOL: the server is what comes before the next "__"
    -- (call.server, as for the tools of a server toolgate serve fronts),
    -- as Claude Code itself splits the name for its permission rules. The
    -- tool's part is the upstream's to choose, so it may well start with
    -- "_" ("mcp__srv___rm"): the server is still "srv" — a split that
    -- looked for the last "__" before a letter let such a tool carry
    -- another server's name, or none, past rules on call.server.
    -- An agent whose events do not name the server (t.mcp_unnamed: its
    -- mcp__NAME holds the tool's name alone) sets none: a "__" in NAME
    -- is the upstream's, not a server's.
    local rest = sub(name, 6)
    local server = not t.mcp_unnamed and rest:match("^(.-)__") or nil
    return { tool = rest, mcp = true, server = server ~= "" and server or nil }
  end
  return { tool = name, own = true }
end

local function identity_args(input) return input end
local function identity_input(args) return args end

-- The agent's names of a call of its tool `tool_name` (entry e): the name
-- itself, then the entry's other names (e.names: Codex's shell tools
-- arrive as "Bash" and are also "shell", "local_shell", "exec_command").
-- A rule or hook naming any of them covers the call, as one naming
-- toolgate's tool does.
function M.names_of(tool_name, e)
  local out, seen = { tool_name }, { [tool_name] = true }
  for _, n in ipairs(type(e.names) == "table" and e.names or {}) do
    if type(n) == "string" and n ~= "" and not seen[n] then
      seen[n] = true
      out[#out + 1] = n
    end
  end
  return out
end

-- Every tool name the agents' mapping tables know: {{name=, agent=,
-- tool=}...}, name being the agent's (an entry's key or one of its other
-- names) and tool toolgate's (nil when the entry computes it). `toolgate
-- check` accepts these in a rule's or hook's tools, and suggests them.
function M.known_names()
  local out = {}
  local agents = {}
  for a in pairs(M.modules) do agents[#agents + 1] = a end
  table.sort(agents)
  for _, a in ipairs(agents) do
    local t = load_table(a)
    local keys = {}
    for k in pairs(type(t) == "table" and t.tools or {}) do
      if type(k) == "string" then keys[#keys + 1] = k end
    end
    table.sort(keys)
    for _, k in ipairs(keys) do
      local e = t.tools[k]
      local tool = type(e) == "table" and type(e.tool) == "string" and e.tool or nil
      for _, n in ipairs(M.names_of(k, type(e) == "table" and e or {})) do
        out[#out + 1] = { name = n, agent = a, tool = tool }
      end
    end
  end
  return out
end

-- The agent whose mapping table knows the tool `tool` by name (the first
-- of them in name order: "Bash" is Claude Code's), "claude-code" for an
-- agent's MCP tool (mcp__SERVER__TOOL), else nil. `toolgate test` maps a
-- case naming such a tool as that agent's call.
function M.which(tool)
  if type(tool) ~= "string" then return nil end
  for _, k in ipairs(M.known_names()) do
    if k.name == tool then return k.agent end
  end
  if sub(tool, 1, 5) == "mcp__" and #tool > 5 then return "claude-code" end
  return nil
end

-- agent.map(name, event) -> {tool, args, read_only, paths, agent_tool,
-- names, result?} for the hook event's tool call, or nil, why.
function M.map(name, ev)
  local t, why = load_table(name)
  if not t then return nil, why end
  local tool_name, input = ev.tool_name, ev.tool_input
  if type(tool_name) ~= "string" or tool_name == "" then
    return nil, "the event has no tool_name"
  end
  if type(input) ~= "table" then
    return nil, "the event's tool_input is not a JSON object"
  end
  local e = entry_for(t, tool_name)
  local tool = e.tool
  if type(tool) == "function" then tool = tool(input, ev) end
  if type(tool) ~= "string" or tool == "" then
    return nil, "the mapping of " .. tool_name .. " names no tool"
  end
  local args, err = (e.args or identity_args)(input, ev)
  if type(args) ~= "table" then
    return nil, err or ("the mapping of " .. tool_name .. " gave no args")
  end
  local paths = e.paths and e.paths(input, ev) or nil
  if type(paths) == "table" then -- where each leads, from the event's cwd
    local facts = {}
    for _, p in ipairs(paths) do
      if type(p) == "string" then facts[#facts + 1] = M.resolve(M.home(p), ev.cwd) end
    end
    paths = facts
  end
  local server = e.server
  if type(server) == "function" then server = server(input, ev) end
  if type(server) ~= "string" or server == "" then server = nil end
  local out = { tool = tool, args = args, read_only = e.read_only == true,
    server = server,
    paths = paths, agent_tool = tool_name, mapped = not e.own and not e.mcp,
    names = M.names_of(tool_name, e) }
  if ev.tool_response ~= nil then
    out.result = e.result and e.result(ev.tool_response, ev) or ev.tool_response
  end
  return out
end

-- agent.unmap(name, event, tool, args) -> the agent's tool input for a
-- call the pre-hooks rewrote to (tool, args), or nil, why.
function M.unmap(name, ev, tool, args)
  local t, why = load_table(name)
  if not t then return nil, why end
  local e = entry_for(t, ev.tool_name)
  local want = e.tool
  if type(want) == "function" then want = want(ev.tool_input, ev) end
  if tool ~= want then
    return nil, "a pre-hook rerouted the call to '" .. tostring(tool) .. "', and "
      .. ev.tool_name .. " cannot be run as that"
  end
  local back = e.input or ((e.own or e.mcp) and identity_input)
  if not back then
    return nil, "a pre-hook rewrote the call, and the rewrite cannot be given back to "
      .. ev.tool_name .. " (its mapping has no input function)"
  end
  local input, err = back(args, ev.tool_input, ev)
  if type(input) ~= "table" then
    return nil, err or ("the rewrite cannot be given back to " .. ev.tool_name)
  end
  return input
end

---------------------------------------------------------------------------
-- For policies

-- The agent whose hook made this call ("claude-code", "codex"), or nil.
function M.of(call)
  local m = type(call) == "table" and call.metadata
  return type(m) == "table" and type(m.agent) == "string" and m.agent or nil
end

-- The files a call touches, where they are: each path as the kernel
-- resolves it (symlinks followed, `..` applied to the real parent),
-- relative to the agent's cwd when inside it ("src/a.c"), else absolute
-- ("/etc/hosts"). For an agent's call, what its mapping found; for
-- toolgate's own file tools, args.path, or every file of an apply_patch
-- diff as apply_patch's own parser reads it (renames: both names).
-- A path that cannot be resolved safely (a symlink loop, a component
-- that is not a directory) is given as written, and listed in the
-- second result: {{path = as written, why = ...}...} (agent.unresolved).
function M.paths(call)
  local t, bad = {}, {}
  for _, e in ipairs(M.path_facts(call)) do
    t[#t + 1] = e.path
    if e.error then bad[#bad + 1] = { path = e.written, why = e.error } end
  end
  return t, bad
end

-- The paths agent.paths could not resolve: {{path=, why=}...}, empty when
-- every one was. The shipped policies ask about such a call.
function M.unresolved(call)
  local _, bad = M.paths(call)
  return bad
end

local function toolgate_api()
  local ok, tg = pcall(require, "toolgate")
  if not ok or type(tg) ~= "table" or type(tg.resolve_path) ~= "function" then
    error("toolgate.agent: paths are resolved in the policies' own state "
      .. "(tg.resolve_path), which this Lua state is not", 0)
  end
  return tg
end

-- abs, relative to cwd (already resolved) when inside it.
local function shown(abs, cwd)
  if not cwd then return abs end
  if abs == cwd then return "." end
  if cwd == "/" then return sub(abs, 2) end
  if sub(abs, 1, #cwd + 1) == cwd .. "/" then return sub(abs, #cwd + 2) end
  return abs
end

-- {path = where it leads (shown relative to cwd when inside), written =
-- as the call wrote it, resolved = absolute or nil, error = why not}.
function M.resolve(written, cwd)
  local tg = toolgate_api()
  local real_cwd = cwd and tg.resolve_path(cwd, "/") or tg.resolve_path(".")
  local abs, why = tg.resolve_path(written, cwd)
  if not abs then
    return { path = written, written = written, error = why }
  end
  return { path = shown(abs, real_cwd), written = written, resolved = abs }
end

-- A path of an agent's input as toolgate's args give it: where it leads
-- (agent.resolve), relative to cwd inside it, so that a rule reading
-- call.args.path reads the file the kernel will open; as text (agent.rel)
-- when it cannot be resolved — agent.paths then says so.
function M.where(path, cwd)
  if type(path) ~= "string" or path == "" then return path end
  local f = M.resolve(path, cwd)
  if f.error then return M.rel(path, cwd) end
  return f.path
end

-- The files of a unified diff as apply_patch will touch them: its own
-- parser's list (tg.patch_files). A diff it cannot parse is refused by
-- the tool and touches nothing.
function M.patch_paths(patch)
  local files = toolgate_api().patch_files(patch)
  local t = {}
  for _, f in ipairs(files or {}) do
    if f.from then t[#t + 1] = f.from end
    t[#t + 1] = f.path
  end
  return t
end

-- The paths of an agent's call as it stands: a pre-hook may have
-- rewritten its args since the event was mapped (Write's path, say), and
-- the rules that judge the rewrite must see where the rewrite goes. So
-- the args are given back as the agent's input (the mapping's input
-- function) and its paths taken again. nil when that cannot be done (no
-- input function: such a rewrite is refused anyway).
local function agent_paths_now(call, m)
  if type(m.agent_input) ~= "table" or type(m.agent_tool) ~= "string" then return nil end
  local t = load_table(m.agent)
  local e = t and entry_for(t, m.agent_tool)
  if not (e and e.paths) then return nil end
  local ev = { tool_name = m.agent_tool, tool_input = m.agent_input, cwd = m.agent_cwd }
  local input = M.unmap(m.agent, ev, call.tool, call.args)
  if type(input) ~= "table" then return nil end
  local written = e.paths(input, ev)
  local out = {}
  for _, p in ipairs(type(written) == "table" and written or {}) do
    if type(p) == "string" then out[#out + 1] = M.resolve(M.home(p), ev.cwd) end
  end
  return out
end

-- Every path of agent.paths with its facts (see agent.resolve).
function M.path_facts(call)
  local m = type(call) == "table" and call.metadata
  local out = {}
  if type(m) == "table" and type(m.agent) == "string" then
    local now = agent_paths_now(call, m)
    if now then return now end
  end
  if type(m) == "table" and type(m.agent_paths) == "table" then
    for _, e in ipairs(m.agent_paths) do
      if type(e) == "table" then out[#out + 1] = e
      elseif type(e) == "string" then out[#out + 1] = { path = e, written = e } end
    end
    return out
  end
  local args = type(call) == "table" and call.args or {}
  local written = {}
  if type(args.path) == "string" then written = { args.path }
  elseif type(args.patch) == "string" then written = M.patch_paths(args.patch) end
  for _, p in ipairs(written) do out[#out + 1] = M.resolve(p) end
  return out
end

-- Whether path is folder or inside it, by whole components ("srcx" is
-- not inside "src"). Both as agent.paths gives them: resolved, relative
-- to the cwd or absolute; "." is the cwd.
function M.inside(path, folder)
  if type(path) ~= "string" or type(folder) ~= "string" then return false end
  path, folder = M.norm(path), M.norm(folder)
  if folder == "." then return sub(path, 1, 1) ~= "/" and sub(path, 1, 3) ~= "../" and path ~= ".." end
  if path == folder then return true end
  if folder == "/" then return sub(path, 1, 1) == "/" end
  return sub(path, 1, #folder + 1) == folder .. "/"
end

-- Adds text for the model to read with the agent's answer
-- (additionalContext): from a pre-hook (before the tool) or a post-hook
-- (after it). Several add up, in order.
function M.context(call, text)
  if type(text) ~= "string" then error("agent.context: the text must be a string", 2) end
  if #text > M.MAX_CONTEXT then text = sub(text, 1, M.MAX_CONTEXT) .. "\n[cut]" end
  local m = call.metadata
  if type(m.agent_context) ~= "table" then m.agent_context = {} end
  insert(m.agent_context, text)
end

M.MAX_CONTEXT_CALLS = 4 -- agent.context_from calls per event

-- Runs `tool` with `args` once this event's hooks are done, and adds what
-- it gave (for exec: the end of its output and its exit code) to the text
-- for the model, under `label` (default "$ <command>"). The call goes
-- through the chain like any other: the rules judge it, and an ask is
-- refused (nobody is there to answer), so allow it with a rule. A command
-- runs in the agent's cwd unless args.cwd says otherwise; it is cancelled,
-- its output so far kept, at the answer's deadline. The way to show the
-- model the tests after an edit.
function M.context_from(call, tool, args, label)
  if type(tool) ~= "string" or tool == "" then
    error("agent.context_from: the tool must be a name", 2)
  end
  if args ~= nil and type(args) ~= "table" then
    error("agent.context_from: the args must be a table", 2)
  end
  if label ~= nil and type(label) ~= "string" then
    error("agent.context_from: the label must be a string", 2)
  end
  local m = call.metadata
  if type(m.agent_context_calls) ~= "table" then m.agent_context_calls = {} end
  if #m.agent_context_calls >= M.MAX_CONTEXT_CALLS then
    error("agent.context_from: at most " .. M.MAX_CONTEXT_CALLS .. " per event", 2)
  end
  insert(m.agent_context_calls, { tool = tool, args = args or {}, label = label })
end

return M
