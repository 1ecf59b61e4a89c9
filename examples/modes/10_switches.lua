-- Switching: set_mode changes the session's mode, template or ignore list;
-- present_plan shows the agent's plan and, once the user approves it,
-- leaves plan mode. Both are asked every time, in every mode (priority 0:
-- before yolo or an ignore list could let them through), so the agent can
-- never switch itself into yolo mode or out of plan mode.
local tg = require "toolgate"
local state = require "modes.state"
local settings = require "modes.settings"

tg.tool { name = "set_mode", description = "Switch this session's mode "
    .. "(normal, plan, yolo), template, or add tools to its ignore list",
  schema = { type = "object", additionalProperties = false,
    properties = {
      mode = { enum = { "normal", "plan", "yolo" } },
      template = { type = { "string", "boolean" } },
      ignore = { type = "array", items = { type = "string" } } } },
  run = function(args, ctx)
    if type(args.template) == "string" and not (settings.templates or {})[args.template] then
      return nil, { code = "UNKNOWN_TEMPLATE", message = "no template named " .. args.template }
    end
    if args.template == true then
      return nil, { code = "BAD_ARGS", message = "template: a name, or false for none" }
    end
    local own = state.set(ctx.session, args)
    return { session = ctx.session, mode = own.mode, template = own.template or tg.null }
  end }

tg.tool { name = "present_plan", description = "Show the plan to the user; "
    .. "once approved, the session leaves plan mode",
  schema = { type = "object", required = { "plan" },
    properties = { plan = { type = "string", minLength = 1 } } },
  run = function(args, ctx)
    state.set(ctx.session, { mode = "normal" })
    return { approved = true, mode = "normal" }
  end }

local function describe_change(args)
  local parts = {}
  if args.mode then parts[#parts + 1] = "mode " .. tostring(args.mode) end
  if args.template ~= nil then parts[#parts + 1] = "template " .. tostring(args.template) end
  if args.ignore then parts[#parts + 1] = "stop asking about " .. table.concat(args.ignore, ", ") end
  return table.concat(parts, "; ")
end

tg.rule { name = "switches-are-asked", priority = 0, tools = { "set_mode", "present_plan" },
  check = function(call)
    if call.tool == "present_plan" then
      return tg.ask("approve this plan (and leave plan mode)?\n" .. tostring(call.args.plan))
    end
    return tg.ask("switch this session: " .. describe_change(call.args) .. "?")
  end }
