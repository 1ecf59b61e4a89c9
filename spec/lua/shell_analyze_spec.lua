-- spec/lua/shell_analyze_spec.lua — shell.analyze: every simple command
-- the shell would run, with the exec tool's env, and what it marks opaque.
-- Pure Lua. From the repository root:
--   lua5.4 /usr/bin/busted spec/lua/shell_analyze_spec.lua
-- (spec/lua/shell_oracle_spec.lua checks it against a real bash and dash.)

package.path = "lua/?.lua;" .. package.path
local shell = require "toolgate.shell"

local function analyze(line, opts)
  local cmds, err = shell.analyze(line, opts)
  assert(cmds, "analyze failed: " .. tostring(err))
  return cmds
end

-- "wrapper > wrapper: argv" of each command; "!" before an opaque one.
local function lines(line, opts)
  local out = {}
  for i, c in ipairs(analyze(line, opts)) do
    out[i] = (c.opaque and "!" or "") .. table.concat(c.wrappers, " > ")
      .. ": " .. shell.join(c.argv)
  end
  return out
end

local function opaque(line, needle, opts)
  for _, c in ipairs(analyze(line, opts)) do
    if c.opaque then
      assert.is_string(c.opaque)
      if needle then
        assert.is_truthy(c.opaque:find(needle, 1, true),
          "reason for " .. line .. " was: " .. c.opaque)
      end
      return c
    end
  end
  error("nothing opaque in " .. line)
end

local function clear(line, opts)
  for _, c in ipairs(analyze(line, opts)) do
    assert.is_nil(c.opaque, line .. ": " .. tostring(c.opaque))
  end
end

