-- Which model a request goes to. The routing table (models.json, the
-- host's configuration) sends light tasks to the cheap model and heavy
-- ones to the strong one; these hooks adjust it, in order:
--   1. a long context needs the strong model's window, whatever the weight;
--   2. past 75% of the daily budget, everything but long contexts goes to
--      the cheap model;
-- and the host's fallback list takes over when a model is down.
local tg = require "toolgate"

local CHEAP, STRONG = "claude-haiku", "claude-sonnet"
local LONG_CONTEXT = 150000 -- tokens the cheap model should not be given

tg.route_model(function(d)
  local tokens = tonumber(d.context.tokens) or 0
  if tokens > LONG_CONTEXT and d.selected_model ~= STRONG then
    d.selected_model = STRONG
    d.reason = ("%d tokens of context need %s"):format(tokens, STRONG)
  end
end)

tg.route_model(function(d)
  local tokens = tonumber(d.context.tokens) or 0
  if tokens > LONG_CONTEXT or d.selected_model == CHEAP then return end
  local day = tg.budget_status("daily")
  if day.level == "warning" or day.level == "critical" or day.level == "exceeded" then
    d.selected_model = CHEAP
    d.reason = ("daily budget at %.0f%%: the cheap model"):format(day.percent)
  end
end)
