-- Values that come back from policy code are read raw: a table whose
-- metamethods raise or loop cannot take the runtime down, whatever returns
-- it (rule, pre-hook, post-hook, Lua tool) and whether the chain or explain
-- reads it. Each case ends in a clean error naming the policy's file:line,
-- the process stays up and the next call runs.
local H = require "spec.lua.helpers"
local toolgate = H.toolgate

-- BAD raises from __index and __pairs; LOOP loops in __index; BAD_NEW
-- raises from __newindex. Line numbers matter: the tests look for them.
local prelude = [[
local tg = require "toolgate"
local BAD = setmetatable({}, { __index = function() error("metamethod ran") end,
                               __pairs = function() error("metamethod ran") end,
                               __len = function() error("metamethod ran") end })
local LOOP = setmetatable({}, { __index = function() while true do end end })
local BAD_NEW = { __newindex = function() error("metamethod ran") end,
                  __index = function() error("metamethod ran") end }
tg.tool { name = "echo", read_only = true, run = function(args) return args end }
tg.tool { name = "target", read_only = true, run = function(args) return args end }
]]
-- Rules and hooks apply to "target"; "echo" shows the runtime still works.
-- the line of the first line of `src` appended to the prelude
local first = select(2, prelude:gsub("\n", "")) + 1

local function runtime(src, opts)
  return H.runtime({ ["10_policy.lua"] = prelude .. src }, opts)
end

-- The call ended with `status`, its message names 10_policy.lua:<line>, and
-- the runtime still works.
local function clean_error(rt, out, status, line)
  assert.are.equal(status, out.status)
  assert.is_table(out.error, "no error in the outcome")
  local where = "10_policy.lua:" .. line
  assert.is_true(H.has(out.error.message, where),
                 "message does not name " .. where .. ": " .. out.error.message)
  assert.is_false(H.has(out.error.message, "metamethod ran"), out.error.message)
  local next_out = H.call(rt, "echo", { again = true })
  assert.are.equal("ok", next_out.status)
  assert.are.same({ again = true }, next_out.result)
end

describe("hostile values from policy code", function()
  after_each(H.cleanup)

  describe("a rule", function()
    it("returning a table whose __index raises fails the call closed", function()
      local rt = runtime([[
tg.rule { name = "r", tools = { "target" }, check = function() return BAD end }
]])
      local out = H.call(rt, "target", { x = 1 })
      clean_error(rt, out, "error", first)
      assert.are.equal("POLICY", out.error.phase)
      assert.is_nil(out.result)
    end)

    it("returning a table whose __index loops fails the call closed", function()
      local rt = runtime([[
tg.rule { name = "r", tools = { "target" }, check = function() return LOOP end }
]], { policy_time_limit_ms = 100 })
      local out = H.call(rt, "target", { x = 1 })
      clean_error(rt, out, "error", first)
      assert.is_nil(out.result)
    end)

    it("whose verdict carries a raising metatable is read raw: a deny still denies", function()
      local rt = runtime([[
tg.rule { name = "r", tools = { "target" }, check = function()
  return setmetatable({ tg = "deny", reason = "raw reason" }, getmetatable(BAD)) end }
]])
      local out = H.call(rt, "target", { x = 1 })
      assert.are.equal("denied", out.status)
      assert.is_true(H.has(out.error.message, "raw reason"), out.error.message)
      assert.are.equal("ok", H.call(rt, "echo", {}).status)
    end)

    it("explained: rt:explain reports the bad answer instead of aborting", function()
      local rt = runtime([[
tg.rule { name = "r", tools = { "target" }, check = function() return BAD end }
]])
      local e, err = rt:explain("target", { x = 1 })
      assert.is_table(e, err)
      assert.are.equal("error", e.rules[1].status)
      assert.is_true(H.has(e.rules[1].error, "10_policy.lua:" .. first), e.rules[1].error)
      assert.is_true(e.decision.policy_error)
      local e2 = rt:explain("echo", {})
      assert.is_table(e2)
      assert.are.equal("ok", H.call(rt, "echo", {}).status)
    end)

    it("explained with a looping __index: rt:explain returns", function()
      local rt = runtime([[
tg.rule { name = "r", tools = { "target" }, check = function() return LOOP end }
]], { policy_time_limit_ms = 100 })
      local e, err = rt:explain("target", { x = 1 })
      assert.is_table(e, err)
      assert.are.equal("error", e.rules[1].status)
      assert.are.equal("ok", H.call(rt, "echo", {}).status)
    end)
  end)

  describe("a pre-hook", function()
    it("returning a table whose __index raises fails the call", function()
      local rt = runtime([[
tg.before_tool("target", function(call) return BAD end)
]])
      local out = H.call(rt, "target", { x = 1 })
      clean_error(rt, out, "error", first)
      assert.is_nil(out.result)
    end)

    it("setting call.args to a table with raising __index and __pairs fails the call", function()
      local rt = runtime([[
tg.before_tool("target", function(call) call.args = BAD end)
]])
      local out = H.call(rt, "target", { x = 1 })
      clean_error(rt, out, "error", first)
      assert.is_nil(out.result)
    end)

    it("returning tg.args with such a table fails the call", function()
      local rt = runtime([[
tg.before_tool("target", function(call) return tg.args(BAD) end)
]])
      local out = H.call(rt, "target", { x = 1 })
      clean_error(rt, out, "error", first)
    end)

    it("removing call.args behind a raising metatable on call fails the call", function()
      local rt = runtime([[
tg.before_tool("target", function(call) setmetatable(call, BAD_NEW); rawset(call, "args", nil) end)
]])
      local out = H.call(rt, "target", { x = 1 })
      clean_error(rt, out, "error", first)
    end)

    it("removing call.attempt behind a raising __newindex does not stop the attempt", function()
      local rt = runtime([[
tg.before_tool("target", function(call) rawset(call, "attempt", nil); setmetatable(call, BAD_NEW) end)
]])
      local out = H.call(rt, "target", { x = 1 })
      assert.are.equal("ok", out.status)
      assert.are.same({ x = 1 }, out.result)
      assert.are.equal("ok", H.call(rt, "echo", {}).status)
    end)

    it("setting call.args to a list (a JSON array) fails the call", function()
      local rt = runtime([[
tg.before_tool("target", function(call) call.args = { 1, 2, 3 } end)
]])
      local out = H.call(rt, "target", { x = 1 })
      clean_error(rt, out, "error", first)
      assert.is_nil(out.result)
    end)
  end)

  describe("a post-hook", function()
    it("returning a table whose __index raises withholds the result", function()
      local rt = runtime([[
tg.after_tool("target", function(call, res) return BAD end)
]])
      local out = H.call(rt, "target", { x = 1 })
      clean_error(rt, out, "error", first)
      assert.is_nil(out.result)
    end)

    it("that put a raising __newindex on res does not stop the next post-hook", function()
      local rt = runtime([[
tg.after_tool("target", function(call, res) return tg.result({ second = true }) end)
tg.after_tool("target", function(call, res) rawset(res, "result", nil); setmetatable(res, BAD_NEW) end)
]])
      local out = H.call(rt, "target", { x = 1 })
      assert.are.equal("ok", out.status)
      assert.are.same({ second = true }, out.result)
      assert.are.equal("ok", H.call(rt, "echo", {}).status)
    end)
  end)

  describe("a Lua tool", function()
    it("returning nil and an error table whose __index raises fails the call", function()
      local rt = runtime([[
tg.tool { name = "bad", read_only = true, run = function() return nil, BAD end }
]])
      local out = H.call(rt, "bad", {})
      clean_error(rt, out, "error", first)
      assert.are.equal("EXECUTE", out.error.phase)
    end)

    it("returning nil and a looping error table fails the call", function()
      local rt = runtime([[
tg.tool { name = "bad", read_only = true, run = function() return nil, LOOP end }
]], { policy_time_limit_ms = 100 })
      local out = H.call(rt, "bad", {})
      clean_error(rt, out, "error", first)
    end)

    it("returning such a table gives its raw contents, never runs the metamethods", function()
      local rt = runtime([[
tg.tool { name = "bad", read_only = true, run = function()
  return setmetatable({ plain = 1 }, getmetatable(BAD)) end }
]])
      local out = H.call(rt, "bad", {})
      assert.are.equal("ok", out.status)
      assert.are.same({ plain = 1 }, out.result)
      assert.are.equal("ok", H.call(rt, "echo", {}).status)
    end)
  end)
end)

