-- A session that read a secret gets no network. Once a call of the session
-- read a credential file (toolgate.secrets' list, as 30_secrets.lua keeps
-- it: the agent's Read of .env, `cat .env`, `base64 < id_rsa`), or a
-- redaction rule matched in a tool's input or result (toolgate does that
-- itself), the session is *sensitive*: from then on what could carry the
-- secret away is denied — shell commands that reach the network (curl,
-- wget, nc, ssh, scp, rsync to a host, git push, package publishes…; a
-- command the shell analysis cannot see into counts as one), the agent's
-- WebFetch and WebSearch, the tools listed in NETWORK_TOOLS, and the MCP
-- tools toolgate.lua marks as network (servers.NAME.network = true, or a
-- list of the server's tools; the agent's own mcp__NAME__* tools count
-- too: call.network) — with a message naming the call that made the
-- session sensitive. The taint is
-- kept with the session in the database (a resident instance, a hook
-- process and a restart see one), and only a person clears it:
-- `toolgate approvals clear-taint SESSION`.
--
-- A read of a secret that 30_secrets.lua denies never happens, so it does
-- not taint; one the user let through (VERDICT = tg.ask there) does.
local tg = require "toolgate"
local shell = require "toolgate.shell"
local secrets = require "toolgate.secrets"

local VERDICT = tg.deny -- or tg.ask: the user may let one through

-- Tools that reach the network whatever their input: the agent's names, or
-- toolgate's and an MCP server's (e.g. "mcp__github__*"). An MCP server's
-- are better marked in toolgate.lua (servers.github.network = true), where
-- every front and every policy sees them as call.network.
local NETWORK_TOOLS = { "WebFetch", "WebSearch" }

-- Programs that reach the network.
local NETWORK = { curl = true, wget = true, nc = true, ncat = true,
  netcat = true, socat = true, telnet = true, ssh = true, scp = true,
  sftp = true, ftp = true, tftp = true, dig = true, nslookup = true,
  host = true, ping = true, http = true, https = true, xh = true,
  aria2c = true, lftp = true, mosh = true, gh = true }
-- Subcommands that do: {program, subcommand...}.
local NETWORK_SUB = {
  { "git", "push" }, { "git", "fetch" }, { "git", "pull" }, { "git", "clone" },
  { "git", "ls-remote" }, { "git", "send-email" }, { "git", "remote", "update" },
  { "npm", "publish" }, { "yarn", "publish" }, { "pnpm", "publish" },
  { "cargo", "publish" }, { "gem", "push" }, { "twine", "upload" },
  { "docker", "push" }, { "docker", "login" }, { "poetry", "publish" },
  { "flit", "publish" }, { "hatch", "publish" }, { "dotnet", "nuget" },
}

-- The words of argv after its program and the global options (-C dir).
local function sub_matches(argv, want)
  if shell.basename(argv[1]) ~= want[1] then return false end
  local k, j = 2, 2
  while argv[k] and argv[k]:sub(1, 1) == "-" do
    k = k + ((argv[k] == "-C" or argv[k] == "-c") and 2 or 1)
  end
  while want[j] do
    if argv[k] ~= want[j] then return false end
    k, j = k + 1, j + 1
  end
  return true
end

-- rsync reaches a host when an operand is host:path or rsync://.
local function rsync_remote(argv)
  if shell.basename(argv[1]) ~= "rsync" then return false end
  for _, w in ipairs(shell.operands(argv)) do
    if w:match("^[%w%.%-_@]+:") or w:match("^rsync://") then return true end
  end
  return false
end

-- What in the call reaches the network, in words, or nil.
local function network_use(call)
  if call.tool ~= "exec" then return nil end
  local cmds = call.commands
  if not cmds then return "a command the shell analysis cannot read" end
  for _, c in ipairs(cmds) do
    local argv = c.argv or {}
    if c.opaque then return "`" .. shell.join(argv) .. "` (" .. c.opaque .. ")" end
    if #argv > 0 then
      if NETWORK[shell.basename(argv[1])] or rsync_remote(argv) then
        return "`" .. shell.join(argv) .. "`"
      end
      for _, want in ipairs(NETWORK_SUB) do
        if sub_matches(argv, want) then return "`" .. shell.join(argv) .. "`" end
      end
    end
  end
  return nil
end

local function because(t, session)
  local what = t.call and (" by call " .. t.call .. (t.tool and (" (" .. t.tool .. ")") or ""))
    or ""
  return "this session is sensitive since " .. os.date("!%Y-%m-%d %H:%M:%SZ",
    math.floor(t.at / 1000)) .. what .. ": " .. t.reason
    .. "; a person can clear it with `toolgate approvals clear-taint " .. session .. "`"
end

-- A call that read a secret taints its session, once the tool ran.
tg.after_tool({ "read_file", "grep", "notebook_read", "exec" }, function(call)
  local what = secrets.read_by(call)
  if what and call.session then
    tg.taint(call, 1, "it read " .. what .. ", which holds credentials")
  end
end)

tg.rule {
  name = "tainted-no-network",
  priority = 1,
  tools = NETWORK_TOOLS,
  check = function(call)
    local t = call.session and tg.session_taint(call.session)
    if t then return VERDICT(call.tool .. " reaches the network, and " .. because(t, call.session)) end
  end,
}

tg.rule {
  name = "tainted-no-network-shell",
  priority = 1,
  tools = { "exec" },
  check = function(call)
    local t = call.session and tg.session_taint(call.session)
    if not t then return nil end
    local use = network_use(call)
    if use then return VERDICT(use .. " reaches the network, and " .. because(t, call.session)) end
  end,
}

-- The tools toolgate.lua marks as reaching the network (call.network).
-- When that cannot be known (a toolgate.lua that does not load), a
-- sensitive session's call is refused all the same.
tg.rule {
  name = "tainted-no-network-tool",
  priority = 1,
  tools = { "*" },
  check = function(call)
    local known, net = pcall(function() return call.network end)
    if known and not net then return nil end
    local t = call.session and tg.session_taint(call.session)
    if not t then return nil end
    local md = call.metadata
    local name = type(md) == "table" and md.agent_tool or call.tool
    if not known then
      return VERDICT("whether " .. name .. " reaches the network cannot be told ("
        .. tostring(net) .. "), and " .. because(t, call.session))
    end
    return VERDICT(name .. " reaches the network (toolgate.lua marks it), and "
      .. because(t, call.session))
  end,
}
