-- Hot reload and rt:explain, through the host Lua module.
local H = require "spec.lua.helpers"
local toolgate = H.toolgate

-- A policy set whose tool, rule and hooks all stamp tg.generation and a
-- version tag into the result; a broken version has valid first files
-- tagged "bad-K" and a last file that fails at line 3.
local function version_files(k, broken)
  local v = (broken and "bad-" or "v") .. k
  local files = {
    ["00_tools.lua"] = ([[
local tg = require "toolgate"
local V = %q
tg.tool { name = "slow", read_only = true, run = function(args, ctx)
  ctx.sleep(args.ms or 2); return { gen = tg.generation, v = V } end }
tg.tool { name = "quick", read_only = true, run = function()
  return { gen = tg.generation, v = V } end }
tg.tool { name = "nap", read_only = true, run = function(args, ctx) ctx.sleep(args.ms or 10) end }
]]):format(v),
    ["10_rules.lua"] = ([[
local tg = require "toolgate"
local V = %q
tg.rule { name = "stamp", priority = 1, check = function(call)
  call.metadata.rule_gen = tg.generation; call.metadata.rule_v = V end }
]]):format(v),
  }
  if broken then
    files["20_hooks.lua"] = ('local tg = require "toolgate"\nlocal V = %q\nthis is not lua\n'):format(v)
  else
    files["20_hooks.lua"] = ([[
local tg = require "toolgate"
local V = %q
tg.before_tool("*", function(call) call.metadata.pre_gen = tg.generation; call.metadata.pre_v = V end)
tg.after_tool("*", function(call, res)
  local m = call.metadata
  return tg.result { tool = res.result, rule_gen = m.rule_gen, rule_v = m.rule_v,
    pre_gen = m.pre_gen, pre_v = m.pre_v, post_gen = tg.generation, post_v = V }
end)
]]):format(v)
  end
  return files
end

local function write_files(dir, files)
  for name, src in pairs(files) do H.write(dir .. "/" .. name, src) end
end

-- An editor's atomic save: a temp file renamed over the target.
local function save_atomic(dir, name, src)
  local tmp = dir .. "/." .. name .. ".swp"
  H.write(tmp, src)
  assert(os.rename(tmp, dir .. "/" .. name))
end

-- Turns the loop (through a call that sleeps) until pred() or ~5 s.
local function wait_for(rt, pred)
  for _ = 1, 500 do
    if pred() then return true end
    H.call(rt, "nap", { ms = 10 })
  end
  return pred()
end

local function check_stamps(out, versions)
  assert.are.equal("ok", out.status, out.error and out.error.message)
  local r = out.result
  local gens = { r.tool.gen, r.rule_gen, r.pre_gen, r.post_gen }
  local vs = { r.tool.v, r.rule_v, r.pre_v, r.post_v }
  for i = 2, 4 do
    assert(gens[i] == gens[1] and vs[i] == vs[1],
      ("call %s judged by two generations: %s/%s vs %s/%s"):format(
        out.id, tostring(gens[i]), tostring(vs[i]), tostring(gens[1]), tostring(vs[1])))
  end
  assert(not vs[1]:find("^bad"), "a call ran on broken version " .. vs[1])
  assert.are.equal(versions[gens[1]], vs[1])
  return gens[1]
end

