-- Shared history and uncommitted work: a force push (every spelling: -f,
-- --force, --force-with-lease, +branch, --mirror) and the commands that
-- erase history for good (filter-branch, filter-repo, reflog expire,
-- gc --prune=now) are denied; the ones that rewrite or discard local work
-- (reset --hard, rebase, commit --amend, clean -f, checkout/restore of
-- everything, branch -D, stash drop/clear, push --delete) ask.
local tg = require "toolgate"
local shell = require "toolgate.shell"

-- git's options before the subcommand, and whether they take a value.
local GLOBAL_WITH_VALUE = { ["-C"] = true, ["-c"] = true, ["--git-dir"] = true,
  ["--work-tree"] = true, ["--namespace"] = true, ["--exec-path"] = true,
  ["--config-env"] = true }

-- The subcommand and its words: {"push", "-f", ...}, or nil.
local function git_words(argv)
  if shell.basename(argv[1]) ~= "git" then return nil end
  local k = 2
  while argv[k] and argv[k]:sub(1, 1) == "-" do
    k = k + (GLOBAL_WITH_VALUE[argv[k]] and 2 or 1)
  end
  if not argv[k] then return nil end
  local w = {}
  for j = k, #argv do w[#w + 1] = argv[j] end
  return w
end

local function has(words, ...)
  for _, want in ipairs({ ... }) do
    for k = 2, #words do
      local w = words[k]
      if w == want or w:sub(1, #want + 1) == want .. "=" then return w end
    end
  end
end

local function short(words, letter) -- -f inside -uf
  for k = 2, #words do
    local w = words[k]
    if w:match("^%-%a+$") and w:find(letter, 2, true) then return w end
  end
end

local function force_push(w)
  if w[1] ~= "push" then return nil end
  local f = has(w, "--force", "--force-with-lease", "--force-if-includes", "--mirror")
    or short(w, "f")
  if f then return f end
  for k = 2, #w do
    if w[k]:match("^%+") then return w[k] end -- git push origin +main
  end
end

local DENY = {
  function(w) local f = force_push(w); return f and ("git push " .. f .. " rewrites what others pulled") end,
  function(w) return (w[1] == "filter-branch" or w[1] == "filter-repo") and ("git " .. w[1] .. " rewrites all of history") end,
  function(w) return w[1] == "reflog" and (w[2] == "expire" or w[2] == "delete") and "git reflog " .. w[2] .. " erases the way back" end,
  function(w) return w[1] == "gc" and has(w, "--prune") == "--prune=now" and "git gc --prune=now erases unreachable commits" end,
  function(w) return w[1] == "update-ref" and has(w, "-d") and "git update-ref -d deletes a ref" end,
}

local ASK = {
  function(w) return w[1] == "reset" and has(w, "--hard", "--merge", "--keep") and "git reset " .. has(w, "--hard", "--merge", "--keep") .. " discards work" end,
  function(w) return w[1] == "rebase" and "git rebase rewrites commits" end,
  function(w) return w[1] == "commit" and has(w, "--amend") and "git commit --amend rewrites the last commit" end,
  function(w) return w[1] == "clean" and (has(w, "--force") or short(w, "f")) and "git clean -f deletes untracked files" end,
  function(w) return (w[1] == "checkout" or w[1] == "restore") and (has(w, ".", "--", ":/") and #w <= 4 or has(w, "--force") or short(w, "f")) and "git " .. w[1] .. " of everything discards uncommitted changes" end,
  function(w) return w[1] == "branch" and (has(w, "--delete") and has(w, "--force") or short(w, "D")) and "git branch -D deletes an unmerged branch" end,
  function(w) return w[1] == "stash" and (w[2] == "drop" or w[2] == "clear") and "git stash " .. w[2] .. " loses stashed work" end,
  function(w) return w[1] == "push" and (has(w, "--delete") or short(w, "d") or (w[3] and w[3]:match("^:"))) and "git push --delete removes a remote branch" end,
}

tg.rule {
  name = "git-history",
  priority = 20,
  tools = { "exec" },
  check = function(call)
    for _, c in ipairs(call.commands or {}) do
      local w = git_words(c.argv)
      if w then
        for _, f in ipairs(DENY) do
          local why = f(w)
          if why then return tg.deny(why .. "; ask the user to do it") end
        end
        for _, f in ipairs(ASK) do
          local why = f(w)
          if why then return tg.ask(why .. " (`" .. shell.join(c.argv) .. "`)") end
        end
      end
    end
  end,
}
