-- The host module under misuse and hostile input (issue 8): a raise at any
-- point takes nothing it does not give back, a name with a NUL byte is
-- refused rather than cut, a typo in an option is an error, and no callback
-- or collector can leave the runtime stuck or freed under its own feet.
local H = require "spec.lua.helpers"
local toolgate = H.toolgate

-- Registry entries that hold something (luaL_unref leaves integers behind
-- as its free list: those are not held).
local function registry_held()
  local n = 0
  for _, v in pairs(debug.getregistry()) do
    if type(v) ~= "number" then n = n + 1 end
  end
  return n
end

local function full_gc()
  collectgarbage()
  collectgarbage()
end

-- Resident memory in bytes (Linux). Not under AddressSanitizer, whose
-- quarantine keeps freed memory resident (LeakSanitizer checks there).
local function rss()
  if os.getenv("ASAN_OPTIONS") then return nil end
  local f = io.open("/proc/self/statm")
  if not f then return nil end
  local pages = f:read("*n")
  pages = f:read("*n")
  f:close()
  return pages * 4096
end

-- A table whose conversion to JSON raises: looking up its metatable's
-- __jsontype runs an __index that errors.
-- Metadata that cannot become JSON: refused after the args were converted.
local function bad_metadata()
  return { f = function() end }
end

local function nop() end

describe("a raise after rt:call took something", function()
  after_each(H.cleanup)

  it("leaves no registry entry behind: a bad on_progress, 1000 times", function()
    local rt = H.runtime(H.lib.tools)
    full_gc()
    local before = registry_held()
    for _ = 1, 1000 do
      local ok, err = pcall(rt.call, rt, "echo", {}, { on_done = nop, on_progress = 42 })
      assert.is_false(ok)
      assert.is_true(H.has(err, "'on_progress' must be a function"), err)
    end
    full_gc()
    assert.is_true(registry_held() - before < 10, "registry grew by " .. (registry_held() - before))
    assert.are.equal("ok", H.call(rt, "echo", { a = 1 }).status)
  end)

  it("frees the converted args when the metadata is refused, 1000 times", function()
    local rt = H.runtime(H.lib.tools)
    local big = { text = ("x"):rep(64 * 1024) }
    full_gc()
    local before_reg, before_mem = registry_held(), rss()
    for i = 1, 1000 do
      local h, err = rt:call("echo", big, { on_done = nop, metadata = bad_metadata() })
      assert.is_nil(h)
      assert.is_true(H.has(err, "metadata"), err)
      if i % 50 == 0 then full_gc() end
    end
    full_gc()
    assert.is_true(registry_held() - before_reg < 10)
    -- 1000 leaked copies of the args would be 64 MiB
    if before_mem then
      local grew = rss() - before_mem
      assert.is_true(grew < 24 * 1048576, ("resident memory grew by %d bytes"):format(grew))
    end
    assert.are.equal("ok", H.call(rt, "echo", { a = 1 }).status)
  end)

  it("rt:explain frees the converted args when the metadata is refused, 1000 times", function()
    local rt = H.runtime(H.lib.tools)
    local big = { text = ("x"):rep(64 * 1024) }
    full_gc()
    local before = rss()
    for i = 1, 1000 do
      local j, err = rt:explain("echo", big, { metadata = bad_metadata() })
      assert.is_nil(j)
      assert.is_true(H.has(err, "metadata"), err)
      if i % 50 == 0 then full_gc() end
    end
    full_gc()
    if before then
      local grew = rss() - before
      assert.is_true(grew < 24 * 1048576, ("resident memory grew by %d bytes"):format(grew))
    end
    assert.are.equal("allow", rt:explain("echo", { a = 1 }).decision.verdict)
  end)
end)

