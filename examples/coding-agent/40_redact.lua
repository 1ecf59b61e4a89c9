-- Secrets are masked in what toolgate hands the agent: after every tool
-- toolgate runs (toolgate call, MCP, a host's calls), strings in its
-- result are scanned and anything that looks like a credential is
-- replaced by [redacted:<kind>] before the agent reads it. The patterns
-- are the common, well-formed kinds; add your own below. The call's
-- events keep the result the tool returned before this hook (hooks see
-- results first); the audit and what the agent reads are the redacted
-- one.
--
-- Under an agent's hooks (toolgate hook) this cannot hide a secret: the
-- agent ran its own tool and its model read the output before the
-- PostToolUse hook. There the masked result only reaches the model as
-- added context, and the audit keeps the masked copy; to keep a secret
-- from the agent, deny the read or the command before it runs.
local tg = require "toolgate"

local PATTERNS = {
  { "aws-key", "AKIA[0-9A-Z][0-9A-Z][0-9A-Z][0-9A-Z][0-9A-Z][0-9A-Z][0-9A-Z][0-9A-Z]"
               .. "[0-9A-Z][0-9A-Z][0-9A-Z][0-9A-Z][0-9A-Z][0-9A-Z][0-9A-Z][0-9A-Z]" },
  { "github-token", "gh[pousr]_[%w]+" },
  { "slack-token", "xox[abpr]%-[%w%-]+" },
  { "bearer", "[Bb]earer%s+[%w%-%._~%+/]+=*" },
  { "private-key", "%-%-%-%-%-BEGIN [%u ]*PRIVATE KEY%-%-%-%-%-.-%-%-%-%-%-END [%u ]*PRIVATE KEY%-%-%-%-%-" },
}
-- NAME=value and "name": "value" where the name says secret.
local SECRET_NAME = { "password", "passwd", "secret", "token", "api_key", "apikey" }

local function redact_string(s)
  local n = 0
  for _, p in ipairs(PATTERNS) do
    local c
    s, c = s:gsub(p[2], "[redacted:" .. p[1] .. "]")
    n = n + c
  end
  for _, name in ipairs(SECRET_NAME) do
    -- KEY_PASSWORD=hunter2, DB_TOKEN: abc (case-insensitive on the name)
    local pat = "([%w_]*" .. name:gsub("%a", function(ch)
      return "[" .. ch:lower() .. ch:upper() .. "]" end) .. "[%w_]*%s*[=:]%s*)([^%s\"']+)"
    local c
    s, c = s:gsub(pat, function(key, value)
      if value:match("^%[redacted") then return nil end
      return key .. "[redacted]"
    end)
    n = n + c
  end
  return s, n
end

-- Redacts the strings of a JSON value in place (the hook's res.result is
-- its own copy; tables keep their tg.array / tg.object marks); returns the
-- value and how many secrets were found.
local function redact(v, depth)
  if type(v) == "string" then return redact_string(v) end
  if type(v) ~= "table" or depth > 64 then return v, 0 end
  local n = 0
  for k, x in pairs(v) do
    local c
    v[k], c = redact(x, depth + 1)
    n = n + c
  end
  return v, n
end

tg.after_tool("*", function(call, res)
  if res.result == nil then return end
  local clean, found = redact(res.result, 0)
  if found > 0 then return tg.result(clean) end
end)
