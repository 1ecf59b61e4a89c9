-- The time limit per call into policy code (policy_time_limit_ms): a
-- watchdog thread stops a call that overruns, wherever its code runs —
-- in coroutines it creates, under pcall, in error handlers — on Lua 5.4
-- and LuaJIT, and costs nothing while calls stay under it.
local H = require "spec.lua.helpers"

local LIMIT = 100 -- ms

local function sandbox(files, opts)
  opts = opts or {}
  opts.policy_time_limit_ms = opts.policy_time_limit_ms or LIMIT
  return H.runtime(files, opts)
end

local function stopped(out, what)
  assert.are.equal("error", out.status, "the call was not stopped")
  local m = out.error.message
  assert.is_true(H.has(m, "ran past its time limit of " .. LIMIT .. " ms"), m)
  if what then assert.is_true(H.has(m, what), m) end
  return out
end

local function timed(fn)
  local t0 = os.time()
  local clock0 = os.clock()
  local r = fn()
  return r, os.clock() - clock0, os.time() - t0
end

describe("policy time limit: the whole call, wherever its code runs", function()
  after_each(H.cleanup)

  local FANOUT = [[
local tg = require "toolgate"
tg.tool { name = "echo", read_only = true, run = function(args) return args end }
tg.rule { name = "fanout", check = function(call)
  local how = call.args.how
  if how == "wrap" then          -- many short coroutines, each under any per-coroutine count
    while true do coroutine.wrap(function() for i = 1, 100 do end end)() end
  elseif how == "resume" then
    while true do
      local co = coroutine.create(function() for i = 1, 100 do coroutine.yield(i) end end)
      while coroutine.resume(co) do end
    end
  elseif how == "inside" then    -- the loop itself runs in a coroutine
    local co = coroutine.create(function() while true do end end)
    return coroutine.resume(co) and nil
  elseif how == "nested" then    -- coroutines three deep, each swallowing errors
    local function deep(n)
      if n == 0 then while true do end end
      while true do pcall(coroutine.wrap(function() deep(n - 1) end)) end
    end
    deep(3)
  elseif how == "xpcall" then    -- the message handler loops too
    while true do xpcall(function() while true do end end, function() while true do end end) end
  elseif how == "close" then     -- Lua 5.4: a to-be-closed variable that loops, run by coroutine.close
    if coroutine.close then
      local co = coroutine.create(function()
        local guard = setmetatable({}, { __close = function() while true do end end })
        local x <close> = guard
        coroutine.yield()
      end)
      coroutine.resume(co)
      coroutine.close(co)
      while true do end -- and if close returned, the rule still overruns
    else
      while true do end
    end
  end
end }
]]

  for _, how in ipairs { "wrap", "resume", "inside", "nested", "xpcall", "close" } do
    it("stops a rule that runs past the limit through " .. how .. "; the next call works", function()
      local src = FANOUT
      if not _VERSION:find("5.4") then src = src:gsub("local x <close> = guard", "") end
      local rt = sandbox(src)
      local out, cpu = timed(function() return H.call(rt, "echo", { how = how }) end)
      stopped(out, "rule 'fanout' defined at ")
      assert.are.equal("POLICY", out.error.phase)
      assert.is_true(cpu < 5, "took " .. cpu .. " s of CPU")
      local again = H.call(rt, "echo", { x = 1 })
      assert.are.equal("ok", again.status, again.error and again.error.message)
    end)
  end

  it("Lua 5.4: a coroutine the stop killed does not run its to-be-closed variables, now or in a later call", function()
    if not _VERSION:find("5.4") then return end
    local rt = sandbox [==[
local tg = require "toolgate"
tg.tool { name = "echo", read_only = true, run = function(args) return args end }
local make = load([[
  return function()
    local x <close> = setmetatable({}, { __close = function() while true do end end })
    while true do end
  end
]])()
local kept
tg.rule { name = "killer", check = function(call)
  if call.args.wrap then coroutine.wrap(make)() end
  if call.args.keep then kept = coroutine.create(make); coroutine.resume(kept) end
  if call.args.later then return tg.deny(tostring(select(2, coroutine.close(kept)))) end
end }
]==]
    for _, args in ipairs { { wrap = true }, { keep = true } } do
      local out, cpu = timed(function() return H.call(rt, "echo", args) end)
      stopped(out, "rule 'killer'")
      assert.is_true(cpu < 5, "took " .. cpu .. " s of CPU")
    end
    local out, cpu = timed(function() return H.call(rt, "echo", { later = true }) end)
    assert.are.equal("denied", out.status)
    assert.is_true(H.has(out.error.message, "stopped by the time limit"), out.error.message)
    assert.is_true(cpu < 5, "took " .. cpu .. " s of CPU")
  end)

  it("keeps coroutine.wrap's own behaviour: values, yields, errors with the caller's position", function()
    local rt = sandbox [[
local tg = require "toolgate"
tg.tool { name = "co", read_only = true, run = function(args)
  local gen = coroutine.wrap(function(a) local b = coroutine.yield(a + 1) return b * 2 end)
  local first, second = gen(1), gen(10)
  local ok, err = pcall(coroutine.wrap(function() error("boom") end))
  local ok2, err2 = pcall(coroutine.wrap(function() error({ code = 7 }) end))
  local dead = coroutine.wrap(function() end); dead()
  local ok3, err3 = pcall(dead)
  local ok4, err4 = pcall(coroutine.resume, 42)
  return { first = first, second = second, err = err, code = err2.code,
           dead = err3, notco = err4, ok = ok or ok2 or ok3 or ok4 }
end }
]]
    local out = H.call(rt, "co", {})
    assert.are.equal("ok", out.status, out.error and out.error.message)
    local r = out.result
    assert.are.equal(2, r.first)
    assert.are.equal(20, r.second)
    assert.is_false(r.ok)
    assert.is_true(H.has(r.err, "boom"), r.err)
    assert.are.equal(7, r.code)
    assert.is_true(H.has(r.dead, "dead coroutine"), r.dead)
    assert.is_true(H.has(r.notco, "bad argument #1"), r.notco)
  end)

  it("stops a Lua tool that fans out through coroutines: EXECUTE TIME_LIMIT", function()
    local rt = sandbox [[
local tg = require "toolgate"
tg.tool { name = "fan", read_only = true, run = function(args)
  while true do coroutine.wrap(function() for i = 1, 100 do end end)() end
end }
tg.tool { name = "echo", read_only = true, run = function(args) return args end }
]]
    local out = stopped((H.call(rt, "fan", {})), "tool 'fan'")
    assert.are.equal("EXECUTE", out.error.phase)
    assert.are.equal("TIME_LIMIT", out.error.code)
    assert.are.equal("ok", H.call(rt, "echo", {}).status)
  end)

  it("does not leak a stop into the next call: a call right after a stopped one runs its full limit", function()
    local rt = sandbox [[
local tg = require "toolgate"
tg.tool { name = "echo", read_only = true, run = function(args) return args end }
tg.rule { name = "r", check = function(call)
  if call.args.spin then while true do end end
  local t0 = os.clock()
  while os.clock() - t0 < 0.005 do end -- a twentieth of the limit: a leaked stop would end it at once
end }
]]
    for i = 1, 3 do
      stopped((H.call(rt, "echo", { spin = true })))
      local out = H.call(rt, "echo", { i = i })
      assert.are.equal("ok", out.status, out.error and out.error.message)
    end
  end)

  it("stops long C functions of the sandbox too: a backtracking pattern, table.move, table.insert, sort", function()
    local rt = sandbox [[
local tg = require "toolgate"
tg.tool { name = "echo", read_only = true, run = function(args) return args end }
tg.rule { name = "slow-c", check = function(call)
  local how = call.args.how
  if how == "find" then return (("a"):rep(30)):find(("a*"):rep(30) .. "b") and nil end
  if how == "match" then return (("a"):rep(30)):match(("a*"):rep(30) .. "b") and nil end
  if how == "gsub" then return ((("a"):rep(30)):gsub(("a*"):rep(30) .. "b", "x")) and nil end
  if how == "gmatch" then for _ in (("a"):rep(30)):gmatch(("a*"):rep(30) .. "b") do end end
  if how == "move" then table.move({}, 1, 2^40, 1) end
  if how == "insert" then
    local t = setmetatable({}, { __len = function() return 2^53 end })
    table.insert(t, 1, "x")
  end
  if how == "sort" then -- LuaJIT: quadratic for crafted input, so it polls
    local t = {}
    for i = 1, 1500000 do t[i] = (i * 7919) % 1000003 end
    table.sort(t)
  end
end }
]]
    -- insert: Lua 5.4 only (its __len); sort: LuaJIT only (Lua 5.4's sort
    -- is n log n in C, bounded by the memory cap: see the README)
    local hows = { "find", "match", "gsub", "gmatch", "move", jit and "sort" or "insert" }
    for _, how in ipairs(hows) do
      local out, cpu = timed(function() return H.call(rt, "echo", { how = how }) end)
      stopped(out, "rule 'slow-c'")
      assert.is_true(cpu < 5, how .. " took " .. cpu .. " s of CPU")
      assert.are.equal("ok", H.call(rt, "echo", { after = how }).status)
    end
  end)

  it("leaves many short calls alone", function()
    local rt = sandbox [[
local tg = require "toolgate"
tg.tool { name = "echo", read_only = true, run = function(args) return args end }
tg.rule { name = "r", check = function(call) local s = 0 for i = 1, 1000 do s = s + i end end }
]]
    for i = 1, 2000 do
      local out = H.call(rt, "echo", { i = i })
      assert(out.status == "ok", out.error and out.error.message)
    end
  end)
end)
