-- Runtime isolation and host callbacks.
local H = require "spec.lua.helpers"

-- A policy that records every event its own generation sees and reports it
-- through a read-only tool, so a spec can look at the policy side's view.
local function recorder(tool_name, extra)
  return ([[
local tg = require "toolgate"
local seen = {}
tg.on_event(function(ev) seen[#seen + 1] = { seq = ev.seq, type = ev.type } end)
tg.tool { name = "%s", read_only = true, run = function() return tg.array(seen) end }
]]):format(tool_name) .. (extra or "")
end

describe("runtime isolation", function()
  after_each(H.cleanup)

  it("two runtimes do not see each other's tools", function()
    local rt1 = H.runtime(recorder("log1"))
    local rt2 = H.runtime(recorder("log2"))
    assert.are.equal("ok", H.call(rt1, "log1", {}).status)
    assert.are.equal("ok", H.call(rt2, "log2", {}).status)
    assert.are.equal("UNKNOWN_TOOL", select(3, rt1:call("log2", {})))
    assert.are.equal("UNKNOWN_TOOL", select(3, rt2:call("log1", {})))
  end)

  it("two runtimes do not see each other's rules", function()
    local tool = [[
local tg = require "toolgate"
tg.tool { name = "shared", read_only = true, run = function() return "ran" end }
]]
    local rt1 = H.runtime {
      ["00_tool.lua"] = tool,
      ["10_rule.lua"] = [[
local tg = require "toolgate"
tg.rule { name = "deny-shared", check = function() return tg.deny("not in rt1") end }
]],
    }
    local rt2 = H.runtime(tool)
    assert.are.equal("denied", H.call(rt1, "shared", {}).status)
    assert.are.equal("ok", H.call(rt2, "shared", {}).status)
    assert.are.equal(1, #rt1:describe().rules)
    assert.are.equal(0, #rt2:describe().rules)
  end)

  it("each runtime has its own seq, starting from 1", function()
    local rt1 = H.runtime(recorder("log"))
    local rt2 = H.runtime(recorder("log"))
    -- activity on rt1 must not move rt2's seq
    for _ = 1, 3 do H.call(rt1, "log", {}) end
    local seen2 = H.call(rt2, "log", {}).result
    local seen1 = H.call(rt1, "log", {}).result
    assert.is_true(#seen2 >= 2)
    assert.are.equal(1, seen2[1].seq)
    assert.are.equal(1, seen1[1].seq)
    for i = 2, #seen2 do assert.are.equal(i, seen2[i].seq) end
    for i = 2, #seen1 do assert.are.equal(i, seen1[i].seq) end
    assert.is_true(#seen1 > #seen2)
  end)

  it("host subscribers see only their own runtime's events", function()
    local rt1 = H.runtime(recorder("log"))
    local rt2 = H.runtime(recorder("log"))
    local ev1, ev2 = H.record(rt1), H.record(rt2)
    local _, h1 = H.call(rt1, "log", {}, { id = "only-in-rt1" })
    assert.is_true(H.count(ev1, h1.id) > 0)
    assert.are.equal(0, H.count(ev2, h1.id))
    assert.are.equal(0, #ev2)
  end)

  it("approvals remembered in one runtime do not apply in another", function()
    local rt1 = H.runtime(H.lib.tools, { approve = "allow" })
    local asked = 0
    local rt2 = H.runtime(H.lib.tools, { approve = function() asked = asked + 1; return "reject" end })
    rt1:set_approver(function() return "always" end)
    assert.are.equal("ok", H.call(rt1, "touch", {}).status)
    assert.are.equal("rejected", H.call(rt2, "touch", {}).status)
    assert.are.equal(1, asked)
  end)
end)

describe("host callbacks", function()
  after_each(H.cleanup)

  it("on_done receives the outcome", function()
    local rt = H.runtime(H.lib.tools)
    local got
    local h = assert(rt:call("echo", { v = 1 }, { on_done = function(o) got = o end }))
    local out = h:wait()
    assert.are.same(out, got)
    assert.are.equal(h.id, got.id)
  end)

  it("an error raised in on_done is raised again from wait() with \"on_done\" in the message", function()
    local rt = H.runtime [[
local tg = require "toolgate"
tg.tool { name = "later", read_only = true, run = function(args, ctx) ctx.sleep(1); return "x" end }
]]
    local h = assert(rt:call("later", {}, { on_done = function() error("done handler broke") end }))
    local ok, err = pcall(h.wait, h)
    assert.is_false(ok)
    assert.is_true(H.has(tostring(err), "on_done"), tostring(err))
    assert.is_true(H.has(tostring(err), "done handler broke"), tostring(err))
  end)

  it("an error raised in on_done is raised again from run()", function()
    local rt = H.runtime [[
local tg = require "toolgate"
tg.tool { name = "later", read_only = true, run = function(args, ctx) ctx.sleep(1); return "x" end }
]]
    assert(rt:call("later", {}, { on_done = function() error("run handler broke") end }))
    local ok, err = pcall(rt.run, rt)
    assert.is_false(ok)
    assert.is_true(H.has(tostring(err), "on_done"), tostring(err))
    assert.is_true(H.has(tostring(err), "run handler broke"), tostring(err))
  end)

  it("an on_done error of a call that ends inside rt:call is raised from rt:call", function()
    local rt = H.runtime(H.lib.tools)
    local ok, err = pcall(rt.call, rt, "echo", {}, { on_done = function() error("sync broke") end })
    assert.is_false(ok)
    assert.is_true(H.has(tostring(err), "on_done"), tostring(err))
  end)

  it("the runtime keeps working after a callback error", function()
    local rt = H.runtime(H.lib.tools)
    pcall(rt.call, rt, "echo", {}, { on_done = function() error("broke once") end })
    local out = H.call(rt, "echo", { fine = true })
    assert.are.equal("ok", out.status)
  end)

  it("handle.id is the id given in opts, and call-N otherwise", function()
    local rt = H.runtime(H.lib.tools)
    local out, h = H.call(rt, "echo", {}, { id = "my-id" })
    assert.are.equal("my-id", h.id)
    assert.are.equal("my-id", out.id)
    local _, h2 = H.call(rt, "echo", {})
    assert.is_truthy(h2.id:match("^call%-%d+$"), h2.id)
  end)

  it("rt:close(), rt:run() and handle:wait() inside a callback raise instead of corrupting the loop", function()
    local rt = H.runtime [[
local tg = require "toolgate"
tg.tool { name = "later", read_only = true, run = function(args, ctx) ctx.sleep(args.ms or 1); return "x" end }
]]
    local other = assert(rt:call("later", { ms = 200 }))
    for _, misuse in ipairs {
      function() rt:close() end,
      function() rt:run() end,
      function() rt:run_once() end,
      function() other:wait() end, -- a call still running: would run the loop
    } do
      local h = assert(rt:call("later", {}, { on_done = misuse }))
      local ok, err = pcall(h.wait, h)
      assert.is_false(ok)
      assert.is_true(H.has(tostring(err), "cannot be used inside a callback"), tostring(err))
    end
    other:wait()
    assert.are.equal("ok", H.call(rt, "later", {}).status) -- still usable
  end)

  it("an id that is running cannot be taken by a second call, and generated ids skip it", function()
    local rt = H.runtime [[
local tg = require "toolgate"
tg.tool { name = "later", read_only = true, run = function(args, ctx) ctx.sleep(20); return "x" end }
]]
    local h1 = assert(rt:call("later", {}, { id = "call-1" }))
    local h2, err = rt:call("later", {}, { id = "call-1" })
    assert.is_nil(h2)
    assert.is_true(H.has(err, "already running"), err)
    local h3 = assert(rt:call("later", {}))
    assert.are_not.equal("call-1", h3.id)
    assert.are.equal("ok", h1:wait().status)
    assert.are.equal("ok", h3:wait().status)
  end)
end)

describe("event numbering and time", function()
  after_each(H.cleanup)

  local POLICY = H.lib.tools .. [[
tg.before_tool("echo", function(call)
  if call.args.rewrite then return tg.args { rewritten = true } end
end)
]]

  -- Every event takes a seq whether or not anyone listens: a host that
  -- starts listening late sees the same numbers as one that always did.
  it("seq numbering does not depend on who listens", function()
    local function first_seq_after(listen_from_start)
      local rt = H.runtime({ ["10_p.lua"] = POLICY }, { default_verdict = "allow" })
      local seen = {}
      local function listen() rt:on_event(function(ev) seen[#seen + 1] = ev end) end
      if listen_from_start then listen() end
      assert.are.equal("ok", H.call(rt, "echo", { rewrite = true }).status)
      assert.are.equal("ok", H.call(rt, "touch", { x = 1 }).status)
      if not listen_from_start then listen() end
      local n = #seen
      assert.are.equal("ok", H.call(rt, "echo", { after = true }).status)
      return seen[n + 1].seq, seen
    end
    local late = first_seq_after(false)
    local early, all = first_seq_after(true)
    assert.are.equal(early, late)
    local types = {}
    for _, ev in ipairs(all) do types[ev.type] = true end
    assert.is_true(types.rewrite, "the rewrite event was not seen")
  end)

  it("events carry the wall clock (ts, ms since the epoch) beside ts_ms", function()
    local rt = H.runtime({ ["10_p.lua"] = POLICY }, { default_verdict = "allow" })
    local evs = H.record(rt)
    local before = os.time() * 1000
    assert.are.equal("ok", H.call(rt, "echo", {}).status)
    -- os.time() reads the coarse clock, which may lag the event's by a tick
    local after = (os.time() + 2) * 1000
    assert.is_true(#evs > 0)
    for _, ev in ipairs(evs) do
      assert.is_number(ev.ts)
      assert.is_true(ev.ts >= before - 1000 and ev.ts <= after, tostring(ev.ts))
      assert.is_number(ev.ts_ms)
    end
  end)
end)
