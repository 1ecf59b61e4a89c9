-- `toolgate test` and rt:test: policy unit tests. Cases in *_test.lua
-- files run through the real chain with the tool replaced by a fixture;
-- the report says PASS/FAIL per case with file:line and why.
local H = require "spec.lua.helpers"

local function sh_quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

-- Runs the toolgate command; returns exit code, stdout, stderr.
local function toolgate(args)
  local build = assert(os.getenv("TOOLGATE_BUILD_DIR"), "TOOLGATE_BUILD_DIR is not set")
  local dir = H.tmpdir()
  local ok, _, code = os.execute(string.format("timeout 60 %s/toolgate %s >%s/out 2>%s/err </dev/null",
    build, args, dir, dir))
  if type(ok) == "number" then code = ok / 256 end -- Lua 5.1: the raw status
  if ok == true then code = 0 end
  return code, H.read(dir .. "/out") or "", H.read(dir .. "/err") or ""
end

local POLICY = [[
local tg = require "toolgate"
tg.tool { name = "note", run = function(args) return { saved = args.text } end,
  schema = { type = "object", required = { "text" },
             properties = { text = { type = "string" } } } }
tg.rule { name = "no-secrets", priority = 10, tools = { "note" }, check = function(call)
  local t = call.args.text
  if type(t) == "string" and t:find("password", 1, true) then return tg.deny("no passwords in notes") end
end }
tg.rule { name = "short-notes", priority = 20, tools = { "note" }, check = function(call)
  if type(call.args.text) ~= "string" then return end
  if #call.args.text < 10 then return tg.allow("short") end
  return tg.ask("a long note")
end }
tg.before_tool("note", function(call)
  if type(call.args.text) ~= "string" then return end
  return tg.args({ text = (call.args.text:gsub("%s+$", "")) })
end)
tg.after_tool("note", function(call, res)
  if res.result then return tg.result({ saved = res.result.saved, checked = true }) end
end)
]]

-- A policies folder with POLICY and the given test files.
local function folder(tests, extra)
  local files = { ["10_note.lua"] = POLICY }
  for k, v in pairs(tests) do files[k] = v end
  for k, v in pairs(extra or {}) do files[k] = v end
  local dir = H.policy_dir(files)
  return dir
end

local function runtime(dir)
  return H.runtime(nil, { policies = dir })
end

