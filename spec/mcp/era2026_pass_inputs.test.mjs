// era2026_pass_inputs.test.mjs — an upstream's requests of its client
// during a prompts/get or resources/read passed through to it, for a
// 2026-07-28 client (the v2 SDK's): the request parks as a tools/call
// does (pass_input.c, parked.c). It is answered input_required with the
// upstream's request (keyed by its id), the retry with inputResponses and
// requestState gets the upstream's result; approve and decline, several
// at once and a partial retry, a tampered state, a state of another
// prompt (other arguments), of a tools/call, a replayed one. A 2025-era
// client is asked as before, by a request of its session.
// Upstream: prompter.mjs, written below, a 2025-era server in raw
// JSON-RPC that says what it saw in an events file.
import fs from "node:fs";
import path from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { run, project, readLog, sdkClient, until, TOOLGATE } from "./lib.mjs";

const V = "2026-07-28";

// prompt "ctx": one elicitation (id "user_context"); prompt "two": an
// elicitation ("who") and roots/list ("where") in one write; resource
// memo://secret: one elicitation ("consent"); tool ask: one elicitation.
const PROMPTER = `import readline from "node:readline";
import fs from "node:fs";
const events = process.argv[2];
const note = (e) => fs.appendFileSync(events, JSON.stringify(e) + "\\n");
const line = (m) => JSON.stringify(m) + "\\n";
const out = (m) => process.stdout.write(line(m));
const waiting = new Map();
const ask = (id, method, params) => [line({ jsonrpc: "2.0", id, method, params }),
  new Promise((r) => waiting.set(JSON.stringify(id), r))];
const question = (message, key) => ({ message, requestedSchema: { type: "object",
  properties: { [key]: { type: "string" } }, required: [key] } });
const said = (m, key) => m.result?.action === "accept" ? m.result.content?.[key] : "(none given: " +
  (m.result?.action || m.error?.message) + ")";
async function one(id, msg, key) {
  const [q, a] = ask(id, "elicitation/create", question(msg, key));
  process.stdout.write(q);
  const m = await a;
  note({ answered: id, m });
  return said(m, key);
}
const handlers = {
  async "prompts/get"(p) {
    if (p.name === "ctx") {
      const c = await one("user_context", "What context should the prompt use?", "context");
      return { messages: [{ role: "user", content: { type: "text",
        text: "Use this context: " + c + " " + JSON.stringify(p.arguments || {}) } }] };
    }
    if (p.name === "two") {
      const qs = [ask("who", "elicitation/create", question("Who?", "name")),
                  ask("where", "roots/list", {})];
      process.stdout.write(qs.map((x) => x[0]).join(""));
      const [w, r] = await Promise.all(qs.map((x) => x[1]));
      return { messages: [{ role: "user", content: { type: "text",
        text: said(w, "name") + " at " + JSON.stringify(r.result?.roots ?? r.error) } }] };
    }
    throw { code: -32602, message: "Unknown prompt" };
  },
  async "resources/read"(p) {
    const c = await one("consent", "May I show the memo?", "ok");
    return { contents: [{ uri: p.uri, mimeType: "text/plain", text: "memo (" + c + ")" }] };
  },
  async "tools/call"(p) {
    const c = await one("tool_q", "Tool question?", "x");
    return { content: [{ type: "text", text: "tool got " + c }] };
  },
};
readline.createInterface({ input: process.stdin }).on("line", async (l) => {
  let m;
  try { m = JSON.parse(l); } catch { return; }
  if (m.method === "initialize")
    return out({ jsonrpc: "2.0", id: m.id, result: {
      protocolVersion: m.params.protocolVersion,
      capabilities: { tools: {}, prompts: {}, resources: {} },
      serverInfo: { name: "prompter", version: "1.0.0" } } });
  if (m.method === "tools/list")
    return out({ jsonrpc: "2.0", id: m.id, result: { tools: [{ name: "ask", inputSchema: { type: "object" } }] } });
  if (m.method === "prompts/list")
    return out({ jsonrpc: "2.0", id: m.id, result: { prompts: [{ name: "ctx" }, { name: "two" }] } });
  if (m.method === "resources/list")
    return out({ jsonrpc: "2.0", id: m.id, result: { resources: [{ uri: "memo://secret", name: "secret" }] } });
  if (m.method === "resources/templates/list")
    return out({ jsonrpc: "2.0", id: m.id, result: { resourceTemplates: [] } });
  if (handlers[m.method]) {
    note({ request: m.method, params: m.params });
    try {
      out({ jsonrpc: "2.0", id: m.id, result: await handlers[m.method](m.params) });
    } catch (e) {
      out({ jsonrpc: "2.0", id: m.id, error: e });
    }
    return;
  }
  if (m.method === "notifications/cancelled") return note({ cancelled: m.params.requestId });
  if (m.id !== undefined && m.method)
    return out({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "Method not found" } });
  if (m.id !== undefined && !m.method) {
    const w = waiting.get(JSON.stringify(m.id));
    waiting.delete(JSON.stringify(m.id));
    w?.(m);
  }
});
`;

