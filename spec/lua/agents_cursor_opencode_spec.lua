-- spec/lua/agents_cursor_opencode_spec.lua — Cursor's and OpenCode's
-- mapping tables (lua/toolgate/agents/cursor.lua, opencode.lua): their
-- tools as toolgate's, and a rewrite back into their input. The events
-- are canonical (what `toolgate hook cursor|opencode` makes of the
-- agent's own). From the repository root, with the module built:
-- LUA_CPATH="build/lua/?.so;;" lua5.4 /usr/bin/busted spec/lua/agents_cursor_opencode_spec.lua

package.path = "lua/?.lua;" .. package.path
local agent = require "toolgate.agent"

local A = require "spec.lua.agent_helpers"
local CWD, shown, event = A.CWD, A.shown, A.event

describe("Cursor's tools", function()
  local function map(tool, input, extra) return agent.map("cursor", event(tool, input, extra)) end

  it("maps Shell to exec, in the shell's own cwd", function()
    local m = map("Shell", { command = "make", cwd = "", timeout = 30000 })
    assert.are.same({ "exec", { command = "make", timeout_ms = 30000 } }, { m.tool, m.args })
    m = map("Shell", { command = "make", cwd = "/home/dev/proj/sub" })
    assert.are.equal("/home/dev/proj/sub", m.args.cwd)
    assert.are.same({ "Shell" }, m.names)
  end)

  it("gives post-hooks Shell's output as exec's", function()
    local m = map("Shell", { command = "ls" }, { tool_response = { output = "a\n", exitCode = 0 } })
    assert.are.same({ stdout = "a\n", exit_code = 0 }, m.result)
  end)

  it("maps Read, Write and Grep with their paths", function()
    local r = map("Read", { file_path = "/home/dev/proj/src/a.c" })
    assert.are.same({ "read_file", { path = "src/a.c" } }, { r.tool, r.args })
    assert.is_true(r.read_only)
    local w = map("Write", { file_path = "/home/dev/proj/.env", content = "x" })
    assert.are.same({ "write_file", { path = ".env", content = "x" } }, { w.tool, w.args })
    assert.are.same({ ".env" }, shown(w))
    local g = map("Grep", { pattern = "KEY", file_path = "/home/dev/proj/config/.env" })
    assert.are.equal("grep", g.tool)
    assert.are.same({ "config/.env" }, shown(g))
    assert.are.same({ "." }, shown(map("Grep", { pattern = "KEY" })))
  end)

  it("judges a Write without content under its own name, its path known", function()
    local w = map("Write", { file_path = "/home/dev/proj/src/.env" })
    assert.are.equal("cursor_write", w.tool)
    assert.are.same({ "src/.env" }, shown(w))
  end)

  it("gives a rewrite back in Cursor's input", function()
    local ev = event("Read", { file_path = "/home/dev/proj/README" })
    local input = agent.unmap("cursor", ev, "read_file", { path = "README.md" })
    assert.are.same({ file_path = "/home/dev/proj/README.md" }, input)
    ev = event("Shell", { command = "npm i x", cwd = "", timeout = 30000 })
    input = agent.unmap("cursor", ev, "exec", { command = "npm i x --ignore-scripts", timeout_ms = 30000 })
    assert.are.same({ command = "npm i x --ignore-scripts", cwd = "", timeout = 30000 }, input)
  end)
end)

describe("OpenCode's tools", function()
  local function map(tool, input, extra) return agent.map("opencode", event(tool, input, extra)) end

  it("maps bash to exec, in its workdir", function()
    local m = map("bash", { command = "make", timeout = 60000, description = "build" })
    assert.are.same({ "exec", { command = "make", timeout_ms = 60000 } }, { m.tool, m.args })
    m = map("bash", { command = "make", workdir = "/tmp" })
    assert.are.equal("/tmp", m.args.cwd)
    local ev = event("bash", { command = "make", workdir = "/tmp", description = "d" })
    assert.are.same({ command = "make -k", workdir = "/tmp", description = "d" },
      agent.unmap("opencode", ev, "exec", { command = "make -k", cwd = "/tmp" }))
  end)

  it("gives post-hooks bash's output as exec's", function()
    local m = map("bash", { command = "ls" },
      { tool_response = { title = "ls", output = "a\n", metadata = { output = "a\n", exit = 0 } } })
    assert.are.same({ stdout = "a\n", exit_code = 0 }, m.result)
  end)

  it("maps the file tools with their paths", function()
    local r = map("read", { filePath = "/home/dev/proj/src/a.c", limit = 10 })
    assert.are.same({ "read_file", { path = "src/a.c", limit = 10 } }, { r.tool, r.args })
    local w = map("write", { filePath = "/home/dev/proj/.env", content = "x" })
    assert.are.same({ "write_file", { path = ".env", content = "x" } }, { w.tool, w.args })
    local e = map("edit", { filePath = "/home/dev/proj/src/../.env", oldString = "a", newString = "b" })
    assert.are.equal("apply_patch", e.tool)
    assert.are.same({ ".env" }, shown(e))
    assert.is_truthy(e.args.patch:find("-a\n+b", 1, true))
    local p = map("apply_patch", { patchText = "*** Begin Patch\n*** Add File: src/x.c\n+int x;\n*** End Patch\n" })
    assert.are.same({ "apply_patch", { "src/x.c" } }, { p.tool, shown(p) })
    local bad, why = map("apply_patch", { patchText = "rm -rf /" })
    assert.is_nil(bad)
    assert.is_truthy(why:find("Begin Patch", 1, true))
    assert.are.same({ ".", "**/.env" }, shown(map("grep", { pattern = "KEY", include = ".env" })))
    assert.are.same({ "src", "src/*.c" }, shown(map("glob", { pattern = "*.c", path = "/home/dev/proj/src" })))
  end)

  it("knows OpenCode's names for check and test", function()
    local known = {}
    for _, k in ipairs(agent.known_names()) do known[k.agent .. ":" .. k.name] = k.tool or true end
    assert.are.equal("exec", known["opencode:bash"])
    assert.are.equal("apply_patch", known["opencode:edit"])
    assert.are.equal("exec", known["cursor:Shell"])
    -- Claude Code's Read comes first: a case naming Read is Claude Code's
    assert.are.equal("claude-code", agent.which("Read"))
    assert.are.equal("cursor", agent.which("Shell"))
    assert.are.equal("opencode", agent.which("todowrite"))
  end)
end)
