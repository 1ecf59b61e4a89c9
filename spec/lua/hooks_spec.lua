-- Pre-hooks and post-hooks: abort, rewrite (judged again), short-circuit,
-- ordering, result rewrite.
local H = require "spec.lua.helpers"

local allow_all = [[
local tg = require "toolgate"
tg.rule { name = "allow-all", priority = 100, check = function() return tg.allow() end }
]]

describe("pre-hooks", function()
  after_each(H.cleanup)

  it("tg.abort(reason) denies the call in PRE_HOOK and the tool does not run", function()
    local rt = H.runtime {
      ["00_tools.lua"] = H.lib.tools,
      ["10_allow.lua"] = allow_all,
      ["20_hook.lua"] = [[
local tg = require "toolgate"
tg.before_tool("touch", function(call) return tg.abort("touching is paused") end)
]],
    }
    local events = H.record(rt)
    local out, h = H.call(rt, "touch", {})
    assert.are.equal("denied", out.status)
    assert.are.equal("PRE_HOOK", out.error.phase)
    assert.is_true(H.has(out.error.message, "touching is paused"))
    assert.are.equal(0, H.count(events, h.id, "attempt"))
    assert.are.equal(0, out.attempts)
    assert.is_nil(out.result)
    assert.are.equal(0, H.runs(rt))
  end)

  it("tg.args(new_args) rewrites what the tool receives", function()
    local rt = H.runtime {
      ["00_tools.lua"] = H.lib.tools,
      ["20_hook.lua"] = [[
local tg = require "toolgate"
tg.before_tool("echo", function(call)
  return tg.args({ text = call.args.text:upper(), added = true })
end)
]],
    }
    local events = H.record(rt)
    local out, h = H.call(rt, "echo", { text = "quiet" })
    assert.are.equal("ok", out.status)
    assert.are.same({ text = "QUIET", added = true }, out.result)
    assert.are.equal(1, H.count(events, h.id, "rewrite"))
  end)

  it("a change made to call.args in place reaches the tool too", function()
    local rt = H.runtime {
      ["00_tools.lua"] = H.lib.tools,
      ["20_hook.lua"] = [[
local tg = require "toolgate"
tg.before_tool("echo", function(call) call.args.n = call.args.n + 1 end)
]],
    }
    local out = H.call(rt, "echo", { n = 1 })
    assert.are.equal("ok", out.status)
    assert.are.equal(2, out.result.n)
  end)

  it("a rewrite is judged again by the rules: rewriting to a denied value is denied", function()
    local rt = H.runtime {
      ["00_tools.lua"] = H.lib.tools,
      ["10_rules.lua"] = [[
local tg = require "toolgate"
tg.rule { name = "no-evil", priority = 1, tools = { "touch" }, check = function(call)
  if call.args.x == "evil" then return tg.deny("evil is not allowed") end
end }
tg.rule { name = "allow-all", priority = 100, check = function() return tg.allow() end }
]],
      ["20_hook.lua"] = [[
local tg = require "toolgate"
tg.before_tool("touch", function(call) return tg.args({ x = "evil" }) end)
]],
    }
    local events = H.record(rt)
    local out, h = H.call(rt, "touch", { x = "good" })
    assert.are.equal("denied", out.status)
    assert.are.equal("AUTHORIZE", out.error.phase)
    assert.are.equal("no-evil", out.decision.rule)
    assert.is_true(H.has(out.error.message, "evil is not allowed"))
    local decisions = H.of_call(events, h.id, "decision")
    assert.are.equal(2, #decisions)
    assert.are.equal("allow", decisions[1].verdict)
    assert.are.equal("deny", decisions[2].verdict)
    assert.are.equal(0, H.count(events, h.id, "attempt"))
    assert.are.equal(0, H.runs(rt))
  end)

  it("tg.result(v) short-circuits: the value is returned, the tool does not run, post-hooks still run", function()
    local rt = H.runtime {
      ["00_tools.lua"] = H.lib.tools,
      ["10_allow.lua"] = allow_all,
      ["20_hook.lua"] = [[
local tg = require "toolgate"
tg.before_tool("touch", function(call) return tg.result({ cached = true }) end)
tg.after_tool("touch", function(call, res)
  local r = res.result
  r.post_hook_saw = res.status
  return tg.result(r)
end)
]],
    }
    local events = H.record(rt)
    local out, h = H.call(rt, "touch", {})
    assert.are.equal("ok", out.status)
    assert.are.same({ cached = true, post_hook_saw = "ok" }, out.result)
    assert.are.equal(0, H.count(events, h.id, "attempt"))
    assert.are.equal(1, H.count(events, h.id, "call_end"))
    assert.are.equal(0, H.runs(rt))
  end)

  it("runs \"*\" hooks before tool-specific ones regardless of registration order", function()
    local rt = H.runtime {
      ["00_tools.lua"] = H.lib.tools,
      ["10_specific.lua"] = [[
local tg = require "toolgate"
tg.before_tool("echo", function(call) call.args.trace = call.args.trace .. "specific1," end)
]],
      ["20_star.lua"] = [[
local tg = require "toolgate"
tg.before_tool("*", function(call) call.args.trace = call.args.trace .. "star1," end)
tg.before_tool("echo", function(call) call.args.trace = call.args.trace .. "specific2," end)
tg.before_tool("*", function(call) call.args.trace = call.args.trace .. "star2," end)
]],
    }
    local out = H.call(rt, "echo", { trace = "" })
    assert.are.equal("ok", out.status)
    assert.are.equal("star1,star2,specific1,specific2,", out.result.trace)
  end)

  it("stops at the first hook that aborts: later hooks do not run", function()
    local rt = H.runtime {
      ["00_tools.lua"] = H.lib.tools,
      ["20_hooks.lua"] = [[
local tg = require "toolgate"
local later_ran = false
tg.before_tool("echo", function(call)
  if call.args.check then return tg.result({ later_ran = later_ran }) end
  return tg.abort("stop here")
end)
tg.before_tool("echo", function(call) later_ran = true end)
]],
    }
    local out = H.call(rt, "echo", {})
    assert.are.equal("denied", out.status)
    local check = H.call(rt, "echo", { check = true })
    assert.are.same({ later_ran = false }, check.result)
  end)
end)

describe("post-hooks", function()
  after_each(H.cleanup)

  it("run in reverse registration order", function()
    local rt = H.runtime {
      ["00_tools.lua"] = H.lib.tools,
      ["20_hooks.lua"] = [[
local tg = require "toolgate"
local function mark(name)
  return function(call, res) return tg.result(res.result .. name .. ",") end
end
tg.after_tool("*", mark("A"))
tg.after_tool("*", mark("B"))
tg.after_tool("*", mark("C"))
tg.tool { name = "start", read_only = true, run = function() return "" end }
]],
    }
    local out = H.call(rt, "start", {})
    assert.are.equal("ok", out.status)
    assert.are.equal("C,B,A,", out.result)
  end)

  it("tg.result(v) rewrites the result the caller gets", function()
    local rt = H.runtime {
      ["00_tools.lua"] = H.lib.tools,
      ["20_hooks.lua"] = [[
local tg = require "toolgate"
tg.after_tool("echo", function(call, res)
  if res.result.secret then return tg.result({ secret = "[redacted]" }) end
end)
]],
    }
    local out = H.call(rt, "echo", { secret = "hunter2" })
    assert.are.equal("ok", out.status)
    assert.are.same({ secret = "[redacted]" }, out.result)
  end)

  it("see the tool's error and can turn it into a result", function()
    local rt = H.runtime {
      ["20_hooks.lua"] = [[
local tg = require "toolgate"
tg.tool { name = "fails", read_only = true, run = function() return nil, { code = "NOPE", message = "it failed", retryable = false } end }
tg.after_tool("fails", function(call, res)
  return tg.result({ recovered_from = res.error.code, was = res.status })
end)
]],
    }
    local out = H.call(rt, "fails", {})
    assert.are.equal("ok", out.status)
    assert.are.same({ recovered_from = "NOPE", was = "error" }, out.result)
    assert.is_nil(out.error)
  end)
end)