let clients = 0;
async function v2Client(p, capabilities, handlers = {}) {
  const transport = new StdioClientTransport({
    command: TOOLGATE,
    args: ["serve", "--log", p.log, "--log-level", "debug", "--socket", `${p.socket}.${clients++}`],
    cwd: p.dir, env: { ...process.env }, stderr: "pipe",
  });
  const auto = Object.keys(handlers).length > 0;
  const client = new Client({ name: "v2-pass-inputs", version: "1.0.0" },
    { capabilities, versionNegotiation: { mode: { pin: V } },
      ...(auto ? {} : { inputRequired: { autoFulfill: false } }) });
  for (const [method, fn] of Object.entries(handlers)) client.setRequestHandler(method, fn);
  const errLog = fs.createWriteStream(path.join(p.dir, "stderr.txt"), { flags: "a" });
  await client.connect(transport);
  transport.stderr?.on("data", (d) => errLog.write(d));
  return client;
}

const IR = { allowInputRequired: true };
const events = (file) => (fs.existsSync(file) ? fs.readFileSync(file, "utf8") : "")
  .split("\n").filter(Boolean).map((l) => JSON.parse(l));
const promptText = (r) => (r?.messages || []).map((m) => m.content?.text).join("\n");
const settle = (p) => p.then((r) => ({ r }), (e) => ({ e }));
const accept = (content) => ({ action: "accept", content });
// a state with one of its characters changed (still base64url)
const tamper = (s) => s.slice(0, 40) + (s[40] === "A" ? "B" : "A") + s.slice(41);

