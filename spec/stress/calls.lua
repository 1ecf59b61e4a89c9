-- spec/stress/calls.lua SEED ITERS EPISODE_LEN (run through spec/stress/run.sh)
-- Randomized lifetime/race stress of the toolgate Lua host API.
local toolgate = require "toolgate"
local SEED = tonumber(arg[1]) or os.time()
local ITERS = tonumber(arg[2]) or 3000
local EPLEN = tonumber(arg[3]) or 150
local VERBOSE = os.getenv("VERBOSE")
math.randomseed(SEED)
print("seed", SEED, "iters", ITERS)
io.stdout:setvbuf("line")

local TAG = string.format("%d%06d", 900 + (SEED % 99), math.random(0, 999999))
local LONG = "999." .. TAG        -- sleep argument that marks our processes
local SHORT = "0.0" .. TAG        -- short sleep (~0.09 s), also marked

local base = (os.getenv("STRESS_DIR") or os.getenv("TMPDIR") or "/tmp") .. "/toolgate-stress/" .. SEED
os.execute("rm -rf " .. base .. " && mkdir -p " .. base .. "/pol " .. base .. "/ws")
local POL, WS = base .. "/pol", base .. "/ws"

local function write(path, text) local f = assert(io.open(path, "wb")); f:write(text); f:close() end

local GOOD = [==[
local tg = require "toolgate"
local n = 0
tg.rule { name = "r-stress", priority = 5, fail = "closed", check = function(call)
  local a = call.args or {}
  if a.rule_loop then while true do end end
  if a.rule_raise then error("rule boom") end
  if a.rule_alloc then local t = {} for i = 1, 1e7 do t[i] = string.rep("y", 64) .. i end end
  if a.deny then return tg.deny("no") end
  if a.ask or call.tool == "asky" then return tg.ask("please") end
  if call.tool == "exec" and type(a.command) == "string" and a.command:find("#ask", 1, true) then return tg.ask("exec?") end
  return tg.allow()
end }
tg.rule { name = "r-open", priority = 4, fail = "open", check = function(call)
  if (call.args or {}).open_raise then error("open boom") end
end }
tg.before_tool("*", function(call)
  local a = call.args or {}
  if a.hook_abort then return tg.abort("hook abort") end
  if a.hook_loop then while true do end end
  if a.hook_result then return tg.result({short = true}) end
  if a.hook_rewrite then call.args.hook_rewrite = nil; call.args.rewritten = true end
end)
tg.after_tool("*", function(call, res)
  local a = call.args or {}
  if a.post_loop then while true do end end
  if a.post_raise then error("post boom") end
end)
tg.tool { name = "slp", read_only = true, run = function(a, ctx)
  local k = a.n or 3
  for i = 1, k do ctx.progress(i, k, "s" .. i); ctx.partial({ i = i }); ctx.sleep(a.ms or 1) end
  return { ok = true, cancelled = ctx.cancelled() }
end }
tg.tool { name = "lexec", read_only = true, run = function(a, ctx)
  local r, e = ctx.exec(a.t and { command = a.cmd, timeout_ms = a.t } or a.cmd)
  if not r then return nil, e end
  return { code = r.exit_code, sig = r.signal }
end }
tg.tool { name = "caller", read_only = true, run = function(a, ctx)
  local o, e = ctx.call(a.tool, a.args or {})
  if not o then return nil, e end
  return { st = o.status }
end }
tg.tool { name = "rec", read_only = true, run = function(a, ctx)
  local d = a.n or 0
  if d <= 0 then ctx.sleep(a.ms or 1); return { d = 0 } end
  local o, e = ctx.call("rec", { n = d - 1, ms = a.ms })
  if a.ms then ctx.sleep(a.ms) end
  return { d = d, st = o and o.status, e = e }
end }
tg.tool { name = "multi", read_only = true, run = function(a, ctx)
  local out = {}
  for i, sub in ipairs(a.calls or {}) do
    local o, e = ctx.call(sub.tool, sub.args or {})
    out[i] = o and o.status or e
  end
  return out
end }
tg.tool { name = "raise", read_only = true, run = function(a, ctx)
  if a.ms then ctx.sleep(a.ms) end
  error("tool boom")
end }
tg.tool { name = "loop", read_only = true, run = function(a, ctx)
  if a.ms then ctx.sleep(a.ms) end
  while true do end
end }
tg.tool { name = "alloc", read_only = true, run = function(a, ctx)
  if a.ms then ctx.sleep(a.ms) end
  local t = {}
  for i = 1, 1e7 do t[i] = string.rep("x", 100000) .. i end
  return #t
end }
tg.tool { name = "tmo", read_only = true, timeout_ms = 5, run = function(a, ctx)
  ctx.sleep(a.ms or 50); return 1
end }
tg.tool { name = "tmoexec", read_only = true, timeout_ms = 20, run = function(a, ctx)
  local r, e = ctx.exec(a.cmd); return r and r.exit_code or e
end }
tg.tool { name = "retr", read_only = true, retry = { attempts = 3, initial_ms = 1 },
  run = function(a, ctx)
    if a.ms then ctx.sleep(a.ms) end
    if a.exec then ctx.exec(a.exec) end
    return nil, "fail"
  end }
tg.tool { name = "retr_slow", read_only = true, retry = { attempts = 3, initial_ms = 20,
  retryable = function(err) if err.message and err.message:find("loop") then while true do end end return true end },
  run = function(a, ctx) return nil, a.msg or "fail" end }
tg.tool { name = "asky", run = function(a, ctx) ctx.sleep(a.ms or 1); return 1 end }
tg.tool { name = "big", read_only = true, max_result_bytes = 100, run = function(a, ctx)
  return string.rep("z", 1000)
end }
tg.on_event("call_end", function(ev) n = n + 1 end)
tg.on_event(function(ev)
  if ev.type == "progress" and n % 97 == 3 then error("handler boom") end
end)
tg.on_file_change("**", function(c) n = n + 1; if n % 7 == 0 then error("fc boom") end end)
]==]

