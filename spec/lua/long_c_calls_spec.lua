-- Every long C call in the policy sandbox is bounded (issue 19): work
-- done inside one call of a C function runs no Lua instruction, so the
-- count hook never sees it, and when it allocates nothing the memory cap
-- does not either. Each hostile line below runs in a rule's check, a
-- pre-hook and a policy file's top level (`toolgate check`, and a reload
-- through the host module), always in a child process under `timeout`:
-- a regression hangs the child, never the suite, and fails the spec.
--
-- The hostile line is the last line of each case's code, and every case
-- ends in error("returned") on the line after it: "stopped at
-- 10_policy.lua:<its line>" shows that the stop came inside the call,
-- not after it returned. Where a case needs setup (a table to sort, a
-- text to load), its limit leaves the setup several times the time it
-- takes, and the hostile call several times the limit (without the fix,
-- it runs to its end and the stop names the next line).
local H = require "spec.lua.helpers"

local TIMEOUT = 60
local LIMIT = 200                  -- ms per call into policy code
local CAP = 64 * 1024 * 1024       -- bytes

local function sh_quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

-- Runs cmd under `timeout`; returns the exit code (124: timed out),
-- stdout and stderr.
local function run_bounded(cmd)
  local dir = H.tmpdir()
  local full = string.format("XDG_STATE_HOME=%s timeout %d %s >%s/out 2>%s/err </dev/null",
                             dir, TIMEOUT, cmd, dir, dir)
  local ok, _, code = os.execute(full)
  if type(ok) == "number" then code = ok / 256 end -- Lua 5.1: the raw status
  if ok == true then code = 0 end
  return code, H.read(dir .. "/out") or "", H.read(dir .. "/err") or ""
end

local function toolgate_bounded(args)
  return run_bounded(os.getenv("TOOLGATE_BUILD_DIR") .. "/toolgate " .. args)
end

local function limits(case)
  return string.format(" --policy-time-limit %d --policy-memory-cap %d",
                       case.limit or LIMIT, case.cap or CAP)
end

-- What each case must end with: "stopped" (the time limit, inside the
-- hostile call) or a text the error must hold. A case may expect
-- differently on LuaJIT (jit_expect).
local CASES = {
  { name = "string.rep of an empty result, over and over (5.4: zero-byte copies, 2^62 of them)",
    code = [[
  while true do local s = string.rep("", 2^62) .. string.rep("", 2^62, "") .. (""):rep(2^53) end]],
    expect = "stopped" },
  { name = "table.concat over 2^31 absent keys whose __index is a C function",
    code = [[
  local t = setmetatable({}, { __index = table.concat })
  local s = table.concat(t, "", 1, 2^31 - 1)]],
    -- LuaJIT's table.concat reads raw: the first absent key ends it
    expect = "stopped", jit_expect = "invalid value (nil) at index 1 in table for 'concat'" },
  { name = "table.sort of a proxy whose __index, __newindex and __len are C functions",
    code = [[
  local t = setmetatable({ year = 2030, month = 1, day = 1, hour = 12 },
                         { __index = rawlen, __newindex = rawequal, __len = os.time })
  table.sort(t)]],
    -- LuaJIT's table.sort takes the raw length: 0, nothing to sort
    expect = "stopped", jit_expect = "returned" },
  -- (math.ult is an order, and 5.4 sorts with random pivots; LuaJIT's
  -- sort is deterministic: rawequal, no order, sorts these to the end)
  { name = "table.sort of 2 million numbers with a C function as the comparator",
    code = [[
  local t = {} for i = 1, 2000000 do t[i] = (i * 7919) % 2000000 end
  table.sort(t, math.ult or rawequal)]],
    limit = 500, cap = 128 * 1024 * 1024, expect = "stopped" },
  { name = "load of a long text (the parser runs no Lua instruction)",
    code = [[
  local text = ("x=1 "):rep(6000000)
  local f = load(text)]],
    limit = 300, cap = 256 * 1024 * 1024, expect = "stopped" },
  { name = "tg.json_encode of a table referenced many times ({t, t} nested 22 deep)",
    code = [[
  local t = {} for i = 1, 22 do t = { t, t } end
  local s = tg.json_encode(t)]],
    cap = 8 * 1024 * 1024,
    expect = "the value's JSON would take more than 32 MiB of memory (a table or a string in it referenced many times?)" },
  -- LuaJIT reads a line with fgets and strlen: a run of NUL bytes adds
  -- nothing, and /proc/self/pagemap holds hundreds of GB of them
  { name = "reading a line of /proc/self/pagemap (LuaJIT: NUL bytes never end the builtin's loop)",
    code = [[
  local f = assert(io.open("/proc/self/pagemap"))
  local l = f:read("l") .. f:read("L") for l in f:lines() do end for l in io.lines("/proc/self/pagemap") do end]],
    limit = 1000, cap = 4 * 1024 * 1024, expect = "bounded", needs = "/proc/self/pagemap" },
  { name = "os.date of a format of 10 MB (5.4 converts it slowly, in one C call)",
    code = [[
  local s = os.date(("%n"):rep(5000000))]],
    expect = "os.date: the format is 10000000 bytes long, over the 4096 a date may take" },
  { name = "tg.json_decode of a text of 2 million values (its parse tree is malloc'd, outside the cap)",
    code = [[
  local text = "[" .. ("0,"):rep(2000000) .. "0]"
  local v, err = tg.json_decode(text) assert(v, err)]],
    cap = 16 * 1024 * 1024,
    expect = "the text holds too many values: parsed, they would take more than 64 MiB of memory" },
}

