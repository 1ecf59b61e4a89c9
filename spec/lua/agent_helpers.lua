-- spec/lua/agent_helpers.lua — what the agent mapping specs share: a hook
-- event of a tool call in the canonical shape, and the paths of a mapped
-- call as agent.paths shows them.
local A = {}

A.CWD = "/home/dev/proj"

-- The paths of a mapped call as agent.paths shows them (each resolved
-- where it leads: spec/lua/agent_paths_spec.lua has the symlinks).
function A.shown(m)
  if not m.paths then return nil end
  local t = {}
  for i, e in ipairs(m.paths) do t[i] = e.path end
  return t
end

-- A PreToolUse of tool with input in A.CWD; extra: other fields.
function A.event(tool, input, extra)
  local ev = { hook_event_name = "PreToolUse", cwd = A.CWD, session_id = "s",
    tool_name = tool, tool_input = input }
  for k, v in pairs(extra or {}) do ev[k] = v end
  return ev
end

return A
