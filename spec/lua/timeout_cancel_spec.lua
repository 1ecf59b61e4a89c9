-- Timeout, cancel, parallel calls and progress.
local H = require "spec.lua.helpers"

local policy = [[
local tg = require "toolgate"

tg.tool { name = "sleeper", read_only = true, timeout_ms = 30,
  run = function(args, ctx)
    ctx.partial({ so_far = "half" })
    ctx.sleep(5000)
    return { finished = true }
  end }

-- attempt 1 hangs past the 80 ms timeout; attempt 2 needs 50 ms, which
-- fits only in a fresh deadline (a shared one expired at 80 ms).
tg.tool { name = "second_try", read_only = true, timeout_ms = 80,
  retry = { attempts = 3, initial_ms = 1 },
  run = function(args, ctx)
    if ctx.attempt == 1 then ctx.sleep(5000) else ctx.sleep(50) end
    return { attempt = ctx.attempt }
  end }

tg.tool { name = "always_slow", read_only = true, timeout_ms = 20,
  retry = { attempts = 3, initial_ms = 1 },
  run = function(args, ctx) ctx.sleep(5000); return "never" end }

tg.tool { name = "long", read_only = true,
  run = function(args, ctx)
    ctx.partial({ lines = 1 })
    ctx.sleep(args.ms or 5000)
    return { lines = 2, done = true }
  end }

tg.tool { name = "fast", read_only = true,
  run = function(args, ctx) ctx.sleep(1); return "fast" end }

tg.tool { name = "instant", read_only = true, run = function() return "instant" end }

tg.tool { name = "halfway", read_only = true,
  run = function(args, ctx)
    ctx.progress(1, 2, "half")
    ctx.sleep(150)
    return "done"
  end }

tg.tool { name = "asked", run = function() return "asked ran" end }
]]

