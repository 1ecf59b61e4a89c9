-- The policy of the installed-tree test (spec/pkg/test_install.sh): one Lua
-- tool that needs the shipped library (toolgate.shell). When
-- TOOLGATE_TEST_LUA_DIR is set, the library must come from that folder
-- (the installed one), not from wherever the build tree was.
local tg = require "toolgate"
local shell = require "toolgate.shell"

local want = os.getenv("TOOLGATE_TEST_LUA_DIR")
if want and want ~= "" and package.path:sub(1, #want + 1) ~= want .. "/" then
  error("the shipped Lua library is searched in '" .. package.path
        .. "', not in " .. want)
end

tg.tool {
  name = "split",
  description = "Splits a shell command line into its simple commands.",
  read_only = true,
  schema = { type = "object", required = { "line" },
             properties = { line = { type = "string" } } },
  run = function(args)
    local cmds = assert(shell.split(args.line))
    return { commands = #cmds, first = cmds[1].argv[1] }
  end,
}