local function lines(s) return select(2, s:gsub("\n", "")) + 1 end

-- The policy file for a case in a context; the code starts on line 4.
local function policy(case, context)
  local head = 'local tg = require "toolgate"\n'
            .. 'tg.tool { name = "echo", read_only = true, run = function(args) return args end }\n'
  local open, close
  if context == "rule" then
    open, close = 'tg.rule { name = "hostile", tools = { "echo" }, check = function(call)\n', "end }\n"
  elseif context == "hook" then
    open, close = 'tg.before_tool("echo", function(call)\n', "end)\n"
  else
    open, close = "do\n", "end\n"
  end
  return head .. open .. case.code .. '\n  error("returned")\n' .. close
end

-- Whether the time limit stopped a case in its setup, before the hostile
-- line (or at all, for a case that ends in an error of its own): on a
-- loaded machine the setup (a table to fill, a text to build)
-- can outlast a limit it fits in several times over when the machine is
-- idle. Such a run says nothing of the call; run_with_room runs it again.
local function stopped_in_setup(case, message)
  local at = message:match("10_policy%.lua:(%d+)%)")
  if at == nil or not H.has(message, "ran past its time limit") then return false end
  local expect = jit and case.jit_expect or case.expect
  if expect ~= "stopped" and expect ~= "bounded" then
    return true -- a case that ends in its own error never needs the limit
  end
  return tonumber(at) < 3 + lines(case.code)
end

-- Runs fn(case) until its message shows more than the setup, doubling
-- the case's time limit each time (at most 4 times: 16 times the limit);
-- returns fn's four results (the message first). A larger limit still
-- catches a regression: without the fix the hostile call returns, and
-- the case ends in error("returned"), never in a stop on its line.
local function run_with_room(case, fn)
  local c = case
  for _ = 1, 4 do
    local message, code, other, used = fn(c)
    if not stopped_in_setup(c, message) then return message, code, other, used end
    c = setmetatable({ limit = (c.limit or LIMIT) * 2 }, { __index = c })
  end
  return fn(c)
end

-- Asserts that message shows the case's expected end.
local function assert_ended(case, message, what)
  local expect = jit and case.jit_expect or case.expect
  local where = "10_policy.lua:" .. (3 + lines(case.code))
  if expect == "bounded" then -- the time limit inside the call, or the cap
    if H.has(message, "ran out of memory") then return end
    expect = "stopped"
  end
  if expect == "stopped" then
    local limit = case.limit or LIMIT
    assert.is_true(H.has(message, "ran past its time limit of " .. limit .. " ms (stopped at "),
                   what .. ": not stopped by the time limit: " .. message)
    assert.is_true(H.has(message, where .. ")"), what .. ": not stopped inside the call (at " .. where .. "): " .. message)
  else
    assert.is_true(H.has(message, expect), what .. ": " .. message)
  end
end

