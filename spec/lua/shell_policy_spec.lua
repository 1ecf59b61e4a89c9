-- spec/lua/shell_policy_spec.lua — the default shell policy
-- (policies/10_shell.lua) judging real calls of the built-in `exec` tool
-- through a real runtime. Denied commands never reach the tool; look-alikes
-- are not denied by the rule and end at approval (approve = "deny"), so
-- nothing here runs a command except the one test that says so.
--
--   LUA_CPATH="/tmp/build/lua/?.so;;" lua5.4 /usr/bin/busted spec/lua/shell_policy_spec.lua

local H = require "spec.lua.helpers"

local RULE = "shell-destructive"
local SOURCE = assert(H.read("policies/10_shell.lua"), "run from the repository root")

local function runtime(opts)
  local o = { default_verdict = "ask", approve = "deny" }
  for k, v in pairs(opts or {}) do o[k] = v end
  return H.runtime({ ["10_shell.lua"] = SOURCE }, o)
end

describe("the default shell policy", function()
  after_each(H.cleanup)

  local DENIED = {
    -- rm -r in its spellings
    { "rm -rf /", "rm -rf" },
    { "rm -fr build", "rm -fr" },
    { "rm -r -f build", "rm -r" },
    { "rm --recursive build", "rm --recursive" },
    { "rm --rec build", "rm --rec" },
    { "rm -rv build", "rm -rv" },
    { "rm -R build", "rm -R" },
    { "rm build -rf", "rm -rf" },
    { "/bin/rm -R build", "rm -R" },
    { [[\rm -r build]], "rm -r" },
    { [['r'"m" -r build]], "rm -r" },
    { "rm -{r,f} build", "rm -r" },
    { [[$'\x72\x6d' -rf build]], "rm -rf" },
    -- find
    { "find . -name '*.o' -delete", "find -delete" },
    { [[find . -exec rm {} \;]], "find -exec rm" },
    { "find / -execdir /bin/rm -f {} +", "find -execdir rm" },
    -- shred, mkfs, dd
    { "shred -u secrets.txt", "shred" },
    { "mkfs.ext4 /dev/sdb1", "mkfs.ext4" },
    { "mkfs -t vfat /dev/sdc", "mkfs" },
    { "dd if=/dev/zero of=/dev/sda bs=1M", "dd of=/dev/sda" },
    { "dd if=img of=//dev/./nvme0n1", "dd of=//dev/./nvme0n1" },
    { "dd if=img of=/tmp/../dev/sdb", "dd of=/tmp/../dev/sdb" },
    -- sudo, anything
    { "sudo ls", "sudo" },
    { "sudo -u www-data make install", "sudo" },
    { "/usr/bin/sudo true", "sudo" },
    -- chmod/chown -R on /
    { "chmod -R 777 /", "chmod -R on /" },
    { "chmod --recursive a+w /*", "chmod -R on /*" },
    { "chown -R me:me /", "chown -R on /" },
    { "chmod -R 777 /tmp/..", "chmod -R on /tmp/.." },
    -- writes to devices
    { "echo hi > /dev/sda", "write to the device /dev/sda" },
    { "cat disk.img >/dev/nvme0n1", "write to the device /dev/nvme0n1" },
    { "> /dev/sdb", "write to the device /dev/sdb" },
    { "{ cat a; cat b; } >> /dev/sdb", "write to the device /dev/sdb" },
    { "cat img | tee /dev/sdc", "tee to the device /dev/sdc" },
  }

  -- the same rm -rf, hidden in the places a command line can hide it
  local HIDDEN = {
    { [[sh -c 'rm -rf /tmp/x']], "inside sh -c" },
    { [[bash -c "cd /tmp && rm -rf x"]], "inside bash -c" },
    { [[env FOO=1 sh -c 'rm -rf x']], "inside sh -c" },
    { "ls; rm -rf x", "rm -rf" },
    { "make && rm -rf x", "rm -rf" },
    { "make || rm -rf x", "rm -rf" },
    { "ls | rm -rf x", "rm -rf" },
    { "echo $(rm -rf x)", "rm -rf" },
    { "echo `rm -rf x`", "rm -rf" },
    { "(cd /; rm -rf x)", "rm -rf" },
    { "find . | xargs rm -rf", "inside xargs" },
    { "nohup nice -n 5 rm -rf x &", "inside nice" },
    { "sudo rm -rf x", "sudo" },
    { [[eval 'rm -rf x']], "inside eval" },
    { "if true; then rm -rf x; fi", "rm -rf" },
    { "cat <<EOF\n$(rm -rf x)\nEOF", "rm -rf" },
    { "busybox rm -rf x", "inside busybox" },
  }

  local function expect_denied(rt, command, needle)
    local out = H.call(rt, "exec", { command = command })
    assert.are.equal("denied", out.status, command)
    assert.are.equal(RULE, out.decision.rule, command)
    assert.are.equal("deny", out.decision.verdict, command)
    assert.are.equal("AUTHORIZE", out.error.phase, command)
    assert.is_true(H.has(out.error.message, needle),
      command .. ": reason was: " .. tostring(out.error.message))
    assert.is_nil(out.result, command)
  end

  it("denies every spelling of the destructive commands, naming what matched", function()
    local rt = runtime()
    for _, case in ipairs(DENIED) do expect_denied(rt, case[1], case[2]) end
  end)

  it("denies them after ; && || |, inside sh -c, $( ), backquotes, xargs, eval", function()
    local rt = runtime()
    for _, case in ipairs(HIDDEN) do expect_denied(rt, case[1], case[2]) end
  end)

  -- Commands that look like the ones above but are not destructive.
  local LOOK_ALIKES = {
    "rm file.txt", "rm -f build.log", "rm -i a", "rm -- -r", "grep -r foo .",
    [[echo "rm -rf /"]], [[echo 'sudo make me a sandwich']], "git rm --cached x",
    "find . -name '*.c'", "find . -name '*.o' -print", "dd if=a of=b",
    "dd if=disk.img of=/dev/null", "chmod -R u+w build", "chown -R me build",
    "ls -rf", "cat README | grep rm", [[printf 'a;rm -rf /']], "npm test",
    "make -j2", "docker rm x", "ls 2>/dev/null >/dev/null", "make >&2",
    "echo done > /dev/stderr", "cat <<'EOF'\n$(rm -rf /)\nEOF", "command -v sudo",
    "shredder --help", "mkdir -p build",
  }

  it("does not deny the look-alikes: they get the default verdict (ask)", function()
    local rt = runtime()
    local asked = {}
    rt:set_approver(function(req)
      asked[#asked + 1] = req.args.command
      return "reject", "not in a spec"
    end)
    for _, command in ipairs(LOOK_ALIKES) do
      local out = H.call(rt, "exec", { command = command })
      assert.are_not.equal(RULE, out.decision.rule, command)
      assert.are_not.equal("denied", out.status, command)
      assert.are.equal("rejected", out.status, command) -- at approval: never ran
      assert.are.equal("ask", out.decision.verdict, command)
    end
    assert.are.same(LOOK_ALIKES, asked)
  end)

  it("asks when it cannot parse the command, saying why", function()
    local rt = runtime()
    local prompts = {}
    rt:set_approver(function(req)
      prompts[#prompts + 1] = req.prompt
      return "reject"
    end)
    for _, command in ipairs({ "echo 'unterminated", "(rm -rf x", "echo $(ls",
      string.rep("(", 20) .. "rm -rf x" .. string.rep(")", 20) }) do
      local out = H.call(rt, "exec", { command = command })
      assert.are.equal("rejected", out.status, command)
      assert.are.equal(RULE, out.decision.rule, command)
      assert.are.equal("ask", out.decision.verdict, command)
    end
    assert.are.equal(4, #prompts)
    assert.is_true(H.has(prompts[1], "could not parse the command"))
    assert.is_true(H.has(prompts[1], "unterminated single quote"))
    assert.is_true(H.has(prompts[4], "deeper than 16 levels"))
  end)

  it("never runs a denied command, even when asks would be approved", function()
    local rt = runtime({ approve = "allow", default_verdict = "allow" })
    local dir = H.tmpdir()
    local mark = dir .. "/ran"
    local out = H.call(rt, "exec", { command = "touch " .. mark .. " && rm -rf " .. dir .. "/nothing" })
    assert.are.equal("denied", out.status)
    assert.is_false(H.exists(mark))
  end)

  it("gives no answer for a look-alike, so it runs when the default verdict allows", function()
    local rt = runtime({ approve = "deny", default_verdict = "allow" })
    local dir = H.tmpdir()
    local out = H.call(rt, "exec", { command = [[echo "rm -rf /" > ]] .. dir .. "/out" })
    assert.are.equal("ok", out.status)
    assert.is_nil(out.decision.rule)
    assert.are.equal(0, out.result.exit_code)
    assert.are.equal("rm -rf /\n", H.read(dir .. "/out"))
  end)

  it("only judges exec, and leaves a call without a command string to the tool's schema", function()
    local rt = runtime()
    local out = H.call(rt, "exec", { command = 42 })
    assert.are_not.equal(RULE, out.decision.rule)
    local d = rt:describe()
    local found
    for _, r in ipairs(d.rules) do
      if r.name == RULE then found = r end
    end
    assert.is_table(found)
    assert.are.equal(10, found.priority)
  end)

  it("is what the shipped policies/ folder does", function()
    local rt = H.track(assert(H.toolgate.new { policies = "policies", approve = "deny" }))
    local out = H.call(rt, "exec", { command = "cd /tmp && sudo rm -rf /" })
    assert.are.equal("denied", out.status)
    assert.are.equal(RULE, out.decision.rule)
    out = H.call(rt, "exec", { command = "npm test" })
    assert.are.equal("rejected", out.status)
    assert.is_nil(out.decision.rule)
  end)
end)
