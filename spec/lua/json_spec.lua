-- JSON in and out (issue 8, items 1, 4, 9 and 13): every JSON text goes
-- through one strict parser (duplicate keys, 1e400, invalid UTF-8, lone
-- surrogates and \u0000 refused, saying where); numbers come back exactly;
-- Lua values are read raw (metamethods never run, nothing raises from C);
-- and nothing leaks when Lua raises in the middle of a conversion (the
-- ASan build runs these specs under LeakSanitizer).
local H = require "spec.lua.helpers"
local toolgate = H.toolgate

-- Tools that show what a policy sees: echo returns its args, decode gives
-- back what tg.json_decode answered, encode what tg.json_encode answered
-- (or the error it raised), and touch counts its runs.
local TOOLS = H.lib.tools .. [[
tg.tool { name = "decode", read_only = true, run = function(args)
  local v, err = tg.json_decode((args.text:gsub("<FF>", "\255")))
  return { value = v == nil and tg.null or v, err = err or tg.null }
end }
tg.tool { name = "encode", read_only = true, run = function(args)
  local ok, text = pcall(tg.json_encode, args.value)
  return { ok = ok, text = text }
end }
]]

local function runtime(extra, opts)
  local files = { ["00_tools.lua"] = TOOLS }
  for k, v in pairs(extra or {}) do files[k] = v end
  return H.runtime(files, opts)
end

describe("JSON in: duplicate keys", function()
  after_each(H.cleanup)

  it("are refused in rt:call's JSON args, naming the key; the tool does not run", function()
    local rt = runtime()
    local err = H.invalid_args(rt, "touch", '{"command":"rm -f victim; echo removed","command":"echo hi"}')
    assert.is_true(H.has(err, '$.command: duplicate key "command"'), err)
    assert.are.equal(0, H.runs(rt))
  end)

  it("cannot make exec run another command than the one the rules judged", function()
    local dir = H.tmpdir()
    H.write(dir .. "/victim", "still here")
    local rt = runtime({ ["10_rules.lua"] = [[
local tg = require "toolgate"
tg.rule { name = "only-echo", tools = { "exec" }, check = function(call)
  if call.args.command:match("^echo ") then return tg.allow() end
  return tg.deny("only echo")
end }
]] })
    local err = H.invalid_args(rt, "exec", '{"command":"rm -f victim; echo removed","command":"echo hi","cwd":"'
      .. dir .. '"}')
    assert.is_true(H.has(err, 'duplicate key "command"'), err)
    assert.are.equal("still here", H.read(dir .. "/victim"))
  end)

  it("are refused by the README's no-env-files example: the secret is not read", function()
    local dir = H.tmpdir()
    H.write(dir .. "/.env", "SECRET=1")
    H.write(dir .. "/ok.txt", "fine")
    local rt = runtime({ ["10_rules.lua"] = [[
local tg = require "toolgate"
tg.rule { name = "no-env-files", priority = 10, tools = { "read_file" },
  check = function(call)
    if call.args.path:match("%.env$") then return tg.deny("secrets stay private") end
  end }
]] }, { workspace = dir })
    local err = H.invalid_args(rt, "read_file", '{"path":".env","path":"ok.txt"}')
    assert.is_true(H.has(err, '$.path: duplicate key "path"'), err)
    local out = H.call(rt, "read_file", { path = ".env" })
    assert.are.equal("denied", out.status)
  end)

  it("are named with their JSON path when nested", function()
    local rt = runtime()
    local err = H.invalid_args(rt, "echo", '{"a":{"list":[1,2,{"command":"x","command":"y"}]}}')
    assert.is_true(H.has(err, '$.a.list[2].command: duplicate key "command"'), err)
  end)

  it("are refused by rt:explain too", function()
    local rt = runtime()
    local j, err = rt:explain("touch", '{"path":"a","path":"b"}')
    assert.is_nil(j)
    assert.is_true(H.has(err, '$.path: duplicate key "path"'), err)
  end)

  it("are refused by tg.json_decode, with the path", function()
    local rt = runtime()
    local out = H.call(rt, "decode", { text = '[0, {"a":{"b":1,"b":2}}]' })
    assert.are.equal("ok", out.status, out.error and out.error.message)
    assert.are.equal(toolgate.null, out.result.value)
    assert.is_true(H.has(out.result.err, '$[1].a.b: duplicate key "b"'), out.result.err)
  end)

  it("written once in Lua with a NUL in one key cannot become two keys", function()
    local rt = runtime()
    local h, err = rt:call("touch", { path = "ok.txt", ["path\0"] = ".env" })
    assert.is_nil(h)
    assert.is_true(H.has(err, "NUL"), err)
    assert.are.equal(0, H.runs(rt))
  end)
end)

