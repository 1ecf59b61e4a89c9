-- Supply chain: code from the network does not run unseen. A download
-- piped to a shell (`curl … | sh`, `bash <(curl …)`) is asked about by
-- 10_shell.lua (the analysis cannot see what runs); here, a download and
-- a run of what it may have fetched on one line (`curl -o x … && ./x`,
-- `wget … && python3 get.py`) asks, and so does a package installed from
-- a URL, a git repository or a tarball rather than the registry (`pip
-- install git+https://…`, `npm install https://…`, `cargo install --git`).
-- Change tg.ask to tg.deny below to refuse them outright.
local tg = require "toolgate"
local shell = require "toolgate.shell"

local DOWNLOADERS = { curl = true, wget = true, fetch = true, aria2c = true,
  http = true, https = true, xh = true }
local RUNNERS = { sh = true, bash = true, dash = true, zsh = true, ksh = true,
  fish = true, python = true, python3 = true, perl = true, ruby = true,
  node = true, php = true, lua = true, pwsh = true, iex = true }

-- A program in this folder (./x), or a shell or an interpreter whose
-- program is not on the line (it reads it from its input or a file):
-- `python -m json.tool` reads data only.
local function runs_fetched_code(argv)
  local name = shell.basename(argv[1])
  if type(argv[1]) == "string" and argv[1]:match("^%.%.?/") then return true end
  if not (RUNNERS[name] or RUNNERS[(name:gsub("[%d.]+$", ""))]) then return false end
  local given = argv[2] == "-c" or argv[2] == "-e" or argv[2] == "-m"
  return not given
end

-- A download and a runner in one command line: what one fetches, the
-- other may run (a pipe, <( ), $( ), a file written then run).
tg.rule {
  name = "download-and-run",
  priority = 12,
  tools = { "exec" },
  check = function(call)
    local fetched, ran
    for _, c in ipairs(call.commands or {}) do
      local name = shell.basename(c.argv[1])
      if DOWNLOADERS[name] then fetched = fetched or shell.join(c.argv) end
      if runs_fetched_code(c.argv) then ran = ran or c.argv[1] end
    end
    if fetched and ran then
      return tg.ask("`" .. fetched .. "` downloads what " .. ran .. " may run, "
        .. "unseen: approve only if you have read it")
    end
  end,
}

local URL = { "^https?://", "^git%+", "^git://", "^ssh://", "^github:", "^gitlab:",
  "^bitbucket:", "^file:", "%.tar%.gz$", "%.tgz$", "%.whl$", "%.zip$" }
local INSTALLERS = {
  pip = { install = true }, pip3 = { install = true }, uv = { pip = true, add = true },
  pipx = { install = true, run = true }, npm = { install = true, i = true, add = true },
  pnpm = { add = true, install = true, i = true }, yarn = { add = true },
  bun = { add = true, install = true, i = true }, gem = { install = true },
  cargo = { install = true }, go = { install = true, get = true },
  composer = { require = true }, npx = true, bunx = true,
}

local function from_url(argv)
  for k = 2, #argv do
    local w = argv[k]
    if w == "--git" or w:match("^%-%-git=") or w == "--index-url" or w == "-i"
        or w == "--extra-index-url" or w:match("^%-%-registry") then
      return w .. (argv[k + 1] and " " .. argv[k + 1] or "")
    end
    for _, pat in ipairs(URL) do
      if w:find(pat) then return w end
    end
  end
end

tg.rule {
  name = "install-from-url",
  priority = 12,
  tools = { "exec" },
  check = function(call)
    for _, c in ipairs(call.commands or {}) do
      local argv = c.argv
      local name = shell.basename(argv[1])
      local subs = INSTALLERS[name] or INSTALLERS[(name:gsub("[%d.]+$", ""))]
      if name == "python" or name == "python3" then -- python -m pip install
        if argv[2] == "-m" and argv[3] and argv[3]:match("^pip") then
          local rest = {}
          for k = 3, #argv do rest[#rest + 1] = argv[k] end
          subs, argv = INSTALLERS.pip, rest
        end
      end
      if subs and (subs == true or subs[argv[2]]) then
        local src = from_url(argv)
        if src then
          return tg.ask("`" .. shell.join(c.argv) .. "` installs code from " .. src
            .. ", not from the registry: approve only if you trust that source")
        end
      end
    end
  end,
}
