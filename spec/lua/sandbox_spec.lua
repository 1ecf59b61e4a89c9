-- The policy sandbox: the restricted
-- standard library, trusted_policies, the time limit per call into policy
-- code and the memory cap per generation. Small limits keep it fast.
local H = require "spec.lua.helpers"
local toolgate = H.toolgate

local LIMIT = 100              -- ms per call into policy code in these specs
local CAP = 16 * 1024 * 1024   -- bytes per generation in these specs

-- A read-only tool `try` that runs args.code (Lua source, loaded with the
-- sandbox's own load, so it sees what a policy file sees) under pcall and
-- reports {ok, err, value}.
local TRY = [[
local tg = require "toolgate"
tg.tool { name = "try", read_only = true, run = function(args)
  local f, lerr = load(args.code, "=try")
  if not f then return { ok = false, err = "load: " .. tostring(lerr) } end
  local ok, v = pcall(f, args)
  return { ok = ok, err = not ok and tostring(v) or nil,
           value = ok and v ~= nil and tostring(v) or nil }
end }
]]

local function try(rt, code, args)
  args = args or {}
  args.code = code
  local out = H.call(rt, "try", args)
  assert(out.status == "ok", "try failed: " .. tostring(out.error and out.error.message))
  return out.result
end

local function refused(rt, code, what)
  local r = try(rt, code)
  assert.is_false(r.ok, code .. " was allowed")
  assert.is_true(H.has(r.err, what), r.err)
  return r.err
end

local function sandbox(files, opts)
  opts = opts or {}
  opts.policy_time_limit_ms = opts.policy_time_limit_ms or LIMIT
  opts.policy_memory_cap = opts.policy_memory_cap or CAP
  return H.runtime(files, opts)
end

-- For what must not hang: runs a shell command under `timeout`, so a
-- regression fails the spec instead of stopping it. Returns the exit code
-- (124: timed out), stdout and stderr.
local TIMEOUT = 60
local function sh_quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end
local function run_bounded(cmd, stdin)
  local dir = H.tmpdir()
  -- stdin opened read-write: a FIFO opens without waiting for a writer
  -- its database (if it makes one) in the temp dir, not the home
  local full = string.format("XDG_STATE_HOME=%s timeout %d %s >%s/out 2>%s/err <>%s",
                             dir, TIMEOUT, cmd, dir, dir, stdin or "/dev/null")
  local ok, _, code = os.execute(full)
  if type(ok) == "number" then code = ok / 256 end -- Lua 5.1: the raw status
  if ok == true then code = 0 end
  return code, H.read(dir .. "/out") or "", H.read(dir .. "/err") or ""
end

-- The toolgate command (TOOLGATE_BUILD_DIR, set by spec/run-busted.sh).
local function toolgate_bounded(args, stdin)
  return run_bounded(os.getenv("TOOLGATE_BUILD_DIR") .. "/toolgate " .. args, stdin)
end

-- A Lua host program, run by this interpreter with the same module.
local function lua_bounded(source)
  local file = H.tmpdir() .. "/host.lua"
  H.write(file, source)
  return run_bounded((jit and "luajit " or "lua5.4 ") .. sh_quote(file))
end

describe("policy sandbox: the standard library", function()
  after_each(H.cleanup)

  it("refuses os.execute, os.remove, os.exit and io.popen with a message that says so", function()
    local rt = sandbox(TRY)
    local err = refused(rt, "os.execute('true')", "os.execute is not available to policies")
    assert.is_true(H.has(err, "trusted_policies"), err)
    assert.is_true(H.has(err, "try:1"), err) -- where the policy reached for it
    refused(rt, "os.remove('/tmp/x')", "os.remove is not available")
    refused(rt, "os.rename('/tmp/x', '/tmp/y')", "os.rename is not available")
    refused(rt, "os.exit(1)", "os.exit is not available")
    refused(rt, "os.tmpname()", "os.tmpname is not available")
    refused(rt, "io.popen('echo hi')", "io.popen is not available")
    refused(rt, "io.write('x')", "io.write is not available")
    refused(rt, "io.read('l')", "io.read is not available")
  end)

  it("refuses __gc finalizers: Lua runs them outside the time limit", function()
    local rt = sandbox(TRY)
    refused(rt, "setmetatable({}, { __gc = function() while true do end end })",
            "__gc finalizers are not available to policies")
    local r = try(rt, "return getmetatable(setmetatable({}, { __index = {} })) ~= nil")
    assert.is_true(r.ok)
    assert.are.equal("true", r.value)
    local trusted = H.runtime(TRY, { trusted_policies = true })
    assert.is_true(try(trusted, "setmetatable({}, { __gc = function() end }); return 1").ok)
  end)

  it("keeps os.time, os.clock, os.date and os.getenv", function()
    local rt = sandbox(TRY)
    assert.is_true(try(rt, "return os.time() > 0").ok)
    assert.are.equal("true", try(rt, "return os.clock() >= 0").value)
    assert.are.equal("1970", try(rt, "return os.date('!%Y', 0)").value)
    assert.are.equal(os.getenv("HOME"), try(rt, "return os.getenv('HOME')").value)
  end)

  it("opens files for reading only; io.lines needs a file name", function()
    local rt, dir = sandbox(TRY)
    local data = dir .. "/data.txt"
    H.write(data, "one\ntwo\n")
    -- `...` is the args table
    local r = try(rt, "local a = ... local f = assert(io.open(a.path, 'rb')) local s = f:read('a') f:close() return s",
            { path = data })
    assert.are.equal("one\ntwo\n", r.value)
    r = try(rt, "local a = ... local n = 0 for _ in io.lines(a.path) do n = n + 1 end return n", { path = data })
    assert.are.equal("2", r.value)
    local target = dir .. "/written.txt"
    for _, mode in ipairs { "w", "a", "r+", "wb" } do
      r = try(rt, "local a = ... return io.open(a.path, a.mode)", { path = target, mode = mode })
      assert.is_false(r.ok)
      assert.is_true(H.has(r.err, 'for reading only (mode "r" or "rb"), not "' .. mode .. '"'), r.err)
    end
    assert.is_false(H.exists(target))
    refused(rt, "return io.lines()", "io.lines: give a file name")
  end)

  it("refuses loadfile, dofile, string.dump and binary chunks", function()
    local rt, dir = sandbox(TRY)
    refused(rt, "loadfile('/etc/hostname')", "loadfile is not available")
    refused(rt, "dofile('/etc/hostname')", "dofile is not available")
    refused(rt, "string.dump(function() end)", "string.dump is not available")
    refused(rt, "('x').dump(print)", "string.dump is not available")
    -- real bytecode, made by the host's own Lua
    local bc = dir .. "/chunk.luac"
    H.write(bc, string.dump(function() return "escaped" end))
    local r = try(rt, "local a = ... local f = assert(io.open(a.path, 'rb')) local s = f:read('a') f:close()"
                  .. " local fn, err = load(s, 'bc', 'b') return fn and fn() or err", { path = bc })
    assert.is_true(r.ok, r.err)
    assert.is_true(H.has(r.value, "binary chunks are not allowed"), r.value)
    -- through a reader function
    r = try(rt, "local a = ... local f = assert(io.open(a.path, 'rb')) local s = f:read('a') f:close()"
            .. " local done = false local fn, err = load(function() if done then return nil end done = true return s end)"
            .. " return fn and fn() or err", { path = bc })
    assert.is_true(r.ok, r.err)
    assert.is_true(H.has(r.value, "binary chunks are not allowed"), r.value)
    -- source text still loads, and gets an environment of its own
    r = try(rt, "local f = load('x_from_load = 1; return 40 + 2') return f() .. '/' .. tostring(x_from_load)")
    assert.are.equal("42/nil", r.value)
  end)

  it("has no debug library beyond debug.traceback", function()
    local rt = sandbox(TRY)
    refused(rt, "debug.getinfo(1)", "debug.getinfo is not available")
    refused(rt, "debug.sethook()", "debug.sethook is not available")
    refused(rt, "debug.getregistry()", "debug.getregistry is not available")
    refused(rt, "debug.getupvalue(print, 1)", "debug.getupvalue is not available")
    assert.is_true(H.has(try(rt, "return debug.traceback('here')").value, "here"))
    refused(rt, "return require('debug').getinfo", "debug.getinfo is not available")
  end)

  it("loads no C code: package.loadlib refused, cpath empty, C modules not found", function()
    local rt = sandbox(TRY)
    refused(rt, "package.loadlib('/lib/x86_64-linux-gnu/libc.so.6', 'system')", "package.loadlib is not available")
    refused(rt, "require 'lfs'", "module 'lfs' not found")
    local err = refused(rt, "require 'lpeg'", "C modules are not available")
    assert.is_true(H.has(err, "no file"), err)
    refused(rt, "package.cpath = '/usr/lib/x86_64-linux-gnu/lua/5.4/?.so'; require 'lpeg'", "module 'lpeg' not found")
    refused(rt, "require 'ffi'", "module 'ffi' not found")
    refused(rt, "require 'jit'", "module 'jit' not found")
  end)

  it("require reaches the shipped lua/ library and the policy folder only", function()
    local rt, dir = sandbox(TRY)
    -- in a subfolder: the folder's own *.lua files are policies, not modules
    assert(os.execute("mkdir " .. dir .. "/lib"))
    H.write(dir .. "/lib/helper.lua",
            "local M = {} function M.twice(x) return 2 * x end leaked_from_module = true return M")
    assert.are.equal("42", try(rt, "return require('lib.helper').twice(21)").value)
    assert.are.equal("table", try(rt, "return type(require('toolgate.shell'))").value)
    -- a module's globals stay in the module
    assert.are.equal("nil", try(rt, "return tostring(leaked_from_module)").value)
    -- installed for the host's Lua, not for policies
    refused(rt, "require 'dkjson'", "module 'dkjson' not found")
    refused(rt, "require 'busted'", "module 'busted' not found")
    -- paths are not module names
    refused(rt, "require '../../etc/passwd'", "is not a module name")
    refused(rt, "require '/etc/passwd'", "is not a module name")
    -- package.path is only informational
    H.write(dir .. "/../outside_mod.lua", "return 'outside'")
    refused(rt, "package.path = '" .. dir .. "/../?.lua'; return require 'outside_mod'", "module 'outside_mod' not found")
    os.remove(dir .. "/../outside_mod.lua")
  end)

  -- The shipped modules come precompiled inside the binary (lua_dump at
  -- build time, line info kept): they must behave as their source does,
  -- errors naming the installed file and line, while policy code still
  -- gets no way to produce or load bytecode itself.
  it("loads the shipped library precompiled, as its source behaves", function()
    local rt, dir = sandbox(TRY)
    local lib = try(rt, "return (package.path:match('^([^;]*)/%?%.lua'))").value
    local file = lib .. "/toolgate/shell.lua"
    local host = assert(loadfile(file))()
    local _, want = pcall(host.has_flag, 1)
    assert.is_true(H.has(want, file .. ":"), want)
    local r = try(rt, "return select(2, pcall(require('toolgate.shell').has_flag, 1))")
    assert.are.equal(want, r.value)
    -- and gives the same results
    assert.are.equal(host.basename("/usr/bin/rm"),
                     try(rt, "return require('toolgate.shell').basename('/usr/bin/rm')").value)
    -- no bytecode for policy code: not made, not loaded, not required
    refused(rt, "return string.dump(require('toolgate.shell').basename)",
            "string.dump is not available")
    assert(os.execute("mkdir -p " .. dir .. "/lib"))
    H.write(dir .. "/lib/bc.lua", string.dump(function() return "escaped" end))
    r = try(rt, "local a = ... local h = assert(io.open(a.path, 'rb')) local s = h:read('a') h:close()"
                .. " local f, err = load(s, 'bc', 'b') return f and f() or err",
            { path = dir .. "/lib/bc.lua" })
    assert.is_true(H.has(r.value, "binary chunks are not allowed"), r.value)
    r = try(rt, "return require 'lib.bc'")
    assert.is_false(r.ok, "a bytecode module was required: " .. tostring(r.value))
    assert.is_true(H.has(r.err, "chunk"), r.err) -- binary chunk / wrong mode
  end)

  it("gives every file its own globals, _G included", function()
    local rt = sandbox {
      ["10_a.lua"] = "leak = 'from a'; _G.leak2 = 'from a too'",
      ["20_b.lua"] = [[
local tg = require "toolgate"
tg.tool { name = "peek", read_only = true, run = function()
  return { leak = tostring(leak), leak2 = tostring(leak2), mt = tostring(getmetatable(_G)) } end }
]],
    }
    local out = H.call(rt, "peek", {})
    assert.are.same({ leak = "nil", leak2 = "nil", mt = "false" }, out.result)
  end)

  it("keeps common idioms working: jit probing, collectgarbage('count'), coroutines, string methods", function()
    local rt = sandbox(TRY)
    assert.are.equal("no jit", try(rt, "if jit then return 'jit' end return 'no jit'").value)
    assert.is_true(tonumber(try(rt, "return collectgarbage('count')").value) > 0)
    refused(rt, "collectgarbage()", 'collectgarbage("collect") is not available')
    assert.are.equal("3", try(rt, "local co = coroutine.wrap(function() coroutine.yield(1) return 3 end) co() return co()").value)
    assert.are.equal("ABC", try(rt, "return ('abc'):upper()").value)
    assert.are.equal("6", try(rt, "return select('#', table.unpack or unpack, 1, 2, 3, 4, 5)").value)
    assert.are.equal("x", try(rt, "local t = setmetatable({}, {__index = function() return 'x' end}) return t.y").value)
  end)

  it("trusted_policies = true opens the full library", function()
    local rt = sandbox(TRY, { trusted_policies = true })
    local r = try(rt, "return tostring(os.execute('true'))")
    assert.is_true(r.ok, r.err)
    assert.is_truthy(r.value == "true" or r.value == "0", r.value)
    assert.are.equal("function", try(rt, "return type(io.popen)").value)
    assert.are.equal("function", try(rt, "return type(debug.getinfo)").value)
    assert.are.equal("function", try(rt, "return type(string.dump)").value)
    -- the time limit still holds: on LuaJIT the JIT stays off in policy states
    assert.are.equal(jit and "false" or "no jit",
                     try(rt, "return jit and tostring(jit.status()) or 'no jit'").value)
    local loop = H.call(rt, "try", { code = "while true do end" })
    assert.are.equal("TIME_LIMIT", loop.error.code)
    assert.has_error(function() toolgate.new { trusted_policies = "yes" } end,
                     "toolgate.new: 'trusted_policies' must be a boolean (got string)")
  end)
end)

describe("policy sandbox: files", function()
  after_each(H.cleanup)

  local PEEK = [[
local tg = require "toolgate"
tg.tool { name = "peek", read_only = true, run = function(args)
  local out = {}
  local f, err = io.open(args.path, args.mode)
  out.open = f and f:read("a") or err
  if f then f:close() end
  local ok, lerr = pcall(function()
    local n = 0
    for _ in io.lines(args.path) do n = n + 1 end
    return n
  end)
  out.lines = ok and tostring(lerr) or lerr
  if args.module then
    local rok, rerr = pcall(require, args.module)
    out.require = rok and tostring(rerr) or rerr
  end
  return out
end }
]]

  -- Runs peek on path in a toolgate child (a regression hangs it: the
  -- timeout fails the spec instead).
  local function peek(dir, args, stdin)
    local json = '{"path":"' .. args.path .. '"' .. (args.module and ',"module":"' .. args.module .. '"' or "") .. "}"
    local code, out, err = toolgate_bounded("call peek '" .. json .. "' --json --policies " .. dir, stdin)
    assert.are_not.equal(124, code, "peek " .. args.path .. " hung")
    assert.are.equal(0, code, err)
    local result = {}
    for k in ("open lines require"):gmatch("%a+") do
      result[k] = out:match('"' .. k .. '":"(.-)"[,}]')
    end
    return result
  end

  it("reads regular files only, without blocking: FIFO, /dev/stdin, directory, symlink to a FIFO", function()
    if not os.getenv("TOOLGATE_BUILD_DIR") then return pending("TOOLGATE_BUILD_DIR is not set") end
    local dir = H.policy_dir(PEEK)
    local data, fifo = dir .. "/data.txt", dir .. "/fifo"
    H.write(data, "one\ntwo\n")
    assert(os.execute("mkfifo " .. fifo .. " && ln -s " .. fifo .. " " .. dir .. "/to_fifo && ln -s "
                      .. data .. " " .. dir .. "/to_data && mkdir " .. dir .. "/sub"))
    local r = peek(dir, { path = data })
    assert.are.same({ open = "one\\ntwo\\n", lines = "2" }, r)
    r = peek(dir, { path = dir .. "/to_data" })
    assert.are.same({ open = "one\\ntwo\\n", lines = "2" }, r)
    for path, kind in pairs { [fifo] = "a FIFO", [dir .. "/to_fifo"] = "a FIFO", [dir .. "/sub"] = "a directory",
                              ["/dev/null"] = "a character device" } do
      r = peek(dir, { path = path })
      assert.are.equal("io.open: " .. path .. " is not a regular file (" .. kind
                       .. "); policies may read regular files only", r.open)
      assert.is_true(H.has(r.lines, "io.lines: " .. path .. " is not a regular file (" .. kind .. ")"), r.lines)
    end
    -- the host's standard input, here a FIFO nobody writes to
    r = peek(dir, { path = "/dev/stdin" }, fifo)
    assert.is_true(H.has(r.open, "io.open: /dev/stdin is not a regular file (a FIFO)"), r.open)
    -- a missing file fails as io.open does
    r = peek(dir, { path = dir .. "/missing" })
    assert.are.equal(dir .. "/missing: No such file or directory", r.open)
  end)

  it("a FIFO among the policy files fails the load instead of hanging it", function()
    if not os.getenv("TOOLGATE_BUILD_DIR") then return pending("TOOLGATE_BUILD_DIR is not set") end
    local dir = H.policy_dir(PEEK)
    assert(os.execute("mkfifo " .. dir .. "/20_fifo.lua"))
    local code, _, err = toolgate_bounded("check " .. dir)
    assert.are_not.equal(124, code, "check hung on the FIFO")
    assert.are.equal(1, code)
    assert.is_true(H.has(err, "20_fifo.lua: is a FIFO, not a regular file"), err)
  end)

  it("require skips a module path that is not a regular file instead of blocking on it", function()
    if not os.getenv("TOOLGATE_BUILD_DIR") then return pending("TOOLGATE_BUILD_DIR is not set") end
    local dir = H.policy_dir(PEEK)
    assert(os.execute("mkdir " .. dir .. "/lib && mkfifo " .. dir .. "/lib/fifo.lua && mkdir " .. dir .. "/lib/dir.lua"))
    H.write(dir .. "/data.txt", "x")
    local r = peek(dir, { path = dir .. "/data.txt", module = "lib.fifo" })
    assert.is_true(H.has(r.require, "module 'lib.fifo' not found"), r.require)
    assert.is_true(H.has(r.require, "lib/fifo.lua' (it is a FIFO, not a regular file)"), r.require)
    r = peek(dir, { path = dir .. "/data.txt", module = "lib.dir" })
    assert.is_true(H.has(r.require, "lib/dir.lua' (it is a directory, not a regular file)"), r.require)
  end)

  it("require still loads modules with a shebang or a byte order mark, with the file's line numbers", function()
    local rt, dir = sandbox(TRY)
    assert(os.execute("mkdir " .. dir .. "/lib"))
    H.write(dir .. "/lib/bom.lua", "\239\187\191return 'bom'")
    H.write(dir .. "/lib/shebang.lua", "#!/usr/bin/env lua\nlocal x = 1\nerror('boom at 3')\n")
    H.write(dir .. "/lib/broken.lua", "local x =\n\n+")
    assert.are.equal("bom", try(rt, "return require 'lib.bom'").value)
    refused(rt, "return require 'lib.shebang'", "lib/shebang.lua:3: boom at 3")
    refused(rt, "return require 'lib.broken'", "lib/broken.lua:3:")
    -- a module's file name is its second argument, as with the standard require
    H.write(dir .. "/lib/where.lua", "return select(2, ...)")
    assert.are.equal(dir .. "/lib/where.lua", try(rt, "return require 'lib.where'").value)
  end)
end)

describe("policy sandbox: long C calls", function()
  after_each(H.cleanup)

  -- Moves that take the sandbox's table.move (Lua 5.4) through its pieces
  -- of 1024: its results, and its errors, must be the builtin's.
  local MOVES = [[
local log = {}
local function fill(n) local a = {} for i = 1, n do a[i] = i end return a end
local function dump(t, lo, hi)
  local out = {}
  for i = lo, hi do out[#out + 1] = tostring(rawget(t, i)) end
  return table.concat(out, ",")
end
local function case(name, f)
  local ok, r = pcall(f)
  log[#log + 1] = name .. "=" .. (ok and r or "E:" .. tostring(r))
end
case("right", function() local a = fill(5000) table.move(a, 1, 5000, 3) return dump(a, -2, 5005) end)
case("left", function() local a = fill(5000) table.move(a, 3, 5000, 1) return dump(a, -2, 5005) end)
case("apart", function() local a, b = fill(3000), {} local r = table.move(a, 1, 3000, 7, b) return dump(b, 0, 3010) .. tostring(r == b) end)
case("partly", function() local a = fill(4000) table.move(a, 1, 3000, 2500) return dump(a, 1, 5600) end)
case("negative", function() local a = fill(3000) table.move(a, -100, 2000, 10) return dump(a, -110, 2020) end)
case("self", function() local a = fill(3000) table.move(a, 1, 3000, 1, a) return dump(a, 1, 3000) end)
case("proxy", function()
  local n = 0
  local p = setmetatable({}, { __index = function(_, k) n = n + 1 return k * 2 end,
                               __newindex = function(t, k, v) n = n + 1 rawset(t, k, v) end })
  table.move(p, 1, 2500, 2)
  return n .. ":" .. dump(p, 1, 2501)
end)
case("string", function() local b = table.move("abc", 1, 2, 1, {}) return dump(b, 1, 2) end)
case("small", function() local a = fill(10) table.move(a, 1, 9, 2) return dump(a, 1, 11) end)
case("empty", function() return dump(table.move(fill(3), 5, 1, 1), 1, 3) end)
case("huge", function() return table.move({}, math.mininteger, 10, 1) end)
case("wrap", function() return table.move(fill(3000), 1, 3000, math.maxinteger - 10) end)
case("not a table", function() return table.move(1, 1, 3000, 1) end)
case("bad dest", function() return table.move({}, 1, 3000, 1, 5) end)
case("read-only dest", function() return table.move({}, 1, 3000, 1, "abc") end)
case("bad f", function() return table.move({}, "x", 3000, 1) end)
return table.concat(log, "\n")
]]

  -- Sorts through the sandbox's table.sort (LuaJIT: the builtin with a
  -- comparator of its own that polls): results and errors as the builtin's.
  local SORTS = [[
local log = {}
local function case(name, f)
  local ok, r = pcall(f)
  log[#log + 1] = name .. "=" .. (ok and tostring(r) or "E:" .. tostring(r))
end
local function sorted(t, cmp) table.sort(t, cmp) return table.concat(t, ",") end
local function pr(n) local t, x = {}, 7 for i = 1, n do x = (x * 16807) % 2147483647 t[i] = x % 1000 end return t end
case("numbers", function() return sorted(pr(3000)) end)
case("strings", function() local t = pr(500) for i = 1, #t do t[i] = tostring(t[i]) end return sorted(t) end)
case("comparator", function() return sorted(pr(500), function(a, b) return a > b end) end)
case("nil comparator", function() return sorted({ 3, 1, 2 }, nil) end)
case("records", function()
  local t = {}
  for i, v in ipairs(pr(300)) do t[i] = setmetatable({ k = v % 10, i = i }, { __lt = function(a, b) return a.k < b.k end }) end
  table.sort(t)
  local out = {} for i, r in ipairs(t) do out[i] = r.i end
  return table.concat(out, ",")
end)
case("mixed", function() return sorted({ 1, "x", 2 }) end)
case("nil hole", function() return sorted({ 1, nil, 2, n = 3 }) end)
case("tables", function() return sorted({ {}, {} }) end)
case("bad comparator", function() return sorted({ 1, 2 }, 5) end)
case("not a table", function() table.sort("abc") end)
case("nothing", function() table.sort() end)
return table.concat(log, "\n")
]]

  it("table.sort (LuaJIT: with a comparator that polls) sorts and fails as the builtin does", function()
    local rt = sandbox(TRY, { policy_time_limit_ms = 20000 })
    local r = try(rt, SORTS)
    assert.is_true(r.ok, r.err)
    local builtin = assert((loadstring or load)(SORTS, "=try"))()
    assert.are.equal(builtin, r.value)
    assert.is_true(H.has(r.value, "mixed=E:attempt to compare"), r.value)
  end)

  -- table.insert and table.remove (Lua 5.4: the sandbox's own, which poll
  -- while they shift): results and errors as the builtin's.
  local SHIFTS = [[
local log = {}
local function fill(n) local a = {} for i = 1, n do a[i] = i end return a end
local function dump(t, lo, hi)
  local out = {}
  for i = lo, hi do out[#out + 1] = tostring(rawget(t, i)) end
  return table.concat(out, ",")
end
local function case(name, f)
  local ok, r = pcall(f)
  log[#log + 1] = name .. "=" .. (ok and tostring(r) or "E:" .. tostring(r))
end
local function proxy(n)
  local calls = 0
  local store = fill(n)
  return setmetatable({}, {
    __len = function() calls = calls + 1 return n end,
    __index = function(_, k) calls = calls + 1 return store[k] end,
    __newindex = function(_, k, v) calls = calls + 1 store[k] = v end,
  }), store, function() return calls end
end
case("append", function() local a = fill(3) table.insert(a, 9) return dump(a, 1, 5) end)
case("insert 1", function() local a = fill(3000) table.insert(a, 1, "x") return dump(a, 1, 3002) end)
case("insert mid", function() local a = fill(5) table.insert(a, 3, "x") return dump(a, 1, 7) end)
case("insert end+1", function() local a = fill(5) table.insert(a, 6, "x") return dump(a, 1, 7) end)
case("insert 0", function() table.insert(fill(5), 0, "x") end)
case("insert end+2", function() table.insert(fill(5), 7, "x") end)
case("insert 4 args", function() table.insert(fill(5), 1, 2, 3) end)
case("insert 1 arg", function() table.insert(fill(5)) end)
case("insert float", function() table.insert(fill(5), 1.5, "x") end)
case("insert string", function() table.insert("abc", "x") end)
case("insert nothing", function() table.insert() end)
case("insert proxy", function() local p, s, calls = proxy(2000) table.insert(p, 1, "x") return calls() .. ":" .. dump(s, 1, 2001) end)
case("remove last", function() local a = fill(3) local v = table.remove(a) return v .. ":" .. dump(a, 1, 4) end)
case("remove 1", function() local a = fill(3000) local v = table.remove(a, 1) return v .. ":" .. dump(a, 1, 3001) end)
case("remove size+1", function() local a = fill(3) return tostring(table.remove(a, 4)) .. dump(a, 1, 4) end)
case("remove empty", function() return tostring(table.remove({})) end)
case("remove 0 of empty", function() return tostring(table.remove({ [0] = "z" }, 0)) end)
case("remove 0", function() table.remove(fill(3), 0) end)
case("remove size+2", function() table.remove(fill(3), 5) end)
case("remove float", function() table.remove(fill(3), 1.5) end)
case("remove proxy", function() local p, s, calls = proxy(2000) local v = table.remove(p, 1) return v .. ":" .. calls() .. ":" .. dump(s, 1, 2001) end)
case("remove nil", function() table.remove(nil) end)
case("bad length", function() table.insert(setmetatable({}, { __len = function() return "x" end }), 1) end)
return table.concat(log, "\n")
]]

  it("table.insert and table.remove (Lua 5.4: polling while they shift) work and fail as the builtin's", function()
    if jit then return end -- LuaJIT's take the raw length, or are bytecode
    local rt = sandbox(TRY, { policy_time_limit_ms = 20000 })
    local r = try(rt, SHIFTS)
    assert.is_true(r.ok, r.err)
    -- Lua 5.4.0-5.4.4 name remove's position argument #1; it is #2
    local builtin = assert(load(SHIFTS, "=try"))():gsub("#1 to 'remove' %(position", "#2 to 'remove' (position")
    assert.are.equal(builtin, r.value)
    assert.is_true(H.has(r.value, "insert 4 args=E:try:27: wrong number of arguments to 'insert'"), r.value)
  end)

  it("table.move (Lua 5.4) works in pieces, with the builtin's results and errors", function()
    if jit then return end -- LuaJIT's table.move is bytecode: the time limit stops it
    local rt = sandbox(TRY, { policy_time_limit_ms = 20000 })
    local r = try(rt, MOVES)
    assert.is_true(r.ok, r.err)
    local builtin = assert(load(MOVES, "=try"))()
    assert.are.equal(builtin, r.value)
    assert.is_true(H.has(r.value, "huge=E:try:") and H.has(r.value, "too many elements to move"), r.value)
  end)
end)

describe("policy sandbox: metatables and finalizers", function()
  after_each(H.cleanup)

  it("keeps the runtime's metatables out of reach: strings', file handles', the libraries', tg.array's", function()
    local rt, dir = sandbox(TRY)
    local data = dir .. "/data.txt"
    H.write(data, "x\n")
    local r = try(rt, [[
      local a, tg = ..., require "toolgate"
      local f = io.open(a.path)
      local seen = { getmetatable(""), getmetatable(f), getmetatable(string), getmetatable(io),
                     getmetatable(tg.array {}), getmetatable(tg.object {}), getmetatable(a),
                     getmetatable(_G) }
      f:close()
      for i = 1, 8 do seen[i] = tostring(seen[i]) end
      return table.concat(seen, " ")
    ]], { path = data })
    assert.is_true(r.ok, r.err)
    assert.are.equal("false false false false false false nil false", r.value)
    -- the exploit of issue 8 item 5
    refused(rt, ("getmetatable(io.open(%q)).__gc = function() while true do end end"):format(data),
            "attempt to index a boolean value")
    -- policy code's own metatables, and __metatable, work as in plain Lua
    assert.are.equal("true", try(rt, "local mt = {} return getmetatable(setmetatable({}, mt)) == mt").value)
    assert.are.equal("locked", try(rt, "return getmetatable(setmetatable({}, { __metatable = 'locked' }))").value)
    assert.are.equal("nil", try(rt, "return tostring(getmetatable({}))").value)
    refused(rt, "getmetatable()", "bad argument #1 to 'getmetatable'")
    -- methods on strings and files still work
    assert.are.equal("x\n", try(rt, "local f = io.open((...).path) local s = f:read('a') f:close() return s",
                                { path = data }).value)
    assert.are.equal("3", try(rt, "return ('abc'):len()").value)
  end)

  it("refuses newproxy and __gc however it is attached", function()
    local rt = sandbox(TRY)
    assert.is_false(try(rt, "newproxy(true)").ok) -- LuaJIT's refused, absent from Lua 5.4
    refused(rt, "local mt = {} rawset(mt, '__gc', print) setmetatable({}, mt)", "__gc finalizers are not available")
    refused(rt, "setmetatable({}, { __gc = true })", "__gc finalizers are not available")
    -- given one later, the table set earlier is not finalized; set again, refused
    refused(rt, "local mt = {} local t = setmetatable({}, mt) mt.__gc = print setmetatable({}, mt)",
            "__gc finalizers are not available")
  end)

  -- Attempts every way to a finalizer (reported as name=ok/refused), then
  -- leaves garbage a finalizer would run for. A finalizer that got through
  -- spins at the next collection, close or reload: with hooks off, forever.
  local FINALIZERS = [[
local tg = require "toolgate"
local DATA = %q
local function spin() while true do end end
local function attempts()
  local tried = {}
  local function attempt(name, f)
    tried[#tried + 1] = name .. "=" .. (pcall(f) and "ok" or "refused")
  end
  attempt("file", function() getmetatable(io.open(DATA)).__gc = spin end)
  attempt("lines", function() getmetatable(select(4, io.lines(DATA)) or io.open(DATA)).__gc = spin end)
  attempt("string", function() getmetatable("").__gc = spin end)
  attempt("json", function() getmetatable(tg.array {}).__gc = spin end)
  attempt("rawset", function() local mt = {} rawset(mt, "__gc", spin) setmetatable({}, mt) end)
  attempt("placeholder", function() setmetatable({}, { __gc = true }) end)
  attempt("late", function() local mt = {} local t = setmetatable({}, mt) mt.__gc = spin end)
  for _ = 1, 20 do io.open(DATA) end
  for _ = 1, 20 do tg.array {} tg.object {} setmetatable({}, {}) end
  return table.concat(tried, " ")
end
local at_load = attempts()
tg.tool { name = "probe", read_only = true, run = function() return { load = at_load, call = attempts() } end }
tg.rule { name = "peek", check = function(call) attempts() end }
]]
  local REFUSED = "file=refused lines=refused string=refused json=refused rawset=refused "
                  .. "placeholder=refused late=ok"

  it("the __gc exploit through a shared metatable fails; call, check and reload still finish", function()
    if not os.getenv("TOOLGATE_BUILD_DIR") then return pending("TOOLGATE_BUILD_DIR is not set") end
    local data = H.tmpdir() .. "/data.txt"
    H.write(data, "x\n")
    local dir = H.policy_dir(FINALIZERS:format(data))
    local code, out, err = toolgate_bounded("call probe '{}' --json --policies " .. dir)
    assert.are_not.equal(124, code, "toolgate call hung")
    assert.are.equal(0, code, err)
    assert.is_true(H.has(out, '"load":"' .. REFUSED .. '"'), out)
    assert.is_true(H.has(out, '"call":"' .. REFUSED .. '"'), out)
    code, out, err = toolgate_bounded("check " .. dir)
    assert.are_not.equal(124, code, "toolgate check hung")
    assert.are.equal(0, code, err)
    code, out, err = lua_bounded(([[
      local toolgate = require "toolgate"
      local rt = assert(toolgate.new { policies = %q })
      for i = 1, 3 do
        local h = assert(rt:call("probe", {}))
        assert(h:wait().status == "ok")
        assert(rt:reload())
        collectgarbage()
      end
      rt:close()
      print("finished")
    ]]):format(dir))
    assert.are_not.equal(124, code, "a host that reloads hung")
    assert.are.equal(0, code, err)
    assert.is_true(H.has(out, "finished"), out .. err)
  end)

  it("runs __close (Lua 5.4) under the time limit, also while a stop unwinds", function()
    if jit then return end -- no to-be-closed variables in LuaJIT
    local rt = sandbox [[
local tg = require "toolgate"
tg.tool { name = "echo", read_only = true, run = function(args) return args end }
local closing = load([=[
  local spin = setmetatable({}, { __close = function() while true do end end })
  return function(call)
    local a <close> = spin
    if call.args.loop then while true do end end
  end
]=])()
tg.rule { name = "closing", tools = { "echo" }, check = closing }
tg.tool { name = "co", read_only = true, run = function()
  local co = coroutine.create(function() local a <close> = setmetatable({}, { __close = function() while true do end end }) coroutine.yield() end)
  coroutine.resume(co)
  return select(2, coroutine.close(co))
end }
]]
    for _, args in ipairs { { loop = true }, {} } do
      local out = H.call(rt, "echo", args)
      assert.are.equal("POLICY", out.error.phase)
      assert.is_true(H.has(out.error.message, "ran past its time limit"), out.error.message)
    end
    -- coroutine.close runs the pending __close, which the limit stops; the
    -- stop does not end there: the tool itself is stopped
    local out = H.call(rt, "co", {})
    assert.are.equal("error", out.status)
    assert.are.equal("TIME_LIMIT", out.error.code)
    assert.is_true(H.has(out.error.message, "ran past its time limit"), out.error.message)
  end)
end)

describe("policy sandbox: time limit", function()
  after_each(H.cleanup)

  local LOOP_RULE = [[
local tg = require "toolgate"
tg.tool { name = "echo", read_only = true, run = function(args) return args end }
tg.rule { name = "spin", tools = { "echo" }, check = function(call)
  if call.args.spin then
    while true do end
  end
end }
]]

  it("stops an infinite loop in a rule: POLICY error naming the rule and file:line; the next call works", function()
    local rt = sandbox(LOOP_RULE)
    local out = H.call(rt, "echo", { spin = true })
    assert.are.equal("error", out.status)
    assert.are.equal("POLICY", out.error.phase)
    local m = out.error.message
    assert.is_true(H.has(m, "rule 'spin' defined at "), m)
    assert.is_true(H.has(m, "ran past its time limit of " .. LIMIT .. " ms"), m)
    assert.is_true(H.has(m, "10_policy.lua:5)"), m) -- stopped at the loop
    assert.is_true(H.has(m, "policy_time_limit_ms"), m)
    local again = H.call(rt, "echo", { x = 1 })
    assert.are.equal("ok", again.status)
    assert.are.same({ x = 1 }, again.result)
  end)

  it("cannot be swallowed by pcall inside the policy", function()
    local rt = sandbox [[
local tg = require "toolgate"
tg.tool { name = "echo", read_only = true, run = function(args) return args end }
tg.rule { name = "stubborn", check = function(call)
  while true do
    pcall(function() while true do end end)
    pcall(error, "again")
  end
end }
]]
    local out = H.call(rt, "echo", {})
    assert.are.equal("POLICY", out.error.phase)
    assert.is_true(H.has(out.error.message, "ran past its time limit"), out.error.message)
  end)

  -- Each call uses 1/25 of the limit in CPU time (room for a machine
  -- loaded 25 times over), and the calls together use more than it.
  it("counts per call: many calls that each use part of the limit all pass", function()
    local rt = sandbox([[
local tg = require "toolgate"
tg.tool { name = "echo", read_only = true, run = function(args) return args end }
tg.rule { name = "busy", check = function(call)
  local t0 = os.clock()
  while os.clock() - t0 < 0.040 do end   -- 40 ms of CPU time
end }
]], { policy_time_limit_ms = 1000 })
    for i = 1, 30 do
      local out = H.call(rt, "echo", { i = i })
      assert.are.equal("ok", out.status, out.error and out.error.message)
    end
  end)

  it("a fail = \"open\" rule that loops lets the call through, with a rule_error", function()
    local rt = sandbox [[
local tg = require "toolgate"
tg.tool { name = "echo", read_only = true, run = function(args) return args end }
tg.rule { name = "spin-open", fail = "open", check = function(call) while true do end end }
]]
    local events = H.record(rt, "rule_error")
    local out = H.call(rt, "echo", { a = 1 })
    assert.are.equal("ok", out.status)
    assert.are.equal(1, #events)
    assert.is_true(H.has(events[1].error, "ran past its time limit"), events[1].error)
    assert.are.equal("ok", H.call(rt, "echo", { a = 2 }).status)
  end)

  it("stops an infinite loop in a pre-hook", function()
    local rt = sandbox {
      ["00_tools.lua"] = H.lib.tools,
      ["10_hook.lua"] = "require('toolgate').before_tool('echo', function(call) repeat until false end)",
    }
    local out = H.call(rt, "echo", {})
    assert.are.equal("POLICY", out.error.phase)
    assert.is_true(H.has(out.error.message, "pre-hook defined at "), out.error.message)
    assert.is_true(H.has(out.error.message, "ran past its time limit"), out.error.message)
    assert.are.equal("ok", H.call(rt, "runs", {}).status)
  end)

  it("stops an infinite loop in a post-hook: the result is withheld", function()
    local rt = sandbox {
      ["00_tools.lua"] = H.lib.tools,
      ["10_hook.lua"] = "require('toolgate').after_tool('echo', function(call, res) while true do end end)",
    }
    local out = H.call(rt, "echo", {})
    assert.are.equal("POLICY", out.error.phase)
    assert.is_true(H.has(out.error.message, "post-hook defined at "), out.error.message)
    assert.is_true(H.has(out.error.message, "ran past its time limit"), out.error.message)
    assert.are.equal("ok", H.call(rt, "runs", {}).status)
  end)

  it("stops a retry predicate that loops: no retry, a handler_error", function()
    local rt = sandbox [[
local tg = require "toolgate"
tg.tool { name = "flaky", read_only = true,
  retry = { attempts = 3, initial_ms = 1, retryable = function(err) while true do end end },
  run = function() return nil, "try again" end }
]]
    local errors = H.record(rt, "handler_error")
    local out = H.call(rt, "flaky", {})
    assert.are.equal("error", out.status)
    assert.are.equal(1, out.attempts)
    assert.are.equal(1, #errors)
    assert.is_true(H.has(errors[1].error, "retryable predicate defined at "), errors[1].error)
    assert.is_true(H.has(errors[1].error, "ran past its time limit"), errors[1].error)
  end)

  it("stops an infinite loop in an on_event handler: handler_error, the call goes on", function()
    local rt = sandbox {
      ["00_tools.lua"] = H.lib.tools,
      ["10_events.lua"] = "require('toolgate').on_event('call_start', function(ev) while true do end end)",
    }
    local errors = H.record(rt, "handler_error")
    local out = H.call(rt, "echo", { v = 1 })
    assert.are.equal("ok", out.status)
    assert.are.same({ v = 1 }, out.result)
    assert.is_true(#errors >= 1)
    assert.is_true(H.has(errors[1].error, "on_event handler defined at "), errors[1].error)
    assert.is_true(H.has(errors[1].error, "ran past its time limit"), errors[1].error)
    assert.are.equal("ok", H.call(rt, "echo", { v = 2 }).status)
  end)

  it("stops a Lua tool that loops without yielding: EXECUTE error TIME_LIMIT", function()
    local rt = sandbox [[
local tg = require "toolgate"
tg.tool { name = "spin", read_only = true, run = function(args) while true do end end }
tg.tool { name = "echo", read_only = true, run = function(args) return args end }
]]
    local out = H.call(rt, "spin", {})
    assert.are.equal("error", out.status)
    assert.are.equal("EXECUTE", out.error.phase)
    assert.are.equal("TIME_LIMIT", out.error.code)
    assert.is_false(out.error.retryable)
    assert.is_true(H.has(out.error.message, "tool 'spin'"), out.error.message)
    assert.is_true(H.has(out.error.message, "10_policy.lua:2"), out.error.message)
    assert.are.equal("ok", H.call(rt, "echo", {}).status)
  end)

  it("gives a Lua tool the limit per resume: work split by ctx.sleep runs to the end", function()
    -- a limit of 1 s and steps of 50 ms of CPU: a twentieth of the limit
    -- per step, 1.5 limits in all; wide margins, so a loaded machine (or
    -- ASan) that stretches a step's wall time tenfold does not trip it
    local rt = sandbox([[
local tg = require "toolgate"
tg.tool { name = "steps", read_only = true, run = function(args, ctx)
  local s = 0
  for step = 1, 30 do
    local t0 = os.clock()
    while os.clock() - t0 < 0.05 do s = s + 1 end
    ctx.sleep(0)
  end
  return { s = s }
end }
]], { policy_time_limit_ms = 1000 })
    local out = H.call(rt, "steps", {})
    assert.are.equal("ok", out.status, out.error and out.error.message)
    assert.is_true(out.result.s > 30)
  end)

  it("stops a policy file that loops while it loads, naming file:line", function()
    local dir = H.policy_dir "local x = 0\nwhile true do x = x + 1 end\n"
    local rt, err = toolgate.new { policies = dir, policy_time_limit_ms = LIMIT }
    assert.is_nil(rt)
    assert.is_true(H.has(err, "ran past its time limit of " .. LIMIT .. " ms"), err)
    assert.is_true(H.has(err, "10_policy.lua:2"), err)
  end)

  it("turns deep recursion into a POLICY error; the next call works", function()
    local rt = sandbox([[
local tg = require "toolgate"
tg.tool { name = "echo", read_only = true, run = function(args) return args end }
local function down(n) return 1 + down(n + 1) end
local meta = setmetatable({}, {})
getmetatable(meta).__index = function(t, k) return t[k] end   -- recursion through C
tg.rule { name = "deep", check = function(call)
  if call.args.lua then return down(1) end
  if call.args.c then return meta.x end
end }
]], { policy_time_limit_ms = 10000, policy_memory_cap = 256 * 1024 * 1024 })
    for _, how in ipairs { "lua", "c" } do
      local out = H.call(rt, "echo", { [how] = true })
      assert.are.equal("POLICY", out.error.phase, how)
      local m = out.error.message
      assert.is_true(H.has(m, "stack overflow"), m)
      assert.is_true(H.has(m, "rule 'deep' defined at "), m)
      assert.are.equal("ok", H.call(rt, "echo", { after = how }).status)
    end
  end)
end)

describe("policy sandbox: memory cap", function()
  after_each(H.cleanup)

  local HOGS = [[
local tg = require "toolgate"
tg.tool { name = "echo", read_only = true, run = function(args) return args end }
tg.tool { name = "grow", read_only = true, run = function(args)
  local t = {}
  for i = 1, 1e9 do t[i] = {} end
end }
tg.rule { name = "hog", tools = { "echo" }, check = function(call)
  if call.args.string then local s = string.rep("x", 2^30) end
  if call.args.tables then local t = {}; for i = 1, 1e9 do t[i] = {} end end
  if call.args.some then local s = string.rep("y", 4 * 1024 * 1024) return nil end
  if call.args.caught then
    pcall(function() local t = {}; for i = 1, 1e9 do t[i] = {} end end)
    return tg.allow "the bomb was caught"
  end
end }
]]

  local function hogs()
    return sandbox(HOGS, { policy_time_limit_ms = 60000 })
  end

  it("stops a 1 GiB string in a rule with a POLICY error; the next call works", function()
    local rt = hogs()
    local out = H.call(rt, "echo", { string = true })
    assert.are.equal("POLICY", out.error.phase)
    local m = out.error.message
    assert.is_true(H.has(m, "rule 'hog' defined at "), m)
    assert.is_true(H.has(m, "10_policy.lua:7"), m)
    assert.is_true(H.has(m, "ran out of memory"), m)
    assert.is_true(H.has(m, "16 MiB (policy_memory_cap"), m)
    assert.are.equal("ok", H.call(rt, "echo", { some = true }).status)
  end)

  it("stops a table bomb in a rule; the memory is given back", function()
    local rt = hogs()
    for _ = 1, 2 do
      local out = H.call(rt, "echo", { tables = true })
      assert.are.equal("POLICY", out.error.phase)
      assert.is_true(H.has(out.error.message, "ran out of memory"), out.error.message)
      -- 4 MiB more fits again: what the failed call built was collected
      local ok = H.call(rt, "echo", { some = true })
      assert.are.equal("ok", ok.status, ok.error and ok.error.message)
    end
  end)

  it("a pcall in the policy cannot swallow the stop; the error names where it hit", function()
    local rt = hogs()
    local out = H.call(rt, "echo", { caught = true })
    assert.are.equal("POLICY", out.error.phase)
    local m = out.error.message
    assert.is_true(H.has(m, "ran out of memory (at "), m)
    assert.is_true(H.has(m, "10_policy.lua:12)"), m) -- inside the pcall
    assert.are.equal("ok", H.call(rt, "echo", { some = true }).status)
  end)

  it("stops a table bomb in a Lua tool: EXECUTE error MEMORY_CAP", function()
    local rt = hogs()
    local out = H.call(rt, "grow", {})
    assert.are.equal("EXECUTE", out.error.phase)
    assert.are.equal("MEMORY_CAP", out.error.code)
    assert.is_true(H.has(out.error.message, "tool 'grow'"), out.error.message)
    assert.are.equal("ok", H.call(rt, "echo", {}).status)
  end)

  it("refuses a policy file that allocates past the cap while it loads", function()
    local dir = H.policy_dir "big = string.rep('z', 64 * 1024 * 1024)"
    local rt, err = toolgate.new { policies = dir, policy_memory_cap = CAP }
    assert.is_nil(rt)
    assert.is_true(H.has(err, "10_policy.lua"), err)
    assert.is_true(H.has(err, "ran out of memory"), err)
  end)
end)

describe("policy sandbox: the toolgate command", function()
  after_each(H.cleanup)

  -- Runs the toolgate binary; returns exit code, stdout, stderr.
  local function toolgate_cmd(args)
    local build = os.getenv("TOOLGATE_BUILD_DIR")
    local dir = H.tmpdir()
    local cmd = string.format("XDG_STATE_HOME=%s %s/toolgate %s >%s/out 2>%s/err",
                              dir, build, args, dir, dir)
    local ok, _, code = os.execute(cmd)
    if type(ok) == "number" then code = ok / 256 end -- Lua 5.1: the raw status
    if ok == true then code = 0 end
    return code, H.read(dir .. "/out"), H.read(dir .. "/err")
  end

  local POLICY = [[
local tg = require "toolgate"
tg.tool { name = "say", read_only = true, run = function() print("from the policy") return "said" end }
tg.tool { name = "spin", read_only = true, run = function() while true do end end }
]]

  it("takes --policy-time-limit and --trusted-policies; print goes to stderr, not the JSON", function()
    if not os.getenv("TOOLGATE_BUILD_DIR") then return pending("TOOLGATE_BUILD_DIR is not set") end
    local dir = H.policy_dir(POLICY)
    local code, out, err = toolgate_cmd("call say '{}' --json --policies " .. dir)
    assert.are.equal(0, code, err)
    assert.is_true(H.has(out, '"result":"said"'), out)
    assert.is_false(H.has(out, "from the policy"), out)
    assert.is_true(H.has(err, "from the policy"), err)
    code, out = toolgate_cmd("call spin '{}' --json --policy-time-limit 50 --policies " .. dir)
    assert.are.equal(1, code)
    assert.is_true(H.has(out, "ran past its time limit of 50 ms"), out)
    code, _, err = toolgate_cmd("call spin '{}' --policy-time-limit lots --policies " .. dir)
    assert.are.equal(2, code)
    assert.is_true(H.has(err, "'--policy-time-limit' needs a positive whole number, not 'lots'"), err)
    code, _, err = toolgate_cmd("check " .. dir .. " --policy-memory-cap 1K")
    assert.are.equal(1, code)
    assert.is_true(H.has(err, "ran out of memory"), err)
  end)
end)