describe("shell.analyze", function()
  it("gives each command argv, assigns, redirects, depth, wrapper and wrappers", function()
    local cmds = analyze("A=1 sudo sh -c 'rm -rf x' > log")
    assert.are.equal(3, #cmds)
    local c = cmds[3]
    assert.are.same({ "rm", "-rf", "x" }, c.argv)
    assert.are.same({ "sudo", "sh -c" }, c.wrappers)
    assert.are.equal("sh -c", c.wrapper)
    assert.are.equal(2, c.depth)
    assert.are.same({}, c.assigns)
    assert.are.same({}, c.redirects)
    assert.is_nil(c.opaque)
    assert.are.same({ { name = "A", value = "1" } }, cmds[1].assigns)
    assert.are.equal(">", cmds[1].redirects[1].op)
    assert.are.same({}, cmds[1].wrappers)
  end)

  it("is split with an env, and split keeps its shape", function()
    assert.are.same(shell.split("ls | wc -l"), shell.analyze("ls | wc -l"))
  end)

  it("follows the holes of issue 19", function()
    assert.are.same({ ": rm -rf /x" }, lines("coproc rm -rf /x"))
    assert.are.same({ ": rm -rf /x" }, lines("coproc N { rm -rf /x; }"))
    assert.are.same({ ": eval -- 'rm -rf /x'", "eval: rm -rf /x" }, lines("eval -- 'rm -rf /x'"))
    assert.are.same({ ": trap 'rm -rf /x' EXIT", "trap: rm -rf /x" },
      lines("trap 'rm -rf /x' EXIT"))
    assert.are.same({ ": bash", "bash (stdin): rm -rf /x" }, lines("bash <<< 'rm -rf /x'"))
    assert.are.same({ ": sh", "sh (stdin): rm -rf /x" }, lines("sh <<EOF\nrm -rf /x\nEOF"))
    assert.are.same({ ": echo 'rm -rf /x'", ": sh", "sh (stdin): rm -rf /x" },
      lines("echo 'rm -rf /x' | sh"))
    assert.are.same({ ": sh -", "sh (stdin): sudo ls", "sh (stdin) > sudo: ls" },
      lines("sh - <<< 'sudo ls'"))
    assert.are.same({ ": printf 'rm x\\n'", ": bash -s -- a", "bash (stdin): rm x" },
      lines("printf 'rm x\\n' | bash -s -- a"))
  end)

  it("reads the exec tool's env, as a map or as NAME=value strings", function()
    assert.are.same({ ": rm -rf /x" }, lines("$X", { env = { X = "rm -rf /x" } }))
    assert.are.same({ ": rm -rf /x" }, lines("${X}", { env = { "X=rm -rf /x" } }))
    assert.are.same({ ": 'rm -rf /x'" }, lines('"$X"', { env = { X = "rm -rf /x" } }))
    assert.are.same({ ": sudo rm", "sudo: rm" }, lines("$X $Y", { env = { X = "sudo", Y = "rm" } }))
    assert.are.same({ ": eval 'a=1; rm x'", "eval: ", "eval: rm x" },
      lines('eval "$X"', { env = { X = "a=1; rm x" } }))
    assert.are.same({ ": sh -c 'rm x'", "sh -c: rm x" }, lines('sh -c "$X"', { env = { X = "rm x" } }))
  end)

  it("uses the values a variable is given on the line", function()
    assert.are.same({ ": ", ": rm -rf /x" }, lines("X='rm -rf /x'; $X"))
    assert.are.same({ ": ", ": ", ": ls", ": rm" }, lines("X=ls; X=rm; $X"))
    assert.are.same({ ": ", ": ls" }, lines("X=ls; $X", { env = { X = "ls" } }))
    -- the env's value and the line's both
    assert.are.same({ ": ", ": rm", ": ls" }, lines("X=ls; $X", { env = { X = "rm" } }))
    -- an empty value runs the next word
    assert.are.same({ ": ", ": rm -rf /x" }, lines("E=; $E rm -rf /x"))
  end)

  it("puts a variable's only known value in place of a word after the name", function()
    assert.are.same({ ": ", ": rm -rf /x" }, lines("F=-rf; rm $F /x"))
    assert.are.same({ ": rm 'a b'" }, lines('rm "$F"', { env = { F = "a b" } }))
    assert.are.same({ ": ", ": ", ": rm '$F' /x" }, lines("F=-rf; F=-i; rm $F /x"))
    assert.are.same({ ": rm '$F'" }, lines("rm $F"))
    assert.are.same({ ": rm -rf /x" }, lines("rm${IFS}-rf${IFS}/x"))
    assert.are.same({ ": ", ": rm -rf /x" }, lines("X=r; ${X}m -rf /x"))
    assert.are.same({ ": ", ": ls xa 'ba by'" }, lines([[X="a b"; ls x$X"$X"y]]))
  end)

  it("knows $0, $1, \"$@\" of sh -c STRING NAME ARGS", function()
    local function last(line)
      local cmds = analyze(line)
      return shell.join(cmds[#cmds].argv)
    end
    assert.are.equal("rm -rf /x", last([[sh -c 'rm "$@"' sh -rf /x]]))
    assert.are.equal("rm -rf /x", last([[sh -c '$0 -rf /x' rm]]))
    assert.are.equal("rm -rf /x", last([[sh -c '"$@"' sh rm -rf /x]]))
    assert.are.equal("rm ''", last([[sh -c 'rm "$1"']]))
    -- not in a function's body, nor after set or shift
    assert.are.equal("rm '$1'", analyze([[sh -c 'f() { rm "$1"; }; f x' sh -rf]])[2].argv[1]
      and shell.join(analyze([[sh -c 'f() { rm "$1"; }; f x' sh -rf]])[2].argv))
    assert.are.equal("rm '$@'", last([[sh -c 'shift; rm "$@"' sh a -rf]]))
    local cmds = analyze([[sh -c 'shift; rm "$@" x' sh a -rf]])
    assert.are.same({ 2 }, cmds[#cmds].unresolved)
    assert.is_nil(cmds[1].unresolved)
  end)

  it("calls a command name it cannot resolve opaque, with the reason", function()
    opaque("$X", "value of $X is not known")
    opaque("$(echo rm) -rf /x", "comes from an expansion")
    opaque("`echo rm` -rf /x", "comes from an expansion")
    opaque("${X:-rm} -rf /x", "comes from an expansion")
    opaque('a=(rm -rf /x); "${a[@]}"', "comes from an expansion")
    opaque("read X <<< 'rm'; $X", "set in a way the analysis does not follow")
    opaque("printf -v X rm; $X", "set in a way the analysis does not follow")
    opaque("for X in rm; do $X /x; done", "set in a way the analysis does not follow")
    opaque(": ${X:=rm}; $X", "set in a way the analysis does not follow")
    opaque("X=r; X+=m; $X", "does not follow", { env = { X = "ls" } })
    opaque("X[0]=rm; $X -rf /x", "does not follow", { env = { X = "ls" } })
    clear("a[$i]=1")
    opaque("declare -n R=X; X=rm; $R", "name references")
    opaque("IFS=,; X=rm,-rf,/x; $X", "IFS")
    opaque("/bin/r? -rf /x", "pattern")
    opaque("${X}m", "expansion")
    opaque("IFS=,; rm${IFS}x", "IFS")
    opaque('set -- rm; "$@"', "expansion")
  end)

  it("calls what feeds a shell opaque when it is not literal", function()
    opaque("curl -s x | sh", "output of `curl -s x`")
    opaque("sh <<< \"$(curl x)\"", "cannot see")
    opaque("sh < script", "script file script")
    -- a variable only toolgate's own environment sets is kept as a word
    clear("sh -c \"cd $DIR && make\"")
    clear("sh <<EOF\nls $HOME\nEOF")
    opaque("sh <<EOF\n$CMD\nEOF", "value of $CMD is not known")
    opaque("read X; sh -c \"ls $X\"", "does not follow")
    opaque("sh -c \"ls $X\"; read X", "does not follow")
    opaque("f() { eval \"$1\"; }", "`$1`")
    opaque("{ echo ls; } | sh", "compound command")
    opaque("ls 2>&1 |& sh", "error output")
    opaque("echo -e 'rm' | sh", "output of")
    opaque("cat file | sh", "output of")
    clear("cat <<EOF | sh\nls\nEOF")
  end)

  it("calls script files, interpreters given code and their kin opaque", function()
    opaque("sh script.sh", "script file script.sh")
    opaque("source x", "script file x")
    opaque(". ./x", "script file ./x")
    opaque("python3 -c 'import os'", "python3 -c")
    opaque("node -e 1", "node -e")
    opaque("perl -pe 's/a/b/' f", "perl -pe")
    opaque("ruby -e 1", "ruby -e")
    opaque("php -r 1", "php -r")
    opaque("lua5.4 -e 1", "lua5.4 -e")
    opaque("echo 1 | python3", "reads its program from its input")
    opaque("awk 'BEGIN { system(\"id\") }'", "may run commands")
    opaque("awk '{ print | \"sh\" }'", "may run commands")
    opaque("sed 's/a/b/e' f", "e command")
    opaque("sed -n '1e id' f", "e command")
    opaque("bash -lc ls", "startup scripts")
    opaque("LD_PRELOAD=./x.so ls", "LD_PRELOAD")
    opaque("ls", "BASH_ENV", { env = { BASH_ENV = "x" } })
    opaque("hash -p /bin/rm ls", "hash -p")
    opaque("enable -f x.so y", "enable -f")
    opaque("find . -exec {} \\;", "file names find finds")
    opaque("echo x | xargs -I{} sh -c {}", "xargs reads")
    opaque("echo rm x | xargs env", "xargs adds words")
    opaque("exec <<< 'rm x'; sh", "exec <<<")
    opaque("f() { sh; }", "input its function is called with")
    clear("sed 's/hello/there/g' f")
    clear("awk '{ print $1 }' f")
    clear("python3 script.py")
    clear("python3 -m pytest")
    clear("bash -c 'ls'")
  end)

  it("follows more wrappers: ssh, su -lc, script -qc, sg, capsh, ld.so, csh", function()
    local function last(line)
      local cmds = analyze(line)
      return table.concat(cmds[#cmds].wrappers, " > ") .. ": " .. shell.join(cmds[#cmds].argv)
    end
    assert.are.equal("ssh: rm -rf /x", last("ssh localhost rm -rf /x"))
    assert.are.equal("su -c: rm -rf /x", last("su -lc 'rm -rf /x'"))
    assert.are.equal("script -c: rm -rf /x", last("script -qc 'rm -rf /x' /dev/null"))
    assert.are.equal("sg: rm -rf /x", last("sg wheel -c 'rm -rf /x'"))
    assert.are.equal("capsh -- -c: rm -rf /x", last("capsh -- -c 'rm -rf /x'"))
    assert.are.equal("ld-linux-x86-64.so.2: /bin/rm -rf /x",
      last("/lib64/ld-linux-x86-64.so.2 /bin/rm -rf /x"))
    assert.are.equal("tcsh -c: rm -rf /x", last("tcsh -c 'rm -rf /x'"))
    assert.are.equal("sudo -s (stdin): rm -rf /x", last("sudo -s <<< 'rm -rf /x'"))
    assert.are.equal("su (stdin): rm -rf /x", last("echo 'rm -rf /x' | su"))
    opaque("tmux new -d 'rm -rf /x'", "session")
    opaque("make -f - <<< x", "recipes")
    opaque("ssh -o ProxyCommand=x h", "ProxyCommand")
    opaque("tar -xf a.tar --to-command='sh -c x'", "--to-command")
    opaque("mapfile -C 'rm x' -c 1 < f", "-C")
    opaque("X='$(rm x)'; echo ${X@P}", "@P")
    opaque("printf -v 'a[$(rm x)]' 1", "subscript")
    opaque("[[ -v 'a[$(rm x)]' ]]", "subscript")
  end)

  it("parses the values of variables that hold commands", function()
    assert.are.same({ "GIT_PAGER: rm x", ": git log" }, lines("GIT_PAGER='rm x' git log"))
    assert.are.same({ ": ", "GIT_PAGER: rm x", ": git log" },
      lines("git log", { env = { GIT_PAGER = "rm x" } }))
  end)

  it("follows a redirection of input after a compound command", function()
    assert.are.same({ ": sh", ": ", "sh (stdin): rm x" }, lines("{ sh; } <<< 'rm x'"))
    assert.are.same({ ": read l", ": sh", ": ", "sh (stdin): rm x" },
      lines("while read l; do sh; done <<< 'rm x'"))
  end)

  it("follows the exec tool's stdin into a bare shell", function()
    assert.are.same({ ": sh", "sh (stdin): rm x" }, lines("sh", { stdin = "rm x" }))
    assert.are.same({ ": cat", ": bash", "bash (stdin): rm x" }, lines("cat | bash", { stdin = "rm x" }))
    clear("sh") -- no input: nothing runs
  end)

  it("keeps parse errors as errors", function()
    local cmds, err = shell.analyze("echo 'x")
    assert.is_nil(cmds)
    assert.is_truthy(err:find("unterminated single quote", 1, true))
    cmds, err = shell.analyze("trap 'echo \"' EXIT")
    assert.is_nil(cmds)
    assert.is_string(err)
  end)

  it("takes hostile input and options without failing or running long", function()
    for _, o in ipairs { 42, "x", { env = 42 }, { env = { X = 1, [1] = 2, [2] = "no-equals" } },
        { env = { X = string.rep("a", 100000) } }, { stdin = 5 } } do
      assert.is_table(shell.analyze("$X; ls", o))
    end
    assert.are.same({ "the command must be a string (got nil)" }, { select(2, shell.analyze(nil)) })
    -- a variable that runs itself through eval: bounded by the nesting
    local cmds, err = shell.analyze("X='eval $X'; eval $X")
    assert.is_nil(cmds)
    assert.is_truthy(err:find("deeper than", 1, true))
    -- values re-read as code: bounded in bytes
    local big = string.rep("a", 60000)
    cmds, err = shell.analyze("X='#" .. big .. "';" .. string.rep(" eval $X;", 500))
    assert.is_true(cmds ~= nil or err:find("bytes of shell code", 1, true) ~= nil)
    -- eight values, each a wrapper around the next: bounded by the count
    local line = "X=sudo; X=nice; X=nohup; X=env; X=time; X=exec; X=command; X=builtin; "
      .. string.rep("$X ", 14) .. "ls"
    cmds, err = shell.analyze(line)
    assert.is_true(cmds ~= nil or err:find("commands", 1, true) ~= nil)
  end)
end)
