-- Tests of the default paths policy (20_paths.lua), run by `toolgate test
-- policies`. /proc/self is unresolvable wherever the tests run: it names
-- the files of the process that opens it, not the agent's.
return {
  { name = "a write through /proc/self asks", tool = "write_file",
    args = { path = "/proc/self/cwd/x", content = "x" }, expect = "ask",
    rule = "paths-unresolved" },
  { name = "a patch renaming a file into /proc/self asks", tool = "apply_patch",
    args = { patch = "diff --git a/x b/y\nrename from x\nrename to /proc/self/root/etc/y\n" },
    expect = "ask", rule = "paths-unresolved" },
  { name = "an agent's call with a path the hook could not resolve asks",
    tool = "write_file", args = { path = "src/loop/x", content = "x" },
    metadata = { agent = "claude-code", agent_paths = { { path = "src/loop/x",
      written = "/p/src/loop/x", error = "too many levels of symbolic links" } } },
    expect = "ask", rule = "paths-unresolved" },
  { name = "a path that resolves gets no answer here", tool = "read_file",
    args = { path = "README.md" }, expect = "allow", rule = false },
}
