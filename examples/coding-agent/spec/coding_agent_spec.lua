-- The coding-agent example through the host module, with real files and
-- real commands in a temporary workspace: what an agent may do without
-- asking, what it is asked, what it may never do, and what it never sees.
-- Run from the repository root: busted examples (CI runs it).
local H = require "spec.lua.helpers"

local POLICIES = "examples/coding-agent"

-- A workspace with src/, docs/ and a secrets file; a runtime over it whose
-- approver answers from `answers` (by tool) and records every ask.
local function setup(answers)
  local ws = H.tmpdir()
  assert(os.execute("mkdir -p " .. ws .. "/src " .. ws .. "/docs"))
  H.write(ws .. "/src/main.c", "int main(void) { return 0; }\n")
  H.write(ws .. "/.env", "AWS_ACCESS_KEY_ID=AKIAABCDEFGHIJKLMNOP\nDB_PASSWORD=hunter2\n")
  local asked = {}
  local rt = H.runtime(nil, {
    policies = POLICIES, workspace = ws,
    approve = function(req)
      asked[#asked + 1] = req.tool .. ": " .. (req.prompt or "")
      return (answers or {})[req.tool] or "reject"
    end })
  return rt, ws, asked
end

local function exec(rt, command, ws)
  return H.call(rt, "exec", { command = command, cwd = ws })
end

describe("the coding-agent example", function()
  after_each(H.cleanup)

  it("reads without asking", function()
    local rt, ws, asked = setup()
    assert.are.equal("ok", H.call(rt, "read_file", { path = "src/main.c" }).status)
    assert.are.equal("ok", H.call(rt, "list_dir", { path = "." }).status)
    local out = exec(rt, "ls src && grep -c main src/main.c", ws)
    assert.are.equal("ok", out.status)
    assert.are.equal("main.c\n1\n", out.result.stdout)
    assert.are.same({}, asked)
  end)

  it("writes inside src/ and docs/ without asking, and asks elsewhere", function()
    local rt, ws, asked = setup()
    assert.are.equal("ok", H.call(rt, "write_file", { path = "src/util.c", content = "int x;\n" }).status)
    assert.are.equal("ok", H.call(rt, "write_file", { path = "docs/notes.md", content = "# Notes\n" }).status)
    assert.are.same({}, asked)
    local out = H.call(rt, "write_file", { path = "Makefile", content = "all:\n" })
    assert.are.equal("rejected", out.status)
    assert.are.same({ "write_file: write Makefile (outside src/ and docs/)" }, asked)
    assert.is_false(H.exists(ws .. "/Makefile")) -- the tool never ran
    assert.are.equal("int x;\n", H.read(ws .. "/src/util.c"))
  end)

  it("never force-pushes, whatever the approver would say", function()
    local rt, ws, asked = setup { exec = "approve" }
    assert(os.execute("cd " .. ws .. " && git init -q . 2>/dev/null"))
    for _, cmd in ipairs { "git push --force origin main", "git push -f", "make && git push origin +main",
                           "bash -c 'git push --force'" } do
      local out = exec(rt, cmd, ws)
      assert.are.equal("denied", out.status, cmd)
      assert.is_truthy(H.has(out.error.message, "rewrites the remote's history"))
    end
    assert.are.same({}, asked) -- a deny is not a question
  end)

  it("redacts secrets from what the agent reads", function()
    local rt, ws = setup { exec = "approve" }
    local out = H.call(rt, "read_file", { path = ".env" })
    assert.are.equal("ok", out.status)
    local text = out.result.content
    assert.is_falsy(H.has(text, "AKIAABCDEFGHIJKLMNOP"))
    assert.is_falsy(H.has(text, "hunter2"))
    assert.is_truthy(H.has(text, "AWS_ACCESS_KEY_ID=[redacted:aws-key]"))
    out = exec(rt, "cat .env; echo 'Authorization: Bearer abc.def-123'", ws)
    assert.are.equal("ok", out.status)
    assert.is_falsy(H.has(out.result.stdout, "hunter2"))
    assert.is_falsy(H.has(out.result.stdout, "abc.def-123"))
  end)

  it("remembers an approve-always answer", function()
    local rt, ws, asked = setup { exec = "always" }
    for i = 1, 3 do
      local out = exec(rt, "touch build-" .. i .. ".stamp", ws)
      assert.are.equal("ok", out.status)
    end
    assert.are.equal(1, #asked) -- asked once, remembered for the session
    assert.is_true(H.exists(ws .. "/build-3.stamp"))
    -- a remembered approval never lifts a deny
    assert.are.equal("denied", exec(rt, "git push --force", ws).status)
  end)
end)
