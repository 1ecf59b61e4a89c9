-- Small read-only Lua tools that ship with toolgate. They double as
-- examples of tg.tool: a JSON Schema for the args, a read_only flag (so the
-- default verdict allows them), and a run function that returns JSON.
local tg = require "toolgate"

tg.tool {
  name = "word_count",
  description = "Counts the lines, words and characters of a text.",
  read_only = true,
  max_result_bytes = 4096,
  schema = {
    type = "object",
    required = { "text" },
    additionalProperties = false,
    properties = { text = { type = "string", maxLength = 10000000 } },
  },
  run = function(args)
    local text = args.text
    local _, words = text:gsub("%S+", "")
    local _, newlines = text:gsub("\n", "")
    local lines = newlines + ((#text > 0 and text:sub(-1) ~= "\n") and 1 or 0)
    return { lines = lines, words = words, bytes = #text }
  end,
}
