-- toolgate.facts — call.paths and call.commands, computed when a rule
-- first reads them (src/policy/call_facts.c calls these in the policies'
-- own state, under their limits, and keeps the answer for the call).
--
--   call.paths     the files a file-touching call touches, each
--                  {path, written, resolved, error}: toolgate's file tools
--                  (read_file, write_file, list_dir, apply_patch — a
--                  patch's files from apply_patch's own parser) and every
--                  call an agent's hook made; nil for other tools.
--   call.commands  for exec: every simple command the shell would run
--                  (toolgate.shell's analysis of args.command with
--                  args.env and args.stdin), each {argv, wrappers,
--                  opaque, unresolved, ...}; a
--                  command line it cannot read is one opaque command.
--
-- Both come from the code that acts or its exact model, never from a
-- rule's own reading of the text (docs/security.md).

local agent = require "toolgate.agent"

local M = {}

local FILE_TOOLS = { read_file = true, write_file = true, list_dir = true,
  apply_patch = true }

function M.paths(call)
  local m = rawget(call, "metadata")
  if FILE_TOOLS[rawget(call, "tool")] or (type(m) == "table" and m.agent) then
    return agent.path_facts(call)
  end
  return nil
end

function M.commands(call)
  local args = rawget(call, "args")
  if rawget(call, "tool") ~= "exec" or type(args) ~= "table" or
      type(args.command) ~= "string" then
    return nil
  end
  local shell = require "toolgate.shell"
  local analyze = shell.analyze or shell.split
  local env = type(args.env) == "table" and args.env or nil
  local cmds, err = analyze(args.command, { env = env,
    stdin = type(args.stdin) == "string" and args.stdin or nil })
  if not cmds then
    return { { argv = {}, assigns = {}, redirects = {}, depth = 0, wrappers = {},
      opaque = "the shell analysis cannot read the command line: " .. tostring(err) } }
  end
  return cmds
end

return M
