-- Authorize: rules by priority, first answer wins, default verdicts.
local H = require "spec.lua.helpers"

describe("rules", function()
  after_each(H.cleanup)

  it("lets the lowest priority number answer first", function()
    local rt = H.runtime {
      ["00_tools.lua"] = H.lib.tools,
      ["10_rules.lua"] = [[
local tg = require "toolgate"
tg.rule { name = "deny-at-20", priority = 20, check = function() return tg.deny("twenty") end }
tg.rule { name = "allow-at-10", priority = 10, check = function() return tg.allow() end }
]],
    }
    local out = H.call(rt, "touch", {})
    assert.are.equal("ok", out.status)
    assert.are.equal("allow", out.decision.verdict)
    assert.are.equal("allow-at-10", out.decision.rule)
    assert.are.equal(1, H.runs(rt))
  end)

  it("asks the next rule when one returns nothing", function()
    local rt = H.runtime {
      ["00_tools.lua"] = H.lib.tools,
      ["10_rules.lua"] = [[
local tg = require "toolgate"
tg.rule { name = "silent", priority = 1, check = function() end }
tg.rule { name = "denier", priority = 2, check = function() return tg.deny("no touching") end }
]],
    }
    local out = H.call(rt, "touch", {})
    assert.are.equal("denied", out.status)
    assert.are.equal("denier", out.decision.rule)
    assert.are.equal("AUTHORIZE", out.error.phase)
    assert.is_true(H.has(out.error.message, "no touching"))
  end)

  it("breaks priority ties by registration order, across files too", function()
    local rt = H.runtime {
      ["00_tools.lua"] = H.lib.tools,
      ["10_first.lua"] = [[
local tg = require "toolgate"
tg.rule { name = "zeta", priority = 5, tools = { "touch" }, check = function() return tg.deny("zeta was first") end }
]],
      ["20_second.lua"] = [[
local tg = require "toolgate"
tg.rule { name = "alpha", priority = 5, tools = { "touch" }, check = function() return tg.allow() end }
]],
    }
    local out = H.call(rt, "touch", {})
    assert.are.equal("denied", out.status)
    assert.are.equal("zeta", out.decision.rule)
    assert.are.equal(0, H.runs(rt))
  end)

  it("runs a rule restricted with tools = {...} only for those tools", function()
    local rt = H.runtime {
      ["00_tools.lua"] = H.lib.tools,
      ["10_rules.lua"] = [[
local tg = require "toolgate"
tg.tool { name = "x", run = function() return "x ran" end }
tg.tool { name = "y", run = function() return "y ran" end }
tg.rule { name = "deny-x", priority = 1, tools = { "x" }, check = function() return tg.deny("x is off") end }
tg.rule { name = "allow-all", priority = 2, check = function() return tg.allow() end }
]],
    }
    local outx = H.call(rt, "x", {})
    assert.are.equal("denied", outx.status)
    assert.are.equal("deny-x", outx.decision.rule)
    local outy = H.call(rt, "y", {})
    assert.are.equal("ok", outy.status)
    assert.are.equal("y ran", outy.result)
    assert.are.equal("allow-all", outy.decision.rule)
  end)

  it("gives the rule the call: tool, args, session and metadata", function()
    local rt = H.runtime {
      ["00_tools.lua"] = H.lib.tools,
      ["10_rules.lua"] = [[
local tg = require "toolgate"
tg.rule { name = "inspect", check = function(call)
  if call.tool == "touch" and call.args.path == "/etc/passwd"
     and call.session == "s1" and call.metadata.who == "me" then
    return tg.deny("saw " .. call.args.path)
  end
end }
]],
    }
    local out = H.call(rt, "touch", { path = "/etc/passwd" },
                       { session = "s1", metadata = { who = "me" } })
    assert.are.equal("denied", out.status)
    assert.is_true(H.has(out.error.message, "saw /etc/passwd"))
  end)
end)

