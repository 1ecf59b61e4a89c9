-- Validate: args against the tool's JSON Schema, errors naming the path.
local H = require "spec.lua.helpers"

local policy = [[
local tg = require "toolgate"
local runs = 0
tg.tool { name = "upload", read_only = true,
  schema = { type = "object", required = { "files" },
    properties = {
      files = { type = "array", items = { type = "object", required = { "name" },
        properties = { name = { type = "string" }, size = { type = "integer", minimum = 0 } } } },
      mode = { enum = { "fast", "safe" } },
    } },
  run = function(args) runs = runs + 1; return { count = #args.files } end }
tg.tool { name = "runs", read_only = true, run = function() return { n = runs } end }
]]

describe("validation", function()
  after_each(H.cleanup)

  it("accepts args that match the schema", function()
    local rt = H.runtime(policy)
    local out = H.call(rt, "upload", { files = { { name = "a" }, { name = "b", size = 3 } } })
    assert.are.equal("ok", out.status)
    assert.are.same({ count = 2 }, out.result)
  end)

  it("names the JSON path that failed and reports phase VALIDATE", function()
    local rt = H.runtime(policy)
    local out = H.call(rt, "upload", { files = { { name = "a" }, { name = 5 } } })
    assert.are.equal("error", out.status)
    assert.are.equal("VALIDATE", out.error.phase)
    assert.is_true(H.has(out.error.message, "$.files[1].name"),
      "message: " .. tostring(out.error.message))
  end)

  it("names a missing required property", function()
    local rt = H.runtime(policy)
    local out = H.call(rt, "upload", { files = { {} } })
    assert.are.equal("VALIDATE", out.error.phase)
    assert.is_true(H.has(out.error.message, "$.files[0]"), out.error.message)
    assert.is_true(H.has(out.error.message, "name"), out.error.message)
  end)

  it("names the path of an enum mismatch", function()
    local rt = H.runtime(policy)
    local out = H.call(rt, "upload", '{"files": [], "mode": "reckless"}')
    assert.are.equal("VALIDATE", out.error.phase)
    assert.is_true(H.has(out.error.message, "$.mode"), out.error.message)
  end)

  it("does not run the tool when validation fails", function()
    local rt = H.runtime(policy)
    local events = H.record(rt)
    local out, h = H.call(rt, "upload", { files = { { name = "a", size = -1 } } })
    assert.are.equal("VALIDATE", out.error.phase)
    assert.is_true(H.has(out.error.message, "$.files[0].size"), out.error.message)
    assert.are.equal(0, H.count(events, h.id, "attempt"))
    assert.are.equal(1, H.count(events, h.id, "validation_failed"))
    assert.are.equal(0, H.call(rt, "runs", {}).result.n)
  end)
end)
