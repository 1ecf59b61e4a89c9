// gateway.test.mjs — server-everything (the MCP project's own test server,
// from npm) behind `toolgate serve`: its tools appear namespaced and go
// through the policies, calls round-trip (one at a time and many at once),
// its progress reaches the client,
// a cancel reaches it, its elicitation reaches the user, its prompts and
// resources pass through, and killing it mid-call gives a retryable
// UPSTREAM error naming it — then it comes back.
import fs from "node:fs";
import path from "node:path";
import { ElicitRequestSchema, ToolListChangedNotificationSchema,
  PromptListChangedNotificationSchema, ResourceListChangedNotificationSchema }
  from "@modelcontextprotocol/sdk/types.js";
import { run, project, sdkClient, text, outcome, readLog, until, sleep, EVERYTHING, REPO }
  from "./lib.mjs";

const CONFIG = `return {
  policies = "policies",
  defaults = { progress_interval_ms = 50 },
  expose = { "*", "!everything__get-tiny-image" },
  servers = {
    everything = {
      command = "node",
      args = { ${JSON.stringify(EVERYTHING)}, "stdio" },
      env = { TOOLGATE_SPEC = "gateway" },
      read_only = { "echo", "get-*", "trigger-long-running-operation" },
    },
  },
}`;

const RULES = `local tg = require "toolgate"
-- one rule for a built-in and an upstream tool alike
tg.rule { name = "no-env", priority = 1, tools = { "everything__get-env", "exec" },
  check = function(call)
    if call.server == "everything" then return tg.deny("environment stays private (" .. call.server .. ")") end
  end }
tg.rule { name = "no-secret-echo", priority = 2, tools = { "everything__echo" },
  check = function(call)
    if call.args.message == "secret" then return tg.deny("no secrets through echo") end
  end }
-- what the client sees: no toggles from upstreams; echo says where it runs
tg.list_tools(function(tools)
  local shown = {}
  for _, t in ipairs(tools) do
    if not (t.server and t.name:find("toggle", 1, true)) then
      if t.name == "everything__echo" then t.description = t.description .. " (upstream: " .. t.server .. ")" end
      shown[#shown + 1] = t
    end
  end
  return shown
end)`;

