// era2026_pass_upstream.test.mjs — an upstream of the 2026-07-28 era that
// answers a passed-through prompts/get or resources/read with
// input_required ({inputRequests, requestState}) and wants the same
// request again with inputResponses and its requestState. toolgate puts
// each of its requests to the client — a 2026-07-28 client through its
// own request's input_required result, a 2025-era client as a request of
// its session — and sends the request again with the answers
// (upstream_ask.c, as for tools/call). Covered: the v2 SDK's automatic
// round trip and by hand, the v1 SDK, a decline, a client without the
// capability, and a hostile upstream (a requestState that is not a
// string, a request toolgate cannot relay, endless rounds).
// Upstream: ask26.mjs, written below, raw JSON-RPC, answering
// server/discover with "2026-07-28"; it notes what it got in an events file.
import fs from "node:fs";
import path from "node:path";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { run, project, sdkClient, until, v2Client } from "./lib.mjs";

const UPSTREAM = `import readline from "node:readline";
import fs from "node:fs";
const events = process.argv[2];
const note = (e) => fs.appendFileSync(events, JSON.stringify(e) + "\\n");
const out = (m) => process.stdout.write(JSON.stringify(m) + "\\n");
let n = 0;
const question = (message) => ({ method: "elicitation/create", params: { message,
  requestedSchema: { type: "object", properties: { context: { type: "string" } } } } });
const asks = (requests, state) => ({ resultType: "input_required", inputRequests: requests,
  requestState: state });
// a retry: its answer under our key and our own state back, or why not
const retried = (p, key) => {
  const a = p.inputResponses?.[key];
  const ok = typeof p.requestState === "string" && p.requestState.startsWith("st-" + key + "-");
  return !ok ? "bad state " + JSON.stringify(p.requestState)
    : a?.action === "accept" ? "accepted " + a.content?.context : "answered " + a?.action;
};
const handlers = {
  "prompts/get"(p) {
    if (p.name === "ctx") {
      if (!p.inputResponses) return asks({ user_ctx: question("Which context?") }, "st-user_ctx-" + (++n));
      return { resultType: "complete", messages: [{ role: "user", content: { type: "text",
        text: retried(p, "user_ctx") + " " + JSON.stringify(p.arguments || {}) } }] };
    }
    if (p.name === "badstate") return asks({ q: question("?") }, 42);
    if (p.name === "odd") return asks({ q: { method: "tools/call", params: { name: "x" } } }, "s");
    if (p.name === "many") return asks(Object.fromEntries(Array.from({ length: 17 },
      (_, i) => ["k" + i, question("?")])), "s");
    if (p.name === "endless") return asks({ ["k" + (++n)]: question("again?") }, "st-" + n);
    throw { code: -32602, message: "Unknown prompt" };
  },
  "completion/complete"() { return asks({ q: question("?") }, "s"); },
  "resources/read"(p) {
    if (!p.inputResponses) return asks({ consent: question("Show the memo?") }, "st-consent-" + (++n));
    return { resultType: "complete", contents: [{ uri: p.uri, mimeType: "text/plain",
      text: "memo: " + retried(p, "consent") }] };
  },
};
readline.createInterface({ input: process.stdin }).on("line", (l) => {
  let m;
  try { m = JSON.parse(l); } catch { return; }
  if (m.method === "server/discover")
    return out({ jsonrpc: "2.0", id: m.id, result: { supportedVersions: ["2026-07-28"],
      capabilities: { prompts: {}, resources: {}, completions: {} }, serverInfo: { name: "ask26", version: "1" } } });
  if (m.method === "prompts/list")
    return out({ jsonrpc: "2.0", id: m.id, result: { resultType: "complete", prompts: [
      { name: "ctx" }, { name: "badstate" }, { name: "many" }, { name: "odd" }, { name: "endless" }] } });
  if (m.method === "resources/list")
    return out({ jsonrpc: "2.0", id: m.id, result: { resultType: "complete",
      resources: [{ uri: "memo://x", name: "x" }] } });
  if (m.method === "resources/templates/list")
    return out({ jsonrpc: "2.0", id: m.id, result: { resultType: "complete", resourceTemplates: [] } });
  if (handlers[m.method]) {
    const { _meta, ...params } = m.params || {};
    note({ request: m.method, params });
    try {
      out({ jsonrpc: "2.0", id: m.id, result: handlers[m.method](m.params || {}) });
    } catch (e) {
      out({ jsonrpc: "2.0", id: m.id, error: e });
    }
    return;
  }
  if (m.id !== undefined && m.method)
    out({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "Method not found" } });
});
`;

