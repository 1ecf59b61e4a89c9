-- toolgate2026.lua of the 2026-07-28 conformance run: as toolgate.lua
-- (the suite's reference server as upstream "conf", every call allowed,
-- no database, names as the suite calls them), and beside it "fix":
-- fixtures2026.mjs, the tools and the prompt the 2026-07-28 scenarios
-- call that the reference server lacks. Its json_schema_2020_12_tool
-- (the 0.2.0 suite's schema) stands for the reference server's, which is
-- not listed (REFERENCE_OMIT): two servers of prefix = false may not
-- offer one name. run2026.mjs copies this file into a scratch folder and
-- sets REFERENCE_SERVER and FIXTURES_SERVER to the servers' paths.
return {
  db = false,
  defaults = { verdict = "allow" },
  expose = { "test_*", "json_schema_*" },
  servers = {
    conf = { command = "node", args = { os.getenv("REFERENCE_SERVER") },
             env = { REFERENCE_OMIT = "json_schema_2020_12_tool" },
             prefix = false },
    fix = { command = "node", args = { os.getenv("FIXTURES_SERVER") },
            prefix = false },
  },
}
