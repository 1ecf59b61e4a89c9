-- Tests of 70_git_history.lua: `toolgate test`.
local function sh(name, command, expect, rule, reason)
  return { name = name, tool = "exec", args = { command = command }, expect = expect,
    rule = rule, reason_match = reason }
end

return {
  sh("git push --force is denied", "git push --force origin main", "deny", "git-history",
    "rewrites what others pulled"),
  sh("git push -f after && is denied", "make && git push -f", "deny", "git-history"),
  sh("git push -uf is denied", "git push -uf origin x", "deny", "git-history"),
  sh("git push --force-with-lease is denied", "git push --force-with-lease", "deny", "git-history"),
  sh("git push origin +main is denied", "git push origin +main", "deny", "git-history"),
  sh("git -C dir push -f is denied", "git -C /src/x push -f", "deny", "git-history"),
  sh("git push --mirror is denied", "git push --mirror backup", "deny", "git-history"),
  sh("git filter-branch is denied", "git filter-branch --tree-filter 'rm x' HEAD", "deny",
    "git-history"),
  sh("git reflog expire is denied", "git reflog expire --expire=now --all", "deny", "git-history"),
  sh("git reset --hard asks", "git reset --hard HEAD~3", "ask", "git-history", "discards work"),
  sh("git rebase asks", "git rebase -i main", "ask", "git-history"),
  sh("git commit --amend asks", "git commit --amend -m x", "ask", "git-history"),
  sh("git clean -fdx asks", "git clean -fdx", "ask", "git-history"),
  sh("git checkout -- . asks", "git checkout -- .", "ask", "git-history"),
  sh("git branch -D asks", "git branch -D old", "ask", "git-history"),
  sh("git stash drop asks", "git stash drop", "ask", "git-history"),
  sh("git push --delete asks", "git push origin --delete old", "ask", "git-history"),
  sh("a plain push is the default's", "git push origin main", "ask", false),
  sh("git commit is the default's", "git commit -m 'x'", "ask", false),
  sh("git branch -d is the default's", "git branch -d merged", "ask", false),
  sh("git status is the default's", "git status", "ask", false),
}
