-- The LuaLS definitions (lua/types/) name exactly what the module has: every
-- method, function and field of the host side (toolgate, the runtime, a
-- call handle, a host tool's ctx) and of the policy side (tg, a Lua tool's
-- ctx). A method added to the C module without its definition, or a
-- definition left after its method went, fails here.
local H = require "spec.lua.helpers"
local toolgate = H.toolgate

-- { [local or class name] = { name = true, ... } } from a definitions file:
-- `---@field x` under `---@class C` counts for C, `function t.x` /
-- `function t:x` for the local t.
local function names_in(path)
  local text = assert(H.read(path), path)
  local out, class = {}, nil
  local function add(owner, name)
    out[owner] = out[owner] or {}
    out[owner][name] = true
  end
  for line in text:gmatch("[^\n]+") do
    local c = line:match("^%-%-%-@class ([%w_.]+)")
    if c then class = c end
    local f = line:match("^%-%-%-@field ([%w_]+)")
    if f and class then add(class, f) end
    local t, fn = line:match("^function ([%w_]+)[.:]([%w_]+)")
    if t then add(t, fn) end
  end
  return out
end

local function keys(t)
  local out = {}
  for k in pairs(t) do out[k] = true end
  return out
end

local function union(a, b)
  local out = {}
  for k in pairs(a or {}) do out[k] = true end
  for k in pairs(b or {}) do out[k] = true end
  return out
end

local function same_names(want, got, what)
  local missing, extra = {}, {}
  for k in pairs(got) do if not want[k] then missing[#missing + 1] = k end end
  for k in pairs(want) do if not got[k] then extra[#extra + 1] = k end end
  table.sort(missing)
  table.sort(extra)
  assert(#missing == 0 and #extra == 0, ("%s: not in lua/types: {%s}; in lua/types but not in the module: {%s}")
    :format(what, table.concat(missing, ", "), table.concat(extra, ", ")))
end

describe("lua/types", function()
  after_each(H.cleanup)

  it("are Lua that loads, and each returns its module table", function()
    for _, side in ipairs { "host", "policy" } do
      local chunk = assert(loadfile("lua/types/" .. side .. "/toolgate.lua"))
      assert.is_table(chunk())
      local shell = assert(loadfile("lua/types/" .. side .. "/toolgate/shell.lua"))
      assert.is_function(shell().split) -- the library itself, linked
    end
  end)

  it("name every field and method of the host side", function()
    local n = names_in("lua/types/host/toolgate.lua")
    same_names(union(n.toolgate, n.toolgate), keys(toolgate), "toolgate")
    local rt = H.runtime(H.lib.tools)
    same_names(n.runtime, keys(getmetatable(rt).__index), "runtime")
    local h = assert(rt:call("echo", {}))
    h:wait()
    local call_names = keys(getmetatable(h).__methods)
    call_names.id = true
    same_names(union(n.call, n["toolgate.call"]), call_names, "call handle")
    local ctx_names
    rt:tool { name = "ctx_keys", read_only = true, run = function(args, ctx)
      ctx_names = keys(ctx)
    end }
    H.call(rt, "ctx_keys", {}, { session = "s" })
    same_names(union(n.ctx, n["toolgate.ctx"]), ctx_names, "host tool ctx")
  end)

  it("name every function and field of the policy side", function()
    local n = names_in("lua/types/policy/toolgate.lua")
    local rt = H.runtime [[
local tg = require "toolgate"
local tg_keys = {}
for k in pairs(tg) do tg_keys[#tg_keys + 1] = k end
tg.tool { name = "keys", read_only = true, run = function(args, ctx)
  local ctx_keys = {}
  for k in pairs(ctx) do ctx_keys[#ctx_keys + 1] = k end
  return { tg = tg_keys, ctx = ctx_keys }
end }
]]
    local out = H.call(rt, "keys", {}, { session = "s" })
    assert.are.equal("ok", out.status)
    local function set(list)
      local s = {}
      for _, k in ipairs(list) do s[k] = true end
      return s
    end
    same_names(union(n.tg, n.tg), set(out.result.tg), "tg")
    same_names(union(n.ctx, n["tg.ctx"]), set(out.result.ctx), "policy tool ctx")
  end)
end)
