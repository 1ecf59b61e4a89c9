-- toolgate.lua — toolgate as an MCP gateway: the MCP client (Claude Code,
-- Codex, Claude Desktop, ...) starts `toolgate serve --config
-- /path/to/this/toolgate.lua`; toolgate starts the servers below, offers
-- their tools as <server>__<tool> beside its own (exec, read_file, ...),
-- and every call goes through the policies in ./policies first.
-- Relative paths are taken from this file's folder.
return {
  policies = "policies",
  workspace = { "." },        -- where the file tools may read and write
  -- db = "toolgate.db",      -- the audit trail and approvals: by default
                              -- toolgate.db beside this file; false: none
  -- project = ".",           -- approvals are remembered for this folder

  defaults = {
    verdict = "ask",          -- a call no rule answers (and not read-only)
    timeout_ms = 120000,      -- per attempt
  },

  mcp = {
    separator = "__",         -- everything__echo
    ask_fallback = "reject",  -- a client that cannot ask the user: reject asks
    log = "toolgate.log",     -- stderr when absent
  },

  -- Globs over the names the client sees; "!" hides.
  expose = { "*", "!everything__get-env" },

  servers = {
    -- The MCP project's demo server, from npm.
    everything = {
      command = "npx",
      args = { "-y", "@modelcontextprotocol/server-everything@2026.8.31" },
      -- Tools of this server (its own names) the rules treat as read-only:
      -- allowed without asking unless a rule says otherwise. Upstream
      -- readOnlyHint annotations are not trusted.
      read_only = { "echo", "get-sum", "get-annotated-message" },
    },
    -- The reference filesystem server, confined to this folder.
    -- files = {
    --   command = "npx",
    --   args = { "-y", "@modelcontextprotocol/server-filesystem", "." },
    --   read_only = { "read_*", "list_*", "search_files", "get_file_info" },
    -- },
  },
}
