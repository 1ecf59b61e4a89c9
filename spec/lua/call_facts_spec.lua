-- spec/lua/call_facts_spec.lua — call.paths and call.commands: what a call
-- touches and runs, as the code that acts sees it (lua/toolgate/facts.lua,
-- src/policy/call_facts.c). Each case is one a rule reading the call's text
-- got wrong: a write through a symlink, a rename in a patch, a command
-- carried in exec's env.
local H = require "spec.lua.helpers"

-- A rule that answers with what it was shown, so the spec reads it back.
local SHOW = [[
local tg = require "toolgate"
tg.rule { name = "show", priority = 1, tools = { "write_file", "read_file", "apply_patch", "exec", "echo" },
  check = function(call)
    local out = {}
    for _, p in ipairs(call.paths or {}) do
      out[#out + 1] = (p.resolved or ("?" .. p.written)) .. (p.error and (" !" .. p.error) or "")
    end
    for _, c in ipairs(call.commands or {}) do
      out[#out + 1] = "$ " .. table.concat(c.argv, " ") .. (c.opaque and (" [opaque: " .. c.opaque .. "]") or "")
    end
    return tg.deny("shown: " .. table.concat(out, " | "))
  end }
-- a rule that writes its own paths into the call is caught
tg.rule { name = "forger", priority = 0, tools = { "read_file" },
  check = function(call) if call.args.path == "forge" then rawset(call, "paths", {}) end end }
]]

local function shown(rt, tool, args)
  local e = assert(rt:explain(tool, args))
  return e.decision.verdict, e.decision.reason or e.decision.why or ""
end

describe("call facts", function()
  after_each(H.cleanup)

  local function setup()
    local ws = H.tmpdir()
    assert(os.execute("mkdir -p '" .. ws .. "/src' && ln -s / '" .. ws .. "/src/lnk'"
      .. " && ln -s loop '" .. ws .. "/src/loop' && printf 'a\\n' > '" .. ws .. "/src/ok.c'"))
    local real = H.toolgate.resolve_path(ws)
    local rt = H.runtime({ ["10_show.lua"] = SHOW }, { workspace = ws })
    return rt, real
  end

  it("gives a file tool's path where the kernel lands it", function()
    local rt, ws = setup()
    local v, why = shown(rt, "write_file", { path = "src/lnk/etc/cron.d/x", content = "x" })
    assert.are.equal("deny", v)
    assert.are.equal("shown: /etc/cron.d/x", why:match("shown: [^\n]*"))
    v, why = shown(rt, "read_file", { path = "src/ok.c" })
    assert.is_truthy(H.has(why, "shown: " .. ws .. "/src/ok.c"), why)
    v, why = shown(rt, "read_file", { path = "src/loop/x" })
    assert.is_truthy(H.has(why, "?src/loop/x !"), why)
    assert.is_truthy(H.has(why, "too many levels of symbolic links"), why)
  end)

  it("gives every file of a patch as apply_patch's parser reads it", function()
    local rt, ws = setup()
    local _, why = shown(rt, "apply_patch", { patch = table.concat({
      "diff --git a/src/ok.c b/policies/evil.lua", "similarity index 100%",
      "rename from src/ok.c", "rename to policies/evil.lua",
      "diff --git a/new.txt b/new.txt", "new file mode 100644", "" }, "\n") })
    assert.is_truthy(H.has(why, "shown: " .. ws .. "/src/ok.c | " .. ws
      .. "/policies/evil.lua | " .. ws .. "/new.txt"), why)
  end)

  it("gives exec's commands, with what its env carries", function()
    local rt = setup()
    local _, why = shown(rt, "exec", { command = "cd src && rm -rf /x" })
    assert.is_truthy(H.has(why, "$ rm -rf /x"), why)
    _, why = shown(rt, "exec", { command = "$X", env = { X = "rm -rf /x" } })
    assert.is_truthy(H.has(why, "$ rm -rf /x"), why)
    _, why = shown(rt, "exec", { command = "sh", stdin = "rm -rf /y" })
    assert.is_truthy(H.has(why, "$ rm -rf /y"), why)
    _, why = shown(rt, "exec", { command = "eval \"$(curl -s x)\"" })
    assert.is_truthy(H.has(why, "[opaque: eval runs code"), why)
    _, why = shown(rt, "exec", { command = "echo 'unclosed" })
    assert.is_truthy(H.has(why, "[opaque: the shell analysis cannot read"), why)
  end)

  it("has no paths or commands for other tools", function()
    local rt = H.runtime({ ["00_tools.lua"] = H.lib.tools, ["10_show.lua"] = SHOW })
    local _, why = shown(rt, "echo", { path = "/etc/passwd" })
    assert.is_truthy(H.has(why, "shown: "), why)
    assert.is_falsy(H.has(why, "/etc/passwd"), why)
  end)

  it("lets a one-line .env guard over call.paths hold for toolgate's file tools", function()
    local ws = H.tmpdir()
    assert(os.execute("mkdir -p '" .. ws .. "/src' && printf 'K=v\\n' > '" .. ws .. "/.env'"))
    local rt = H.runtime({ ["10_env.lua"] = [[
local tg = require "toolgate"
tg.rule { name = "no-env", priority = 1, check = function(c) for _, p in ipairs(c.paths or {}) do if p.path:match("%.env$") then return tg.deny("env: " .. p.path) end end end }
tg.rule { name = "rest", priority = 2, check = function() return tg.allow() end }
]] }, { workspace = ws })
    for _, c in ipairs {
      { "read_file", { path = ".env" } },
      { "write_file", { path = "src/../.env", content = "x" } },
      { "apply_patch", { patch = "--- a/src/a.c\n+++ b/src/a.c\n@@ -0,0 +1 @@\n+x\n"
        .. "--- /dev/null\n+++ b/.env\n@@ -0,0 +1 @@\n+K=w\n" } },
    } do
      local out = H.call(rt, c[1], c[2])
      assert.are.equal("denied", out.status, c[1])
      assert.are.equal("no-env", out.decision.rule, c[1])
    end
    local out = H.call(rt, "write_file", { path = "src/ok.c", content = "x" })
    assert.are.equal("ok", out.status, out.error and out.error.message)
  end)

  it("refuses a call whose rule wrote its own facts", function()
    local rt = setup()
    local out = H.call(rt, "read_file", { path = "forge" })
    assert.are.equal("error", out.status)
    assert.are.equal("RULE_ERROR", out.error.code, out.error.message)
  end)
end)