describe("timeout", function()
  after_each(H.cleanup)

  it("stops an attempt past timeout_ms: status timeout, phase TIMEOUT, partial result kept", function()
    local rt = H.runtime(policy)
    local out = H.call(rt, "sleeper", {})
    assert.are.equal("timeout", out.status)
    assert.are.equal("TIMEOUT", out.error.phase)
    assert.are.same({ so_far = "half" }, out.result)
    assert.are.equal(1, out.attempts)
  end)

  it("uses the runtime's timeout_ms for tools that set none", function()
    local rt = H.runtime(policy, { timeout_ms = 30 })
    local out = H.call(rt, "long", {})
    assert.are.equal("timeout", out.status)
    assert.are.same({ lines = 1 }, out.result)
  end)

  it("retries a timed-out attempt with a fresh deadline", function()
    local rt = H.runtime(policy)
    local events = H.record(rt)
    local out, h = H.call(rt, "second_try", {})
    assert.are.equal("ok", out.status)
    assert.are.equal(2, out.attempts)
    assert.are.same({ attempt = 2 }, out.result)
    local retries = H.of_call(events, h.id, "retry")
    assert.are.equal(1, #retries)
    assert.are.equal("TIMEOUT", retries[1].code)
  end)

  it("reports timeout after every attempt timed out", function()
    local rt = H.runtime(policy)
    local out = H.call(rt, "always_slow", {})
    assert.are.equal("timeout", out.status)
    assert.are.equal(3, out.attempts)
  end)
end)

describe("cancel", function()
  after_each(H.cleanup)

  it("handle:cancel() while the tool sleeps: status cancelled, partial output kept", function()
    local rt = H.runtime(policy)
    local events = H.record(rt)
    local h = assert(rt:call("long", {}))
    -- let the attempt start
    while H.count(events, h.id, "attempt") == 0 do rt:run_once() end
    assert.is_false(h:done())
    assert.is_true(h:cancel())
    local out = h:wait()
    assert.are.equal("cancelled", out.status)
    assert.are.equal("CANCEL", out.error.phase)
    assert.are.same({ lines = 1 }, out.result)
    assert.is_nil(out.result.done)
  end)

  it("cancel returns nil and a message once the call has ended", function()
    local rt = H.runtime(policy)
    local out, h = H.call(rt, "instant", {})
    assert.are.equal("ok", out.status)
    local ok, err = h:cancel()
    assert.is_nil(ok)
    assert.is_string(err)
  end)

  it("cancel before the approval is answered: cancelled, the tool does not run", function()
    local pending
    local rt = H.runtime(policy, { approve = function(req) pending = req end })
    local events = H.record(rt)
    local h = assert(rt:call("asked", {}))
    assert.is_table(pending)
    assert.is_true(h:cancel())
    local out = h:wait()
    assert.are.equal("cancelled", out.status)
    assert.are.equal(0, H.count(events, h.id, "attempt"))
    -- the approval is gone: answering it now finds nothing
    local ok = rt:answer(pending.approval_id, "approve")
    assert.is_nil(ok)
  end)

  it("cancelling one call leaves a parallel call unaffected", function()
    local rt = H.runtime(policy)
    local a = assert(rt:call("long", { ms = 5000 }))
    local b = assert(rt:call("long", { ms = 30 }))
    assert.is_true(a:cancel())
    local outb = b:wait()
    local outa = a:wait()
    assert.are.equal("cancelled", outa.status)
    assert.are.equal("ok", outb.status)
    assert.are.same({ lines = 2, done = true }, outb.result)
  end)

  it("a slow tool does not delay a parallel fast call: the fast one finishes first", function()
    local rt = H.runtime(policy)
    local order = {}
    local slow = assert(rt:call("long", { ms = 300 }, { on_done = function(o) order[#order + 1] = "slow" end }))
    local fast = assert(rt:call("fast", {}, { on_done = function(o) order[#order + 1] = "fast" end }))
    rt:run()
    assert.are.same({ "fast", "slow" }, order)
    assert.are.equal("ok", slow:outcome().status)
    assert.are.equal("ok", fast:outcome().status)
  end)
end)

describe("progress", function()
  after_each(H.cleanup)

  it("a long tool emits progress events with elapsed_ms and current/total/message", function()
    local rt = H.runtime(policy, { progress_interval_ms = 20 })
    local got = {}
    local out = H.call(rt, "halfway", {}, { on_progress = function(ev) got[#got + 1] = ev end })
    assert.are.equal("ok", out.status)
    assert.is_true(#got >= 2, "expected several progress events, got " .. #got)
    local prev = -1
    for _, ev in ipairs(got) do
      assert.are.equal("progress", ev.type)
      assert.is_number(ev.elapsed_ms)
      assert.is_true(ev.elapsed_ms > prev)
      prev = ev.elapsed_ms
      assert.are.equal(1, ev.current)
      assert.are.equal(2, ev.total)
      assert.are.equal("half", ev.message)
    end
  end)

  it("progress events also reach rt:on_event subscribers", function()
    local rt = H.runtime(policy, { progress_interval_ms = 20 })
    local events = H.record(rt, "progress")
    local _, h = H.call(rt, "halfway", {})
    assert.is_true(H.count(events, h.id, "progress") >= 2)
  end)

  it("a tool that finishes well under the interval emits none", function()
    local rt = H.runtime(policy, { progress_interval_ms = 20 })
    local events = H.record(rt)
    local got = 0
    local _, h1 = H.call(rt, "instant", {}, { on_progress = function() got = got + 1 end })
    local rt2 = H.runtime(policy, { progress_interval_ms = 1000 })
    local events2 = H.record(rt2)
    local _, h2 = H.call(rt2, "fast", {}, { on_progress = function() got = got + 1 end })
    assert.are.equal(0, got)
    assert.are.equal(0, H.count(events, h1.id, "progress"))
    assert.are.equal(0, H.count(events2, h2.id, "progress"))
  end)
end)

describe("cancel from event handlers", function()
  after_each(H.cleanup)

  for _, answer in ipairs { "approve", "always", "reject" } do
    it("a cancel from the `approval` event ends the call once (answer: " .. answer .. ")", function()
      local rt = H.runtime(H.lib.tools)
      local pending
      rt:set_approver(function(req) pending = req.approval_id end) -- answers later
      local dones = 0
      local h = assert(rt:call("touch", {}, { on_done = function() dones = dones + 1 end }))
      rt:on_event("approval", function() h:cancel() end)
      rt:run_once()
      assert.is_true(rt:answer(pending, answer))
      local out = h:wait()
      rt:run()
      assert.are.equal("cancelled", out.status)
      assert.are.equal(1, dones)
      assert.are.equal(0, H.runs(rt))
    end)
  end

  it("a cancel from the `approval` event of a timed-out ask ends the call once", function()
    local rt = H.runtime(H.lib.tools, { approval_timeout_ms = 20 })
    rt:set_approver(function() end) -- never answers
    local dones = 0
    local h = assert(rt:call("touch", {}, { on_done = function() dones = dones + 1 end }))
    rt:on_event("approval", function() h:cancel() end)
    local out = h:wait()
    rt:run()
    assert.are.equal(1, dones)
    assert.are.equal("cancelled", out.status)
  end)

  it("a cancel from the `attempt` event stops the tool before it starts", function()
    local rt = H.runtime(H.lib.tools)
    local pending
    rt:set_approver(function(req) pending = req.approval_id end)
    local h = assert(rt:call("touch", {}))
    rt:on_event("attempt", function() h:cancel() end)
    rt:run_once()
    assert.is_true(rt:answer(pending, "approve")) -- the attempt starts now
    local out = h:wait()
    assert.are.equal("cancelled", out.status)
    assert.are.equal(0, H.runs(rt))
  end)
end)
