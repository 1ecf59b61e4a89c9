// passthrough.test.mjs — what server-everything sends besides its tools'
// results reaches the client through the gateway: its progress as it
// comes (a call shorter than toolgate's heartbeat included, and no
// heartbeat of toolgate's ahead of its counts), its log messages at the
// client's logging/setLevel with the server's name as logger,
// completion/complete at the upstream of the prompt or resource,
// resources/subscribe and its notifications/resources/updated, and its
// sampling and roots requests relayed to a client that can answer them
// (refused, saying why, for one that cannot).
import { CreateMessageRequestSchema, ListRootsRequestSchema, LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import fs from "node:fs";
import path from "node:path";
import { run, project, sdkClient, text, until, readLog, EVERYTHING } from "./lib.mjs";

// An upstream of the 2026-07-28 era whose one tool needs the client's
// model: it answers input_required with a sampling/createMessage input
// request, and the call sent again with the answer gets it back.
const MODERN = String.raw`
const out = (m) => process.stdout.write(JSON.stringify(m) + "\n");
let buf = "";
process.stdin.on("data", (d) => {
  buf += d;
  let nl;
  while ((nl = buf.indexOf("\n")) >= 0) {
    const m = JSON.parse(buf.slice(0, nl));
    buf = buf.slice(nl + 1);
    if (m.id === undefined) continue;
    const ok = (result) => out({ jsonrpc: "2.0", id: m.id, result: { resultType: "complete", ...result } });
    if (m.method === "server/discover")
      ok({ supportedVersions: ["2026-07-28"], capabilities: { tools: {} }, ttlMs: 0, cacheScope: "public" });
    else if (m.method === "tools/list")
      ok({ tools: [{ name: "ask_model", inputSchema: { type: "object" } }], ttlMs: 0, cacheScope: "public" });
    else if (m.method === "tools/call" && !m.params.inputResponses)
      ok({ resultType: "input_required", requestState: "s1", inputRequests: { s: {
        method: "sampling/createMessage",
        params: { messages: [{ role: "user", content: { type: "text", text: "modern asks" } }], maxTokens: 5 } } } });
    else if (m.method === "tools/call")
      ok({ content: [{ type: "text", text: "model said: " + m.params.inputResponses.s?.content?.text +
        " state " + m.params.requestState }] });
    else out({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "no" } });
  }
});
`;

async function modernUpstreamSampling(check) {
  const p = project(`return { policies = "policies",
    servers = { modern = { command = "node", args = { "modern.js" }, read_only = { "*" } } } }`);
  fs.writeFileSync(path.join(p.dir, "modern.js"), MODERN);
  const a = await sdkClient(p, { capabilities: { sampling: {} } });
  const asked = [];
  a.client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
    asked.push(req.params);
    return { role: "assistant", model: "m", content: { type: "text", text: "forty-two" } };
  });
  const r = await a.client.callTool({ name: "modern__ask_model", arguments: {} });
  check("a 2026-07-28 upstream's sampling input request reaches the client; the answer goes back",
    asked.length === 1 && /modern asks/.test(JSON.stringify(asked[0])) &&
    text(r) === "model said: forty-two state s1", { asked, r });
  await a.client.close();
}

const CONFIG = `return {
  policies = "policies",
  servers = {
    everything = {
      command = "node",
      args = { ${JSON.stringify(EVERYTHING)}, "stdio" },
      read_only = { "*" },
    },
  },
}`;

