-- spec/lua/agent_spec.lua — toolgate.agent and the agents' mapping tables
-- (lua/toolgate/agent.lua, lua/toolgate/agents/*.lua): how a coding
-- agent's tool call becomes toolgate's, and a rewrite goes back. The
-- paths are resolved by the toolgate module's resolve_path (the policies'
-- tg.resolve_path: spec/c/test_hooks.c runs the tables inside the
-- policies' sandbox, through `toolgate hook`). From the repository root,
-- with the module built: LUA_CPATH="build/lua/?.so;;" lua5.4
-- /usr/bin/busted spec/lua/agent_spec.lua

package.path = "lua/?.lua;" .. package.path
local agent = require "toolgate.agent"

local A = require "spec.lua.agent_helpers"
local CWD, shown, event = A.CWD, A.shown, A.event

describe("paths", function()
  it("normalizes lexically, .. cannot climb above the root", function()
    assert.are.equal("/a/b/d", agent.norm("/a/./b//c/../d"))
    assert.are.equal("/etc", agent.norm("/../../etc"))
    assert.are.equal("../x", agent.norm("a/../../x"))
    assert.are.equal(".", agent.norm("a/.."))
  end)

  it("is relative to the cwd inside it, absolute outside", function()
    assert.are.equal("src/a.c", agent.rel("/home/dev/proj/src/a.c", CWD))
    assert.are.equal("src/a.c", agent.rel("src/a.c", CWD))
    assert.are.equal(".", agent.rel("/home/dev/proj/", CWD))
    assert.are.equal("/home/dev/projector/x", agent.rel("/home/dev/projector/x", CWD))
    assert.are.equal("Makefile", agent.rel("/home/dev/proj/src/../Makefile", CWD))
    assert.are.equal("/etc/passwd", agent.rel("/home/dev/proj/../../../etc/passwd", CWD))
    assert.are.equal("/etc/passwd", agent.rel("../../../etc/passwd", CWD))
    assert.are.equal("/home/dev/proj/src/a.c", agent.abs("src/a.c", CWD))
    assert.are.equal("/x", agent.abs("/x", CWD))
  end)
end)

describe("diffs", function()
  it("makes an edit a unified diff of its file", function()
    local d = agent.edit_patch("src/a.c", { { old_string = "a\nb", new_string = "c\n" } })
    assert.are.equal("--- a/src/a.c\n+++ b/src/a.c\n@@ -1,2 +1,1 @@\n-a\n-b\n+c\n", d)
    assert.are.equal("--- /etc/x\n+++ /etc/x\n@@ -0,0 +1,1 @@\n+y\n",
      agent.edit_patch("/etc/x", { { old_string = "", new_string = "y" } }))
  end)

  it("reads Codex's patch envelope into a diff and its paths", function()
    local d, paths = agent.codex_patch(table.concat({
      "*** Begin Patch",
      "*** Add File: docs/new.md",
      "+hello",
      "*** Update File: src/a.c",
      "*** Move to: src/b.c",
      "@@ int main",
      " ctx",
      "-old",
      "+new",
      "*** End of File",
      "*** Delete File: /home/dev/proj/old.txt",
      "*** End Patch", "" }, "\n"), CWD)
    assert.are.same({ "docs/new.md", "src/a.c", "src/b.c", CWD .. "/old.txt" }, paths) -- as written: agent.map resolves them
    assert.are.equal(table.concat({
      "--- /dev/null", "+++ b/docs/new.md", "@@ -0,0 +1,1 @@", "+hello",
      "--- a/src/a.c", "+++ b/src/b.c", "@@ -1,2 +1,2 @@", " ctx", "-old", "+new",
      "--- a/old.txt", "+++ /dev/null", "" }, "\n"), d)
  end)

  it("refuses what is not an envelope", function()
    local cases = {
      { "--- a/x\n+++ b/x\n", "Begin Patch" },
      { "*** Begin Patch\n*** Add File: x\n+y\n", "End Patch" },
      { "*** Begin Patch\n*** End Patch\n", "names no file" },
      { "*** Begin Patch\nstray\n*** End Patch\n", "outside any file" },
      { "*** Begin Patch\n*** Add File: x\nno plus\n*** End Patch\n", "start with '+'" },
      { "*** Begin Patch\n*** Update File: x\n@@\n?odd\n*** End Patch\n", "not a change line" },
    }
    for _, c in ipairs(cases) do
      local d, why = agent.codex_patch(c[1], CWD)
      assert.is_nil(d)
      assert.is_truthy(why:find(c[2], 1, true), why)
    end
    assert.is_nil((agent.codex_patch(42, CWD)))
  end)

  -- Codex reads its envelope line by line with Rust's lines() (a CR before
  -- the line feed is no part of the line) and trims a file header before
  -- taking its path: "*** Delete File: .env " deletes ".env". The rules
  -- must judge that same path, not ".env " or ".env\r".
  it("reads a header's path as Codex does (CR, trailing white space)", function()
    local _, paths = agent.codex_patch(
      "*** Begin Patch\r\n*** Delete File: src/.env \r\n*** Add File: src/b.c\t\n+x\r\n"
      .. "*** Update File: src/c.c\r\n*** Move to: src/d.c\r\n@@\r\n-a\r\n+b\r\n*** End Patch\r\n", CWD)
    assert.are.same({ "src/.env", "src/b.c", "src/c.c", "src/d.c" }, paths)
    local d = agent.codex_patch("*** Begin Patch\n*** Update File: a.c\r\n@@\r\n-x\r\n+y\r\n*** End Patch\n", CWD)
    assert.are.equal("--- a/a.c\n+++ b/a.c\n@@ -1,1 +1,1 @@\n-x\n+y\n", d)
    -- a line's own white space is kept: only headers are trimmed
    d = agent.codex_patch("*** Begin Patch\n*** Add File: a.c\n+x \194\160\n*** End Patch\n", CWD)
    assert.are.equal("--- /dev/null\n+++ b/a.c\n@@ -0,0 +1,1 @@\n+x \194\160\n", d)
    -- white space Rust trims and Lua's %s does not (U+00A0, U+3000): refused
    for _, ws in ipairs({ "\194\160", "\227\128\128", "\226\128\168" }) do
      local none, why = agent.codex_patch("*** Begin Patch\n*** Delete File: .env" .. ws
        .. "\n*** End Patch\n", CWD)
      assert.is_nil(none)
      assert.is_truthy(why:find("white space", 1, true), why)
    end
  end)

  it("refuses text after the end of the envelope, which Codex refuses", function()
    local d, why = agent.codex_patch("*** Begin Patch\n*** Add File: src/a\n+x\n*** End Patch\n"
      .. "*** Delete File: .env\n*** End Patch\n", CWD)
    assert.is_nil(d)
    assert.is_truthy(why:find("after '*** End Patch'", 1, true), why)
  end)
end)

describe("Claude Code's tools", function()
  local function map(tool, input)
    local m, why = agent.map("claude-code", event(tool, input))
    assert.is_table(m, why)
    m.facts, m.paths = m.paths, shown(m)
    return m
  end

  it("maps Bash to exec, keeping a timeout that is one", function()
    local m = map("Bash", { command = "ls", timeout = 5000, description = "d" })
    assert.are.equal("exec", m.tool)
    assert.are.same({ command = "ls", timeout_ms = 5000 }, m.args)
    assert.are.same({ command = "ls" }, map("Bash", { command = "ls", timeout = 1.5 }).args)
    assert.are.same({ command = "ls" }, map("Bash", { command = "ls", timeout = -1 }).args)
  end)

  it("maps the file tools, paths relative to the cwd", function()
    local r = map("Read", { file_path = CWD .. "/src/a.c", offset = 10, limit = 0 })
    assert.are.equal("read_file", r.tool)
    assert.is_true(r.read_only)
    assert.are.same({ path = "src/a.c", offset = 10 }, r.args)
    assert.are.same({ "src/a.c" }, r.paths)
    local w = map("Write", { file_path = "/etc/hosts", content = "x" })
    assert.are.same({ "write_file", { path = "/etc/hosts", content = "x" } }, { w.tool, w.args })
    local e = map("MultiEdit", { file_path = CWD .. "/a.md",
      edits = { { old_string = "a", new_string = "b" }, { old_string = "c", new_string = "d" } } })
    assert.are.equal("apply_patch", e.tool)
    assert.are.equal("--- a/a.md\n+++ b/a.md\n@@ -1,1 +1,1 @@\n-a\n+b\n@@ -1,1 +1,1 @@\n-c\n+d\n",
      e.args.patch)
    assert.are.same({ "a.md" }, e.paths)
  end)

  -- a rule walking agent.paths must see the file a notebook edit changes
  -- and the folder a search looks in, as it sees an Edit's
  it("gives the paths of its own tools that name a file or folder", function()
    local home = os.getenv("HOME")
    assert.are.same({ "nb/a.ipynb" }, map("NotebookEdit", { notebook_path = CWD .. "/nb/a.ipynb",
      new_source = "x" }).paths)
    assert.are.same({ "/etc/x.ipynb" }, map("NotebookRead", { notebook_path = "/etc/x.ipynb" }).paths)
    assert.are.same({ home .. "/.aws" }, map("Grep", { pattern = "key", path = "~/.aws" }).paths)
    -- a search looks in its folder, the cwd without one, and where its
    -- pattern reaches; Grep's glob matches names at any depth below it
    assert.are.same({ ".", "**/.env" }, map("Grep", { pattern = "KEY", glob = ".env" }).paths)
    assert.are.same({ "src", "src/a/*.c" }, map("Grep", { pattern = "x", path = "src", glob = "a/*.c" }).paths)
    assert.are.same({ "." }, map("Grep", { pattern = "KEY" }).paths)
    assert.are.same({ "src", "src/*.c" }, map("Glob", { pattern = "*.c", path = CWD .. "/src" }).paths)
    assert.are.same({ ".", "*.c" }, map("Glob", { pattern = "*.c" }).paths)
    assert.are.same({ ".", home .. "/.ssh/*" }, map("Glob", { pattern = "~/.ssh/*" }).paths)
    assert.are.same({ ".", "/etc/*.conf" }, map("Glob", { pattern = "/etc/*.conf" }).paths)
    assert.are.same({ "src", "/home/dev/**/.env" },
      map("Glob", { pattern = "../../**/.env", path = CWD .. "/src" }).paths)
    assert.are.same({ ".", "/home/dev/x/*" }, map("Glob", { pattern = "../x/*" }).paths)
    assert.is_nil(map("WebFetch", { url = "https://x", prompt = "p" }).paths)
  end)

  -- Claude Code reads "~/x" in a file tool as the home folder's x, as a
  -- shell does: judged as the cwd's folder "~", a read of ~/.ssh/id_rsa
  -- passed as a file inside the project.
  it("takes ~ in a file path as the home folder, as Claude Code does", function()
    local home = os.getenv("HOME")
    assert.is_truthy(home and home:sub(1, 1) == "/" and home ~= CWD)
    local r = map("Read", { file_path = "~/.ssh/id_rsa" })
    assert.are.same({ path = home .. "/.ssh/id_rsa" }, r.args)
    assert.are.same({ home .. "/.ssh/id_rsa" }, r.paths)
    assert.are.same({ path = home }, map("LS", { path = "~" }).args)
    local e = map("Edit", { file_path = "~/.bashrc", old_string = "a", new_string = "b" })
    assert.are.same({ home .. "/.bashrc" }, e.paths)
    assert.is_truthy(e.args.patch:find("--- " .. home .. "/.bashrc", 1, true))
    -- "~user" and a "~" inside a path are names like any other
    assert.are.same({ path = "~bob/x" }, map("Read", { file_path = "~bob/x" }).args)
    assert.are.same({ path = "src/~/x" }, map("Read", { file_path = CWD .. "/src/~/x" }).args)
  end)

  it("keeps MCP tools' names without the prefix, and unknown tools as they are", function()
    local m = map("mcp__github__create_issue", { title = "t" })
    assert.are.same({ "github__create_issue", { title = "t" }, false }, { m.tool, m.args, m.read_only })
    local u = map("SomethingNew", { x = 1 })
    assert.are.same({ "SomethingNew", { x = 1 } }, { u.tool, u.args })
    assert.are.equal("glob", map("Glob", { pattern = "*" }).tool)
  end)

  it("refuses a call it cannot read", function()
    assert.is_nil((agent.map("claude-code", event("Bash", "ls"))))
    assert.is_nil((agent.map("claude-code", event("Bash", { cmd = "ls" }))))
    assert.is_nil((agent.map("claude-code", event(nil, {}))))
    assert.is_nil((agent.map("no-such-agent", event("Bash", { command = "ls" }))))
  end)

  it("gives a rewrite back in the agent's shape, or says why not", function()
    local ev = event("Bash", { command = "npm i", description = "d", timeout = 100 })
    assert.are.same({ command = "npm i --ignore-scripts", description = "d", timeout = 100 },
      agent.unmap("claude-code", ev, "exec", { command = "npm i --ignore-scripts", timeout_ms = 100 }))
    local rd = event("Read", { file_path = CWD .. "/README" })
    assert.are.same({ file_path = CWD .. "/README.md" },
      agent.unmap("claude-code", rd, "read_file", { path = "README.md" }))
    local _, why = agent.unmap("claude-code", ev, "read_file", { path = "x" })
    assert.is_truthy(why:find("rerouted", 1, true))
    local ed = event("Edit", { file_path = CWD .. "/a", old_string = "a", new_string = "b" })
    _, why = agent.unmap("claude-code", ed, "apply_patch", { patch = "x" })
    assert.is_truthy(why:find("cannot be given back", 1, true))
    assert.are.same({ n = 2 }, agent.unmap("claude-code", event("mcp__s__t", { n = 1 }), "s__t", { n = 2 }))
  end)

  it("gives post-hooks the agent's own result", function()
    local ev = event("Bash", { command = "ls" }, { tool_response = { stdout = "a" } })
    assert.are.same({ stdout = "a" }, agent.map("claude-code", ev).result)
  end)

  it("takes an entry a policy adds", function()
    local cc = require "toolgate.agents.claude_code"
    cc.tools.Deploy = { tool = "exec", args = function(input) return { command = "deploy " .. input.env } end }
    local m = map("Deploy", { env = "prod" })
    assert.are.same({ "exec", { command = "deploy prod" } }, { m.tool, m.args })
    cc.tools.Deploy = nil
  end)