describe("long C calls in the policy sandbox", function()
  after_each(H.cleanup)

  local function need_build()
    if not os.getenv("TOOLGATE_BUILD_DIR") then
      pending("TOOLGATE_BUILD_DIR is not set")
      return false
    end
    return true
  end

  local function readable(path)
    local f = path and io.open(path)
    if f then f:close() end
    return f ~= nil
  end

  for _, case in ipairs(CASES) do
    describe(case.name, function()
      it("is bounded in a rule's check and in a pre-hook: the call fails, the child ends", function()
        if not need_build() then return end
        if case.needs and not readable(case.needs) then return pending(case.needs .. " is not readable") end
        for _, context in ipairs { "rule", "hook" } do
          local dir = H.policy_dir(policy(case, context))
          local out, code, err, c = run_with_room(case, function(c)
            local code, out, err = toolgate_bounded("call echo '{}' --json --policies " .. dir .. limits(c))
            return out, code, err, c
          end)
          assert.are_not.equal(124, code, context .. " hung: " .. err)
          assert.are.equal(1, code, context .. ": " .. out .. err)
          assert.is_true(H.has(out, '"status":"error"'), out)
          assert.is_true(H.has(out, '"phase":"POLICY"'), out)
          assert_ended(c, out, context)
        end
      end)

      it("is bounded at a policy file's top level: toolgate check and a reload fail the load", function()
        if not need_build() then return end
        if case.needs and not readable(case.needs) then return pending(case.needs .. " is not readable") end
        local dir = H.policy_dir(policy(case, "top"))
        local err, code, out, c = run_with_room(case, function(c)
          local code, out, err = toolgate_bounded("check " .. dir .. limits(c))
          return err, code, out, c
        end)
        assert.are_not.equal(124, code, "toolgate check hung")
        assert.are.equal(1, code, out .. err)
        assert_ended(c, err, "check")
        -- a reload from good policies to the hostile file keeps the old ones
        local good = H.policy_dir('local tg = require "toolgate"\n'
          .. 'tg.tool { name = "echo", read_only = true, run = function(args) return args end }\n')
        local host = H.tmpdir() .. "/host.lua"
        out, code, err, c = run_with_room(case, function(c)
        H.write(host, string.format([[
local toolgate = require "toolgate"
local rt = assert(toolgate.new { policies = %q, policy_time_limit_ms = %d, policy_memory_cap = %d })
local f = assert(io.open(%q .. "/10_policy.lua", "w"))
f:write(%q) f:close()
local gen, err = rt:reload()
print("reload:", tostring(gen), tostring(err))
local h = assert(rt:call("echo", { still = "up" }))
print("after:", h:wait().status)
rt:close()
]], good, c.limit or LIMIT, c.cap or CAP, good, policy(c, "top")))
          local code, out, err = run_bounded((jit and "luajit " or "lua5.4 ") .. sh_quote(host))
          return out, code, err, c
        end)
        assert.are_not.equal(124, code, "a reload hung")
        assert.are.equal(0, code, out .. err)
        assert.is_true(H.has(out, "reload:\tnil\t"), out)
        assert_ended(c, out, "reload")
        assert.is_true(H.has(out, "after:\tok"), out)
      end)
    end)
  end

  it("string.rep of an empty result returns \"\" at once (in a child: it hangs without the fix)", function()
    if not need_build() then return end
    local dir = H.policy_dir [[
local tg = require "toolgate"
tg.tool { name = "empty", read_only = true, run = function()
  return { n = #string.rep("", 2^62) + #string.rep("", 2^62, "") + #(""):rep(2^53, ""),
           s = "[" .. string.rep("", 2^62) .. "]" }
end }
]]
    local code, out, err = toolgate_bounded("call empty '{}' --json --policies " .. dir .. limits({}))
    assert.are_not.equal(124, code, "string.rep of an empty result hung")
    assert.are.equal(0, code, out .. err)
    assert.is_true(H.has(out, '"n":0'), out)
    assert.is_true(H.has(out, '"s":"[]"'), out)
  end)

  -- string.rep cases the builtin ends quickly too: the sandbox's (5.4: a
  -- replacement) must give the same results and errors.
  local REPS = [[
local log = {}
local function case(name, f)
  local ok, r = pcall(f)
  log[#log + 1] = name .. "=" .. (ok and "[" .. tostring(r) .. "]" or "E:" .. tostring(r))
end
case("plain", function() return string.rep("ab", 3) end)
case("sep", function() return string.rep("ab", 3, ", ") end)
case("one", function() return string.rep("ab", 1, ", ") end)
case("zero", function() return string.rep("ab", 0, ", ") end)
case("negative", function() return string.rep("ab", -5) end)
case("empty, sep", function() return string.rep("", 4, "-") end)
case("empty once, sep", function() return string.rep("", 1, "-") end)
case("empty, few", function() return string.rep("", 1000, "") end)
case("method", function() return ("xy"):rep(2) end)
case("number", function() return string.rep(12, 2) end)
case("number sep", function() return string.rep("a", 2, 3) end)
case("float count", function() return string.rep("a", 2.0) end)
case("bad count", function() return string.rep("a", 1.5) end)
case("string count", function() return string.rep("a", "2") end)
case("no count", function() return string.rep("a") end)
case("bad string", function() return string.rep({}, 2) end)
case("bad sep", function() return string.rep("a", 2, {}) end)
case("too large", function() return string.rep("ab", 2^62) end)
case("too large, sep", function() return string.rep("", 2^62, "ab") end)
return table.concat(log, "\n")
]]

  -- (in this process: none of these runs long, with or without the fix)
  it("string.rep builds what the builtin builds and fails as it does", function()
    local rt = H.runtime([[
local tg = require "toolgate"
tg.tool { name = "try", read_only = true, run = function(args)
  return { log = assert(load(args.code, "=try"))() }
end }
]], { policy_time_limit_ms = 20000, policy_memory_cap = CAP })
    local out = H.call(rt, "try", { code = REPS })
    assert.are.equal("ok", out.status, out.error and out.error.message)
    local builtin = assert((loadstring or load)(REPS, "=try"))()
    assert.are.equal(builtin, out.result.log)
    if not jit then
      assert.is_true(H.has(out.result.log, "bad count=E:try:"), out.result.log) -- the caller's line
      assert.is_true(H.has(out.result.log, "bad argument #2 to 'rep'"), out.result.log)
    end
  end)

  -- Lines read through the sandbox (LuaJIT: its own line reading, in Lua)
  -- and through the builtin io: the same values, whatever the file holds.
  local READS = [[
local path = ...
local log = {}
local function show(v) return type(v) == "string" and ("%q"):format(v) or tostring(v) end
local function case(name, f)
  local out = {}
  local ok, err = pcall(function() for _, v in ipairs { f() } do out[#out + 1] = show(v) end end)
  log[#log + 1] = name .. "=" .. (ok and table.concat(out, ",") or "E")
end
local function opened() return assert(io.open(path)) end
case("lines", function() local f, t = opened(), {} for l in f:lines() do t[#t + 1] = l end f:close() return #t, t[1], t[2], t[#t] end)
case("L", function() local f, t = opened(), {} for l in f:lines("L") do t[#t + 1] = l end f:close() return #t, t[1], t[#t] end)
case("mixed", function() local f = opened() return f:read("l", "L", 3, "*l", "n", "l", "a") end)
case("no format", function() local f = opened() return f:read(), f:read(), f:read("*L") end)
case("io.lines", function() local t = {} for a, b in io.lines(path, "l", 2) do t[#t + 1] = tostring(a) .. "|" .. tostring(b) end return #t, t[1], t[#t] end)
case("to the end", function() local f = opened() f:read("a") return f:read("l"), f:read("L"), f:read(0) end)
case("long", function() local f = opened() for _ = 1, 6 do f:read("l") end local l = f:read("L") return #l, l:sub(-3), f:read("l") end)
case("closed", function() local f = opened() f:close() return pcall(f.read, f, "l") end)
case("closed lines", function() local f = opened() f:close() return pcall(f.lines, f) end)
return table.concat(log, "\n")
]]

  it("reads lines as the builtin io does (LuaJIT: its own line reading)", function()
    local rt, dir = H.runtime([[
local tg = require "toolgate"
tg.tool { name = "reads", read_only = true, run = function(args)
  return { log = assert(load(args.code, "=reads"))(args.path) }
end }
]], { policy_time_limit_ms = 20000, policy_memory_cap = CAP })
    local path = dir .. "/data.txt"
    -- (no NUL bytes: LuaJIT's builtin drops what follows one in a line)
    H.write(path, "one\ntwo\r\n\n 42 rest\n"
              .. ("x"):rep(200000) .. "end\nlast line without newline")
    local out = H.call(rt, "reads", { code = READS, path = path })
    assert.are.equal("ok", out.status, out.error and out.error.message)
    local builtin = assert((loadstring or load)(READS, "=reads"))(path)
    assert.are.equal(builtin, out.result.log)
  end)
end)
