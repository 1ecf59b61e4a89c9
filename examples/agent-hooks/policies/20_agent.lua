-- Guard-rails for a coding agent (Claude Code or Codex) through
-- `toolgate hook`: the agent's Bash, Edit, Write and apply_patch arrive as
-- toolgate's exec, apply_patch and write_file (docs/agent-hooks.md), so
-- these rules are written against toolgate's tools and hold for every
-- front — an MCP client, a Lua host, the agents' hooks.
--
--   * git push --force is denied, in every spelling the shell allows;
--   * an edit of a file outside src/ asks the user first;
--   * after an edit, the test command's output goes to the model.
--   * past a daily token budget, shell commands ask first.
--
-- Put this file (and 10_shell.lua and 20_paths.lua from toolgate's
-- policies/, for destructive commands and paths that lead nowhere) in the
-- project's policies/ folder, then
-- `toolgate hook install claude-code` (or codex). TEST_COMMAND below is
-- the project's own.
local tg = require "toolgate"
local shell = require "toolgate.shell"
local agent = require "toolgate.agent"

local TEST_COMMAND = "make -s test 2>&1"

tg.rule {
  name = "no-force-push",
  priority = 20,
  tools = { "exec" },
  check = function(call)
    local cmds = shell.split(call.args.command)
    for _, c in ipairs(cmds or {}) do
      local argv = c.argv
      if shell.basename(argv[1]) == "git" and argv[2] == "push" then
        -- -f, --force, --force-with-lease: all rewrite what others pulled
        for k = 3, #argv do
          if argv[k] == "-f" or argv[k]:match("^%-%-force") or
              (argv[k]:match("^%-%a+$") and argv[k]:find("f", 2, true)) or
              argv[k]:match("^%+") then -- git push origin +main
            return tg.deny("force pushes rewrite shared history: push without "
              .. "--force, or ask the user to do it")
          end
        end
      end
    end
  end,
}

-- agent.paths gives where each file is, symlinks followed as the kernel
-- follows them: src/lnk/etc/x is /etc/x when src/lnk -> /. A path whose
-- end cannot be found (a symlink loop) is listed by agent.unresolved and
-- asked about by the shipped policies/20_paths.lua.
tg.rule {
  name = "edits-outside-src",
  priority = 100,
  tools = { "write_file", "apply_patch" },
  check = function(call)
    for _, path in ipairs(agent.paths(call)) do
      if not agent.inside(path, "src") then
        return tg.ask("the agent wants to change " .. path .. ", outside src/")
      end
    end
  end,
}

-- The test command itself may run without asking: it is what the hook
-- below runs (and the agent may run it too).
tg.rule {
  name = "run-the-tests",
  priority = 50,
  tools = { "exec" },
  check = function(call)
    if call.args.command == TEST_COMMAND then return tg.allow("the project's tests") end
  end,
}

-- After each edit the agent made (Edit, MultiEdit, Write, apply_patch),
-- the tests run and the model reads how they went.
tg.after_tool({ "write_file", "apply_patch" }, function(call, res)
  if agent.of(call) and res.status == "ok" then
    agent.context_from(call, "exec", { command = TEST_COMMAND, timeout_ms = 20000 },
      "the tests after this edit (" .. TEST_COMMAND .. ")")
  end
end)

-- What the agent's model read and wrote today, as its Stop hook read it
-- from the transcript (docs/agent-hooks.md, "Records"): past the limit,
-- each shell command asks the user first. A budget in tokens, since the
-- transcript has no prices.
tg.budget { name = "agent-tokens-today", unit = "tokens", limit = 20e6, period = "day" }

tg.rule {
  name = "token-budget",
  priority = 10,
  tools = { "exec" },
  check = function(call)
    local b = tg.budget_status("agent-tokens-today")
    if agent.of(call) and b.level == "exceeded" then
      return tg.ask(("the agent has used %.1fM tokens today (budget %.0fM): "
        .. "run this anyway?"):format(b.spent / 1e6, b.limit / 1e6))
    end
  end,
}
