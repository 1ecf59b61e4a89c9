-- Approve: the human in the loop (approve, always, reject with guidance,
-- timeout, answering later, approve modes).
local H = require "spec.lua.helpers"

-- touch is not read-only, so with no rule it is asked.
local policy = H.lib.tools

describe("approvals", function()
  after_each(H.cleanup)

  it("an approved ask runs the tool", function()
    local seen
    local rt = H.runtime(policy, { approve = function(req) seen = req; return "approve" end })
    local out, h = H.call(rt, "touch", { path = "a.txt" })
    assert.are.equal("ok", out.status)
    assert.are.same({ ran = true, args = { path = "a.txt" } }, out.result)
    assert.are.equal(1, H.runs(rt))
    assert.are.equal("touch", seen.tool)
    assert.are.equal(h.id, seen.call_id)
    assert.are.same({ path = "a.txt" }, seen.args)
    assert.is_number(seen.approval_id)
  end)

  it("passes the rule's prompt and name to the approver", function()
    local seen
    local rt = H.runtime({
      ["00_tools.lua"] = policy,
      ["10_rule.lua"] = [[
local tg = require "toolgate"
tg.rule { name = "ask-touch", tools = { "touch" }, check = function(call) return tg.ask("touch " .. call.args.path .. "?") end }
]],
    }, { approve = function(req) seen = req; return "approve" end })
    local out = H.call(rt, "touch", { path = "b.txt" })
    assert.are.equal("ok", out.status)
    assert.are.equal("touch b.txt?", seen.prompt)
    assert.are.equal("ask-touch", seen.rule)
  end)

  it("\"always\" is remembered: a second identical call is not asked", function()
    local asked = 0
    local rt = H.runtime(policy, { approve = function() asked = asked + 1; return "always" end })
    assert.are.equal("ok", H.call(rt, "touch", { path = "a" }).status)
    assert.are.equal("ok", H.call(rt, "touch", { path = "a" }).status)
    assert.are.equal(1, asked)
    assert.are.equal(2, H.runs(rt))
  end)

  it("\"always\" with the default scope covers the whole tool", function()
    local asked = 0
    local rt = H.runtime(policy, { approve = function() asked = asked + 1; return "always" end })
    H.call(rt, "touch", { path = "a" })
    local out = H.call(rt, "touch", { path = "other" })
    assert.are.equal("ok", out.status)
    assert.are.equal(1, asked)
  end)

  it("\"always\" with scope = \"args\" covers only the same args", function()
    local asked = 0
    local rt = H.runtime(policy, {
      approve = function() asked = asked + 1; return "always", { scope = "args" } end,
    })
    assert.are.equal("ok", H.call(rt, "touch", { path = "a" }).status)
    assert.are.equal("ok", H.call(rt, "touch", { path = "a" }).status)
    assert.are.equal(1, asked)
    assert.are.equal("ok", H.call(rt, "touch", { path = "b" }).status)
    assert.are.equal(2, asked)
  end)

  it("\"always\" is remembered per session", function()
    local asked = 0
    local rt = H.runtime(policy, { approve = function() asked = asked + 1; return "always" end })
    H.call(rt, "touch", {}, { session = "s1" })
    H.call(rt, "touch", {}, { session = "s2" })
    assert.are.equal(2, asked)
  end)

  it("reject with guidance: status rejected, guidance in the message, says the tool did not run", function()
    local rt = H.runtime(policy, {
      approve = function() return "reject", { guidance = "use the staging bucket instead" } end,
    })
    local events = H.record(rt)
    local out, h = H.call(rt, "touch", {})
    assert.are.equal("rejected", out.status)
    assert.are.equal("APPROVE", out.error.phase)
    assert.is_true(H.has(out.error.message, "use the staging bucket instead"), out.error.message)
    assert.is_true(H.has(out.error.message, "did not run"), out.error.message)
    assert.are.equal(0, H.count(events, h.id, "attempt"))
    assert.are.equal(0, H.runs(rt))
  end)

  it("accepts guidance given as a plain string", function()
    local rt = H.runtime(policy, { approve = function() return "reject", "not now" end })
    local out = H.call(rt, "touch", {})
    assert.are.equal("rejected", out.status)
    assert.is_true(H.has(out.error.message, "not now"), out.error.message)
  end)

  it("an ask nobody answers is rejected after approval_timeout_ms", function()
    local asked = 0
    local rt = H.runtime(policy, {
      approval_timeout_ms = 50,
      approve = function() asked = asked + 1 end, -- never answers
    })
    local out = H.call(rt, "touch", {})
    assert.are.equal(1, asked)
    assert.are.equal("rejected", out.status)
    assert.are.equal("APPROVE", out.error.phase)
    assert.is_true(H.has(out.error.message, "did not run"), out.error.message)
    assert.are.equal(0, H.runs(rt))
  end)

  it("a pending ask can be answered later with rt:answer", function()
    local pending
    local rt = H.runtime(policy, { approve = function(req) pending = req end })
    local h = assert(rt:call("touch", { path = "later" }))
    assert.is_table(pending)
    for _ = 1, 5 do rt:run_once() end
    assert.is_false(h:done())
    assert.is_true(rt:answer(pending.approval_id, "approve"))
    local out = h:wait()
    assert.are.equal("ok", out.status)
    assert.are.equal(1, H.runs(rt))
  end)

  it("rt:answer with reject and guidance rejects a pending ask", function()
    local pending
    local rt = H.runtime(policy, { approve = function(req) pending = req end })
    local h = assert(rt:call("touch", {}))
    assert.is_true(rt:answer(pending.approval_id, "reject", { guidance = "ask Bob" }))
    local out = h:wait()
    assert.are.equal("rejected", out.status)
    assert.is_true(H.has(out.error.message, "ask Bob"), out.error.message)
  end)

  it("a pending ask can be answered from an on_event handler", function()
    local rt = H.runtime(policy, { approve = function() end })
    rt:on_event("approval_request", function(ev)
      assert(rt:answer(ev.approval_id, "approve"))
    end)
    local out = H.call(rt, "touch", {})
    assert.are.equal("ok", out.status)
    assert.are.equal(1, H.runs(rt))
  end)

  it("an ask answered from an approval_request handler is not also put to the approver", function()
    local asked = 0
    local rt = H.runtime(policy, { approve = function() asked = asked + 1; return "reject" end })
    rt:on_event("approval_request", function(ev)
      assert(rt:answer(ev.approval_id, "approve"))
    end)
    local out = H.call(rt, "touch", {})
    assert.are.equal("ok", out.status)
    assert.are.equal(0, asked)
  end)

  it("a pending ask can be answered from a callback driven by the loop's timers", function()
    local pending
    local rt = H.runtime({
      ["00_tools.lua"] = policy,
      ["10_slow.lua"] = [[
local tg = require "toolgate"
tg.tool { name = "slow", read_only = true, run = function(args, ctx) ctx.sleep(200); return "slow done" end }
]],
    }, { progress_interval_ms = 10, approve = function(req) pending = req end })
    local asked = assert(rt:call("touch", {}))
    local answered = false
    local slow = assert(rt:call("slow", {}, {
      on_progress = function()
        if not answered then
          answered = true
          assert(rt:answer(pending.approval_id, "approve"))
        end
      end,
    }))
    local out = asked:wait()
    assert.is_true(answered)
    assert.are.equal("ok", out.status)
    assert.are.equal("ok", slow:wait().status)
  end)

  it("rt:answer returns nil and a message when nothing waits under that id", function()
    local rt = H.runtime(policy, { approve = "allow" })
    local ok, err = rt:answer(12345, "approve")
    assert.is_nil(ok)
    assert.is_string(err)
  end)

  it("approve = \"allow\" approves every ask", function()
    local rt = H.runtime(policy, { approve = "allow" })
    local out = H.call(rt, "touch", {})
    assert.are.equal("ok", out.status)
    assert.are.equal(1, H.runs(rt))
  end)

  it("approve = \"deny\" rejects every ask", function()
    local rt = H.runtime(policy, { approve = "deny" })
    local out = H.call(rt, "touch", {})
    assert.are.equal("rejected", out.status)
    assert.are.equal("APPROVE", out.error.phase)
    assert.are.equal(0, H.runs(rt))
  end)

  it("rt:set_approver switches the approver at run time", function()
    local rt = H.runtime(policy, { approve = "deny" })
    assert.are.equal("rejected", H.call(rt, "touch", {}).status)
    rt:set_approver("allow")
    assert.are.equal("ok", H.call(rt, "touch", {}).status)
    rt:set_approver(function() return "reject", "fn says no" end)
    local out = H.call(rt, "touch", {})
    assert.are.equal("rejected", out.status)
    assert.is_true(H.has(out.error.message, "fn says no"))
  end)

  it("an allowed call never reaches the approver", function()
    local asked = 0
    local rt = H.runtime(policy, { approve = function() asked = asked + 1; return "approve" end })
    assert.are.equal("ok", H.call(rt, "echo", {}).status)
    assert.are.equal(0, asked)
  end)
end)
