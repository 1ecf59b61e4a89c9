// era2026_inputs.test.mjs — an upstream's requests of its client during a
// tool call of a 2026-07-28 client (the v2 SDK's), as call_input.c puts
// them: each under the key the upstream chose (its request's id), several
// at once in one input_required result, a retry that answers some and is
// asked for the rest, roots/list relayed like the others, and a call that
// waits on the client past its deadline (timeout_ms) ends there: the
// upstream is told, and the late retry is a call as any.
// Upstream: asker.mjs, written below, a 2025-era server in raw JSON-RPC
// that says what it saw in an events file.
import fs from "node:fs";
import path from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { run, project, readLog, until, TOOLGATE } from "./lib.mjs";

const V = "2026-07-28";

// ask_three: three requests in one write (ids "who", 7 and "bad key!");
// ask_roots: roots/list; ask_and_wait: one elicitation, answered or not.
const ASKER = `import readline from "node:readline";
import fs from "node:fs";
const events = process.argv[2];
const note = (e) => fs.appendFileSync(events, JSON.stringify(e) + "\\n");
const line = (m) => JSON.stringify(m) + "\\n";
const waiting = new Map();
const ask = (id, method, params) => [line({ jsonrpc: "2.0", id, method, params }),
  new Promise((r) => waiting.set(JSON.stringify(id), r))];
const text = (t) => ({ content: [{ type: "text", text: t }] });
const question = { message: "Who are you?", requestedSchema: { type: "object",
  properties: { name: { type: "string" } }, required: ["name"] } };
const tools = {
  async ask_three() {
    const qs = [ask("who", "elicitation/create", question),
      ask(7, "sampling/createMessage", { messages: [{ role: "user",
        content: { type: "text", text: "Say hi" } }], maxTokens: 5 }),
      ask("bad key!", "roots/list", {})];
    process.stdout.write(qs.map((q) => q[0]).join(""));
    const got = await Promise.all(qs.map((q) => q[1]));
    note({ three: got });
    return text(JSON.stringify(got.map((m) => m.result ?? m.error)));
  },
  async ask_roots() {
    const [out, answer] = ask("roots", "roots/list", {});
    process.stdout.write(out);
    const m = await answer;
    return text("roots: " + JSON.stringify(m.result?.roots ?? m.error));
  },
  async ask_and_wait() {
    const [out, answer] = ask("wait", "elicitation/create", question);
    process.stdout.write(out);
    note({ asked: "wait" });
    const m = await answer;
    note({ answered: m });
    return text(JSON.stringify(m.result ?? m.error));
  },
};
readline.createInterface({ input: process.stdin }).on("line", async (l) => {
  let m;
  try { m = JSON.parse(l); } catch { return; }
  if (m.method === "initialize")
    return process.stdout.write(line({ jsonrpc: "2.0", id: m.id, result: {
      protocolVersion: m.params.protocolVersion, capabilities: { tools: {} },
      serverInfo: { name: "asker", version: "1.0.0" } } }));
  if (m.method === "tools/list")
    return process.stdout.write(line({ jsonrpc: "2.0", id: m.id, result: {
      tools: Object.keys(tools).map((name) => ({ name, inputSchema: { type: "object" } })) } }));
  if (m.method === "tools/call") {
    note({ call: m.params.name, id: m.id });
    const r = await tools[m.params.name]();
    return process.stdout.write(line({ jsonrpc: "2.0", id: m.id, result: r }));
  }
  if (m.method === "notifications/cancelled") return note({ cancelled: m.params.requestId });
  if (m.id !== undefined && m.method) /* server/discover, ping, ...: not here */
    return process.stdout.write(line({ jsonrpc: "2.0", id: m.id,
      error: { code: -32601, message: "Method not found" } }));
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
  const client = new Client({ name: "v2-inputs", version: "1.0.0" },
    { capabilities, versionNegotiation: { mode: { pin: V } },
      ...(auto ? {} : { inputRequired: { autoFulfill: false } }) });
  for (const [method, fn] of Object.entries(handlers)) client.setRequestHandler(method, fn);
  const errLog = fs.createWriteStream(path.join(p.dir, "stderr.txt"), { flags: "a" });
  await client.connect(transport);
  transport.stderr?.on("data", (d) => errLog.write(d));
  return client;
}

const textOf = (r) => (r?.content || []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
const events = (file) => (fs.existsSync(file) ? fs.readFileSync(file, "utf8") : "")
  .split("\n").filter(Boolean).map((l) => JSON.parse(l));
const IR = { allowInputRequired: true };

await run("era2026_inputs", async (check) => {
  const p0 = project();
  const asker = path.join(p0.dir, "asker.mjs");
  fs.writeFileSync(asker, ASKER);
  const ev = path.join(p0.dir, "events.jsonl"), evSlow = path.join(p0.dir, "slow.jsonl");
  const DEADLINE = 1500; /* the slow server's timeout_ms */
  const p = project(`return {
  policies = "policies",
  servers = {
    asker = { command = "node", args = { ${JSON.stringify(asker)}, ${JSON.stringify(ev)} },
              read_only = { "ask_*" }, timeout_ms = 600000 },
    slow = { command = "node", args = { ${JSON.stringify(asker)}, ${JSON.stringify(evSlow)} },
             read_only = { "ask_*" }, timeout_ms = ${DEADLINE} },
  },
}`);
  const caps = { elicitation: {}, sampling: {}, roots: {} };

  // ---- three at once, each under the upstream's id as its key ------------------
  const m = await v2Client(p, caps);
  const three = { name: "asker__ask_three", arguments: {} };
  const r1 = await m.callTool(three, IR);
  const q = r1.inputRequests || {};
  check("three requests sent together: one input_required result holds the three",
    r1.resultType === "input_required" && Object.keys(q).length === 3 &&
    typeof r1.requestState === "string", r1);
  check("keyed by the upstream's ids: a string id as it is, a number in decimal",
    q.who?.method === "elicitation/create" && q["7"]?.method === "sampling/createMessage", q);
  check("an id that makes no fair key: a key of toolgate's own",
    q["input-1"]?.method === "roots/list" && !("bad key!" in q), Object.keys(q));
  const r2 = await m.callTool({ ...three, requestState: r1.requestState,
    inputResponses: { who: { action: "accept", content: { name: "Ada" } }, stray: { x: 1 } } }, IR);
  check("a retry that answers one: input_required for the two left, a new requestState",
    r2.resultType === "input_required" && Object.keys(r2.inputRequests || {}).sort().join() === "7,input-1" &&
    r2.requestState !== r1.requestState, r2);
  const r3 = await m.callTool({ ...three, requestState: r2.requestState, inputResponses: {
    "7": { role: "assistant", model: "m", content: { type: "text", text: "hi" } },
    "input-1": { roots: [{ uri: "file:///work", name: "work" }] } } }, IR);
  check("the rest answered: the call ends with the upstream's result, every answer in it",
    r3.resultType !== "input_required" && /Ada/.test(textOf(r3)) && /"hi"/.test(textOf(r3)) &&
    /file:\/\/\/work/.test(textOf(r3)), r3);

  // ---- roots/list relayed: the v2 SDK's own round trip ------------------------
  const listed = [];
  const a = await v2Client(p, { roots: {} }, { "roots/list": async (req) => {
    listed.push(req.params);
    return { roots: [{ uri: "file:///home/ada", name: "home" }] };
  } });
  const rr = await a.callTool({ name: "asker__ask_roots", arguments: {} });
  check("roots/list reached the v2 client's handler", listed.length === 1, listed);
  check("its roots reached the upstream: the result has them",
    !rr.isError && /file:\/\/\/home\/ada/.test(textOf(rr)), rr);
  const none = await v2Client(p, {});
  const nr = await none.callTool({ name: "asker__ask_roots", arguments: {} }, IR)
    .then((r) => ({ r }), (e) => ({ e }));
  check("no roots capability: the upstream is refused, not the client asked",
    nr.r?.resultType !== "input_required" && (nr.e || /roots/.test(textOf(nr.r))), nr);

  // ---- a call that waits on the client past its deadline ----------------------
  const w = await v2Client(p, caps);
  const wait = { name: "slow__ask_and_wait", arguments: {} };
  const t0 = Date.now();
  const w1 = await w.callTool(wait, IR);
  check("the slow server's call waits on the client (input_required)",
    w1.resultType === "input_required" && w1.inputRequests?.wait?.method === "elicitation/create", w1);
  const ended = await until(() => events(evSlow).some((e) => e.cancelled !== undefined || e.answered), 60000);
  const elapsed = Date.now() - t0;
  check("the call's deadline ends it: the upstream is told",
    ended && events(evSlow).some((e) => e.cancelled !== undefined), events(evSlow));
  check("not before the deadline (timeout_ms)", elapsed >= DEADLINE / 2, { elapsed, DEADLINE });
  const late = await w.callTool({ ...wait, requestState: w1.requestState,
    inputResponses: { wait: { action: "accept", content: { name: "late" } } } }, IR)
    .then((r) => ({ r }), (e) => ({ e }));
  const calls = events(evSlow).filter((e) => e.call === "ask_and_wait").length;
  check("the upstream's request is answered with an error when its call ends",
    events(evSlow).some((e) => e.answered?.error && /ended/.test(e.answered.error.message)), events(evSlow));
  check("the late answer reaches no one: the retry is a call as any (called again, it asks again)",
    !events(evSlow).some((e) => /late/.test(JSON.stringify(e.answered || ""))) && calls === 2 &&
    late.r?.resultType === "input_required" && late.r.requestState !== w1.requestState, { late, calls });

  for (const x of [m, a, none, w]) await x.close();
  check("the log says the requests went to the client",
    /request\(s\) of the upstream put to the client \(input_required\)/.test(readLog(p)) &&
    /answered some of the upstream's requests/.test(readLog(p)), readLog(p).slice(-1500));
  const err = fs.existsSync(path.join(p.dir, "stderr.txt")) ? fs.readFileSync(path.join(p.dir, "stderr.txt"), "utf8") : "";
  check("no crash or sanitizer report", !/Sanitizer|runtime error|Segmentation/.test(err), err.slice(-1500));
});
