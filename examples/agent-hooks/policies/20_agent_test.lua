-- Tests of 20_agent.lua, run by `toolgate test examples/agent-hooks/policies`:
-- each case is a call as an agent's hook makes it (the mapping gives
-- call.metadata.agent_paths; see docs/agent-hooks.md), judged by the real
-- rules; nothing runs.
local cases = {
  { name = "git push --force is denied", tool = "exec",
    args = { command = "git push --force origin main" },
    expect = "deny", rule = "no-force-push", reason_match = "rewrite shared history" },
  { name = "git push -f after &&", tool = "exec", args = { command = "make && git push -f" },
    expect = "deny", rule = "no-force-push" },
  { name = "git push -uf", tool = "exec", args = { command = "git push -uf origin x" },
    expect = "deny", rule = "no-force-push" },
  { name = "git push --force-with-lease", tool = "exec",
    args = { command = "git push --force-with-lease" }, expect = "deny", rule = "no-force-push" },
  { name = "git push origin +main", tool = "exec", args = { command = "git push origin +main" },
    expect = "deny", rule = "no-force-push" },
  { name = "a plain push is the default's", tool = "exec", args = { command = "git push origin main" },
    expect = "ask", rule = false },
  { name = "the tests run without asking", tool = "exec", args = { command = "make -s test 2>&1" },
    expect = "allow", rule = "run-the-tests" },
  { name = "an edit inside src/ is the default's", tool = "apply_patch",
    args = { patch = "--- a/src/a.c\n+++ b/src/a.c\n@@ -1 +1 @@\n-a\n+b\n" },
    expect = "ask", rule = false },
  { name = "an edit outside src/ asks", tool = "apply_patch",
    args = { patch = "--- a/Makefile\n+++ b/Makefile\n@@ -1 +1 @@\n-a\n+b\n" },
    expect = "ask", rule = "edits-outside-src", reason_match = "change Makefile, outside src/" },
  { name = "an agent's write outside src/ asks", tool = "write_file",
    args = { path = "/etc/hosts", content = "x" },
    metadata = { agent = "claude-code", agent_paths = { "/etc/hosts" } },
    expect = "ask", rule = "edits-outside-src", reason_match = "/etc/hosts" },
}
return cases