describe("NUL bytes in names policy code gives", function()
  after_each(H.cleanup)

  local function load_fails(src, what)
    local dir = H.policy_dir("local tg = require 'toolgate'\n" .. src)
    local rt, err = toolgate.new { policies = dir }
    assert.is_nil(rt)
    assert.is_true(H.has(err, what), err)
  end

  it("refuse to load: a rule, a tool, its tools list, an event type, a glob", function()
    load_fails([[tg.rule { name = "a\0b", check = function() end }]], "tg.rule: 'name' must not contain a NUL byte")
    load_fails([[tg.rule { name = "r", tools = { "exec\0x" }, check = function() end }]], "tools[1] must not contain a NUL byte")
    load_fails([[tg.rule { name = "r", tools = "exec\0x", check = function() end }]], "'tools' must not contain a NUL byte")
    load_fails([[tg.tool { name = "t\0u", run = function() end }]], "tg.tool: 'name' must not contain a NUL byte")
    load_fails([[tg.on_event("call_end\0x", function() end)]], "the event type must not contain a NUL byte")
    load_fails([[tg.on_file_change("src/**\0.c", function() end)]], "the glob must not contain a NUL byte")
  end)

  it("are refused by ctx.call and ctx.exec: nothing else runs in their place", function()
    local rt = H.runtime([[
local tg = require "toolgate"
tg.tool { name = "echo", read_only = true, run = function(args) return args end }
tg.tool { name = "caller", read_only = true, run = function(args, ctx)
  local ok, err = pcall(ctx.call, "echo\0evil", {})
  local ok2, r, err2 = pcall(ctx.exec, "echo hi\0; touch /tmp/never")
  return { call = tostring(err), exec = tostring(err2 or r) }
end }
]], { approve = "allow" })
    local out = H.call(rt, "caller", {})
    assert.are.equal("ok", out.status, out.error and out.error.message)
    assert.is_true(H.has(out.result.call, "ctx.call: the tool name must not contain a NUL byte"), out.result.call)
    assert.is_true(H.has(out.result.exec, "contains a NUL byte"), out.result.exec)
  end)
end)
