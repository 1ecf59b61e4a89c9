-- The default paths policy: a file-touching call whose path cannot be
-- followed to its end — a symlink loop, a name below a file, a /proc/self
-- link (it names the files of whichever process opens it) — is asked
-- about. Rules judge where a path leads (toolgate.agent's agent.paths
-- follows symlinks as the kernel does); for such a path there is no
-- "where", only its text, and a rule reading the text could be walked
-- around.
--
-- It only asks: a call whose paths all resolve gets no answer here.
local tg = require "toolgate"
local agent = require "toolgate.agent"

tg.rule {
  name = "paths-unresolved",
  priority = 5,
  tools = { "read_file", "write_file", "list_dir", "apply_patch", "grep", "glob",
    "notebook_read", "notebook_edit" },
  check = function(call)
    local bad = agent.unresolved(call)[1]
    if bad then
      return tg.ask("cannot tell which file " .. bad.path .. " is (" .. bad.why
        .. "); approve only if you know where it leads")
    end
  end,
}
