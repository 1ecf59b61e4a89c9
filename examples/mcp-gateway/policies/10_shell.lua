-- The default shell policy: denies destructive commands given to the
-- `exec` tool, in whatever spelling and wherever they sit in the command
-- line (after ; && || |, inside ( ) { } $( ) ` `, behind sudo, env,
-- xargs, find -exec, sh -c '…', eval …). The command line is split into
-- simple commands by toolgate.shell; each check below is a small function
-- over one simple command that returns what it matched, or nil.
--
-- The command line is read with shell.analyze, together with the exec
-- tool's `env` (a command may be `$X` with X set there) and `stdin` (a
-- bare `sh` runs what it is given): every simple command the shell would
-- run is judged, also those given to sh -c, eval, trap, coproc, fed to a
-- shell by a here-string, a here-document or a pipe, or named by a
-- variable whose value is known.
--
-- Where the analysis cannot see what runs — a command name made by $(…) or
-- an unknown variable, `curl … | sh`, `sh script.sh`, `source x`,
-- `python -c`, `awk` with system(), `sed` with its e command, LD_PRELOAD=…
-- — the command is "opaque" and this policy asks, with the reason; set
-- OPAQUE below to "deny" to refuse those outright instead.
--
-- It is a seat-belt, not a sandbox: it judges the text of the command, and
-- a program on disk (./build.sh, a Makefile, python script.py) can do what
-- it likes. See "The default shell policy" in docs/policies.md for what to use for
-- real isolation.
--
-- It only denies or asks: a command that passes every check gets no answer
-- here, so the next rules — or the default verdict (ask, for exec) — decide.
-- Keyed by command name: `ls -rf`, `grep -r`, `git rm -r` and `docker rm`
-- pass, since only rm's -r deletes recursively.
local tg = require "toolgate"
local shell = require "toolgate.shell"

-- What to answer for a command the analysis cannot see through: "ask"
-- (the user decides) or "deny".
local OPAQUE = "ask"

local has_flag, basename = shell.has_flag, shell.basename

-- "/dev//sda", "/./dev/sda", "/tmp/../dev/sda" -> "/dev/sda": the kernel
-- resolves those too.
local function normalize(path)
  path = (path .. "/"):gsub("/+", "/")
  repeat
    local n, m, k
    path, n = path:gsub("/%./", "/")
    path, m = path:gsub("/[^/]+/%.%./", "/", 1)
    path, k = path:gsub("^/%.%./", "/") -- /.. is /
  until n + m + k == 0
  return #path > 1 and path:sub(1, -2) or path
end

-- Paths under /dev that are fine to write to; anything else under /dev
-- (sda, nvme0n1, mapper/…, disk/by-id/…, mem) is a device.
local HARMLESS_DEV = { null = true, zero = true, full = true, random = true,
  urandom = true, tty = true, stdin = true, stdout = true, stderr = true }
local HARMLESS_DEV_DIR = { fd = true, pts = true, shm = true, mqueue = true }

local function is_device(path)
  if not path:find("dev", 1, true) then return false end -- the common case, cheaply
  local rest = normalize(path):match("^/dev/(.+)")
  if not rest then return false end
  local top = rest:match("^([^/]+)")
  if rest:find("/", 1, true) then return not HARMLESS_DEV_DIR[top] end
  return not HARMLESS_DEV[rest]
end

-- "/", "/.", "//", "/*", "/tmp/.." spellings of the root and everything in it.
local function is_root(path)
  if path:sub(1, 1) ~= "/" then return false end
  if path:find("[^/.*]") and not path:find("..", 1, true) then return false end
  local p = normalize(path)
  return p == "/" or p == "/*" or p == "/.*"
end

local WRITE_OPS = { [">"] = true, [">>"] = true, [">|"] = true,
  ["<>"] = true, ["&>"] = true, ["&>>"] = true }