describe("JSON in: numbers and text that cannot be carried", function()
  after_each(H.cleanup)

  it("1e400 is refused at parse, not taken as infinity", function()
    local rt = runtime()
    local err = H.invalid_args(rt, "echo", '{"n":1e400}')
    assert.is_true(H.has(err, "$.n: the number 1e400 is out of range"), err)
    local out = H.call(rt, "decode", { text = "[-1e400]" })
    assert.is_true(H.has(out.result.err, "$[0]: the number -1e400 is out of range"), out.result.err)
  end)

  it("invalid UTF-8, lone surrogates and \\u0000 are refused, saying where", function()
    local rt = runtime()
    local cases = {
      { '{"s":"a\255"}', "$.s: a string is not valid UTF-8 (byte 0xff)" },
      { '{"s":"\\ud800"}', "$.s: \\ud800 in a string is a high surrogate" },
      { '{"s":"\\udc00x"}', "$.s: \\udc00 in a string is a lone low surrogate" },
      { '{"s":"echo hi\\u0000; rm -rf /"}', "$.s: \\u0000 (NUL) in a string" },
      { '{"k\\u0000":1}', "$: \\u0000 (NUL) in a key" },
      { '{"a":1} trailing', "$: text after the JSON value" },
    }
    for _, c in ipairs(cases) do
      local err = H.invalid_args(rt, "touch", c[1])
      assert.is_true(H.has(err, c[2]), err)
      local out = H.call(rt, "decode", { text = c[1]:gsub("\255", "<FF>") })
      assert.is_true(H.has(out.result.err, c[2]), out.result.err)
    end
    assert.are.equal(0, H.runs(rt))
  end)

  it("a Lua table with invalid UTF-8 is refused as args", function()
    local rt = runtime()
    local h, err = rt:call("touch", { command = "ok \255\254" })
    assert.is_nil(h)
    assert.is_true(H.has(err, "$.command: a string is not valid UTF-8"), err)
    h, err = rt:call("touch", { ["k\255"] = 1 })
    assert.is_nil(h)
    assert.is_true(H.has(err, "not valid UTF-8"), err)
  end)
end)

