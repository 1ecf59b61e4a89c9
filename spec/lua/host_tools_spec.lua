-- Host tools (rt:tool) and the conventions of a Lua C module (issue 10):
-- a tool written in the host's own Lua goes through the whole chain like
-- any other — rules, hooks, validation, approval, retry, timeout, cancel —
-- with the ctx a policy's Lua tool has; and the module behaves like the
-- well-liked ones: _VERSION, <close>, argument errors that name the
-- method, nil, message, code.
local H = require "spec.lua.helpers"
local toolgate = H.toolgate

local is_54 = _VERSION == "Lua 5.4" and not jit

-- Runs the loop until pred() holds (or fails after `ms`).
local function run_until(rt, pred, ms)
  local deadline = os.time() + math.ceil((ms or 10000) / 1000) + 1
  while not pred() do
    assert(os.time() <= deadline, "timed out waiting")
    rt:run_once()
  end
end

local function events_of(list, call_id, type_)
  return H.of_call(list, call_id, type_)
end

describe("rt:tool", function()
  after_each(H.cleanup)

  it("runs the host's function through the chain: result, ctx, events", function()
    local rt = H.runtime(nil, { session = "s1" })
    local seen
    assert.is_true(rt:tool { name = "greet", read_only = true, description = "says hello",
      run = function(args, ctx)
        seen = { call_id = ctx.call_id, tool = ctx.tool, attempt = ctx.attempt, session = ctx.session }
        return { greeting = "hello " .. args.who }
      end })
    local events = H.record(rt)
    local out, h = H.call(rt, "greet", { who = "world" })
    assert.are.equal("ok", out.status)
    assert.are.same({ greeting = "hello world" }, out.result)
    assert.are.same({ call_id = h.id, tool = "greet", attempt = 1, session = "s1" }, seen)
    local types = H.types(events, h.id)
    assert.are.equal("call_start", types[1])
    assert.is_truthy(H.index_of(types, "attempt"))
    assert.are.equal("call_end", types[#types])
    local listed = false
    for _, t in ipairs(rt:describe().tools) do
      if t.name == "greet" then listed = t.read_only end
    end
    assert.is_true(listed)
  end)

  it("is judged by the rules: a deny means run never runs", function()
    local rt = H.runtime [[
local tg = require "toolgate"
tg.rule { name = "no-wipe", tools = { "wipe" }, check = function(call)
  if call.args.all then return tg.deny("not everything") end
end }
]]
    local runs = 0
    rt:tool { name = "wipe", read_only = true, run = function() runs = runs + 1; return "wiped" end }
    local out = H.call(rt, "wipe", { all = true })
    assert.are.equal("denied", out.status)
    assert.are.equal("DENIED", out.error.code)
    assert.are.equal("no-wipe", out.decision.rule)
    assert.are.equal(0, runs)
    assert.are.equal("ok", H.call(rt, "wipe", { all = false }).status)
    assert.are.equal(1, runs)
    local ex = rt:explain("wipe", { all = true })
    assert.are.equal("deny", ex.decision.verdict)
  end)

  it("gets the args a pre-hook rewrote, and a post-hook sees and changes its result", function()
    local rt = H.runtime [[
local tg = require "toolgate"
tg.before_tool("shout", function(call) return tg.args({ text = call.args.text .. "!" }) end)
tg.after_tool("shout", function(call, res) return tg.result({ wrapped = res.result }) end)
]]
    local got
    rt:tool { name = "shout", read_only = true,
      run = function(args) got = args.text; return args.text:upper() end }
    local out = H.call(rt, "shout", { text = "hi" })
    assert.are.equal("ok", out.status)
    assert.are.equal("hi!", got)
    assert.are.same({ wrapped = "HI!" }, out.result)
  end)

  it("validates args against its schema before run", function()
    local rt = H.runtime()
    local runs = 0
    rt:tool { name = "typed", read_only = true,
      schema = { type = "object", required = { "n" }, properties = { n = { type = "integer" } } },
      run = function(args) runs = runs + 1; return args.n * 2 end }
    local out = H.call(rt, "typed", { n = "two" })
    assert.are.equal("error", out.status)
    assert.are.equal("VALIDATE", out.error.phase)
    assert.are.equal("INVALID_ARGS", out.error.code)
    assert.are.equal(0, runs)
    assert.are.equal(4, H.call(rt, "typed", { n = 2 }).result)
  end)

  it("is asked about when not read-only: a reject means run never runs", function()
    local asked
    local answer = "reject"
    local rt = H.runtime(nil, { approve = function(req) asked = req; return answer end })
    local runs = 0
    rt:tool { name = "edit", run = function() runs = runs + 1; return "edited" end }
    local out = H.call(rt, "edit", { file = "a" })
    assert.are.equal("rejected", out.status)
    assert.are.equal("edit", asked.tool)
    assert.are.same({ file = "a" }, asked.args)
    assert.are.equal(0, runs)
    answer = "approve"
    out = H.call(rt, "edit", { file = "a" })
    assert.are.equal("ok", out.status)
    assert.are.equal(1, runs)
  end)

  it("is stopped at its timeout: run sees it (sleep returns false early, cancelled() is true) and its value is kept as the partial result", function()
    local rt = H.runtime()
    local cleaned = false
    rt:tool { name = "slow", read_only = true, timeout_ms = 50,
      run = function(args, ctx)
        local slept = ctx.sleep(60000)
        cleaned = ctx.cancelled()
        return { slept = slept, cancelled = ctx.cancelled() }
      end }
    local out = H.call(rt, "slow", {})
    assert.are.equal("timeout", out.status) -- not the 60 s sleep's end
    assert.are.equal("TIMEOUT", out.error.phase)
    assert.are.same({ slept = false, cancelled = true }, out.result)
    assert.is_true(cleaned)
  end)

  it("is cancelled by handle:cancel(): run sees it; ctx.partial is the partial result when run yields again", function()
    local rt = H.runtime()
    local phase = "start"
    rt:tool { name = "long", read_only = true,
      run = function(args, ctx)
        ctx.partial({ lines = 1 })
        phase = "sleeping"
        assert(ctx.sleep(60000) == false)
        phase = "cleaning"
        assert(ctx.sleep(60000) == false) -- no more waiting once cancelled
        coroutine.yield()                 -- a yield now ends the attempt
        phase = "resumed after the end"
      end }
    local h = assert(rt:call("long", {}))
    run_until(rt, function() return phase == "sleeping" end)
    assert.is_true(h:cancel())
    local out = h:wait()
    assert.are.equal("cancelled", out.status)
    assert.are.equal("CANCEL", out.error.phase)
    assert.are.same({ lines = 1 }, out.result)
    assert.are.equal("cleaning", phase)
    rt:run()
    assert.are.equal("cleaning", phase)
  end)

  it("is retried when it returns nil, message (retryable), not when it says retryable = false", function()
    local rt = H.runtime()
    local n = 0
    rt:tool { name = "flaky", read_only = true, retry = { attempts = 3, initial_ms = 1 },
      run = function(args, ctx)
        n = n + 1
        if ctx.attempt < 3 then return nil, "try again" end
        return { attempt = ctx.attempt }
      end }
    local out = H.call(rt, "flaky", {})
    assert.are.equal("ok", out.status)
    assert.are.equal(3, out.attempts)
    assert.are.same({ attempt = 3 }, out.result)
    assert.are.equal(3, n)
    rt:tool { name = "fatal", read_only = true, retry = { attempts = 3, initial_ms = 1 },
      run = function() return nil, { code = "GONE", message = "it is gone", retryable = false } end }
    out = H.call(rt, "fatal", {})
    assert.are.equal("error", out.status)
    assert.are.equal(1, out.attempts)
    assert.are.equal("GONE", out.error.code)
    assert.are.equal("it is gone", out.error.message)
  end)

  it("retries a timed-out attempt with a fresh deadline", function()
    local rt = H.runtime()
    rt:tool { name = "second_try", read_only = true, timeout_ms = 80,
      retry = { attempts = 2, initial_ms = 1 },
      run = function(args, ctx)
        ctx.sleep(ctx.attempt == 1 and 60000 or 1)
        return { attempt = ctx.attempt }
      end }
    local out = H.call(rt, "second_try", {})
    assert.are.equal("ok", out.status)
    assert.are.same({ attempt = 2 }, out.result)
  end)

  it("whose run raises ends the call EXECUTE TOOL_RAISED with the error text, not retried", function()
    local rt = H.runtime()
    local n = 0
    rt:tool { name = "boom", read_only = true, retry = { attempts = 3, initial_ms = 1 },
      run = function() n = n + 1; error("kaboom") end }
    local out = H.call(rt, "boom", {})
    assert.are.equal("error", out.status)
    assert.are.equal("EXECUTE", out.error.phase)
    assert.are.equal("TOOL_RAISED", out.error.code)
    assert.is_true(H.has(out.error.message, "host_tools_spec.lua"), out.error.message)
    assert.is_true(H.has(out.error.message, "kaboom"), out.error.message)
    assert.is_true(H.has(out.error.message, "'boom'"), out.error.message)
    assert.are.equal(1, n)
    rt:tool { name = "raise_table", read_only = true, run = function() error({}) end }
    out = H.call(rt, "raise_table", {})
    assert.are.equal("TOOL_RAISED", out.error.code)
    assert.is_true(H.has(out.error.message, "table"), out.error.message)
  end)

  it("whose result is not JSON ends EXECUTE BAD_RESULT naming the tool", function()
    local rt = H.runtime()
    rt:tool { name = "leaky", read_only = true, run = function() return { f = print } end }
    local out = H.call(rt, "leaky", {})
    assert.are.equal("error", out.status)
    assert.are.equal("EXECUTE", out.error.phase)
    assert.are.equal("BAD_RESULT", out.error.code)
    assert.is_true(H.has(out.error.message, "'leaky'"), out.error.message)
    assert.is_true(H.has(out.error.message, "$.f"), out.error.message)
    rt:tool { name = "nothing", read_only = true, run = function() end }
    out = H.call(rt, "nothing", {})
    assert.are.equal("ok", out.status)
    assert.are.equal(toolgate.null, out.result)
  end)

  it("reports ctx.progress in progress events", function()
    local rt = H.runtime(nil, { progress_interval_ms = 10 })
    rt:tool { name = "steps", read_only = true, run = function(args, ctx)
      ctx.progress(1, 4, "first")
      ctx.sleep(60)
      ctx.progress("still first")
      ctx.sleep(60)
      return "done"
    end }
    local got = {}
    local out = H.call(rt, "steps", {}, { on_progress = function(ev) got[#got + 1] = ev end })
    assert.are.equal("ok", out.status)
    assert.is_true(#got >= 2)
    assert.are.equal(1, got[1].current)
    assert.are.equal(4, got[1].total)
    assert.are.equal("first", got[1].message)
    assert.are.equal("still first", got[#got].message)
    assert.are.equal(4, got[#got].total)
  end)

  it("waits without blocking the loop: two calls interleave (ctx.sleep and a bare yield)", function()
    local rt = H.runtime()
    local trace = {}
    rt:tool { name = "a", read_only = true, run = function(args, ctx)
      for i = 1, 3 do trace[#trace + 1] = "a" .. i; coroutine.yield() end
      return "a"
    end }
    rt:tool { name = "b", read_only = true, run = function(args, ctx)
      for i = 1, 3 do trace[#trace + 1] = "b" .. i; ctx.sleep(0) end
      return "b"
    end }
    local ha, hb = rt:call("a", {}), rt:call("b", {})
    assert.are.equal("a", ha:wait().result)
    assert.are.equal("b", hb:wait().result)
    assert.are.equal(6, #trace)
    assert.are_not.equal("a2", trace[2]) -- b ran between a's turns
  end)

  it("calls other tools through the chain with ctx.call, nesting at most 8 deep", function()
    local rt = H.runtime [[
local tg = require "toolgate"
tg.tool { name = "echo", read_only = true, run = function(args) return args end }
tg.rule { name = "no-secret", tools = { "echo" }, check = function(call)
  if call.args.secret then return tg.deny("secret") end
end }
tg.rule { name = "nested-seen", tools = { "echo" }, check = function(call)
  if call.args.want_parent and not (call.metadata and call.metadata.parent_call) then
    return tg.deny("no parent")
  end
end }
]]
    rt:tool { name = "outer", read_only = true, run = function(args, ctx)
      local ok = ctx.call("echo", { v = 1, want_parent = true })
      local denied = ctx.call("echo", { secret = true })
      local none, err = ctx.call("no_such_tool", {})
      return { ok = ok.result.v, id = ok.id, denied = denied.status, none = none == nil,
               unknown = err }
    end }
    local out, h = H.call(rt, "outer", {})
    assert.are.equal("ok", out.status, out.error and out.error.message)
    assert.are.equal(1, out.result.ok)
    assert.are.equal(h.id .. ".1", out.result.id)
    assert.are.equal("denied", out.result.denied)
    -- an unknown tool is a call that ends UNKNOWN_TOOL, as for a policy's ctx.call
    assert.is_false(out.result.none)
    local depth = 0
    rt:tool { name = "deeper", read_only = true, run = function(args, ctx)
      depth = depth + 1
      local o, err = ctx.call("deeper", {})
      if not o then return { stopped = err } end
      return o.result
    end }
    out = H.call(rt, "deeper", {})
    assert.are.equal("ok", out.status)
    assert.is_true(H.has(out.result.stopped, "nested deeper than 8"), out.result.stopped)
    assert.are.equal(9, depth)
  end)

  it("cancelling it cancels its ctx.call, whose outcome run then sees", function()
    local rt = H.runtime()
    local inner_phase, outer_saw
    rt:tool { name = "inner", read_only = true, run = function(args, ctx)
      inner_phase = "sleeping"
      ctx.sleep(60000)
      inner_phase = "woke: " .. tostring(ctx.cancelled())
      return "inner"
    end }
    rt:tool { name = "outer", read_only = true, run = function(args, ctx)
      local o = ctx.call("inner", {})
      outer_saw = o.status
      return "outer"
    end }
    local h = assert(rt:call("outer", {}))
    run_until(rt, function() return inner_phase == "sleeping" end)
    h:cancel()
    local out = h:wait()
    assert.are.equal("cancelled", out.status)
    assert.are.equal("woke: true", inner_phase)
    assert.are.equal("cancelled", outer_saw)
  end)

  it("runs commands with ctx.exec as calls of exec, judged by the chain", function()
    local rt = H.runtime(nil, { approve = "deny" })
    rt:tool { name = "sh", read_only = true, run = function(args, ctx)
      local r, err = ctx.exec(args.cmd)
      return { r = r, err = err }
    end }
    local out = H.call(rt, "sh", { cmd = "echo hi" })
    assert.are.equal("ok", out.status)
    assert.is_nil(out.result.r)
    assert.is_true(H.has(out.result.err, "ctx.exec: the command did not run (rejected)"), out.result.err)
    rt:set_approver("allow")
    out = H.call(rt, "sh", { cmd = "echo hi" })
    assert.are.equal("hi\n", out.result.r.stdout)
    assert.are.equal(0, out.result.r.exit_code)
  end)

  it("refuses ctx after run returned, and waiting from a nested coroutine", function()
    local rt = H.runtime()
    local kept
    rt:tool { name = "keep", read_only = true, run = function(args, ctx) kept = ctx; return 1 end }
    H.call(rt, "keep", {})
    local ok, err = pcall(kept.progress, 1)
    assert.is_false(ok)
    assert.is_true(H.has(err, "ctx.progress: this tool attempt has ended"), err)
    rt:tool { name = "nested_co", read_only = true, run = function(args, ctx)
      local co = coroutine.wrap(function() return ctx.sleep(1) end)
      return co()
    end }
    local out = H.call(rt, "nested_co", {})
    assert.are.equal("TOOL_RAISED", out.error.code)
    assert.is_true(H.has(out.error.message, "not from a nested coroutine"), out.error.message)
    -- the loop is not re-entrant: run starts calls, ctx.call waits for them
    rt:tool { name = "sleepy", read_only = true, run = function(args, ctx) ctx.sleep(1) end }
    rt:tool { name = "waits_wrongly", read_only = true, run = function()
      return rt:call("sleepy", {}):wait()
    end }
    out = H.call(rt, "waits_wrongly", {})
    assert.are.equal("TOOL_RAISED", out.error.code)
    assert.is_true(H.has(out.error.message, "cannot be used inside a callback"), out.error.message)
    assert.is_true(H.has(out.error.message, "ctx.call"), out.error.message)
  end)

  it("names its argument errors: bad argument #1 to 'sleep'", function()
    local rt = H.runtime()
    rt:tool { name = "badsleep", read_only = true, run = function(args, ctx)
      return { pcall(ctx.sleep, "soon") }
    end }
    local out = H.call(rt, "badsleep", {})
    assert.is_false(out.result[1])
    assert.is_true(H.has(out.result[2], "bad argument #1 to 'sleep' (number expected, got string)"),
                   out.result[2])
  end)

  it("refuses a name taken (nil, message, EEXIST), a misspelt option, a bad schema, no run", function()
    local rt = H.runtime [[
local tg = require "toolgate"
tg.tool { name = "policy_tool", run = function() return 1 end }
]]
    assert.is_true(rt:tool { name = "mine", run = function() end })
    local ok, err, code = rt:tool { name = "mine", run = function() end }
    assert.is_nil(ok)
    assert.are.equal("EEXIST", code)
    assert.is_true(H.has(err, "'mine' already exists"), err)
    assert.are.equal("EEXIST", select(3, rt:tool { name = "policy_tool", run = print }))
    assert.are.equal("EEXIST", select(3, rt:tool { name = "exec", run = print }))
    local function raises(opts, want)
      local ok2, e = pcall(rt.tool, rt, opts)
      assert.is_false(ok2)
      assert.is_true(H.has(e, want), e)
    end
    raises({ name = "t1", run = print, read_onyl = true }, "unknown option 'read_onyl'")
    raises({ name = "t2", run = print, retry = { attempt = 2 } }, "unknown option 'attempt'")
    raises({ name = "t3", run = print, retry = { attempts = 0 } }, "'attempts' must be a whole number from 1 to 100")
    raises({ name = "t4", run = print, schema = { type = "nope" } }, "rt:tool")
    raises({ name = "t5" }, "'run' must be a function")
    raises({ run = print }, "'name' must be a non-empty string")
    raises({ name = "t6\0x", run = print }, "NUL")
    raises({ name = "t7", run = print, timeout_ms = -1 }, "'timeout_ms'")
    raises({ name = "t8", run = print, schema = "object" }, "'schema' must be a table")
    -- nothing half-registered: the names are free
    for i = 1, 8 do
      assert.is_true(rt:tool { name = "t" .. i, run = print })
    end
  end)

  it("keeps its name across reloads: a policy tool of that name fails to load", function()
    local rt, dir = H.runtime [[
local tg = require "toolgate"
]]
    rt:tool { name = "mine", read_only = true, run = function() return "host" end }
    H.write(dir .. "/20_clash.lua", [[
local tg = require "toolgate"
tg.tool { name = "mine", run = function() return "policy" end }
]])
    local gen, err = rt:reload()
    assert.is_nil(gen)
    assert.is_true(H.has(err, "'mine' already exists"), err)
    assert.are.equal("host", H.call(rt, "mine", {}).result)
  end)

  it("is not resumed while the runtime closes: the call ends, the host's code does not run", function()
    local rt = toolgate.new {}
    local phase = "start"
    rt:tool { name = "long", read_only = true, run = function(args, ctx)
      phase = "sleeping"
      ctx.sleep(60000)
      phase = "resumed"
    end }
    local done = 0
    local h = assert(rt:call("long", {}, { on_done = function() done = done + 1 end }))
    run_until(rt, function() return phase == "sleeping" end)
    rt:close()
    assert.are.equal("sleeping", phase)
    assert.are.equal(0, done)
    assert.is_true(h:done())
    collectgarbage()
    collectgarbage()
  end)

  it("holds nothing after calls that end at once, even when the loop never turns", function()
    local rt = H.runtime()
    rt:tool { name = "quick", read_only = true, run = function(args, ctx) return args.i end }
    rt:tool { name = "waits", read_only = true, run = function(args, ctx) ctx.sleep(0); return args.i end }
    local function lua_kb()
      collectgarbage()
      collectgarbage()
      return collectgarbage("count")
    end
    for i = 1, 200 do assert(rt:call("quick", { i = i }):wait().result == i) end
    local before = lua_kb()
    for i = 1, 20000 do
      local h = rt:call("quick", { i = i })
      assert(h:done() and h:outcome().result == i)
      -- a full cycle now and then: what is measured is what calls keep, not
      -- the high-water mark of tables that grew while the collector lagged
      -- (the weak table naming each attempt's ctx functions keeps its size)
      if i % 1000 == 0 then collectgarbage() end
    end
    for i = 1, 2000 do assert(rt:call("waits", { i = i }):wait().result == i) end
    local grew = lua_kb() - before
    assert.is_true(grew < 512, ("Lua memory grew by %.0f KiB"):format(grew))
  end)

  it("survives runtimes collected with host tools mid-run, 100 times over", function()
    for _ = 1, 100 do
      local rt = toolgate.new {}
      rt:tool { name = "long", read_only = true, run = function(args, ctx) ctx.sleep(60000) end }
      rt:call("long", {})
      rt:run_once()
    end
    collectgarbage()
    collectgarbage()
    local rt = H.runtime()
    rt:tool { name = "t", read_only = true, run = function() return 1 end }
    assert.are.equal(1, H.call(rt, "t", {}).result)
  end)
end)

describe("module conventions", function()
  after_each(H.cleanup)

  it("has _VERSION, the version in CMakeLists.txt's project()", function()
    local cm = assert(H.read("CMakeLists.txt"), "run from the repository root")
    local want = cm:match("project%(toolgate VERSION ([%d%.]+)")
    assert.is_string(want)
    assert.are.equal(want, toolgate._VERSION)
    assert.are.equal(want, toolgate.version)
  end)

  it("closes a runtime held in a <close> variable at the end of its scope (Lua 5.4)", function()
    if not is_54 then
      pending("<close> is Lua 5.4 syntax")
      return
    end
    local chunk = assert(load([[
local toolgate, ran = ...
local kept
do
  local rt <close> = toolgate.new {}
  kept = rt
  rt:tool { name = "t", read_only = true, run = function() ran[1] = true; return 1 end }
  assert(rt:call("t", {}):wait().status == "ok")
end
local ok, err = pcall(kept.generation, kept)
local ok2, err2 = pcall(function()
  local rt2 <close> = toolgate.new {}
  kept = rt2
  error("leaving by error")
end)
local ok3, err3 = pcall(kept.generation, kept)
return ok, err, ok2, err2, ok3, err3
]], "=close_chunk"))
    local ran = {}
    local ok, err, ok2, err2, ok3, err3 = chunk(toolgate, ran)
    assert.is_true(ran[1])
    assert.is_false(ok)
    assert.is_true(H.has(err, "this runtime is closed"), err)
    assert.is_false(ok2)
    assert.is_true(H.has(err2, "leaving by error"), err2)
    assert.is_false(ok3)
    assert.is_true(H.has(err3, "this runtime is closed"), err3)
  end)

  it("names the method in every argument error, also through pcall", function()
    local rt = H.runtime(H.lib.tools)
    local h = assert(rt:call("echo", {}))
    h:wait()
    local rt_methods = { "call", "run", "run_once", "fd", "timeout", "on_event", "off_event",
      "answer", "set_approver", "generation", "reload", "describe", "explain", "listen",
      "on_file_change", "off_file_change", "recent_changes", "close", "tool" }
    for _, m in ipairs(rt_methods) do
      assert.is_function(rt[m], m)
      local ok, err = pcall(rt[m], 42)
      assert.is_false(ok, m)
      assert.is_true(H.has(err, "bad argument #1 to '" .. m .. "' (toolgate.runtime expected, got number)"),
                     m .. ": " .. tostring(err))
    end
    for _, m in ipairs { "cancel", "wait", "done", "outcome" } do
      local ok, err = pcall(h[m], "x")
      assert.is_false(ok, m)
      assert.is_true(H.has(err, "bad argument #1 to '" .. m .. "' (toolgate.call expected, got string)"),
                     m .. ": " .. tostring(err))
    end
    local second = {
      { "call", { n = 1 }, "bad argument #2 to 'call' (string expected, got nil)" },
      { "explain", { {} }, "bad argument #2 to 'explain' (string expected, got table)" },
      { "answer", { "x" }, "bad argument #2 to 'answer' (number expected, got string)" },
      { "off_event", { "x" }, "bad argument #2 to 'off_event' (number expected, got string)" },
      { "off_file_change", { {} }, "bad argument #2 to 'off_file_change' (number expected, got table)" },
      { "on_file_change", { "**", 1 }, "bad argument #3 to 'on_file_change' (function expected, got number)" },
      { "on_event", { {} }, "bad argument #2 to 'on_event' (string expected, got table)" },
      { "recent_changes", { -1 }, "bad argument #2 to 'recent_changes' (a whole number >= 0 expected)" },
      { "reload", { {} }, "bad argument #2 to 'reload' (string expected, got table)" },
      { "listen", { {} }, "bad argument #2 to 'listen' (string expected, got table)" },
      { "set_approver", {}, "bad argument #2 to 'set_approver' (value expected)" },
      { "tool", { "x" }, "bad argument #2 to 'tool' (table expected, got string)" },
    }
    for _, c in ipairs(second) do
      local args = c[2]
      local ok, err = pcall(rt[c[1]], rt, (table.unpack or unpack)(args, 1, args.n or #args))
      assert.is_false(ok, c[1])
      assert.is_true(H.has(err, c[3]), c[1] .. ": " .. tostring(err))
    end
    -- called as a method, self is not counted (as in Lua's own libraries)
    local ok, err = pcall(function() local h2 = rt:call(nil); return h2 end) -- not a tail call
    assert.is_false(ok)
    assert.is_true(H.has(err, "bad argument #1 to 'call' (string expected, got nil)"), err)
    ok, err = pcall(toolgate.new, 42)
    assert.is_false(ok)
    assert.is_true(H.has(err, "toolgate.new: the options must be a table"), err)
  end)

  it("answers recoverable failures with nil, message, code", function()
    local rt = H.runtime(H.lib.tools, { approve = function() end })
    local function nmc(want_code, want_text, ...)
      local v, msg, code = ...
      assert.is_nil(v)
      assert.are.equal(want_code, code, msg)
      assert.is_true(H.has(msg, want_text), msg)
    end
    nmc("UNKNOWN_TOOL", "unknown tool 'nope'", rt:call("nope", {}))
    nmc("UNKNOWN_TOOL", "unknown tool 'nope'", rt:explain("nope", {}))
    nmc("UNKNOWN_TOOL", "unknown tool 'nope'", rt:explain("nope", "{bad json"))
    nmc("EINVAL", "args", rt:explain("echo", "{bad json"))
    nmc("EINVAL", "args", rt:call("echo", { 1, 2 }))
    local h = assert(rt:call("touch", {}, { id = "same" })) -- waits for the approver
    nmc("EEXIST", "already running", rt:call("echo", {}, { id = "same" }))
    h:cancel()
    h:wait()
    nmc("ENOENT", "already ended", h:cancel())
    nmc("ENOENT", "no pending approval", rt:answer(12345, "approve"))
    local dir = H.policy_dir "error('broken policy')"
    nmc("EINVAL", "broken policy", rt:reload(dir))
    nmc("EINVAL", "broken policy", toolgate.new { policies = dir })
    local v, msg, code = rt:listen("/nonexistent-dir/x/y.sock")
    assert.is_nil(v)
    assert.is_string(msg)
    assert.is_truthy(code:match("^E[A-Z]+$"), code)
  end)

  it("refuses a misspelt option to toolgate.new, naming it and the known ones", function()
    local ok, err = pcall(toolgate.new, { polices = "policies" })
    assert.is_false(ok)
    assert.is_true(H.has(err, "toolgate.new: unknown option 'polices'"), err)
    assert.is_true(H.has(err, "policies"), err)
  end)
end)
