-- Tests of 80_taint.lua: `toolgate test`. The cases run in order in one
-- runtime, so a session tainted by one case is tainted for the next ones.
-- A case with a result fixture runs the post-hooks: the tool "ran".
local function read(path, session)
  return { tool = "read_file", args = { path = path }, session = session,
    metadata = { agent = "claude-code", agent_paths = { path } },
    result = { content = "KEY=1" } }
end
local function sh(command, session, result)
  return { tool = "exec", args = { command = command }, session = session, result = result }
end
local function case(name, t, expect, rule, reason)
  t.name, t.expect, t.rule, t.reason_match = name, expect, rule, reason
  return t
end

return {
  case("curl in a clean session is the default's", sh("curl -s https://x.example", "clean"),
    "ask", false),
  case("WebFetch in a clean session is the default's",
    { tool = "WebFetch", args = { url = "https://x.example" }, session = "clean" }, "ask", false),
  case("reading src/main.c does not taint", read("src/main.c", "clean"), "allow", false),
  case("curl after reading src/main.c is the default's", sh("curl https://x.example", "clean"),
    "ask", false),
  -- 30_secrets.lua denies reading .env, so here that read never runs and
  -- never taints (the hook specs show a read that ran: spec/lua/hooks_spec.lua).
  case("reading .env is denied, and does not taint", read(".env", "s0"), "deny", "secret-files"),
  case("curl after the denied read is the default's", sh("curl https://x.example", "s0"), "ask",
    false),
  -- a key in a tool's result: toolgate's redaction matched, the session is tainted
  case("a config file with an AWS key (it ran)", { tool = "read_file", args = { path = "conf.py" },
    session = "s1", result = { content = "KEY = 'AKIAABCDEFGHIJKLMNOP'" } }, "allow", false),
  case("curl after it is denied, naming the call", sh("curl -d @- https://x.example", "s1"),
    "deny", "tainted-no-network-shell", "redaction rule matched in read_file's result"),
  case("git push after it is denied", sh("git -C repo push origin main", "s1"), "deny",
    "tainted-no-network-shell"),
  case("rsync to a host after it is denied", sh("rsync -a . host:/backup", "s1"), "deny",
    "tainted-no-network-shell"),
  case("an opaque command after it is denied", sh([[python3 -c "import urllib"]], "s1"), "deny",
    "tainted-no-network-shell", "reaches the network"),
  case("WebFetch after it is denied", { tool = "WebFetch", args = { url = "https://x.example" },
    session = "s1" }, "deny", "tainted-no-network", "sensitive since"),
  case("ls after it is the default's", sh("ls -la", "s1"), "ask", false),
  case("rsync between folders after it is the default's", sh("rsync -a src/ dst/", "s1"), "ask",
    false),
  case("a token in a command's input taints too",
    sh("echo ghp_abcdefghijklmnopqrstuvwxyz0123456789", "s2", { stdout = "", exit_code = 0 }),
    "ask", false),
  case("wget after it is denied", sh("wget https://x.example", "s2"), "deny",
    "tainted-no-network-shell", "exec's input"),
  case("another session stays clean", sh("curl https://x.example", "clean"), "ask", false),
  -- MCP tools toolgate.lua marks as network (servers.web.network = true):
  -- network = true here says what the config would
  case("a network MCP tool in a clean session is the default's",
    { tool = "web__fetch", stand_in = true, network = true, args = { url = "https://x.example" },
      session = "clean" }, "ask", false),
  case("a network MCP tool after a secret is denied, naming the call",
    { tool = "web__fetch", stand_in = true, network = true, args = { url = "https://x.example" },
      session = "s1" }, "deny", "tainted-no-network-tool",
    "web__fetch reaches the network .*redaction rule matched in read_file's result"),
  case("the agent's own client of that server is denied too",
    { tool = "mcp__web__search", network = true, args = { q = "x" }, session = "s1" }, "deny",
    "tainted-no-network-tool", "mcp__web__search reaches the network"),
  case("an MCP tool not marked is the default's",
    { tool = "files__list", stand_in = true, args = {}, session = "s1" }, "ask", false),
}
