-- Storage through the Lua host API (lua/README.md, "Storage"): db = path,
-- ":memory:" or false; rt:audit, the approver's and rt:answer's always
-- scopes, rt:approvals / grant / revoke across two runtimes on one file,
-- rt:record_usage and rt:usage; bad options raise naming them.
local H = require "spec.lua.helpers"
local toolgate = H.toolgate

local POLICY = H.lib.tools .. [[
local tg = require "toolgate"
tg.tool { name = "sh", run = function(args) return { ran = args.command } end }
tg.rule { name = "ask-sh", tools = { "sh" }, check = function(call)
  if call.args.command == "rm -rf /" then return tg.deny("never") end
  return tg.ask("run " .. tostring(call.args.command) .. "?") end }
tg.before_tool("echo", function(call)
  if call.args.greet then return tg.args({ greet = call.args.greet .. "!" }) end end)
]]

describe("storage: the audit trail", function()
  after_each(H.cleanup)

  it("records every call, whatever its end, before on_done runs", function()
    local rt = H.runtime(POLICY, { db = ":memory:", approve = "deny", session = "lua" })
    local recorded
    local h = rt:call("echo", { greet = "hi" }, { turn = 2, on_done = function()
      recorded = #rt:audit()
    end })
    h:wait()
    assert.are.equal(1, recorded) -- in the database when on_done ran
    H.call(rt, "sh", { command = "ls" })
    H.call(rt, "nope", {})
    local recs = rt:audit()
    assert.are.equal(3, #recs)
    local a, b, c = recs[1], recs[2], recs[3]
    assert.are.equal("echo", a.tool)
    assert.are.equal("lua", a.session)
    assert.are.equal(2, a.turn)
    assert.are.same({ greet = "hi!" }, a.args)
    assert.are.same({ greet = "hi!" }, a.result)
    assert.are.equal("before", a.hooks[1].stage)
    assert.is_true(H.has(a.hooks[1].hook, "10_policy.lua:"), a.hooks[1].hook)
    assert.are.equal("args", a.hooks[1].what)
    assert.are.equal("allow", a.decision.verdict)
    assert.are.equal(toolgate.null, a.error)
    assert.are.equal("rejected", b.status)
    assert.are.equal("ask-sh", b.decision.rule)
    assert.is_true(H.has(b.decision.where, "10_policy.lua:"), b.decision.where)
    assert.are.equal("mode-reject", b.decision.approval)
    assert.are.equal("REJECTED", b.error.code)
    assert.are.equal("error", c.status)
    assert.are.equal("UNKNOWN_TOOL", c.error.code)
    assert.is_true(a.id < b.id and b.id < c.id)
    assert.are.equal(1, #rt:audit { status = "rejected" })
    assert.are.equal(2, #rt:audit { after = a.id })
    assert.are.equal(1, #rt:audit { limit = 1 })
    assert.are.equal(c.id, rt:audit { limit = 1 }[1].id)
    assert.are.equal(0, #rt:audit { since = "2099-01-01" })
    assert.are.equal(3, #rt:audit { since = "1h" })
    assert.are.equal(":memory:", rt:db())
  end)

  it("a nested call (ctx.call) names its parent", function()
    local rt = H.runtime(H.lib.tools .. [[
local tg = require "toolgate"
tg.tool { name = "outer", read_only = true, run = function(args, ctx)
  return ctx.call("echo", { inner = true }).result end }
]], { db = ":memory:" })
    assert.are.equal("ok", H.call(rt, "outer", {}, { id = "top" }).status)
    local recs = rt:audit()
    assert.are.equal(2, #recs)
    assert.are.equal("echo", recs[1].tool)
    assert.are.equal("top", recs[1].parent_call)
    assert.are.equal("top", recs[2].call_id)
    assert.is_nil(recs[2].parent_call)
  end)

  it("with db = false nothing is recorded and the storage methods say so", function()
    local rt = H.runtime(POLICY, { db = false })
    assert.are.equal("ok", H.call(rt, "echo", {}).status)
    assert.is_nil(rt:db())
    for _, m in ipairs { "audit", "approvals", "usage" } do
      local v, err = rt[m](rt)
      assert.is_nil(v)
      assert.is_true(H.has(err, "storage is off"), err)
    end
    -- usage still reaches the budgets (kept in memory for this runtime)
    assert.is_true(rt:record_usage { model = "m" })
    assert.has_error(function() rt:record_usage { input_tokens = 1 } end,
      "rt:record_usage: 'model' is required")
  end)

  it("checks its options", function()
    assert.has_error(function() toolgate.new { db = 42 } end,
      "toolgate.new: 'db' must be a file name, \":memory:\" or false (got number)")
    assert.has_error(function() toolgate.new { db = true } end,
      "toolgate.new: 'db' must be a file name, \":memory:\" or false (got true)")
    assert.has_error(function() toolgate.new { db = "x\0y" } end,
      "toolgate.new: 'db' must not contain a NUL byte")
    assert.has_error(function() toolgate.new { audit_args_max = -1, db = false } end,
      "toolgate.new: 'audit_args_max' must be a number >= 0")
    local rt, err = toolgate.new { db = H.tmpdir() }
    assert.is_nil(rt)
    assert.is_true(H.has(err, "it is not a regular file"), err)
    rt, err = toolgate.new { db = false, project = "/no/such/project" }
    assert.is_nil(rt)
    assert.is_true(H.has(err, "project /no/such/project"), err)
    rt = H.runtime(nil, { db = ":memory:" })
    assert.has_error(function() rt:audit { statu = "ok" } end)
    assert.has_error(function() rt:audit { limit = -1 } end,
      "rt:audit: 'limit' must be a whole number >= 0")
    assert.has_error(function() rt:audit { since = "soon" } end)
    local v, e = rt:audit { status = "fine" }
    assert.is_nil(v)
    assert.is_true(H.has(e, "unknown status 'fine'"), e)
  end)
end)

describe("storage: remembered approvals", function()
  after_each(H.cleanup)

  it("an always with a pattern for the project is honoured by a second runtime, until revoked", function()
    local dir = H.tmpdir()
    local db = dir .. "/approvals.db"
    local asked = 0
    local a = H.runtime(POLICY, { db = db, project = dir, session = "a", approve = function()
      asked = asked + 1
      return "always", { scope = "pattern", arg = "command", glob = "npm test*",
                         where = "project", ["until"] = "1h" }
    end })
    local b = H.runtime(POLICY, { db = db, project = dir, session = "b", approve = "deny" })
    assert.are.equal("ok", H.call(a, "sh", { command = "npm test" }).status)
    assert.are.equal("ok", H.call(a, "sh", { command = "npm test -- --ci" }).status)
    assert.are.equal(1, asked)
    -- b takes in what another connection stored within 100 ms, or at once
    -- when its host reads its database
    assert.are.equal(1, #b:approvals())
    assert.are.equal("ok", H.call(b, "sh", { command = "npm test --watch" }).status)
    assert.are.equal("rejected", H.call(b, "sh", { command = "npm publish" }).status)
    assert.are.equal("denied", H.call(b, "sh", { command = "rm -rf /" }).status)
    local list = b:approvals()
    assert.are.equal(1, #list)
    assert.are.equal("pattern", list[1].scope)
    assert.are.equal("npm test*", list[1].glob)
    assert.are.equal("project", list[1].where)
    assert.is_true(list[1]["until"] > list[1].created)
    assert.is_true(b:revoke(list[1].id))
    local ok, err = b:revoke(list[1].id)
    assert.is_nil(ok)
    assert.is_true(H.has(err, "no approval in force"), err)
    assert.are.equal("rejected", H.call(b, "sh", { command = "npm test" }).status)
    assert.are.equal(0, #b:approvals())
    assert.are.equal(1, #b:approvals { all = true })
  end)

  it("rt:grant makes one ahead of time; rt:answer takes the scopes too", function()
    local rt = H.runtime(POLICY, { db = ":memory:", session = "s" })
    local id = assert(rt:grant { tool = "sh", scope = "args", args = { command = "ls" },
                                 where = "session", session = "s" })
    assert.are.equal("ok", H.call(rt, "sh", { command = "ls" }).status)
    local pending
    rt:set_approver(function(q) pending = q.approval_id end)
    local h = rt:call("sh", { command = "make" })
    rt:run_once()
    assert.is_number(pending)
    assert.has_error(function()
      rt:answer(pending, "always", { scope = "pattern", arg = "command", glob = "[x" })
    end)
    assert.has_error(function() rt:answer(pending, "always", { where = "galaxy" }) end)
    assert.has_error(function() rt:answer(pending, "always", { ["until"] = "soon" }) end)
    assert.is_true(rt:answer(pending, "always", { scope = "pattern", arg = "command",
                                                  glob = "make*", ["until"] = os.time() * 1000 + 60000 }))
    assert.are.equal("ok", h:wait().status)
    pending = nil
    assert.are.equal("ok", H.call(rt, "sh", { command = "make test" }).status)
    assert.is_nil(pending) -- remembered: not asked
    local list = rt:approvals()
    assert.are.equal(2, #list)
    assert.are.equal(id, list[1].id)
    assert.are.same({ command = "ls" }, list[1].args)
    assert.are.equal("make*", list[2].glob)
    assert.has_error(function() rt:grant { tool = "sh", scope = "everything" } end)
    local nope, err = rt:grant { tool = "sh", scope = "pattern", arg = "command" }
    assert.is_nil(nope)
    assert.is_true(H.has(err, "glob"), err)
  end)
end)

describe("storage: the usage ledger", function()
  after_each(H.cleanup)

  it("sums what rt:record_usage recorded, per period and filter", function()
    local rt = H.runtime(nil, { db = H.tmpdir() .. "/usage.db", session = "main" })
    assert.is_true(rt:record_usage { model = "big", input_tokens = 100, output_tokens = 20, cost = 0.5 })
    assert.is_true(rt:record_usage { model = "small", session = "side", input_tokens = 3, cost = 0.25, turn = 4 })
    assert.is_true(rt:record_usage { model = "big", input_tokens = 1, ts = "40d" })
    local day = rt:usage { period = "day" }
    assert.are.equal(2, day.records)
    assert.are.equal(103, day.input_tokens)
    assert.are.equal(20, day.output_tokens)
    assert.are.equal(0.75, day.cost)
    assert.is_true(day.since <= os.time() * 1000)
    assert.are.equal(3, rt:usage().records)
    assert.are.equal(1, rt:usage { model = "big", period = "month" }.records)
    assert.are.equal(1, rt:usage { session = "side" }.records)
    local none, err = rt:usage { period = "fortnight" }
    assert.is_nil(none)
    assert.is_true(H.has(err, "unknown period 'fortnight'"), err)
    assert.has_error(function() rt:record_usage {} end, "rt:record_usage: 'model' is required")
    assert.has_error(function() rt:record_usage { model = "m", cost = -1 } end,
      "rt:record_usage: 'cost' must be a number >= 0")
    assert.has_error(function() rt:record_usage { model = "m", input_tokens = 1.5 } end,
      "rt:record_usage: 'input_tokens' must be a whole number >= 0")
    assert.has_error(function() rt:record_usage { model = "m", tokens = 1 } end)
  end)
end)

describe("storage: sessions, messages and search", function()
  after_each(H.cleanup)

  it("records a conversation and finds it, and its calls, by full text", function()
    local rt = H.runtime(POLICY, { db = ":memory:", approve = "deny", session = "conv" })
    local id = assert(rt:session { id = "conv", title = "otters", project = "." })
    assert.are.equal("conv", id)
    local fresh = assert(rt:session {})
    assert.is_true(H.has(fresh, "s-"), fresh)
    assert(rt:message { session = "conv", role = "user", content = "tell me about otters" })
    local mid = assert(rt:message { session = "conv", role = "assistant",
      content = "calling echo", tool_calls = { { name = "echo", args = { greet = "otter" } } } })
    assert.are.equal(math.floor(mid), mid)
    H.call(rt, "echo", { greet = "sea otters hold hands" })
    local hits = assert(rt:search "otters")
    assert.are.equal(2, #hits)
    local kinds = {}
    for _, h in ipairs(hits) do kinds[h.kind] = h end
    assert.are.equal("user", kinds.message.role)
    assert.are.equal("echo", kinds.call.tool)
    assert.is_true(H.has(kinds.call.snippet, "[otters]"), kinds.call.snippet)
    assert.are.equal(1, #rt:search("otters", { limit = 1 }))
    assert.are.equal(0, #rt:search("otters", { session = fresh }))
    local sessions = assert(rt:sessions())
    assert.are.equal(2, #sessions)
    assert(rt:end_session "conv")
    -- hostile: bad FTS syntax, unknown session, bad role, wrong types
    local none, err, code = rt:search '"unbalanced'
    assert.is_nil(none)
    assert.is_true(H.has(err, "bad search query"), err)
    assert.are.equal("EINVAL", code)
    none, err, code = rt:message { session = "nobody", role = "user", content = "x" }
    assert.is_nil(none)
    assert.are.equal("ENOENT", code)
    none, err, code = rt:end_session "nobody"
    assert.are.equal("ENOENT", code)
    none, err, code = rt:message { session = "conv", role = "robot" }
    assert.are.equal("EINVAL", code)
    assert.has_error(function() rt:message { session = "conv", role = "user", content = 5 } end)
    assert.has_error(function() rt:message { session = "conv", role = "user", bogus = 1 } end)
    assert.has_error(function() rt:session { id = {} } end)
    assert.has_error(function() rt:session { id = "a\0b" } end)
    none, err, code = rt:session { id = "a\nb" }
    assert.is_nil(none)
    assert.are.equal("EINVAL", code)
  end)

  it("is off with db = false", function()
    local rt = H.runtime(POLICY, { approve = "deny" })
    local ok, _, code = rt:session {}
    assert.is_nil(ok)
    assert.are.equal("ENOTSUP", code)
  end)
end)

describe("storage: memory", function()
  after_each(H.cleanup)

  local MEMORY_POLICY = [[
local tg = require "toolgate"
tg.tool { name = "note", run = function(args)
  local id, err, code = tg.memory.record { kind = "note", content = args.text,
    scope = args.scope, metadata = { by = "policy" } }
  return { id = id, err = err, code = code }
end }
tg.tool { name = "ask", run = function(args)
  local got, err = tg.memory.recall(args.q, { scope = args.scope, limit = args.limit })
  if not got then return { err = err } end
  local out = {}
  for i, m in ipairs(got) do out[i] = m.content end
  return { found = out, first_meta = got[1] and got[1].metadata }
end }
tg.tool { name = "bad", run = function(args)
  return tg.memory.record { kind = "k", content = "c", colour = "red" }
end }
]]

  it("policies and the host remember and recall, a project's across its sessions", function()
    local db = H.tmpdir() .. "/m.db"
    local p1, p2 = H.tmpdir(), H.tmpdir()
    local a = H.runtime(MEMORY_POLICY, { db = db, session = "a", project = p1, default_verdict = "allow" })
    local b = H.runtime(MEMORY_POLICY, { db = db, session = "b", project = p1, default_verdict = "allow" })
    local c = H.runtime(MEMORY_POLICY, { db = db, session = "c", project = p2, default_verdict = "allow" })
    local o = H.call(a, "note", { text = "deploys go through the staging cluster", scope = "project" })
    assert.are.equal("ok", o.status)
    assert.is_true(o.result.id > 0)
    H.call(a, "note", { text = "this session prefers staging logs" })
    assert(a:remember { kind = "fact", content = "staging runs on Fridays", scope = "project" })
    -- b: the same project, another session
    local got = H.call(b, "ask", { q = "staging?" }).result
    assert.are.equal(2, #got.found)
    for _, text in ipairs(got.found) do
      assert.is_nil(text:find("this session"), text)
    end
    -- a: its own session's too
    assert.are.equal(3, #H.call(a, "ask", { q = "staging" }).result.found)
    assert.are.equal(1, #H.call(a, "ask", { q = "staging", scope = "session" }).result.found)
    -- c: another project: nothing
    assert.are.equal(0, #H.call(c, "ask", { q = "staging" }).result.found)
    -- the host's recall, with metadata back as a table
    local hits = assert(a:recall("staging cluster", { limit = 1 }))
    assert.are.equal(1, #hits)
    assert.are.equal("deploys go through the staging cluster", hits[1].content)
    assert.are.same({ by = "policy" }, hits[1].metadata)
    assert.is_true(hits[1].score > 0)
    -- hostile
    local bad = H.call(a, "bad", {})
    assert.are.equal("error", bad.status)
    assert.is_true(H.has(bad.error.message, "colour"), bad.error.message)
    local r = H.call(a, "note", { text = "x", scope = "galaxy" }).result
    assert.are.equal("EINVAL", r.code)
    assert.has_error(function() a:remember { kind = "k", content = 5 } end)
    local none, err, code = a:remember { kind = "", content = "x" }
    assert.is_nil(none)
    assert.are.equal("EINVAL", code)
  end)

  it("says storage is off with db = false", function()
    local rt = H.runtime(MEMORY_POLICY, { default_verdict = "allow" })
    local r = H.call(rt, "note", { text = "x" }).result
    assert.are.equal("ENOTSUP", r.code)
    local ok, _, code = rt:recall "x"
    assert.is_nil(ok)
    assert.are.equal("ENOTSUP", code)
  end)
end)

describe("storage: redaction", function()
  after_each(H.cleanup)

  it("masks what leaves through events, the audit and exports, not what the caller gets", function()
    local rt = H.runtime([[
local tg = require "toolgate"
tg.tool { name = "leak", run = function(args) return { out = "key AKIAIOSFODNN7EXAMPLE pw " .. args.pw } end }
tg.redact(function(s) return (s:gsub("opensesame", "[pw]")) end)
]], { db = ":memory:", session = "r", default_verdict = "allow" })
    local seen = {}
    local function strings(v, out)
      if type(v) == "string" then out[#out + 1] = v
      elseif type(v) == "table" then
        for k, x in pairs(v) do strings(k, out); strings(x, out) end
      end
      return out
    end
    rt:on_event(function(ev) seen[#seen + 1] = table.concat(strings(ev, {}), " ") end)
    assert(rt:session { id = "r" })
    local o = H.call(rt, "leak", { pw = "opensesame" })
    assert.are.equal("ok", o.status)
    assert.is_true(H.has(o.result.out, "AKIAIOSFODNN7EXAMPLE")) -- the caller's
    rt:run_once()
    assert.is_true(#seen > 0)
    for _, ev in ipairs(seen) do
      assert.is_nil(ev:find("AKIA", 1, true), ev)
      assert.is_nil(ev:find("opensesame", 1, true), ev)
    end
    local row = rt:audit()[1]
    assert.are.equal("key [REDACTED:aws-access-key] pw [pw]", row.result.out)
    assert.are.equal("[pw]", row.args.pw)
  end)

  it("allows one redactor per generation", function()
    local ok, err = toolgate.new { policies = H.policy_dir([[
local tg = require "toolgate"
tg.redact(function(s) return s end)
tg.redact(function(s) return s end)
]]), db = false }
    assert.is_nil(ok)
    assert.is_true(H.has(err, "a redactor is registered already"), err)
  end)
end)