end)

describe("Codex's tools", function()
  it("maps Bash and apply_patch", function()
    local b = agent.map("codex", event("Bash", { command = "make" }))
    assert.are.same({ "exec", { command = "make" } }, { b.tool, b.args })
    local p = agent.map("codex", event("apply_patch",
      { command = "*** Begin Patch\n*** Add File: src/x.c\n+int x;\n*** End Patch\n" }))
    assert.are.equal("apply_patch", p.tool)
    assert.are.same({ "src/x.c" }, shown(p))
    assert.is_truthy(p.args.patch:find("+++ b/src/x.c", 1, true))
    local bad, why = agent.map("codex", event("apply_patch", { command = "rm -rf /" }))
    assert.is_nil(bad)
    assert.is_truthy(why:find("Begin Patch", 1, true))
  end)

  it("gives the agent's names of a call, which rules may name", function()
    assert.are.same({ "Bash", "shell", "local_shell", "exec_command" },
      agent.map("codex", event("Bash", { command = "make" })).names)
    assert.are.same({ "Bash" }, agent.map("claude-code", event("Bash", { command = "make" })).names)
    assert.are.same({ "mcp__gh__x" }, agent.map("claude-code", event("mcp__gh__x", {})).names)
    local known = {}
    for _, k in ipairs(agent.known_names()) do known[k.agent .. ":" .. k.name] = k.tool or true end
    assert.are.equal("exec", known["codex:shell"])
    assert.are.equal("apply_patch", known["claude-code:MultiEdit"])
    assert.are.equal("web_fetch", known["claude-code:WebFetch"])
  end)

  -- The patch is read from command, patch or input: two of them that
  -- differ leave open which one Codex applies, so the call is not judged.
  it("refuses an apply_patch whose patch fields disagree", function()
    local ok = "*** Begin Patch\n*** Add File: src/x.c\n+int x;\n*** End Patch\n"
    local evil = "*** Begin Patch\n*** Delete File: .env\n*** End Patch\n"
    local m, why = agent.map("codex", event("apply_patch", { command = ok, input = evil }))
    assert.is_nil(m)
    assert.is_truthy(why:find("disagree", 1, true), why)
    m = agent.map("codex", event("apply_patch", { command = ok, patch = ok }))
    assert.are.same({ "src/x.c" }, shown(m))
    -- a field that is not a string is no patch, and the paths come from the same one
    m = agent.map("codex", event("apply_patch", { command = 5, patch = ok }))
    assert.are.same({ "src/x.c" }, shown(m))
  end)
end)

