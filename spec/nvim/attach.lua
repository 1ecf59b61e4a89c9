-- spec/nvim/attach.lua — toolgate inside a real headless Neovim, attached
-- to the editor's loop with rt:attach(vim.loop, {schedule = vim.schedule}).
-- Run by spec/nvim/run.sh, which reads the log this writes (one line per
-- check: "ok ...", "FAIL ...", then "READY <socket>") and does what only
-- the outside can: `toolgate reload`, measuring the idle CPU, SIGTERM.
--
-- Environment: TG_NVIM_DIR (a scratch folder with policies/ and ws/),
-- TG_NVIM_LOG (the log). package.cpath holds the LuaJIT build's module.
local uv = vim.loop
local dir = assert(os.getenv("TG_NVIM_DIR"), "TG_NVIM_DIR is not set")
local logf = assert(io.open(assert(os.getenv("TG_NVIM_LOG")), "a"))

local function log(line)
  logf:write(line, "\n")
  logf:flush()
end

local function now_ms() return uv.hrtime() / 1e6 end

local failed = false
local function check(ok, what, why)
  if ok then log("ok   " .. what)
  else
    failed = true
    log("FAIL " .. what .. ": " .. tostring(why))
  end
  return ok
end

-- Runs fn(...) and logs a raise as a failure of `what`.
local function guard(what, fn)
  return function(...)
    local ok, err = pcall(fn, ...)
    if not ok then check(false, what, err) end
  end
end

local function write(path, text)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
end

local toolgate = require "toolgate"
local policies, ws = dir .. "/policies", dir .. "/ws"
write(ws .. "/present.txt", "already here\n")

local rt = assert(toolgate.new { policies = policies, workspace = ws, watch = true })
rt:attach(uv, { schedule = vim.schedule })
log("ok   attached to vim.loop")

local loaded = {}
rt:on_event("policy_loaded", function(ev)
  loaded[#loaded + 1] = ev
  log("RELOADED " .. ev.trigger .. " " .. ev.generation)
end)

local steps = {}
local function next_step()
  local step = table.remove(steps, 1)
  if step then vim.schedule(guard("a step", step)) end
end

-- 1. Parallel calls, some of which only wait on timers; an editor timer
-- ticks every 20 ms meanwhile; every on_done writes to the buffer.
steps[#steps + 1] = function()
  local ticks, last, worst = 0, now_ms(), 0
  local tick = uv.new_timer()
  tick:start(20, 20, function()
    local t = now_ms()
    worst = math.max(worst, t - last)
    last, ticks = t, ticks + 1
  end)
  local buf = vim.api.nvim_get_current_buf()
  local results, want, t0 = {}, 0, now_ms()
  local function on_done(o)
    results[#results + 1] = o
    -- vim.api is callable: on_done runs through vim.schedule
    vim.api.nvim_buf_set_lines(buf, -1, -1, false, { o.tool .. " " .. o.status })
    if #results < want then return end
    local took = now_ms() - t0
    tick:stop()
    tick:close()
    local bad = {}
    for _, r in ipairs(results) do
      if r.status ~= "ok" then
        bad[#bad + 1] = r.tool .. ": " .. r.status .. " " .. tostring(r.error and r.error.message)
      end
    end
    check(#bad == 0, "parallel calls (ctx.sleep, exec sleep 0.3, file tools) all ok", table.concat(bad, "; "))
    check(took < 1000, "they ran in parallel", "took " .. took .. " ms")
    check(#vim.api.nvim_buf_get_lines(buf, 0, -1, false) == want + 1,
          "vim.api works from on_done with schedule = vim.schedule",
          vim.inspect(vim.api.nvim_buf_get_lines(buf, 0, -1, false)))
    check(ticks >= 5 and worst < 200, "the editor's 20 ms timer kept ticking on time",
          ticks .. " ticks, worst gap " .. worst .. " ms")
    next_step()
  end
  local function go(tool, args)
    want = want + 1
    assert(rt:call(tool, args, { on_done = on_done }))
  end
  -- one after the other they would take 1.5 s
  go("slow", { ms = 300 })
  go("slow", { ms = 300 })
  go("slow", { ms = 300 })
  go("exec", { command = "sleep 0.3; echo slept" })
  go("exec", { command = "sleep 0.3" })
  go("write_file", { path = "new.txt", content = "written\n" })
  go("read_file", { path = "present.txt" })
end

-- 2. Without schedule, callbacks run in the loop callback, where vim.api
-- raises; on_error is told, and the runtime goes on.
steps[#steps + 1] = function()
  local rt2 = assert(toolgate.new { policies = policies })
  local errors = {}
  rt2:attach(uv, { on_error = function(msg) errors[#errors + 1] = msg end })
  local h = assert(rt2:call("slow", { ms = 10 }, { on_done = function()
    vim.api.nvim_buf_set_lines(0, -1, -1, false, { "from the fast context" })
  end }))
  local t0 = now_ms()
  local wait = uv.new_timer()
  wait:start(20, 20, vim.schedule_wrap(guard("no schedule", function()
    if not h:done() and now_ms() - t0 < 3000 then return end
    wait:stop()
    wait:close()
    check(h:done() and #errors == 1 and errors[1]:find("E5560", 1, true) ~= nil,
          "without schedule, vim.api in on_done fails (E5560) and on_error says so",
          vim.inspect(errors))
    rt2:close()
    next_step()
  end)))
end

-- 3. An approver that uses vim.api, deferred through vim.schedule.
steps[#steps + 1] = function()
  local asked
  rt:set_approver(function(req)
    asked = vim.api.nvim_buf_line_count(0) > 0 and req.prompt
    return "approve"
  end)
  assert(rt:call("guarded", {}, { on_done = function(o)
    check(o.status == "ok" and asked == "may it?",
          "a deferred approver may use vim.api and answer by returning",
          o.status .. " " .. tostring(asked))
    next_step()
  end }))
end

-- 4. A saved policy reloads while the editor idles (watch = true).
steps[#steps + 1] = function()
  local before, t0 = #loaded, now_ms()
  write(policies .. "/20_more.lua", [[
local tg = require "toolgate"
tg.tool { name = "more", read_only = true, run = function() return "more" end }
]])
  local wait = uv.new_timer()
  wait:start(25, 25, vim.schedule_wrap(guard("watch", function()
    if #loaded == before and now_ms() - t0 < 5000 then return end
    wait:stop()
    wait:close()
    local ev = loaded[#loaded]
    if not check(#loaded > before and ev.trigger == "watch" and rt:generation() == 2,
                 "a saved policy reloads while idle", "generation " .. rt:generation()) then
      return next_step()
    end
    assert(rt:call("more", {}, { on_done = function(o)
      check(o.status == "ok" and o.result == "more", "the new generation's tool runs", o.status)
      next_step()
    end }))
  end)))
end

-- 5. Listen for `toolgate reload`, and idle: the rest happens outside.
steps[#steps + 1] = function()
  local sock, err = rt:listen()
  if check(sock ~= nil, "rt:listen()", err) then log("READY " .. sock) end
  if failed then log("DONE with failures") end
end

next_step()
