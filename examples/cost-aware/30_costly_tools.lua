-- Tools that cost money per call (a paid search API, image generation, a
-- cloud build) are asked once the day's budget is critical and denied once
-- it is spent; the rest go on. The names are checked inside the rule, so
-- the list may name tools your host has not registered yet.
local tg = require "toolgate"

local COSTLY = {
  web_search = true, deep_research = true, generate_image = true,
  ["mcp__cloud__build"] = true,
}

tg.rule { name = "costly-tools-budget", priority = 50,
  check = function(call)
    if not COSTLY[call.tool] then return end
    local day = tg.budget_status("daily")
    if day.level == "exceeded" then
      return tg.deny(("the daily budget is spent (%.2f of %.2f); %s costs money: "
        .. "do without it until %s"):format(day.spent, day.limit, call.tool,
        os.date("%H:%M", math.floor(day.resets_at / 1000))))
    end
    if day.level == "critical" then
      return tg.ask(("the daily budget is at %.0f%%: run %s anyway?"):format(day.percent, call.tool))
    end
  end }

-- Stand-ins for the costly tools, so this folder runs on its own (toolgate
-- test, the specs). Your host registers the real ones; delete these.
for name in pairs(COSTLY) do
  if not name:find("__") then
    tg.tool { name = name, read_only = true, description = "a paid tool (stand-in)",
      run = function(args) return { tool = name, args = args } end }
  end
end