describe("Gemini CLI's tools", function()
  it("maps its shell and file tools, and gives a rewrite back", function()
    local b = agent.map("gemini", event("run_shell_command",
      { command = "make", description = "build", dir_path = "web" }))
    assert.are.same({ "exec", { command = "make", cwd = "web" } }, { b.tool, b.args })
    assert.are.same({ "run_shell_command" }, b.names)
    -- the folder as written goes back when the rewrite kept it
    local back = agent.unmap("gemini", event("run_shell_command",
      { command = "make", description = "build", dir_path = "web" }), "exec",
      { command = "make -j2", cwd = "web" })
    assert.are.same({ command = "make -j2", description = "build", dir_path = "web" }, back)
    local r = agent.map("gemini", event("read_file", { file_path = CWD .. "/src/a.c" }))
    assert.are.same({ "read_file", { path = "src/a.c" } }, { r.tool, r.args })
    local w = agent.map("gemini", event("replace",
      { file_path = "src/a.c", old_string = "a", new_string = "b" }))
    assert.are.equal("apply_patch", w.tool)
    assert.are.same({ "src/a.c" }, shown(w))
    local g = agent.map("gemini", event("grep_search", { pattern = "K", include_pattern = ".env" }))
    assert.are.same({ "grep", { ".", "**/.env" } }, { g.tool, shown(g) })
    assert.are.same({ "search_file_content", "grep_search" },
      agent.map("gemini", event("search_file_content", { pattern = "K" })).names)
  end)

  it("splits an MCP tool by its mcp_context, else keeps its raw name", function()
    local function mcp(name, ctx)
      return agent.map("gemini", event(name, { owner = "dev" }, { mcp_context = ctx }))
    end
    local m = mcp("mcp_github_create_issue", { server_name = "github", tool_name = "create_issue" })
    assert.are.same({ "github__create_issue", { owner = "dev" }, false },
      { m.tool, m.args, m.mapped })
    assert.are.same({ "mcp_github_create_issue" }, m.names)
    assert.are.same({ owner = "dev", labels = "x" }, agent.unmap("gemini",
      event("mcp_github_create_issue", { owner = "dev" },
        { mcp_context = { server_name = "github", tool_name = "create_issue" } }),
      "github__create_issue", { owner = "dev", labels = "x" }))
    -- "_" in the server's or the tool's name: the context tells which
    assert.are.equal("my-gh__list_open_issues", mcp("mcp_my-gh_list_open_issues",
      { server_name = "my-gh", tool_name = "list_open_issues" }).tool)
    assert.are.equal("gh_x__list", mcp("mcp_gh_x_list",
      { server_name = "gh_x", tool_name = "list" }).tool)
    -- Gemini's own rewriting of the name: a "." kept, a space as "_", no
    -- second prefix, a long name's middle as "..."
    assert.are.equal("gh__a.b c", mcp("mcp_gh_a.b_c", { server_name = "gh", tool_name = "a.b c" }).tool)
    assert.are.equal("mcp_gh__t", mcp("mcp_gh_t", { server_name = "mcp_gh", tool_name = "t" }).tool)
    -- one "_" per UTF-16 unit, as Gemini's JavaScript counts: é one, 🚀 two
    assert.are.equal("gh__\xc3\xa9", mcp("mcp_gh__", { server_name = "gh", tool_name = "\xc3\xa9" }).tool)
    assert.are.equal("gh__\xf0\x9f\x9a\x80", mcp("mcp_gh___",
      { server_name = "gh", tool_name = "\xf0\x9f\x9a\x80" }).tool)
    local long = ("x"):rep(80)
    assert.are.equal("gh__" .. long, mcp("mcp_gh_" .. ("x"):rep(23) .. "..." .. ("x"):rep(30),
      { server_name = "gh", tool_name = long }).tool)
    -- fail closed: the raw name when the split is not known
    for _, c in ipairs {
      { "mcp_github_delete_repo", nil },                                      -- no context
      { "mcp_github_delete_repo", { server_name = "github", tool_name = "list_issues" } },
      { "mcp_github_delete_repo", { server_name = "github_delete", tool_name = "" } },
      { "mcp_github_delete_repo", { server_name = 7, tool_name = "delete_repo" } },
      { "mcp_git__hub_delete_repo", { server_name = "git__hub", tool_name = "delete_repo" } },
      { "mcp_github__delete_repo", { server_name = "github_", tool_name = "delete_repo" } },
      { "mcp_git.hub_delete_repo", { server_name = "git.hub", tool_name = "delete_repo" } },
      { "mcp_gh___", { server_name = "gh", tool_name = "\xc3\xa9" } }, -- é is one "_", not two
    } do
      local r = mcp(c[1], c[2])
      assert.are.same({ c[1], false }, { r.tool, r.mapped }, c[1])
    end
    -- a name of Gemini's own is never read as an MCP tool's
    assert.are.equal("glob", mcp("glob", { server_name = "x", tool_name = "glob" }).tool)
  end)

  it("refuses a call whose path fields disagree", function()
    local m, why = agent.map("gemini", event("read_file",
      { file_path = "README.md", absolute_path = CWD .. "/.env" }))
    assert.is_nil(m)
    assert.is_truthy(why:find("disagree", 1, true), why)
  end)
end)

