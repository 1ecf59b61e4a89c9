-- toolgate.error_codes: every code the runtime emits, name -> its line of
-- documentation (the list is TG_ERROR_CODE_MAP in include/toolgate.h;
-- spec/c/test_error_codes.c keeps the README table in step with it).
local H = require "spec.lua.helpers"
local toolgate = H.toolgate

describe("toolgate.error_codes", function()
  after_each(H.cleanup)

  it("maps each code's name to one line of documentation", function()
    local n = 0
    for name, doc in pairs(toolgate.error_codes) do
      n = n + 1
      assert.is_truthy(name:match("^[A-Z_]+$"), name)
      assert.are.equal("string", type(doc))
      assert.is_truthy(doc ~= "" and not doc:find("\n"), name)
    end
    assert.is_true(n > 30, "only " .. n .. " codes")
    for _, name in ipairs { "UNKNOWN_TOOL", "INVALID_ARGS", "DENIED", "RULE_ERROR",
                            "HOOK_ERROR", "TIMEOUT", "CANCELLED", "TIME_LIMIT",
                            "MEMORY_CAP", "OUTSIDE_WORKSPACE" } do
      assert.is_string(toolgate.error_codes[name], name)
    end
  end)

  it("holds the codes calls end with; a tool's own code is not in it", function()
    local rt = H.runtime [[
local tg = require "toolgate"
tg.tool { name = "raises", read_only = true, run = function() error("boom") end }
tg.tool { name = "own", read_only = true, run = function() return nil, { code = "FLAKY", message = "m" } end }
tg.tool { name = "plain", read_only = true, run = function() return nil, "no code" end }
tg.tool { name = "secret", read_only = true, run = function() return "x" end }
tg.rule { name = "no-secret", tools = { "secret" }, check = function() return tg.deny("no") end }
]]
    local want = { raises = "TOOL_RAISED", plain = "TOOL_ERROR", secret = "DENIED" }
    for tool, code in pairs(want) do
      local out = H.call(rt, tool, {})
      assert.are.equal(code, out.error.code, tool)
      assert.is_string(toolgate.error_codes[out.error.code], tool)
    end
    local h, _, code = rt:call("no_such_tool", {}) -- refused at once
    assert.is_nil(h)
    assert.are.equal("UNKNOWN_TOOL", code)
    assert.is_string(toolgate.error_codes[code])
    local out = H.call(rt, "own", {})
    assert.are.equal("FLAKY", out.error.code)
    assert.is_nil(toolgate.error_codes.FLAKY)
  end)
end)
