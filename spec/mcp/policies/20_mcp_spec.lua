-- Tools and rules the MCP specs call through `toolgate serve`.
local tg = require "toolgate"

-- A read-only tool that takes a while and says how far it got: progress,
-- cancellation and calls in flight.
tg.tool {
  name = "slow",
  description = "Counts to n, one step every step_ms milliseconds.",
  read_only = true,
  schema = {
    type = "object",
    required = { "n" },
    additionalProperties = false,
    properties = {
      n = { type = "integer", minimum = 1, maximum = 1000 },
      step_ms = { type = "integer", minimum = 1, maximum = 10000 },
    },
  },
  run = function(args, ctx)
    for i = 1, args.n do
      ctx.partial({ done = i - 1 })
      ctx.progress(i, args.n, "step " .. i)
      ctx.sleep(args.step_ms or 100)
    end
    return { done = args.n }
  end,
}

-- A tool that is not read-only, so the rules ask before it runs.
tg.tool {
  name = "note",
  description = "Keeps a note (asks first).",
  schema = {
    type = "object",
    required = { "text" },
    additionalProperties = false,
    properties = { text = { type = "string", maxLength = 1000 } },
  },
  run = function(args) return { noted = args.text } end,
}

tg.rule {
  name = "no-secrets",
  priority = 5,
  tools = { "note" },
  check = function(call)
    if call.args.text:find("secret", 1, true) then
      return tg.deny("notes must not hold secrets")
    end
  end,
}

tg.rule {
  name = "ask-notes",
  priority = 10,
  tools = { "note" },
  check = function(call) return tg.ask("keep the note '" .. call.args.text .. "'?") end,
}
