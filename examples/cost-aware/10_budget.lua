-- What model calls may cost: 5.00 a day (in the currency your host
-- reports usage in), counted from local midnight, with an alert at 50%,
-- 75%, 90% and 100% — each told once a day as an event, a notification
-- and to on_alert below — and 1.00 per session, so one runaway
-- conversation cannot spend the day.
local tg = require "toolgate"

tg.budget { name = "daily", limit = 5.00, period = "day",
  on_alert = function(alert)
    -- the notification is sent for us; this is where a policy acts: the
    -- routing hook and the costly-tools rule read the level themselves
    if alert.level == "exceeded" then
      tg.notify("error", "Daily budget spent",
        "costly tools are off until midnight; light tasks go on the cheap model",
        { action = { label = "Raise the budget", command = "edit 10_budget.lua" } })
    end
  end }

tg.budget { name = "session", limit = 1.00, period = "session",
  thresholds = { warning = 0.80, exceeded = 1.00 } }
