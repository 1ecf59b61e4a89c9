-- Secrets stay out of the agent's reach: credential and key files are not
-- read, searched or edited through any tool — the agent's Read, Grep and
-- Edit (judged where the path leads, symlinks followed) and its shell
-- (`cat .env`, `grep KEY ~/.aws/credentials`, `base64 < id_rsa`) alike. A
-- recursive search for credentials (`grep -r API_KEY .`) asks, since it
-- reads every .env it passes. Code the shell analysis cannot see into
-- (`python -c "open('.env')"`) is asked about by 10_shell.lua.
--
-- Which paths are secret is toolgate.secrets' list (80_taint.lua reads the
-- same one): extend it with secrets.add(pattern), a Lua pattern matched
-- against each path (with a leading "/"); `.env.example`, `.env.sample`
-- and `.env.template` pass.
local tg = require "toolgate"
local shell = require "toolgate.shell"
local secrets = require "toolgate.secrets"

local VERDICT = tg.deny -- or tg.ask: the user may let one through

-- Commands that print a secret without naming a file.
local TOKEN_COMMANDS = {
  { "security", "find%-.*%-password" }, { "security", "dump%-keychain" },
  { "gh", "auth", "token" }, { "gcloud", "auth", "print%-.*token" },
  { "az", "account", "get%-access%-token" }, { "aws", "configure", "get" },
  { "secret-tool", "lookup" },
}

local is_secret = secrets.is_secret

-- The agent's file tools: every path, as written and where it leads.
tg.rule {
  name = "secret-files",
  priority = 15,
  tools = { "read_file", "grep", "write_file", "apply_patch", "notebook_read",
    "notebook_edit" },
  check = function(call)
    for _, p in ipairs(call.paths or {}) do
      if is_secret(p.written) or is_secret(p.path) or is_secret(p.resolved) then
        return VERDICT("the agent may not read or change " .. (p.written or p.path)
          .. ": it holds credentials; ask the user for what you need from it")
      end
    end
  end,
}

-- Words that only name a file, without reading it.
local NAMES_ONLY = secrets.NAMES_ONLY

local function matches(argv, want)
  if shell.basename(argv[1]) ~= want[1] then return false end
  for k = 2, #want do
    local w = argv[k]
    if type(w) ~= "string" or not w:match("^" .. want[k] .. "$") then return false end
  end
  return true
end

local function hunts_credentials(argv)
  local name = shell.basename(argv[1])
  local recursive = (name == "grep" or name == "egrep" or name == "fgrep")
    and shell.has_flag(argv, "rR", { "recursive", "dereference-recursive" })
  recursive = recursive or name == "rg" or name == "ag" or name == "ack"
    or (name == "git" and argv[2] == "grep")
  if not recursive then return false end
  for k = 2, #argv do
    local w = argv[k]:lower()
    if w:find("key") or w:find("secret") or w:find("token") or w:find("passw")
        or w:find("credential") or w:find("aws_") then
      return true
    end
  end
  return false
end

-- The shell: any word or redirection naming a secret file.
tg.rule {
  name = "secret-files-shell",
  priority = 15,
  tools = { "exec" },
  check = function(call)
    for _, c in ipairs(call.commands or {}) do
      local argv = c.argv
      if #argv > 0 and not NAMES_ONLY[shell.basename(argv[1])] then
        for k = 2, #argv do
          if is_secret(argv[k]) or is_secret(argv[k]:match("^[^=]+=(.+)$")) then
            return VERDICT("the agent may not read " .. argv[k] .. " (in `"
              .. shell.join(argv) .. "`): it holds credentials")
          end
        end
        for _, want in ipairs(TOKEN_COMMANDS) do
          if matches(argv, want) then
            return VERDICT("`" .. shell.join(argv) .. "` prints a credential")
          end
        end
        if hunts_credentials(argv) then
          return tg.ask("`" .. shell.join(argv) .. "` searches every file below, "
            .. ".env and keys included, for credentials")
        end
      end
      for _, r in ipairs(c.redirects or {}) do
        if is_secret(r.target) then
          return VERDICT("the agent may not read or write " .. r.target
            .. ": it holds credentials")
        end
      end
    end
  end,
}