describe("default verdict", function()
  after_each(H.cleanup)

  it("allows a read-only tool when no rule answers", function()
    local rt = H.runtime(H.lib.tools)
    local out = H.call(rt, "echo", { a = 1 })
    assert.are.equal("ok", out.status)
    assert.are.same({ a = 1 }, out.result)
    assert.are.equal("allow", out.decision.verdict)
    assert.is_nil(out.decision.rule)
  end)

  it("asks for a tool that is not read-only, rejected when there is no approver", function()
    local rt = H.runtime(H.lib.tools)
    local events = H.record(rt)
    local out, h = H.call(rt, "touch", {})
    assert.are.equal("rejected", out.status)
    assert.are.equal("ask", out.decision.verdict)
    assert.are.equal("APPROVE", out.error.phase)
    assert.is_true(H.has(out.error.message, "did not run"))
    assert.are.equal(0, H.count(events, h.id, "attempt"))
    assert.are.equal(0, H.runs(rt))
  end)

  it("follows default_verdict = \"allow\"", function()
    local rt = H.runtime(H.lib.tools, { default_verdict = "allow" })
    local out = H.call(rt, "touch", {})
    assert.are.equal("ok", out.status)
    assert.are.equal("allow", out.decision.verdict)
    assert.are.equal(1, H.runs(rt))
  end)

  it("follows default_verdict = \"deny\"", function()
    local rt = H.runtime(H.lib.tools, { default_verdict = "deny" })
    local out = H.call(rt, "touch", {})
    assert.are.equal("denied", out.status)
    assert.are.equal("AUTHORIZE", out.error.phase)
    assert.are.equal("deny", out.decision.verdict)
    assert.is_true(H.has(out.error.message, "did not run"))
    assert.are.equal(0, H.runs(rt))
  end)

  it("still allows read-only tools under default_verdict = \"deny\"", function()
    local rt = H.runtime(H.lib.tools, { default_verdict = "deny" })
    local out = H.call(rt, "echo", { k = "v" })
    assert.are.equal("ok", out.status)
  end)

  it("rejects a bad default_verdict when the runtime is made", function()
    assert.has_error(function()
      H.toolgate.new { default_verdict = "maybe" }
    end)
  end)
end)

describe("rules are judges", function()
  after_each(H.cleanup)

  -- "guard" denies touching secrets; "meddler" runs first and changes the
  -- call in a way that would make guard look at something else.
  local function with_meddler(change)
    return H.runtime {
      ["00_tools.lua"] = H.lib.tools,
      ["10_rules.lua"] = [[
local tg = require "toolgate"
tg.rule { name = "meddler", priority = 1, check = function(call)
  if call.tool == "touch" then ]] .. change .. [[ end
end }
tg.rule { name = "guard", priority = 2, check = function(call)
  if call.tool == "touch" and tostring(call.args.path):match("%.env$") then return tg.deny("secrets") end
  return tg.allow()
end }
]],
    }
  end

  for name, change in pairs {
    ["call.args in place"] = 'call.args.path = "harmless.txt"',
    ["call.args replaced"] = 'call.args = { path = "harmless.txt" }',
    ["call.tool"] = 'call.tool = "echo"',
    ["call.tool, after a NUL"] = 'call.tool = call.tool .. "\\0x"',
    ["call's metatable"] = 'rawset(call, "tool", nil); setmetatable(call, { __index = { tool = "echo" } })',
  } do
    it("a rule that changes " .. name .. " fails the call closed: the tool does not run", function()
      local rt = with_meddler(change)
      local out = H.call(rt, "touch", { path = "prod.env" })
      assert.are.equal("error", out.status)
      assert.are.equal("POLICY", out.error.phase)
      assert.are.equal("RULE_ERROR", out.error.code)
      assert.is_true(H.has(out.error.message, "rules are judges"), out.error.message)
      assert.are.equal(0, H.runs(rt))
      local e = assert(rt:explain("touch", { path = "prod.env" }))
      assert.are.equal("deny", e.decision.verdict)
      assert.is_true(e.decision.policy_error)
      assert.is_true(H.has(e.decision.reason, "rules are judges"), e.decision.reason)
    end)
  end

  it("a rule may keep notes in call.metadata", function()
    local rt = with_meddler("call.metadata.seen = true")
    assert.are.equal("ok", H.call(rt, "touch", { path = "notes.txt" }).status)
    assert.are.equal("denied", H.call(rt, "touch", { path = "prod.env" }).status)
  end)
end)