describe("toolgate test", function()
  after_each(H.cleanup)

  it("passes the shipped policies' own tests", function()
    local code, out, err = toolgate("test policies")
    assert.are.equal(0, code, err .. out)
    assert.is_truthy(out:find("PASS  policies/10_shell_test.lua:%d+  rm %-rf / is denied"), out)
    assert.is_truthy(out:find("%d+ passed, 0 failed"), out)
    assert.is_nil(out:find("FAIL", 1, true))
  end)

  it("checks verdict, rule, reason, rewritten args and post-hooked results", function()
    local dir = folder { ["10_note_test.lua"] = [[
return {
  { name = "a password is denied", tool = "note", args = { text = "my password" },
    expect = "deny", rule = "no-secrets", reason_match = "^no passwords" },
  { name = "short notes are allowed", tool = "note", args = { text = "hi   " },
    expect = "allow", rule = "short-notes", expect_args = { text = "hi" } },
  { name = "long notes are asked about", tool = "note", args = { text = "a long long note" },
    expect = "ask", rule = "short-notes", reason_match = "long" },
  { name = "the post-hook marks the result", tool = "note", args = { text = "hi" },
    result = { saved = "hi" }, expect_result = { saved = "hi", checked = true } },
  { name = "asked calls go on to the post-hooks", tool = "note", args = { text = "a long long note" },
    result = { saved = "x" }, expect = "ask", expect_result = { saved = "x", checked = true } },
  { name = "the tool's error passes through", tool = "note", args = { text = "hi" },
    error = { code = "DISK_FULL", message = "no space" }, expect_error_code = "DISK_FULL" },
  { name = "args the schema refuses", tool = "note", args = { text = 5 },
    expect_error_code = "INVALID_ARGS" },
}
]] }
    local rt = runtime(dir)
    local r = assert(rt:test())
    for _, c in ipairs(r.cases) do
      assert.is_true(c.passed, c.name .. ": " .. table.concat(c.failures, "; "))
    end
    assert.are.equal(7, r.passed)
    assert.are.equal(0, r.failed)
    local c = r.cases[2]
    assert.are.equal("allow", c.decision.verdict)
    assert.are.equal("short-notes", c.decision.rule)
    assert.is_truthy(c.decision.where:match("10_note%.lua:9$"), c.decision.where)
    assert.are.same({ text = "hi" }, c.args_run)
    assert.is_truthy(c.where:match("10_note_test%.lua:4$"), c.where)
    local code, out = toolgate("test " .. sh_quote(dir))
    assert.are.equal(0, code, out)
    assert.is_truthy(out:find("7 passed, 0 failed", 1, true), out)
  end)

  it("says why a case fails, with file:line of the case and of the rule, and exits 1", function()
    local dir = folder { ["10_note_test.lua"] = [[
return {
  { name = "ok", tool = "note", args = { text = "hi" }, expect = "allow" },
  { name = "passwords are fine (wrong)", tool = "note", args = { text = "password" },
    expect = "allow", rule = "short-notes" },
  { name = "args (wrong)", tool = "note", args = { text = "hi " }, expect_args = { text = "hi " } },
  { name = "a typo in the tool", tool = "note_", args = { text = "hi" }, expect = "allow" },
}
]] }
    local code, out = toolgate("test " .. sh_quote(dir))
    assert.are.equal(1, code, out)
    assert.is_truthy(out:find("PASS  [^\n]*10_note_test.lua:2  ok"), out)
    assert.is_truthy(out:find("FAIL  [^\n]*10_note_test.lua:3  passwords are fine %(wrong%)\n"
      .. "      expected allow by rule 'short%-notes', got deny by rule 'no%-secrets' %([^\n]*10_note.lua:5%): "
      .. "no passwords in notes"), out)
    assert.is_truthy(out:find([[expected args after the pre-hooks {"text":"hi "}, got {"text":"hi"}]], 1, true), out)
    assert.is_truthy(out:find("the call ends error with VALIDATE UNKNOWN_TOOL: unknown tool 'note_'", 1, true), out)
    assert.is_truthy(out:find("1 passed, 3 failed", 1, true), out)
  end)

  it("takes cases written as each agent's own event, and names a misspelt agent", function()
    local dir = H.policy_dir {
      ["10.lua"] = [[
local tg = require "toolgate"
tg.rule { name = "no-force", priority = 1, tools = { "exec" }, check = function(c)
  if tostring(c.args.command):find("push %-f") then return tg.deny("no force pushes") end end }
tg.rule { name = "rest", priority = 9, check = function() return tg.allow() end }
]],
      ["10_test.lua"] = [==[
local push = "git push -f origin main"
return {
  { name = "Claude Code", event = { hook_event_name = "PreToolUse", transcript_path = "/t", cwd = "/",
      tool_name = "Bash", tool_input = { command = push } }, expect = "deny", rule = "no-force" },
  { name = "Codex", agent = "codex", event = { hook_event_name = "PreToolUse", turn_id = "t", cwd = "/",
      tool_name = "Bash", tool_input = { command = push } }, expect = "deny", rule = "no-force" },
  { name = "Gemini CLI", event = { hook_event_name = "BeforeTool", session_id = "g", cwd = "/",
      tool_name = "run_shell_command", tool_input = { command = push } }, expect = "deny", rule = "no-force" },
  { name = "Copilot CLI", agent = "copilot", event_name = "preToolUse",
    event = { sessionId = "c", cwd = "/", toolName = "bash", toolArgs = '{"command": "git push -f origin main"}' },
    expect = "deny", rule = "no-force" },
  { name = "Cursor", event = { conversation_id = "c", hook_event_name = "preToolUse", session_id = "c",
      workspace_roots = { "/" }, cwd = "", tool_name = "Shell", tool_input = { command = push } },
    expect = "deny", rule = "no-force" },
  { name = "OpenCode", event = { hook_event_name = "PreToolUse", toolgate_agent = "opencode", session_id = "o",
      cwd = "/", tool_name = "bash", tool_input = { command = "ls" } }, expect = "allow", rule = "rest" },
  { name = "a typo", agent = "gemni", event = { hook_event_name = "BeforeTool", cwd = "/",
      tool_name = "run_shell_command", tool_input = { command = "ls" } }, expect = "allow" },
  { name = "no such event", agent = "copilot", event_name = "preToolUs",
    event = { sessionId = "c", cwd = "/", toolName = "bash", toolArgs = '{"command": "ls"}' }, expect = "allow" },
}
]==] }
    local code, out = toolgate("test " .. sh_quote(dir))
    assert.are.equal(1, code, out)
    assert.is_truthy(out:find("6 passed, 2 failed", 1, true), out)
    assert.is_truthy(out:find("unknown agent 'gemni', did you mean 'gemini'?", 1, true), out)
    assert.is_truthy(out:find("has no event 'preToolUs', did you mean 'preToolUse'?", 1, true), out)
    -- the Lua module's rt:test reads them the same way
    local r = assert(runtime(dir):test())
    assert.are.equal(6, r.passed)
    for _, c in ipairs(r.cases) do
      if c.name == "Copilot CLI" then assert.are.equal("exec", c.tool_run) end
    end
  end)

  it("takes cases in the agent's terms: its tools mapped as its hook's, MCP tools, stand-ins", function()
    local dir = H.policy_dir {
      ["10.lua"] = [[
local tg = require "toolgate"
tg.rule { name = "no-env", priority = 1, check = function(c) for _, p in ipairs(c.paths or {}) do if p.path:match("%.env$") then return tg.deny("env: " .. p.path) end end end }
tg.rule { name = "no-force", priority = 2, tools = { "Bash" }, check = function(c) if c.args.command:match("push %-%-force") then return tg.deny("no force") end end }
tg.rule { name = "issues", priority = 3, tools = { "github__create_issue" }, check = function() return tg.ask("an issue?") end }
tg.rule { name = "rest", priority = 9, check = function() return tg.allow() end }
]],
      ["10_test.lua"] = [[
return {
  { name = "Bash", tool = "Bash", args = { command = "git push --force" }, expect = "deny", rule = "no-force" },
  { name = "Codex's Bash", agent = "codex", tool = "Bash", args = { command = "git push --force" }, rule = "no-force" },
  { name = "Edit", tool = "Edit", args = { file_path = ".env", old_string = "a", new_string = "b" },
    expect = "deny", rule = "no-env", expect_tool = "apply_patch" },
  { name = "MultiEdit", tool = "MultiEdit", args = { file_path = "x/.env", edits = {} }, rule = "no-env" },
  { name = "Glob", tool = "Glob", args = { pattern = "**/.env" }, rule = "no-env" },
  { name = "the agent's MCP tool", tool = "mcp__github__create_issue", args = { title = "x" }, expect = "ask", rule = "issues" },
  { name = "an upstream's tool", tool = "github__create_issue", stand_in = true, args = {}, expect = "ask", rule = "issues" },
  { name = "WebFetch", tool = "WebFetch", args = { url = "https://example.com" }, expect = "allow", rule = "rest" },
  { name = "no one's", tool = "github__close_issue", args = {}, expect = "allow" },
  { name = "an event as the agent sends it", event = { hook_event_name = "PreToolUse", cwd = "/",
      tool_name = "Write", tool_input = { file_path = "/srv/.env", content = "K=v" } },
    expect = "deny", rule = "no-env", expect_tool = "write_file" },
  { name = "Codex's event (turn_id)", event = { hook_event_name = "PreToolUse", turn_id = "t", cwd = "/",
      tool_name = "apply_patch", tool_input = { command = "*** Begin Patch\n*** Add File: .env\n+K=v\n*** End Patch\n" } },
    expect = "deny", rule = "no-env" },
}
]] }
    local code, out = toolgate("test " .. sh_quote(dir))
    assert.are.equal(1, code, out)
    assert.is_truthy(out:find("10 passed, 1 failed", 1, true), out)
    assert.is_truthy(out:find("FAIL  [^\n]*no one's\n"), out)
    assert.is_truthy(out:find("UNKNOWN_TOOL: unknown tool 'github__close_issue' (a tool of an agent: "
      .. "agent = \"claude-code\", \"codex\", \"gemini\", \"copilot\", \"cursor\" or \"opencode\"; of an MCP server toolgate serves: stand_in = true)", 1, true), out)
  end)

  it("fails a case whose rule or hook breaks, even when the verdict is as expected", function()
    local dir = folder({ ["10_note_test.lua"] = [[
return {
  { name = "broken rule", tool = "note", args = { text = "hi" }, expect = "deny" },
  { name = "broken rule, expected", tool = "note", args = { text = "hi" },
    expect_error_code = "RULE_ERROR" },
}
]] }, { ["05_broken.lua"] = [[
local tg = require "toolgate"
tg.rule { name = "broken", priority = 1, check = function(call) return call.nope.x end }
]] })
    local rt = runtime(dir)
    local r = assert(rt:test())
    assert.is_false(r.cases[1].passed)
    assert.is_truthy(r.cases[1].failures[1]:find("POLICY RULE_ERROR", 1, true), r.cases[1].failures[1])
    assert.is_true(r.cases[2].passed, table.concat(r.cases[2].failures, "; "))
  end)

  it("runs no tool", function()
    local mark = H.tmpdir() .. "/ran"
    local dir = H.policy_dir { ["x_test.lua"] = string.format([[
return {
  { name = "touch", tool = "exec", args = { command = "touch %s" }, expect = "ask",
    result = { exit_code = 0, stdout = "", stderr = "" } },
  { name = "write", tool = "write_file", args = { path = "%s", content = "x" }, expect = "ask",
    result = { path = "x" } },
}
]], mark, mark) }
    local rt = runtime(dir)
    local r = assert(rt:test())
    assert.are.equal(2, r.passed, r.cases[1].failures[1])
    assert.is_false(H.exists(mark))
  end)

  it("filters cases with --run PATTERN, and refuses a pattern matching none", function()
    local dir = folder { ["10_note_test.lua"] = [[
return {
  { name = "deny: password", tool = "note", args = { text = "password" }, expect = "deny" },
  { name = "allow: short", tool = "note", args = { text = "hi" }, expect = "allow" },
}
]] }
    local code, out = toolgate("test " .. sh_quote(dir) .. " --run '^deny'")
    assert.are.equal(0, code, out)
    assert.is_truthy(out:find("1 passed, 0 failed (1 not matching --run)", 1, true), out)
    local code2, _, err = toolgate("test " .. sh_quote(dir) .. " --run nothing")
    assert.are.equal(2, code2)
    assert.is_truthy(err:find("no case name matches --run 'nothing'", 1, true), err)
    local code3, _, err3 = toolgate("test " .. sh_quote(dir) .. " --run '['")
    assert.are.equal(2, code3)
    assert.is_truthy(err3:find("bad pattern", 1, true), err3)
  end)

  it("prints the report as one JSON object with --json", function()
    local dir = folder { ["10_note_test.lua"] = [[
return { { name = "short", tool = "note", args = { text = "hi" }, expect = "deny" } }
]] }
    local code, out = toolgate("test " .. sh_quote(dir) .. " --json")
    assert.are.equal(1, code)
    assert.are.equal(1, select(2, out:gsub("\n", "")))
    assert.is_truthy(out:find('"passed":0', 1, true), out)
    assert.is_truthy(out:find('"failed":1', 1, true), out)
    assert.is_truthy(out:find('"failures":["expected deny, got allow by rule', 1, true), out)
  end)

  it("reads cases strictly: unknown keys, bad values and empty cases are load errors (exit 2)", function()
    local bad = {
      { [[return { { name = "x", tool = "note", expct = "deny" } }]],
        "x_test.lua:1: case 'x': unknown key 'expct' (known: name, tool, args, session, metadata, "
        .. "expect, rule, reason_match, expect_args, expect_tool, result, error, expect_result, "
        .. "expect_error_code, agent, cwd, stand_in, read_only, event, event_name, network)" },
      { [[return { { name = "x", event = { tool_name = "Bash" }, expect = "deny" } }]],
        "'event' must be an agent's hook event with a tool_name and a tool_input" },
      { [[return { { name = "x", tool = "note", expect = "maybe" } }]], "'expect' must be \"allow\", \"deny\" or \"ask\"" },
      { [[return { { name = "x", tool = "note" } }]], "the case checks nothing" },
      { [[return { { name = "x", tool = "note", expect = "allow" }, { name = "x", tool = "note", expect = "deny" } }]],
        "another case of this file has the same name" },
      { [[return { { name = "x", tool = "note", expect = "allow", args = { f = function() end } } }]],
        "'args' is not JSON" },
      { [[return { { name = "x", tool = "note", expect = "allow", error = { cod = "X" } } }]],
        "case 'x': error: unknown key 'cod'" },
      { [[return "cases"]], "a test file returns a list of cases" },
      { [[error("boom")]], "x_test.lua:1: boom" },
      { [[os.execute("true")]], "os.execute is not available" },
    }
    for _, b in ipairs(bad) do
      local dir = folder { ["x_test.lua"] = b[1] }
      local code, out, err = toolgate("test " .. sh_quote(dir))
      assert.are.equal(2, code, b[1] .. "\n" .. out)
      assert.is_truthy(err:find(b[2], 1, true), b[1] .. "\nstderr: " .. err)
    end
    local code, _, err = toolgate("test " .. sh_quote(H.policy_dir { ["10_x.lua"] = "" }))
    assert.are.equal(2, code)
    assert.is_truthy(err:find("no test files", 1, true), err)
  end)

  it("test files are not policies: the loader skips *_test.lua and tests/", function()
    local dir = folder({ ["10_note_test.lua"] = [[
local tg = require "toolgate"
assert(tg.rule == nil, "test files get no registration API")
return { { name = "json helpers", tool = "note", args = { text = "hi" }, expect = "allow",
  expect_result = tg.null } }
]] })
    os.execute("mkdir -p " .. sh_quote(dir .. "/tests"))
    H.write(dir .. "/tests/more_test.lua", [[
return { { name = "in tests/", tool = "note", args = { text = "password" }, expect = "deny" } }
]])
    local rt = runtime(dir)
    local files = rt:describe().files
    assert.are.equal(1, #files)
    assert.is_truthy(files[1]:match("10_note%.lua$"))
    local r = assert(rt:test())
    assert.are.equal(2, r.passed, r.cases[1].failures[1])
    assert.is_truthy(r.files[2]:match("tests/more_test%.lua$"), r.files[2])
  end)
end)
