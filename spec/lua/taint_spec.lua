-- A session's taint through the policy API: tg.taint and tg.session_taint,
-- with and without a database, and the taint toolgate raises itself when a
-- redaction rule matches in a call's args or result.
local H = require "spec.lua.helpers"

local POLICY = [[
local tg = require "toolgate"
tg.tool { name = "echo", read_only = true, run = function(args) return args end }
tg.tool { name = "taint", read_only = true, run = function(args, ctx)
  return { ok = tg.taint(args.session or ctx, args.level, args.reason) } end }
tg.tool { name = "taint_of", read_only = true, run = function(args)
  return { t = tg.session_taint(args.session) or false } end }
tg.tool { name = "bad", read_only = true, run = function(args)
  local ok, err = pcall(tg.taint, args.a[1], args.a[2], args.a[3])
  return { ok = ok, err = tostring(err) } end }
tg.rule { name = "tainted-no-touch", priority = 1, tools = { "echo" },
  check = function(call)
    local t = tg.session_taint(call)
    if t and call.args.net then return tg.deny("sensitive: " .. t.reason) end
  end }
]]

local function taint_of(rt, session)
  local out = H.call(rt, "taint_of", { session = session })
  assert.are.equal("ok", out.status)
  return out.result.t
end

local function each_store(fn)
  fn(H.runtime({ ["10_p.lua"] = POLICY }))                   -- memory
  local dir = H.tmpdir()
  fn(H.runtime({ ["10_p.lua"] = POLICY }, { db = dir .. "/t.db" })) -- a database
end

describe("a session's taint", function()
  after_each(H.cleanup)

  it("is nil until tg.taint, then holds level, reason and when; only rises", function()
    each_store(function(rt)
      assert.are.equal(false, taint_of(rt, "s1"))
      local out = H.call(rt, "taint", { session = "s1", level = 2, reason = "read .env" })
      assert.are.equal(true, out.result.ok)
      local t = taint_of(rt, "s1")
      assert.are.equal(2, t.level)
      assert.are.equal("read .env", t.reason)
      assert.is_true(t.at > 0)
      H.call(rt, "taint", { session = "s1", level = 1, reason = "later" })
      assert.are.equal("read .env", taint_of(rt, "s1").reason)
      H.call(rt, "taint", { session = "s1", level = 5, reason = "worse" })
      assert.are.equal("worse", taint_of(rt, "s1").reason)
      assert.are.equal(false, taint_of(rt, "s2"))
    end)
  end)

  it("refuses a bad session, level or reason", function()
    local rt = H.runtime({ ["10_p.lua"] = POLICY })
    for k, a in ipairs({ { 5, 1, "x" }, { "s", 0, "x" }, { "s", 101, "x" },
        { "s", 1.5, "x" }, { "s", 1, "" }, { "s", 1 } }) do
      local out = H.call(rt, "bad", { a = a })
      assert(out.result.ok == false, "case " .. k .. " accepted: " .. out.result.err)
      assert.is_true(H.has(out.result.err, "tg.taint"))
    end
  end)

  it("is raised by toolgate when a redaction rule matches in a call's args", function()
    each_store(function(rt)
      local ev = H.record(rt, "session_tainted")
      local out = H.call(rt, "echo", { key = "AKIAABCDEFGHIJKLMNOP" }, { session = "r1" })
      assert.are.equal("ok", out.status)
      local t = taint_of(rt, "r1")
      assert.are.equal(1, t.level)
      assert.are.equal("echo", t.tool)
      assert.are.equal(out.id, t.call)
      assert.is_true(H.has(t.reason, "echo's input"))
      assert.are.equal(1, #ev)
      assert.are.equal("r1", ev[1].session)
      assert.are.equal(out.id, ev[1].call_id)
      -- then a rule denies the session what it guards
      out = H.call(rt, "echo", { net = true }, { session = "r1" })
      assert.are.equal("denied", out.status)
      assert.is_true(H.has(out.error.message, "redaction rule matched"))
      out = H.call(rt, "echo", { net = true }, { session = "r2" })
      assert.are.equal("ok", out.status)
    end)
  end)
end)
