-- `toolgate test examples/coding-agent`: how the policies judge calls of
-- a coding agent, each through the real chain with the tool replaced by a
-- fixture (no file is read or written, no command runs).
local PATCH_IN_SRC = [[
--- a/src/main.c
+++ b/src/main.c
@@ -1 +1 @@
-old
+new
]]
local PATCH_OUTSIDE = [[
--- a/src/main.c
+++ b/src/main.c
@@ -1 +1 @@
-old
+new
--- a/Makefile
+++ b/Makefile
@@ -1 +1 @@
-a
+b
]]

return {
  { name = "reading a file is allowed", tool = "read_file", args = { path = "src/main.c" },
    expect = "allow", rule = "read-only" },
  { name = "git status is a read-only command", tool = "exec", args = { command = "git status" },
    expect = "allow", rule = "read-only" },
  { name = "a pipeline of readers is read-only", tool = "exec",
    args = { command = "grep -rn TODO src | head -20" }, expect = "allow", rule = "read-only" },
  { name = "a reader chained to a writer is asked", tool = "exec",
    args = { command = "git log && make install" }, expect = "ask", rule = false },
  { name = "a redirect into a file is a write", tool = "exec",
    args = { command = "echo hi > notes.txt" }, expect = "ask", rule = false },
  { name = "find -delete is not read-only", tool = "exec",
    args = { command = "find . -name '*.o' -delete" }, expect = "ask", rule = false },

  { name = "writing in src/ is allowed", tool = "write_file",
    args = { path = "src/util.c", content = "int x;" }, expect = "allow", rule = "writes-in-src-and-docs" },
  { name = "writing in docs/ is allowed", tool = "write_file",
    args = { path = "./docs/guide.md", content = "# Guide" }, expect = "allow" },
  { name = "writing elsewhere is asked", tool = "write_file",
    args = { path = "Makefile", content = "all:" }, expect = "ask", rule = "writes-in-src-and-docs",
    reason_match = "write Makefile %(outside src/ and docs/%)" },
  { name = "a path that climbs out of src/ is asked", tool = "write_file",
    args = { path = "src/../.github/workflows/ci.yml", content = "x" }, expect = "ask" },
  { name = "a patch inside src/ is allowed", tool = "apply_patch", args = { patch = PATCH_IN_SRC },
    expect = "allow", rule = "writes-in-src-and-docs" },
  { name = "a patch that also touches the Makefile is asked", tool = "apply_patch",
    args = { patch = PATCH_OUTSIDE }, expect = "ask", reason_match = "Makefile" },

  { name = "git push --force is denied", tool = "exec", args = { command = "git push --force origin main" },
    expect = "deny", rule = "no-force-push", reason_match = "rewrites the remote's history" },
  { name = "git push -f behind && is denied", tool = "exec",
    args = { command = "make test && git push -f" }, expect = "deny", rule = "no-force-push" },
  { name = "a +refspec is a force push", tool = "exec", args = { command = "git push origin +main" },
    expect = "deny", rule = "no-force-push" },
  { name = "git -C dir push --force is denied", tool = "exec",
    args = { command = "git -C ../repo push --force" }, expect = "deny", rule = "no-force-push" },
  { name = "force-push inside sh -c is denied", tool = "exec",
    args = { command = "sh -c 'git push --force'" }, expect = "deny", rule = "no-force-push" },
  { name = "a plain push is asked", tool = "exec", args = { command = "git push origin main" },
    expect = "ask", rule = false },
  { name = "--force-with-lease is asked, not denied", tool = "exec",
    args = { command = "git push --force-with-lease" }, expect = "ask", rule = false },

  { name = "secrets are redacted from a result", tool = "exec", args = { command = "env" },
    result = { exit_code = 0, stderr = "",
               stdout = "HOME=/home/me\nAWS_ACCESS_KEY_ID=AKIAABCDEFGHIJKLMNOP\nDB_PASSWORD=hunter2\n" },
    expect_result = { exit_code = 0, stderr = "",
      stdout = "HOME=/home/me\nAWS_ACCESS_KEY_ID=[redacted:aws-key]\nDB_PASSWORD=[redacted]\n" } },
  { name = "a token in a file's content is redacted", tool = "read_file", args = { path = "src/config.c" },
    result = { content = "const char *t = \"ghp_abcdefghijklmnopqrstuvwxyz0123456789\";" },
    expect_result = { content = "const char *t = \"[redacted:github-token]\";" } },
  { name = "a result without secrets is left alone", tool = "read_file", args = { path = "src/a.c" },
    result = { content = "int main(void) { return 0; }" },
    expect_result = { content = "int main(void) { return 0; }" } },
}