describe("JSON numbers round-trip exactly", function()
  after_each(H.cleanup)

  local ARGS = '{"a":9007199254740991,"b":0.1,"c":-0.0,"d":1e300,"e":-9007199254740991,"f":1e-300}'

  it("through a Lua tool", function()
    local rt = runtime()
    local out = H.call(rt, "echo", ARGS)
    assert.are.equal("ok", out.status, out.error and out.error.message)
    local r = out.result
    assert.are.equal(9007199254740991, r.a)
    assert.are.equal(0.1, r.b)
    assert.are.equal(-math.huge, 1 / r.c) -- the sign of zero is kept
    assert.are.equal(1e300, r.d)
    assert.are.equal(-9007199254740991, r.e)
    assert.are.equal(1e-300, r.f)
  end)

  it("through tg.json_encode: the fewest digits that read back the same", function()
    local rt = runtime()
    local out = H.call(rt, "echo", ARGS)
    out = H.call(rt, "encode", { value = out.result })
    assert.is_true(out.result.ok, out.result.text)
    local text = out.result.text
    for _, want in ipairs { '"a":9007199254740991', '"b":0.1', '"c":-0', '"d":1e+300',
                            '"e":-9007199254740991', '"f":1e-300' } do
      assert.is_true(H.has(text, want), want .. " in " .. text)
    end
  end)

  it("decode then encode gives the same text", function()
    local rt = runtime({ ["10_rt.lua"] = [[
local tg = require "toolgate"
tg.tool { name = "rt", read_only = true, run = function(args)
  local bad = {}
  for _, t in ipairs(args.texts) do
    local back = tg.json_encode(assert(tg.json_decode(t)))
    if back ~= t then bad[#bad + 1] = t .. " -> " .. back end
  end
  return tg.array(bad)
end }
]] })
    local texts = { "9007199254740991", "-9007199254740991", "0.1", "-0", "1e+300", "0.30000000000000004",
                    "1.7976931348623157e+308", "123456789012", "1.5", "[1,2.5,-0]", '{"x":1e-300}' }
    local out = H.call(rt, "rt", { texts = texts })
    assert.are.equal("ok", out.status, out.error and out.error.message)
    assert.are.same({}, out.result)
  end)

  it("refuses (Lua 5.4) an integer that no JSON number equals", function()
    if not math.type then return end -- LuaJIT: numbers are doubles
    local rt = runtime()
    local out = H.call(rt, "encode", { value = 1 })
    assert.is_true(out.result.ok)
    local h, err = rt:call("touch", { n = math.maxinteger })
    assert.is_nil(h)
    assert.is_true(H.has(err, "$.n: the integer 9223372036854775807"), err)
  end)
end)

describe("JSON out: invalid UTF-8 from Lua strings", function()
  after_each(H.cleanup)

  it("is refused in a Lua tool's result, a post-hook's result, a pre-hook's args and json_encode", function()
    local rt = runtime({ ["10_bin.lua"] = [[
local tg = require "toolgate"
tg.tool { name = "bin", read_only = true, run = function() return { data = "\255\254" } end }
tg.tool { name = "fine", read_only = true, run = function(args) return args end }
tg.after_tool("fine", function(call, res)
  if call.args.post then return tg.result("x\255") end
end)
tg.before_tool("fine", function(call)
  if call.args.pre then return tg.args { command = "echo \255" } end
end)
]] })
    local out = H.call(rt, "bin", {})
    assert.are.equal("error", out.status)
    assert.are.equal("BAD_RESULT", out.error.code)
    assert.is_true(H.has(out.error.message, "$.data: a string is not valid UTF-8"), out.error.message)
    out = H.call(rt, "fine", { post = true })
    assert.are.equal("error", out.status)
    assert.is_true(H.has(out.error.message, "not valid UTF-8"), out.error.message)
    out = H.call(rt, "fine", { pre = true })
    assert.are.equal("error", out.status)
    assert.is_true(H.has(out.error.message, "not valid UTF-8"), out.error.message)
    out = H.call(rt, "encode", { value = "ok" })
    assert.are.equal('"ok"', out.result.text)
    rt = runtime({ ["10_enc.lua"] = [[
local tg = require "toolgate"
tg.tool { name = "enc_bad", read_only = true, run = function()
  local ok, err = pcall(tg.json_encode, { s = "\255" })
  return { ok = ok, err = err }
end }
]] })
    out = H.call(rt, "enc_bad", {})
    assert.is_false(out.result.ok)
    assert.is_true(H.has(out.result.err, "$.s: a string is not valid UTF-8"), out.result.err)
  end)
end)

describe("Lua values with metamethods", function()
  after_each(H.cleanup)

  -- A metatable whose own metatable raises on any lookup: reading a field
  -- of it with lua_getfield from C, outside a protected call, was a panic.
  local TRAPS = [[
local tg = require "toolgate"
local function trap() error("metamethod ran") end
local function trapped(t)
  return setmetatable(t, setmetatable({ __index = trap, __newindex = trap, __len = trap,
    __pairs = trap, __eq = trap, __tostring = trap, __call = trap, __concat = trap },
    { __index = trap }))
end
tg.tool { name = "trap", read_only = true, run = function(args)
  return trapped { a = trapped { 1, 2, trapped {} }, s = "x" }
end }
tg.tool { name = "plain", read_only = true, run = function(args) return args end }
-- (rawget: after tg.args(trapped {...}), call.args is that very table)
tg.after_tool("plain", function(call, res)
  if rawget(call.args, "post") then return tg.result(trapped { b = trapped { true } }) end
end)
tg.before_tool("plain", function(call)
  if rawget(call.args, "pre") then return tg.args(trapped { pre = false, c = 1 }) end
  if rawget(call.args, "inplace") then setmetatable(call.args, getmetatable(trapped {})) end
end)
tg.tool { name = "enc", read_only = true, run = function()
  return tg.json_encode(trapped { 1, trapped { k = "v" } })
end }
]]

  it("are read raw: no metamethod runs, the process lives and the next call is fine", function()
    local rt = H.runtime(TRAPS)
    local out = H.call(rt, "trap", {})
    assert.are.equal("ok", out.status, out.error and out.error.message)
    assert.are.same({ a = { 1, 2, {} }, s = "x" }, out.result)
    out = H.call(rt, "plain", { post = true })
    assert.are.equal("ok", out.status, out.error and out.error.message)
    assert.are.same({ b = { true } }, out.result)
    -- args are stricter than results: what the rules judge must be what
    -- runs, so args with a metatable fail closed, naming the hook
    out = H.call(rt, "plain", { pre = true })
    assert.are.equal("error", out.status)
    assert.is_true(H.has(out.error.message, "a table with a metatable"), out.error.message)
    out = H.call(rt, "plain", { inplace = true, x = 1 })
    assert.are.equal("error", out.status)
    assert.is_true(H.has(out.error.message, "a table with a metatable"), out.error.message)
    out = H.call(rt, "enc", {})
    assert.are.equal("ok", out.status, out.error and out.error.message)
    assert.are.equal('[1,{"k":"v"}]', out.result)
    assert.are.equal("ok", H.call(rt, "plain", { again = 1 }).status)
  end)

  it("in the host's args and metadata are read raw too", function()
    local rt = H.runtime(TRAPS)
    local function trap() error("host metamethod ran") end
    local mt = setmetatable({ __index = trap, __pairs = trap, __len = trap }, { __index = trap })
    local out = H.call(rt, "plain", setmetatable({ x = setmetatable({ 1 }, mt) }, mt),
                       { metadata = setmetatable({ m = 1 }, mt) })
    assert.are.equal("ok", out.status, out.error and out.error.message)
    assert.are.same({ x = { 1 } }, out.result)
  end)
end)

describe("no leaks when Lua raises in the middle of a conversion", function()
  after_each(H.cleanup)

  -- A 100,000-element array of empty objects decodes to tables the 4 MiB
  -- cap cannot hold (its parse tree is under the 16 MiB tg.json_decode
  -- allows it: 4 times the cap):
  -- the cap stops the call while tg.json_decode builds it — pcall cannot
  -- swallow that — and the parsed tree (tens of MB of C memory) must still
  -- be freed. Likewise tg.json_encode's text when pushing it fails.
  -- LeakSanitizer (the ASan build) sees any that is lost.
  it("tg.json_decode and tg.json_encode under a small memory cap", function()
    local rt = runtime({ ["10_big.lua"] = [[
local tg = require "toolgate"
tg.tool { name = "decode_big", read_only = true, run = function(args)
  local text = "[" .. string.rep("{},", 100000) .. "{}]"
  pcall(tg.json_decode, text)
  return "swallowed"
end }
tg.tool { name = "encode_big", read_only = true, run = function(args)
  local s = string.rep("a", 1024 * 1024)
  local t = { s, s, s } -- 3 MiB of text to push beside 1 MiB under a 4 MiB cap
  pcall(tg.json_encode, t)
  return "swallowed"
end }
]] }, { policy_memory_cap = 4 * 1024 * 1024, policy_time_limit_ms = 20000 })
    for _, tool in ipairs { "decode_big", "encode_big" } do
      for _ = 1, 3 do
        local out = H.call(rt, tool, {})
        assert.are.equal("error", out.status, tool)
        -- "(at file:line)" only when the stop hit between instructions: an
        -- allocation bigger than the slack is refused where it is made
        assert.is_true(H.has(out.error.message, "ran out of memory"), out.error.message)
      end
      assert.are.equal("ok", H.call(rt, "echo", { after = tool }).status)
    end
  end)
end)

describe("approve-always for exact args", function()
  after_each(H.cleanup)

  -- remembered args are keyed by tg_json_print_sorted's text,
  -- whose shortest round-trip digits keep 1 and 1.0000000000000002, or
  -- 2^53-1 and 2^53-2, apart
  it("does not cover args whose numbers only print alike", function()
    local rt = runtime()
    rt:set_approver(function() return "always", { scope = "args" } end)
    assert.are.equal("ok", H.call(rt, "touch", '{"amount":1}').status)
    assert.are.equal("ok", H.call(rt, "touch", '{"n":9007199254740991}').status)
    rt:set_approver("deny")
    assert.are.equal("ok", H.call(rt, "touch", '{"amount":1}').status) -- remembered
    local out = H.call(rt, "touch", '{"amount":1.0000000000000002}')
    assert.are.equal("rejected", out.status)
    out = H.call(rt, "touch", '{"n":9007199254740990}')
    assert.are.equal("rejected", out.status)
  end)
end)