const IR = { allowInputRequired: true };
const settle = (p) => p.then((r) => ({ r }), (e) => ({ e }));
const promptText = (r) => (r?.messages || []).map((m) => m.content?.text).join("\n");
const accept = (context) => ({ action: "accept", content: { context } });
const events = (file) => (fs.existsSync(file) ? fs.readFileSync(file, "utf8") : "")
  .split("\n").filter(Boolean).map((l) => JSON.parse(l));

await run("era2026_pass_upstream", async (check) => {
  const p0 = project();
  const up = path.join(p0.dir, "ask26.mjs");
  fs.writeFileSync(up, UPSTREAM);
  const ev = path.join(p0.dir, "events.jsonl");
  const config = `return { policies = "policies", servers = {
    ask26 = { command = "node", args = { ${JSON.stringify(up)}, ${JSON.stringify(ev)} } } } }`;
  const p = project(config);
  // the 2025-era clients in a project of their own: their stderr.txt
  // (sdkClient starts it afresh) leaves the 2026 clients' as it is
  const p1 = project(config);
  const caps = { elicitation: {} };
  const ctx = { name: "ask26__ctx", arguments: { topic: "cats" } };

  // ---- a v2 SDK client, by hand ------------------------------------------------------
  const hand = await v2Client(p, { capabilities: caps, inputRequired: { autoFulfill: false } });
  let listed = false;
  for (let i = 0; i < 300 && !listed; i++) {
    const l = await settle(hand.listPrompts());
    listed = (l.r?.prompts || []).some((x) => x.name === "ask26__ctx");
    if (!listed) await new Promise((r) => setTimeout(r, 200));
  }
  check("the 2026-07-28 upstream's prompts are listed", listed);
  const h1 = await hand.getPrompt(ctx, IR);
  const q = h1.inputRequests?.user_ctx;
  check("prompts/get: the upstream's input_required reaches the client as its own",
    h1.resultType === "input_required" && typeof h1.requestState === "string" &&
    !String(h1.requestState).startsWith("st-"), h1);
  check("... the upstream's elicitation under its key, the server named",
    q?.method === "elicitation/create" && /^\[ask26\] Which context\?/.test(q.params?.message), h1);
  const h2 = await hand.getPrompt({ ...ctx, requestState: h1.requestState,
    inputResponses: { user_ctx: accept("by hand") } }, IR);
  check("the retry gets the prompt: the upstream got the answer, its own state, the arguments",
    h2.resultType !== "input_required" &&
    /^accepted by hand \{"topic":"cats"\}/.test(promptText(h2)), h2);
  const sent = events(ev).filter((e) => e.request === "prompts/get" && e.params.inputResponses);
  check("... sent again with the original params, inputResponses and requestState",
    sent.length === 1 && sent[0].params.name === "ctx" && sent[0].params.arguments?.topic === "cats" &&
    /^st-user_ctx-/.test(sent[0].params.requestState), events(ev));

  // ---- a decline -----------------------------------------------------------------------
  const d1 = await hand.getPrompt(ctx, IR);
  const d2 = await hand.getPrompt({ ...ctx, requestState: d1.requestState,
    inputResponses: { user_ctx: { action: "decline" } } }, IR);
  check("declined: the upstream hears decline", /^answered decline/.test(promptText(d2)), d2);

  // ---- resources/read --------------------------------------------------------------------
  const r1 = await hand.readResource({ uri: "memo://x" }, IR);
  const r2 = await hand.readResource({ uri: "memo://x", requestState: r1.requestState,
    inputResponses: { consent: accept("yes") } }, IR);
  check("resources/read: input_required, then the contents with the answer",
    r1.resultType === "input_required" && /memo: accepted yes/.test(r2.contents?.[0]?.text || ""), { r1, r2 });

  // ---- hostile upstream ------------------------------------------------------------------
  const bs = await settle(hand.getPrompt({ name: "ask26__badstate" }, IR));
  check("a requestState that is not a string: a clear error",
    bs.e && /requestState is not a string/.test(String(bs.e.message)), bs);
  const odd = await settle(hand.getPrompt({ name: "ask26__odd" }, IR));
  check("an inputRequest toolgate cannot relay (tools/call): a clear error",
    odd.e && /cannot relay \(tools\/call\)/.test(String(odd.e.message)), odd);
  const many = await settle(hand.getPrompt({ name: "ask26__many" }, IR));
  check("too many inputRequests (17): a clear error, nothing asked",
    many.e && /at most 16 inputRequests/.test(String(many.e.message)), many);
  const comp = await settle(hand.complete({ ref: { type: "ref/prompt", name: "ask26__ctx" },
    argument: { name: "topic", value: "c" } }));
  check("completion/complete still refuses input_required, saying so",
    comp.e && /completion\/complete with resultType 'input_required'/.test(String(comp.e.message)), comp);
  await hand.close();

  // ---- the v2 SDK's automatic round trip ----------------------------------------------
  const auto = await v2Client(p, { capabilities: caps });
  auto.setRequestHandler("elicitation/create", async () => accept("auto"));
  const a1 = await settle(auto.getPrompt(ctx));
  check("the v2 SDK's automatic round trip gets the prompt",
    /^accepted auto/.test(promptText(a1.r)), a1);
  const endless = await settle(auto.getPrompt({ name: "ask26__endless" }));
  check("an upstream that asks without end: an error after 8 rounds",
    endless.e && /too many times \(8\)/.test(String(endless.e.message)), endless);
  await auto.close();

  // ---- v2 without the capability -------------------------------------------------------
  const bare = await v2Client(p, { capabilities: {}, inputRequired: { autoFulfill: false } });
  const b1 = await settle(bare.getPrompt(ctx, IR));
  check("a 2026-07-28 client without elicitation: a clear error naming it",
    b1.e && /declared no elicitation capability/.test(String(b1.e.message)), b1);
  await bare.close();

  // ---- a v1 SDK client (2025 era): a request of its session ---------------------------
  const old = await sdkClient(p1, { capabilities: caps });
  old.client.setRequestHandler(ElicitRequestSchema, async (r) =>
    (/^\[ask26\] /.test(r.params.message) ? accept("session") : { action: "cancel" }));
  const o1 = await settle(old.client.getPrompt(ctx));
  check("2025 era: the upstream's request goes to the client as a request, the answer back",
    /^accepted session/.test(promptText(o1.r)) &&
    old.seen.some((x) => x.method === "elicitation/create"), o1);
  const o2 = await settle(old.client.readResource({ uri: "memo://x" }));
  check("... and for resources/read", /memo: accepted session/.test(o2.r?.contents?.[0]?.text || ""), o2);
  await old.client.close();

  const none = await sdkClient(p1, { capabilities: {} });
  const n1 = await settle(none.client.getPrompt(ctx));
  check("a 2025-era client without elicitation: a clear error",
    n1.e && /no elicitation capability/.test(String(n1.e.message)), n1);
  check("... and no crash", (await none.client.close().then(() => none.stderrClean())) === true);

  // ---- the client goes while the upstream's question is open ----------------------------
  const gone = await v2Client(p, { capabilities: caps, inputRequired: { autoFulfill: false } });
  const g1 = await gone.getPrompt(ctx, IR);
  check("(a 2026-07-28 client has the question)", g1.resultType === "input_required", g1);
  await gone.close();
  const slow = await sdkClient(p1, { capabilities: caps });
  let asked;
  const seenQ = new Promise((r) => (asked = r));
  slow.client.setRequestHandler(ElicitRequestSchema, () => { asked(); return new Promise(() => {}); });
  const ac = new AbortController();
  const s1 = settle(slow.client.getPrompt(ctx, { signal: ac.signal }));
  await seenQ;
  ac.abort("changed my mind");
  check("a 2025-era client cancels while its answer is awaited: the request ends", (await s1).e);
  const withdrawn = await until(() => slow.seen.some((x) => x.method === "notifications/cancelled"), 30000);
  check("... and toolgate withdraws its question (notifications/cancelled)", withdrawn, slow.seen);
  check("... and no crash", (await slow.client.close().then(() => slow.stderrClean())) === true);

  const err = fs.existsSync(path.join(p.dir, "stderr.txt")) ? fs.readFileSync(path.join(p.dir, "stderr.txt"), "utf8") : "";
  check("no crash or sanitizer report", !/Sanitizer|runtime error|Segmentation/.test(err), err.slice(-1500));
});
