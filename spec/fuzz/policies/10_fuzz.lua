-- The policies the fuzz harnesses (spec/fuzz/) run hostile input through:
-- hook events (fuzz_hook), MCP messages (fuzz_mcp) and control requests
-- (fuzz_control). Rules read the call with the shell analysis and the
-- agent mapping and answer allow, deny or ask; hooks rewrite args and
-- results (so rewrites go back to the agent); the only tools are Lua
-- ones that compute their answer. Nothing here starts a process, writes
-- a file or waits on anything outside.
local tg = require "toolgate"
local shell = require "toolgate.shell"
local agent = require "toolgate.agent"

tg.tool {
  name = "echo",
  description = "Gives its args back.",
  read_only = true,
  schema = {
    type = "object",
    properties = {
      text = { type = "string", maxLength = 4096, pattern = "^[^\\u0000]*$" },
      n = { type = "integer", minimum = 0, maximum = 1000 },
      tags = { type = "array", items = { type = "string" }, uniqueItems = true },
    },
    additionalProperties = true,
  },
  run = function(args) return { echoed = args } end,
}

tg.tool {
  name = "note",
  description = "Keeps a note (asks first).",
  schema = {
    type = "object",
    required = { "text" },
    properties = { text = { type = "string", maxLength = 1000 } },
    additionalProperties = false,
  },
  run = function(args) return { noted = args.text } end,
}

tg.tool {
  name = "fail",
  description = "Always fails.",
  read_only = true,
  run = function() error("failing on purpose") end,
}

local function commands(s)
  if type(s) ~= "string" then return {} end
  return shell.split(s) or {}
end

tg.rule { name = "policy-bug", priority = 1, tools = { "exec", "echo" },
  check = function(call)
    if call.args.command == "trigger-a-policy-bug" or call.args.text == "bug" then
      error("a bug in a rule")
    end
  end }

tg.rule { name = "shell", priority = 10, tools = { "exec" },
  check = function(call)
    local cmds = commands(call.args.command)
    for _, c in ipairs(cmds) do
      local n = shell.basename(c.argv[1])
      if n == "rm" and shell.has_flag(c.argv, "rRf", { "recursive", "force" }) then
        return tg.deny("no recursive removal")
      end
      if n == "git" and c.argv[2] == "push" then return tg.ask("push?") end
    end
    if #cmds > 0 then return tg.allow("shell commands") end
  end }

tg.rule { name = "paths", priority = 20,
  tools = { "read_file", "write_file", "apply_patch", "glob", "grep" },
  check = function(call)
    for _, p in ipairs(agent.paths(call)) do
      if p:match("%.env$") then return tg.deny("secrets stay private: " .. p) end
      if not p:match("^src/") then return tg.ask("outside src/: " .. p) end
    end
    return tg.allow("inside src/")
  end }

tg.rule { name = "notes", priority = 30, tools = { "note" },
  check = function(call)
    if call.args.text:find("secret", 1, true) then return tg.deny("no secrets") end
    return tg.ask("keep the note?")
  end }

tg.rule { name = "mcp", priority = 40, tools = { "*__*" },
  check = function(call)
    if call.tool:match("delete") then return tg.deny("not deleting") end
    return tg.allow("upstream tools")
  end }

tg.before_tool("exec", function(call)
  local cmd = call.args.command
  if type(cmd) == "string" and cmd:match("^npm install") then
    call.args.command = cmd .. " --ignore-scripts"
  end
  if cmd == "cat ./notes" then return tg.result({ stdout = "cached notes" }) end
  if cmd == "run-as-read" then return tg.args({ path = "README.md" }, "read_file") end
end)

tg.before_tool("write_file", function(call)
  if type(call.args.content) == "string" and call.args.content:find("[ \t]+\n") then
    return tg.args({ path = call.args.path, content = call.args.content:gsub("[ \t]+\n", "\n") })
  end
end)

tg.before_tool("echo", function(call)
  if call.args.n == 7 then call.args.n = 8 end
end)

tg.after_tool("exec", function(call, res)
  local out = type(res.result) == "table" and res.result.stdout
  if type(out) == "string" and out:find("BEGIN PRIVATE KEY", 1, true) then
    return tg.abort("the output holds a private key")
  end
end)

tg.after_tool("*__*", function(call, res)
  if call.tool:match("token") then return tg.result({ token = "[redacted]" }) end
end)

tg.after_tool("apply_patch", function(call)
  if agent.of(call) then agent.context(call, "edited: run the tests") end
end)
