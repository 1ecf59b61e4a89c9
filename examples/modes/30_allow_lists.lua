-- Allow-lists: the reading tools, and the active template's tools, go
-- ahead without asking.
local tg = require "toolgate"
local state = require "modes.state"

local READ_ONLY = { read_file = true, list_dir = true }

tg.rule { name = "read-only", priority = 200,
  check = function(call)
    if READ_ONLY[call.tool] then return tg.allow("reading") end
  end }

tg.rule { name = "template-allow-list", priority = 210,
  check = function(call)
    local s = state.of(call)
    local tools = s.template and s.templates[s.template]
    if not tools then return end
    for _, name in ipairs(tools) do
      if name == call.tool then
        return tg.allow(("in the '%s' template"):format(s.template))
      end
    end
  end }
