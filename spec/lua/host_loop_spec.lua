-- Embedding in a host's loop (lua/README.md, "Embedding in a host loop"):
-- the rt:fd() / rt:timeout() / rt:run_once() contract driven by hand from
-- a luv loop, and rt:attach(uv) doing the same. Real timers, processes,
-- files, the folder watch and `toolgate reload` from outside.
local H = require "spec.lua.helpers"

local has_luv, uv = pcall(require, "luv")

local POLICY = [[
local tg = require "toolgate"
tg.tool { name = "slow", read_only = true,
  run = function(args, ctx) ctx.sleep(args.ms or 200); return "slept" end }
-- ends once `of` calls of it have started: together, or never
local met = 0
tg.tool { name = "meet", read_only = true,
  run = function(args, ctx)
    met = met + 1
    while met < args.of do ctx.sleep(5) end
    return "met"
  end }
tg.tool { name = "raises", read_only = true, run = function() error("boom") end }
tg.tool { name = "guarded", run = function() return "ran" end }
tg.rule { name = "ask-guarded", tools = { "guarded" },
  check = function() return tg.ask("may it?") end }
tg.rule { name = "rest", check = function() return tg.allow() end }
]]

local function now_ms() return uv.hrtime() / 1e6 end

-- Turns the luv loop until cond() holds or ms have passed. uv.run("once")
-- would not do: after running due timers it blocks in the poll. A prepare
-- handle stops the loop instead, before it would block.
local function run_until(cond, ms)
  local prep, guard = uv.new_prepare(), uv.new_timer()
  prep:start(function() if cond() then uv.stop() end end)
  guard:start(ms, 0, function() uv.stop() end)
  uv.run()
  prep:close()
  guard:close()
  uv.run("nowait") -- their close callbacks
  return cond()
end

-- Turns the luv loop for ms, whatever happens.
local function idle(ms)
  run_until(function() return false end, ms)
end

-- The contract of lua/README.md, by hand: a poll on rt:fd() and one timer
-- re-armed from rt:timeout() after rt:run_once() and after every other
-- call into the runtime (d.arm).
local drivers = {}