-- Each check: function(cmd, name) -> a description of what matched, or nil.
-- cmd is a simple command from shell.split, name the basename of argv[1].
local checks = {
  { "rm -r", function(c, name)
    if name ~= "rm" then return end
    -- abbrev: GNU rm takes any unambiguous start of --recursive, even --r
    local hit, word = has_flag(c.argv, "rR", "recursive", { abbrev = 1 })
    if hit then return "recursive delete (rm " .. word .. ")" end
  end },

  { "find -delete", function(c, name)
    if name ~= "find" then return end
    for k = 2, #c.argv do
      local w = c.argv[k]
      if w == "-delete" then return "find -delete" end
      if w == "-exec" or w == "-execdir" or w == "-ok" or w == "-okdir" then
        local target = basename(c.argv[k + 1])
        if target == "rm" or target == "shred" or target == "unlink" then
          return "find " .. w .. " " .. target
        end
      end
    end
  end },

  { "shred", function(_, name)
    if name == "shred" then return "shred (overwrites files beyond recovery)" end
  end },

  { "mkfs", function(_, name)
    if name:match("^mkfs") or name == "mke2fs" or name == "wipefs" then
      return name .. " (formats or wipes a filesystem)"
    end
  end },

  { "dd to a device", function(c, name)
    if name ~= "dd" then return end
    for k = 2, #c.argv do
      local target = c.argv[k]:match("^of=(.*)")
      if target and is_device(target) then return "dd of=" .. target end
    end
  end },

  { "sudo", function(_, name)
    if name == "sudo" or name == "doas" or name == "su" or name == "pkexec"
        or name == "run0" then
      return name .. " (privilege escalation)"
    end
  end },

  { "recursive chmod/chown on /", function(c, name)
    if name ~= "chmod" and name ~= "chown" and name ~= "chgrp" then return end
    -- abbrev 3: --re could also be --reference
    if not has_flag(c.argv, "R", "recursive", { abbrev = 3 }) then return end
    for _, w in ipairs(shell.operands(c.argv)) do
      if is_root(w) then return name .. " -R on " .. w end
    end
  end },

  { "write to a device", function(c, name)
    for _, r in ipairs(c.redirects) do
      if (WRITE_OPS[r.op] or (r.op == ">&" and not r.target:match("^%d*%-?$")))
          and is_device(r.target) then
        return "write to the device " .. r.target .. " (" .. r.op .. ")"
      end
    end
    if name == "tee" or name == "cp" then
      local ops = shell.operands(c.argv)
      for k, w in ipairs(ops) do
        if is_device(w) and (name == "tee" or k == #ops) then
          return name .. " to the device " .. w
        end
      end
    end
  end },
}

-- Where a command sat, for the reason, innermost first: "",
-- " (inside sh -c, in sudo)".
local function where(c)
  local chain = c.wrappers or { c.wrapper }
  if #chain == 0 then return "" end
  local names = {}
  for k = #chain, 1, -1 do names[#names + 1] = chain[k] end
  return " (inside " .. table.concat(names, ", in ") .. ")"
end

local function shown(c)
  return #c.argv > 0 and (" in `" .. shell.join(c.argv) .. "`") or ""
end

-- The first destructive command: a deny, or nil.
local function destructive(cmds)
  for _, c in ipairs(cmds) do
    local name = basename(c.argv[1])
    for _, check in ipairs(checks) do
      local what = check[2](c, name)
      if what then
        return tg.deny("blocked by the default shell policy [" .. check[1] .. "]: "
          .. what .. where(c) .. shown(c)
          .. "; do it another way, or ask the user to run it")
      end
    end
  end
end

-- The first command the analysis could not see through: OPAQUE's answer.
local function opaque(cmds)
  for _, c in ipairs(cmds) do
    if c.opaque then
      local text = "the default shell policy cannot see what this command runs: "
        .. c.opaque .. where(c) .. shown(c)
      if OPAQUE == "deny" then
        return tg.deny("blocked by the default shell policy [opaque]: " .. c.opaque
          .. where(c) .. shown(c) .. "; spell out the commands it runs instead")
      end
      return tg.ask(text .. "; approve only if you know what it does")
    end
  end
end

tg.rule {
  name = "shell-destructive",
  priority = 10,
  tools = { "exec" },
  check = function(call)
    local line = call.args.command
    if type(line) ~= "string" then return end -- the tool's schema says what is wrong
    local cmds, err = shell.analyze(line, { env = call.args.env, stdin = call.args.stdin })
    if not cmds then
      return tg.ask("could not parse the command (" .. err .. "); a command the "
        .. "shell policy cannot read may hide anything: approve only if you can")
    end
    return destructive(cmds) or opaque(cmds)
  end,
}