describe("hot reload", function()
  after_each(H.cleanup)

  it("200 reloads, valid and broken alternately, while calls run", function()
    local dir = H.tmpdir()
    write_files(dir, version_files(0))
    local rt = H.track(assert(toolgate.new { policies = dir }))
    local loaded, errors = H.record(rt, "policy_loaded"), H.record(rt, "policy_error")
    local versions = { [1] = "v0" }
    local started, ended, ends, spanned = 0, 0, {}, 0
    local handles = {}
    local function start(tool, args)
      started = started + 1
      local id = "c" .. started
      handles[#handles + 1] = assert(rt:call(tool, args, { id = id, on_done = function(out)
        ends[out.id] = (ends[out.id] or 0) + 1
        ended = ended + 1
        if check_stamps(out, versions) < rt:generation() then spanned = spanned + 1 end
      end }))
    end
    for k = 1, 200 do
      local broken = k % 2 == 0
      write_files(dir, version_files(k, broken))
      local before = rt:generation()
      local gen, err = rt:reload()
      if broken then
        assert.is_nil(gen)
        assert.is_true(H.has(err, "20_hooks.lua:3:"), err)
        assert.are.equal(before, rt:generation())
      else
        assert.are.equal(before + 1, gen, err)
        versions[gen] = "v" .. k
      end
      start("slow", { ms = 3 })
      for _ = 1, 4 do start("quick", {}) end
      rt:run_once()
    end
    for _, h in ipairs(handles) do h:wait() end
    assert.are.equal(started, ended)
    for i = 1, started do assert.are.equal(1, ends["c" .. i]) end
    assert.are.equal(101, rt:generation())
    assert.are.equal(100, #loaded)
    assert.are.equal(100, #errors)
    for _, ev in ipairs(errors) do
      assert.is_true(H.has(ev.file, "20_hooks.lua"))
      assert.are.equal(3, ev.line)
      assert.are.equal("api", ev.trigger)
    end
    for _, ev in ipairs(loaded) do
      assert.are.equal(3, ev.files)
      assert.is_true(ev.duration_ms >= 0)
    end
    assert.is_true(spanned > 0, "no call outlived its generation")
  end)

  it("watch = true picks up saves, new and deleted files, not temp files", function()
    local dir = H.tmpdir()
    write_files(dir, version_files(0))
    local rt = H.track(assert(toolgate.new { policies = dir, watch = true }))
    local loaded, errors = H.record(rt, "policy_loaded"), H.record(rt, "policy_error")
    -- rt:run() returns: the watch does not keep the loop alive
    rt:run()
    save_atomic(dir, "10_rules.lua", version_files(1)["10_rules.lua"])
    assert.is_true(wait_for(rt, function() return #loaded >= 1 end), "save not seen")
    assert.are.equal("watch", loaded[#loaded].trigger)
    assert.are.equal("v1", H.call(rt, "quick", {}).result.rule_v)

    H.write(dir .. "/30_more.lua", 'local tg = require "toolgate"\n'
      .. 'tg.rule { name = "more", check = function() end }\n')
    assert.is_true(wait_for(rt, function() return #rt:describe().rules == 2 end))
    os.remove(dir .. "/30_more.lua")
    assert.is_true(wait_for(rt, function() return #rt:describe().rules == 1 end))

    local n = #loaded
    H.write(dir .. "/10_rules.lua~", "backup")
    H.write(dir .. "/.10_rules.lua.swp", "swap")
    H.write(dir .. "/README.txt", "text")
    for _ = 1, 20 do H.call(rt, "nap", { ms = 10 }) end
    assert.are.equal(n, #loaded)

    local gen = rt:generation()
    save_atomic(dir, "20_hooks.lua", version_files(2, true)["20_hooks.lua"])
    assert.is_true(wait_for(rt, function() return #errors >= 1 end), "error not reported")
    assert.are.equal(3, errors[1].line)
    assert.are.equal(gen, rt:generation())
    assert.are.equal("v1", H.call(rt, "quick", {}).result.rule_v)
  end)

  it("checks the watch option", function()
    assert.has_error(function() toolgate.new { watch = "yes" } end,
      "toolgate.new: 'watch' must be a boolean (got string)")
    local rt, err = toolgate.new { watch = true }
    assert.is_nil(rt)
    assert.is_true(H.has(err, "no policies folder to watch"), err)
  end)

  it("rt:listen serves `toolgate reload`", function()
    local build = os.getenv("TOOLGATE_BUILD_DIR")
    if not build then return pending("TOOLGATE_BUILD_DIR is not set") end
    local dir = H.tmpdir()
    write_files(dir, version_files(0))
    local rt = H.track(assert(toolgate.new { policies = dir }))
    local sock = dir .. "/control.sock"
    assert.are.equal(sock, rt:listen(sock))
    local rt2 = H.track(assert(toolgate.new { policies = dir }))
    local none, err = rt2:listen(sock)
    assert.is_nil(none)
    assert.is_true(H.has(err, "already listening"), err)
    local out = dir .. "/reply"
    assert(os.execute(("'%s/toolgate' reload --socket '%s' --json > '%s' 2>&1 &")
      :format(build, sock, out)))
    assert.is_true(wait_for(rt, function() return H.has(H.read(out), "\n") end))
    assert.is_true(H.has(H.read(out), '"ok":true'), H.read(out))
    assert.is_true(H.has(H.read(out), '"generation":2'), H.read(out))
    assert.are.equal(2, rt:generation())
  end)
end)

describe("rt:explain", function()
  after_each(H.cleanup)

  local policy = H.lib.tools .. [[
local hooks = 0
tg.rule { name = "exec-only", priority = 10, tools = { "exec" }, check = function() return tg.deny("x") end }
tg.rule { name = "looks", priority = 20, check = function(call) end }
tg.rule { name = "ask-touch", priority = 30, tools = { "touch" },
  check = function(call) return tg.ask("touch " .. tostring(call.args.what) .. "?") end }
tg.rule { name = "deny-touch", priority = 40, tools = { "touch" }, check = function() return tg.deny("late") end }
tg.rule { name = "dry", priority = 50, tools = { "echo" },
  check = function(call) if call.dry_run then return tg.deny("dry run seen") end end }
tg.before_tool("touch", function() hooks = hooks + 1 end)
tg.before_tool("*", function() end)
tg.after_tool("touch", function() hooks = hooks + 1 end)
tg.tool { name = "hooks", read_only = true, run = function() return { n = hooks } end }
]]

  it("lists the rules in order with their answers, the decider and the hooks", function()
    local rt = H.runtime(policy, { approve = "deny" })
    local seen = H.record(rt)
    local x = assert(rt:explain("touch", { what = "it" }))
    assert.are.equal(0, #seen) -- no events: a dry run is not a call
    local names, status = {}, {}
    for i, r in ipairs(x.rules) do names[i], status[i] = r.name, r.status end
    assert.are.same({ "exec-only", "looks", "ask-touch", "deny-touch", "dry" }, names)
    assert.are.same({ "skipped", "no answer", "answered", "not reached", "skipped" }, status)
    assert.are.equal("ask", x.rules[3].answer)
    assert.are.equal("touch it?", x.rules[3].reason)
    assert.are.equal("ask", x.decision.verdict)
    assert.are.equal("ask-touch", x.decision.rule)
    assert.is_false(x.decision.by_default)
    assert.is_true(H.has(x.approval, "rejected without asking"))
    assert.are.equal("*", x.pre_hooks[1].tool)
    assert.are.equal("touch", x.pre_hooks[2].tool)
    assert.are.equal("touch", x.post_hooks[1].tool)
    assert.is_true(x.hooks_run)
    -- neither the tool nor its hooks ran
    assert.are.equal(0, H.runs(rt))
    assert.are.equal(0, H.call(rt, "hooks", {}).result.n)
  end)

  it("shows the default and why, and rules see call.dry_run", function()
    local rt = H.runtime(policy)
    local x = assert(rt:explain("runs", {}))
    assert.are.equal("allow", x.decision.verdict)
    assert.is_true(x.decision.by_default)
    assert.is_true(H.has(x.decision.why, "read-only"))
    x = assert(rt:explain("echo", { a = 1 }))
    assert.are.equal("deny", x.decision.verdict)
    assert.are.equal("dry run seen", x.decision.reason)
    assert.is_false(x.hooks_run)
    -- a real call is not a dry run
    assert.are.equal("ok", H.call(rt, "echo", { a = 1 }).status)
  end)

  it("refuses unknown tools and bad args", function()
    local rt = H.runtime(policy)
    local x, err = rt:explain("nope", {})
    assert.is_nil(x)
    assert.is_true(H.has(err, "unknown tool 'nope' (registered:"), err)
    x, err = rt:explain("echo", "{not json")
    assert.is_nil(x)
    assert.is_true(H.has(err, "not valid JSON"), err)
    x, err = rt:explain("echo", "[1]")
    assert.is_nil(x)
    assert.is_true(H.has(err, "JSON object"), err)
  end)
end)
