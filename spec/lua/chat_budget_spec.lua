-- The chat side, part 2: routing, budgets, notifications and the progress
-- manager through the host module. The runtime's clock is set by
-- the spec (rt:set_clock), so periods roll when the spec says; local
-- times come from os.time, which uses the same time zone as the runtime.
local H = require "spec.lua.helpers"

-- ms since the epoch of a local time.
local function at(y, m, d, h, mi)
  return os.time { year = y, month = m, day = d, hour = h or 12, min = mi or 0, sec = 0 } * 1000
end

local MODELS = { routes = { light = "small", heavy = "big" }, default = "mid",
                 fallback = { big = { "mid" } } }

describe("routing", function()
  after_each(H.cleanup)

  it("takes the routing table, then hooks in order, then the fallback", function()
    local rt = H.runtime([[
local tg = require "toolgate"
tg.route_model(function(d)
  if d.context.files and d.context.files > 20 then
    d.selected_model = "big"; d.reason = "many files" end end)
tg.route_model(function(d)
  if d.session == "intern" then return { selected_model = "small", reason = "intern session" } end end)
]], { models = MODELS })
    local routes = H.record(rt, "route")
    local d = assert(rt:route { task_weight = "light", context = { files = 40 } })
    assert.are.equal("big", d.selected_model)
    assert.are.equal("many files", d.reason)
    assert.are.equal("small", d.baseline.selected_model)
    assert.are.equal(1, #d.hooks)
    assert.are.same({ "small", "big", "many files" }, { d.hooks[1].from, d.hooks[1].to, d.hooks[1].reason })
    d = assert(rt:route { task_weight = "heavy", session = "intern", context = { files = 40 } })
    assert.are.equal("small", d.selected_model)
    assert.are.equal(2, #d.hooks)
    assert.are.equal(2, #routes)
    assert.are.equal("small", routes[2].selected_model)
    -- the fallback comes last, after the hooks
    rt:set_clock(at(2026, 5, 1))
    assert(rt:model_unavailable("big", rt:now() + 5000))
    d = assert(rt:route { task_weight = "light", context = { files = 40 } })
    assert.are.equal("mid", d.selected_model)
    assert.are.same({ "big", "mid" }, { d.fallback.from, d.fallback.to })
    rt:set_clock(rt:now() + 5000) -- it comes back
    d = assert(rt:route { task_weight = "light", context = { files = 40 } })
    assert.are.equal("big", d.selected_model)
    assert.is_nil(d.fallback)
  end)

  it("skips a hostile hook and says so", function()
    local rt = H.runtime([[
local tg = require "toolgate"
tg.route_model(function(d) setmetatable(d, { __index = function() return "evil" end }) d.selected_model = nil end)
tg.route_model(function(d) return 42 end)
tg.route_model(function(d) d.selected_model = ("x"):rep(300) end)
tg.route_model(function(d) d.selected_model = "ok-model"; d.reason = "fine" end)
]], { models = MODELS })
    local errors = H.record(rt, "layer_error")
    local d = assert(rt:route { task_weight = "heavy" })
    assert.are.equal("ok-model", d.selected_model)
    assert.are.equal(3, #d.errors)
    assert.are.equal(3, #errors)
    for _, e in ipairs(errors) do assert.are.equal("route_model", e.layer) end
  end)

  it("refuses bad models and requests with nil, message", function()
    local rt = H.runtime()
    local ok, err = rt:set_models { routes = { light = 1 } }
    assert.is_nil(ok)
    assert.is_truthy(H.has(err, "routes['light'] must be a model name"))
    assert.has_error(function() H.toolgate.new { models = { defaults = "x" } } end)
    local d, msg, code = rt:route { requested = "x" }
    assert.is_nil(d)
    assert.are.equal("EINVAL", code)
    assert.is_truthy(H.has(msg, "unknown key 'requested'"))
  end)
end)

-- A budget of 1.00 a day, a rule that denies costly tools past it, and a
-- tool that tells what on_alert heard.
local BUDGETS = [[
local tg = require "toolgate"
local told = {}
tg.budget { name = "daily", limit = 1.00, period = "day",
  on_alert = function(a) told[#told + 1] = a.level end }
tg.budget { name = "per-session", limit = 0.30, period = "session",
  thresholds = { warning = 0.5, exceeded = 1.0 }, notify = false }
tg.tool { name = "told", read_only = true, run = function()
  local t = told; told = {}; return { levels = table.concat(t, " ") } end }
tg.tool { name = "deploy", read_only = true, run = function() return "deployed" end }
tg.rule { name = "stop-costly", tools = "deploy", check = function(call)
  if tg.budget_status("daily").level == "exceeded" then
    return tg.deny("the daily budget is spent") end end }
]]

local function spend(rt, cost, session)
  assert(rt:chat_begin { session = session, model = "m" })
  assert(rt:chat_end(true, nil, { cost = cost, input_tokens = 10, output_tokens = 5 }, session))
end

local function told(rt)
  return H.call(rt, "told", {}).result.levels
end

describe("budgets", function()
  after_each(H.cleanup)

  it("tell each level once per period, and a rule denies past the limit", function()
    local rt = H.runtime(BUDGETS)
    rt:set_clock(at(2026, 5, 4, 9))
    local alerts = H.record(rt, "budget_alert")
    assert.are.equal("ok", H.call(rt, "deploy", {}).status)
    for _ = 1, 120 do spend(rt, 0.01) end
    assert.are.equal("info warning critical exceeded", told(rt))
    local daily = 0
    for _, a in ipairs(alerts) do if a.budget == "daily" then daily = daily + 1 end end
    assert.are.equal(4, daily)
    local out = H.call(rt, "deploy", {})
    assert.are.equal("denied", out.status)
    assert.is_truthy(H.has(out.error.message, "the daily budget is spent"))
    local st = rt:budget_status("daily")
    assert.are.equal("exceeded", st.level)
    assert.are.equal(at(2026, 5, 4, 0), st.period_start)
    assert.are.equal(at(2026, 5, 5, 0), st.resets_at)
    -- the next day: from nothing again, the levels told again, deploys allowed
    rt:set_clock(at(2026, 5, 5, 0, 1))
    assert.are.equal("ok", rt:budget_status("daily").level)
    assert.are.equal("ok", H.call(rt, "deploy", {}).status)
    spend(rt, 0.55)
    assert.are.equal("info", told(rt))
  end)

  it("count each session on its own for a session budget", function()
    local rt = H.runtime(BUDGETS)
    rt:set_clock(at(2026, 5, 4, 9))
    local alerts = H.record(rt, "budget_alert")
    spend(rt, 0.2, "a")
    spend(rt, 0.2, "b")
    spend(rt, 0.2, "a")
    local per = {}
    for _, a in ipairs(alerts) do
      if a.budget == "per-session" then per[#per + 1] = a.session .. ":" .. a.level end
    end
    assert.are.same({ "a:warning", "b:warning", "a:exceeded" }, per)
    assert.are.equal("exceeded", rt:budget_status("per-session", "a").level)
    assert.are.equal("warning", rt:budget_status("per-session", "b").level)
    assert.are.equal("ok", rt:budget_status("per-session", "c").level)
  end)

  it("do not tell a level again across a reload, and tell a new limit's", function()
    local rt, dir = H.runtime(BUDGETS)
    rt:set_clock(at(2026, 5, 4, 9))
    spend(rt, 0.8)
    assert.are.equal("info warning", told(rt))
    assert(rt:reload()) -- same budget, same limit: its state carries over
    spend(rt, 0.01)
    assert.are.equal("", told(rt))
    -- a higher limit: info and warning are below the line again and will be
    -- told again when passed; a budget new to the reload starts from the
    -- ledger (what it has passed already counts as told)
    H.write(dir .. "/10_policy.lua", (BUDGETS:gsub("limit = 1.00", "limit = 2.00")) .. [[
tg.budget { name = "fresh", limit = 1.00, period = "day" }
]])
    local alerts = H.record(rt, "budget_alert")
    assert(rt:reload())
    assert.are.equal("warning", rt:budget_status("fresh").level) -- 0.81 spent today
    spend(rt, 0.8) -- 1.61 of 2.00: info and warning again
    assert.are.equal("info warning", told(rt))
    local fresh = 0
    for _, a in ipairs(alerts) do if a.budget == "fresh" then fresh = fresh + 1 end end
    assert.are.equal(2, fresh) -- critical and exceeded: info and warning were past already
  end)

  it("count tokens, not cost, with unit = \"tokens\"", function()
    local rt = H.runtime([[
local tg = require "toolgate"
tg.budget { name = "t", unit = "tokens", limit = 1000, period = "total", notify = false }
tg.budget { name = "c", limit = 1, period = "total", notify = false }
]])
    local alerts = H.record(rt, "budget_alert")
    assert(rt:record_usage { model = "m", input_tokens = 700, output_tokens = 250, cost = 0 })
    local st = rt:budget_status("t")
    assert.are.same({ 950, "tokens", "critical" }, { st.spent, st.unit, st.level })
    assert.are.same({ 0, "cost", "ok" }, { rt:budget_status("c").spent, rt:budget_status("c").unit,
      rt:budget_status("c").level })
    assert(rt:record_usage { model = "m", input_tokens = 60, output_tokens = 0 })
    rt:run()
    assert.are.equal("exceeded", rt:budget_status("t").level)
    assert.is_truthy(#alerts > 0)
    assert.is_truthy(H.has(alerts[#alerts].message, "1010 of 1000 tokens used"), alerts[#alerts].message)
  end)

  it("alert by event, on_alert and notification even when on_alert fails", function()
    local rt = H.runtime([[
local tg = require "toolgate"
tg.budget { name = "b", limit = 1, period = "total", thresholds = { exceeded = 1 },
  on_alert = function(a) while true do end end }
]], { policy_time_limit_ms = 100 })
    local events = H.record(rt)
    spend(rt, 2)
    local types = {}
    for _, ev in ipairs(events) do types[#types + 1] = ev.type end
    local i = H.index_of(types, "budget_alert")
    assert.is_truthy(i)
    assert.are.same({ "budget_alert", "layer_error", "notification" }, { types[i], types[i + 1], types[i + 2] })
    assert.is_truthy(H.has(events[i + 1].error, "time limit"))
    local n = rt:notifications()
    assert.are.equal(1, #n)
    assert.are.equal("error", n[1].level)
    assert.are.equal("Budget 'b': exceeded", n[1].title)
  end)

  it("refuse bad declarations at file:line", function()
    local cases = {
      { "tg.budget { name = 'b', limit = 0, period = 'day' }", "'limit' must be a number > 0" },
      { "tg.budget { name = 'b', limit = 1, period = 'year' }", "'period' must be session, day, week, month or total" },
      { "tg.budget { name = 'b', limit = 1, period = 'day', scope = { modle = 'x' } }", "unknown key 'modle'" },
      { "tg.budget { name = 'b', limit = 1, period = 'day', thresholds = { warning = 0.9, critical = 0.8 } }",
        "must be above the level before it" },
      { "tg.budget { name = 'b', limit = 1, period = 'day', tresholds = {} }", "unknown key 'tresholds'" },
      { "tg.budget { name = 'b', limit = 1, period = 'day' } tg.budget { name = 'b', limit = 2, period = 'day' }",
        "a budget named 'b' already exists" },
      { "tg.budget { name = 'b', limit = 1, period = 'day', on_alert = 'x' }", "'on_alert' must be a function" },
      { "tg.budget { name = 'b', limit = 1, period = 'day', unit = 'token' }",
        "'unit' must be \"cost\" (the default) or \"tokens\" (got token)" },
    }
    for _, c in ipairs(cases) do
      local dir = H.policy_dir("local tg = require 'toolgate'\n" .. c[1] .. "\n")
      local rt, err = H.toolgate.new { policies = dir }
      assert.is_nil(rt, c[1])
      assert.is_truthy(H.has(err, c[2]), err)
      assert.is_truthy(H.has(err, "10_policy.lua:2"), err)
    end
    local rt = H.runtime([[
local tg = require "toolgate"
tg.rule { name = "r", check = function() tg.budget_status("nope") end }
tg.tool { name = "t", read_only = true, run = function() return 1 end }
]])
    local out = H.call(rt, "t", {})
    assert.are.equal("error", out.status)
    assert.is_truthy(H.has(out.error.message, "no budget named 'nope'"))
  end)
end)

describe("notifications", function()
  after_each(H.cleanup)

  it("keep a bounded list, expire by the clock and dismiss by id", function()
    local rt = H.runtime [[
local tg = require "toolgate"
tg.tool { name = "note", read_only = true, run = function(args)
  return { id = tg.notify(args.level, args.title, args.message, args.opts) } end }
]]
    rt:set_clock(1000000)
    local changes = {}
    rt:on_notification(function(change, n, list) changes[#changes + 1] = change .. ":" .. n.title .. ":" .. #list end)
    local out = H.call(rt, "note", { level = "success", title = "Saved", message = "3 files",
                                     opts = { duration_ms = 2000, action = { label = "Open", command = "open" } } })
    assert.are.equal("ok", out.status)
    local n = rt:notifications()[1]
    assert.are.equal(out.result.id, n.id)
    assert.are.same({ "success", "Saved", "3 files", 1002000 }, { n.level, n.title, n.message, n.expires_at })
    assert.are.same({ label = "Open", command = "open" }, n.action)
    assert.is_truthy(H.has(n.source, "10_policy.lua:3"))
    local id = rt:notify("error", "Build failed")
    for i = 1, 40 do rt:notify("info", "n" .. i) end
    local list = rt:notifications()
    assert.are.equal(32, #list)
    assert.are.equal("n9", list[1].title)
    rt:set_clock(1002000)
    assert.are.same({ "shown:Saved:1", "shown:Build failed:2" }, { changes[1], changes[2] })
    assert.is_truthy(H.has(table.concat(changes, " "), "dropped:Saved"))
    local ok, _, code = rt:dismiss(id)
    assert.is_nil(ok)
    assert.are.equal("ENOENT", code) -- dropped already
    assert(rt:dismiss(list[1].id))
    assert.are.equal(31, #rt:notifications())
    out = H.call(rt, "note", { level = "loud", title = "x" })
    assert.are.equal("error", out.status)
    assert.is_truthy(H.has(out.error.message, "the level must be"))
    out = H.call(rt, "note", { level = "info", title = "x", opts = { duration = 1 } })
    assert.is_truthy(H.has(out.error.message, "unknown key 'duration'"))
  end)
end)

describe("the progress manager", function()
  after_each(H.cleanup)

  it("tracks host items through their states and cancels them", function()
    local rt = H.runtime()
    local seen = {}
    rt:on_progress_change(function(change, item, list)
      seen[#seen + 1] = ("%s %s %s %d"):format(change, item.id, item.state, #list)
    end)
    local cancelled
    assert(rt:progress_start { id = "dl", label = "Download", kind = "determinate", total = 4 })
    assert(rt:progress_start { id = "steps", kind = "steps", total = 3, on_cancel = function(id) cancelled = id end })
    assert(rt:progress_update("dl", 1))
    assert(rt:progress_update("steps", 2, "link"))
    local list = rt:progress()
    assert.are.equal(25, list[1].percent)
    assert.are.same({ 2, 3, "link", true }, { list[2].step, list[2].steps, list[2].message, list[2].cancellable })
    local ok, _, code = rt:progress_cancel("dl")
    assert.is_nil(ok)
    assert.are.equal("ENOTSUP", code)
    assert(rt:progress_cancel("steps"))
    assert.are.equal("steps", cancelled)
    assert(rt:progress_fail("steps", "stopped"))
    assert(rt:progress_done("dl"))
    assert.are.same({ "start dl running 1", "start steps running 2", "update dl running 2",
                      "update steps running 2", "cancel steps running 2", "fail steps failed 1",
                      "done dl done 0" }, seen)
    ok, _, code = rt:progress_start { id = "dl", kind = "determinate" }
    assert.is_nil(ok)
    assert.are.equal("EINVAL", code)
  end)

  it("shows a Lua tool's ctx.progress, and a cancel reaches the call", function()
    local rt = H.runtime([[
local tg = require "toolgate"
tg.tool { name = "index", read_only = true, run = function(args, ctx)
  for i = 1, 100 do
    ctx.progress(i, 100, "file " .. i)
    if not ctx.sleep(20) then return nil, "stopped at " .. i end
  end
  return "done"
end }
]], { progress_interval_ms = 20 })
    local seen = {}
    rt:on_progress_change(function(change, item)
      seen[#seen + 1] = item
      if change == "update" and item.percent >= 3 and not item.cancel_requested then
        assert(rt:progress_cancel(item.id))
      end
    end)
    local out = H.call(rt, "index", {}, { id = "ix" })
    assert.are.equal("cancelled", out.status)
    assert.are.equal("call:ix", seen[1].id)
    assert.are.equal("ix", seen[1].call_id)
    assert.are.equal("index", seen[1].label)
    assert.are.equal("determinate", seen[1].kind)
    assert.are.equal("failed", seen[#seen].state)
    assert.are.same({}, rt:progress())
  end)
end)
