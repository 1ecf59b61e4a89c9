-- Tests of 40_agent_config.lua: `toolgate test`.

-- The policies folder, as in 40_agent_config.lua (`toolgate init` writes
-- the same path into both).
local POLICIES = "policies" -- @policies-folder
local parent, base = POLICIES:match("^(.*)/([^/]+)$")
parent, base = parent or "/proj", base or POLICIES
local function write(path)
  return { tool = "write_file", args = { path = path, content = "{}" },
    metadata = { agent = "claude-code", agent_paths = { path } } }
end
local function case(name, t, expect, rule, reason)
  t.name, t.expect, t.rule, t.reason_match = name, expect, rule, reason
  return t
end
local function sh(command)
  return { tool = "exec", args = { command = command } }
end

return {
  case("Write .claude/settings.json is denied", write(".claude/settings.json"), "deny",
    "agent-config-files", "guard%-rails"),
  case("Edit .claude/settings.local.json is denied", write(".claude/settings.local.json"),
    "deny", "agent-config-files"),
  case("Write ~/.claude/settings.json is denied", write("/home/u/.claude/settings.json"),
    "deny", "agent-config-files"),
  case("Write .codex/hooks.json is denied", write(".codex/hooks.json"), "deny", "agent-config-files"),
  case("Write ~/.codex/config.toml is denied", write("/home/u/.codex/config.toml"), "deny",
    "agent-config-files"),
  case("Write a policy file is denied", write(POLICIES .. "/99_allow_all.lua"), "deny",
    "agent-config-files"),
  case("Write toolgate's state is denied", write("/home/u/.local/state/toolgate/toolgate.db"),
    "deny", "agent-config-files"),
  case("Write toolgate.lua is denied (its network marks guard the taint)",
    write("toolgate.lua"), "deny", "agent-config-files"),
  case("sed -i on a toolgate.lua is denied", sh("sed -i s/network/x/ sub/toolgate.lua"), "deny",
    "agent-config-shell"),
  case("a patch of a policy is denied", { tool = "apply_patch",
    args = { patch = "--- " .. POLICIES .. "/10_shell.lua\n+++ " .. POLICIES
      .. "/10_shell.lua\n@@ -1 +1 @@\n-a\n+b\n" } },
    "deny", "agent-config-files"),
  case("Write src/settings.json is the default's", write("src/settings.json"), "ask", false),
  case("echo > .claude/settings.json is denied", sh("echo '{}' > .claude/settings.json"), "deny",
    "agent-config-shell"),
  case("sed -i on a policy is denied", sh("sed -i s/deny/allow/ '" .. POLICIES .. "/30_secrets.lua'"), "deny",
    "agent-config-shell"),
  case("rm -f .codex/hooks.json is denied", sh("rm -f .codex/hooks.json"), "deny", "agent-config-shell"),
  case("Write .gemini/settings.json is denied", write(".gemini/settings.json"), "deny",
    "agent-config-files"),
  case("Write .github/hooks/toolgate.json is denied", write(".github/hooks/toolgate.json"), "deny",
    "agent-config-files"),
  case("rm ~/.copilot/hooks/toolgate.json is denied", sh("rm ~/.copilot/hooks/toolgate.json"),
    "deny", "agent-config-shell"),
  case("Write .cursor/hooks.json is denied", write(".cursor/hooks.json"), "deny",
    "agent-config-files"),
  case("rm .opencode/plugins/toolgate.js is denied", sh("rm .opencode/plugins/toolgate.js"),
    "deny", "agent-config-shell"),
  case("Write opencode.json is denied", write("opencode.json"), "deny", "agent-config-files"),
  case("Write ~/.config/opencode/plugins/toolgate.js is denied",
    write("/home/u/.config/opencode/plugins/toolgate.js"), "deny", "agent-config-files"),
  case("cp over the settings is denied", sh("cp /tmp/x .claude/settings.json"), "deny",
    "agent-config-shell"),
  case("an agent's relative write in its cwd is denied", { tool = "exec",
    args = { command = "tee '" .. base .. "/x.lua' < /tmp/x" },
    metadata = { agent = "claude-code", agent_cwd = parent } }, "deny", "agent-config-shell"),
  case("cat .claude/settings.json reads: the default's", sh("cat .claude/settings.json"), "ask", false),
  case("toolgate test is the default's", sh("toolgate test '" .. POLICIES .. "'"), "ask", false),
  case("toolgate approvals grant is denied", sh("toolgate approvals grant exec --always"), "deny",
    "agent-config-shell", "toolgate's own state"),
  case("toolgate approvals (the list) is the default's", sh("toolgate approvals"), "ask", false),
  case("toolgate hook install is denied",
    sh("toolgate hook install claude-code --policies '" .. POLICIES .. "'"), "deny", "agent-config-shell"),
}
