-- The call lifecycle as events show it and describe().
local H = require "spec.lua.helpers"

describe("stage order", function()
  after_each(H.cleanup)

  local policy = [[
local tg = require "toolgate"
tg.tool { name = "write", run = function(args) return { wrote = args.text } end }
tg.rule { name = "ask-writes", tools = { "write" }, check = function() return tg.ask("write?") end }
tg.before_tool("*", function(call) end)
tg.before_tool("write", function(call) end)
tg.after_tool("write", function(call, res) end)
]]

  it("emits call_start, decision, hooks, approval, attempt, call_end in that order", function()
    local rt = H.runtime(policy, { approve = function() return "approve" end })
    local events = H.record(rt)
    local out, h = H.call(rt, "write", { text = "hi" })
    assert.are.equal("ok", out.status)
    assert.are.same({ wrote = "hi" }, out.result)
    local types = H.types(events, h.id)
    assert.are.same({
      "call_start", "decision", "hook", "hook", "approval_request", "approval",
      "attempt", "hook", "call_end",
    }, types)
    local evs = H.of_call(events, h.id)
    assert.are.equal("before", evs[3].stage)
    assert.are.equal("before", evs[4].stage)
    assert.are.equal("after", evs[8].stage)
  end)

  it("numbers events with a strictly increasing seq", function()
    local rt = H.runtime(policy, { approve = function() return "approve" end })
    local events = H.record(rt)
    H.call(rt, "write", { text = "a" })
    H.call(rt, "write", { text = "b" })
    assert.is_true(#events >= 12)
    for i = 2, #events do
      assert.is_true(events[i].seq > events[i - 1].seq,
        ("seq %s after %s"):format(events[i].seq, events[i - 1].seq))
    end
  end)

  it("ends every call with one call_end that carries status and attempts", function()
    local rt = H.runtime(policy, { approve = function() return "approve" end })
    local events = H.record(rt)
    local out, h = H.call(rt, "write", { text = "x" })
    local ends = H.of_call(events, h.id, "call_end")
    assert.are.equal(1, #ends)
    assert.are.equal("ok", ends[1].status)
    assert.are.equal(1, ends[1].attempts)
    assert.are.equal(out.attempts, ends[1].attempts)
    assert.are.equal("ok", out.status)
  end)
end)

describe("describe()", function()
  after_each(H.cleanup)

  it("lists rules in evaluation order: priority, then registration", function()
    local rt = H.runtime {
      ["10_a.lua"] = [[
local tg = require "toolgate"
tg.rule { name = "late", priority = 50, check = function() end }
tg.rule { name = "tie-first", priority = 10, check = function() end }
tg.rule { name = "default-prio", check = function() end }
]],
      ["20_b.lua"] = [[
local tg = require "toolgate"
tg.rule { name = "tie-second", priority = 10, check = function() end }
tg.rule { name = "early", priority = -5, check = function() end }
]],
    }
    local d = rt:describe()
    local names = {}
    for i, r in ipairs(d.rules) do names[i] = r.name end
    assert.are.same({ "early", "tie-first", "tie-second", "late", "default-prio" }, names)
    assert.are.equal(1000, d.rules[5].priority)
  end)
end)
