-- Writes inside src/ and docs/ go ahead; anywhere else they are asked.
-- write_file names its path; apply_patch names every file it touches in
-- its diff headers (--- a/x, +++ b/y, and git's rename from/to), and all
-- of them must be inside. The file tools themselves refuse paths outside
-- the workspace (.., symlinks), so this rule only draws the line inside it.
local tg = require "toolgate"

local WRITABLE = { "src/", "docs/" }

local function inside(path)
  if type(path) ~= "string" or path:find("%.%.") then return false end
  path = path:gsub("^%./", "")
  for _, dir in ipairs(WRITABLE) do
    if path:sub(1, #dir) == dir then return true end
  end
  return false
end

-- The paths a unified (or git) diff touches; /dev/null is no path.
local function patch_paths(patch)
  local paths = {}
  for line in (patch .. "\n"):gmatch("([^\n]*)\n") do
    local p = line:match("^%-%-%- (%S+)") or line:match("^%+%+%+ (%S+)")
      or line:match("^rename from (.+)$") or line:match("^rename to (.+)$")
    if p and p ~= "/dev/null" then
      paths[#paths + 1] = p:gsub("^[ab]/", "")
    end
  end
  return paths
end

tg.rule { name = "writes-in-src-and-docs", priority = 300,
  tools = { "write_file", "apply_patch" },
  check = function(call)
    local paths = call.tool == "write_file" and { call.args.path }
                  or patch_paths(call.args.patch or "")
    if #paths == 0 then return tg.ask("a patch that names no file") end
    for _, p in ipairs(paths) do
      if not inside(p) then
        return tg.ask(("write %s (outside %s)"):format(p, table.concat(WRITABLE, " and ")))
      end
    end
    return tg.allow("inside " .. table.concat(WRITABLE, " and "))
  end }