await run("passthrough", async (check) => {
  const p = project(CONFIG);
  const a = await sdkClient(p, { capabilities: { sampling: {}, roots: { listChanged: true } } });
  const c = a.client;
  const logs = [];
  const updates = [];
  const sampled = [];
  c.setNotificationHandler(LoggingMessageNotificationSchema, (n) => { logs.push(n.params); });
  c.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => { updates.push(n.params); });
  c.setRequestHandler(CreateMessageRequestSchema, async (req) => {
    sampled.push(req.params);
    return { role: "assistant", model: "spec-model", content: { type: "text", text: "sampled by the spec" } };
  });
  c.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: "file:///spec-root", name: "spec" }] }));

  // progress: a call shorter than the 1 s heartbeat still shows each step.
  // What toolgate sent is read from `seen`: the SDK runs progress handlers
  // a tick late, and drops a notice that came in the same read as the
  // result.
  const progressSent = async (args) => {
    const from = a.seen.length;
    const r = await c.callTool({ name: "everything__trigger-long-running-operation", arguments: args },
      undefined, { onprogress: () => {} });
    return { r, steps: a.seen.slice(from).filter((m) => m.method === "notifications/progress")
      .map((m) => m.params) };
  };
  let { r, steps } = await progressSent({ duration: 0.3, steps: 3 });
  check("a short upstream call: each of its progress notices reaches the client",
    !r.isError && steps.map((x) => x.progress).join() === "1,2,3" &&
    steps.every((x) => x.total === 3), steps);
  ({ r, steps } = await progressSent({ duration: 2.4, steps: 2 }));
  check("a longer one: its counts only, no seconds of toolgate's ahead of them",
    !r.isError && steps.map((x) => x.progress).join() === "1,2" &&
    steps.every((x) => x.total === 2), steps);

  // logs
  await c.setLoggingLevel("debug");
  await c.subscribeResource({ uri: "demo://resource/static/document/architecture.md" });
  check("resources/subscribe is passed to the upstream that lists the uri", true);
  const subLog = await until(() => logs.some((l) => /Subscribe Resource request/.test(l.data)), 10000);
  check("the upstream's log message reaches the client, the logger naming the server",
    subLog && logs.find((l) => /Subscribe/.test(l.data))?.logger === "everything", logs);
  r = await c.callTool({ name: "everything__toggle-subscriber-updates", arguments: {} });
  const updated = await until(() => updates.some((u) =>
    u.uri === "demo://resource/static/document/architecture.md"), 10000);
  check("its notifications/resources/updated reaches the subscribed client", updated, updates);
  // a restart of the upstream: toolgate subscribes again for the client
  const pid = Number((readLog(p).match(/upstream everything: started node \(pid (\d+)\)/) || [])[1]);
  const heard = logs.filter((l) => /Subscribe Resource request/.test(l.data)).length;
  process.kill(pid, "SIGKILL");
  check("after a restart of the upstream the subscription is made again",
    await until(() => logs.filter((l) => /Subscribe Resource request/.test(l.data)).length > heard, 20000) &&
    /upstream everything ready[\s\S]*upstream everything ready/.test(readLog(p)),
    readLog(p).slice(-800));
  await c.unsubscribeResource({ uri: "demo://resource/static/document/architecture.md" });
  check("resources/unsubscribe is answered", true);
  let e = null;
  try { await c.subscribeResource({ uri: "nowhere://x" }); } catch (x) { e = x; }
  check("a uri no upstream lists cannot be subscribed to", e?.code === -32602, String(e));

  await c.setLoggingLevel("emergency");
  const before = logs.length;
  await c.callTool({ name: "everything__toggle-simulated-logging", arguments: {} });
  await c.subscribeResource({ uri: "demo://resource/static/document/architecture.md" });
  await new Promise((res) => setTimeout(res, 500));
  check("at level emergency the upstream's info messages are not relayed",
    logs.slice(before).every((l) => l.level === "emergency"), logs.slice(before));
  await c.callTool({ name: "everything__toggle-simulated-logging", arguments: {} });

  // completion
  let comp = await c.complete({ ref: { type: "ref/prompt", name: "everything__completable-prompt" },
    argument: { name: "department", value: "Eng" } });
  check("completion/complete of a prompt's argument, at its upstream",
    comp.completion?.values?.join() === "Engineering", comp);
  comp = await c.complete({ ref: { type: "ref/prompt", name: "everything__completable-prompt" },
    argument: { name: "name", value: "" }, context: { arguments: { department: "Sales" } } });
  check("... with the context of the other arguments",
    comp.completion?.values?.join() === "David,Eve,Frank", comp);
  const { resourceTemplates } = await c.listResourceTemplates();
  const tpl = resourceTemplates.find((t) => /text/.test(t.uriTemplate))?.uriTemplate;
  comp = await c.complete({ ref: { type: "ref/resource", uri: tpl }, argument: { name: "resourceId", value: "1" } });
  check("completion/complete of a resource template's variable",
    Array.isArray(comp.completion?.values) && comp.completion.values.length > 0 &&
    comp.completion.values.every((v) => v.startsWith("1")), { tpl, comp });
  e = null;
  try {
    await c.complete({ ref: { type: "ref/prompt", name: "nobody__x" }, argument: { name: "a", value: "" } });
  } catch (x) { e = x; }
  check("a prompt no upstream has: -32602", e?.code === -32602, String(e));

  // sampling and roots, relayed
  const { tools } = await c.listTools();
  const names = tools.map((t) => t.name);
  check("the tools an upstream offers to clients that can sample or list roots are there",
    names.includes("everything__trigger-sampling-request") && names.includes("everything__get-roots-list"), names);
  r = await c.callTool({ name: "everything__trigger-sampling-request", arguments: { prompt: "hello", maxTokens: 5 } });
  check("its sampling/createMessage reaches the client, and the answer goes back",
    sampled.length === 1 && /hello/.test(JSON.stringify(sampled[0].messages)) &&
    /sampled by the spec/.test(text(r)), { sampled, r });
  r = await c.callTool({ name: "everything__get-roots-list", arguments: {} });
  check("its roots/list reaches the client, and the roots go back",
    /spec-root/.test(JSON.stringify(r)), r);

  // a client without sampling: refused with the reason
  await c.close();
  await modernUpstreamSampling(check);
  const b = await sdkClient(p, { capabilities: {}, args: ["--socket", p.socket + ".b"] });
  r = await b.client.callTool({ name: "everything__trigger-sampling-request", arguments: { prompt: "x" } });
  check("for a client without sampling the upstream's request is refused, saying why",
    r.isError === true && /sampling capability/.test(text(r)), r);
  await b.client.close();
  check("no crash or sanitizer report", (await a.stderrClean()) === true);
});
