-- toolgate.secrets — which paths hold credentials, and whether a call read
-- one: shared by the starter policies that keep secrets out of reach
-- (30_secrets.lua) and that mark a session sensitive once one was read
-- (80_taint.lua), so both go by one list.
--
--   local secrets = require "toolgate.secrets"
--   secrets.is_secret(".env")             --> true
--   secrets.add("/%.vault%-token$")       -- a Lua pattern, against "/" .. path
--   secrets.read_by(call)                 --> ".env" (what it names) or nil
local shell = require "toolgate.shell"

local M = {}

M.SECRET = {
  "/%.env$", "/%.env%.[^/]+$", "/%.envrc$",             -- dotenv files
  "/%.ssh/", "/id_[rd]sa[^/]*$", "/id_ed25519[^/]*$", "/id_ecdsa[^/]*$",
  "/%.aws/credentials$", "/%.aws/config$", "/%.aws/sso/cache/",
  "/%.config/gcloud/", "/%.azure/", "/%.kube/config$", "/%.docker/config%.json$",
  "/%.git%-credentials$", "/%.netrc$", "/%.npmrc$", "/%.pypirc$",
  "/%.config/gh/hosts%.yml$", "/%.gnupg/", "/%.password%-store/",
  "/Library/Keychains/", "%.keychain[^/]*$", "/%.local/share/keyrings/",
  "%.pem$", "%.key$", "%.p12$", "%.pfx$",
}
M.NOT_SECRET = { "/%.env%.example$", "/%.env%.sample$", "/%.env%.template$" }

-- Words that only name a file, without reading it.
M.NAMES_ONLY = { echo = true, printf = true, ls = true, test = true,
  ["["] = true, stat = true, touch = true }

function M.add(pattern) M.SECRET[#M.SECRET + 1] = pattern end

function M.is_secret(path)
  if type(path) ~= "string" then return false end
  local p = "/" .. path:gsub("^~/", ""):gsub("^%$HOME/", ""):gsub("^%${HOME}/", "")
  for _, pat in ipairs(M.NOT_SECRET) do if p:find(pat) then return false end end
  for _, pat in ipairs(M.SECRET) do if p:find(pat) then return true end end
  return false
end

-- The secret path a call reads (as written), or nil: a file tool's paths
-- (as written, and where they lead), or a shell command's words and
-- redirections (a word that only names a file does not count).
function M.read_by(call)
  for _, p in ipairs(call.paths or {}) do
    if M.is_secret(p.written) or M.is_secret(p.path) or M.is_secret(p.resolved) then
      return p.written or p.path or p.resolved
    end
  end
  for _, c in ipairs(call.commands or {}) do
    local argv = c.argv or {}
    if #argv > 0 and not M.NAMES_ONLY[shell.basename(argv[1])] then
      for k = 2, #argv do
        if M.is_secret(argv[k]) or M.is_secret(argv[k]:match("^[^=]+=(.+)$")) then
          return argv[k]
        end
      end
    end
    for _, r in ipairs(c.redirects or {}) do
      if M.is_secret(r.target) then return r.target end
    end
  end
  return nil
end

return M
