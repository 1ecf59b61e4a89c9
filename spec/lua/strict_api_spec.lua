-- Strict registration: a misspelt key or tool name is not ignored in
-- silence. Unknown keys in tg.* spec tables are load errors at file:line;
-- tool names no tool registers are warnings of check (rt:describe); hooks
-- and rules' tools match by glob, in one run order.
local H = require "spec.lua.helpers"
local toolgate = H.toolgate

-- Loads one policy file; returns the load error (nil when it loaded).
local function load_error(src)
  local dir = H.policy_dir { ["10_p.lua"] = src }
  local rt, err = toolgate.new { policies = dir }
  if rt then
    H.track(rt)
    return nil
  end
  return err
end

local function warnings(rt)
  return rt:describe().warnings
end

local function has_warning(rt, text)
  for _, w in ipairs(warnings(rt)) do
    if H.has(w, text) then return true end
  end
  return false
end

describe("unknown keys in spec tables", function()
  after_each(H.cleanup)

  it("tg.rule { prority = 5 } is an error naming the key, the known keys and file:line", function()
    local err = load_error([[
local tg = require "toolgate"

tg.rule { name = "r", prority = 5, check = function() end }
]])
    assert.is_truthy(err)
    assert.is_true(H.has(err, "10_p.lua:3: tg.rule: unknown key 'prority' "
      .. "(known: name, priority, tools, check, fail)"), err)
  end)

  it("tg.rule { tool = \"exec\" } (for tools) does not make a rule for every tool", function()
    local err = load_error([[
local tg = require "toolgate"
tg.rule { name = "r", tool = "exec", check = function() return tg.deny("no") end }
]])
    assert.is_true(H.has(err, "10_p.lua:2: tg.rule: unknown key 'tool'"), err)
  end)

  it("tg.tool and its retry table check their keys too", function()
    local err = load_error([[
local tg = require "toolgate"
tg.tool { name = "t", readonly = true, run = function() end }
]])
    assert.is_true(H.has(err, "10_p.lua:2: tg.tool: unknown key 'readonly' (known: "
      .. "name, description, read_only, schema, run, timeout_ms, max_result_bytes, retry)"), err)
    err = load_error([[
local tg = require "toolgate"
tg.tool { name = "t", run = function() end,
  retry = { attempt = 3 } }
]])
    assert.is_true(H.has(err, "tg.tool retry: unknown key 'attempt' (known: attempts, "
      .. "initial_ms, max_ms, multiplier, jitter, retryable)"), err)
  end)

  it("keys that are not names, and lists with named entries, are refused", function()
    local err = load_error([[
local tg = require "toolgate"
tg.rule { "r", name = "r", check = function() end }
]])
    assert.is_true(H.has(err, "tg.rule: unknown key [1]"), err)
    err = load_error([[
local tg = require "toolgate"
tg.rule { name = "r", tools = { "exec", read_file = true }, check = function() end }
]])
    assert.is_true(H.has(err, "'tools' must be a list of names (it has the key 'read_file')"), err)
  end)

  it("reads spec tables raw: a key only an __index supplies is not there", function()
    local err = load_error([[
local tg = require "toolgate"
tg.rule(setmetatable({ name = "r" }, { __index = { check = function() end } }))
]])
    assert.is_true(H.has(err, "'check' must be a function"), err)
  end)

  it("every key the API documents is accepted", function()
    local rt = H.runtime [[
local tg = require "toolgate"
tg.rule { name = "r", priority = 5, tools = { "t" }, fail = "open", check = function() end }
tg.tool { name = "t", description = "d", read_only = true, schema = { type = "object" },
  timeout_ms = 1000, max_result_bytes = 100,
  retry = { attempts = 2, initial_ms = 1, max_ms = 2, multiplier = 2, jitter = 0,
            retryable = function() return false end },
  run = function() return {} end }
]]
    assert.are.equal(1, #rt:describe().rules)
  end)
end)

describe("tool names no tool registers", function()
  after_each(H.cleanup)

  it("are warnings of check, naming the rule or hook, its file:line and the likely tool", function()
    local rt = H.runtime [[
local tg = require "toolgate"
tg.rule { name = "no-rm", tools = { "exce" }, check = function() end }
tg.after_tool("wirte_file", function() end)
tg.before_tool("mcp__*", function() end)
tg.before_tool("exec", function() end)
tg.before_tool("*", function() end)
]]
    local w = warnings(rt)
    assert.are.equal(2, #w, table.concat(w, "\n")) -- mcp__*: the agents' MCP tools
    assert.is_true(has_warning(rt, "rule 'no-rm' (") and has_warning(rt, "10_policy.lua:2) "
      .. "names the tool 'exce', but no tool has that name (did you mean 'exec'?)"))
    assert.is_true(has_warning(rt, "tg.after_tool hook at ") and has_warning(rt, "10_policy.lua:3 "
      .. "names the tool 'wirte_file', but no tool has that name (did you mean 'write_file'?)"))
  end)

  it("know the agents' tools, and a glob no tool matches lists the registered ones", function()
    local rt = H.runtime [[
local tg = require "toolgate"
tg.rule { name = "agent", tools = { "Bash", "MultiEdit", "shell", "glob", "mcp__gh__x", "mcp__gh__*" }, check = function() end }
tg.before_tool("wr*tx", function() end)
]]
    local w = warnings(rt)
    assert.are.equal(1, #w, table.concat(w, "\n"))
    assert.is_true(has_warning(rt, "has the glob 'wr*tx', but no known tool matches it "
      .. "(registered: exec, read_file, list_dir, write_file, apply_patch; or an agent's tool"))
  end)

  it("the generation's Lua tools count as registered", function()
    local rt = H.runtime {
      ["00_tools.lua"] = H.lib.tools,
      ["10_p.lua"] = [[
local tg = require "toolgate"
tg.rule { name = "r", tools = { "touch", "e*o" }, check = function() end }
tg.before_tool("runs", function() end)
]],
    }
    assert.are.same({}, warnings(rt))
  end)

  it("a malformed glob is a load error", function()
    local err = load_error([[
local tg = require "toolgate"
tg.before_tool("mcp__[abc", function() end)
]])
    assert.is_true(H.has(err, "10_p.lua:2: tg.before_tool: bad glob 'mcp__[abc'"), err)
    err = load_error([[
local tg = require "toolgate"
tg.rule { name = "r", tools = { "{read,write_file" }, check = function() end }
]])
    assert.is_true(H.has(err, "tg.rule: bad glob '{read,write_file': a '{' is not closed"), err)
  end)
end)

describe("glob hooks and rules", function()
  after_each(H.cleanup)

  local tools = [[
local tg = require "toolgate"
local function echo(args) return args end
tg.tool { name = "mcp__fs__read", read_only = true, run = echo }
tg.tool { name = "mcp__git__log", read_only = true, run = echo }
tg.tool { name = "local_read", read_only = true, run = echo }
]]

  it("a rule's tools may be globs", function()
    local rt = H.runtime {
      ["00_tools.lua"] = tools,
      ["10_p.lua"] = [[
local tg = require "toolgate"
tg.rule { name = "no-mcp", tools = { "mcp__*" }, check = function() return tg.deny("no mcp") end }
]],
    }
    assert.are.equal("denied", H.call(rt, "mcp__git__log", {}).status)
    assert.are.equal("denied", H.call(rt, "mcp__fs__read", {}).status)
    assert.are.equal("ok", H.call(rt, "local_read", {}).status)
    local e = assert(rt:explain("local_read", {}))
    assert.are.equal("skipped", e.rules[1].status)
  end)

  it("pre-hooks run \"*\", then globs, then the tool's own; post-hooks the other way round", function()
    local rt = H.runtime {
      ["00_tools.lua"] = tools,
      ["10_p.lua"] = [[
local tg = require "toolgate"
local function mark(tag)
  return function(call) call.metadata.seen = (call.metadata.seen or "") .. tag end
end
local function wrap(tag)
  return function(call, res)
    local r = res.result
    if type(r) == "table" then r = r.seen end
    return tg.result(r .. tag)
  end
end
tg.before_tool("mcp__fs__read", mark("exact1 "))
tg.before_tool("mcp__*", mark("glob1 "))
tg.before_tool("*", mark("any1 "))
tg.before_tool("*__read", mark("glob2 "))
tg.before_tool("local_*", mark("other "))
tg.before_tool("*", mark("any2 "))
tg.before_tool("mcp__fs__read", function(call)
  call.metadata.seen = call.metadata.seen .. "exact2"
  return tg.args({ seen = call.metadata.seen })
end)
tg.after_tool("mcp__fs__read", wrap(" exact"))
tg.after_tool("*", wrap(" any"))
tg.after_tool("mcp__*", wrap(" glob"))
]],
    }
    local out = H.call(rt, "mcp__fs__read", {})
    assert.are.equal("ok", out.status)
    assert.are.equal("any1 any2 glob1 glob2 exact1 exact2 exact glob any", out.result)
    -- explain and check list the same order
    local e = assert(rt:explain("mcp__fs__read", {}))
    local names = {}
    for i, h in ipairs(e.pre_hooks) do names[i] = h.tool end
    assert.are.same({ "*", "*", "mcp__*", "*__read", "mcp__fs__read", "mcp__fs__read" }, names)
    names = {}
    for i, h in ipairs(e.post_hooks) do names[i] = h.tool end
    assert.are.same({ "mcp__fs__read", "mcp__*", "*" }, names)
    names = {}
    for i, h in ipairs(rt:describe().hooks.before) do names[i] = h.tool end
    assert.are.same({ "*", "*", "mcp__*", "*__read", "local_*", "mcp__fs__read",
                      "mcp__fs__read" }, names)
  end)

  it("{a,b} alternatives name several tools", function()
    local rt = H.runtime {
      ["00_tools.lua"] = tools,
      ["10_p.lua"] = [[
local tg = require "toolgate"
tg.before_tool("{local_read,mcp__git__log}", function() return tg.abort("paused") end)
]],
    }
    assert.are.equal("denied", H.call(rt, "local_read", {}).status)
    assert.are.equal("denied", H.call(rt, "mcp__git__log", {}).status)
    assert.are.equal("ok", H.call(rt, "mcp__fs__read", {}).status)
  end)
end)
