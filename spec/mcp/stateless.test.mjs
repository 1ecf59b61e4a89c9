// stateless.test.mjs — the 2026-07-28 era by raw JSON-RPC: no handshake,
// server/discover, the version and the client's capabilities in each
// request's _meta, UnsupportedProtocolVersion, resultType, ttlMs and
// cacheScope, and approval by the multi round-trip pattern: an
// input_required result with an elicitation/create input request and a
// requestState that is refused when tampered with, replayed, expired or
// sent with another call.
import { run, project, rawServer, sleep } from "./lib.mjs";

const V = "2026-07-28";
const VERSION = "io.modelcontextprotocol/protocolVersion";
const CAPS = "io.modelcontextprotocol/clientCapabilities";

let nextId = 1;
const req = (method, params = {}, caps = {}) => ({
  jsonrpc: "2.0", id: nextId++, method,
  params: { ...params, _meta: { [VERSION]: V, [CAPS]: caps, ...(params._meta || {}) } },
});

async function ask(s, msg) {
  s.send(msg);
  return s.reply(msg.id);
}

const text = (r) => (r?.content || []).map((c) => c.text).join("\n");

await run("stateless", async (check) => {
  const p = project(`return { policies = "policies" }`);
  const s = rawServer(p, ["--request-state-ttl-ms", "1500"]);

  let r = await ask(s, { jsonrpc: "2.0", id: nextId++, method: "server/discover" });
  check("server/discover needs no handshake and lists the versions",
    r?.result?.supportedVersions?.[0] === V &&
    r.result.supportedVersions.includes("2025-11-25") &&
    r.result._meta?.["io.modelcontextprotocol/serverInfo"]?.name === "toolgate" &&
    !("serverInfo" in r.result) && r.result.capabilities?.tools, r);
  check("... a cacheable result: ttlMs and cacheScope",
    Number.isInteger(r?.result?.ttlMs) && r.result.cacheScope === "public", r);
  r = await ask(s, req("server/discover"));
  check("a discover carrying the version gets resultType complete",
    r?.result?.resultType === "complete", r);

  r = await ask(s, req("tools/list"));
  const tools = r?.result?.tools || [];
  check("tools/list without initialize, the version in _meta",
    tools.some((t) => t.name === "note") && r.result.resultType === "complete", r);
  check("tools/list carries ttlMs and cacheScope",
    typeof r?.result?.ttlMs === "number" && r.result.ttlMs > 0 &&
    typeof r.result.cacheScope === "string", r?.result && { ttlMs: r.result.ttlMs, cacheScope: r.result.cacheScope });

  r = await ask(s, req("tools/call", { name: "word_count", arguments: { text: "a b" } }));
  check("a stateless call runs: resultType complete",
    r?.result?.resultType === "complete" && r.result.structuredContent?.words === 2, r);

  r = await ask(s, { ...req("tools/list"), params: { _meta: { [VERSION]: "2099-01-01" } } });
  check("an unsupported version: UnsupportedProtocolVersion with the supported ones",
    r?.error?.code === -32022 && /UnsupportedProtocolVersion/.test(r.error.message) &&
    r.error.data?.requested === "2099-01-01" && r.error.data?.supported?.includes(V), r);
  r = await ask(s, { ...req("tools/list"), params: { _meta: { [VERSION]: 2026 } } });
  check("a version that is not a string is refused the same way", r?.error?.code === -32022, r);
  r = await ask(s, { ...req("tools/list"), params: { _meta: { [VERSION]: V, [CAPS]: "all" } } });
  check("client capabilities that are not an object: -32602", r?.error?.code === -32602, r);

  r = await ask(s, req("tools/call", { name: "note", arguments: { text: "no caps" } }));
  check("an ask for a client without elicitation: the fallback rejects, saying why",
    r?.result?.isError === true && /approval was not possible here/.test(text(r.result)) &&
    r.result.resultType === "complete", r);

  // the multi round-trip approval
  const elicit = { elicitation: {} };
  const call = { name: "note", arguments: { text: "round trip" } };
  r = await ask(s, req("tools/call", call, elicit));
  const ir = r?.result;
  check("an ask becomes an input_required result",
    ir?.resultType === "input_required" && typeof ir.requestState === "string", r);
  const q = ir?.inputRequests?.approval;
  check("... holding an elicitation/create input request with the question",
    q?.method === "elicitation/create" && /round trip/.test(q.params?.message) &&
    q.params?.requestedSchema?.properties?.decision?.enum?.includes("approve"), q);
  const state = ir?.requestState || "";
  const accept = { approval: { action: "accept", content: { decision: "approve" } } };

  r = await ask(s, req("tools/call", { ...call, inputResponses: accept, requestState: state }, elicit));
  check("the retried call with the user's answer runs",
    r?.result?.resultType === "complete" && !r.result.isError &&
    r.result.structuredContent?.noted === "round trip", r);

  r = await ask(s, req("tools/call", { ...call, inputResponses: accept, requestState: state }, elicit));
  check("a replayed requestState is refused",
    r?.error?.code === -32602 && r.error.data?.reason === "replayed", r);

  r = await ask(s, req("tools/call", call, elicit));
  const s2 = r?.result?.requestState || "";
  const flip = s2.slice(0, 40) + (s2[40] === "A" ? "B" : "A") + s2.slice(41);
  r = await ask(s, req("tools/call", { ...call, inputResponses: accept, requestState: flip }, elicit));
  check("a tampered requestState is refused",
    r?.error?.code === -32602 && r.error.data?.reason === "tampered", r);
  r = await ask(s, req("tools/call", { ...call, inputResponses: accept, requestState: s2 + "A" }, elicit));
  check("a lengthened requestState is refused",
    r?.error?.code === -32602 && r.error.data?.reason === "tampered", r);
  r = await ask(s, req("tools/call", { name: "note", arguments: { text: "other args" },
    inputResponses: accept, requestState: s2 }, elicit));
  check("a requestState sent with other arguments is refused",
    r?.error?.code === -32602 && r.error.data?.reason === "mismatch", r);
  r = await ask(s, req("tools/call", { ...call, arguments: { text: "round trip" },
    inputResponses: { approval: { action: "decline" } }, requestState: s2 }, elicit));
  check("a declined answer: the call is rejected and did not run",
    r?.result?.isError === true && /did not run/.test(text(r.result)) &&
    r.result._meta?.["toolgate/outcome"]?.status === "rejected", r);

  r = await ask(s, req("tools/call", call, elicit));
  const s3 = r?.result?.requestState || "";
  await sleep(1700);
  r = await ask(s, req("tools/call", { ...call, inputResponses: accept, requestState: s3 }, elicit));
  check("an expired requestState is refused",
    r?.error?.code === -32602 && r.error.data?.reason === "expired", r);

  r = await ask(s, req("tools/call", { ...call, requestState: 42, inputResponses: accept }, elicit));
  check("a requestState that is not a string: -32602", r?.error?.code === -32602, r);
  r = await ask(s, req("tools/call", { ...call, requestState: s3 }, elicit));
  check("an expired requestState without inputResponses is refused",
    r?.error?.code === -32602 && r.error.data?.reason === "expired", r);
  r = await ask(s, req("tools/call", call, elicit));
  const s4 = r?.result?.requestState || "";
  r = await ask(s, req("tools/call", { ...call, requestState: s4 }, elicit));
  check("a retry with the requestState but no answer: the question is put again",
    r?.result?.resultType === "input_required" && r.result.inputRequests?.approval &&
    typeof r.result.requestState === "string" && r.result.requestState !== s4, r);
  r = await ask(s, req("tools/call", { ...call, requestState: s4, inputResponses: {} }, elicit));
  check("... and so with inputResponses lacking the answer (the state is used once)",
    r?.error?.code === -32602 && r.error.data?.reason === "replayed", r);
  r = await ask(s, req("tools/call", { ...call, requestState: r?.result?.requestState || s4,
    inputResponses: { approval: "yes" } }, elicit));
  check("an answer that is not an ElicitResult: -32602",
    r?.error?.code === -32602 && /ElicitResult/.test(r.error.message), r);

  // a session's request may not carry them
  s.send({ jsonrpc: "2.0", id: nextId++, method: "initialize", params: {
    protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "x", version: "0" } } });
  await s.reply(nextId - 1);
  r = await ask(s, { jsonrpc: "2.0", id: nextId++, method: "tools/call",
    params: { ...call, requestState: s3, inputResponses: accept } });
  check("requestState in a session's request is refused",
    r?.error?.code === -32602 && /2026-07-28/.test(r.error.message), r);
  r = await ask(s, { jsonrpc: "2.0", id: nextId++, method: "tools/call",
    params: { name: "word_count", arguments: { text: "x" } } });
  check("a session's result carries no resultType", r?.result && !("resultType" in r.result), r);
  const e = await s.close();
  check("exits 0 when stdin closes", e.code === 0, e);
});
