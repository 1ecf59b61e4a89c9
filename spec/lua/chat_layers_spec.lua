-- The chat side, part 1: turns and layers. A session's turn rises
-- exactly once per user turn, before any layer sees it; calls made during
-- the turn carry it; layers run around chats and tools in registration
-- order, host layers before the policies'; a layer that raises or overruns
-- is a layer_error event and is skipped — the turn goes on.
local H = require "spec.lua.helpers"

-- Policies that log what their layers see into a list a tool returns.
local LOGGING = [[
local tg = require "toolgate"
local log = {}
tg.before_chat(function(ctx) log[#log + 1] = "p1.before " .. ctx.turn end)
tg.before_chat(function(ctx) log[#log + 1] = "p2.before " .. ctx.turn end)
tg.after_chat(function(ctx, ok, err)
  log[#log + 1] = ("p1.after %d %s %s"):format(ctx.turn, tostring(ok), tostring(err))
end)
tg.after_chat(function(ctx, ok) log[#log + 1] = "p2.after " .. ctx.turn end)
tg.tool { name = "log", read_only = true, run = function()
  local out = log; log = {}; return out end }
tg.tool { name = "echo", read_only = true, run = function(args, ctx) return { turn = args.turn } end }
tg.tool { name = "nested", read_only = true, run = function(args, ctx)
  local o = ctx.call("echo", {})
  return { inner = o.status }
end }
]]

local function policy_log(rt)
  local out = H.call(rt, "log", {})
  assert.are.equal("ok", out.status)
  return out.result
end

describe("turns", function()
  after_each(H.cleanup)

  it("rise by exactly one per turn_begin, per session, from 1", function()
    local rt = H.runtime(LOGGING)
    local begun = H.record(rt, "turn_begin")
    assert.are.equal(0, rt:turn())
    for i = 1, 50 do assert.are.equal(i, rt:turn_begin()) end
    assert.are.equal(1, rt:turn_begin("other"))
    assert.are.equal(50, rt:turn())
    assert.are.equal(1, rt:turn("other"))
    assert.are.equal(51, #begun)
    for i = 1, 50 do
      assert.are.equal(i, begun[i].turn)
      assert.are.equal("default", begun[i].session)
    end
    assert.are.equal("other", begun[51].session)
  end)

  it("never skip or double over many turns with chats, nested calls and a failing layer", function()
    local rt = H.runtime({
      ["10_log.lua"] = LOGGING,
      ["20_fail.lua"] = [[
local tg = require "toolgate"
tg.before_chat(function(ctx) if ctx.turn % 3 == 0 then error("every third turn") end end)
tg.after_chat(function(ctx) if ctx.turn % 5 == 0 then while true do end end end)
]],
    }, { policy_time_limit_ms = 100 })
    local events = H.record(rt)
    local seen = {}
    rt:layer { name = "host", before_chat = function(ctx) seen[#seen + 1] = ctx.turn end }
    local turns = 40
    for t = 1, turns do
      assert.are.equal(t, rt:turn_begin())
      for _ = 1, 2 do -- two model calls in one turn, a tool call after each
        assert(rt:chat_begin { model = "m" })
        assert(rt:chat_end(true, nil, { cost = 0.001 }))
        local out = H.call(rt, "nested", {})
        assert.are.equal("ok", out.status)
        assert.are.equal("ok", out.result.inner)
      end
    end
    -- the host layer saw each turn twice, in order: never skipped, never doubled
    assert.are.equal(2 * turns, #seen)
    for i, t in ipairs(seen) do assert.are.equal(math.floor((i + 1) / 2), t) end
    -- every call (the nested ones too) carried the turn it was made in
    local per_turn = {}
    for _, ev in ipairs(events) do
      if ev.type == "call_start" and ev.tool ~= "log" then
        per_turn[ev.turn] = (per_turn[ev.turn] or 0) + 1
      end
    end
    for t = 1, turns do assert.are.equal(4, per_turn[t], "turn " .. t) end
    -- the failing layers were logged each time and skipped
    local errors = {}
    for _, ev in ipairs(events) do
      if ev.type == "layer_error" then errors[#errors + 1] = ev end
    end
    local before = 0
    local after = 0
    for _, ev in ipairs(errors) do
      if ev.layer == "before_chat" then
        before = before + 1
        assert.is_truthy(H.has(ev.error, "every third turn"))
        assert.are.equal(0, ev.turn % 3)
      else
        assert.are.equal("after_chat", ev.layer)
        after = after + 1
        assert.is_truthy(H.has(ev.error, "time limit"))
        assert.are.equal(0, ev.turn % 5)
      end
      assert.is_truthy(H.has(ev.where, "20_fail.lua"))
    end
    assert.are.equal(2 * math.floor(turns / 3), before)
    assert.are.equal(2 * math.floor(turns / 5), after)
    -- and the layers after the failing one still ran on every chat
    local log = policy_log(rt)
    local p2 = 0
    for _, line in ipairs(log) do if line:match("^p2%.after") then p2 = p2 + 1 end end
    assert.are.equal(2 * turns, p2)
  end)

  it("are what a call carries unless the host gives one", function()
    local rt = H.runtime(LOGGING)
    local starts = H.record(rt, "call_start")
    rt:turn_begin("s1")
    rt:turn_begin("s1")
    H.call(rt, "echo", {}, { session = "s1" })
    H.call(rt, "echo", {}, { session = "s2" })
    H.call(rt, "echo", {}, { session = "s1", turn = 9 })
    assert.are.same({ 2, 0, 9 }, { starts[1].turn, starts[2].turn, starts[3].turn })
  end)
end)

describe("chat layers", function()
  after_each(H.cleanup)

  it("run host layers, then policy layers, each in registration order", function()
    local rt = H.runtime(LOGGING)
    local order = {}
    rt:layer { before_chat = function(ctx) order[#order + 1] = "h1.before " .. ctx.turn end,
               after_chat = function(ctx, ok, err)
                 order[#order + 1] = ("h1.after %s %s"):format(tostring(ok), tostring(err)) end }
    rt:layer { before_chat = function() order[#order + 1] = "h2.before" end,
               after_chat = function() order[#order + 1] = "h2.after" end }
    rt:turn_begin()
    assert(rt:chat_begin { model = "big", request = { messages = 3 } })
    assert(rt:chat_end(false, "rate limited"))
    assert.are.same({ "h1.before 1", "h2.before", "h1.after false rate limited", "h2.after" }, order)
    assert.are.same({ "p1.before 1", "p2.before 1", "p1.after 1 false rate limited", "p2.after 1" },
                    policy_log(rt))
  end)

  it("give each layer the chat's facts, in a table of its own", function()
    local rt = H.runtime [[
local tg = require "toolgate"
local seen = {}
tg.before_chat(function(ctx)
  ctx.turn = 99; ctx.model = "evil"; ctx.request.messages = 0
  setmetatable(ctx, { __index = function() return "lie" end })
end)
tg.before_chat(function(ctx) seen.before = { ctx.turn, ctx.model, ctx.request.messages, ctx.session, ctx.project } end)
tg.after_chat(function(ctx, ok, err) seen.after = { ok, err == nil, ctx.usage.cost, ctx.usage.model, ctx.usage.input_tokens } end)
tg.tool { name = "seen", read_only = true, run = function() return seen end }
]]
    rt:turn_begin("s")
    assert(rt:chat_begin { session = "s", model = "big", project = "/p", request = { messages = 3 } })
    assert(rt:chat_end(true, nil, { cost = 0.25, input_tokens = 100 }, "s"))
    local seen = H.call(rt, "seen", {}).result
    assert.are.same({ 1, "big", 3, "s", "/p" }, seen.before)
    assert.are.same({ true, true, 0.25, "big", 100 }, seen.after)
  end)

  it("log a host layer that raises and skip it", function()
    local rt = H.runtime(LOGGING)
    local errors = H.record(rt, "layer_error")
    local ran = 0
    rt:layer { name = "broken", before_chat = function() error("host layer broke") end }
    rt:layer { before_chat = function() ran = ran + 1 end }
    rt:turn_begin()
    assert(rt:chat_begin {})
    assert(rt:chat_end(true))
    assert.are.equal(1, ran)
    assert.are.equal(1, #errors)
    assert.are.equal("before_chat", errors[1].layer)
    assert.are.equal("C layer 'broken'", errors[1].where)
    assert.is_truthy(H.has(errors[1].error, "host layer broke"))
    assert.are.equal(1, errors[1].turn)
    assert.are.same({ "p1.before 1", "p2.before 1", "p1.after 1 true nil", "p2.after 1" }, policy_log(rt))
  end)

  it("stop a policy layer that loops, allocates without end or yields, and go on", function()
    local rt = H.runtime([[
local tg = require "toolgate"
local ran = 0
tg.before_chat(function() while true do end end)
-- 1 MiB pieces: the 16 MiB cap, not the time limit, stops it within a few
-- dozen allocations, even under ASan on a busy machine (64 KiB pieces took
-- 230 ms there; the limit is 1 s, as a loaded machine stretches those
-- few milliseconds too)
tg.before_chat(function() local t = {} for i = 1, 1e9 do t[i] = ("x"):rep(1048576) .. i end end)
tg.before_chat(function() coroutine.yield() end)
tg.before_chat(function() error(setmetatable({}, { __tostring = function() error("no") end })) end)
tg.before_chat(function() ran = ran + 1 end)
tg.tool { name = "ran", read_only = true, run = function() return { n = ran } end }
]], { policy_time_limit_ms = 1000, policy_memory_cap = 16 * 1024 * 1024 })
    local errors = H.record(rt, "layer_error")
    rt:turn_begin()
    assert(rt:chat_begin {})
    assert.are.equal(4, #errors)
    assert.is_truthy(H.has(errors[1].error, "time limit"))
    assert.is_truthy(H.has(errors[2].error, "memory"))
    assert.is_truthy(H.has(errors[3].error, "yield"))
    assert.is_truthy(H.has(errors[4].error, "not a string"))
    assert.are.equal(1, H.call(rt, "ran", {}).result.n)
    assert(rt:chat_end(true))
  end)

  it("keep one chat open per session", function()
    local rt = H.runtime(LOGGING)
    assert(rt:chat_begin { session = "a" })
    local ok, err, code = rt:chat_begin { session = "a" }
    assert.is_nil(ok)
    assert.are.equal("EBUSY", code)
    assert.is_truthy(H.has(err, "chat open"))
    assert(rt:chat_begin { session = "b" }) -- another session is free
    assert(rt:chat_end(true, nil, nil, "a"))
    ok, err, code = rt:chat_end(true, nil, nil, "a")
    assert.is_nil(ok)
    assert.are.equal("ENOENT", code)
    assert(rt:chat_end(true, nil, nil, "b"))
  end)

  it("refuse bad arguments, naming them", function()
    local rt = H.runtime(LOGGING)
    assert.has_error(function() rt:chat_begin { modle = "x" } end,
      "rt:chat_begin: unknown option 'modle' (known: session, model, project, request)")
    assert(rt:chat_begin {})
    assert.has_error(function() rt:chat_end(true, nil, { cost = -1 }) end,
      "rt:chat_end: usage.cost must be a number >= 0")
    assert.has_error(function() rt:chat_end(true, nil, { tokens = 1 }) end)
    assert.has_error(function() rt:chat_end("yes") end)
    assert(rt:chat_end(true))
  end)

  it("are the new generation's after a reload", function()
    local rt, dir = H.runtime(LOGGING)
    rt:turn_begin()
    H.write(dir .. "/10_policy.lua", [[
local tg = require "toolgate"
local log = {}
tg.before_chat(function(ctx) log[#log + 1] = "new " .. ctx.turn end)
tg.tool { name = "log", read_only = true, run = function() return log end }
]])
    assert(rt:reload())
    assert(rt:chat_begin {})
    assert(rt:chat_end(true))
    assert.are.same({ "new 1" }, policy_log(rt))
    assert.are.equal(1, rt:turn()) -- a reload does not touch turns
  end)

  it("may be added and removed from inside a layer: from the next round on", function()
    local rt = H.runtime(LOGGING)
    local order, id2 = {}, nil
    local id1
    id1 = rt:layer { before_chat = function()
      order[#order + 1] = "l1"
      rt:remove_layer(id1)
      rt:layer { before_chat = function() order[#order + 1] = "l3" end }
    end }
    id2 = rt:layer { before_chat = function() order[#order + 1] = "l2" end }
    for _ = 1, 2 do
      assert(rt:chat_begin {})
      assert(rt:chat_end(true))
    end
    assert.are.same({ "l1", "l2", "l2", "l3" }, order)
    rt:remove_layer(id2)
  end)
end)

describe("tool layers", function()
  after_each(H.cleanup)

  it("run around each call that reaches its tool, with its turn and result", function()
    local rt = H.runtime(H.lib.tools .. [[
tg.tool { name = "fails", read_only = true, run = function() return nil, "it broke" end }
tg.rule { name = "no-touch", tools = "touch", check = function() return tg.deny("no") end }
]])
    local log = {}
    rt:layer { before_tool = function(ctx) log[#log + 1] = ("before %s %s %d"):format(ctx.tool, ctx.call_id, ctx.turn) end,
               after_tool = function(ctx, ok, err) log[#log + 1] = ("after %s %s %s"):format(ctx.tool, tostring(ok), tostring(err)) end }
    rt:turn_begin()
    rt:turn_begin()
    H.call(rt, "echo", {}, { id = "c1" })
    H.call(rt, "fails", {}, { id = "c2" })
    H.call(rt, "touch", {}, { id = "c3" }) -- denied: the tool never runs
    assert.are.same({ "before echo c1 2", "after echo true nil", "before fails c2 2",
                      "after fails false it broke" }, log)
  end)

  it("log a tool layer that raises; the call goes on", function()
    local rt = H.runtime(H.lib.tools)
    local errors = H.record(rt, "layer_error")
    rt:layer { name = "t", before_tool = function() error("nope") end, after_tool = function() error("nope again") end }
    local out = H.call(rt, "echo", { a = 1 })
    assert.are.equal("ok", out.status)
    assert.are.same({ a = 1 }, out.result)
    assert.are.equal(2, #errors)
    assert.are.same({ "before_tool", "after_tool" }, { errors[1].layer, errors[2].layer })
    assert.are.equal("echo", errors[1].tool)
    assert.is_string(errors[1].call_id)
  end)
end)
