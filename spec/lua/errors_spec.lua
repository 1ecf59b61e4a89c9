-- Policy errors (fail closed / open, load errors), bad input, and the
-- result limit.
local H = require "spec.lua.helpers"
local toolgate = H.toolgate

describe("policy errors", function()
  after_each(H.cleanup)

  it("a rule that raises fails the call closed: POLICY error naming file:line", function()
    local rt = H.runtime {
      ["10_rules.lua"] = [[
local tg = require "toolgate"
tg.tool { name = "t", read_only = true, run = function() return "ran" end }
tg.rule { name = "broken", check = function(call)
  error("rule exploded")
end }
]],
    }
    local events = H.record(rt)
    local out, h = H.call(rt, "t", {})
    assert.are.equal("error", out.status)
    assert.are.equal("POLICY", out.error.phase)
    assert.is_true(H.has(out.error.message, "rule exploded"), out.error.message)
    assert.is_true(H.has(out.error.message, "10_rules.lua:4"), out.error.message)
    assert.are.equal(0, H.count(events, h.id, "attempt"))
  end)

  it("a rule with fail = \"open\" that raises lets the call through and emits rule_error", function()
    local rt = H.runtime {
      ["10_rules.lua"] = [[
local tg = require "toolgate"
tg.tool { name = "w", run = function() return "ran" end }
tg.rule { name = "broken-open", priority = 1, fail = "open", check = function(call)
  error("open rule exploded")
end }
tg.rule { name = "allow-w", priority = 2, check = function() return tg.allow() end }
]],
    }
    local events = H.record(rt)
    local out, h = H.call(rt, "w", {})
    assert.are.equal("ok", out.status)
    assert.are.equal("ran", out.result)
    assert.are.equal("allow-w", out.decision.rule)
    local errs = H.of_call(events, h.id, "rule_error")
    assert.are.equal(1, #errs)
    assert.are.equal("broken-open", errs[1].rule)
    assert.is_true(H.has(errs[1].error, "open rule exploded"))
    assert.is_true(H.has(errs[1].error, "10_rules.lua:4"), errs[1].error)
  end)

  it("a pre-hook that raises fails the call with a POLICY error naming file:line", function()
    local rt = H.runtime {
      ["00_tools.lua"] = H.lib.tools,
      ["20_hook.lua"] = [[
local tg = require "toolgate"
tg.before_tool("echo", function(call)
  local x = nil
  return x.field
end)
]],
    }
    local events = H.record(rt)
    local out, h = H.call(rt, "echo", {})
    assert.are.equal("error", out.status)
    assert.are.equal("POLICY", out.error.phase)
    assert.is_true(H.has(out.error.message, "20_hook.lua:4"), out.error.message)
    assert.are.equal(0, H.count(events, h.id, "attempt"))
  end)

  it("a post-hook that raises fails the call with a POLICY error naming file:line", function()
    local rt = H.runtime {
      ["00_tools.lua"] = H.lib.tools,
      ["20_hook.lua"] = [[
local tg = require "toolgate"
tg.after_tool("echo", function(call, res)
  error("post exploded")
end)
]],
    }
    local out = H.call(rt, "echo", { secret = "s" })
    assert.are.equal("error", out.status)
    assert.are.equal("POLICY", out.error.phase)
    assert.is_true(H.has(out.error.message, "20_hook.lua:3"), out.error.message)
  end)

  it("a policy file with a syntax error: toolgate.new returns nil and file:line", function()
    local dir = H.policy_dir {
      ["10_ok.lua"] = "local tg = require 'toolgate'\n",
      ["20_bad.lua"] = "local tg = require 'toolgate'\n\ntg.rule { name = 'x' check = function() end }\n",
    }
    local rt, err = toolgate.new { policies = dir }
    if rt then H.track(rt) end
    assert.is_nil(rt)
    assert.is_string(err)
    assert.is_true(H.has(err, "20_bad.lua:3"), err)
  end)

  it("a policy file that raises at load: toolgate.new returns nil and file:line", function()
    local dir = H.policy_dir("local tg = require 'toolgate'\nlocal n = nil\nlocal y = n + 1\n")
    local rt, err = toolgate.new { policies = dir }
    if rt then H.track(rt) end
    assert.is_nil(rt)
    assert.is_true(H.has(err, "10_policy.lua:3"), err)
  end)

  it("registration with a bad type is a load error naming the problem", function()
    local dir = H.policy_dir("local tg = require 'toolgate'\ntg.rule { name = 1, check = function() end }\n")
    local rt, err = toolgate.new { policies = dir }
    if rt then H.track(rt) end
    assert.is_nil(rt)
    assert.is_true(H.has(err, "tg.rule"), err)
    assert.is_true(H.has(err, "'name'"), err)
  end)

  it("a registration error names the file:line of the bad call", function()
    local dir = H.policy_dir("local tg = require 'toolgate'\n\ntg.rule { name = 'x', check = 5 }\n")
    local rt, err = toolgate.new { policies = dir }
    if rt then H.track(rt) end
    assert.is_nil(rt)
    assert.is_true(H.has(err, "'check' must be a function"), err)
    assert.is_true(H.has(err, "10_policy.lua:3"), err)
  end)

  it("tg.rule called after load time (inside a hook) fails the call with a POLICY error", function()
    local rt = H.runtime {
      ["00_tools.lua"] = H.lib.tools,
      ["20_hook.lua"] = [[
local tg = require "toolgate"
tg.before_tool("echo", function(call)
  tg.rule { name = "late", check = function() end }
end)
]],
    }
    local out = H.call(rt, "echo", {})
    assert.are.equal("error", out.status)
    assert.are.equal("POLICY", out.error.phase)
    assert.is_true(H.has(out.error.message, "tg.rule"), out.error.message)
    assert.is_true(H.has(out.error.message, "20_hook.lua"), out.error.message)
    -- and nothing was registered
    local names = {}
    for _, r in ipairs(rt:describe().rules) do names[#names + 1] = r.name end
    assert.are.same({}, names)
  end)

  it("a failed reload keeps the old generation and says file:line", function()
    local rt, dir = H.runtime(H.lib.tools)
    local gen = rt:generation()
    H.write(dir .. "/20_broken.lua", "local tg = require 'toolgate'\nthis is not lua\n")
    local n, err = rt:reload(dir)
    assert.is_nil(n)
    assert.is_true(H.has(err, "20_broken.lua:2"), err)
    assert.are.equal(gen, rt:generation())
    assert.are.equal("ok", H.call(rt, "echo", { still = "works" }).status)
  end)

  it("rt:reload() without a folder re-reads the runtime's policy folder", function()
    local rt, dir = H.runtime(H.lib.tools)
    local gen = rt:generation()
    H.write(dir .. "/20_broken.lua", "local tg = require 'toolgate'\nthis is not lua\n")
    local n, err = rt:reload()
    assert.is_nil(n)
    assert.is_true(H.has(err, "20_broken.lua:2"), err)
    assert.are.equal(gen, rt:generation())
    assert.are.equal("ok", H.call(rt, "echo", { still = "works" }).status)
  end)
end)

describe("bad input", function()
  after_each(H.cleanup)

  it("rt:call with invalid JSON text ends VALIDATE INVALID_ARGS with a message", function()
    local rt = H.runtime(H.lib.tools)
    local err = H.invalid_args(rt, "echo", '{"a": ')
    assert.is_string(err)
    assert.is_true(H.has(err, "JSON"), err)
  end)

  it("accepts args given as valid JSON text", function()
    local rt = H.runtime(H.lib.tools)
    local out = H.call(rt, "echo", '{"a": [1, 2], "b": {"c": null}}')
    assert.are.equal("ok", out.status)
    assert.are.same({ 1, 2 }, out.result.a)
    assert.are.equal(toolgate.null, out.result.b.c)
  end)

  it("args text that is a JSON array ends VALIDATE INVALID_ARGS; a Lua list is refused", function()
    local rt = H.runtime(H.lib.tools)
    local err = H.invalid_args(rt, "echo", "[1, 2, 3]")
    assert.is_true(H.has(err, "object"), err)
    local h2, err2 = rt:call("echo", { 1, 2, 3 }) -- a table is the host's own mistake
    assert.is_nil(h2)
    assert.is_string(err2)
  end)

  it("a 20 MB args string ends VALIDATE INVALID_ARGS, naming the limit", function()
    local rt = H.runtime(H.lib.tools)
    local big = '{"x":"' .. string.rep("a", 20 * 1024 * 1024) .. '"}'
    local err = H.invalid_args(rt, "echo", big)
    big = nil
    assert.is_true(H.has(err, "limit"), err)
  end)

  it("max_args_bytes lowers the limit", function()
    local rt = H.runtime(H.lib.tools, { max_args_bytes = 1000 })
    local err = H.invalid_args(rt, "echo", '{"x":"' .. string.rep("a", 2000) .. '"}')
    assert.is_true(H.has(err, "limit"), err)
    assert.are.equal("ok", H.call(rt, "echo", '{"x":"small"}').status)
  end)

  it("max_args_bytes also applies to args given as a table", function()
    local rt = H.runtime(H.lib.tools, { max_args_bytes = 1000 })
    local h, err = rt:call("echo", { x = string.rep("a", 5000) })
    assert.is_nil(h)
    assert.is_true(H.has(err, "limit"), err)
  end)

  it("an unknown tool is refused by rt:call: nil, message, UNKNOWN_TOOL; the call is on record", function()
    local rt = H.runtime(H.lib.tools)
    local events = H.record(rt)
    local done = false
    local h, err, code = rt:call("no_such_tool", {}, { on_done = function() done = true end })
    assert.is_nil(h)
    assert.are.equal("UNKNOWN_TOOL", code)
    assert.is_true(H.has(err, "no_such_tool"), err)
    assert.is_false(done) -- refused: on_done does not run
    local ends = {}
    for _, ev in ipairs(events) do
      if ev.type == "call_end" then ends[#ends + 1] = ev end
    end
    assert.are.equal(1, #ends)
    assert.are.equal("UNKNOWN_TOOL", ends[1].error.code)
  end)

  it("a tool returning a function value ends with error BAD_RESULT", function()
    local rt = H.runtime [[
local tg = require "toolgate"
tg.tool { name = "fn", read_only = true, run = function() return { f = function() end } end }
]]
    local out = H.call(rt, "fn", {})
    assert.are.equal("error", out.status)
    assert.are.equal("BAD_RESULT", out.error.code)
    assert.are.equal("EXECUTE", out.error.phase)
  end)

  local function nested(levels)
    return string.rep('{"a":', levels) .. "1" .. string.rep("}", levels)
  end

  local function assert_clear_depth_error(h, err)
    if not h then
      assert.is_string(err)
      assert.is_truthy(err:find("deep") or err:find("nest"), err)
      return
    end
    local out = h:wait()
    assert.are_not.equal("ok", out.status)
    assert.is_table(out.error)
    assert.is_truthy(out.error.message:find("deep") or out.error.message:find("nest"),
      out.error.message)
  end

  it("deeply nested args (200 levels) give a clear error, no crash", function()
    local rt = H.runtime(H.lib.tools)
    local h, err = rt:call("echo", nested(200))
    assert_clear_depth_error(h, err)
    assert.are.equal("ok", H.call(rt, "echo", { after = true }).status)
  end)

  it("deeply nested args (200 levels) are not silently replaced when rules and hooks run", function()
    local rt = H.runtime {
      ["00_tools.lua"] = H.lib.tools,
      ["10_rule.lua"] = [[
local tg = require "toolgate"
tg.rule { name = "look", check = function(call) end }
tg.before_tool("*", function(call) end)
]],
    }
    local h, err = rt:call("echo", nested(200))
    assert_clear_depth_error(h, err)
  end)
end)

describe("result limit", function()
  after_each(H.cleanup)

  it("cuts a 10 kB result to max_result_bytes = 200, keeping head and tail around a marker", function()
    local rt = H.runtime [[
local tg = require "toolgate"
tg.tool { name = "big", read_only = true, max_result_bytes = 200,
  run = function() return "HEAD-" .. string.rep("x", 10000) .. "-TAIL" end }
]]
    local events = H.record(rt)
    local out, h = H.call(rt, "big", {})
    assert.are.equal("ok", out.status)
    assert.is_true(out.truncated)
    assert.is_string(out.result)
    assert.is_true(#out.result < 10010)
    assert.is_true(#out.result <= 200, "result is " .. #out.result .. " bytes")
    assert.is_true(out.result:sub(1, 5) == "HEAD-", out.result)
    assert.is_true(out.result:sub(-5) == "-TAIL", out.result)
    assert.is_true(H.has(out.result, "truncated"), out.result)
    assert.are.equal(1, H.count(events, h.id, "result_truncated"))
  end)

  it("leaves a result under the limit alone", function()
    local rt = H.runtime [[
local tg = require "toolgate"
tg.tool { name = "small", read_only = true, max_result_bytes = 200, run = function() return "short" end }
]]
    local out = H.call(rt, "small", {})
    assert.are.equal("short", out.result)
    assert.is_false(out.truncated)
  end)
end)

describe("running out of memory while policies register", function()
  after_each(H.cleanup)

  -- 4000 hooks on a 2000-byte tool name: one Lua string, but 8 MB if every
  -- registration keeps its own copy.
  local hungry = [[
local tg = require "toolgate"
local name = string.rep("x", 2000)
for i = 1, 4000 do tg.before_tool(name, function() end) end
]]

  local function load(files, cap)
    local dir = H.policy_dir(files)
    local rt, err = toolgate.new { policies = dir, policy_memory_cap = cap }
    if rt then H.track(rt) end
    return rt, err
  end

  it("what registrations keep counts against policy_memory_cap", function()
    local rt, err = load({ ["10_hungry.lua"] = hungry }, 4 * 1024 * 1024)
    assert.is_nil(rt, "8 MB of hooks loaded under a 4 MiB cap")
    assert.is_true(H.has(err, "ran out of memory (at "), err)
    assert.is_true(H.has(err, "10_hungry.lua:3"), err)
    assert.is_true(H.has(err, "policy_memory_cap"), err)
  end)

  it("fails the whole generation even when the policy catches the error", function()
    local rt, err = load({ ["10_hungry.lua"] = [[
local tg = require "toolgate"
local name = string.rep("x", 2000)
local ok = true
for i = 1, 4000 do
  ok = pcall(tg.before_tool, name, function() end)
  if not ok then break end
end
tg.tool { name = "after", read_only = true, run = function() return "loaded" end }
]] }, 4 * 1024 * 1024)
    assert.is_nil(rt, "a generation with a hook missing loaded")
    assert.is_true(H.has(err, "ran out of memory"), err)
  end)

  it("a reload that runs out keeps the old generation and emits policy_error", function()
    local rt, dir = H.runtime({ ["10_ok.lua"] = H.lib.tools }, { policy_memory_cap = 4 * 1024 * 1024 })
    local errors = H.record(rt, "policy_error")
    local gen = rt:generation()
    H.write(dir .. "/20_hungry.lua", hungry)
    local ok, err = rt:reload()
    assert.is_nil(ok)
    assert.is_true(H.has(err, "ran out of memory"), err)
    assert.are.equal(gen, rt:generation())
    assert.are.equal(1, #errors)
    assert.is_true(H.has(errors[1].error, "20_hungry.lua:3"), errors[1].error)
    assert.are.equal("ok", H.call(rt, "echo", { x = 1 }).status)
  end)

  -- Every allocation of the load can be the one refused: under caps just
  -- below what the policies need, each load either registers everything or
  -- fails with an out-of-memory, never a partial set.
  it("a tool registered twice (with a schema) is a load error naming it", function()
    local rt, err = load({ ["10_twice.lua"] = [[
local tg = require "toolgate"
tg.tool { name = "t", schema = { type = "object" }, run = function() end }
tg.tool { name = "t", schema = { type = "object" }, run = function() end }
]] })
    assert.is_nil(rt)
    assert.is_true(H.has(err, "10_twice.lua:3"), err)
    assert.is_true(H.has(err, "a tool named 't' already exists"), err)
  end)

  it("under every cap, a load is all or nothing", function()
    local files = {
      ["10_all.lua"] = [[
local tg = require "toolgate"
for i = 1, 40 do
  tg.rule { name = "r" .. i, tools = { "a" .. i, "b" .. i }, check = function() end }
  tg.before_tool({ "*", "t" .. i }, function() end)
  tg.after_tool("t" .. i, function() end)
  tg.on_event("call_end", function() end)
  tg.on_file_change("src/*.c", function() end)
end
for i = 1, 20 do
  tg.tool { name = "t" .. i, description = "tool " .. i, schema = { type = "object" },
            retry = { attempts = 2, retryable = function() return true end },
            run = function() return i end }
end
]] }
    local function loads(cap)
      local rt, err = load(files, cap)
      if not rt then
        assert.is_true(H.has(err, "memory"), err)
        return false
      end
      local d = rt:describe()
      assert.are.equal(40, #d.rules)
      assert.are.equal(80, #d.hooks.before)
      assert.are.equal(40, #d.hooks.after)
      assert.are.equal(40, #d.event_handlers)
      local n = 0
      for _, t in ipairs(d.tools) do if t.name:match("^t%d+$") then n = n + 1 end end
      assert.are.equal(20, n)
      rt:close()
      return true
    end
    local lo, hi = 64 * 1024, 64 * 1024 * 1024 -- the smallest cap that loads
    assert.is_true(loads(hi))
    while hi - lo > 256 do
      local mid = math.floor((lo + hi) / 2)
      if loads(mid) then hi = mid else lo = mid end
      H.cleanup()
    end
    local failed = 0
    for cap = hi - 6000, hi, 24 do
      if not loads(cap) then failed = failed + 1 end
      H.cleanup()
    end
    assert.is_true(failed > 50, "the sweep hardly failed: " .. failed)
    if os.getenv("TG_SPEC_VERBOSE") then print("failed loads in the sweep: " .. failed) end
  end)
end)