describe("Copilot CLI's tools", function()
  it("maps bash, view, create, edit and the editor by its command", function()
    local b = agent.map("copilot", event("bash", { command = "ls", description = "list" }))
    assert.are.same({ "exec", { command = "ls" } }, { b.tool, b.args })
    local v = agent.map("copilot", event("view", { path = CWD .. "/src/a.c", view_range = { 1, 5 } }))
    assert.are.same({ "read_file", { path = "src/a.c" }, true }, { v.tool, v.args, v.read_only })
    local c = agent.map("copilot", event("create", { path = "src/n.c", file_text = "x" }))
    assert.are.same({ "write_file", { path = "src/n.c", content = "x" } }, { c.tool, c.args })
    local e = agent.map("copilot", event("edit", { path = "src/n.c", old_str = "a", new_str = "b" }))
    assert.are.equal("apply_patch", e.tool)
    assert.are.same({ "src/n.c" }, shown(e))
    local s = agent.map("copilot", event("str_replace_editor", { command = "view", path = ".env" }))
    assert.are.same({ "read_file", { path = ".env" } }, { s.tool, s.args })
    assert.are.same({ "rg", "grep" }, agent.map("copilot", event("rg", { pattern = "x" })).names)
    -- post-hooks see the text the model reads as the output
    local p = agent.map("copilot", event("bash", { command = "ls" },
      { tool_response = { resultType = "success", textResultForLlm = "a b" } }))
    assert.are.same({ stdout = "a b" }, p.result)
  end)
end)

