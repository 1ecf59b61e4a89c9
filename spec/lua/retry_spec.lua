-- Retry: attempts, back-off growth and cap, jitter bounds, the retryable
-- predicate, and never retrying after deny or cancel.
local H = require "spec.lua.helpers"

local policy = [[
local tg = require "toolgate"

-- flaky fails while ctx.attempt <= args.fail_times, then succeeds.
tg.tool { name = "flaky", read_only = true,
  retry = { attempts = 4, initial_ms = 1, max_ms = 5, multiplier = 2 },
  run = function(args, ctx)
    if ctx.attempt <= args.fail_times then return nil, "flaky failure " .. ctx.attempt end
    return { attempt = ctx.attempt }
  end }

tg.tool { name = "growth", read_only = true,
  retry = { attempts = 6, initial_ms = 2, max_ms = 12, multiplier = 2 },
  run = function() return nil, "always fails" end }

tg.tool { name = "jittery", read_only = true,
  retry = { attempts = 40, initial_ms = 4, max_ms = 4, multiplier = 1, jitter = 0.5 },
  run = function() return nil, "always fails" end }

tg.tool { name = "picky", read_only = true,
  retry = { attempts = 5, initial_ms = 1,
            retryable = function(err) return err.code ~= "FATAL" end },
  run = function(args, ctx)
    if ctx.attempt == args.fatal_at then
      return nil, { code = "FATAL", message = "give up" }
    end
    return nil, { code = "BUSY", message = "try again" }
  end }

tg.tool { name = "guarded", retry = { attempts = 5, initial_ms = 1 },
  run = function() return nil, "would fail" end }
tg.rule { name = "no-guarded", tools = { "guarded" }, check = function() return tg.deny("guarded is off") end }

tg.tool { name = "slowfail", read_only = true,
  retry = { attempts = 5, initial_ms = 300, max_ms = 300 },
  run = function(args, ctx) ctx.sleep(1); return nil, "failed slowly" end }
]]

