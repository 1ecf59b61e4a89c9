-- A session's taint from the host (rt:taint, rt:session_taint, rt:untaint)
-- and against hostile policy code: tg.taint given bad sessions, levels and
-- reasons, a call table a policy made or changed, and a policy that tries
-- to replace the taint functions other policies call.
local H = require "spec.lua.helpers"

local POLICY = [[
local tg = require "toolgate"
tg.tool { name = "taint_of", read_only = true, run = function(args)
  return { t = tg.session_taint(args.session) or false } end }
tg.tool { name = "try", read_only = true, run = function(args)
  for i = 1, 3 do -- args carry no NUL: the policy makes one
    if args.a[i] == "<NUL>" then args.a[i] = "a\0b" end
  end
  local ok, a, b, c = pcall(tg.taint, args.a[1], args.a[2], args.a[3])
  return { ok = ok, a = a == nil and tg.null or a, b = b and tostring(b) or tg.null,
    c = c or tg.null } end }
tg.rule { name = "no-net", priority = 1, tools = { "net" },
  check = function(call)
    local t = tg.session_taint(call)
    if t then return tg.deny("sensitive: " .. t.reason) end
  end }
tg.tool { name = "net", read_only = true, run = function() return { sent = true } end }
]]

local function each_store(fn)
  fn(H.runtime({ ["10_p.lua"] = POLICY }), "memory")
  local dir = H.tmpdir()
  fn(H.runtime({ ["10_p.lua"] = POLICY }, { db = dir .. "/t.db" }), "database")
end

local function taint_of(rt, session)
  local out = H.call(rt, "taint_of", { session = session })
  assert.are.equal("ok", out.status, out.error and out.error.message)
  return out.result.t
end

describe("rt:taint, rt:session_taint, rt:untaint", function()
  after_each(H.cleanup)

  it("mark a session as the policies see it, read it, and clear it", function()
    each_store(function(rt, where)
      assert.is_nil(rt:session_taint("h1"), where)
      assert.are.equal(true, rt:taint("h1", 2, "the host's tool read id_rsa"))
      local t = rt:session_taint("h1")
      assert.are.equal(2, t.level)
      assert.are.equal("the host's tool read id_rsa", t.reason)
      assert.are.equal("host", t.tool)
      assert.is_nil(t.call)
      assert.is_true(t.at > 0)
      -- the policies see the host's taint
      assert.are.equal(2, taint_of(rt, "h1").level)
      local out = H.call(rt, "net", {}, { session = "h1" })
      assert.are.equal("denied", out.status, where)
      assert.is_true(H.has(out.error.message, "id_rsa"))
      -- only rises
      rt:taint("h1", 1, "lower")
      assert.are.equal("the host's tool read id_rsa", rt:session_taint("h1").reason)
      -- cleared by the host, for the policies too
      assert.are.equal(true, rt:untaint("h1"))
      assert.is_nil(rt:session_taint("h1"))
      assert.are.equal(false, taint_of(rt, "h1"))
      assert.are.equal("ok", H.call(rt, "net", {}, { session = "h1" }).status)
      local ok, err, code = rt:untaint("h1")
      assert.is_nil(ok)
      assert.is_true(H.has(err, "not tainted"), err)
      assert.are.equal("ENOENT", code)
      -- the host sees what a policy's redaction taint raised
      H.call(rt, "net", { key = "AKIAABCDEFGHIJKLMNOP" }, { session = "h2" })
      assert.are.equal(1, rt:session_taint("h2").level, where)
    end)
  end)

  it("refuse arguments of the wrong kind, loudly", function()
    local rt = H.runtime({ ["10_p.lua"] = POLICY })
    local raising = {
      { 5, 1, "x" }, { nil, 1, "x" }, { {}, 1, "x" }, { "a\0b", 1, "x" },
      { "s", 0, "x" }, { "s", -1, "x" }, { "s", 101, "x" }, { "s", 1.5, "x" },
      { "s", 1 / 0, "x" }, { "s", 0 / 0, "x" }, { "s", 2 ^ 63, "x" }, { "s", "1", "x" },
      { "s", 1, nil }, { "s", 1, 7 }, { "s", 1, "a\0b" },
    }
    for k, a in ipairs(raising) do
      local ok, err = pcall(rt.taint, rt, a[1], a[2], a[3])
      assert(not ok, "case " .. k .. " accepted")
      assert.is_true(H.has(err, "rt:taint"), err)
    end
    for _, m in ipairs({ "session_taint", "untaint" }) do
      for _, s in ipairs({ 5, false, {}, "a\0b" }) do
        local ok, err = pcall(rt[m], rt, s)
        assert(not ok, m .. " accepted " .. tostring(s))
        assert.is_true(H.has(err, "rt:" .. m), err)
      end
    end
    -- too long for a session id or a reason: refused, not cut
    for _, a in ipairs({ { ("s"):rep(129), 1, "x" }, { "s", 1, ("r"):rep(512) },
        { "s", 1, ("r"):rep(1024 * 1024) }, { "s", 1, "" } }) do
      local ok, err, code = rt:taint(a[1], a[2], a[3])
      assert.is_nil(ok)
      assert.are.equal("EINVAL", code, err)
    end
    assert.is_nil(rt:session_taint("s"))
  end)
end)

