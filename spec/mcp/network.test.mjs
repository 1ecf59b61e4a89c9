// network.test.mjs — toolgate.lua's servers.NAME.network through `toolgate
// serve`: the tools it marks are call.network to the rules (all of a
// server's with true, some with a list), the others are not, and the
// starter's 80_taint.lua refuses a marked tool to a sensitive session,
// naming what made it sensitive.
import fs from "node:fs";
import path from "node:path";
import { run, project, sdkClient, text, REPO, EVERYTHING } from "./lib.mjs";

const CONFIG = `return {
  policies = "policies",
  defaults = { verdict = "allow" },
  servers = {
    everything = { command = "node", args = { ${JSON.stringify(EVERYTHING)}, "stdio" },
                   network = { "echo", "get-sum" } },
  },
}`;

const POLICY = `local tg = require "toolgate"
tg.rule { name = "says-network", priority = 2, tools = { "everything__*" },
  check = function(call)
    if call.args.say then return tg.deny("network=" .. tostring(call.network)) end
  end }
tg.tool { name = "taint_me", read_only = true, run = function(args, ctx)
  return { ok = tg.taint(ctx.session or "default", 1, "it read the vault") } end }`;

await run("network", async (check) => {
  const p = project(CONFIG);
  fs.writeFileSync(path.join(p.policies, "30_network.lua"), POLICY);
  fs.copyFileSync(path.join(REPO, "examples/starter/policies/80_taint.lua"),
                  path.join(p.policies, "80_taint.lua"));
  const a = await sdkClient(p);
  const c = a.client;
  let r = await c.callTool({ name: "everything__echo", arguments: { message: "hi", say: true } });
  check("a marked tool is call.network", /network=true/.test(text(r)), text(r));
  r = await c.callTool({ name: "everything__get-env", arguments: { say: true } });
  check("a tool the list does not name is not", /network=false/.test(text(r)), text(r));
  r = await c.callTool({ name: "everything__echo", arguments: { message: "hi" } });
  check("a clean session reaches it", !r.isError && /hi/.test(text(r)), text(r));
  r = await c.callTool({ name: "taint_me", arguments: {} });
  check("a policy taints the session", !r.isError, text(r));
  r = await c.callTool({ name: "everything__echo", arguments: { message: "hi" } });
  check("then the marked tool is refused, naming why",
    r.isError && /tainted-no-network-tool/.test(JSON.stringify(r)) &&
      /it read the vault/.test(text(r)), JSON.stringify(r).slice(0, 600));
  r = await c.callTool({ name: "everything__get-env", arguments: {} });
  check("an unmarked tool of that server is not", !r.isError, text(r).slice(0, 300));
  await c.close();
  check("no crash report", await a.stderrClean());
});