local function drive(rt)
  local d = { turns = 0 }
  drivers[#drivers + 1] = d
  local poll = uv.new_poll(rt:fd())
  local timer = uv.new_timer()
  function d.arm()
    local ms = rt:timeout()
    if ms < 0 then timer:stop() else timer:start(ms, 0, d.turn) end
  end
  function d.turn()
    d.turns = d.turns + 1
    rt:run_once()
    d.arm()
  end
  function d.stop()
    if poll:is_closing() then return end
    poll:close()
    timer:close()
    uv.run("nowait")
  end
  poll:start("r", d.turn)
  d.arm()
  return d
end

local function toolgate_bin()
  local dir = os.getenv("TOOLGATE_BUILD_DIR")
  if dir and dir:sub(1, 1) ~= "/" then dir = os.getenv("PWD") .. "/" .. dir end
  return dir and dir .. "/toolgate"
end

-- Runs `toolgate ARGS...` without blocking the luv loop; returns a table
-- filled with code and out once it has exited.
local function spawn_toolgate(args)
  local res, out, open = {}, {}, 2
  local pipes = { uv.new_pipe(false), uv.new_pipe(false) }
  local h, err
  h, err = uv.spawn(toolgate_bin(), { args = args, stdio = { nil, pipes[1], pipes[2] } },
    function(code)
      res.code = code
      h:close()
    end)
  assert(h, "cannot start the toolgate command: " .. tostring(err))
  for _, p in ipairs(pipes) do
    p:read_start(function(_, data)
      if data then return table.insert(out, data) end
      p:close()
      open = open - 1
      if open == 0 then res.out = table.concat(out) end
    end)
  end
  return res
end

local function calls_in_parallel(rt, results)
  local function done(o) results[#results + 1] = o end
  local started = {}
  local function go(tool, args)
    started[#started + 1] = assert(rt:call(tool, args, { on_done = done }))
  end
  -- each ends only once the others of its kind are running: one after the
  -- other they would never end
  go("meet", { of = 3 })
  go("meet", { of = 3 })
  go("meet", { of = 3 })
  local here = H.tmpdir()
  go("exec", { command = ("touch %s/a; until [ -e %s/b ]; do sleep 0.01; done; echo met"):format(here, here) })
  go("exec", { command = ("touch %s/b; until [ -e %s/a ]; do sleep 0.01; done"):format(here, here) })
  go("write_file", { path = "a.txt", content = "hello\n" })
  return #started
end

local function all_ok(results)
  for _, o in ipairs(results) do
    if o.status ~= "ok" then
      return false, o.tool .. ": " .. o.status .. " " .. tostring(o.error and o.error.message)
    end
  end
  return true
end

describe("embedding in a host loop", function()
  if not has_luv then
    it("needs luv (Debian: lua-luv)", function() pending("luv is not installed") end)
    return
  end

  after_each(function()
    for i = #drivers, 1, -1 do
      drivers[i].stop()
      drivers[i] = nil
    end
    H.cleanup()
    uv.run("nowait")
  end)

  describe("the contract: rt:fd(), rt:timeout(), rt:run_once()", function()
    it("rt:timeout() is -1 on an idle runtime, also with only the watch and the control socket left", function()
      local rt = H.runtime(POLICY, { watch = true })
      assert(rt:listen())
      assert.is_false(rt:run_once()) -- idle: no call is pending
      assert.are.equal(-1, rt:timeout())
      assert.is_true(rt:fd() >= 0)
    end)

    it("rt:timeout() is the real time to the next timer, and run_once() says calls are pending", function()
      local rt = H.runtime(POLICY)
      local h = assert(rt:call("slow", { ms = 300 }))
      assert.is_true(rt:run_once())
      local ms = rt:timeout()
      -- the 300 ms sleep's timer, however long the machine took to get
      -- here: not -1 (idle), at most what the timer was (0 once it is due)
      assert.is_true(ms >= 0 and ms <= 300, "timeout " .. ms)
      local out = h:wait()
      assert.are.equal("ok", out.status)
      assert.is_false(rt:run_once())
      assert.are.equal(-1, rt:timeout())
    end)

    it("finishes calls that wait on timers, processes and files, without spinning", function()
      local rt = H.runtime(POLICY, { workspace = H.tmpdir() })
      local d = drive(rt)
      local results = {}
      local n = calls_in_parallel(rt, results)
      d.arm() -- the calls started timers and fds
      assert.is_true(run_until(function() return #results == n end, 60000),
                     #results .. " of " .. n .. " calls ended: not in parallel")
      assert(all_ok(results))
      assert.is_true(d.turns < 200, d.turns .. " turns: the host spins")
      d.stop()
    end)

    it("sees a process's exit at once: fds opened by a call join the backend fd before the host sleeps", function()
      -- the first process of a loop opens libuv's signal pipe, where its
      -- exit is told; epoll learns of a new fd only at the next poll
      -- (missed, it would be seen at the next progress tick: 10 minutes)
      local rt = H.runtime(POLICY, { progress_interval_ms = 600000 })
      local d = drive(rt)
      local h = assert(rt:call("exec", { command = "true" }))
      d.arm()
      assert.is_true(run_until(function() return h:done() end, 60000),
                     "the exit was not seen")
      assert.are.equal("ok", h:outcome().status)
    end)

    it("reloads a saved policy while idle, and stays quiet otherwise", function()
      local rt, dir = H.runtime(POLICY, { watch = true })
      local d = drive(rt)
      idle(100)
      local before = d.turns
      idle(300)
      assert.is_true(d.turns - before <= 2, (d.turns - before) .. " turns while idle")
      H.write(dir .. "/20_more.lua", 'require("toolgate").tool { name = "more", read_only = true, run = function() return 1 end }')
      assert.is_true(run_until(function() return rt:generation() == 2 end, 3000),
                     "generation " .. rt:generation())
      d.stop()
    end)

    it("answers toolgate reload from outside while idle", function()
      if not toolgate_bin() then return pending("TOOLGATE_BUILD_DIR is not set") end
      local rt = H.runtime(POLICY)
      local sock = assert(rt:listen())
      local d = drive(rt)
      d.arm() -- rt:listen called into the runtime
      local res = spawn_toolgate({ "reload", "--socket", sock })
      assert.is_true(run_until(function() return res.code ~= nil and res.out ~= nil end, 8000))
      assert.are.equal(0, res.code, res.out)
      assert.is_true(H.has(res.out, "reloaded: generation 2"), res.out)
      assert.are.equal(2, rt:generation())
      d.stop()
    end)
  end)

  describe("toolgate reload against an instance that does not turn its loop", function()
    local function reload(sock, extra)
      local t0 = now_ms()
      local p = io.popen(toolgate_bin() .. " reload --socket '" .. sock .. "' " ..
                         (extra or "") .. " 2>&1; echo \"rc=$?\"")
      local out = p:read("*a")
      p:close()
      return out, now_ms() - t0
    end

    it("gives up after --timeout-ms with a message that says why", function()
      if not toolgate_bin() then return pending("TOOLGATE_BUILD_DIR is not set") end
      local rt = H.runtime(POLICY)
      local sock = assert(rt:listen())
      -- this host is blocked in io.popen: it does not turn the loop
      local out, took = reload(sock, "--timeout-ms 300")
      assert.is_true(H.has(out, "rc=1"), out)
      assert.is_true(H.has(out, "no reply from '" .. sock .. "' within 300 ms"), out)
      assert.is_true(H.has(out, "does not turn its loop"), out)
      assert.is_true(took >= 300, "took " .. took .. " ms")
      assert.are.equal(1, rt:generation())
    end)

    it("gives up by default within seconds, not never", function()
      if not toolgate_bin() then return pending("TOOLGATE_BUILD_DIR is not set") end
      local rt = H.runtime(POLICY)
      local sock = assert(rt:listen())
      local out, took = reload(sock)
      assert.is_true(H.has(out, "rc=1"), out)
      assert.is_true(H.has(out, "within 5000 ms"), out)
      assert.is_true(took >= 4500, "took " .. took .. " ms")
    end)
  end)

  describe("rt:attach(uv)", function()
    it("finishes parallel calls under uv.run(), keeps the host's timer on time, and lets uv.run() return", function()
      local ws = H.tmpdir()
      local rt = H.runtime(POLICY, { workspace = ws, watch = true })
      assert.are.equal(rt, rt:attach(uv))
      local results = {}
      local n = calls_in_parallel(rt, results)
      -- one more call ends only after the host's timer has fired three
      -- times while it runs (with a runtime that blocked the host's loop it
      -- would end failed, after 120 s)
      assert(rt:call("exec", { command = "timeout 120 sh -c 'until [ -e " .. ws .. "/ticked ]; do sleep 0.01; done'" },
                     { on_done = function(o) results[#results + 1] = o end }))
      n = n + 1
      local ticks = 0
      local tick = uv.new_timer()
      tick:start(10, 10, function()
        ticks = ticks + 1
        if ticks == 3 then H.write(ws .. "/ticked", "") end
        if #results == n then tick:stop() end
      end)
      tick:unref() -- only the runtime's pending calls keep uv.run() going
      uv.run() -- returns once the calls have ended: the runtime is idle
      tick:close()
      assert.are.equal(n, #results) -- in parallel, or they would not end
      assert(all_ok(results))
    end)

    it("costs about no CPU while idle", function()
      local rt = H.runtime(POLICY, { watch = true })
      assert(rt:listen())
      rt:attach(uv)
      idle(100)
      local c0 = os.clock()
      idle(1000)
      local cpu = os.clock() - c0
      assert.is_true(cpu < 0.1, cpu .. " s of CPU over an idle second")
    end)

    it("reloads a saved policy and answers toolgate reload while idle", function()
      if not toolgate_bin() then return pending("TOOLGATE_BUILD_DIR is not set") end
      local rt, dir = H.runtime(POLICY, { watch = true })
      local sock = assert(rt:listen())
      rt:attach(uv)
      local loaded = {}
      rt:on_event("policy_loaded", function(ev) loaded[#loaded + 1] = ev.trigger end)
      idle(100)
      H.write(dir .. "/20_more.lua", "-- saved\n")
      assert.is_true(run_until(function() return rt:generation() == 2 end, 3000))
      local res = spawn_toolgate({ "reload", "--socket", sock, "--timeout-ms", "3000" })
      assert.is_true(run_until(function() return res.code ~= nil and res.out ~= nil end, 8000))
      assert.are.equal(0, res.code, res.out)
      assert.is_true(H.has(res.out, "reloaded: generation 3"), res.out)
      assert.are.same({ "watch", "control" }, loaded)
    end)

    it("with schedule, hands every callback to it, in order, outside the loop's callbacks", function()
      local rt = H.runtime(POLICY, { progress_interval_ms = 50 })
      local queue, flushing, seen = {}, false, {}
      rt:attach(uv, { schedule = function(fn) queue[#queue + 1] = fn end })
      local function note(what)
        return function(x)
          seen[#seen + 1] = what .. ":" .. tostring(flushing)
          return x
        end
      end
      rt:on_event("call_end", note("event"))
      local h = assert(rt:call("exec", { command = "echo out; sleep 0.2" },
                               { on_done = note("done"), on_progress = note("progress") }))
      assert.is_true(run_until(function() return h:done() end, 5000))
      assert.are.same({}, seen) -- nothing ran inside the loop
      flushing = true
      for _, fn in ipairs(queue) do fn() end
      assert.is_true(#seen >= 3, table.concat(seen, " "))
      assert.are.equal("progress:true", seen[1])
      assert.are.equal("event:true", seen[#seen - 1])
      assert.are.equal("done:true", seen[#seen])
    end)

    it("with schedule, an approver answers by returning, and one that fails rejects the call and raises in the host", function()
      local rt = H.runtime(POLICY)
      local queue = {}
      local function flush()
        local errs = {}
        while #queue > 0 do
          local fn = table.remove(queue, 1)
          local ok, err = pcall(fn)
          if not ok then errs[#errs + 1] = err end
        end
        return errs
      end
      rt:attach(uv, { schedule = function(fn) queue[#queue + 1] = fn end })
      local answer = "approve"
      rt:set_approver(function(req)
        assert.are.equal("may it?", req.prompt)
        if answer == "raise" then error("no approver today") end
        return answer
      end)
      -- approve: the deferred approver's answer reaches the call
      local h = assert(rt:call("guarded", {}))
      assert.is_true(run_until(function() return #queue > 0 end, 3000))
      assert.are.same({}, flush())
      assert.is_true(run_until(function() return h:done() end, 3000))
      assert.are.equal("ok", h:outcome().status)
      -- raise: rejected at once, the error raised where the host runs it
      answer = "raise"
      h = assert(rt:call("guarded", {}))
      assert.is_true(run_until(function() return #queue > 0 end, 3000))
      local errs = flush()
      assert.are.equal(1, #errs)
      assert.is_true(H.has(errs[1], "toolgate: error in approver callback:"), errs[1])
      assert.is_true(H.has(errs[1], "no approver today"), errs[1])
      assert.is_true(run_until(function() return h:done() end, 3000))
      assert.are.equal("rejected", h:outcome().status)
      assert.is_true(H.has(h:outcome().error.message, "the approver failed"))
      -- a bad answer: rejected, and said so
      answer = "perhaps"
      h = assert(rt:call("guarded", {}))
      assert.is_true(run_until(function() return #queue > 0 end, 3000))
      errs = flush()
      assert.is_true(H.has(errs[1], "the approver returned a bad answer"), errs[1])
      assert.is_true(run_until(function() return h:done() end, 3000))
      assert.are.equal("rejected", h:outcome().status)
    end)

    it("without schedule, a callback's error goes to on_error and the loop goes on", function()
      local rt = H.runtime(POLICY)
      local errors = {}
      rt:attach(uv, { on_error = function(msg) errors[#errors + 1] = msg end })
      local first = assert(rt:call("slow", { ms = 20 }, { on_done = function() error("bad host code") end }))
      local second = assert(rt:call("slow", { ms = 60 }))
      assert.is_true(run_until(function() return first:done() and second:done() end, 3000))
      assert.are.equal("ok", second:outcome().status)
      assert.are.equal(1, #errors)
      assert.is_true(H.has(errors[1], "toolgate: error in on_done callback:"), errors[1])
      assert.is_true(H.has(errors[1], "bad host code"), errors[1])
    end)

    it("detaches: the host's loop no longer turns the runtime, handle:wait() still does, and it attaches again", function()
      local rt = H.runtime(POLICY)
      rt:attach(uv)
      rt:detach()
      local h = assert(rt:call("slow", { ms = 50 }))
      idle(150)
      assert.is_false(h:done())
      assert.are.equal("ok", h:wait().status)
      rt:attach(uv)
      h = assert(rt:call("slow", { ms = 50 }))
      assert.is_true(run_until(function() return h:done() end, 3000))
      rt:detach()
      rt:detach() -- twice is fine
    end)

    it("closes its luv handles when the runtime is closed", function()
      local rt = H.runtime(POLICY)
      rt:attach(uv)
      local h = assert(rt:call("slow", { ms = 600000 }))
      rt:close()
      -- nothing of the runtime is left on the host's loop: its handles are
      -- closed in the next turn (a timer left would hold uv.run() 10 min)
      uv.run("nowait")
      assert.is_false(uv.loop_alive())
      uv.run()
      assert.is_nil(h:outcome()) -- cancelled unseen, as rt:close() says
    end)

    it("refuses what is not luv, unknown options, bad callbacks and a second attach", function()
      local rt = H.runtime(POLICY)
      assert.has_error(function() rt:attach() end,
        'rt:attach: give the luv module (vim.loop in Neovim, require "luv"), not no value')
      assert.has_error(function() rt:attach({}) end,
        'rt:attach: give the luv module (vim.loop in Neovim, require "luv"): this one has no new_poll or new_timer')
      assert.has_error(function() rt:attach(uv, { shedule = print }) end,
        "rt:attach: unknown option 'shedule' (known: schedule, on_error)")
      assert.has_error(function() rt:attach(uv, { schedule = true }) end,
        "rt:attach: 'schedule' must be a function (got boolean)")
      rt:attach(uv)
      assert.has_error(function() rt:attach(uv) end,
        "rt:attach: already attached; rt:detach() first")
    end)
  end)
end)
