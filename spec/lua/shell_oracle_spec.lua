-- spec/lua/shell_oracle_spec.lua — an oracle for toolgate.shell: command
-- lines run under a real bash and a real dash, in a throwaway folder where
-- every program on PATH is a logging stand-in, and every program the shell
-- actually ran must be among the commands shell.analyze reported (an rm
-- that ran with -r, as a recursive rm — what the shell policy denies — or
-- one with words it could not resolve, c.unresolved) — or the
-- analysis marked a command opaque, or could not parse the line (the shell
-- policy asks then). Builtins (echo, cd, …) run without a program: they are
-- not logged, and need not be.
--
-- Stand-ins for rm, ls, … only log. Those for shells and wrappers (sh,
-- env, xargs, find, …) log, then run the real program with the stand-in
-- PATH, so what they run is logged too; sudo (not installed) logs and runs
-- its command. Nothing outside the folder is touched: the corpus names
-- relative targets only, and each run has a folder of its own.
--
--   lua5.4 /usr/bin/busted spec/lua/shell_oracle_spec.lua

package.path = "lua/?.lua;" .. package.path
local shell = require "toolgate.shell"
local analyze = shell.analyze or shell.split

local function sh_quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

local function have(path)
  local f = io.open(path, "rb")
  if f then f:close() end
  return f ~= nil
end

local function write(path, text, mode)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
  if mode then os.execute("chmod " .. mode .. " " .. sh_quote(path)) end
end

local function read(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("*a")
  f:close()
  return s
end

local BASH, DASH = "/bin/bash", "/bin/dash"

-- Programs that only log.
local LEAVES = { "rm", "ls", "mkdir", "touch", "curl", "wget", "python3",
  "python", "node", "perl", "ruby", "cp", "mv", "git", "make", "id",
  "whoami", "date", "foo", "bar", "basename", "kill", "chmod", "dd", "shred" }
-- Programs that log, then run the real one (what they run is logged).
local PASS = { sh = DASH, bash = BASH, dash = DASH, env = "/usr/bin/env",
  xargs = "/usr/bin/xargs", find = "/usr/bin/find", timeout = "/usr/bin/timeout",
  nice = "/usr/bin/nice", nohup = "/usr/bin/nohup", setsid = "/usr/bin/setsid",
  stdbuf = "/usr/bin/stdbuf", flock = "/usr/bin/flock", cat = "/usr/bin/cat",
  awk = "/usr/bin/awk", sed = "/usr/bin/sed" }

-- one record per run, each opened by \036 (arguments may hold newlines)
local LOG = 'printf "\\036%s %s\\n" "${0##*/}" "$*" >> "$ORACLE_LOG"\n'

local function make_bin(dir)
  os.execute("mkdir -p " .. sh_quote(dir))
  for _, name in ipairs(LEAVES) do
    write(dir .. "/" .. name, "#!/bin/dash\n" .. LOG, "755")
  end
  for name, real in pairs(PASS) do
    if have(real) then
      write(dir .. "/" .. name, "#!/bin/dash\n" .. LOG .. 'exec ' .. real .. ' "$@"\n', "755")
    end
  end
  -- sudo: its options, VAR=value words, then the command
  write(dir .. "/sudo", "#!/bin/dash\n" .. LOG .. [[
while [ $# -gt 0 ]; do
  case $1 in
    -u|-g|-C|-D|-h|-p|-r|-t|-U) shift 2 ;;
    --) shift; break ;;
    -*) shift ;;
    *=*) export "$1"; shift ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] && exec "$@"
]], "755")
end

