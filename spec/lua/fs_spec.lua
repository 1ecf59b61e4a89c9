-- The built-in file tools and file-change tracking through the Lua API
-- (lua/README.md): toolgate.new{workspace = ...}, rt:on_file_change,
-- rt:recent_changes, and the policy side's tg.on_file_change and
-- tg.recent_changes. Real files in temp dirs.
local H = require "spec.lua.helpers"

local function fs_runtime(files, opts)
  local ws = H.tmpdir()
  opts = opts or {}
  opts.workspace = opts.workspace or ws
  opts.default_verdict = opts.default_verdict or "allow"
  local rt = H.runtime(files, opts)
  return rt, ws
end

describe("file tools", function()
  after_each(H.cleanup)

  it("write_file, read_file and list_dir work inside the workspace", function()
    local rt, ws = fs_runtime()
    local out = H.call(rt, "write_file", { path = "src/a.txt", content = "1\n2\n3\n", create_dirs = true })
    assert.are.equal("ok", out.status)
    assert.is_true(out.result.created)
    assert.are.equal("1\n2\n3\n", H.read(ws .. "/src/a.txt"))
    out = H.call(rt, "read_file", { path = "src/a.txt", offset = 2, limit = 1 })
    assert.are.equal("2\n", out.result.content)
    assert.are.equal(3, out.result.lines)
    assert.is_true(out.result.truncated)
    out = H.call(rt, "list_dir", { recursive = true })
    assert.are.same({ "src", "src/a.txt" },
      { out.result.entries[1].path, out.result.entries[2].path })
    assert.are.equal("dir", out.result.entries[1].type)
  end)

  it("refuses paths outside the workspace with a clear error", function()
    local rt = fs_runtime()
    for _, p in ipairs { "../x.txt", "/etc/passwd", "a/../../x.txt" } do
      local out = H.call(rt, "read_file", { path = p })
      assert.are.equal("error", out.status)
      assert.are.equal("EXECUTE", out.error.phase)
      assert.are.equal("OUTSIDE_WORKSPACE", out.error.code, p)
      assert.is_true(H.has(out.error.message, "outside the workspace"))
    end
  end)

  it("resolves paths as the kernel would: 'a.txt/' is not a.txt and 'new/' creates nothing", function()
    local rt, ws = fs_runtime()
    H.write(ws .. "/a.txt", "one\n")
    local out = H.call(rt, "read_file", { path = "a.txt/" })
    assert.are.equal("NOT_A_DIRECTORY", out.error.code)
    assert.is_true(H.has(out.error.message, "'a.txt' is a regular file, not a directory"))
    out = H.call(rt, "write_file", { path = "new/", content = "x" })
    assert.are.equal("BAD_PATH", out.error.code)
    assert.is_nil(io.open(ws .. "/new"))
    out = H.call(rt, "read_file", { path = "a.txt/b" })
    assert.are.equal("NOT_A_DIRECTORY", out.error.code)
    assert.are.equal("one\n", H.call(rt, "read_file", { path = "a.txt" }).result.content)
  end)

  it("refuses line numbers a C integer cannot hold, in the schema, before the tool runs", function()
    local rt, ws = fs_runtime()
    H.write(ws .. "/a.txt", "one\ntwo\n")
    for _, args in ipairs { { path = "a.txt", offset = 1e20 }, { path = "a.txt", limit = 1e20 },
                            { path = "a.txt", limit = 2^53 } } do
      local out = H.call(rt, "read_file", args)
      assert.are.equal("VALIDATE", out.error.phase)
      assert.is_true(H.has(out.error.message, "maximum 9007199254740991"), out.error.message)
    end
    assert.are.equal("two\n", H.call(rt, "read_file", { path = "a.txt", offset = 2 }).result.content)
  end)

  it("treats write_file and apply_patch as not read-only (they ask by default)", function()
    local rt = fs_runtime(nil, { default_verdict = "ask", approve = "deny" })
    assert.are.equal("ok", H.call(rt, "list_dir", {}).status)
    assert.are.equal("rejected", H.call(rt, "write_file", { path = "a", content = "" }).status)
    assert.are.equal("rejected", H.call(rt, "apply_patch", { patch = "x" }).status)
  end)

  it("applies a patch to several files, or none of them", function()
    local rt, ws = fs_runtime()
    H.write(ws .. "/a.txt", "one\ntwo\n")
    H.write(ws .. "/b.txt", "three\n")
    local good = table.concat({
      "--- a/a.txt", "+++ b/a.txt", "@@ -1,2 +1,2 @@", " one", "-two", "+TWO",
      "--- a/b.txt", "+++ b/b.txt", "@@ -1 +1 @@", "-three", "+THREE", "" }, "\n")
    local bad = good:gsub("%-three", "-four")
    local out = H.call(rt, "apply_patch", { patch = bad })
    assert.are.equal("PATCH_CONFLICT", out.error.code)
    assert.is_true(H.has(out.error.message, "hunk 1 of 'b.txt'"))
    assert.are.equal("one\ntwo\n", H.read(ws .. "/a.txt"))
    out = H.call(rt, "apply_patch", { patch = good })
    assert.are.equal("ok", out.status)
    assert.are.equal(2, #out.result.files)
    assert.are.equal("one\nTWO\n", H.read(ws .. "/a.txt"))
    assert.are.equal("THREE\n", H.read(ws .. "/b.txt"))
  end)

  it("checks the options of toolgate.new", function()
    assert.has_error(function() H.toolgate.new { workspace = 42 } end,
      "toolgate.new: 'workspace' must be a directory or a list of directories (got number)")
    assert.has_error(function() H.toolgate.new { workspace = { "/tmp", 7 } } end,
      "toolgate.new: workspace[2] must be a string")
    local rt, err = H.toolgate.new { workspace = "/nonexistent/tg-ws" }
    assert.is_nil(rt)
    assert.is_true(H.has(err, "/nonexistent/tg-ws"))
  end)

  it("honours file_max_bytes", function()
    local rt, ws = fs_runtime(nil, { file_max_bytes = 10 })
    H.write(ws .. "/big.txt", string.rep("x", 11))
    assert.are.equal("TOO_LARGE", H.call(rt, "read_file", { path = "big.txt" }).error.code)
    assert.are.equal("TOO_LARGE",
      H.call(rt, "write_file", { path = "n.txt", content = string.rep("y", 11) }).error.code)
  end)
end)

describe("file changes", function()
  after_each(H.cleanup)

  it("rt:on_file_change is called after call_end, filtered by glob", function()
    local rt = fs_runtime()
    local log = {}
    rt:on_event("call_end", function(ev) log[#log + 1] = "call_end " .. ev.call_id end)
    rt:on_file_change("src/**.c", function(ch)
      log[#log + 1] = ("%s %s %s %s"):format(ch.type, ch.path, ch.tool, ch.call_id)
    end)
    local seen_all = 0
    local id = rt:on_file_change("**", function() seen_all = seen_all + 1 end)
    H.call(rt, "write_file", { path = "src/x/main.c", content = "int x;", create_dirs = true },
      { id = "w1" })
    H.call(rt, "write_file", { path = "README.md", content = "hi" }, { id = "w2" })
    assert.are.same({ "call_end w1", "created src/x/main.c write_file w1", "call_end w2" }, log)
    assert.are.equal(2, seen_all)
    rt:off_file_change(id)
    H.call(rt, "write_file", { path = "README.md", content = "again" })
    assert.are.equal(2, seen_all)
  end)

  it("emits a file_change event per change", function()
    local rt = fs_runtime()
    local evs = H.record(rt, "file_change")
    H.call(rt, "apply_patch", { patch = table.concat({
      "--- /dev/null", "+++ b/one.txt", "@@ -0,0 +1 @@", "+1",
      "--- /dev/null", "+++ b/two.txt", "@@ -0,0 +1 @@", "+2", "" }, "\n") }, { id = "p" })
    assert.are.equal(2, #evs)
    assert.are.equal("one.txt", evs[1].path)
    assert.are.equal("created", evs[1].change)
    assert.are.equal("apply_patch", evs[2].tool)
    assert.are.equal("p", evs[2].call_id)
    assert.is_true(evs[1].seq < evs[2].seq)
  end)

  it("rt:recent_changes returns the ring, oldest first", function()
    local rt = fs_runtime()
    assert.are.same({}, rt:recent_changes())
    for i = 1, 5 do
      H.call(rt, "write_file", { path = "f" .. i .. ".txt", content = tostring(i) })
    end
    local all = rt:recent_changes()
    assert.are.equal(5, #all)
    assert.are.equal("f1.txt", all[1].path)
    local last2 = rt:recent_changes(2)
    assert.are.same({ "f4.txt", "f5.txt" }, { last2[1].path, last2[2].path })
    assert.are.equal(1, last2[2].size)
    assert.has_error(function() rt:recent_changes(-1) end)
  end)

  it("a failed patch reports nothing", function()
    local rt, ws = fs_runtime()
    H.write(ws .. "/a.txt", "a\n")
    local n = 0
    rt:on_file_change("**", function() n = n + 1 end)
    local out = H.call(rt, "apply_patch", { patch = "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-zzz\n+b\n" })
    assert.are.equal("error", out.status)
    assert.are.equal(0, n)
    assert.are.same({}, rt:recent_changes())
  end)

  it("an error in a host on_file_change callback is raised from the call", function()
    local rt = fs_runtime()
    rt:on_file_change("*.txt", function() error("host handler broke") end)
    local ok, err = pcall(H.call, rt, "write_file", { path = "a.txt", content = "" })
    assert.is_false(ok)
    assert.is_true(H.has(tostring(err), "on_file_change callback: "))
    assert.is_true(H.has(tostring(err), "host handler broke"))
  end)

  it("refuses a malformed glob", function()
    local rt = fs_runtime()
    assert.has_error(function() rt:on_file_change("src/[a", function() end) end)
    assert.has_error(function() rt:on_file_change("", function() end) end)
  end)

  it("policy tg.on_file_change handlers run; one that raises becomes handler_error", function()
    local rt = fs_runtime([[
local tg = require "toolgate"
local seen = {}
tg.on_file_change("**", function(ch) error("policy handler broke on " .. ch.path) end)
tg.on_file_change("docs/*.md", function(ch) seen[#seen + 1] = ch.type .. ":" .. ch.path end)
tg.tool { name = "seen", read_only = true, run = function()
  return { seen = tg.array(seen), recent = tg.recent_changes() }
end }
]])
    local errors = H.record(rt, "handler_error")
    local out = H.call(rt, "write_file", { path = "docs/a.md", content = "# a", create_dirs = true },
      { id = "w" })
    assert.are.equal("ok", out.status)
    H.call(rt, "write_file", { path = "docs/deeper/b.md", content = "# b", create_dirs = true })
    assert.are.equal(2, #errors)
    assert.is_true(H.has(errors[1].error, "policy handler broke on docs/a.md"))
    assert.are.equal("w", errors[1].call_id)
    local res = H.call(rt, "seen", {}).result
    assert.are.same({ "created:docs/a.md" }, res.seen)
    assert.are.equal(2, #res.recent)
    assert.are.equal("docs/deeper/b.md", res.recent[2].path)
  end)

  it("tg.on_file_change only works while the policy loads", function()
    local _, err = H.toolgate.new { workspace = H.tmpdir(), policies = H.policy_dir [[
local tg = require "toolgate"
tg.on_file_change(42, print)
]] }
    assert.is_true(H.has(err, "tg.on_file_change: the first argument must be a glob"))
  end)
end)
