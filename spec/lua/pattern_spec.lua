-- The sandbox's own Lua patterns (src/policy/sandbox_pattern.c), compared
-- with the builtin ones: a harness runs the same cases (hand-written, then
-- thousands of random ones from fixed seeds) once here, through this
-- interpreter's real string library, and once inside a policy, through the
-- sandbox's find, match, gmatch and gsub. Every result and every error
-- message must be the same, on Lua 5.4 and on LuaJIT alike.
local H = require "spec.lua.helpers"

-- Runs cases and returns one line per case. Uses no pattern function of
-- its own, so what it prints depends on the functions under test only.
local HARNESS = [==[
local pack = table.pack or function(...) return { n = select("#", ...), ... } end
local concat, byte, char, fmt = table.concat, string.byte, string.char, string.format
local LUA54 = _VERSION == "Lua 5.4"

local function esc(s)
  local out = {}
  for i = 1, #s do
    local c = byte(s, i)
    out[i] = (c >= 32 and c < 127 and c ~= 92) and char(c) or fmt("\\%d", c)
  end
  return concat(out)
end

local function show(v)
  local t = type(v)
  if t == "string" then return '"' .. esc(v) .. '"' end
  if t == "number" then return fmt("%.17g", v) end
  return tostring(v)
end

local function show_all(r)
  local out = {}
  for i = 1, r.n do out[i] = show(r[i]) end
  return concat(out, ",")
end

-- Calls f (not as a tail call: error positions must be comparable) and
-- shows its results or its error.
local function try(f, ...)
  local r = pack(pcall(f, ...))
  if not r[1] then return "E(" .. esc(tostring(r[2])) .. ")" end
  local out = {}
  for i = 2, r.n do out[#out + 1] = show(r[i]) end
  return concat(out, ",")
end

local function find(...) local r = pack(string.find(...)) return show_all(r) end
local function mfind(s, ...) local r = pack(s:find(...)) return show_all(r) end
local function match(...) local r = pack(string.match(...)) return show_all(r) end
local function gsub(...) local r = pack(string.gsub(...)) return show_all(r) end
local function gmatch(s, p, init)
  local out, n = {}, 0
  local iter = string.gmatch(s, p, init)
  while n < 50 do
    local r = pack(iter())
    if r[1] == nil then break end
    n = n + 1
    out[n] = "[" .. show_all(r) .. "]"
  end
  return concat(out)
end

local function repl_fn(...)
  local n = select("#", ...)
  local a, b = ...
  if a == "x" or a == 2 then return nil end
  if a == "y" then return false end
  if a == "z" then return 42 end
  if a == "(" then return {} end
  return "<" .. n .. ":" .. tostring(a) .. tostring(b) .. ">"
end
local repl_tbl = setmetatable({ a = "A", b = false, [1] = "one", [3] = 3.5, ["("] = true },
                              { __index = function(_, k) if k == "c" then return "C" end end })

-- One case: every function, the ways a policy would call it.
local function run_case(s, p, init, repl, max)
  local r = {
    try(find, s, p), try(mfind, s, p, init), try(find, s, p, init, true),
    try(match, s, p), try(match, s, p, init), try(gmatch, s, p),
    try(gsub, s, p, repl), try(gsub, s, p, repl, max),
    try(gsub, s, p, repl_fn), try(gsub, s, p, repl_tbl),
  }
  if LUA54 then r[#r + 1] = try(gmatch, s, p, init) end
  return concat(r, " | ")
end

-- Park-Miller: exact in doubles (LuaJIT) and integers (5.4).
local function rng(seed)
  local x = seed
  return function(n)
    x = (x * 16807) % 2147483647
    return x % n + 1
  end
end

local SUBJECT_CHARS = { "a", "b", "a", "b", "c", "x", "y", "z", "A", "1", "2", " ", "_",
  "(", ")", "[", "]", "%", "-", ".", "^", "$", "\0", "\n", "\t", "\200", "\255", "!" }
local PIECES = { "a", "b", "c", "x", ".", "%a", "%d", "%s", "%w", "%p", "%x", "%u",
  "%l", "%c", "%g", "%z", "%A", "%S", "%W", "%Z", "%%", "%.", "%(", "%]", "%-",
  "[ab]", "[^a]", "[a-c]", "[%a_]", "[]]", "[^]]", "[a-]", "[-a]", "[%]x]",
  "[%w%p]", "[a-%%]", "[\0-b]", "\0", "\200", "[\128-\255]" }
local QUANTS = { "", "", "", "*", "+", "-", "?" }
local EXTRAS = { "()", "%1", "%2", "%b()", "%bab", "%f[%w]", "%f[%W]", "%f[%z]",
  "%f[^%z]", "$", "^", "(", ")", "[", "%", "%b", "%f", "%fa", "[^", "%0", " " }
local REPLS = { "-", "%0", "%1", "<%1|%2>", "%%", "x%", "%a", "", "%9", "%1%0%1" }

-- Raw characters, for malformed patterns as much as for odd ones.
local RAW = { "a", "b", "%", "(", ")", "[", "]", "^", "$", "*", "+", "-", "?", ".",
  "b", "f", "1", "2", "0", "z", "a", "\0", "%a", "()" }

local function random_case(r)
  if r(3) == 1 then
    local s, p = {}, {}
    for i = 1, r(10) - 1 do s[i] = SUBJECT_CHARS[r(#SUBJECT_CHARS)] end
    for i = 1, r(10) - 1 do p[i] = RAW[r(#RAW)] end
    return concat(s), concat(p), r(18) - 6, REPLS[r(#REPLS)], r(5) - 2
  end
  local s = {}
  for i = 1, r(12) - 1 do s[i] = SUBJECT_CHARS[r(#SUBJECT_CHARS)] end
  local p, depth = {}, 0
  if r(5) == 1 then p[1] = "^" end
  for _ = 1, r(6) do
    local k = r(10)
    if k <= 6 then
      p[#p + 1] = PIECES[r(#PIECES)] .. QUANTS[r(#QUANTS)]
    elseif k == 7 then
      p[#p + 1] = "("
      depth = depth + 1
    elseif k == 8 and depth > 0 then
      p[#p + 1] = ")"
      depth = depth - 1
    else
      p[#p + 1] = EXTRAS[r(#EXTRAS)]
    end
  end
  if r(3) > 1 then for _ = 1, depth do p[#p + 1] = ")" end end
  if r(6) == 1 then p[#p + 1] = "$" end
  return concat(s), concat(p), r(18) - 6, REPLS[r(#REPLS)], r(5) - 2
end

-- Written by hand: the corners of the manual, one per line.
local HAND = {
  { "hello world", "o w" }, { "hello world", "l+" }, { "hello", "" }, { "", "" },
  { "", "^$" }, { "abc", "^" }, { "abc", "$" }, { "a$b", "a$b" }, { "a^b", "a^b" },
  { "THE (quick) fox", "%((%a+)%)" }, { "f(a(b)c)d", "%b()" }, { "f(a(b)c", "%b()" },
  { "abba", "%bab" }, { "aaa", "%baa" }, { "x", "%b" }, { "x", "%bx" }, { "x", "%b()", 1, "", 1 },
  { "THE (quick) fox", "%f[%a]%a+" }, { "hello", "%f[%l]" }, { "hello", "%f[%z]" },
  { "hello", "%f[^%z]" }, { "a", "%f" }, { "a", "%fa" }, { "a", "%f[a" },
  { "abc", "[]" }, { "a]b", "[]]" }, { "a]b", "[^]]" }, { "a-b", "[a-]" }, { "a-b", "[-b]" },
  { "%]", "[%]]" }, { "a-z", "[a-c-z]" }, { "b", "[a-%%]" }, { "x", "[" }, { "x", "[^" },
  { "x", "[a" }, { "x", "%" }, { "x", "a%" }, { "x", "(" }, { "x", ")" }, { "x", "(()" },
  { "x", "%1" }, { "x", "(x)%2" }, { "xx", "(x)%1" }, { "x", "(x%1)" }, { "xx", "()%1" },
  { "x", "%0" }, { "hello", "()ll()" }, { "hello", "(h)(e)(l)(l)(o)" },
  { ("x"):rep(40), ("(x)"):rep(33) }, { ("x"):rep(40), ("(x)"):rep(32) },
  { ("a"):rep(199), ("a?"):rep(199) }, { ("a"):rep(200), ("a?"):rep(200) },
  { "", ("a*"):rep(199) }, { "", ("a*"):rep(200) }, { "aaa", ("a*"):rep(250) },
  { "", ("a-"):rep(199) }, { "", ("a-"):rep(200) }, { "", ("a?"):rep(250) },
  { ("a"):rep(20), "(" .. ("a?"):rep(197) .. ")" }, { ("a"):rep(20), "(" .. ("a?"):rep(198) .. ")" },
  { "a\0b", "\0b" }, { "a\0b", "a\0." }, { "a\0b", "%z" }, { "a\0b", "[%z]" },
  { "a\0b", "a\0b", 1, "x\0y" }, { "ab", "a\0" }, { "\0", "%Z" }, { "a", "%Z" },
  { " !a", "%g" }, { " !a", "%G" }, { "\1\127 ", "%c+" }, { "aB1_", "%w+" },
  { "abc", "", 10 }, { "abc", "b", 0 }, { "abc", "b", -1 }, { "abc", "b", -2 },
  { "abc", "b", -100 }, { "abc", "b", 4 }, { "abc", "", 4 }, { "abc", "", 5 },
  { "abc", "%w*", 1, "-" }, { "hello world", "%w*", 1, "x" }, { "abc", "", 1, "-" },
  { "abc", "x*", 1, "-" }, { "abc", "b*", 1, "-" }, { "", "", 1, "x", -1 }, { "abc", ".", 1, "x", 0 },
  { "abc", "b", 1, "%%%0" }, { "abc", "(b)", 1, "%2" }, { "abc", "b", 1, "%1" },
  { "abc", "b", 1, "%a" }, { "abc", "b", 1, "a%" }, { "abc", "()b", 1, "%1" },
  { "abc", "^a", 1, "x" }, { "aaa", "^a", 1, "x" }, { "abc", "^", 1, "x" },
  { "abc", "$", 1, "x" }, { "a.b", "%.", 1, "%%" }, { "hello world", "(%w+) (%w+)", 1, "%2 %1" },
  { "abcabc", "a", 2 }, { "abab", "a", 3 }, { "abab", "^a", 1 }, { "a(b)c", "%(.-%)" },
  { "[[x]]", "%[(.-)%]" }, { "key = value", "^(%w+)%s*=%s*(%w+)$" },
  { "/usr/local/bin", "[^/]+" }, { "2024-01-02", "(%d+)-(%d+)-(%d+)" },
  { "abc", ".-" }, { "abc", ".-$" }, { "abc", "a.-c" }, { "aXbXc", "(.-)X" },
  { ("a"):rep(30), "a-b" }, { ("ab"):rep(10), "(ab)*" }, { "xyz", "()" },
}

function run(seed, count)
  local lines = {}
  if seed == 0 then
    for i, c in ipairs(HAND) do
      lines[i] = "hand " .. i .. " s=" .. show(c[1]) .. " p=" .. show(c[2]) .. " : "
                 .. run_case(c[1], c[2], c[3] or 1, c[4] or "%0-", c[5] or 1)
    end
    -- arguments of the wrong type, and numbers where strings go
    local args = {
      { nil, "x" }, { "x" }, { "x", nil }, { 12345, 34 }, { "12345", 3, 2.0 },
      { "x", "x", "y" }, { "x", "x", {} }, { "x", "x", 1.5 }, { "x", {} }, { true, "x" },
    }
    for i, a in ipairs(args) do
      lines[#lines + 1] = "args " .. i .. " : " .. concat({
        try(find, a[1], a[2], a[3]), try(mfind, "abc", a[2], a[3]), try(match, a[1], a[2], a[3]),
        try(gmatch, a[1], a[2]), try(gsub, a[1], a[2], a[3]), try(gsub, "xx", "x", "y", a[3]),
      }, " | ")
    end
    return concat(lines, "\n")
  end
  local r = rng(seed)
  for i = 1, count do
    local s, p, init, repl, max = random_case(r)
    lines[i] = "seed " .. seed .. " case " .. i .. " s=" .. show(s) .. " p=" .. show(p)
               .. " init=" .. init .. " repl=" .. show(repl) .. " max=" .. max .. " : "
               .. run_case(s, p, init, repl, max)
  end
  return concat(lines, "\n")
end
]==]

local POLICY = [[
local tg = require "toolgate"
tg.tool { name = "patterns", read_only = true, run = function(args)
  local env = setmetatable({}, { __index = _G })
  assert(load(args.harness, "=harness", "t", env))()
  return env.run(args.seed, args.count)
end }
]]

-- The builtin side: the same source, in the host, under the same name.
local function builtin(seed, count)
  local env = setmetatable({}, { __index = _G })
  local chunk = assert((loadstring or load)(HARNESS, "=harness"))
  if setfenv then setfenv(chunk, env) else chunk = assert(load(HARNESS, "=harness", "t", env)) end
  chunk()
  return env.run(seed, count)
end

local function lines(s)
  local t = {}
  for l in (s .. "\n"):gmatch("(.-)\n") do t[#t + 1] = l end
  return t
end

local function compare(rt, seed, count)
  local out = H.call(rt, "patterns", { harness = HARNESS, seed = seed, count = count })
  assert(out.status == "ok", out.error and out.error.message)
  local mine, real = lines(out.result), lines(builtin(seed, count))
  assert.are.equal(#real, #mine)
  local diffs = {}
  for i = 1, #real do
    if mine[i] ~= real[i] and #diffs < 5 then
      diffs[#diffs + 1] = "builtin: " .. real[i] .. "\nsandbox: " .. mine[i]
    end
  end
  assert(#diffs == 0, "the sandbox's patterns differ from the builtin ones:\n" .. table.concat(diffs, "\n\n"))
  return #real
end

describe("policy sandbox: Lua patterns", function()
  after_each(H.cleanup)

  local function runtime()
    return H.runtime(POLICY, { policy_time_limit_ms = 60000, policy_memory_cap = 512 * 1024 * 1024 })
  end

  it("match the builtin ones on hand-written cases: results and error messages", function()
    local n = compare(runtime(), 0)
    assert.is_true(n > 100)
  end)

  it("match the builtin ones on thousands of random patterns and subjects", function()
    local rt = runtime()
    local total = 0
    for _, seed in ipairs { 1, 42, 1234567, 987654321 } do total = total + compare(rt, seed, 1500) end
    assert.are.equal(6000, total)
  end)

  it("are what policies get, as functions and as string methods", function()
    local rt = H.runtime [[
local tg = require "toolgate"
tg.tool { name = "same", read_only = true, run = function()
  return { methods = ("").find == string.find and ("").gsub == string.gsub,
           loaded = require("string").match == string.match,
           result = select(2, ("key=value"):gsub("(%w+)=(%w+)", "%2=%1")) }
end }
]]
    local out = H.call(rt, "same", {})
    assert.are.same({ methods = true, loaded = true, result = 1 }, out.result)
  end)
end)
