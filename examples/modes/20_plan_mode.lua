-- Plan mode: the agent explores and plans, it does not change anything.
-- Only the reading tools of settings.plan_tools (and the switches, asked
-- above) get through; every other call is denied with a message the agent
-- can act on.
local tg = require "toolgate"
local state = require "modes.state"

tg.rule { name = "plan-mode", priority = 100,
  check = function(call)
    local s = state.of(call)
    if s.mode ~= "plan" or s.plan_tools[call.tool] then return end
    return tg.deny(("plan mode: %s is not allowed until the plan is approved; "
      .. "read what you need, then call present_plan with your plan"):format(call.tool))
  end }