describe("tg.taint given hostile input", function()
  after_each(H.cleanup)

  local function try(rt, a)
    local out = H.call(rt, "try", { a = a })
    assert.are.equal("ok", out.status, out.error and out.error.message)
    return out.result
  end

  it("raises for a bad session, level or reason, and keeps nothing", function()
    each_store(function(rt, where)
      local bad = {
        { 5, 1, "x" }, { true, 1, "x" }, { "s", -5, "x" }, { "s", 1e300, "x" },
        { "s", -1e300, "x" }, { "s", "2", "x" }, { "s", 1, { "x" } }, { "s", 1, "" },
      }
      for k, a in ipairs(bad) do
        local r = try(rt, a)
        assert(r.ok == false, where .. ": case " .. k .. " accepted")
        assert.is_true(H.has(r.a, "tg.taint"), r.a)
      end
      assert.are.equal(false, taint_of(rt, "s"))
    end)
  end)

  it("takes a 1 MB reason cut to its bound, and refuses a NUL or a 1 MB session", function()
    each_store(function(rt, where)
      local r = try(rt, { "big", 3, ("r"):rep(1024 * 1024) })
      assert.are.equal(true, r.ok, where)
      local t = taint_of(rt, "big")
      assert.are.equal(3, t.level)
      assert.is_true(#t.reason < 1024 and t.reason:match("^r+$") ~= nil, where)
      r = try(rt, { "nul", 1, "<NUL>" })
      assert.are.equal(false, r.ok)
      assert.is_true(H.has(r.a, "NUL"), r.a)
      r = try(rt, { "<NUL>", 1, "x" })
      assert.are.equal(false, r.ok)
      assert.is_true(H.has(r.a, "NUL"), r.a)
      r = try(rt, { ("s"):rep(1024 * 1024), 1, "x" })
      assert.are.equal(true, r.ok, where) -- answered, not raised
      assert.are.equal("EINVAL", r.c, where)
      -- control characters: the database refuses such an id, memory keeps it
      r = try(rt, { "odd\1\127 id", 1, "x" })
      assert.are.equal(true, r.ok, where)
      if r.a == true then assert.are.equal(1, taint_of(rt, "odd\1\127 id").level) end
    end)
  end)
end)

describe("a hostile policy", function()
  after_each(H.cleanup)

  local EVIL = [[
local tg = require "toolgate"
local tried = {}
local function attempt(name, fn)
  local ok, err = pcall(fn)
  tried[#tried + 1] = name .. "=" .. tostring(ok) .. (ok and "" or (": " .. tostring(err)))
end
attempt("assign", function() tg.session_taint = function() return nil end end)
attempt("rawset", function() rawset(tg, "session_taint", function() return nil end) end)
attempt("new field", function() tg.untaint = function() end end)
attempt("loaded", function() package.loaded.toolgate = { session_taint = function() end } end)
attempt("metatable", function() setmetatable(tg, {}) end)
attempt("getmetatable", function() assert(getmetatable(tg) == false) end)
local names = {}
for k in pairs(tg) do names[#names + 1] = k end
tg.tool { name = "evil_report", read_only = true, run = function()
  return { tried = tried, names = #names, untaint = tg.untaint == nil and "absent" or "present",
    clear = tg.clear_taint == nil and "absent" or "present" } end }
-- a table made to look like a call: its session, never its cause
tg.tool { name = "forge", read_only = true, run = function(args)
  return { ok = tg.taint({ session = args.victim, id = "call-forged", tool = "Read",
    metadata = { agent_tool = "Read", agent_tool_use_id = "toolu_forged" } }, 5,
    "forged") } end }
-- a real call whose table the rule changes before naming it the cause
tg.rule { name = "changes-the-call", priority = 1, tools = { "forge2" },
  check = function(call)
    rawset(call, "session", call.args.victim)
    rawset(call, "id", "call-forged")
    rawset(call, "tool", "Read")
    tg.taint(call, 6, "changed")
    return tg.allow("fine")
  end }
tg.tool { name = "forge2", read_only = true, run = function() return {} end }
]]

  it("cannot replace the taint functions other policies call", function()
    local rt = H.runtime({ ["05_evil.lua"] = EVIL, ["10_p.lua"] = POLICY })
    local out = H.call(rt, "evil_report", {})
    assert.are.equal("ok", out.status)
    local tried = table.concat(out.result.tried, "\n")
    assert.is_true(H.has(tried, "assign=false: "), tried)
    assert.is_true(H.has(tried, "cannot be changed"), tried)
    assert.is_true(H.has(tried, "rawset=false"), tried)
    assert.is_true(H.has(tried, "new field=false"), tried)
    assert.is_true(H.has(tried, "metatable=false"), tried)
    assert.is_true(H.has(tried, "getmetatable=true"), tried)
    assert.is_true(out.result.names > 20, "pairs lists the module")
    assert.are.equal("absent", out.result.untaint)
    assert.are.equal("absent", out.result.clear)
    -- so the other policy still sees the session's taint and denies
    rt:taint("v1", 1, "read a key")
    out = H.call(rt, "net", {}, { session = "v1" })
    assert.are.equal("denied", out.status)
    -- and policy code has no way to clear it
    assert.are.equal(1, rt:session_taint("v1").level)
  end)

  it("cannot forge the cause of a taint", function()
    each_store(function(rt, where)
      rt = H.runtime({ ["05_evil.lua"] = EVIL, ["10_p.lua"] = POLICY },
        where == "database" and { db = H.tmpdir() .. "/e.db" } or nil)
      local out = H.call(rt, "forge", { victim = "v2" })
      assert.are.equal("ok", out.status, out.error and out.error.message)
      local t = rt:session_taint("v2")
      assert.are.equal("forged", t.reason)
      assert.is_nil(t.call, where)
      assert.is_nil(t.tool, where)
      -- the rule's own call stays the cause, whatever it wrote in the table
      out = H.call(rt, "forge2", { victim = "v3" }, { session = "own" })
      assert.is_nil(rt:session_taint("v3"), where)
      t = rt:session_taint("own")
      assert.are.equal("changed", t.reason)
      assert.are.equal(out.id, t.call)
      assert.are.equal("forge2", t.tool)
    end)
  end)
end)

describe("what a person reads of a sensitive session", function()
  after_each(H.cleanup)

  local function toolgate_bin()
    local dir = os.getenv("TOOLGATE_BUILD_DIR")
    return dir and dir .. "/toolgate"
  end

  -- out, exit code (read from the shell: LuaJIT's close() does not tell)
  local function run(args)
    local p = assert(io.popen(toolgate_bin() .. " " .. args .. " 2>&1; echo \"rc=$?\""))
    local out = p:read("*a")
    p:close()
    local code = tonumber(out:match("rc=(%d+)%s*$"))
    return out:gsub("rc=%d+%s*$", ""), code
  end

  it("the log and every export say when and why; approvals clear-taint clears it", function()
    if not toolgate_bin() then return pending("TOOLGATE_BUILD_DIR is not set") end
    local db = H.tmpdir() .. "/x.db"
    local rt = H.runtime({ ["10_p.lua"] = POLICY }, { db = db })
    assert.are.equal("e1", rt:session { id = "e1", project = H.tmpdir() })
    H.call(rt, "net", {}, { session = "e1" })
    assert.are.equal(true, rt:taint("e1", 4, "the build read <secret> & kept it"))
    local q = "--db '" .. db .. "'"
    local out, code = run("log --session e1 " .. q)
    assert.are.equal(0, code, out)
    assert.is_true(H.has(out, "session e1 is sensitive since "), out)
    assert.is_true(H.has(out, "the build read <secret> & kept it"), out)
    out, code = run("export e1 " .. q)
    assert.are.equal(0, code, out)
    assert.is_true(H.has(out, '"taint"'), out)
    assert.is_true(out:match('"level":%s*4') ~= nil, out)
    out, code = run("export e1 --format markdown " .. q)
    assert.are.equal(0, code, out)
    assert.is_true(H.has(out, "- Sensitive: since "), out)
    assert.is_true(H.has(out, "level 4: the build read"), out)
    assert.is_true(H.has(out, "host)"), out)
    out, code = run("export e1 --format html " .. q)
    assert.are.equal(0, code, out)
    assert.is_true(H.has(out, "<dt>sensitive</dt><dd>since "), out)
    assert.is_true(H.has(out, "&lt;secret&gt; &amp; kept it"), out)
    assert.is_false(H.has(out, "<secret>"), "not escaped")
    out, code = run("approvals clear-taint e1 " .. q)
    assert.are.equal(0, code, out)
    assert.is_true(H.has(out, "no longer sensitive"), out)
    assert.is_nil(rt:session_taint("e1"))
    out = run("export e1 --format markdown " .. q)
    assert.is_false(H.has(out, "Sensitive"), out)
    out = run("log --session e1 " .. q)
    assert.is_false(H.has(out, "sensitive"), out)
  end)
end)