-- The corpus: the fixture's lines, then combinations made here.
local function fixture_cases()
  local out = {}
  for line in io.lines("spec/fixtures/shell/corpus.txt") do
    if line ~= "" and line:sub(1, 1) ~= "#" then
      out[#out + 1] = { line = line:gsub("¶", "\n") }
    end
  end
  return out
end

-- wrappers × ways to feed a command to a shell × spellings of its name.
local WRAPPERS = { "", "sudo ", "env ", "env A=1 ", "nice ", "nohup ",
  "timeout 5 ", "command ", "stdbuf -o0 " }
-- ('r'm, \rm and the other spellings are in the fixture, once each)
local NAMES = { "rm", [[$'\x72m']] }
local FEEDS = {
  function(w, c) return w .. c end,
  function(w, c) return w .. "sh -c " .. sh_quote(c) end,
  function(w, c) return w .. "bash -c " .. sh_quote(c) end,
  function(w, c) return "eval " .. sh_quote(w .. c) end,
  function(w, c) return "eval -- " .. sh_quote(w .. c) end,
  function(w, c) return w .. "bash <<< " .. sh_quote(c) end,
  function(w, c) return w .. "sh <<EOF\n" .. c .. "\nEOF" end,
  function(w, c) return "echo " .. sh_quote(c) .. " | " .. w .. "sh" end,
  function(w, c) return "printf '%s\\n' " .. sh_quote(c) .. " | " .. w .. "sh" end,
  function(w, c) return "printf " .. sh_quote(c .. "\\n") .. " | " .. w .. "bash -s" end,
  function(w, c) return "trap " .. sh_quote(w .. c) .. " EXIT" end,
  function(w, c) return "X=" .. sh_quote(w .. c) .. "; $X" end,
  function(w, c) return "f() { " .. w .. c .. "; }; f" end,
  function(w, c) return "coproc " .. w .. c .. "; wait" end,
  function(w, c) return "(" .. w .. c .. ") & wait" end,
  function(w, c) return "echo $(" .. w .. c .. ")" end,
  function(w, c) return "xargs " .. w .. c .. " < /dev/null" end,
}

local function generated_cases()
  local out = {}
  for _, w in ipairs(WRAPPERS) do
    for _, feed in ipairs(FEEDS) do
      for _, name in ipairs(NAMES) do
        out[#out + 1] = { line = feed(w, name .. " -rf victim") }
      end
    end
  end
  -- one way of feeding inside another
  for _, i in ipairs { 2, 4, 6, 7, 8, 11, 12, 14 } do
    for _, j in ipairs { 2, 4, 6, 7, 8, 11, 12, 14 } do
      out[#out + 1] = { line = FEEDS[i]("", FEEDS[j]("", "rm -rf victim")) }
    end
  end
  -- the exec tool's env and stdin carry commands too
  for _, v in ipairs { "rm -rf victim", "sh -c 'rm -rf victim'", "eval rm -rf victim" } do
    out[#out + 1] = { line = "$X", env = { X = v } }
    out[#out + 1] = { line = "${X}", env = { X = v } }
    out[#out + 1] = { line = "sudo $X", env = { X = v } }
    out[#out + 1] = { line = "eval \"$X\"", env = { X = v } }
    out[#out + 1] = { line = "sh -c \"$X\"", env = { X = v } }
    out[#out + 1] = { line = "sh", stdin = v }
    out[#out + 1] = { line = "bash -s", stdin = v }
    out[#out + 1] = { line = "cat | sh", stdin = v }
  end
  out[#out + 1] = { line = "$X", env = { X = "ls" } }
  out[#out + 1] = { line = "$X -rf victim", env = { X = "rm" } }
  out[#out + 1] = { line = "$X $Y", env = { X = "sudo", Y = "rm" } }
  out[#out + 1] = { line = "$X", env = { X = "rm -rf victim", IFS = "," } }
  out[#out + 1] = { line = "X=ls; $X", env = { X = "rm" } }
  out[#out + 1] = { line = "read X; $X victim", stdin = "rm", env = { X = "ls" } }
  out[#out + 1] = { line = "git log", env = { GIT_PAGER = "rm -rf victim" } }
  out[#out + 1] = { line = "echo 'rm -rf victim' > s.sh; bash -c ls",
    env = { BASH_ENV = "s.sh" } }
  return out
end

-- A shell script running every case under bash and dash, each logging
-- to its own file.
local function driver(root, cases, sh)
  -- started with an empty environment; a run may use 5 s of CPU
  local lines, dirs = { "#!/bin/dash", "ulimit -t 5" }, {}
  for i, case in ipairs(cases) do
    if case.stdin then write(root .. "/c/" .. i .. ".in", case.stdin .. "\n") end
    local env = {}
    for k, v in pairs(case.env or {}) do env[#env + 1] = k .. "=" .. sh_quote(v) end
    table.sort(env)
    -- each run in a folder of its own
    local dir = root .. "/w/" .. sh .. "." .. i
    dirs[#dirs + 1] = sh_quote(dir)
    lines[#lines + 1] = ("cd %s && PATH=%s HOME=%s ORACLE_LOG=%s %s %s -c %s "
      .. "<%s >/dev/null 2>&1")
      :format(sh_quote(dir), sh_quote(root .. "/b"), sh_quote(dir),
        sh_quote(root .. "/log/" .. sh .. "." .. i), table.concat(env, " "),
        sh == "bash" and BASH or DASH, sh_quote(case.line),
        case.stdin and sh_quote(root .. "/c/" .. i .. ".in") or "/dev/null")
  end
  table.insert(lines, 3, "/bin/mkdir -p " .. table.concat(dirs, " ") .. " || exit 1")
  return table.concat(lines, "\n") .. "\n"
end

-- The runs a log file records: { name =, args = "…" }.
local function ran(path)
  local out = {}
  for record in (read(path) or ""):gmatch("\30([^\30]*)") do
    local name, args = record:match("^(%S+) ?(.*)$")
    out[#out + 1] = { name = name, args = args or "" }
  end
  return out
end

local function recursive_rm(args)
  for w in args:gmatch("%S+") do
    if w:match("^%-[^-]*[rR]") or w:match("^%-%-rec") then return true end
  end
  return false
end

-- nil when the analysis covers what ran, else a description: every
-- program that ran is reported, and an rm that ran with -r is reported
-- with it (what the shell policy denies).
local function judge(case, runs)
  if #runs == 0 then return nil end
  local cmds = analyze(case.line, { env = case.env, stdin = case.stdin })
  if not cmds then return nil end -- a parse error: the policy asks
  local reported, rm_r = {}, false
  for _, c in ipairs(cmds) do
    if c.opaque then return nil end
    local name = shell.basename(c.argv[1])
    reported[name] = true
    -- an rm whose words are not all known may be recursive
    if name == "rm" and (c.unresolved or
        shell.has_flag(c.argv, "rR", "recursive", { abbrev = 1 })) then
      rm_r = true
    end
  end
  local missed = {}
  for _, r in ipairs(runs) do
    if not reported[r.name] then
      missed[#missed + 1] = r.name
    elseif r.name == "rm" and recursive_rm(r.args) and not rm_r then
      missed[#missed + 1] = "rm " .. r.args .. " (its -r)"
    end
  end
  if #missed == 0 then return nil end
  return "ran " .. table.concat(missed, ", ") .. " unreported"
end

local function tmpdir()
  local p = io.popen("mktemp -d " .. sh_quote((os.getenv("TMPDIR") or "/tmp")
    .. "/toolgate-oracle.XXXXXX"))
  local dir = p:read("*l")
  p:close()
  return dir
end

describe("shell.analyze against a real bash and dash", function()
  if not (have(BASH) and have(DASH) and have("/usr/bin/timeout")
      and have("/usr/bin/env") and have("/bin/mkdir")) then
    pending("needs /bin/bash, /bin/dash, timeout and env (apt-get install dash)")
    return
  end

  it("reports every program the shell runs, or marks the line opaque", function()
    local root = tmpdir()
    -- ORACLE_KEEP=1 keeps the folder (its logs) and names it
    if os.getenv("ORACLE_KEEP") then print("oracle folder: " .. root)
    else finally(function() os.execute("rm -rf " .. sh_quote(root)) end) end
    os.execute("mkdir -p " .. sh_quote(root .. "/c") .. " " .. sh_quote(root .. "/log")
      .. " " .. sh_quote(root .. "/w"))
    make_bin(root .. "/b")
    local cases = fixture_cases()
    for _, c in ipairs(generated_cases()) do cases[#cases + 1] = c end
    -- bash's runs and dash's side by side
    write(root .. "/bash.sh", driver(root, cases, "bash"), "755")
    write(root .. "/dash.sh", driver(root, cases, "dash"), "755")
    local run = "/usr/bin/timeout -s KILL 300 /usr/bin/env -i /bin/dash "
    os.execute(run .. sh_quote(root .. "/bash.sh") .. " & " .. run
      .. sh_quote(root .. "/dash.sh") .. "; wait")
    local failures, runs = {}, 0
    for i, case in ipairs(cases) do
      for _, sh in ipairs { "bash", "dash" } do
        local done = ran(root .. "/log/" .. sh .. "." .. i)
        if #done > 0 then runs = runs + 1 end
        local why = judge(case, done)
        if why then
          local extra = case.env and " (env)" or case.stdin and " (stdin)" or ""
          failures[#failures + 1] = sh .. ": " .. case.line:gsub("\n", "¶") .. extra
            .. ": " .. why
        end
      end
    end
    assert.is_true(#cases > 500, "the corpus shrank: " .. #cases)
    assert.is_true(runs > #cases / 2, "too few lines ran anything: " .. runs)
    assert.are.same({}, failures)
  end)
end)
