-- The user's preferences, last: yolo mode allows whatever no earlier rule
-- denied; the ignore list allows the tools the user stopped being asked
-- about. A deny of an earlier rule (plan mode, or the shell policy if you
-- add it beside these: its rules come first) still stands.
local tg = require "toolgate"
local state = require "modes.state"

tg.rule { name = "yolo", priority = 300,
  check = function(call)
    if state.of(call).mode == "yolo" then return tg.allow("yolo mode") end
  end }

tg.rule { name = "ignore-list", priority = 310,
  check = function(call)
    if state.of(call).ignore[call.tool] then return tg.allow("on the ignore list") end
  end }
