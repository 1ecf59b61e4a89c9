-- Tests of the default shell policy (10_shell.lua), run by `toolgate test
-- policies`: each case is an `exec` call judged by the real rules; no
-- command runs. A command the policy does not deny gets no answer from it,
-- so the default verdict for exec (ask) decides: `rule = false`.
local DENY = "shell-destructive"

local cases = {
  { name = "rm -rf / is denied", tool = "exec", args = { command = "rm -rf /" },
    expect = "deny", rule = DENY, reason_match = "%[rm %-r%]: recursive delete %(rm %-rf%)" },
  { name = "rm -r in another spelling", tool = "exec", args = { command = "rm --rec build" },
    expect = "deny", rule = DENY, reason_match = "rm %-%-rec" },
  { name = "rm -rf hidden in sh -c", tool = "exec", args = { command = "sh -c 'rm -rf /tmp/x'" },
    expect = "deny", rule = DENY, reason_match = "inside sh %-c" },
  { name = "rm -rf after &&", tool = "exec", args = { command = "make && rm -rf x" },
    expect = "deny", rule = DENY },
  { name = "rm -rf in $( )", tool = "exec", args = { command = "echo $(rm -rf x)" },
    expect = "deny", rule = DENY },
  { name = "find -delete", tool = "exec", args = { command = "find . -name '*.o' -delete" },
    expect = "deny", rule = DENY, reason_match = "find %-delete" },
  { name = "shred", tool = "exec", args = { command = "shred -u secrets.txt" },
    expect = "deny", rule = DENY, reason_match = "beyond recovery" },
  { name = "mkfs", tool = "exec", args = { command = "mkfs.ext4 /dev/sdb1" },
    expect = "deny", rule = DENY, reason_match = "formats or wipes" },
  { name = "dd to a device", tool = "exec", args = { command = "dd if=/dev/zero of=/dev/sda" },
    expect = "deny", rule = DENY, reason_match = "dd of=/dev/sda" },
  { name = "sudo", tool = "exec", args = { command = "sudo ls" },
    expect = "deny", rule = DENY, reason_match = "privilege escalation" },
  { name = "chmod -R on /", tool = "exec", args = { command = "chmod -R 777 /" },
    expect = "deny", rule = DENY, reason_match = "chmod %-R on /" },
  { name = "a write to a device", tool = "exec", args = { command = "echo hi > /dev/sda" },
    expect = "deny", rule = DENY, reason_match = "write to the device /dev/sda" },

  { name = "plain rm is left to the default", tool = "exec", args = { command = "rm file.txt" },
    expect = "ask", rule = false },
  { name = "grep -r is not rm -r", tool = "exec", args = { command = "grep -r foo ." },
    expect = "ask", rule = false },
  { name = "rm -rf inside a quoted string is text", tool = "exec",
    args = { command = [[echo "rm -rf /"]] }, expect = "ask", rule = false },
  { name = "dd to /dev/null is harmless", tool = "exec",
    args = { command = "dd if=disk.img of=/dev/null" }, expect = "ask", rule = false },
  { name = "a command it cannot parse is asked about", tool = "exec",
    args = { command = "echo 'unterminated" }, expect = "ask", rule = DENY,
    reason_match = "could not parse the command" },
  { name = "other tools are not judged", tool = "read_file", args = { path = "README.md" },
    expect = "allow", rule = false },
  { name = "a command that is not a string is the schema's to refuse", tool = "exec",
    args = { command = 42 }, rule = false, expect_error_code = "INVALID_ARGS" },
}

-- Every spelling of a recursive rm, hidden where a command line can hide it.
for _, command in ipairs {
  "rm -fr build", "rm -r -f build", "rm -R build", "/bin/rm -R build",
  [[\rm -r build]], "rm -{r,f} build", "ls; rm -rf x", "ls | rm -rf x",
  "echo `rm -rf x`", "(cd /; rm -rf x)", "find . | xargs rm -rf",
  "nohup nice -n 5 rm -rf x &", [[eval 'rm -rf x']], "busybox rm -rf x",
} do
  cases[#cases + 1] = { name = "denied: " .. command, tool = "exec",
    args = { command = command }, expect = "deny", rule = DENY }
end

return cases
