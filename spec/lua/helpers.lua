-- spec/lua/helpers.lua — shared helpers for the busted specs of the Lua API
-- (lua/README.md). Policy folders are made from strings in temp dirs and
-- removed again; runtimes made through here are closed by H.cleanup().
--
-- Run from the repository root:
--   LUA_CPATH="/tmp/spec-build/lua/?.so;;" lua5.4 /usr/bin/busted spec/lua
--   LUA_CPATH="/tmp/spec-build-jit/lua/?.so;;" luajit /usr/bin/busted spec/lua

local H = {}

local ok, toolgate = pcall(require, "toolgate")
if not ok then
  -- Fall back to the in-tree build dir, for lua5.4 only (a module built for
  -- another Lua would not load).
  if not jit then
    package.cpath = "build/lua/?.so;" .. package.cpath
    ok, toolgate = pcall(require, "toolgate")
  end
  if not ok then
    error("cannot load the toolgate module; set LUA_CPATH to the build's "
          .. "lua/?.so (" .. tostring(toolgate) .. ")", 0)
  end
end
H.toolgate = toolgate

-- Every runtime a spec makes gets no database unless the spec names one
-- (db = path or ":memory:"): specs run by hand must not write into the
-- real home, nor remember approvals from one spec into the next. The
-- options are copied raw (next), as toolgate.new itself reads them.
local real_new = toolgate.new
toolgate.new = function(opts, ...)
  if type(opts) ~= "table" or rawget(opts, "db") ~= nil then
    return real_new(opts, ...)
  end
  local o = {}
  for k, v in next, opts do o[k] = v end
  o.db = false
  return real_new(o, ...)
end

local dirs, runtimes = {}, {}

local function shell_quote(s)
  return "'" .. s:gsub("'", "'\\''") .. "'"
end

-- A fresh empty directory under the temp dir (removed by cleanup).
function H.tmpdir()
  local name = os.tmpname()           -- creates the file on POSIX
  os.remove(name)
  local dir = name .. ".d"
  assert(os.execute("mkdir -p " .. shell_quote(dir)))
  dirs[#dirs + 1] = dir
  return dir
end

function H.write(path, text)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
end

function H.read(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("*a")
  f:close()
  return s
end

function H.exists(path)
  local f = io.open(path, "rb")
  if f then f:close() end
  return f ~= nil
end

-- files: a string (one file, 10_policy.lua) or {["name.lua"] = "source"}.
-- Returns the directory.
function H.policy_dir(files)
  local dir = H.tmpdir()
  if type(files) == "string" then files = { ["10_policy.lua"] = files } end
  for name, src in pairs(files or {}) do
    H.write(dir .. "/" .. name, src)
  end
  return dir
end

-- Makes a runtime over a policy folder built from `files` (see policy_dir);
-- opts are toolgate.new options (policies is filled in). Fails the test if
-- the runtime cannot be made. Returns rt, dir.
function H.runtime(files, opts)
  opts = opts or {}
  local o = {}
  for k, v in pairs(opts) do o[k] = v end
  -- sanitizers and valgrind run policy code many times slower: specs that
  -- are not about the time limit must not trip it on a slow machine
  if o.policy_time_limit_ms == nil then o.policy_time_limit_ms = 5000 end
  local dir
  if files then
    dir = H.policy_dir(files)
    o.policies = dir
  end
  local rt, err = toolgate.new(o)
  assert(rt, "toolgate.new failed: " .. tostring(err))
  runtimes[#runtimes + 1] = rt
  return rt, dir
end

-- Keeps a runtime made elsewhere for cleanup.
function H.track(rt)
  runtimes[#runtimes + 1] = rt
  return rt
end

-- Records every event of rt (or of one type) into a list.
function H.record(rt, type_)
  local list = {}
  local fn = function(ev) list[#list + 1] = ev end
  if type_ then rt:on_event(type_, fn) else rt:on_event(fn) end
  return list
end

-- The events of one call (optionally only one type), in order.
function H.of_call(list, call_id, type_)
  local out = {}
  for _, ev in ipairs(list) do
    if ev.call_id == call_id and (not type_ or ev.type == type_) then
      out[#out + 1] = ev
    end
  end
  return out
end

-- The event types of one call, in order.
function H.types(list, call_id)
  local out = {}
  for _, ev in ipairs(H.of_call(list, call_id)) do out[#out + 1] = ev.type end
  return out
end

function H.count(list, call_id, type_)
  return #H.of_call(list, call_id, type_)
end

-- Position of the first `type_` in a list of types (nil when absent).
function H.index_of(types, type_, from)
  for i = from or 1, #types do
    if types[i] == type_ then return i end
  end
  return nil
end

-- Starts a call that must be accepted and waits for its outcome.
function H.call(rt, tool, args, opts)
  local h, err = rt:call(tool, args or {}, opts)
  assert(h, "rt:call refused: " .. tostring(err))
  return h:wait(), h
end

-- Calls with args text that must not parse: the call ends VALIDATE
-- INVALID_ARGS and nothing runs. Returns the error message.
function H.invalid_args(rt, tool, text)
  local out = H.call(rt, tool, text)
  assert(out.status == "error", "the call was not refused: " .. tostring(out.status))
  assert(out.error.phase == "VALIDATE" and out.error.code == "INVALID_ARGS",
         "not VALIDATE INVALID_ARGS: " .. out.error.phase .. " " .. out.error.code)
  return out.error.message
end

-- A plain substring test (no patterns).
function H.has(s, sub)
  return type(s) == "string" and s:find(sub, 1, true) ~= nil
end

-- Closes the runtimes and removes the temp dirs made since the last call.
function H.cleanup()
  for i = #runtimes, 1, -1 do
    pcall(runtimes[i].close, runtimes[i])
    runtimes[i] = nil
  end
  for i = #dirs, 1, -1 do
    local d = dirs[i]
    if d:match("^/tmp/") or d:match("^" .. (os.getenv("TMPDIR") or "/tmp")) then
      os.execute("rm -rf " .. shell_quote(d))
    end
    dirs[i] = nil
  end
  collectgarbage()
end

-- Policy source snippets shared by several spec files.
H.lib = {}

-- echo (read-only) returns its args; touch (not read-only) counts its runs
-- and `runs` (read-only) reports the count, so a spec can prove a tool did
-- not run even though policy state is separate from the host's.
H.lib.tools = [[
local tg = require "toolgate"
local runs = 0
tg.tool { name = "echo", read_only = true, run = function(args) return args end }
tg.tool { name = "touch", run = function(args) runs = runs + 1; return { ran = true, args = args } end }
tg.tool { name = "runs", read_only = true, run = function() return { n = runs } end }
]]

-- How many times `touch` ran in rt's current generation.
function H.runs(rt)
  local out = H.call(rt, "runs", {})
  assert(out.status == "ok", "runs tool failed: " .. tostring(out.error and out.error.message))
  return out.result.n
end

return H