-- Through a real tree: what a rule reads of a path — agent.paths and
-- call.args.path alike — is where the kernel lands it.
describe("paths through symlinks", function()
  local dir
  setup(function()
    dir = os.tmpname()
    os.remove(dir)
    assert(os.execute("mkdir -p '" .. dir .. "/src' && ln -s / '" .. dir .. "/src/lnk'"
      .. " && ln -s loop '" .. dir .. "/src/loop'"))
    dir = require("toolgate").resolve_path(dir)
  end)
  teardown(function() os.execute("rm -rf '" .. dir .. "'") end)

  local function ev(tool, input)
    return { hook_event_name = "PreToolUse", cwd = dir, session_id = "s",
      tool_name = tool, tool_input = input }
  end

  it("gives the args and the paths where the write lands", function()
    local m = assert(agent.map("claude-code", ev("Write",
      { file_path = dir .. "/src/lnk/etc/cron.d/x", content = "x" })))
    assert.are.equal("/etc/cron.d/x", m.args.path)
    assert.are.same({ "/etc/cron.d/x" }, shown(m))
    m = assert(agent.map("claude-code", ev("Edit",
      { file_path = dir .. "/src/lnk/../x.c", old_string = "a", new_string = "b" })))
    assert.are.same({ "/x.c" }, shown(m))
    assert.is_truthy(m.args.patch:find("+++ /x.c", 1, true), m.args.patch)
    m = assert(agent.map("codex", ev("apply_patch",
      { command = "*** Begin Patch\n*** Add File: src/lnk/tmp/y\n+y\n*** End Patch\n" })))
    assert.are.same({ "/tmp/y" }, shown(m))
    assert.is_truthy(m.args.patch:find("+++ /tmp/y", 1, true), m.args.patch)
  end)

  it("says which paths cannot be resolved", function()
    local m = assert(agent.map("claude-code", ev("Write",
      { file_path = dir .. "/src/loop/x", content = "x" })))
    assert.are.equal("src/loop/x", m.args.path) -- as text
    local call = { tool = "write_file", args = m.args, metadata = { agent = "claude-code",
      agent_tool = "Write", agent_input = { file_path = dir .. "/src/loop/x", content = "x" },
      agent_cwd = dir, agent_paths = m.paths } }
    local bad = agent.unresolved(call)
    assert.are.equal(1, #bad)
    assert.is_truthy(bad[1].why:find("too many levels of symbolic links", 1, true), bad[1].why)
  end)

  it("takes an agent call's paths again after a rewrite", function()
    local input = { file_path = dir .. "/src/a.c", content = "x" }
    local m = assert(agent.map("claude-code", ev("Write", input)))
    local call = { tool = "write_file", args = { path = "src/lnk/etc/passwd", content = "x" },
      metadata = { agent = "claude-code", agent_tool = "Write", agent_input = input,
        agent_cwd = dir, agent_paths = m.paths } }
    assert.are.same({ "/etc/passwd" }, (agent.paths(call)))
  end)

  it("tells inside from beside", function()
    assert.is_true(agent.inside("src/a.c", "src"))
    assert.is_true(agent.inside("src", "src"))
    assert.is_false(agent.inside("srcx/a.c", "src"))
    assert.is_false(agent.inside("/etc/x", "src"))
    assert.is_true(agent.inside("a/b", "."))
    assert.is_false(agent.inside("/a", "."))
    assert.is_true(agent.inside("/etc/x", "/"))
  end)
end)

describe("for policies", function()
  it("says which agent made a call and what it touches", function()
    -- apply_patch's own parser: a rename gives both names, a section
    -- with --- x.c / +++ y.c changes y.c (what the tool writes)
    local patch = table.concat({ "--- a/x.c", "+++ b/y.c", "@@ -1 +1 @@", "-a", "+b",
      "--- /dev/null", "+++ b/z.c", "@@ -0,0 +1 @@", "+z",
      "diff --git a/src/ok.c b/policies/evil.lua", "similarity index 100%",
      "rename from src/ok.c", "rename to policies/evil.lua", "" }, "\n")
    local call = { tool = "apply_patch", args = { patch = patch }, metadata = {} }
    assert.is_nil(agent.of(call))
    local cwd = require("toolgate").resolve_path(".")
    assert.are.same({ "y.c", "z.c", "src/ok.c", "policies/evil.lua" }, agent.paths(call))
    assert.are.equal(cwd .. "/y.c", agent.path_facts(call)[1].resolved)
    call.metadata = { agent = "codex", agent_paths = { "src/a.c" } }
    assert.are.equal("codex", agent.of(call))
    assert.are.same({ "src/a.c" }, agent.paths(call))
    assert.are.same({ "f" }, agent.paths({ args = { path = "f" }, metadata = {} }))
  end)

  it("collects context and the tools to run for it", function()
    local call = { metadata = {} }
    agent.context(call, "one")
    agent.context(call, ("x"):rep(agent.MAX_CONTEXT + 10))
    assert.are.equal("one", call.metadata.agent_context[1])
    assert.are.equal(agent.MAX_CONTEXT + 6, #call.metadata.agent_context[2])
    agent.context_from(call, "exec", { command = "make test" }, "tests")
    assert.are.same({ tool = "exec", args = { command = "make test" }, label = "tests" },
      call.metadata.agent_context_calls[1])
    assert.has_error(function() agent.context(call, 42) end)
    assert.has_error(function() agent.context_from(call, "") end)
    for _ = 2, agent.MAX_CONTEXT_CALLS do agent.context_from(call, "exec") end
    assert.has_error(function() agent.context_from(call, "exec") end)
  end)
end)