await run("gateway", async (check) => {
  const p = project(CONFIG);
  fs.writeFileSync(path.join(p.policies, "30_gateway.lua"), RULES);
  // the example's rules (README), against the real upstream
  fs.copyFileSync(path.join(REPO, "examples/mcp-gateway/policies/20_gateway.lua"),
                  path.join(p.policies, "40_example.lua"));
  const a = await sdkClient(p, { capabilities: { elicitation: {} } });
  const c = a.client;
  const questions = [];
  c.setRequestHandler(ElicitRequestSchema, async (req) => {
    questions.push(req.params);
    if (req.params.requestedSchema?.properties?.decision)
      return { action: "accept", content: { decision: "approve" } };
    return { action: "accept", content: { name: "Ada Lovelace", check: true } };
  });

  const { tools } = await c.listTools();
  const names = tools.map((t) => t.name);
  check("the first tools/list already has the upstream's tools, namespaced",
    ["everything__echo", "everything__get-sum", "everything__trigger-long-running-operation"]
      .every((n) => names.includes(n)), names);
  check("... beside the built-ins", names.includes("exec") && names.includes("word_count"));
  const echo = tools.find((t) => t.name === "everything__echo");
  check("an upstream tool keeps its input schema; tg.list_tools hooks re-described it",
    echo?.description === "Echoes back the input string (upstream: everything) " +
      "(via toolgate, server everything)" &&
    echo.inputSchema?.properties?.message?.type === "string", echo);
  check("the expose filter hides a tool", !names.includes("everything__get-tiny-image"));
  check("a tg.list_tools hook hides tools", !names.some((n) => n.includes("toggle")), names);

  let r = await c.callTool({ name: "everything__echo", arguments: { message: "hello" } });
  check("a call round-trips through the gateway", !r.isError && text(r) === "Echo: hello", r);
  check("... through the chain (toolgate's outcome in _meta)", outcome(r)?.status === "ok");
  r = await c.callTool({ name: "everything__get-sum", arguments: { a: 2, b: 40 } });
  check("another upstream tool works", !r.isError && /42/.test(text(r)), r);
  // calls made together: their answers come back from the upstream one
  // write or many at a time, in any order; none is lost or mixed up
  const many = await Promise.all(Array.from({ length: 48 }, (_, i) =>
    c.callTool({ name: "everything__echo", arguments: { message: `m${i}` } })));
  check("48 calls made together each get their own answer",
    many.every((x, i) => !x.isError && text(x) === `Echo: m${i}`), many.map(text));
  r = await c.callTool({ name: "everything__echo", arguments: { message: 7 } });
  check("its schema is checked by toolgate before it is forwarded",
    r.isError && outcome(r)?.code === "INVALID_ARGS", text(r));
  r = await c.callTool({ name: "everything__echo", arguments: { message: "secret" } });
  check("a rule on an upstream tool denies it", r.isError && /no secrets through echo/.test(text(r)) &&
    outcome(r)?.status === "denied", text(r));
  r = await c.callTool({ name: "everything__get-env", arguments: {} });
  check("call.server lets one rule cover upstream tools",
    r.isError && /environment stays private \(everything\)/.test(text(r)), text(r));
  let err = null;
  try { await c.callTool({ name: "everything__get-tiny-image", arguments: {} }); } catch (e) { err = e; }
  check("a hidden tool cannot be called", err?.code === -32602, String(err));

  // progress from the upstream reaches the client
  const progress = [];
  r = await c.callTool({ name: "everything__trigger-long-running-operation",
    arguments: { duration: 1, steps: 4 } }, undefined, { onprogress: (x) => progress.push(x) });
  check("a long upstream call completes", !r.isError && /completed/.test(text(r)), r);
  check("its progress reaches the client, growing, with its total",
    progress.length >= 2 && progress.every((x, i) => !i || x.progress > progress[i - 1].progress) &&
    progress.some((x) => x.total === 4), progress);

  // a cancel reaches it: told, it never answers the request it was running
  const ac = new AbortController();
  const gone = c.callTool({ name: "everything__trigger-long-running-operation",
    arguments: { duration: 1.5, steps: 3 } }, undefined,
    { signal: ac.signal, onprogress: () => ac.abort("stop") }).then(() => "answered", () => "cancelled");
  check("a cancelled upstream call ends at the client", (await gone) === "cancelled");
  check("the cancel is passed to the upstream (notifications/cancelled)",
    await until(() => /upstream everything: cancelled request/.test(readLog(p))), readLog(p).slice(-600));
  await sleep(2000); /* past the end the operation would have had */
  check("... and reaches it: it never answers the cancelled request",
    !/the answer to request \d+ came after it was cancelled/.test(readLog(p)), readLog(p).slice(-600));

  // the upstream's elicitation reaches the user, after toolgate's own ask
  r = await c.callTool({ name: "everything__trigger-elicitation-request", arguments: {} });
  check("the example's rule asks before a long upstream operation",
    questions.some((q) => /start a long operation on everything\?/.test(q.message)),
    questions.map((q) => q.message));
  check("an upstream tool that is not read-only is asked first (toolgate's question)",
    questions.some((q) => q.requestedSchema?.properties?.decision &&
      /trigger-elicitation-request/.test(q.message)), questions.map((q) => q.message));
  check("the upstream's own elicitation is relayed, saying who asks",
    questions.some((q) => /^\[everything\]/.test(q.message)), questions.map((q) => q.message));
  check("... and the user's answer reaches it", !r.isError && /Ada Lovelace/.test(text(r)), text(r));

  // prompts and resources pass through, namespaced
  const prompts = (await c.listPrompts()).prompts;
  check("prompts are listed namespaced", prompts.some((x) => x.name === "everything__simple-prompt"),
    prompts.map((x) => x.name));
  const pr = await c.getPrompt({ name: "everything__args-prompt", arguments: { city: "Paris" } });
  check("prompts/get reaches the upstream with its own name",
    JSON.stringify(pr.messages).includes("Paris"), pr);
  const resources = (await c.listResources()).resources;
  check("resources are listed with their names namespaced",
    resources.length > 0 && resources.every((x) => x.name.startsWith("everything__")), resources.slice(0, 2));
  const rr = await c.readResource({ uri: resources[0].uri });
  check("resources/read reaches the upstream that listed it", rr.contents?.[0]?.uri === resources[0].uri, rr);
  const templates = (await c.listResourceTemplates()).resourceTemplates;
  check("resource templates are listed", Array.isArray(templates), templates);

  // its stderr goes to the log
  check("the upstream's stderr is in the log", /upstream everything: .*Starting/.test(readLog(p)));

  // killed mid-call: a retryable UPSTREAM error naming it, then it is back
  const pid = Number((readLog(p).match(/upstream everything: started node \(pid (\d+)\)/) || [])[1]);
  check("the log names the upstream's pid", pid > 0);
  let changed = 0;
  c.setNotificationHandler(ToolListChangedNotificationSchema, () => { changed++; });
  let otherChanged = 0; // its prompts and resources are the same after it too
  c.setNotificationHandler(PromptListChangedNotificationSchema, () => { otherChanged++; });
  c.setNotificationHandler(ResourceListChangedNotificationSchema, () => { otherChanged++; });
  const slow = c.callTool({ name: "everything__trigger-long-running-operation",
    arguments: { duration: 20, steps: 20 } });
  await sleep(300);
  process.kill(pid, "SIGKILL");
  r = await slow;
  check("killing the upstream mid-call: the call fails with UPSTREAM_UNAVAILABLE",
    r.isError && outcome(r)?.code === "UPSTREAM_UNAVAILABLE" && outcome(r)?.phase === "UPSTREAM",
    r);
  check("... retryable, naming the server", outcome(r)?.retryable === true &&
    /upstream server 'everything'/.test(text(r)), text(r));
  r = await c.callTool({ name: "everything__echo", arguments: { message: "still there?" } });
  check("a call while it restarts fails the same way, or already works",
    (r.isError && outcome(r)?.code === "UPSTREAM_UNAVAILABLE") || text(r) === "Echo: still there?", r);
  check("it is restarted", await until(() =>
    (readLog(p).match(/upstream everything ready/g) || []).length >= 2, 15000), readLog(p).slice(-800));
  r = await c.callTool({ name: "everything__echo", arguments: { message: "back" } });
  check("... and calls work again", !r.isError && text(r) === "Echo: back", r);
  check("its tools did not flap (no list_changed for the same list)", changed === 0,
    { changed, log: readLog(p).split("\n").filter((l) =>
      / ready |list changed|went down|policies loaded/.test(l)) });
  check("... nor its prompts and resources", otherChanged === 0, otherChanged);

  await c.close();
  const clean = await a.stderrClean();
  check("toolgate exits without a crash or sanitizer report", clean === true, clean);
  check("closing the client stops the upstream too",
    await until(() => { try { process.kill(pid, 0); return false; } catch { return true; } }) &&
    await until(() => /upstream everything stopped/.test(readLog(p))), readLog(p).slice(-300));
});
