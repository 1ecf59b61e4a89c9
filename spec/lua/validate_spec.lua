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

-- MCP tools bring arbitrary 2020-12 schemas: $defs and $ref, ECMA-262
-- patterns, closed objects through unevaluatedProperties.
local mcp_policy = [[
local tg = require "toolgate"
tg.tool { name = "create_issue", read_only = true,
  schema = {
    ["$schema"] = "https://json-schema.org/draft/2020-12/schema",
    type = "object",
    ["$defs"] = { login = { type = "string", pattern = "^[A-Za-z\\d-]{1,39}$" } },
    required = { "owner", "title" },
    properties = {
      owner = { ["$ref"] = "#/$defs/login" },
      title = { type = "string", minLength = 1 },
      assignees = { type = "array", items = { ["$ref"] = "#/$defs/login" }, uniqueItems = true },
      estimate = { type = "number", multipleOf = 0.25 },
    },
    ["if"] = { required = { "estimate" } },
    ["then"] = { required = { "assignees" } },
    unevaluatedProperties = false,
  },
  run = function(args) return { ok = true } end }
]]

describe("validation of a 2020-12 schema", function()
  after_each(H.cleanup)

  it("accepts args that match, with \\d read as ECMA-262 does", function()
    local rt = H.runtime(mcp_policy)
    local out = H.call(rt, "create_issue", { owner = "octo-cat42", title = "x",
      assignees = { "a1", "b2" }, estimate = 1.75 })
    assert.are.equal("ok", out.status, out.error and out.error.message)
  end)

  it("follows $ref into $defs and names the path of the bad item", function()
    local rt = H.runtime(mcp_policy)
    local out = H.call(rt, "create_issue", { owner = "o", title = "x",
      assignees = { "ok", "not ok!" }, estimate = 1 })
    assert.are.equal("VALIDATE", out.error.phase)
    assert.is_true(H.has(out.error.message,
      "$.assignees[1]: does not match pattern"), out.error.message)
  end)

  it("refuses duplicates, decimals off the grid, and then without its if", function()
    local rt = H.runtime(mcp_policy)
    local dup = H.call(rt, "create_issue", { owner = "o", title = "x", assignees = { "a", "a" } })
    assert.is_true(H.has(dup.error.message, "$.assignees: items [0] and [1] are equal"),
      dup.error.message)
    local grid = H.call(rt, "create_issue", { owner = "o", title = "x", assignees = { "a" }, estimate = 0.3 })
    assert.is_true(H.has(grid.error.message, "$.estimate: 0.3 is not a multiple of 0.25"),
      grid.error.message)
    local need = H.call(rt, "create_issue", { owner = "o", title = "x", estimate = 1 })
    assert.is_true(H.has(need.error.message, "missing required property \"assignees\""),
      need.error.message)
  end)

  it("closes the object: an unknown property is refused by unevaluatedProperties", function()
    local rt = H.runtime(mcp_policy)
    local out = H.call(rt, "create_issue", { owner = "o", title = "x", labels = { "bug" } })
    assert.are.equal("VALIDATE", out.error.phase)
    assert.is_true(H.has(out.error.message,
      "$.labels: property not allowed (unevaluatedProperties is false)"), out.error.message)
  end)

  it("a schema with a remote $ref is refused when the tool registers, naming file:line", function()
    local dir = H.policy_dir("local tg = require 'toolgate'\n\n"
      .. "tg.tool { name = 'x', run = function() end,\n"
      .. "  schema = { properties = { a = { ['$ref'] = 'https://example.com/a.json' } } } }\n")
    local rt, err = H.toolgate.new { policies = dir }
    if rt then H.track(rt) end
    assert.is_nil(rt)
    assert.is_true(H.has(err, "10_policy.lua:3"), err)
    assert.is_true(H.has(err, "tg.tool 'x': schema at $.properties.a: '$ref' "
      .. "\"https://example.com/a.json\" points outside this schema"), err)
  end)

  it("a pattern that is not ECMA-262 is refused when the tool registers", function()
    local dir = H.policy_dir("local tg = require 'toolgate'\n"
      .. "tg.tool { name = 'x', run = function() end, schema = { pattern = '\\\\Aabc' } }\n")
    local rt, err = H.toolgate.new { policies = dir }
    if rt then H.track(rt) end
    assert.is_nil(rt)
    assert.is_true(H.has(err, "\\A is not an ECMA-262 escape"), err)
  end)
end)

describe("toolgate.schema", function()
  local toolgate = H.toolgate

  it("validates host values: true, or false and every failure", function()
    local v = toolgate.schema { type = "object", required = { "name" },
      properties = { name = { type = "string" }, tags = { type = "array", items = { type = "string" } } } }
    assert.is_true(v:validate { name = "a", tags = { "x" } })
    local ok, errors = v:validate { tags = { "x", 2, false } }
    assert.is_false(ok)
    assert.are.same({
      { path = "$", keyword = "required", message = "missing required property \"name\"" },
      { path = "$.tags[1]", keyword = "type", message = "expected string, got number" },
      { path = "$.tags[2]", keyword = "type", message = "expected string, got boolean" },
    }, errors)
  end)

  it("takes JSON text, and booleans", function()
    local v = toolgate.schema [[{"$schema": "http://json-schema.org/draft-07/schema#",
      "items": [{"type": "integer"}], "additionalItems": false}]]
    assert.is_true(v:validate { 1 })
    local ok, errors = v:validate { 1, 2 }
    assert.is_false(ok)
    assert.are.equal("$[1]", errors[1].path)
    assert.are.equal("additionalItems", errors[1].keyword)
    assert.is_true(toolgate.schema(true):validate(toolgate.null))
    assert.is_false((toolgate.schema(false):validate(1)))
  end)

  it("raises with the reason for a bad schema", function()
    local ok, err = pcall(toolgate.schema, { type = "strng" })
    assert.is_false(ok)
    assert.is_true(H.has(err, "toolgate.schema: schema at $: 'type' names an unknown type \"strng\""), err)
    ok, err = pcall(toolgate.schema, '{"$ref": "#/nowhere"}')
    assert.is_true(H.has(err, "'$ref' \"#/nowhere\" points at nothing"), err)
    ok, err = pcall(toolgate.schema, "{")
    assert.is_true(H.has(err, "toolgate.schema: invalid JSON"), err)
    ok, err = pcall(toolgate.schema, 42)
    assert.is_true(H.has(err, "must be a table, a boolean or JSON text (got number)"), err)
  end)

  it("raises for a value that is not JSON", function()
    local v = toolgate.schema {}
    local ok, err = pcall(v.validate, v, { f = print })
    assert.is_false(ok)
    assert.is_true(H.has(err, "toolgate.schema: validate: $.f:"), err)
  end)

  it("stops a catastrophic pattern with a clear failure", function()
    local v = toolgate.schema { pattern = "^(a|aa)+$" }
    local ok, errors = v:validate(("a"):rep(5000) .. "!")
    assert.is_false(ok)
    assert.are.equal("pattern", errors[1].keyword)
    assert.is_true(H.has(errors[1].message, "is too costly to match against pattern"), errors[1].message)
  end)
end)
