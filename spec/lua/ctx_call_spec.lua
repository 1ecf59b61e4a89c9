-- ctx.call: a Lua tool calling another tool through the whole chain.
local H = require "spec.lua.helpers"

local TOOLS = [[
local tg = require "toolgate"
tg.tool { name = "echo", read_only = true, run = function(args) return args end }
tg.tool { name = "slow", read_only = true,
  run = function(args, ctx) ctx.sleep(args.ms or 50); return "slept" end }
tg.tool { name = "outer", read_only = true, run = function(args, ctx)
  local o, err = ctx.call(args.tool or "echo", args.args or { x = 1 })
  if not o then return { err = err } end
  return { status = o.status, result = o.result, id = o.id,
           code = o.error and o.error.code, rule = o.decision.rule }
end }
tg.tool { name = "recurse", read_only = true, run = function(args, ctx)
  local o, err = ctx.call("recurse", {})
  if not o then return { err = err, depth = 1 } end
  if o.status ~= "ok" then return { inner = o.status } end
  return { err = o.result.err, depth = o.result.depth + 1 }
end }
tg.rule { name = "no-evil-echo", tools = { "echo" }, check = function(call)
  if call.args.x == "evil" then return tg.deny("evil") end end }
tg.rule { name = "record-parent", tools = { "echo" }, check = function(call)
  if call.args.want_parent and call.metadata.parent_call then
    return tg.deny("parent " .. call.metadata.parent_call) end end }
]]

describe("ctx.call", function()
  after_each(H.cleanup)

  it("runs the inner tool through the chain and returns its outcome", function()
    local rt = H.runtime(TOOLS)
    local out = H.call(rt, "outer", {})
    assert.are.equal("ok", out.status)
    assert.are.equal("ok", out.result.status)
    assert.are.equal(1, out.result.result.x)
    assert.are.equal(out.id .. ".1", out.result.id)
  end)

  it("the inner call is judged by the rules: a deny reaches the outer tool", function()
    local rt = H.runtime(TOOLS)
    local out = H.call(rt, "outer", { args = { x = "evil" } })
    assert.are.equal("ok", out.status)
    assert.are.equal("denied", out.result.status)
    assert.are.equal("no-evil-echo", out.result.rule)
  end)

  it("the inner call carries parent_call in its metadata", function()
    local rt = H.runtime(TOOLS)
    local out = H.call(rt, "outer", { args = { want_parent = true } })
    assert.are.equal("denied", out.result.status)
    assert.are.equal("record-parent", out.result.rule)
  end)

  it("an unknown inner tool is an outcome, not a crash", function()
    local rt = H.runtime(TOOLS)
    local out = H.call(rt, "outer", { tool = "no_such_tool" })
    assert.are.equal("error", out.result.status)
    assert.are.equal("UNKNOWN_TOOL", out.result.code)
  end)

  it("a tool calling itself stops at the nesting limit with a clear message", function()
    local rt = H.runtime(TOOLS)
    local out = H.call(rt, "recurse", {})
    assert.are.equal("ok", out.status)
    assert.is_true(H.has(out.result.err, "nested deeper than 8"), out.result.err)
    -- the top-level call and 8 nested levels ran; the 9th level was refused
    assert.are.equal(9, out.result.depth)
  end)

  it("cancelling the outer call cancels the inner one", function()
    local rt = H.runtime(TOOLS)
    local ends = {}
    rt:on_event("call_end", function(ev) ends[ev.call_id] = ev.status end)
    local h = rt:call("outer", { tool = "slow", args = { ms = 5000 } })
    for _ = 1, 5 do rt:run_once() end
    assert.is_true(h:cancel())
    local out = h:wait()
    rt:run()
    assert.are.equal("cancelled", out.status)
    assert.are.equal("cancelled", ends[h.id .. ".1"])
  end)

  it("a waiting outer tool does not block a parallel call", function()
    local rt = H.runtime(TOOLS)
    local order = {}
    local slow = rt:call("outer", { tool = "slow", args = { ms = 200 } },
      { on_done = function() order[#order + 1] = "outer" end })
    local fast = rt:call("echo", { x = 2 },
      { on_done = function() order[#order + 1] = "echo" end })
    slow:wait()
    fast:wait()
    assert.are.same({ "echo", "outer" }, order)
  end)

  it("bad args to ctx.call raise in the tool with a clear message", function()
    local rt = H.runtime([[
      local tg = require "toolgate"
      tg.tool { name = "bad", read_only = true, run = function(args, ctx)
        return ctx.call("x", { f = function() end }) end }
    ]])
    local out = H.call(rt, "bad", {})
    assert.are.equal("error", out.status)
    assert.is_true(H.has(out.error.message, "ctx.call: the args are not JSON"),
                   out.error.message)
  end)
end)