describe("options", function()
  after_each(H.cleanup)

  it("an unknown option of rt:call is an error naming it", function()
    local rt = H.runtime(H.lib.tools)
    local events = H.record(rt, "call_start")
    assert.has_error(function() rt:call("echo", {}, { on_dne = nop }) end,
      "rt:call: unknown option 'on_dne' (known: id, session, turn, metadata, on_done, on_progress)")
    assert.has_error(function() rt:call("echo", {}, { [1] = nop }) end,
      "rt:call: option names are strings (got a number key)")
    assert.are.equal(0, #events)
  end)

  it("an unknown option of rt:explain and toolgate.new is an error naming it", function()
    local rt = H.runtime(H.lib.tools)
    assert.has_error(function() rt:explain("echo", {}, { on_done = nop }) end,
      "rt:explain: unknown option 'on_done' (known: id, session, turn, metadata)")
    local ok, err = pcall(toolgate.new, { polices = "policies" })
    assert.is_false(ok)
    assert.is_true(H.has(err, "toolgate.new: unknown option 'polices' (known: policies, session,"), err)
  end)

  it("an event type that does not exist is an error, from the host and from a policy", function()
    local rt = H.runtime(H.lib.tools)
    local ok, err = pcall(rt.on_event, rt, "call_ned", nop)
    assert.is_false(ok)
    assert.is_true(H.has(err, "rt:on_event: unknown event type 'call_ned' (the types are: call_start decision"), err)
    assert.is_number(rt:on_event("call_end", nop)) -- every listed type is taken
    for t in toolgate.event_types:gmatch("%S+") do assert.is_number(rt:on_event(t, nop)) end
    local dir = H.policy_dir [[require("toolgate").on_event("call_ned", function() end)]]
    local rt2, err2 = toolgate.new { policies = dir }
    assert.is_nil(rt2)
    assert.is_true(H.has(err2, "tg.on_event: unknown event type 'call_ned'"), err2)
  end)

  it("options are read raw: an __index on the options table is not consulted", function()
    local rt = H.runtime(H.lib.tools)
    local opts = setmetatable({}, { __index = function() error("not raw") end })
    local out = H.call(rt, "echo", { a = 1 }, opts)
    assert.are.equal("ok", out.status)
  end)

  it("a number that is not a whole number (NaN, 1e300) is refused, not cast", function()
    local rt = H.runtime(H.lib.tools)
    assert.has_error(function() toolgate.new { timeout_ms = 0 / 0 } end,
      "toolgate.new: 'timeout_ms' must be a number >= 0")
    assert.has_error(function() rt:call("echo", {}, { turn = 0 / 0 }) end,
      "rt:call: 'turn' must be a whole number")
    assert.has_error(function() rt:call("echo", {}, { turn = 1e300 }) end,
      "rt:call: 'turn' must be a whole number")
    assert.are.equal("table", type(rt:recent_changes(2 ^ 63)))
    assert.has_error(function() rt:recent_changes(0 / 0) end)
  end)

  it("off_event with an id that was never given out removes nothing", function()
    local rt = H.runtime(H.lib.tools)
    local seen = 0
    local id = rt:on_event("call_end", function() seen = seen + 1 end)
    assert.are.equal(1, id)
    rt:off_event(2 ^ 32 + 1) -- not cut to 1
    rt:off_event(-1)
    H.call(rt, "echo", {})
    assert.are.equal(1, seen)
    rt:off_event(id)
    H.call(rt, "echo", {})
    assert.are.equal(1, seen)
  end)
end)

describe("a NUL byte in a name", function()
  after_each(H.cleanup)

  it("in the tool name of rt:call is refused, and nothing runs", function()
    local rt = H.runtime(H.lib.tools, { approve = "allow" })
    local events = H.record(rt, "call_start")
    local h, err = rt:call("touch\0evil", {})
    assert.is_nil(h)
    assert.is_true(H.has(err, "the tool name contains a NUL byte (at byte 5)"), err)
    assert.are.equal(0, #events)
    assert.are.equal(0, H.runs(rt))
    h, err = rt:explain("touch\0evil", {})
    assert.is_nil(h)
    assert.is_true(H.has(err, "NUL byte"), err)
  end)

  it("in JSON args text is refused, not cut at the NUL", function()
    local rt = H.runtime(H.lib.tools, { approve = "allow" })
    local h, err = rt:call("echo", '{"a":1}\0{"b":2}')
    assert.is_nil(h)
    assert.is_true(H.has(err, "args: the JSON text contains a NUL byte (at byte 7)"), err)
  end)

  it("in ids, sessions, event types, globs, paths and options raises or fails", function()
    local rt, dir = H.runtime(H.lib.tools)
    assert.has_error(function() rt:call("echo", {}, { id = "a\0b" }) end,
      "rt:call: 'id' must not contain a NUL byte")
    assert.has_error(function() rt:call("echo", {}, { session = "s\0t" }) end,
      "rt:call: 'session' must not contain a NUL byte")
    assert.has_error(function() rt:on_event("call_end\0x", nop) end,
      "rt:on_event: the event type must not contain a NUL byte")
    assert.has_error(function() rt:on_file_change("*.c\0x", nop) end,
      "rt:on_file_change: the glob must not contain a NUL byte")
    local g, err = rt:reload(dir .. "\0/elsewhere")
    assert.is_nil(g)
    assert.is_true(H.has(err, "the path contains a NUL byte"), err)
    local p
    p, err = rt:listen(dir .. "/s.sock\0x")
    assert.is_nil(p)
    assert.is_true(H.has(err, "the path contains a NUL byte"), err)
    assert.has_error(function() toolgate.new { policies = dir .. "\0x" } end,
      "toolgate.new: 'policies' must not contain a NUL byte")
    assert.has_error(function() toolgate.new { workspace = { dir .. "\0x" } } end,
      "toolgate.new: a workspace directory must not contain a NUL byte")
    assert.has_error(function() toolgate.new { default_verdict = "allow\0x" } end)
    assert.has_error(function() toolgate.new { approve = "allow\0x" } end)
    assert.has_error(function() rt:answer(1, "approve\0x") end)
  end)

  it("in the approver's answer is a bad answer: the call is rejected", function()
    local rt = H.runtime(H.lib.tools, { approve = function() return "approve\0x" end })
    local ok, err = pcall(rt.call, rt, "touch", {})
    assert.is_false(ok)
    assert.is_true(H.has(err, "the approver returned a bad answer"), err)
    assert.are.equal(0, H.runs(rt))
  end)
end)

describe("callbacks run by the loop", function()
  after_each(H.cleanup)

  it("a handler that removes itself and adds others does not break delivery", function()
    local rt = H.runtime(H.lib.tools)
    -- leave only high ids, so the handlers sit in the table's hash part,
    -- where removing the one being delivered and adding a few rehashes it
    local ids = {}
    for i = 1, 256 do ids[i] = rt:on_event(nop) end
    for i = 1, 255 do rt:off_event(ids[i]) end
    rt:on_event(nop)
    local added, self_id = 0, nil
    self_id = rt:on_event(function()
      rt:off_event(self_id)
      for _ = 1, 5 do rt:on_event(function() added = added + 1 end) end
    end)
    local out = H.call(rt, "echo", { a = 1 })
    assert.are.equal("ok", out.status)
    assert.is_true(added > 0)
    assert.is_false(rt:run())
    assert.are.equal("ok", H.call(rt, "echo", { a = 2 }).status)
  end)

  it("an approver that raises rejects the call at once, and the error reaches the host", function()
    local rt = H.runtime(H.lib.tools, { approve = function() error("approver broke") end })
    local ends = H.record(rt, "call_end")
    local ok, err = pcall(rt.call, rt, "touch", {})
    assert.is_false(ok)
    assert.is_true(H.has(err, "toolgate: error in approver callback:"), err)
    assert.is_true(H.has(err, "approver broke"), err)
    assert.are.equal(1, #ends)
    assert.are.equal("rejected", ends[1].status)
    assert.are.equal(0, H.runs(rt))
  end)

  it("a misspelt field in the approver's answer rejects instead of widening it", function()
    local asked = 0
    local rt = H.runtime(H.lib.tools, { approve = function()
      asked = asked + 1
      return "always", { scop = "args" }
    end })
    local ok, err = pcall(rt.call, rt, "touch", { n = 1 })
    assert.is_false(ok)
    assert.is_true(H.has(err, "unknown option 'scop' (known: scope, guidance, arg, glob, where, until)"), err)
    assert.are.equal(0, H.runs(rt))
    assert.has_error(function() rt:answer(1, "always", { scop = "args" }) end,
      "rt:answer: unknown option 'scop' (known: scope, guidance, arg, glob, where, until)")
  end)

  it("a runtime collected inside a callback while a handle waits is closed after, not under it", function()
    local dir = H.policy_dir [[
local tg = require "toolgate"
tg.tool { name = "slow", read_only = true, run = function(args, ctx) ctx.sleep(args.ms) return { ok = true } end }
]]
    local weak = setmetatable({}, { __mode = "v" })
    local h
    local function start()
      local rt = assert(toolgate.new { policies = dir })
      weak[1] = rt
      h = rt:call("slow", { ms = 2000 })
      rt:call("slow", { ms = 1 }, { on_done = function() full_gc() end })
    end
    start()
    -- overwrite the stack slots start() used, so only the handle is left
    local function scrub() local a, b, c, d, e, f, g, i, j, k, l, m, n, o, p, q end
    scrub()
    -- (had it waited for the call, the call would have ended: slept)
    local out, err = h:wait()
    assert.is_nil(out)
    assert.are.equal("the runtime was closed before the call ended", err)
    full_gc()
    assert.is_nil(weak[1])
    assert.is_true(h:done())
    assert.are.same({ nil, "the call has already ended", "ENOENT" }, { h:cancel() })
  end)
end)

describe("closing", function()
  after_each(H.cleanup)

  it("with calls in flight releases all they held, 200 runtimes over", function()
    local dir = H.policy_dir [[
local tg = require "toolgate"
tg.tool { name = "slow", read_only = true, run = function(args, ctx) ctx.sleep(5000) return {} end }
]]
    full_gc()
    local before = registry_held()
    local called = 0
    local handles = {}
    for i = 1, 200 do
      local rt = assert(toolgate.new { policies = dir })
      rt:on_event(nop)
      local h = rt:call("slow", {}, { on_done = function() called = called + 1 end, on_progress = nop })
      if i % 2 == 0 then rt:close() end -- the others go with the collector
      handles[#handles + 1] = h
    end
    full_gc()
    assert.are.equal(0, called)
    for _, h in ipairs(handles) do
      assert.is_true(h:done())
      assert.are.same({ nil, "the runtime was closed before the call ended", "ECANCELED" },
                       { h:wait() })
    end
    handles = nil
    full_gc()
    assert.is_true(registry_held() - before < 10, "registry grew by " .. (registry_held() - before))
  end)
end)
