-- The cost-aware example through the host module: the host reports its
-- model calls (rt:chat_begin / rt:chat_end with usage) and asks where a
-- request should go (rt:route); the policies route, count, alert and hold
-- back costly tools. The runtime's clock is the spec's (rt:set_clock).
local H = require "spec.lua.helpers"

local DIR = "examples/cost-aware"

local function at(y, m, d, h)
  return os.time { year = y, month = m, day = d, hour = h or 12, min = 0, sec = 0 } * 1000
end

-- A runtime over the example; the host's routing table is models.json
-- (MODELS below is the same, as a host would read it).
local function runtime(approve)
  return (H.runtime(nil, { policies = DIR, approve = approve or "deny" }))
end

local MODELS = {
  routes = { light = "claude-haiku", heavy = "claude-sonnet" },
  default = "claude-sonnet",
  fallback = { ["claude-sonnet"] = { "gpt-4.1", "claude-haiku" }, ["*"] = { "claude-haiku" } },
}

local function spend(rt, cost, session)
  assert(rt:chat_begin { session = session, model = "claude-sonnet" })
  assert(rt:chat_end(true, nil, { cost = cost, input_tokens = 1000, output_tokens = 200 }, session))
end

describe("the cost-aware example", function()
  after_each(H.cleanup)

  it("routes light tasks to the cheap model and long contexts to the strong one", function()
    local rt = runtime()
    assert(rt:set_models(MODELS))
    assert.are.equal("claude-haiku", rt:route { task_weight = "light" }.selected_model)
    assert.are.equal("claude-sonnet", rt:route { task_weight = "heavy" }.selected_model)
    local d = rt:route { task_weight = "light", context = { tokens = 180000 } }
    assert.are.equal("claude-sonnet", d.selected_model)
    assert.is_truthy(H.has(d.reason, "180000 tokens of context"))
    rt:set_clock(at(2026, 6, 1))
    assert(rt:model_unavailable("claude-sonnet", rt:now() + 60000))
    d = rt:route { task_weight = "heavy" }
    assert.are.equal("gpt-4.1", d.selected_model)
    assert.are.equal("claude-sonnet", d.fallback.from)
  end)

  it("alerts as the day's spending rises, routes cheap and holds back costly tools", function()
    local asked = {}
    local rt = runtime(function(req) asked[#asked + 1] = req.prompt; return "approve" end)
    assert(rt:set_models(MODELS))
    rt:set_clock(at(2026, 6, 1, 9))
    local alerts = H.record(rt, "budget_alert")
    local function levels()
      local out = {}
      for _, a in ipairs(alerts) do
        if a.budget == "daily" then out[#out + 1] = a.level end
      end
      return table.concat(out, " ")
    end
    for i = 1, 10 do spend(rt, 0.25, "s" .. i) end -- 2.50: half the day
    assert.are.equal("info", levels())
    assert.are.equal("claude-sonnet", rt:route { task_weight = "heavy" }.selected_model)
    for i = 1, 6 do spend(rt, 0.25, "t" .. i) end -- 4.00: past 75%
    assert.are.equal("info warning", levels())
    local d = rt:route { task_weight = "heavy" }
    assert.are.equal("claude-haiku", d.selected_model)
    assert.are.equal("daily budget at 80%: the cheap model", d.reason)
    assert.are.equal("ok", H.call(rt, "web_search", { q = "x" }).status)
    assert.are.same({}, asked)
    spend(rt, 0.60, "u") -- 4.60: critical, costly tools asked
    assert.are.equal("ok", H.call(rt, "web_search", { q = "x" }).status)
    assert.are.equal(1, #asked)
    assert.is_truthy(H.has(asked[1], "the daily budget is at 92%"))
    spend(rt, 0.50, "v") -- 5.10: spent
    assert.are.equal("info warning critical exceeded", levels())
    local out = H.call(rt, "generate_image", { prompt = "a cat" })
    assert.are.equal("denied", out.status)
    assert.is_truthy(H.has(out.error.message, "the daily budget is spent (5.10 of 5.00)"))
    assert.is_truthy(H.has(out.error.message, "until 00:00"))
    local titles = {}
    for _, n in ipairs(rt:notifications()) do titles[#titles + 1] = n.title end
    assert.is_truthy(H.has(table.concat(titles, "|"), "Daily budget spent"))
    assert.is_truthy(H.has(table.concat(titles, "|"), "Budget 'daily': exceeded"))
    -- a new day: the budget starts over, costly tools are back
    rt:set_clock(at(2026, 6, 2, 0) + 60000)
    assert.are.equal("ok", H.call(rt, "generate_image", { prompt = "a cat" }).status)
    assert.are.equal("claude-sonnet", rt:route { task_weight = "heavy" }.selected_model)
  end)

  it("caps one session at 1.00", function()
    local rt = runtime()
    rt:set_clock(at(2026, 6, 1, 9))
    local per = H.record(rt, "budget_alert")
    for _ = 1, 5 do spend(rt, 0.18, "runaway") end -- 0.90
    spend(rt, 0.18, "calm")
    spend(rt, 0.18, "runaway") -- 1.08
    local out = {}
    for _, a in ipairs(per) do
      if a.budget == "session" then out[#out + 1] = a.session .. ":" .. a.level end
    end
    assert.are.same({ "runaway:warning", "runaway:exceeded" }, out)
    assert.are.equal("exceeded", rt:budget_status("session", "runaway").level)
    assert.are.equal("ok", rt:budget_status("session", "calm").level)
  end)
end)
