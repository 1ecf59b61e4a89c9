-- spec/lua/shell_spec.lua — toolgate.shell, the shell command splitter
-- policies use (lua/toolgate/shell.lua). Pure Lua: runs without the
-- toolgate module. From the repository root:
--   lua5.4 /usr/bin/busted spec/lua/shell_spec.lua
--   luajit /usr/bin/busted spec/lua/shell_spec.lua

package.path = "lua/?.lua;" .. package.path
local shell = require "toolgate.shell"

-- The argv of every command, in order.
local function argvs(line)
  local cmds, err = shell.split(line)
  assert(cmds, "split failed: " .. tostring(err))
  local out = {}
  for i, c in ipairs(cmds) do out[i] = c.argv end
  return out, cmds
end

local function one(line)
  local cmds, err = shell.split(line)
  assert(cmds, "split failed: " .. tostring(err))
  assert.are.equal(1, #cmds, "expected one command in " .. line)
  return cmds[1]
end

local function fails(line, needle, opts)
  local cmds, err = shell.split(line, opts)
  assert.is_nil(cmds, "expected an error for " .. line)
  assert.is_string(err)
  assert.is_truthy(err:find(needle, 1, true),
    "error for " .. line .. " was: " .. err)
  return err
end

describe("shell.split", function()
  describe("words and quotes", function()
    it("splits on blanks and keeps quoted blanks in one word", function()
      assert.are.same({ { "ls", "-l", "a b", "c d", "e f" } },
        argvs([[ls  -l	'a b' "c d" e\ f]]))
    end)

    it("joins adjacent quoted and unquoted parts into one word", function()
      assert.are.same({ { "rm", "-rf", "ab/c" } }, argvs([['r'"m" -'r'f a'b'/"c"]]))
    end)

    it("undoes backslash escapes outside quotes, and inside double quotes only before $ ` \" \\", function()
      assert.are.same({ { "rm", "a\\b", "$x", "q\"", "\\n" } },
        argvs([[\rm "a\b" "\$x" "q\"" '\n']]))
    end)

    it("keeps single-quoted text literal: no escapes, no substitutions", function()
      local argv, cmds = argvs([[echo 'a\ $(rm -rf /) `x` "']])
      assert.are.same({ { "echo", [[a\ $(rm -rf /) `x` "]] } }, argv)
      assert.are.equal(1, #cmds)
    end)

    it("decodes $'…' escapes (hex, octal, named)", function()
      assert.are.same({ { "rm", "-rf", "a\tb\n", "A" } },
        argvs([[$'\x72\155' -rf $'a\tb\n' $'\u0041']]))
    end)

    it("keeps $VAR and ${…} as written (values are unknown)", function()
      assert.are.same({ { "echo", "$HOME", "${x:-y}", "a$b" } },
        argvs([[echo $HOME "${x:-y}" a$b]]))
    end)

    it("joins lines ended by a backslash", function()
      assert.are.same({ { "rm", "-rf", "x" } }, argvs("rm -r\\\nf x"))
    end)

    it("drops comments, but not a # inside a word", function()
      assert.are.same({ { "echo", "a#b" } }, argvs("echo a#b # rm -rf /"))
    end)

    it("returns an empty list for an empty or blank line", function()
      assert.are.same({}, argvs(""))
      assert.are.same({}, argvs("  \t\n # only a comment"))
    end)

    it("expands braces like bash, and leaves {} alone", function()
      assert.are.same({ { "rm", "-r", "-f", "a1", "a2", "b1", "b2", "{}", "{x}", "{a,b}" } },
        argvs([[rm -{r,f} {a,b}{1..2} {} {x} "{a,b}"]]))
      assert.are.same({ { "echo", "08", "09", "10", "c", "b", "a" } },
        argvs("echo {08..10} {c..a}"))
    end)
  end)

  describe("lists and pipelines", function()
    it("splits on ; && || | |& & and newlines", function()
      assert.are.same({ { "a" }, { "b", "1" }, { "c" }, { "d" }, { "e" }, { "f" }, { "g" } },
        argvs("a; b 1 && c || d | e |& f &\ng"))
    end)

    it("does not split on operators inside quotes", function()
      assert.are.same({ { "printf", "a;rm -rf /" }, { "echo", "x && y | z" } },
        argvs([[printf 'a;rm -rf /'; echo "x && y | z"]]))
    end)

    it("splits subshells and groups one level deeper", function()
      local argv, cmds = argvs("(cd x; rm -r y) && { echo a; rm z; }")
      assert.are.same({ { "cd", "x" }, { "rm", "-r", "y" }, { "echo", "a" }, { "rm", "z" } }, argv)
      for _, c in ipairs(cmds) do assert.are.equal(1, c.depth) end
    end)

    it("steps over if/then/while/do/for/case keywords to the commands", function()
      assert.are.same({ { "test", "-f", "x" }, { "rm", "-r", "x" }, { "echo", "no" } },
        argvs("if test -f x; then rm -r x; else echo no; fi"))
      assert.are.same({ { "ls" }, { "rm", "$f" } },
        argvs("for f in $(ls); do rm $f; done"))
      -- the redirection of the loop is listed as a command without argv
      assert.are.same({ { "read", "l" }, { "rm", "-r", "$l" }, {} },
        argvs("while read l\ndo\n  rm -r \"$l\"\ndone < list"))
      assert.are.same({ { "rm", "-r", "a" }, { "echo" } },
        argvs("case $x in a|b) rm -r a;; *) echo;; esac"))
      assert.are.same({ { "rm", "x" } }, argvs("! rm x"))
    end)

    it("lists the body of a function definition", function()
      assert.are.same({ { "rm", "-rf", "/" }, { "f" } }, argvs("f() { rm -rf /; }; f"))
      assert.are.same({ { "rm", "-r", "x" } }, argvs("function g { rm -r x; }"))
    end)

    it("reads [[ … ]] as one command", function()
      assert.are.same({ { "[[", "-f", "x", "&&", "(", "-d", "y", ")", "]]" }, { "rm", "x" } },
        argvs("[[ -f x && ( -d y ) ]] && rm x"))
    end)

    it("reads the corners the way bash does", function()
      assert.are.same({ { "echo", "$${x}", "${x:-{a}", "$?" } }, argvs("echo $${x} ${x:-{a} $?"))
      assert.are.same({ { "echo", "a" } }, argvs("echo a \\"))   -- a last backslash is dropped
      local c = one("echo x >&12>&1")
      assert.are.same({ { fd = 1, op = ">&", target = "12" }, { fd = 1, op = ">&", target = "1" } },
        c.redirects)
      -- $(( that does not close with )) is $( plus a subshell
      assert.are.same({ { "a" }, { "rm", "-rf", "x" }, { "echo", "$((a) | rm -rf x)" } },
        argvs("echo $((a) | rm -rf x)"))
    end)

    it("reads ((…)) as arithmetic when it is not a subshell", function()
      assert.are.same({}, argvs("(( x = (1+2)*3 ))"))
      -- dash runs ((cmd)) as two subshells, so the command is listed
      assert.are.same({ { "rm", "-rf", "x" } }, argvs("((rm -rf x))"))
    end)
  end)

  describe("substitutions", function()
    it("lists the commands inside $( … ), one level deeper, before the command using them", function()
      local argv, cmds = argvs("echo $(rm -rf / ; ls)")
      assert.are.same({ { "rm", "-rf", "/" }, { "ls" }, { "echo", "$(rm -rf / ; ls)" } }, argv)
      assert.are.same({ 1, 1, 0 }, { cmds[1].depth, cmds[2].depth, cmds[3].depth })
    end)

    it("lists the commands inside backquotes, also nested in $( … ) and double quotes", function()
      local argv, cmds = argvs([[echo "$(ls `pwd`)" `rm -r \`x\``]])
      assert.are.same({ { "pwd" }, { "ls", "`pwd`" }, { "x" }, { "rm", "-r", "`x`" },
        { "echo", "$(ls `pwd`)", "`rm -r \\`x\\``" } }, argv)
      assert.are.equal(2, cmds[1].depth)
    end)

    it("finds commands in ${…}, $((…)), <(…), assignments and here-documents", function()
      assert.are.same({ { "a" }, { "echo", "${x:-$(a)}" } }, argvs([[echo "${x:-$(a)}"]]))
      assert.are.same({ { "b" }, { "echo", "$((1+$(b)))" } }, argvs("echo $((1+$(b)))"))
      assert.are.same({ { "c" }, { "diff", "<(c)", "f" } }, argvs("diff <(c) f"))
      assert.are.same({ { "d" }, {} }, argvs("x=$(d)"))
      assert.are.same({ { "e" }, { "cat" }, { "echo" } }, argvs("cat <<EOF\n$(e)\nEOF\necho"))
    end)

    it("keeps a quoted here-document literal and records its body", function()
      local argv, cmds = argvs("cat <<'EOF' > out\n$(rm -rf /)\nEOF\necho done")
      assert.are.same({ { "cat" }, { "echo", "done" } }, argv)
      assert.are.same({ fd = 0, op = "<<", target = "EOF", body = "$(rm -rf /)\n" },
        cmds[1].redirects[1])
      assert.are.same({ fd = 1, op = ">", target = "out" }, cmds[1].redirects[2])
    end)
  end)

  describe("redirections and assignments", function()
    it("takes redirections out of argv and records them", function()
      local c = one("cat <in >out 2>&1 >>log 2>/dev/null &>all")
      assert.are.same({ "cat" }, c.argv)
      assert.are.same({
        { fd = 0, op = "<", target = "in" }, { fd = 1, op = ">", target = "out" },
        { fd = 2, op = ">&", target = "1" }, { fd = 1, op = ">>", target = "log" },
        { fd = 2, op = ">", target = "/dev/null" }, { op = "&>", target = "all" },
      }, c.redirects)
    end)

    it("lists a bare redirection as a command with an empty argv", function()
      local c = one("> /dev/sda")
      assert.are.same({}, c.argv)
      assert.are.same({ { fd = 1, op = ">", target = "/dev/sda" } }, c.redirects)
    end)

    it("keeps dd's of= as an argv word", function()
      assert.are.same({ "dd", "if=a", "of=/dev/sda" }, one("dd if=a of=/dev/sda").argv)
    end)

    it("records leading NAME=value assignments apart from argv", function()
      local c = one([[FOO=1 BAR="x y" make -j2 A=b]])
      assert.are.same({ "make", "-j2", "A=b" }, c.argv)
      assert.are.same({ { name = "FOO", value = "1" }, { name = "BAR", value = "x y" } }, c.assigns)
    end)
  end)

  describe("wrappers", function()
    local function wrapped(line)
      local _, cmds = argvs(line)
      local out = {}
      for i, c in ipairs(cmds) do
        out[i] = { c.wrapper or "-", c.depth, table.concat(c.argv, " ") }
      end
      return out
    end

    it("splits the string of sh -c, bash -lc, bash -o x -c", function()
      assert.are.same({ { "-", 0, "sh -c rm -rf /; ls" }, { "sh -c", 1, "rm -rf /" }, { "sh -c", 1, "ls" } },
        wrapped([[sh -c 'rm -rf /; ls']]))
      assert.are.same({ "bash -c", 1, "rm -r x" }, wrapped([[bash -lc "rm -r x"]])[2])
      assert.are.same({ "bash -c", 1, "rm -r x" }, wrapped([[bash -o pipefail -c "rm -r x"]])[2])
      assert.are.same(1, #wrapped("bash script.sh"))
    end)

    it("yields the command behind env, sudo, exec, command, nohup, time, nice, timeout", function()
      assert.are.same({ { "-", 0, "env -i A=1 sh -c rm -r x" }, { "env", 1, "sh -c rm -r x" },
        { "sh -c", 2, "rm -r x" } }, wrapped([[env -i A=1 sh -c "rm -r x"]]))
      local _, cmds = argvs("env -u X A=1 B=2 make")
      assert.are.same({ { name = "A", value = "1" }, { name = "B", value = "2" } }, cmds[2].assigns)
      assert.are.same({ "sudo", 1, "rm -rf /" }, wrapped("sudo -u root -E rm -rf /")[2])
      assert.are.same({ "exec", 1, "rm x" }, wrapped("exec -a name rm x")[2])
      assert.are.same({ "command", 1, "rm x" }, wrapped("command rm x")[2])
      assert.are.same(1, #wrapped("command -v rm"))
      assert.are.same({ { "-", 0, "nice -n 5 timeout -s KILL 10 nohup time -p rm x" },
        { "nice", 1, "timeout -s KILL 10 nohup time -p rm x" },
        { "timeout", 2, "nohup time -p rm x" }, { "nohup", 3, "time -p rm x" },
        { "time", 4, "rm x" } }, wrapped("nice -n 5 timeout -s KILL 10 nohup time -p rm x"))
    end)

    it("yields the command of xargs, find -exec, busybox, watch, flock, su -c, env -S", function()
      assert.are.same({ "xargs", 1, "rm -rf" }, wrapped("ls | xargs -n 1 -P4 rm -rf")[3])
      assert.are.same({ "find -exec", 1, "rm {}" }, wrapped([[find . -exec rm {} \;]])[2])
      assert.are.same({ "find -execdir", 1, "rm -f {}" }, wrapped("find . -execdir rm -f {} +")[2])
      assert.are.same({ "busybox", 1, "rm -rf /" }, wrapped("busybox rm -rf /")[2])
      assert.are.same({ "watch", 1, "rm -r x" }, wrapped("watch -n 1 rm -r x")[2])
      assert.are.same({ "flock -c", 1, "rm -r x" }, wrapped([[flock /tmp/l -c "rm -r x"]])[2])
      assert.are.same({ "su -c", 1, "rm -r x" }, wrapped([[su -c "rm -r x" root]])[2])
      assert.are.same({ "env -S", 1, "rm -rf /" }, wrapped([[env -S "rm -rf" /]])[2])
    end)

    it("splits eval's words joined as a command line", function()
      assert.are.same({ { "-", 0, "eval rm -rf /; ls" }, { "eval", 1, "rm -rf /" }, { "eval", 1, "ls" } },
        wrapped([[eval 'rm -rf /;' ls]]))
    end)

    it("tags commands nested in a wrapper's string with the innermost wrapper", function()
      assert.are.same({ { "-", 0, "bash -c sudo rm -r $(ls)" },
        { "bash -c", 2, "ls" }, { "bash -c", 1, "sudo rm -r $(ls)" }, { "sudo", 2, "rm -r $(ls)" } },
        wrapped([[bash -c 'sudo rm -r $(ls)']]))
    end)
  end)

  describe("errors and bounds", function()
    it("refuses unbalanced quotes, naming the quote and where it opened", function()
      fails("echo 'abc", "unterminated single quote (opened at character 6)")
      fails([[echo "abc]], "unterminated double quote")
      fails("echo `abc", "unterminated backquote")
      fails("echo $'abc", "unterminated $' quote")
      fails([[sh -c 'echo "x']], "in the `sh -c` string")
    end)

    it("refuses unbalanced parentheses, braces and substitutions", function()
      fails("(echo", "the ( at character 1 has no matching )")
      fails("echo )", "no ( to close")
      fails("{ echo; ", "no matching }")
      fails("}", "no { to close")
      fails("echo $(ls", "unterminated $(")
      fails("echo ${x", "unterminated ${")
      fails("echo $((1+2", "unterminated arithmetic")
      fails("case x in a) echo", "no `esac`")
    end)

    it("refuses operators without their commands", function()
      fails("a &&", "needs a command after it")
      fails("| a", "needs a command before it")
      fails("a ;; b", "unexpected `;;`")
      fails("cat <", "has no target")
    end)

    it("refuses a non-string", function()
      local cmds, err = shell.split(42)
      assert.is_nil(cmds)
      assert.is_truthy(err:find("must be a string", 1, true))
    end)

    it("bounds the input length", function()
      fails(string.rep("a", shell.MAX_LENGTH + 1), "the splitter reads at most 65536")
      fails("echo hello", "reads at most 5", { max_length = 5 })
      assert.is_table(shell.split(string.rep("a", shell.MAX_LENGTH)))
    end)

    it("bounds nesting: subshells, substitutions and wrappers alike", function()
      fails(string.rep("(", 17) .. "a" .. string.rep(")", 17), "deeper than 16 levels")
      fails(string.rep("$(", 17) .. string.rep(")", 17), "deeper than 16 levels")
      fails(string.rep("nice ", 17) .. "rm -rf /", "deeper than 16 levels")
      fails("(((a)))", "deeper than 2 levels", { max_depth = 2 })
      assert.is_table(shell.split(string.rep("(", 16) .. "a" .. string.rep(")", 16)))
      -- too deep for a subshell does not fall back to reading it as arithmetic
      fails(string.rep("(", 20) .. "rm -rf x" .. string.rep(")", 20), "deeper than 16")
    end)

    it("bounds the number of commands and brace expansion", function()
      fails(string.rep("a;", 5000), "more than 4096 simple commands")
      fails(string.rep("{a,b}", 11), "makes more than 1024 words")
      fails("echo {1..100000}", "makes more than 1024 words")
    end)

    it("never raises on garbage: a list or nil and a message", function()
      local bits = { "a", " ", "\n", "'", '"', "\\", "$", "`", "(", ")", "{ ", " }", ";", "&",
        "|", "<", ">", "#", "=", "-", "if ", "then ", "fi", "case ", " in ", "esac", "((", "))",
        "$(", "${", "$((", "<<", "EOF\n", "[[ ", " ]]", "do ", "done", ",", "..", "sh -c ",
        "sudo ", "eval ", "for x in ", "f() ", "!", "$'", "2>&1", "<(", "xargs ", "-exec ", "\\;" }
      math.randomseed(42)
      for _ = 1, 3000 do
        local parts = {}
        for k = 1, math.random(1, 25) do parts[k] = bits[math.random(#bits)] end
        local line = table.concat(parts)
        local ok, cmds, err = pcall(shell.split, line)
        assert(ok, "raised on " .. string.format("%q", line) .. ": " .. tostring(cmds))
        assert(type(cmds) == "table" or type(err) == "string", line)
      end
    end)

    it("splits a long command line", function()
      local line = string.rep("make -j2 && npm test | grep -v x; ", 1000)
      local cmds = assert(shell.split(line))
      assert.are.equal(3000, #cmds)
    end)

    -- Found by spec/fuzz/fuzz_shell: each $(( is read as arithmetic, then
    -- as $( ( …; nested, the readings doubled with each level (131 bytes
    -- took 1.6 s, past a policy's time limit). They are bounded.
    it("bounds the readings it tries of nested $(( and ((", function()
      local ran = 0
      for _, line in ipairs({ "((" .. ("$(("):rep(11) .. ";[[($(($((($(((",
        "$((do $((*($((((*($(($((($((ac\neac((do $((*($((((*($(($((($((ac\n" ..
        "es$((($(((;[[($((ac\nes$((s$((($(((;[[($((ac\nes$((($(((;[[[\200(}&sh -c " }) do
        debug.sethook(function() ran = ran + 1000 end, "", 1000)
        local err = fails(line, "too ambiguous to read")
        debug.sethook()
        assert.is_truthy(err:find("simplify it", 1, true))
      end
      assert.is_true(ran < 2e6, ran .. " instructions")
      -- what a command line really holds is read as before
      local s = "1"
      for _ = 1, 12 do s = "$(( " .. s .. " + 1 ))" end
      assert.are.equal(1, #assert(shell.split("echo " .. s)))
      local c = "echo hi"
      for _ = 1, 7 do c = "$((" .. c .. ") | cat)" end
      assert.are.equal(15, #assert(shell.split("echo " .. c)))
      assert.are.equal(4000, #assert(shell.split(("(( i++ )); echo $((cat) | wc); "):rep(1000))))
    end)
  end)
end)

describe("shell.basename", function()
  it("strips the directory", function()
    assert.are.equal("rm", shell.basename("/bin/rm"))
    assert.are.equal("rm", shell.basename("./rm"))
    assert.are.equal("rm", shell.basename("rm"))
    assert.are.equal("mkfs.ext4", shell.basename("/usr/sbin/mkfs.ext4"))
    assert.are.equal("", shell.basename(nil))
  end)
end)

describe("shell.has_flag", function()
  local function has(line, short, long, opts)
    return (shell.has_flag(one(line).argv, short, long, opts))
  end

  it("finds short flags alone or combined, in any order", function()
    for _, line in ipairs({ "rm -r x", "rm -rf x", "rm -fr x", "rm -f -r x", "rm -Rv x",
      "rm x -r", "rm -vfR x" }) do
      assert.is_true(has(line, "rR", "recursive"), line)
    end
  end)

  it("finds long flags, with =value, and abbreviations when asked", function()
    assert.is_true(has("rm --recursive x", "r", "recursive"))
    assert.is_true(has("x --recursive=yes", "r", "recursive"))
    assert.is_false(has("rm --rec x", "r", "recursive"))
    assert.is_true(has("rm --rec x", "r", "recursive", { abbrev = 3 }))
    assert.is_false(has("rm --re x", "r", "recursive", { abbrev = 3 }))
    assert.is_true(has("x --all", "r", { "recursive", "all" }))
  end)

  it("stops at --, and ignores operands and flags of other letters", function()
    assert.is_false(has("rm -- -r", "r", "recursive"))
    assert.is_false(has("rm -f -i file-r", "r", "recursive"))
    assert.is_false(has("rm - r", "r", "recursive"))
  end)

  it("skips the argument of options that take one", function()
    assert.is_false(has("grep -e r x", "r", nil, { takes_arg = "e" }))
    assert.is_false(has("grep -er x", "r", nil, { takes_arg = "e" }))
    assert.is_true(has("grep -ie x -r", "r", nil, { takes_arg = "e" }))
  end)

  it("returns the word that matched", function()
    local hit, word = shell.has_flag({ "rm", "-f", "-vR", "x" }, "rR", "recursive")
    assert.is_true(hit)
    assert.are.equal("-vR", word)
  end)
end)

describe("shell.operands and shell.join", function()
  it("lists the words that are not options", function()
    assert.are.same({ "777", "/", "-x" }, shell.operands({ "chmod", "-R", "777", "/", "--", "-x" }))
  end)

  it("quotes words that need it", function()
    assert.are.equal([[rm -rf 'a b' '' 'it'\''s' /tmp/x]],
      shell.join({ "rm", "-rf", "a b", "", "it's", "/tmp/x" }))
  end)
end)
