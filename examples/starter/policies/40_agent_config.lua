-- The agent may not change its own guard-rails: the policies folder, the
-- agent's settings (where its hooks and permissions are: .claude/
-- settings*.json, .codex/, .gemini/settings*.json, .github/hooks/,
-- .copilot/, .cursor/hooks.json, OpenCode's plugins and opencode.json),
-- toolgate's state (remembered approvals) and a toolgate.lua (it says
-- which MCP servers reach the network, read by the hooks for
-- 80_taint.lua, and which servers a gateway starts).
-- Reading them is fine; writing is denied through every tool — Edit,
-- Write, apply_patch, and the shell (`> .claude/settings.json`, `sed -i`,
-- `cp`, `mv`, `rm`, `tee`, `chmod` ...: any command but a reader naming
-- one of them), and so are `toolgate approvals grant`, `toolgate hook
-- install` and the other toolgate commands that change them.
local tg = require "toolgate"
local shell = require "toolgate.shell"
local agent = require "toolgate.agent"

-- The policies folder: `toolgate init` writes its absolute path here.
local POLICIES = "policies" -- @policies-folder

-- Lua patterns matched against each path (with a leading "/").
local PROTECTED = {
  "/%.claude/settings[^/]*%.json$", "/%.claude/hooks/", "/%.codex/",
  "/%.gemini/settings[^/]*%.json$", "/%.github/hooks/", "/%.copilot/",
  "/%.cursor/hooks%.json$", "/%.cursor/hooks/", "/%.opencode/plugins?/",
  "/%.config/opencode/", "/opencode%.jsonc?$",
  "/%.local/state/toolgate/", "/%.config/toolgate/", "/toolgate%.lua$",
}

-- path as written (cwd: the agent's, for a relative one) or resolved.
local function is_protected(path, cwd)
  if type(path) ~= "string" then return false end
  for _, q in ipairs({ agent.norm(path), agent.norm(agent.abs(path, cwd)),
      agent.rel(path, cwd) }) do
    if q == POLICIES or q:sub(1, #POLICIES + 1) == POLICIES .. "/" then return true end
  end
  local p = "/" .. path:gsub("^~/", ""):gsub("^%$HOME/", ""):gsub("^%${HOME}/", "")
  for _, pat in ipairs(PROTECTED) do if p:find(pat) then return true end end
  return false
end

local function refuse(what)
  return tg.deny("the agent may not change " .. what .. ": it holds the agent's "
    .. "own guard-rails (hooks, permissions, policies); ask the user to do it")
end

tg.rule {
  name = "agent-config-files",
  priority = 6,
  tools = { "write_file", "apply_patch", "notebook_edit" },
  check = function(call)
    for _, p in ipairs(call.paths or {}) do
      if is_protected(p.written) or is_protected(p.path) or is_protected(p.resolved) then
        return refuse(p.written or p.path)
      end
    end
  end,
}

-- Commands that only read or name what they are given.
local READERS = { cat = true, less = true, more = true, head = true, tail = true,
  grep = true, rg = true, ls = true, stat = true, file = true, wc = true,
  diff = true, jq = true, echo = true, printf = true, test = true, ["["] = true }
local TOOLGATE_READS = { check = true, test = true, explain = true, log = true }
-- toolgate's own commands that change its rules or remembered approvals.
local TOOLGATE_CHANGES = { approvals = { grant = true, revoke = true },
  hook = { install = true, uninstall = true }, import = true, init = true }
local WRITES = { [">"] = true, [">>"] = true, [">|"] = true, ["<>"] = true,
  ["&>"] = true, ["&>>"] = true }

tg.rule {
  name = "agent-config-shell",
  priority = 6,
  tools = { "exec" },
  check = function(call)
    local m = call.metadata
    local cwd = type(m) == "table" and m.agent_cwd or nil
    for _, c in ipairs(call.commands or {}) do
      local argv = c.argv
      local name = shell.basename(argv[1])
      local reader = READERS[name] or (name == "toolgate" and TOOLGATE_READS[argv[2]])
      local changes = name == "toolgate" and TOOLGATE_CHANGES[argv[2]]
      if changes == true or (type(changes) == "table" and changes[argv[3]]) then
        return refuse("toolgate's own state (`" .. shell.join(argv) .. "`)")
      end
      if #argv > 0 and not reader then
        for k = 2, #argv do
          if is_protected(argv[k], cwd) or is_protected(argv[k]:match("^[^=]+=(.+)$"), cwd) then
            return refuse(argv[k] .. " (in `" .. shell.join(argv) .. "`)")
          end
        end
      end
      for _, r in ipairs(c.redirects or {}) do
        if WRITES[r.op] and is_protected(r.target, cwd) then
          return refuse(r.target .. " (" .. r.op .. ")")
        end
      end
    end
  end,
}