describe("retry", function()
  after_each(H.cleanup)

  it("retries a failing tool until it succeeds: attempts = failures + 1", function()
    local rt = H.runtime(policy)
    local events = H.record(rt)
    local out, h = H.call(rt, "flaky", { fail_times = 2 })
    assert.are.equal("ok", out.status)
    assert.are.equal(3, out.attempts)
    assert.are.same({ attempt = 3 }, out.result)
    assert.is_nil(out.error)
    assert.are.equal(3, H.count(events, h.id, "attempt"))
    assert.are.equal(2, H.count(events, h.id, "retry"))
  end)

  it("gives up after the last attempt with the last error and attempts == max", function()
    local rt = H.runtime(policy)
    local out = H.call(rt, "flaky", { fail_times = 10 })
    assert.are.equal("error", out.status)
    assert.are.equal(4, out.attempts)
    assert.are.equal("EXECUTE", out.error.phase)
    assert.is_true(H.has(out.error.message, "flaky failure 4"), out.error.message)
  end)

  it("grows the back-off by the multiplier and caps it at max_ms", function()
    local rt = H.runtime(policy)
    local events = H.record(rt)
    local out, h = H.call(rt, "growth", {})
    assert.are.equal(6, out.attempts)
    local delays = {}
    for i, ev in ipairs(H.of_call(events, h.id, "retry")) do delays[i] = ev.delay_ms end
    assert.are.same({ 2, 4, 8, 12, 12 }, delays)
  end)

  it("keeps jittered delays within [d*(1-jitter), d*(1+jitter)] and varies them", function()
    local rt = H.runtime(policy, { seed = 12345 })
    local events = H.record(rt)
    local out, h = H.call(rt, "jittery", {})
    assert.are.equal(40, out.attempts)
    local retries = H.of_call(events, h.id, "retry")
    assert.are.equal(39, #retries)
    local distinct, seen = 0, {}
    for _, ev in ipairs(retries) do
      assert.is_true(ev.delay_ms >= 2 and ev.delay_ms <= 6,
        "delay out of bounds: " .. tostring(ev.delay_ms))
      if not seen[ev.delay_ms] then seen[ev.delay_ms] = true; distinct = distinct + 1 end
    end
    assert.is_true(distinct > 10, "jitter should vary the delays, got " .. distinct .. " distinct")
  end)

  it("gives the same jittered delays for the same seed", function()
    local function delays(seed)
      local rt = H.runtime(policy, { seed = seed })
      local events = H.record(rt)
      local _, h = H.call(rt, "jittery", {})
      local d = {}
      for i, ev in ipairs(H.of_call(events, h.id, "retry")) do d[i] = ev.delay_ms end
      return d
    end
    assert.are.same(delays(777), delays(777))
  end)

  it("stops retrying when the retryable predicate returns false", function()
    local rt = H.runtime(policy)
    local events = H.record(rt)
    local out, h = H.call(rt, "picky", { fatal_at = 2 })
    assert.are.equal("error", out.status)
    assert.are.equal(2, out.attempts)
    assert.are.equal("FATAL", out.error.code)
    assert.are.equal(1, H.count(events, h.id, "retry"))
  end)

  it("does not retry an error the tool marks retryable = false", function()
    local rt = H.runtime [[
local tg = require "toolgate"
tg.tool { name = "final", read_only = true, retry = { attempts = 5, initial_ms = 1 },
  run = function() return nil, { code = "GONE", message = "gone for good", retryable = false } end }
]]
    local out = H.call(rt, "final", {})
    assert.are.equal(1, out.attempts)
    assert.are.equal("GONE", out.error.code)
  end)

  it("does not retry an error the tool raises", function()
    local rt = H.runtime [[
local tg = require "toolgate"
tg.tool { name = "raiser", read_only = true, retry = { attempts = 5, initial_ms = 1 },
  run = function() error("kaboom") end }
]]
    local out = H.call(rt, "raiser", {})
    assert.are.equal("error", out.status)
    assert.are.equal(1, out.attempts)
    assert.are.equal("EXECUTE", out.error.phase)
    assert.is_true(H.has(out.error.message, "kaboom"))
  end)

  it("never retries after a deny", function()
    local rt = H.runtime(policy)
    local events = H.record(rt)
    local out, h = H.call(rt, "guarded", {})
    assert.are.equal("denied", out.status)
    assert.are.equal(0, out.attempts)
    assert.are.equal(0, H.count(events, h.id, "attempt"))
    assert.are.equal(0, H.count(events, h.id, "retry"))
  end)

  it("never retries after a cancel during the back-off", function()
    local rt = H.runtime(policy)
    local events = H.record(rt)
    local h = assert(rt:call("slowfail", {}))
    -- run the loop until the first attempt failed and the back-off started
    local guard = 0
    while H.count(events, h.id, "retry") == 0 do
      rt:run_once()
      guard = guard + 1
      assert(guard < 1e7, "no retry event")
    end
    assert.is_true(h:cancel())
    local out = h:wait()
    assert.are.equal("cancelled", out.status)
    assert.are.equal("CANCEL", out.error.phase)
    assert.are.equal(1, out.attempts)
    assert.are.equal(1, H.count(events, h.id, "attempt"))
  end)

  it("a cancel from an on_event handler at the retry ends the call without waiting out the back-off", function()
    local rt = H.runtime [[
local tg = require "toolgate"
tg.tool { name = "longbackoff", read_only = true,
  retry = { attempts = 3, initial_ms = 2000, max_ms = 2000 },
  run = function(args, ctx) ctx.sleep(1); return nil, "failed" end }
tg.tool { name = "ticker", read_only = true, run = function(args, ctx) ctx.sleep(300); return "tick" end }
]]
    local order = {}
    local h
    rt:on_event("retry", function(ev)
      if h and ev.call_id == h.id then h:cancel() end
    end)
    h = assert(rt:call("longbackoff", {}, { on_done = function() order[#order + 1] = "cancelled-call" end }))
    local ticker = assert(rt:call("ticker", {}, { on_done = function() order[#order + 1] = "ticker" end }))
    local out = h:wait()
    ticker:wait()
    assert.are.equal("cancelled", out.status)
    assert.are.equal(1, out.attempts)
    -- the cancelled call must end long before the 2 s back-off (and the 0.3 s ticker)
    assert.are.same({ "cancelled-call", "ticker" }, order)
  end)
end)
