-- toolgate.lua of the conformance run: the suite's reference server
-- (reference-server.mjs, on stdio) as the one upstream, named "conf";
-- every call allowed (the suite tests the protocol, not the policies), no
-- database; its tools and prompts under their own names (prefix = false),
-- as the suite calls them, and only those (expose: no built-in tools).
-- run.mjs copies this file into a scratch folder and sets
-- REFERENCE_SERVER to the server's path.
return {
  db = false,
  defaults = { verdict = "allow" },
  expose = { "test_*", "json_schema_*" },
  servers = {
    conf = { command = "node", args = { os.getenv("REFERENCE_SERVER") },
             prefix = false },
  },
}
