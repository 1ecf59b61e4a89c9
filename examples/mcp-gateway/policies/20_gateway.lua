-- Rules for the tools of upstream MCP servers. An upstream tool is called
-- like any other: call.tool is its name as the client sees it
-- ("everything__echo"), call.server the server it belongs to.
local tg = require "toolgate"

-- Nothing from an upstream server reads the environment.
tg.rule {
  name = "no-env-from-upstreams",
  priority = 20,
  check = function(call)
    if call.server and call.tool:find("env", 1, true) then
      return tg.deny("upstream tools do not read the environment here")
    end
  end,
}

-- Long operations are asked for, whatever their server says about them.
tg.rule {
  name = "ask-long-operations",
  priority = 30,
  check = function(call)
    if call.server and call.tool:find("long%-running") then
      return tg.ask("start a long operation on " .. call.server .. "?")
    end
  end,
}

-- What the client sees: no debugging toggles from upstream servers, and
-- each upstream tool says where it runs.
tg.list_tools(function(tools)
  local shown = {}
  for _, t in ipairs(tools) do
    if not (t.server and t.name:find("toggle", 1, true)) then
      if t.server then
        t.description = (t.description or "") .. " (via toolgate, server " .. t.server .. ")"
      end
      shown[#shown + 1] = t
    end
  end
  return shown
end)
