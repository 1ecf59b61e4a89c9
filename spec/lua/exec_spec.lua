-- The built-in `exec` tool and ctx.exec for Lua tools, with real processes.
local H = require "spec.lua.helpers"

-- A process that exists and is not a zombie (a killed grandchild is
-- reparented to init, which may reap it late).
local function alive(pid)
  local stat = H.read("/proc/" .. pid .. "/stat")
  if not stat then return false end
  local state = stat:match("%) (%a)")
  return state ~= "Z" and state ~= "X"
end

-- SIGKILL has been sent by the time a call ends, but a process may still be
-- finishing its exit: give it a generous moment.
local function gone(pid)
  local deadline = os.clock() + 3
  while alive(pid) and os.clock() < deadline do
    os.execute("sleep 0.01")
  end
  return not alive(pid)
end

local function pids(text)
  local out = {}
  for p in tostring(text):gmatch("%d+") do out[#out + 1] = p end
  return out
end

-- Turns rt's loop until `got.line` (filled by an on_progress) is set.
local function wait_for_line(rt, got)
  local t0 = os.time()
  while not got.line and os.time() - t0 < 20 do rt:run_once() end
  assert(got.line, "no progress event carried output")
  return got.line
end

local TWO_SLEEPERS = "sleep 100 & a=$!; sleep 100 & echo $a $!; wait"

local function rt_allow(opts)
  opts = opts or {}
  opts.approve = "allow"
  return H.runtime(nil, opts)
end

describe("exec", function()
  after_each(H.cleanup)

  it("returns exit_code, stdout and stderr", function()
    local rt = rt_allow()
    local out = H.call(rt, "exec", { command = "echo hello; echo oops >&2" })
    assert.are.equal("ok", out.status)
    local r = out.result
    assert.are.equal(0, r.exit_code)
    assert.are.equal("hello\n", r.stdout)
    assert.are.equal("oops\n", r.stderr)
    assert.is_false(r.stdout_truncated)
    assert.is_false(r.stderr_truncated)
    assert.is_false(r.timed_out)
    assert.is_false(r.cancelled)
    assert.is_number(r.duration_ms)
  end)

  it("a non-zero exit is an ok call that carries the exit code", function()
    local rt = rt_allow()
    local out = H.call(rt, "exec", { command = "exit 3" })
    assert.are.equal("ok", out.status)
    assert.are.equal(3, out.result.exit_code)
  end)

  it("a command killed by a signal reports the signal's name", function()
    local rt = rt_allow()
    local out = H.call(rt, "exec", { command = "kill -TERM $$" })
    assert.are.equal("ok", out.status)
    assert.are.equal("SIGTERM", out.result.signal)
    assert.is_not_number(out.result.exit_code)
  end)

  it("env is merged over the environment; cwd is where it runs", function()
    local rt = rt_allow()
    local dir = H.tmpdir()
    local out = H.call(rt, "exec", {
      command = 'printf "%s|%s|%s" "$TG_SPEC_VAR" "$(pwd)" "${HOME:+home set}"',
      env = { TG_SPEC_VAR = "x y" }, cwd = dir })
    assert.are.equal("ok", out.status)
    assert.are.equal("x y|" .. dir .. "|home set", out.result.stdout)
  end)

  it("writes stdin to the command, then closes it", function()
    local rt = rt_allow()
    local out = H.call(rt, "exec", { command = "tr a-z A-Z", stdin = "shout\n" })
    assert.are.equal("SHOUT\n", out.result.stdout)
  end)

  it("a bad cwd is an EXECUTE error that names it", function()
    local rt = rt_allow()
    local out = H.call(rt, "exec", { command = "pwd", cwd = "/no/such/dir" })
    assert.are.equal("error", out.status)
    assert.are.equal("EXECUTE", out.error.phase)
    assert.are.equal("SPAWN_FAILED", out.error.code)
    assert.is_true(H.has(out.error.message, "'/no/such/dir' does not exist"))
  end)

  it("bad args fail validation and nothing runs", function()
    local rt = rt_allow()
    local out = H.call(rt, "exec", { command = 42 })
    assert.are.equal("VALIDATE", out.error.phase)
    assert.is_true(H.has(out.error.message, "$.command"))
    out = H.call(rt, "exec", { cmd = "ls" })
    assert.are.equal("VALIDATE", out.error.phase)
  end)

  it("is not read-only: with no rule answering, it is asked", function()
    local rt = H.runtime(nil, { approve = "deny" })
    local out = H.call(rt, "exec", { command = "true" })
    assert.are.equal("rejected", out.status)
  end)

  it("caps each stream: head and tail kept, the cut marked, the flag set", function()
    local rt = rt_allow({ exec_output_cap = 64 * 1024 })
    local out = H.call(rt, "exec", { command = "yes | head -c 5000000" })
    local s = out.result.stdout
    assert.is_true(out.result.stdout_truncated)
    assert.is_false(out.result.stderr_truncated)
    assert.are.equal("y\ny\n", s:sub(1, 4))
    assert.is_true(H.has(s, "\n...[4934464 bytes cut]...\n"))
    assert.are.equal("y\ny\n", s:sub(-4))
    assert.is_true(#s < 64 * 1024 + 64)
  end)

  it("streams output: a progress event carries the first line before the command ends", function()
    local rt = rt_allow({ progress_interval_ms = 50 })
    local order = {}
    local out = H.call(rt, "exec", { command = "echo first; sleep 0.3; echo second" }, {
      on_progress = function(ev)
        if ev.last_line == "first" and not order.first then
          order.first = #order + 1
          order[#order + 1] = "progress: first (" .. ev.bytes .. " bytes)"
        end
      end,
      on_done = function() order[#order + 1] = "done" end })
    assert.are.equal("ok", out.status)
    assert.are.same({ "progress: first (6 bytes)", "done" }, { order[1], order[2] })
  end)

  it("a command that ends before the first interval emits no progress", function()
    local rt = rt_allow()
    local events = H.record(rt, "progress")
    local out = H.call(rt, "exec", { command = "true" })
    assert.are.equal("ok", out.status)
    assert.are.equal(0, #events)
  end)

  it("a timeout kills the whole group and keeps the partial output", function()
    local rt = rt_allow()
    local out = H.call(rt, "exec", { command = "echo before; " .. TWO_SLEEPERS, timeout_ms = 400 })
    assert.are.equal("timeout", out.status)
    assert.are.equal("TIMEOUT", out.error.phase)
    assert.is_true(out.result.timed_out)
    assert.are.equal("before", out.result.stdout:match("^(%a+)\n"))
    local p = pids(out.result.stdout)
    assert.are.equal(2, #p)
    assert.is_true(gone(p[1]))
    assert.is_true(gone(p[2]))
  end)

  it("cancel kills the whole group; status cancelled with the output so far", function()
    local rt = rt_allow({ progress_interval_ms = 20 })
    local got = {}
    local h = assert(rt:call("exec", { command = TWO_SLEEPERS }, {
      on_progress = function(ev) if ev.last_line ~= "" then got.line = ev.last_line end end }))
    local p = pids(wait_for_line(rt, got))
    assert.are.equal(2, #p)
    assert.is_true(alive(p[1]))
    assert.is_true(h:cancel())
    local out = h:wait()
    assert.are.equal("cancelled", out.status)
    assert.is_true(out.result.cancelled)
    assert.are.same(p, pids(out.result.stdout))
    assert.is_true(gone(p[1]))
    assert.is_true(gone(p[2]))
  end)

  it("closing the runtime kills a command still running", function()
    -- (a close that waited out the 10 min grace would fail the test's time)
    local rt = rt_allow({ progress_interval_ms = 20, kill_grace_ms = 600000 })
    local got = {}
    rt:call("exec", { command = "trap '' TERM; " .. TWO_SLEEPERS }, {
      on_progress = function(ev) if ev.last_line ~= "" then got.line = ev.last_line end end })
    local p = pids(wait_for_line(rt, got))
    local t0 = os.time()
    rt:close()
    assert.is_true(os.time() - t0 < 240, "rt:close() waited out the grace")
    assert.is_true(gone(p[1]))
    assert.is_true(gone(p[2]))
  end)

  it("builtin_tools = false leaves exec out", function()
    local rt = H.runtime(nil, { builtin_tools = false, approve = "allow" })
    local h, _, code = rt:call("exec", { command = "true" })
    assert.is_nil(h)
    assert.are.equal("UNKNOWN_TOOL", code)
    assert.has_error(function() H.toolgate.new { builtin_tools = "yes" } end)
  end)
end)

local lua_tools = [[
local tg = require "toolgate"

tg.tool { name = "sh", read_only = true,
  run = function(args, ctx) return ctx.exec(args.opts or args.command) end }

tg.tool { name = "sh_lines", read_only = true,
  run = function(args, ctx)
    local a = ctx.exec("echo one")
    local b = ctx.exec({ command = "cat", stdin = a.stdout .. "two\n" })
    return { out = b.stdout }
  end }

tg.tool { name = "sh_fail", read_only = true,
  run = function(args, ctx)
    local r, err = ctx.exec({ command = "true", cwd = "/no/such/dir" })
    return { r = r, err = err }
  end }

tg.tool { name = "sh_bad", read_only = true,
  run = function(args, ctx) return ctx.exec(42) end }

tg.tool { name = "quick", read_only = true,
  run = function(args, ctx) ctx.sleep(20); return "quick" end }
]]

local TRUSTED = { trusted_policies = true }

describe("ctx.exec with trusted_policies (runs the command itself)", function()
  after_each(H.cleanup)

  it("runs a command from a Lua tool and returns exec's result table", function()
    local rt = H.runtime(lua_tools, TRUSTED)
    local out = H.call(rt, "sh", { command = "echo hi; exit 4" })
    assert.are.equal("ok", out.status)
    assert.are.equal("hi\n", out.result.stdout)
    assert.are.equal(4, out.result.exit_code)
    assert.is_false(out.result.timed_out)
  end)

  it("takes exec's options and can run several commands in turn", function()
    local rt = H.runtime(lua_tools, TRUSTED)
    local out = H.call(rt, "sh", { opts = { command = 'printf "%s" "$V"', env = { V = "v!" } } })
    assert.are.equal("v!", out.result.stdout)
    out = H.call(rt, "sh_lines", {})
    assert.are.same({ out = "one\ntwo\n" }, out.result)
  end)

  it("its own timeout_ms kills the command and says timed_out", function()
    local rt = H.runtime(lua_tools, TRUSTED)
    local out = H.call(rt, "sh", { opts = { command = "echo a; sleep 100", timeout_ms = 200 } })
    assert.are.equal("ok", out.status)
    assert.is_true(out.result.timed_out)
    assert.are.equal("a\n", out.result.stdout)
    assert.are.equal("SIGTERM", out.result.signal)
  end)

  it("returns nil and a message when the command cannot start; raises on bad options", function()
    local rt = H.runtime(lua_tools, TRUSTED)
    local out = H.call(rt, "sh_fail", {})
    assert.is_nil(out.result.r)
    assert.is_true(H.has(out.result.err, "/no/such/dir"))
    out = H.call(rt, "sh_bad", {})
    assert.are.equal("TOOL_RAISED", out.error.code)
    assert.is_true(H.has(out.error.message, "ctx.exec: expects a command string"))
  end)

  it("checks its own numbers: a timeout_ms that is a fraction or out of range raises, nothing runs", function()
    local rt = H.runtime(lua_tools, TRUSTED)
    local marker = os.tmpname()
    os.remove(marker)
    for _, ms in ipairs { 1.5, 1e20, -1, 0 } do
      local out = H.call(rt, "sh", { opts = { command = "touch " .. marker, timeout_ms = ms } })
      assert.are.equal("TOOL_RAISED", out.error.code)
      assert.is_true(H.has(out.error.message,
        "ctx.exec: timeout_ms must be an integer from 1 to 86400000, got "), out.error.message)
      assert.is_nil(io.open(marker))
    end
    local out = H.call(rt, "sh", { opts = { command = "echo fine", timeout_ms = 5000 } })
    assert.are.equal("fine\n", out.result.stdout)
  end)

  it("cancelling the Lua tool kills the process group; its output is the partial result", function()
    local rt = H.runtime(lua_tools, { progress_interval_ms = 20, trusted_policies = true })
    local got = {}
    local h = assert(rt:call("sh", { command = TWO_SLEEPERS }, {
      on_progress = function(ev) if ev.last_line and ev.last_line ~= "" then got.line = ev.last_line end end }))
    local p = pids(wait_for_line(rt, got))
    assert.are.equal(2, #p)
    assert.is_true(h:cancel())
    local out = h:wait()
    assert.are.equal("cancelled", out.status)
    assert.are.same(p, pids(out.result.stdout))
    assert.is_true(gone(p[1]))
    assert.is_true(gone(p[2]))
  end)

  it("a running command delays no other call", function()
    local rt = H.runtime(lua_tools, { approve = "allow", trusted_policies = true })
    local order = {}
    local function note(name) return { on_done = function() order[#order + 1] = name end } end
    rt:call("exec", { command = "sleep 0.3" }, note("exec"))
    rt:call("sh", { command = "sleep 0.2" }, note("ctx.exec"))
    rt:call("quick", {}, note("quick")) -- needs the loop to turn meanwhile
    rt:run()
    assert.are.equal("quick", order[1])
    assert.are.equal(3, #order)
  end)
end)

describe("ctx.exec in untrusted policies (the default)", function()
  after_each(H.cleanup)

  local deny_rm = [[
local tg = require "toolgate"
tg.rule { name = "no-rm", tools = { "exec" }, check = function(call)
  if call.args.command:find("rm ") then return tg.deny("no rm here") end end }
]]

  it("sends the command through the chain: with no approver it does not run", function()
    local rt = H.runtime(lua_tools)
    local out = H.call(rt, "sh", { command = "echo hi" })
    assert.are.equal("error", out.status) -- run returned nil, message
    assert.is_true(H.has(out.error.message, "did not run (rejected)"), out.error.message)
    out = H.call(rt, "sh_fail", {})
    assert.is_nil(out.result.r)
    assert.is_true(H.has(out.result.err, "did not run (rejected)"), out.result.err)
  end)

  it("runs it once the call is approved, and returns exec's result table", function()
    local rt = H.runtime(lua_tools, { approve = "allow" })
    local out = H.call(rt, "sh", { command = "echo hi; exit 4" })
    assert.are.equal("ok", out.status)
    assert.are.equal("hi\n", out.result.stdout)
    assert.are.equal(4, out.result.exit_code)
  end)

  it("cannot get round a rule on exec", function()
    local dir = H.policy_dir({ ["10_tools.lua"] = lua_tools, ["20_deny.lua"] = deny_rm })
    local marker = dir .. "/marker"
    H.write(marker, "x")
    local rt = assert(H.toolgate.new { policies = dir, approve = "allow" })
    local out = rt:call("sh_fail", {}):wait()
    out = rt:call("sh", { command = "rm " .. marker }):wait()
    rt:close()
    assert.are.equal("error", out.status)
    assert.is_true(H.has(out.error.message, "denied"), out.error.message)
    assert.is_true(H.exists(marker))
  end)
end)
