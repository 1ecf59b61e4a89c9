-- Force-pushing rewrites history others may have pulled: denied, however
-- it is spelt (-f, --force, a +refspec, behind && or sh -c). The safer
-- --force-with-lease is not denied: like any other push, it is asked.
local tg = require "toolgate"
local shell = require "toolgate.shell"

local function force_push(cmd)
  if shell.basename(cmd.argv[1]) ~= "git" then return nil end
  -- git's own options come before the subcommand: git -C dir push ...
  local k = 2
  while cmd.argv[k] and cmd.argv[k]:sub(1, 1) == "-" do
    k = k + ((cmd.argv[k] == "-C" or cmd.argv[k] == "-c") and 2 or 1)
  end
  if cmd.argv[k] ~= "push" then return nil end
  local rest = { "git" }
  for j = k + 1, #cmd.argv do rest[#rest + 1] = cmd.argv[j] end
  local forced, word = shell.has_flag(rest, "f", "force")
  if forced then return word end
  for _, w in ipairs(shell.operands(rest)) do
    if w:sub(1, 1) == "+" then return w end -- +main: a forced refspec
  end
  return nil
end

tg.rule { name = "no-force-push", priority = 10, tools = "exec",
  check = function(call)
    local cmds, err = shell.split(call.args.command or "")
    if not cmds then return tg.ask("could not read the command: " .. err) end
    for _, cmd in ipairs(cmds) do
      local how = force_push(cmd)
      if how then
        return tg.deny(("git push %s rewrites the remote's history; push "
          .. "without it, or use --force-with-lease and ask the user"):format(how))
      end
    end
  end }