local BROKEN = { "local tg = require 'toolgate'\n tg.rule { name = 1 }\n",
  "this is not lua",
  "error('load boom')",
  "while true do end",
  "local t = {} for i = 1, 1e8 do t[i] = string.rep('q', 100) .. i end" }

local function set_policies(good, which)
  if good then write(POL .. "/20_main.lua", GOOD); os.remove(POL .. "/30_broken.lua")
  else write(POL .. "/30_broken.lua", BROKEN[which or math.random(#BROKEN)]) end
end
set_policies(true)

AVOID_KNOWN = os.getenv("AVOID_KNOWN")
local VALID = { ok = true, error = true, denied = true, rejected = true, cancelled = true, timeout = true }

local stats = { started = 0, done = 0, closed_eps = 0, run_eps = 0, reload_ok = 0, reload_bad = 0,
  cancel_true = 0, cancel_nil = 0, answered = 0, answer_nil = 0, status = {}, failures = 0,
  callback_cancels = 0, start_fail = 0, gc = 0 }
local failures = {}
local function fail(msg)
  stats.failures = stats.failures + 1
  if #failures < 50 then failures[#failures + 1] = msg end
  print("FAIL", msg)
end

local function rnd(t) return t[math.random(#t)] end
local function chance(p) return math.random() < p end

-- ---------------------------------------------------------------- call kinds
local CUR_TAGS = nil   -- tags used by the call being generated
local tagn = 0
local function newtag()
  tagn = tagn + 1
  local t = TAG .. string.format("%06d", tagn)
  if CUR_TAGS then CUR_TAGS[#CUR_TAGS + 1] = t end
  return t
end
local function exec_cmd()
  local r = math.random(9)
  local LONG, SHORT = "999." .. newtag(), "0.0" .. newtag()
  if r == 1 then return "sleep " .. LONG end
  if r == 2 then return "sleep " .. SHORT end
  if r == 3 then return "sleep " .. LONG .. " & echo hi" end
  if r == 4 then return "echo out; sleep " .. SHORT .. "; echo more 1>&2" end
  if r == 5 then return "exit 3" end
  if r == 6 then return "trap '' TERM; sleep " .. LONG end
  if r == 7 then return "(trap '' TERM; sleep " .. LONG .. ") & echo bg" end
  if r == 8 then return "trap '' TERM; sleep " .. SHORT .. " & sleep " .. LONG end
  return "yes | head -c 100000"
end
local kinds = {}
kinds.slp = function() return "slp", { n = math.random(0, 5), ms = math.random(0, 20) } end
kinds.exec = function()
  local a = { command = exec_cmd(), timeout_ms = math.random(1, 300) }
  if chance(0.2) then a.command = a.command .. " #ask" end
  if chance(0.1) then a.stdin = string.rep("s", math.random(0, 100000)) end
  return "exec", a
end
kinds.lexec = function()
  local a = { cmd = exec_cmd() }
  a.t = math.random(1, 300)
  if chance(0.1) then a.t = nil; a.cmd = "sleep 0.0" .. newtag() end
  return "lexec", a
end
kinds.caller = function()
  local t, a = rnd { kinds.slp, kinds.exec, kinds.lexec, kinds.raise, kinds.tmo, kinds.retr, kinds.asky, kinds.loop }()
  return "caller", { tool = t, args = a }
end
kinds.rec = function() return "rec", { n = math.random(0, 10), ms = chance(0.5) and math.random(0, 5) or nil } end
kinds.multi = function()
  local calls = {}
  for i = 1, math.random(1, 4) do
    local t, a = rnd { kinds.slp, kinds.lexec, kinds.rec, kinds.raise, kinds.retr, kinds.asky, kinds.caller }()
    calls[i] = { tool = t, args = a }
  end
  return "multi", { calls = calls }
end
kinds.raise = function() return "raise", { ms = chance(0.5) and math.random(0, 5) or nil } end
kinds.loop = function() return "loop", { ms = chance(0.5) and math.random(0, 5) or nil } end
kinds.alloc = function() return "alloc", { ms = chance(0.5) and math.random(0, 5) or nil } end
kinds.tmo = function() return "tmo", { ms = math.random(0, 30) } end
kinds.tmoexec = function() return "tmoexec", { cmd = exec_cmd() } end
kinds.retr = function()
  local a = { ms = chance(0.5) and math.random(0, 5) or nil }
  if chance(0.2) then a.exec = "sleep 0.0" .. newtag() end
  return "retr", a
end
kinds.retr_slow = function() return "retr_slow", { msg = chance(0.2) and "loop" or nil } end
kinds.asky = function() return "asky", { ms = math.random(0, 10) } end
kinds.big = function() return "big", {} end
kinds.rulestuff = function()
  local t, a = rnd { kinds.slp, kinds.raise, kinds.asky, kinds.big }()
  local k = rnd { "rule_loop", "rule_raise", "rule_alloc", "deny", "ask", "open_raise", "hook_abort",
                  "hook_loop", "hook_result", "hook_rewrite", "post_loop", "post_raise" }
  a[k] = true
  return t, a
end
kinds.write = function()
  local p = "d" .. math.random(3) .. "/f" .. math.random(5) .. ".txt"
  return "write_file", { path = p, content = string.rep(tostring(math.random(9)), math.random(0, 3000)), create_dirs = true }
end
kinds.patch = function()
  local p = "p" .. math.random(3) .. ".txt"
  local r = math.random(3)
  if r == 1 then
    return "apply_patch", { patch = "--- /dev/null\n+++ b/" .. p .. "\n@@ -0,0 +1,2 @@\n+a\n+b\n" }
  elseif r == 2 then
    return "apply_patch", { patch = "--- a/" .. p .. "\n+++ b/" .. p .. "\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n" }
  else
    return "apply_patch", { patch = "--- a/" .. p .. "\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-a\n-c\n" }
  end
end
kinds.read = function() return rnd { "read_file", "list_dir" }, { path = chance(0.5) and "." or "d1/f1.txt" } end
kinds.unknown = function() return "no_such", {} end
kinds.badargs = function() return "exec", { command = 5 } end

local kindnames = {}
for k in pairs(kinds) do kindnames[#kindnames + 1] = k end
table.sort(kindnames)

-- ---------------------------------------------------------------- episode
local function scan_procs()
  local found = {}
  local p = io.popen("grep -l -a -F '" .. TAG .. "' /proc/[0-9]*/cmdline 2>/dev/null")
  for line in p:lines() do
    local pid = line:match("/proc/(%d+)/")
    local f = io.open("/proc/" .. pid .. "/cmdline", "rb")
    if f then
      local c = f:read("a") or ""; f:close()
      c = c:gsub("%z", " ")
      if c:find("sleep", 1, true) and not c:find("grep", 1, true) then
        -- ignore zombies? report state
        local s = io.open("/proc/" .. pid .. "/stat"); local st = s and s:read("l") or ""; if s then s:close() end
        found[#found + 1] = pid .. " " .. c .. " [" .. (st:match("%) (%a)") or "?") .. "]"
      end
    end
  end
  p:close()
  return found
end

PROC_CHECK = tonumber(os.getenv("PROC_CHECK") or "0.3")
function procs_with(tags)
  local pat = {}
  for _, t in ipairs(tags) do pat[#pat + 1] = "-e '" .. t .. "'" end
  local found = {}
  local p = io.popen("grep -l -a -F " .. table.concat(pat, " ") .. " /proc/[0-9]*/cmdline 2>/dev/null")
  for line in p:lines() do
    local pid = line:match("/proc/(%d+)/")
    local f = io.open("/proc/" .. pid .. "/cmdline", "rb")
    if f then
      local c = (f:read("a") or ""):gsub("%z", " "); f:close()
      if c:find("sleep", 1, true) and not c:find("grep", 1, true) then
        local s = io.open("/proc/" .. pid .. "/stat"); local st = s and s:read("l") or ""; if s then s:close() end
        found[#found + 1] = pid .. " " .. c .. " [" .. (st:match("%) (%a)") or "?") .. "]"
      end
    end
  end
  p:close()
  return found
end
local function wait_no_procs(where)
  for _ = 1, 60 do
    local f = scan_procs()
    if #f == 0 then return end
    os.execute("sleep 0.05")
  end
  local f = scan_procs()
  if #f > 0 then fail(where .. ": processes survive: " .. table.concat(f, "; ")) end
  os.execute("pkill -KILL -f '" .. TAG .. "' 2>/dev/null")
end

local ep = 0
local function episode(iters_left)
  ep = ep + 1
  local trusted = chance(0.5)
  local approve_mode = rnd { "fn", "allow", "fn", "none" }
  local calls = {}     -- id -> {h, done=count, status, kind, cancelled_ok}
  local live = {}      -- list of ids
  local pending = {}   -- approval ids not yet answered
  local rt
  local cfg = {
    policies = POL, workspace = WS, default_verdict = rnd { "ask", "allow", "deny" },
    timeout_ms = rnd { 2000, 300, 50 }, approval_timeout_ms = rnd { 50, 200, 1000 },
    progress_interval_ms = rnd { 1, 5, 50 }, seed = SEED, kill_grace_ms = rnd { 0, 20, 200 },
    trusted_policies = trusted, policy_time_limit_ms = rnd { 20, 100 },
    policy_memory_cap = rnd { 2 * 1048576, 4 * 1048576, 16 * 1048576 },
    exec_output_cap = rnd { 64, 1024, 65536 },
  }
  if approve_mode == "allow" then cfg.approve = "allow" end
  local err
  rt, err = toolgate.new(cfg)
  if not rt then
    -- memory cap too small to load? try bigger
    cfg.policy_memory_cap = 64 * 1048576
    rt, err = toolgate.new(cfg)
    if not rt then fail("toolgate.new: " .. tostring(err)); return 0 end
  end
  if VERBOSE then print("episode", ep, "trusted", trusted, "approve", approve_mode) end

  local function random_live()
    if #live == 0 then return nil end
    local id = live[math.random(#live)]
    return calls[id]
  end
  local function do_cancel(c, where)
    if not c or not c.h then return end
    local ok, r, m = pcall(c.h.cancel, c.h)
    if not ok then fail(where .. ": cancel raised: " .. tostring(r)); return end
    if r then stats.cancel_true = stats.cancel_true + 1; c.cancel_ok = true
    else stats.cancel_nil = stats.cancel_nil + 1 end
  end

  if approve_mode == "fn" then
    rt:set_approver(function(req)
      if chance(0.15) then
        local c = calls[req.call_id]
        if c then do_cancel(c, "approver"); stats.callback_cancels = stats.callback_cancels + 1 end
      end
      local r = math.random(5)
      if r == 1 then return "approve" end
      if r == 2 then return "always", { scope = rnd { "tool", "args" } } end
      if r == 3 then return "reject", "nope" end
      pending[#pending + 1] = req.approval_id
      return nil
    end)
  end

  rt:on_file_change(rnd { "**", "d1/**", "*.txt" }, function(ch)
    if not ch.path or not ch.type then fail("file change without path/type") end
    if chance(0.05) then local c = random_live(); if c then do_cancel(c, "on_file_change") end end
  end)
  local ev_sub = rt:on_event(function(ev)
    if ev.seq == nil then fail("event without seq") end
    if chance(0.02) and not (AVOID_KNOWN and ev.type == "approval") then
      local c = random_live()
      if c then do_cancel(c, "on_event " .. ev.type); stats.callback_cancels = stats.callback_cancels + 1 end
    end
    if ev.type == "call_end" and ev.call_id and calls[ev.call_id] and chance(0.05) then
      do_cancel(calls[ev.call_id], "on_event call_end self")
    end
  end)

  local start -- forward
  local function on_done_for(id)
    return function(out)
      local c = calls[id]
      if not c then fail("on_done for a call whose rt:call returned nil: " .. id); return end
      c.done = c.done + 1
      stats.done = stats.done + 1
      if c.done > 1 then fail(("call %s (%s) on_done fired %d times"):format(id, c.kind, c.done)) end
      if type(out) ~= "table" then fail("on_done got " .. type(out)); return end
      if not VALID[out.status] then fail(("call %s: bad status %s"):format(id, tostring(out.status))) end
      if out.id ~= id then fail(("call %s: outcome id %s"):format(id, tostring(out.id))) end
      stats.status[out.status] = (stats.status[out.status] or 0) + 1
      c.status = out.status
      if #c.tags > 0 and chance(PROC_CHECK) then
        local alive = procs_with(c.tags)
        if #alive > 0 and c.kind ~= "exec/exec" then stats.known_lua_survivor = (stats.known_lua_survivor or 0) + 1
        elseif #alive > 0 then fail(("call %s (%s, %s): processes outlive the call: %s"):format(id, c.kind, out.status, table.concat(alive, "; "))) end
      end
      local key = c.kind .. " " .. out.status .. " " .. tostring(out.error and out.error.code)
      stats.codes = stats.codes or {}
      stats.codes[key] = (stats.codes[key] or 0) + 1
      c.outerr = out.error and out.error.message
      -- start a new call from on_done sometimes
      if chance(0.05) and iters_left > 0 then start("from on_done") end
      if chance(0.03) then local o = random_live(); if o then do_cancel(o, "on_done other") end end
    end
  end

  local nextid = 0
  start = function(where)
    local k = rnd(kindnames)
    CUR_TAGS = {}
    local tool, args = kinds[k]()
    local mytags = CUR_TAGS; CUR_TAGS = nil
    nextid = nextid + 1
    local id = ("e%d-%d"):format(ep, nextid)
    local c = { kind = k .. "/" .. tool, done = 0, tags = mytags }
    calls[id] = c
    local opts = { id = id, on_done = on_done_for(id) }
    if chance(0.3) then
      opts.on_progress = function(ev)
        if chance(0.1) then do_cancel(c, "on_progress self"); stats.callback_cancels = stats.callback_cancels + 1 end
        if chance(0.03) then local o = random_live(); if o then do_cancel(o, "on_progress other") end end
      end
    end
    local argv = args
    if chance(0.1) then
      local parts, flat = {}, true
      for kk, v in pairs(args) do
        if type(v) == "string" then parts[#parts + 1] = ("%q:%q"):format(kk, v):gsub("\\\n", "\\n")
        elseif type(v) == "number" or type(v) == "boolean" then parts[#parts + 1] = ("%q:%s"):format(kk, tostring(v))
        else flat = false end
      end
      if flat then argv = "{" .. table.concat(parts, ",") .. "}" end
    end
    local ok, h, m = pcall(rt.call, rt, tool, argv, opts)
    if not ok then fail("rt:call raised (" .. where .. "): " .. tostring(h)); c.raised = true; return end
    if not h then stats.start_fail = stats.start_fail + 1; calls[id] = nil; return end
    stats.started = stats.started + 1
    c.h = h
    if h.id ~= id then fail("handle id " .. tostring(h.id) .. " ~= " .. id) end
    live[#live + 1] = id
    -- immediate cancel
    if chance(0.1) then do_cancel(c, "immediate") end
  end

  local n = math.min(EPLEN, iters_left)
  local close_mid = chance(0.35)
  for i = 1, n do
    local r = math.random(100)
    if r <= 35 then start("main")
    elseif r <= 50 then do_cancel(random_live(), "main")
    elseif r <= 75 then
      for _ = 1, math.random(0, 5) do
        local ok, e = pcall(rt.run_once, rt)
        if not ok then fail("run_once raised: " .. tostring(e)); break end
      end
    elseif r <= 80 then
      local good = chance(0.6)
      set_policies(good)
      local g, e = rt:reload()
      if g then stats.reload_ok = stats.reload_ok + 1 else stats.reload_bad = stats.reload_bad + 1 end
      if good and not g then
        -- a good reload can fail only for memory cap
        if not tostring(e):find("memory") then fail("good reload failed: " .. tostring(e)) end
      end
      if not good and g then fail("broken reload succeeded") end
      set_policies(true)
    elseif r <= 87 then
      if #pending > 0 then
        local idx = math.random(#pending)
        local aid = table.remove(pending, idx)
        local ans = rnd { "approve", "always", "reject" }
        local ok, res, m = pcall(rt.answer, rt, aid, ans, chance(0.5) and { scope = "args", guidance = "g" } or "guide")
        if not ok then fail("answer raised: " .. tostring(res))
        elseif res then stats.answered = stats.answered + 1 else stats.answer_nil = stats.answer_nil + 1 end
      else
        local ok, res = pcall(rt.answer, rt, 1000000 + i, "approve")
        if not ok then fail("answer(bad) raised: " .. tostring(res)) end
      end
    elseif r <= 90 then
      local c = random_live()
      if c and chance(0.5) then
        -- wait on it (bounded by the timeouts we configured)
        local ok, out = pcall(c.h.wait, c.h)
        if not ok then fail("wait raised: " .. tostring(out))
        elseif not VALID[out.status] then fail("wait: bad status") end
      end
    elseif r <= 93 then
      collectgarbage(); stats.gc = stats.gc + 1
    elseif r <= 95 then
      local ok, e = pcall(rt.explain, rt, rnd { "exec", "slp", "asky", "write_file" }, { command = "ls", path = "x", content = "y" })
      if not ok then fail("explain raised: " .. tostring(e)) end
    elseif r <= 97 then
      -- drop handle references (keep the record) to stress GC of handles
      local c = random_live()
      if c then c.h = setmetatable({}, { __index = { cancel = function() return nil end, wait = function() return { status = "ok" } end } }) end
      collectgarbage()
    else
      rt:describe(); rt:generation(); rt:recent_changes(5)
    end
    -- prune finished from live
    if i % 10 == 0 then
      local nl = {}
      for _, id in ipairs(live) do if calls[id].done == 0 then nl[#nl + 1] = id end end
      live = nl
    end
  end

  if close_mid then
    stats.closed_eps = stats.closed_eps + 1
    rt:close()
    for id, c in pairs(calls) do
      if c.done > 1 then fail(("call %s on_done %d times (closed ep)"):format(id, c.done)) end
    end
    wait_no_procs("after close ep " .. ep)
  else
    stats.run_eps = stats.run_eps + 1
    -- answer everything so run() ends quickly (remaining ones time out anyway)
    for _, aid in ipairs(pending) do rt:answer(aid, "reject") end
    pending = {}
    local ok, e = pcall(rt.run, rt)
    if not ok then fail("rt:run raised: " .. tostring(e)) end
    for id, c in pairs(calls) do
      if c.done ~= 1 then fail(("call %s (%s) on_done fired %d times after run"):format(id, c.kind, c.done)) end
      if c.h and c.h.done and c.h.outcome then
        local okd, d = pcall(c.h.done, c.h)
        if okd and not d then fail("call " .. id .. " handle:done() false after run") end
      end
    end
    wait_no_procs("after run ep " .. ep)
    if chance(0.5) then rt:close() else rt = nil; collectgarbage(); collectgarbage() end
  end
  collectgarbage()
  return n
end

local left = ITERS
while left > 0 do left = left - episode(left) end
collectgarbage(); collectgarbage()
wait_no_procs("end")

local st = {}
for k, v in pairs(stats.status) do st[#st + 1] = k .. "=" .. v end
table.sort(st)
print(("episodes=%d run=%d closed=%d started=%d done=%d start_fail=%d cancel_true=%d cancel_nil=%d cb_cancels=%d reload_ok=%d reload_bad=%d answered=%d answer_nil=%d gc=%d")
  :format(ep, stats.run_eps, stats.closed_eps, stats.started, stats.done, stats.start_fail, stats.cancel_true,
    stats.cancel_nil, stats.callback_cancels, stats.reload_ok, stats.reload_bad, stats.answered, stats.answer_nil, stats.gc))
print("statuses: " .. table.concat(st, " "), "known ctx.exec survivors at on_done:", stats.known_lua_survivor or 0)
if os.getenv("CODES") then
  local cs = {}
  for k, v in pairs(stats.codes or {}) do cs[#cs + 1] = ("%5d %s"):format(v, k) end
  table.sort(cs); print(table.concat(cs, "\n"))
end
print(stats.failures == 0 and "RESULT PASS" or ("RESULT FAIL " .. stats.failures))
os.execute("rm -rf " .. base)
os.exit(stats.failures == 0 and 0 or 1)
