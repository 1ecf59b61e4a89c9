-- spec/stress/files.lua SEED ITERS (run through spec/stress/run.sh): write_file / apply_patch interleaved with cancels, approvals, reloads
local toolgate = require "toolgate"
local SEED = tonumber(arg[1]) or os.time()
local ITERS = tonumber(arg[2]) or 3000
math.randomseed(SEED)
print("seed", SEED, "iters", ITERS)
io.stdout:setvbuf("line")
local base = (os.getenv("STRESS_DIR") or os.getenv("TMPDIR") or "/tmp") .. "/toolgate-stress/fs-" .. SEED
os.execute("rm -rf " .. base .. " && mkdir -p " .. base .. "/pol " .. base .. "/ws")
local POL, WS = base .. "/pol", base .. "/ws"
local function write(path, text) local f = assert(io.open(path, "wb")); f:write(text); f:close() end
local function read(path) local f = io.open(path, "rb"); if not f then return nil end local s = f:read("*a"); f:close(); return s end
write(POL .. "/p.lua", [[
local tg = require "toolgate"
tg.rule { name = "r", check = function(call)
  if call.args.path and call.args.path:find("ask") then return tg.ask("write?") end
  return tg.allow() end }
tg.tool { name = "lwrite", read_only = true, run = function(a, ctx)
  ctx.sleep(a.ms or 0)
  local o = ctx.call("write_file", { path = a.path, content = a.content, create_dirs = true })
  return o and o.status end }
tg.on_file_change("**", function(c) end)
]])
local failures = 0
local function fail(m) failures = failures + 1; print("FAIL", m) end
local function rnd(t) return t[math.random(#t)] end
local function chance(p) return math.random() < p end

local stats = { started = 0, ok = 0, cancelled = 0, other = 0, changes = 0 }
local ITER = 0
local ep = 0
while ITER < ITERS do
  ep = ep + 1
  local rt = assert(toolgate.new { policies = POL, workspace = WS, approval_timeout_ms = rnd { 20, 500 },
    seed = SEED, progress_interval_ms = 1 })
  local pending = {}
  rt:set_approver(function(req)
    local r = math.random(4)
    if r == 1 then return "approve" elseif r == 2 then return "reject" end
    pending[#pending + 1] = req.approval_id
  end)
  local calls, live, ended = {}, {}, {}
  local lastchange = {}   -- path -> call_id (top-level id prefix) of the last change
  rt:on_file_change("**", function(ch)
    stats.changes = stats.changes + 1
    lastchange[ch.path] = ch
    if ch.old_path then lastchange[ch.old_path] = { type = "deleted", call_id = ch.call_id } end
    local top = ch.call_id:match("^([^.]+)")
    local c = calls[top]
    if not c then fail("file change for unknown call " .. tostring(ch.call_id))
    elseif not ended[ch.call_id] then fail("file change before call_end of " .. ch.call_id) end
    if c and c.done == 0 then stats.change_before_done = (stats.change_before_done or 0) + 1 end
    if chance(0.05) and #live > 0 then local cc = calls[rnd(live)]; if cc.h:cancel() then cc.cancel_from = "on_file_change" end end
  end)
  rt:on_event(function(ev)
    if ev.type == "call_end" then ended[ev.call_id] = true end
    if ev.type ~= "approval" and chance(0.03) and #live > 0 then local cc = calls[rnd(live)]; if cc.h:cancel() then cc.cancel_from = "on_event " .. ev.type .. " of " .. tostring(ev.call_id) end end
  end)
  local n = 0
  for i = 1, 200 do
    ITER = ITER + 1
    local r = math.random(100)
    if r <= 45 then
      n = n + 1
      local id = ("f%d_%d"):format(ep, n)
      local dirn = "d" .. math.random(2)
      local path = dirn .. "/" .. (chance(0.3) and "ask" or "f") .. math.random(4) .. ".txt"
      local content = "content of " .. id .. "\n" .. string.rep("x", math.random(0, 5000))
      local tool, args
      local k = math.random(4)
      if k == 1 then tool, args = "write_file", { path = path, content = content, create_dirs = true }
      elseif k == 2 then tool, args = "lwrite", { path = path, content = content, ms = math.random(0, 3) }
      elseif k == 3 then
        -- patch creating a fresh file, or renaming/deleting one we know
        local p2 = "p/" .. id .. ".txt"
        tool, args = "apply_patch", { patch = "--- /dev/null\n+++ b/" .. p2 .. "\n@@ -0,0 +1 @@\n+" .. id .. "\n" }
        path = p2; content = id .. "\n"
      else
        -- modify an existing file by patch: replace its first line
        local cur = read(WS .. "/" .. path)
        if cur then
          local first = cur:match("^[^\n]*")
          tool, args = "apply_patch", { patch = "--- a/" .. path .. "\n+++ b/" .. path .. "\n@@ -1 +1 @@\n-" .. first .. "\n+content of " .. id .. "\n" }
          content = nil -- rest of file unknown
        else
          tool, args = "write_file", { path = path, content = content, create_dirs = true }
        end
      end
      local c = { id = id, tool = tool, path = path, content = content, done = 0 }
      calls[id] = c
      local h, e = rt:call(tool, args, { id = id, on_done = function(o)
        c.done = c.done + 1
        c.status = o.status
        if c.done > 1 then fail("double on_done " .. id) end
        if o.status == "ok" then stats.ok = stats.ok + 1 elseif o.status == "cancelled" then stats.cancelled = stats.cancelled + 1 else stats.other = stats.other + 1 end
      end })
      if h then c.h = h; live[#live + 1] = id; stats.started = stats.started + 1
        if chance(0.15) then h:cancel() end
      else calls[id] = nil end
    elseif r <= 65 and #live > 0 then
      calls[rnd(live)].h:cancel()
    elseif r <= 85 then
      for _ = 1, math.random(0, 4) do rt:run_once() end
    elseif r <= 92 and #pending > 0 then
      rt:answer(table.remove(pending, math.random(#pending)), rnd { "approve", "reject", "always" })
    elseif r <= 95 then
      rt:reload()
    else
      collectgarbage()
    end
    if i % 20 == 0 then
      local nl = {}
      for _, id in ipairs(live) do if calls[id].done == 0 then nl[#nl + 1] = id end end
      live = nl
    end
  end
  if chance(0.3) then
    rt:close()
    for id, c in pairs(calls) do if c.done > 1 then fail("double on_done " .. id) end end
  else
    for _, a in ipairs(pending) do rt:answer(a, "approve") end
    rt:run()
    for id, c in pairs(calls) do if c.done ~= 1 then fail(("on_done %d times for %s"):format(c.done, id)) end end
    -- disk vs last change
    local p = io.popen("cd " .. WS .. " && env -u LD_PRELOAD find . -type f | env -u LD_PRELOAD sed 's|^./||'")
    for path in p:lines() do
      if path:find("%.tg%-") then fail("temp file left: " .. path) end
      local content = read(WS .. "/" .. path) or ""
      local owner = content:match("^content of ([%w_]+)") or content:match("^(f[%d_]+)\n")
      local lc = lastchange[path]
      if owner and owner:match("^f" .. ep .. "_") then
        local c = calls[owner]
        if not c then fail("unknown owner " .. owner .. " of " .. path)
        elseif c.status ~= "ok" and c.tool == "lwrite" and lc and lc.call_id == owner .. ".1" then
          stats.outer_cancel_after_inner_write = (stats.outer_cancel_after_inner_write or 0) + 1
        elseif c.status ~= "ok" then fail(("%s holds content of %s (%s) which ended %s; last change %s by %s; cancel from %s"):format(path, owner, c.tool, tostring(c.status), lc and lc.type or "none", lc and lc.call_id or "-", tostring(c.cancel_from)))
        elseif not lc then fail(path .. ": written by " .. owner .. " but no file_change seen")
        elseif lc.call_id:match("^([^.]+)") ~= owner then fail(("%s: content of %s but last change by %s"):format(path, owner, lc.call_id)) end
      end
    end
    p:close()
    rt:close()
  end
end
os.execute("rm -rf " .. base)
print(("episodes=%d started=%d ok=%d cancelled=%d other=%d changes=%d"):format(ep, stats.started, stats.ok, stats.cancelled, stats.other, stats.changes))
print("file_change delivered before the call's on_done:", stats.change_before_done or 0)
print("lwrite cancelled after its nested write_file wrote:", stats.outer_cancel_after_inner_write or 0)
print(failures == 0 and "RESULT PASS" or "RESULT FAIL " .. failures)
os.exit(failures == 0 and 0 or 1)
