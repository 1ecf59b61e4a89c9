-- Pre-hooks and post-hooks: abort, rewrite (judged again), short-circuit,
-- ordering, result rewrite.
local H = require "spec.lua.helpers"

local allow_all = [[
local tg = require "toolgate"
tg.rule { name = "allow-all", priority = 100, check = function() return tg.allow() end }
]]

describe("pre-hooks", function()
  after_each(H.cleanup)

  it("tg.abort(reason) denies the call in PRE_HOOK and the tool does not run", function()
    local rt = H.runtime {
      ["00_tools.lua"] = H.lib.tools,
      ["10_allow.lua"] = allow_all,
      ["20_hook.lua"] = [[
local tg = require "toolgate"
tg.before_tool("touch", function(call) return tg.abort("touching is paused") end)
]],
    }
    local events = H.record(rt)
    local out, h = H.call(rt, "touch", {})
    assert.are.equal("denied", out.status)
    assert.are.equal("PRE_HOOK", out.error.phase)
    assert.is_true(H.has(out.error.message, "touching is paused"))
    assert.are.equal(0, H.count(events, h.id, "attempt"))
    assert.are.equal(0, out.attempts)
    assert.is_nil(out.result)
    assert.are.equal(0, H.runs(rt))
  end)

  it("tg.args(new_args) rewrites what the tool receives", function()
    local rt = H.runtime {
      ["00_tools.lua"] = H.lib.tools,
      ["20_hook.lua"] = [[
local tg = require "toolgate"
tg.before_tool("echo", function(call)
  return tg.args({ text = call.args.text:upper(), added = true })
end)
]],
    }
    local events = H.record(rt)
    local out, h = H.call(rt, "echo", { text = "quiet" })
    assert.are.equal("ok", out.status)
    assert.are.same({ text = "QUIET", added = true }, out.result)
    assert.are.equal(1, H.count(events, h.id, "rewrite"))
  end)

  it("a change made to call.args in place reaches the tool too", function()
    local rt = H.runtime {
      ["00_tools.lua"] = H.lib.tools,
      ["20_hook.lua"] = [[
local tg = require "toolgate"
tg.before_tool("echo", function(call) call.args.n = call.args.n + 1 end)
]],
    }
    local out = H.call(rt, "echo", { n = 1 })
    assert.are.equal("ok", out.status)
    assert.are.equal(2, out.result.n)
  end)

  -- cJSON_Compare took numbers within an epsilon as equal: a change of
  -- one ulp, or 0 into -0, went unseen — the rules judged one number and
  -- the tool ran another (or the hook's change was dropped)
  for name, case in pairs {
    ["by one ulp"] = { 0.1, "call.args.n = 0.10000000000000002", 0.10000000000000002 },
    ["0 into -0"] = { 0, "call.args.n = -0.0", -0.0 },
  } do
    it("a number changed in place " .. name .. " is a rewrite: judged again, and the tool gets it", function()
      local rt = H.runtime {
        ["00_tools.lua"] = H.lib.tools,
        ["10_rules.lua"] = [[
local tg = require "toolgate"
tg.rule { name = "see", priority = 1, tools = { "echo" }, check = function(call)
  if call.args.n ~= ]] .. string.format("%.17g", case[1]) .. [[ or 1/call.args.n < 0 then return tg.deny("judged " .. tostring(call.args.n)) end
  return tg.allow()
end }
]],
        ["20_hook.lua"] = [[
local tg = require "toolgate"
tg.before_tool("echo", function(call) ]] .. case[2] .. [[ end)
]],
      }
      local events = H.record(rt)
      local out, h = H.call(rt, "echo", { n = case[1] })
      assert.are.equal("denied", out.status)
      assert.are.equal(1, H.count(events, h.id, "rewrite"))
      assert.are.equal(0, H.runs(rt))
    end)
  end

  it("a rewrite is judged again by the rules: rewriting to a denied value is denied", function()
    local rt = H.runtime {
      ["00_tools.lua"] = H.lib.tools,
      ["10_rules.lua"] = [[
local tg = require "toolgate"
tg.rule { name = "no-evil", priority = 1, tools = { "touch" }, check = function(call)
  if call.args.x == "evil" then return tg.deny("evil is not allowed") end
end }
tg.rule { name = "allow-all", priority = 100, check = function() return tg.allow() end }
]],
      ["20_hook.lua"] = [[
local tg = require "toolgate"
tg.before_tool("touch", function(call) return tg.args({ x = "evil" }) end)
]],
    }
    local events = H.record(rt)
    local out, h = H.call(rt, "touch", { x = "good" })
    assert.are.equal("denied", out.status)
    assert.are.equal("AUTHORIZE", out.error.phase)
    assert.are.equal("no-evil", out.decision.rule)
    assert.is_true(H.has(out.error.message, "evil is not allowed"))
    local decisions = H.of_call(events, h.id, "decision")
    assert.are.equal(2, #decisions)
    assert.are.equal("allow", decisions[1].verdict)
    assert.are.equal("deny", decisions[2].verdict)
    assert.are.equal(0, H.count(events, h.id, "attempt"))
    assert.are.equal(0, H.runs(rt))
  end)

  -- What the rules judge again after a rewrite is what will run, whatever
  -- else the hook changed in the call table.
  local judge_again = [[
local tg = require "toolgate"
tg.rule { name = "no-evil", priority = 1, check = function(call)
  local evil = false
  for _, v in pairs(call.args) do
    if v == "evil" then evil = true end
    if type(v) == "table" then for _, w in pairs(v) do if w == "evil" then evil = true end end end
  end
  if evil and call.tool == "touch" and call.session ~= "admin" then return tg.deny("evil") end
end }
tg.rule { name = "allow-all", priority = 100, check = function() return tg.allow() end }
]]

  for name, hook in pairs {
    ["renaming call.tool in place"] = 'call.args.x = "evil"; call.tool = "echo"',
    ["changing call.session in place"] = 'call.args.x = "evil"; call.session = "admin"',
    ["hiding a value behind __pairs"] =
      'call.args.opts = setmetatable({ x = "evil" }, { __pairs = function() return next, {} end })',
    ["putting a metatable on call"] =
      'call.args.x = "evil"; rawset(call, "tool", nil); setmetatable(call, { __index = { tool = "echo" } })',
  } do
    it("a rewrite is judged on what will run: a hook " .. name .. " does not get past the rules", function()
      local rt = H.runtime {
        ["00_tools.lua"] = H.lib.tools,
        ["10_rules.lua"] = judge_again,
        ["20_hook.lua"] = "local tg = require 'toolgate'\ntg.before_tool('touch', function(call) " .. hook .. " end)\n",
      }
      local out = H.call(rt, "touch", { x = "good" })
      assert.are.equal("denied", out.status)
      assert.are.equal("no-evil", out.decision.rule)
      assert.are.equal(0, H.runs(rt))
    end)
  end

  it("tg.result(v) short-circuits: the value is returned, the tool does not run, post-hooks still run", function()
    local rt = H.runtime {
      ["00_tools.lua"] = H.lib.tools,
      ["10_allow.lua"] = allow_all,
      ["20_hook.lua"] = [[
local tg = require "toolgate"
tg.before_tool("touch", function(call) return tg.result({ cached = true }) end)
tg.after_tool("touch", function(call, res)
  local r = res.result
  r.post_hook_saw = res.status
  return tg.result(r)
end)
]],
    }
    local events = H.record(rt)
    local out, h = H.call(rt, "touch", {})
    assert.are.equal("ok", out.status)
    assert.are.same({ cached = true, post_hook_saw = "ok" }, out.result)
    assert.are.equal(0, H.count(events, h.id, "attempt"))
    assert.are.equal(1, H.count(events, h.id, "call_end"))
    assert.are.equal(0, H.runs(rt))
  end)

  it("runs \"*\" hooks before tool-specific ones regardless of registration order", function()
    local rt = H.runtime {
      ["00_tools.lua"] = H.lib.tools,
      ["10_specific.lua"] = [[
local tg = require "toolgate"
tg.before_tool("echo", function(call) call.args.trace = call.args.trace .. "specific1," end)
]],
      ["20_star.lua"] = [[
local tg = require "toolgate"
tg.before_tool("*", function(call) call.args.trace = call.args.trace .. "star1," end)
tg.before_tool("echo", function(call) call.args.trace = call.args.trace .. "specific2," end)
tg.before_tool("*", function(call) call.args.trace = call.args.trace .. "star2," end)
]],
    }
    local out = H.call(rt, "echo", { trace = "" })
    assert.are.equal("ok", out.status)
    assert.are.equal("star1,star2,specific1,specific2,", out.result.trace)
  end)

  it("stops at the first hook that aborts: later hooks do not run", function()
    local rt = H.runtime {
      ["00_tools.lua"] = H.lib.tools,
      ["20_hooks.lua"] = [[
local tg = require "toolgate"
local later_ran = false
tg.before_tool("echo", function(call)
  if call.args.check then return tg.result({ later_ran = later_ran }) end
  return tg.abort("stop here")
end)
tg.before_tool("echo", function(call) later_ran = true end)
]],
    }
    local out = H.call(rt, "echo", {})
    assert.are.equal("denied", out.status)
    local check = H.call(rt, "echo", { check = true })
    assert.are.same({ later_ran = false }, check.result)
  end)
end)

describe("post-hooks", function()
  after_each(H.cleanup)

  it("run in reverse registration order", function()
    local rt = H.runtime {
      ["00_tools.lua"] = H.lib.tools,
      ["20_hooks.lua"] = [[
local tg = require "toolgate"
local function mark(name)
  return function(call, res) return tg.result(res.result .. name .. ",") end
end
tg.after_tool("*", mark("A"))
tg.after_tool("*", mark("B"))
tg.after_tool("*", mark("C"))
tg.tool { name = "start", read_only = true, run = function() return "" end }
]],
    }
    local out = H.call(rt, "start", {})
    assert.are.equal("ok", out.status)
    assert.are.equal("C,B,A,", out.result)
  end)

  it("tg.result(v) rewrites the result the caller gets", function()
    local rt = H.runtime {
      ["00_tools.lua"] = H.lib.tools,
      ["20_hooks.lua"] = [[
local tg = require "toolgate"
tg.after_tool("echo", function(call, res)
  if res.result.secret then return tg.result({ secret = "[redacted]" }) end
end)
]],
    }
    local out = H.call(rt, "echo", { secret = "hunter2" })
    assert.are.equal("ok", out.status)
    assert.are.same({ secret = "[redacted]" }, out.result)
  end)

  it("see the tool's error and can turn it into a result", function()
    local rt = H.runtime {
      ["20_hooks.lua"] = [[
local tg = require "toolgate"
tg.tool { name = "fails", read_only = true, run = function() return nil, { code = "NOPE", message = "it failed", retryable = false } end }
tg.after_tool("fails", function(call, res)
  return tg.result({ recovered_from = res.error.code, was = res.status })
end)
]],
    }
    local out = H.call(rt, "fails", {})
    assert.are.equal("ok", out.status)
    assert.are.same({ recovered_from = "NOPE", was = "error" }, out.result)
    assert.is_nil(out.error)
  end)
end)

-- Does any string in v (keys too, nested) contain needle?
local function carries(v, needle)
  if type(v) == "string" then return v:find(needle, 1, true) ~= nil end
  if type(v) ~= "table" then return false end
  for k, x in pairs(v) do
    if carries(k, needle) or carries(x, needle) then return true end
  end
  return false
end

describe("a failed post-hook withholds the result", function()
  after_each(H.cleanup)

  -- The tool makes the secret up (it is in no args), so only its result
  -- can carry it.
  local tools = [[
local tg = require "toolgate"
tg.tool { name = "leaky", read_only = true, run = function(args, ctx)
  ctx.partial({ token = "S3CRET-" .. "partial" })
  if args.fail then return nil, { code = "FLAKY", message = "try later", retryable = false } end
  return { token = "S3CRET-" .. "value", n = 1 }
end }
tg.tool { name = "runs_fine", read_only = true, run = function() return {} end }
tg.tool { name = "caller", read_only = true, run = function(args, ctx)
  local out = ctx.call("leaky", args)
  return { status = out.status, result = out.result, error = out.error }
end }
]]

  it("when it raises: status error, and the secret is in no outcome field and no event", function()
    local rt = H.runtime {
      ["00_tools.lua"] = tools,
      ["20_redact.lua"] = [[
local tg = require "toolgate"
tg.after_tool("leaky", function(call, res)
  local redacted = res.result.token:gsub("S3CRET%-%w+", "[redacted]")
  error("redaction broke")
end)
]],
    }
    local events = H.record(rt)
    local out, h = H.call(rt, "leaky", {})
    assert.are.equal("error", out.status)
    assert.are.equal("HOOK_ERROR", out.error.code)
    assert.is_true(H.has(out.error.message, "withheld"), out.error.message)
    assert.is_true(H.has(out.error.message, "20_redact.lua:2"), out.error.message)
    assert.is_nil(out.result)
    assert.is_false(carries(out, "S3CRET"), "the outcome carries the secret")
    assert.is_false(carries(h:outcome(), "S3CRET"), "the handle's outcome carries the secret")
    assert.is_true(#H.of_call(events, h.id, "call_end") == 1)
    for _, ev in ipairs(events) do
      assert.is_false(carries(ev, "S3CRET"), "a '" .. ev.type .. "' event carries the secret")
    end
    assert.are.equal("ok", H.call(rt, "runs_fine", {}).status)
  end)

  it("when the tool failed too: its partial result is withheld as well", function()
    local rt = H.runtime {
      ["00_tools.lua"] = tools,
      ["20_redact.lua"] = [[
local tg = require "toolgate"
tg.after_tool("leaky", function(call, res) error("redaction broke") end)
]],
    }
    local events = H.record(rt)
    local out = H.call(rt, "leaky", { fail = true })
    assert.are.equal("error", out.status)
    assert.is_nil(out.result)
    assert.is_false(carries(out, "S3CRET"))
    for _, ev in ipairs(events) do assert.is_false(carries(ev, "S3CRET"), ev.type) end
  end)

  it("when it returns something that is not a verdict: the same", function()
    local rt = H.runtime {
      ["00_tools.lua"] = tools,
      ["20_redact.lua"] = [[
local tg = require "toolgate"
tg.after_tool("leaky", function(call, res) return "redacted?" end)
]],
    }
    local out = H.call(rt, "leaky", {})
    assert.are.equal("error", out.status)
    assert.is_nil(out.result)
  end)

  it("when it aborts: the result is withheld and later post-hooks do not see it", function()
    local rt = H.runtime {
      ["00_tools.lua"] = tools,
      ["20_redact.lua"] = [[
local tg = require "toolgate"
tg.after_tool("leaky", function(call, res)   -- runs last
  return tg.result({ saw = res.result or "nothing", status = res.status })
end)
tg.after_tool("leaky", function(call, res) return tg.abort("cannot redact") end)
]],
    }
    local events = H.record(rt)
    local out = H.call(rt, "leaky", {})
    assert.are.equal("ok", out.status)
    assert.are.same({ saw = "nothing", status = "error" }, out.result)
    for _, ev in ipairs(events) do assert.is_false(carries(ev, "S3CRET"), ev.type) end
  end)

  it("when it aborts as the last post-hook: status error, no result", function()
    local rt = H.runtime {
      ["00_tools.lua"] = tools,
      ["20_redact.lua"] = [[
local tg = require "toolgate"
tg.after_tool("leaky", function(call, res) return tg.abort("cannot redact") end)
]],
    }
    local out = H.call(rt, "leaky", {})
    assert.are.equal("error", out.status)
    assert.is_true(H.has(out.error.message, "cannot redact"), out.error.message)
    assert.is_nil(out.result)
    assert.is_false(carries(out, "S3CRET"))
  end)

  it("a Lua tool calling it with ctx.call gets no result either", function()
    local rt = H.runtime {
      ["00_tools.lua"] = tools,
      ["20_redact.lua"] = [[
local tg = require "toolgate"
tg.after_tool("leaky", function(call, res) error("redaction broke") end)
]],
    }
    local out = H.call(rt, "caller", {})
    assert.are.equal("ok", out.status)
    assert.are.equal("error", out.result.status)
    assert.is_nil(out.result.result)
    assert.is_false(carries(out, "S3CRET"))
  end)
end)

describe("many hooks", function()
  after_each(H.cleanup)

  -- n hooks on one line each, so their file:line tells them apart.
  local function many(kind, n, last)
    -- each counts itself in call.metadata.ran, which lives as long as the call
    local lines = { 'local tg = require "toolgate"' }
    for i = 1, n do
      lines[#lines + 1] = ("tg.%s(\"*\", function(call, res) local m = call.metadata; m.ran = (m.ran or 0) + 1; local ran = m.ran %s end)")
        :format(kind, i == last.at and last.body or "")
    end
    return table.concat(lines, "\n") .. "\n"
  end

  -- The `hook` events of one call, as the list of file:line they name.
  local function ran_hooks(events, id, stage)
    local out = {}
    for _, ev in ipairs(H.of_call(events, id, "hook")) do
      if ev.stage == stage then out[#out + 1] = ev.hook end
    end
    return out
  end

  local function wheres(list)
    local out = {}
    for i, h in ipairs(list) do out[i] = h.where end
    return out
  end

  it("300 \"*\" pre-hooks: the last one runs and aborts; explain and check list what ran", function()
    local rt = H.runtime {
      ["00_tools.lua"] = H.lib.tools,
      ["10_allow.lua"] = allow_all,
      ["20_hooks.lua"] = many("before_tool", 300,
                              { at = 300, body = 'if call.tool == "touch" then return tg.abort("hook " .. ran .. " says no") end' }),
    }
    local events = H.record(rt)
    local out, h = H.call(rt, "touch", {})
    assert.are.equal("denied", out.status)
    assert.are.equal("PRE_HOOK", out.error.phase)
    assert.is_true(H.has(out.error.message, "hook 300 says no"), out.error.message)
    assert.are.equal(0, H.runs(rt))
    local ran = ran_hooks(events, h.id, "before")
    assert.are.equal(300, #ran)
    local e = assert(rt:explain("touch", {}))
    assert.are.same(ran, wheres(e.pre_hooks))
    assert.are.same(ran, wheres(rt:describe().hooks.before))
  end)

  it("300 \"*\" post-hooks all run, in reverse registration order, as explain and check list them", function()
    local rt = H.runtime {
      ["00_tools.lua"] = H.lib.tools,
      ["20_hooks.lua"] = many("after_tool", 300,
                              { at = 1, body = "return tg.result({ ran = ran })" }),
    }
    local events = H.record(rt)
    local out, h = H.call(rt, "echo", {})
    assert.are.equal("ok", out.status)
    assert.are.same({ ran = 300 }, out.result)
    local ran = ran_hooks(events, h.id, "after")
    assert.are.equal(300, #ran)
    assert.is_truthy(ran[1]:match("20_hooks%.lua:301$"), ran[1])  -- registered last
    assert.is_truthy(ran[300]:match("20_hooks%.lua:2$"), ran[300]) -- registered first
    local e = assert(rt:explain("echo", {}))
    assert.are.same(ran, wheres(e.post_hooks))
    assert.are.same(ran, wheres(rt:describe().hooks.after))
  end)

  it("300 \"*\" post-hooks: the one that runs last can still withhold the result", function()
    local rt = H.runtime {
      ["00_tools.lua"] = H.lib.tools,
      ["20_hooks.lua"] = many("after_tool", 300, { at = 1, body = 'return tg.abort("no")' }),
    }
    local out = H.call(rt, "echo", { x = 1 })
    assert.are.equal("error", out.status)
    assert.is_nil(out.result)
  end)

  it("300 rules: the last one decides, and explain says the same", function()
    local lines = { 'local tg = require "toolgate"' }
    for i = 1, 299 do
      lines[#lines + 1] = ('tg.rule { name = "r%d", priority = %d, check = function() end }'):format(i, i)
    end
    lines[#lines + 1] = 'tg.rule { name = "r300", priority = 300, check = function() return tg.deny("last") end }'
    local rt = H.runtime {
      ["00_tools.lua"] = H.lib.tools,
      ["10_rules.lua"] = table.concat(lines, "\n") .. "\n",
    }
    local out = H.call(rt, "echo", {})
    assert.are.equal("denied", out.status)
    assert.are.equal("r300", out.decision.rule)
    local e = assert(rt:explain("echo", {}))
    assert.are.equal(300, #e.rules)
    assert.are.equal("answered", e.rules[300].status)
    assert.are.equal("r300", e.decision.rule)
    assert.are.equal(300, #rt:describe().rules)
  end)
end)