await run("era2026_pass_inputs", async (check) => {
  const p0 = project();
  const prompter = path.join(p0.dir, "prompter.mjs");
  fs.writeFileSync(prompter, PROMPTER);
  const ev = path.join(p0.dir, "events.jsonl");
  const p = project(`return {
  policies = "policies",
  servers = {
    prompter = { command = "node", args = { ${JSON.stringify(prompter)}, ${JSON.stringify(ev)} },
                 read_only = { "ask" }, timeout_ms = 600000 },
  },
}`);
  const caps = { elicitation: {}, sampling: {}, roots: {} };
  const m = await v2Client(p, caps);
  const ctx = { name: "prompter__ctx", arguments: { topic: "cats" } };

  // ---- approve ------------------------------------------------------------------------
  const g1 = await m.getPrompt(ctx, IR);
  const q1 = g1.inputRequests?.user_context;
  check("prompts/get whose upstream elicits: an input_required result",
    g1.resultType === "input_required" && typeof g1.requestState === "string", g1);
  check("... holding the upstream's elicitation/create under its id, the server named",
    q1?.method === "elicitation/create" && /^\[prompter\] What context/.test(q1.params?.message), g1.inputRequests);
  const g2 = await m.getPrompt({ ...ctx, requestState: g1.requestState,
    inputResponses: { user_context: accept({ context: "test context" }) } }, IR);
  check("the retry with the answer gets the prompt, the answer in it",
    g2.resultType !== "input_required" && /Use this context: test context/.test(promptText(g2)) &&
    /cats/.test(promptText(g2)), g2);

  // ---- decline ------------------------------------------------------------------------
  const d1 = await m.getPrompt(ctx, IR);
  const d2 = await m.getPrompt({ ...ctx, requestState: d1.requestState,
    inputResponses: { user_context: { action: "decline" } } }, IR);
  check("declined: the upstream hears decline and the prompt comes without it",
    d2.resultType !== "input_required" && /\(none given: decline\)/.test(promptText(d2)), d2);

  // ---- a replayed state: the request it answered has ended ----------------------------
  const rp = await settle(m.getPrompt({ ...ctx, requestState: d1.requestState,
    inputResponses: { user_context: accept({ context: "again" }) } }, IR));
  check("a state used once is refused the second time (replayed)",
    rp.e && /replayed|used already/.test(String(rp.e.message)), rp);

  // ---- a tools/call's state on prompts/get ---------------------------------------------
  const tool = { name: "prompter__ask", arguments: {} };
  const answer = { user_context: accept({ context: "after the refusals" }) };
  const c1 = await m.callTool(tool, IR);
  check("(a tool of the same upstream asks too: input_required)", c1.resultType === "input_required", c1);
  const toolState = await settle(m.getPrompt({ ...ctx, requestState: c1.requestState,
    inputResponses: answer }, IR));
  check("a tools/call's state on prompts/get is refused",
    toolState.e && /another|mismatch/.test(String(toolState.e.message)), toolState);
  const c2 = await m.callTool({ ...tool, requestState: c1.requestState,
    inputResponses: { tool_q: accept({ x: "y" }) } }, IR);
  check("... and the tool call goes on with its own state", /tool got y/.test(JSON.stringify(c2)), c2);

  // ---- tampered, another prompt's, on resources/read, on tools/call --------------------
  const t1 = await m.getPrompt(ctx, IR);
  const bad = await settle(m.getPrompt({ ...ctx, requestState: tamper(t1.requestState),
    inputResponses: answer }, IR));
  check("a tampered requestState is refused (an error, not the prompt)",
    bad.e && /tampered|integrity/.test(String(bad.e.message)), bad);
  const other = await settle(m.getPrompt({ ...ctx, arguments: { topic: "dogs" },
    requestState: t1.requestState, inputResponses: answer }, IR));
  check("the state of the prompt with other arguments is refused (mismatch)",
    other.e && /another|mismatch/.test(String(other.e.message)), other);
  const asRead = await settle(m.readResource({ uri: "memo://secret",
    requestState: t1.requestState, inputResponses: answer }, IR));
  check("a prompt's state on resources/read is refused",
    asRead.e && /another|mismatch/.test(String(asRead.e.message)), asRead);
  const asTool = await settle(m.callTool({ ...tool, requestState: t1.requestState,
    inputResponses: answer }, IR));
  check("a prompt's state on tools/call is refused",
    asTool.e && /another|mismatch/.test(String(asTool.e.message)), asTool);
  const both = await m.callTool(tool, IR);
  check("a tool call while the prompt waits at the same upstream: toolgate cannot tell " +
    "which asks, and refuses the upstream saying so",
    both.resultType !== "input_required" && /cannot tell/.test(JSON.stringify(both)), both);
  const t2 = await m.getPrompt({ ...ctx, requestState: t1.requestState, inputResponses: answer }, IR);
  check("after the refusals the right retry still gets the prompt",
    /after the refusals/.test(promptText(t2)), t2);

  // ---- two at once, a partial retry ----------------------------------------------------
  const two = { name: "prompter__two" };
  const w1 = await m.getPrompt(two, IR);
  check("two requests sent together: one input_required with both",
    Object.keys(w1.inputRequests || {}).sort().join() === "where,who", w1);
  const w2 = await m.getPrompt({ ...two, requestState: w1.requestState,
    inputResponses: { who: accept({ name: "Ada" }) } }, IR);
  check("a retry that answers one: input_required for the other, a new state",
    w2.resultType === "input_required" && Object.keys(w2.inputRequests || {}).join() === "where" &&
    w2.requestState !== w1.requestState, w2);
  const w3 = await m.getPrompt({ ...two, requestState: w2.requestState,
    inputResponses: { where: { roots: [{ uri: "file:///work", name: "work" }] } } }, IR);
  check("the other answered: the prompt has both answers",
    /Ada at .*file:\/\/\/work/.test(promptText(w3)), w3);

  // ---- resources/read ------------------------------------------------------------------
  const r1 = await m.readResource({ uri: "memo://secret" }, IR);
  check("resources/read whose upstream elicits: input_required",
    r1.resultType === "input_required" && r1.inputRequests?.consent?.method === "elicitation/create", r1);
  const r2 = await m.readResource({ uri: "memo://secret", requestState: r1.requestState,
    inputResponses: { consent: accept({ ok: "yes" }) } }, IR);
  check("the retry gets the contents", /memo \(yes\)/.test(r2.contents?.[0]?.text || ""), r2);

  // ---- no capability: the upstream is refused ----------------------------------------
  const none = await v2Client(p, {});
  const n1 = await settle(none.getPrompt(ctx, IR));
  check("a client without elicitation is not asked: the upstream is refused",
    n1.r && n1.r.resultType !== "input_required" && /none given/.test(promptText(n1.r)), n1);

  // ---- the v2 SDK's own round trip ---------------------------------------------------
  const auto = await v2Client(p, caps, { "elicitation/create": async () => accept({ context: "auto" }) });
  const a1 = await auto.getPrompt(ctx);
  check("the v2 SDK's automatic round trip gets the prompt", /context: auto/.test(promptText(a1)), a1);

  for (const x of [m, none, auto]) await x.close();

  // ---- the retry does not come while the state is good ---------------------------------
  const evShort = path.join(p0.dir, "short.jsonl");
  const TTL = 1500;
  const ps = project(`return {
  policies = "policies",
  mcp = { request_state_ttl_ms = ${TTL} },
  servers = {
    prompter = { command = "node", args = { ${JSON.stringify(prompter)}, ${JSON.stringify(evShort)} } },
  },
}`);
  const sh = await v2Client(ps, caps);
  const s1 = await sh.getPrompt(ctx, IR);
  check("(a prompt waits on the client: input_required)", s1.resultType === "input_required", s1);
  const gaveUp = await until(() => events(evShort).some((e) => e.answered === "user_context"), 60000);
  const late = events(evShort).find((e) => e.answered === "user_context");
  check("no retry while its state is good: the upstream's request fails, saying why",
    gaveUp && /in time/.test(late?.m?.error?.message || ""), events(evShort));
  const s2 = await settle(sh.getPrompt({ ...ctx, requestState: s1.requestState,
    inputResponses: { user_context: accept({ context: "late" }) } }, IR));
  check("... and the late retry is refused (expired), not passed on",
    s2.e && /expired|timed out/.test(String(s2.e.message)) &&
    events(evShort).filter((e) => e.request === "prompts/get").length === 1, { s2, ev: events(evShort) });
  await sh.close();

  // ---- a 2025-era client: a request of its session, as before --------------------------
  const old = await sdkClient(p, { capabilities: { elicitation: {} } });
  old.client.setRequestHandler(ElicitRequestSchema, async () => accept({ context: "session" }));
  const o1 = await old.client.getPrompt(ctx);
  check("2025 era: the upstream's request goes to the client as a request",
    /context: session/.test(promptText(o1)) &&
    old.seen.some((x) => x.method === "elicitation/create"), o1);
  await old.client.close();

  check("the log says a prompt's requests went to the client",
    /prompts\/get prompter__ctx: 1 request\(s\) of the upstream put to the client/.test(readLog(p)), readLog(p).slice(-1500));
  const err = fs.existsSync(path.join(p.dir, "stderr.txt")) ? fs.readFileSync(path.join(p.dir, "stderr.txt"), "utf8") : "";
  check("no crash or sanitizer report", !/Sanitizer|runtime error|Segmentation/.test(err), err.slice(-1500));
});
