// era2026_relay.test.mjs — an upstream's elicitation/create and
// sampling/createMessage during a tool call, relayed to a client of the
// 2026-07-28 era (the v2 SDK, @modelcontextprotocol/client 2.4.0), which
// has no server-to-client requests during a call: the call is answered
// input_required with the upstream's request (in inputRequests, keyed by
// its request id at the upstream) and
// a requestState; the client's inputResponses go back to the upstream as
// the answer to its request, and the call ends with the upstream's result.
// A client without the capability: the upstream is refused, and the call
// that then fails is answered -32021 (MissingRequiredClientCapability).
// Upstream: server-everything (a 2025-era server) behind the gateway.
import fs from "node:fs";
import path from "node:path";
import { run, project, v2Client, readLog, EVERYTHING } from "./lib.mjs";

const V = "2026-07-28";
const CONFIG = `return {
  policies = "policies",
  servers = { everything = { command = "node", args = { ${JSON.stringify(EVERYTHING)}, "stdio" },
                             read_only = { "trigger-*", "echo" } } },
}`;

const textOf = (r) => (r?.content || []).filter((c) => c.type === "text").map((c) => c.text).join("\n");

await run("era2026_relay", async (check) => {
  const p = project(CONFIG);

  // ---- the SDK's own round trip: its handlers answer, the call ends -----------
  const asked = [], sampled = [];
  const c = await v2Client(p, { capabilities: { elicitation: {}, sampling: {} } });
  c.setRequestHandler("elicitation/create", async (req) => {
    asked.push(req.params);
    return { action: "accept", content: { name: "Ada Lovelace", check: true, email: "ada@example.org" } };
  });
  c.setRequestHandler("sampling/createMessage", async (req) => {
    sampled.push(req.params);
    return { role: "assistant", model: "spec-model", content: { type: "text", text: "sampled by the spec" } };
  });
  check("the v2 client speaks 2026-07-28 with toolgate", c.getNegotiatedProtocolVersion() === V);
  const el = await c.callTool({ name: "everything__trigger-elicitation-request", arguments: {} });
  check("the upstream's elicitation/create reached the v2 client (its handler), naming the server",
    asked.length === 1 && /^\[everything\] /.test(asked[0]?.message) &&
    asked[0]?.requestedSchema?.properties?.name, asked);
  check("the user's answer reached the upstream: its result has it",
    !el.isError && /Ada Lovelace/.test(JSON.stringify(el.content)), el);
  const sa = await c.callTool({ name: "everything__trigger-sampling-request",
    arguments: { prompt: "hello", maxTokens: 10 } });
  check("the upstream's sampling/createMessage reached the v2 client as it came",
    sampled.length === 1 && /hello/.test(JSON.stringify(sampled[0]?.messages)) &&
    sampled[0]?.maxTokens === 10, sampled);
  check("the sampled answer reached the upstream: its result has it",
    !sa.isError && /sampled by the spec/.test(JSON.stringify(sa.content)), sa);

  // ---- by hand: the input_required result, a retry without the answer --------
  const m = await v2Client(p, { capabilities: { elicitation: {} }, inputRequired: { autoFulfill: false } });
  const call = { name: "everything__trigger-elicitation-request", arguments: {} };
  const ir = await m.callTool(call, { allowInputRequired: true });
  const keys = Object.keys(ir.inputRequests || {});
  const key = keys[0], q = ir.inputRequests?.[key];
  check("input_required: the upstream's request in inputRequests (one), with a requestState",
    ir.resultType === "input_required" && keys.length === 1 && q?.method === "elicitation/create" &&
    /^\[everything\] /.test(q?.params?.message) && typeof ir.requestState === "string", ir);
  const again = await m.callTool({ ...call, requestState: ir.requestState }, { allowInputRequired: true });
  check("a retry without the answer: the same request again, a new requestState",
    again.resultType === "input_required" && again.inputRequests?.[key]?.method === "elicitation/create" &&
    again.requestState !== ir.requestState, again);
  let replayed;
  try {
    await m.callTool({ ...call, requestState: ir.requestState,
      inputResponses: { [key]: { action: "decline" } } }, { allowInputRequired: true });
  } catch (e) { replayed = e; }
  check("the first requestState is spent: refused (-32602)",
    replayed?.code === -32602, { code: replayed?.code, message: String(replayed?.message || replayed) });
  const done = await m.callTool({ ...call, requestState: again.requestState,
    inputResponses: { [key]: { action: "decline" } } }, { allowInputRequired: true });
  check("the answer (decline) reached the upstream, and the call ended with its result",
    done.resultType !== "input_required" && /decline/i.test(JSON.stringify(done.content)), done);

  // ---- a client that cannot answer: the upstream is refused, and when
  // the call then fails the client gets -32021 naming what it lacks
  const n = await v2Client(p, { capabilities: {} });
  const no = await n.callTool({ name: "everything__trigger-sampling-request",
    arguments: { prompt: "x", maxTokens: 5 } }).then((r) => ({ r }), (e) => ({ e }));
  check("no sampling capability in the request, and the call fails: -32021 naming sampling",
    no.e?.code === -32021 && typeof no.e.data?.requiredCapabilities?.sampling === "object" &&
    !Array.isArray(no.e.data.requiredCapabilities.sampling), no);

  // left waiting: the client never sends the call again, and goes
  const left = await m.callTool(call, { allowInputRequired: true });
  check("a call left waiting on the client (then the client goes)",
    left.resultType === "input_required", left);
  for (const x of [c, m, n]) await x.close();
  check("the log says the requests were put to the client",
    /request\(s\) of the upstream put to the client \(input_required\)/.test(readLog(p)) &&
    /the client answered the upstream's requests/.test(readLog(p)), readLog(p).slice(-1500));
  const err = fs.existsSync(path.join(p.dir, "stderr.txt")) ? fs.readFileSync(path.join(p.dir, "stderr.txt"), "utf8") : "";
  check("no crash or sanitizer report", !/Sanitizer|runtime error|Segmentation/.test(err), err.slice(-1500));
});
