// bare_names.test.mjs — a server of prefix = false (server-everything):
// its tools and prompts keep their own names, are called and fetched by
// them, rules see call.server as ever; and a name toolgate already has
// (a Lua tool's "echo") stays toolgate's: the upstream cannot take it.
import fs from "node:fs";
import path from "node:path";
import { run, project, sdkClient, text, readLog, EVERYTHING } from "./lib.mjs";

const CONFIG = `return {
  policies = "policies",
  defaults = { verdict = "allow" },
  servers = {
    everything = { command = "node", args = { ${JSON.stringify(EVERYTHING)}, "stdio" },
                   prefix = false },
  },
}`;

const POLICY = `local tg = require "toolgate"
tg.tool { name = "echo", description = "toolgate's own echo", read_only = true,
  run = function(args) return "lua echo" end }
tg.rule { name = "no-env", priority = 1, tools = { "get-env" },
  check = function(call)
    if call.server == "everything" then return tg.deny("no env from " .. call.server) end
  end }`;

await run("bare_names", async (check) => {
  const p = project(CONFIG);
  fs.writeFileSync(path.join(p.policies, "30_bare.lua"), POLICY);
  const a = await sdkClient(p);
  const c = a.client;
  const tools = (await c.listTools()).tools.map((t) => t.name);
  check("its tools are listed under their own names",
    tools.includes("get-sum") && !tools.some((n) => n.startsWith("everything__")), tools);
  check("a name toolgate has is listed once", tools.filter((n) => n === "echo").length === 1, tools);
  let r = await c.callTool({ name: "get-sum", arguments: { a: 2, b: 40 } });
  check("a call by its own name reaches the upstream", !r.isError && /42/.test(text(r)), r);
  r = await c.callTool({ name: "echo", arguments: { message: "hi" } });
  check("echo is still toolgate's Lua tool, not the upstream's", text(r) === "lua echo", r);
  check("the log says the upstream's echo is not offered",
    /tool echo is not offered: toolgate has a tool of that name/.test(readLog(p)), readLog(p).slice(-2000));
  r = await c.callTool({ name: "get-env", arguments: {} });
  check("rules see call.server", r.isError && /no env from everything/.test(text(r)), text(r));
  const prompts = (await c.listPrompts()).prompts.map((x) => x.name);
  check("its prompts keep their own names", prompts.includes("simple-prompt") &&
    !prompts.some((n) => n.includes("__")), prompts);
  const g = await c.getPrompt({ name: "simple-prompt" });
  check("prompts/get by its own name reaches the upstream", g.messages && g.messages.length > 0, g);
  let err;
  try { await c.getPrompt({ name: "everything__simple-prompt" }); } catch (e) { err = e; }
  check("the prefixed name is not a prompt", err && err.code === -32602, String(err));
  await c.close();
  check("no crash report", await a.stderrClean());
});
