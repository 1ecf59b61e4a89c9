-- The mode each session is in: the call's metadata (the host's toggle),
-- else what set_mode chose for the session, else settings.lua. Shared by
-- every file of the folder through require (one module per generation, so
-- a reload starts every session again from settings.lua).
local settings = require "modes.settings"

local M = { sessions = {} }

local MODES = { normal = true, plan = true, yolo = true }
M.MODES = MODES

local function set_of(list)
  local s = {}
  for _, name in ipairs(list or {}) do s[name] = true end
  return s
end

-- {mode, template, templates, ignore (a set), plan_tools (a set)}
function M.of(call)
  local own = M.sessions[call.session] or {}
  local meta = type(call.metadata) == "table" and call.metadata or {}
  local mode = MODES[meta.mode] and meta.mode or own.mode or settings.mode or "normal"
  local template = meta.template or own.template or settings.template
  local ignore = set_of(settings.ignore)
  for name in pairs(own.ignore or {}) do ignore[name] = true end
  return { mode = mode, template = template, templates = settings.templates or {},
           ignore = ignore, plan_tools = set_of(settings.plan_tools) }
end

-- Applies {mode?, template?, ignore?} to a session; returns what changed.
function M.set(session, change)
  local own = M.sessions[session] or { ignore = {} }
  M.sessions[session] = own
  if change.mode then own.mode = change.mode end
  if change.template ~= nil then own.template = change.template or nil end
  for _, name in ipairs(change.ignore or {}) do own.ignore[name] = true end
  return own
end

return M
