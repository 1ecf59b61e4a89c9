// era2026.test.mjs — the 2026-07-28 era as the official v2 SDK
// (@modelcontextprotocol/client, pinned in package.json) speaks it, with
// server-everything behind the gateway: server/discover (the server named
// in _meta, ttlMs and cacheScope), the cacheable lists and reads, prompts,
// approval by input_required round trips (approve, reject, a retry without
// the answer gets the question again), subscriptions/listen (list changes
// and resource updates on a stream), an unsupported version (-32022),
// and the methods the revision removed (-32601), the per-request log level.
import fs from "node:fs";
import path from "node:path";
import { PROTOCOL_VERSION_META_KEY } from "@modelcontextprotocol/client";
import { run, project, v2Client, rawServer, outcome, until, readLog, EVERYTHING } from "./lib.mjs";

const V = "2026-07-28";
const CONFIG = `return {
  policies = "policies",
  servers = { everything = { command = "node", args = { ${JSON.stringify(EVERYTHING)}, "stdio" } } },
}`;

const sorry = (e) => ({ code: e?.code, message: String(e?.message || e), data: e?.data });

await run("era2026", async (check) => {
  const p = project(CONFIG);
  const questions = [];
  let decision = "approve";
  const c = await v2Client(p, { capabilities: { elicitation: {} } });
  c.setRequestHandler("elicitation/create", async (req) => {
    questions.push(req.params);
    return { action: "accept", content: { decision } };
  });

  check("the v2 client negotiates the 2026-07-28 era",
    c.getProtocolEra() === "modern" && c.getNegotiatedProtocolVersion() === V,
    c.getNegotiatedProtocolVersion());
  check("getServerVersion() names toolgate (server/discover's _meta)",
    c.getServerVersion()?.name === "toolgate" && typeof c.getServerVersion()?.version === "string",
    c.getServerVersion());
  const d = c.getDiscoverResult();
  check("server/discover: the versions, ttlMs and cacheScope",
    d?.supportedVersions?.includes(V) && d.supportedVersions.includes("2025-11-25") &&
    Number.isInteger(d.ttlMs) && d.cacheScope === "public", d);
  check("... and the capabilities with the gateway's prompts and resources",
    d?.capabilities?.tools && d.capabilities.prompts && d.capabilities.resources, d?.capabilities);

  const tl = await c.listTools();
  check("tools/list: the built-ins and the upstream's, with ttlMs and cacheScope",
    tl.tools.some((t) => t.name === "note") &&
    tl.tools.some((t) => t.name === "everything__echo") &&
    tl.ttlMs > 0 && tl.cacheScope === "public", { n: tl.tools.length, ttl: tl.ttlMs, scope: tl.cacheScope });
  const pl = await c.listPrompts();
  check("prompts/list passes the v2 client's checks (ttlMs, cacheScope)",
    pl.prompts.some((x) => x.name === "everything__simple-prompt") &&
    Number.isInteger(pl.ttlMs) && pl.cacheScope === "public", pl);
  const rl = await c.listResources();
  check("resources/list the same", rl.resources.length > 0 &&
    Number.isInteger(rl.ttlMs) && rl.cacheScope === "public", { n: rl.resources.length });
  const tpl = await c.listResourceTemplates();
  check("resources/templates/list the same", tpl.resourceTemplates.length > 0 &&
    Number.isInteger(tpl.ttlMs) && tpl.cacheScope === "public", tpl);
  const uri = rl.resources[0]?.uri;
  const rr = await c.readResource({ uri });
  check("resources/read: the upstream's contents, ttlMs and cacheScope",
    rr.contents?.[0]?.uri === uri && Number.isInteger(rr.ttlMs) &&
    ["public", "private"].includes(rr.cacheScope), rr);
  const pg = await c.getPrompt({ name: "everything__simple-prompt" });
  check("prompts/get reaches the upstream", pg.messages?.length > 0, pg);
  const comp = await c.complete({ ref: { type: "ref/prompt", name: "everything__completable-prompt" },
    argument: { name: "department", value: "S" } });
  check("completion/complete reaches the prompt's upstream",
    comp.completion?.values?.join() === "Sales,Support", comp);

  const echo = await c.callTool({ name: "everything__echo", arguments: { message: "hi" } });
  check("an upstream tool is called (asked for: the default verdict)",
    /hi/.test(JSON.stringify(echo.content)) && questions.length === 1 &&
    /\[|everything__echo/.test(questions[0]?.message), echo);
  questions.length = 0;

  // approval: the SDK answers input_required through its elicitation handler
  let r = await c.callTool({ name: "note", arguments: { text: "approved" } });
  check("an ask: the SDK's round trip asks the user, the call runs",
    questions.length === 1 && /note/.test(questions[0]?.message) &&
    !r.isError && r.structuredContent?.noted === "approved" &&
    outcome(r)?.verdict === "ask", { r, questions });
  decision = "reject";
  r = await c.callTool({ name: "note", arguments: { text: "rejected" } });
  check("the user rejects: the call did not run",
    questions.length === 2 && r.isError === true && outcome(r)?.status === "rejected", r);

  // subscriptions/listen: list changes and resource updates on a stream
  decision = "approve";
  const changed = [], updated = [];
  c.setNotificationHandler("notifications/tools/list_changed", () => { changed.push(1); });
  c.setNotificationHandler("notifications/resources/updated", (n) => { updated.push(n.params); });
  const sub = await c.listen({ toolsListChanged: true, promptsListChanged: true,
    resourceSubscriptions: [uri, "nowhere://x"] });
  check("subscriptions/listen is acknowledged with what toolgate honours",
    sub.honoredFilter?.toolsListChanged === true && sub.honoredFilter.promptsListChanged === true &&
    sub.honoredFilter.resourceSubscriptions?.join() === uri, sub.honoredFilter);
  fs.writeFileSync(path.join(p.policies, "50_listen.lua"), `local tg = require "toolgate"
tg.tool { name = "listened", read_only = true, schema = { type = "object" }, run = function() return 1 end }`);
  check("a change of the tool list reaches the stream",
    await until(() => changed.length > 0, 15000), changed);
  const t = await c.callTool({ name: "everything__toggle-subscriber-updates", arguments: {} });
  check("an update of the resource reaches the stream",
    !t.isError && await until(() => updated.some((x) => x.uri === uri), 15000), { t, updated });
  await sub.close();
  check("closing the stream unsubscribes at the upstream (its log says so)",
    await until(() => /upstream everything: Received Unsubscribe Resource request/.test(readLog(p)), 15000),
    readLog(p).slice(-1000));
  questions.length = 0;

  // by hand: the input_required result, and a retry without the answer
  const m = await v2Client(p, { capabilities: { elicitation: {} }, inputRequired: { autoFulfill: false } });
  const call = { name: "note", arguments: { text: "by hand" } };
  const ir = await m.callTool(call, { allowInputRequired: true });
  check("manual mode: the input_required result with its question and requestState",
    ir.resultType === "input_required" && ir.inputRequests?.approval?.method === "elicitation/create" &&
    typeof ir.requestState === "string", ir);
  const again = await m.callTool({ ...call, requestState: ir.requestState }, { allowInputRequired: true });
  check("a retry with the requestState but no inputResponses: a new input request",
    again.resultType === "input_required" && again.inputRequests?.approval &&
    typeof again.requestState === "string" && again.requestState !== ir.requestState, again);
  const done = await m.callTool({ ...call, requestState: again.requestState,
    inputResponses: { approval: { action: "accept", content: { decision: "approve" } } } },
    { allowInputRequired: true });
  check("... answered with the new requestState, the call runs",
    done.resultType !== "input_required" && !done.isError &&
    done.structuredContent?.noted === "by hand", done);

  let e = null;
  try {
    await c.request({ method: "tools/list",
      params: { _meta: { [PROTOCOL_VERSION_META_KEY]: "2099-01-01" } } });
  } catch (x) { e = x; }
  check("an unsupported version: -32022 with the supported versions and the one asked",
    e?.code === -32022 && e.data?.supported?.includes(V) && e.data?.requested === "2099-01-01",
    sorry(e));

  const auto = await v2Client(p, { mode: "auto" });
  check("'auto' negotiation picks the 2026-07-28 era too",
    auto.getProtocolEra() === "modern" && auto.getServerVersion()?.name === "toolgate");
  const legacy = await v2Client(p, { mode: "legacy" });
  check("'legacy' gets a 2025 session from the same server",
    legacy.getProtocolEra() === "legacy" && legacy.getServerVersion()?.name === "toolgate" &&
    (await legacy.listTools()).tools.some((t) => t.name === "note"));
  for (const x of [c, m, auto, legacy]) await x.close();

  // the methods this era removed (the v2 SDK refuses to send them: raw)
  let at0;
  const q = project(`return { policies = "policies" }`);
  const s = rawServer(q);
  const meta = { [PROTOCOL_VERSION_META_KEY]: V, "io.modelcontextprotocol/clientCapabilities": {} };
  let a;
  for (const [i, method, params] of [[11, "logging/setLevel", { level: "info" }], [12, "ping", {}],
    [13, "initialize", { protocolVersion: V, capabilities: {}, clientInfo: { name: "x", version: "0" } }],
    [14, "resources/subscribe", { uri: "x:/y" }], [15, "resources/unsubscribe", { uri: "x:/y" }]]) {
    s.send({ jsonrpc: "2.0", id: i, method, params: { ...params, _meta: meta } });
    a = await s.reply(i);
    check(`${method} with the 2026-07-28 _meta: -32601, the revision removed it`,
      a?.error?.code === -32601 && a.id === i, a);
  }
  fs.appendFileSync(path.join(q.policies, "20_mcp_spec.lua"), "\n-- touched\n");
  const from = s.messages.length;
  s.send({ jsonrpc: "2.0", id: 2, method: "tools/list", params: { _meta: meta } });
  await s.reply(2);
  s.send({ jsonrpc: "2.0", id: 21, method: "tools/list", params: { _meta: meta } });
  await s.reply(21);
  check("... and a policy reload sends that client no log message (it asked for none)",
    !s.messages.slice(from).some((x) => x.method === "notifications/message"),
    s.messages.slice(from));
  s.send({ jsonrpc: "2.0", id: 3, method: "tools/list",
    params: { _meta: { ...meta, "io.modelcontextprotocol/logLevel": "loud" } } });
  a = await s.reply(3);
  check("a per-request log level that is no level: -32602", a?.error?.code === -32602, a);
  s.send({ jsonrpc: "2.0", id: 4, method: "tools/list",
    params: { _meta: { ...meta, "io.modelcontextprotocol/logLevel": "debug" } } });
  a = await s.reply(4);
  check("... a valid one is taken", a?.result?.tools?.length > 0, a);
  s.send({ jsonrpc: "2.0", id: 5, method: "subscriptions/listen", params: { _meta: meta, notifications: "all" } });
  a = await s.reply(5);
  check("subscriptions/listen with a filter that is no object: -32602", a?.error?.code === -32602, a);
  at0 = s.messages.length;
  s.send({ jsonrpc: "2.0", id: "L", method: "subscriptions/listen",
    params: { _meta: meta, notifications: { toolsListChanged: true, promptsListChanged: true } } });
  const ack = await s.next((m) => m.method === "notifications/subscriptions/acknowledged", 5000, at0);
  check("without upstream servers only the tool list is honoured, the stream named in _meta",
    ack?.params?.notifications?.toolsListChanged === true && !ack.params.notifications.promptsListChanged &&
    ack.params._meta?.["io.modelcontextprotocol/subscriptionId"] === "L", ack);
  s.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: "L" } });
  s.send({ jsonrpc: "2.0", id: 6, method: "ping" });
  await s.reply(6);
  check("a cancelled stream is closed without an answer",
    !s.messages.some((m) => m.id === "L"), s.messages.filter((m) => m.id === "L"));
  const x = await s.close();
  check("exits 0 when stdin closes", x.code === 0, x);

  // log messages are request-scoped in this era: an upstream's, while it
  // runs a call whose _meta asked for them, go to that call
  const g = project(`return { policies = "policies", servers = { everything = {
    command = "node", args = { ${JSON.stringify(EVERYTHING)}, "stdio" }, read_only = { "*" } } } }`);
  const gs = rawServer(g);
  const toggle = (id, logLevel) => ({ jsonrpc: "2.0", id, method: "tools/call", params: {
    name: "everything__toggle-simulated-logging", arguments: {},
    _meta: { ...meta, ...(logLevel ? { "io.modelcontextprotocol/logLevel": logLevel } : {}) } } });
  // each start of its simulated logging sends one message at once
  let at = gs.messages.length;
  gs.send(toggle(10));
  a = await gs.reply(10, 30000);
  check("a call that did not ask for log messages gets none of its upstream's",
    /Started/.test(JSON.stringify(a?.result)) &&
    !gs.messages.slice(at).some((x) => x.method === "notifications/message"),
    gs.messages.slice(at));
  gs.send(toggle(11));
  await gs.reply(11, 30000);
  at = gs.messages.length;
  gs.send(toggle(12, "debug"));
  a = await gs.reply(12, 30000);
  const scoped = gs.messages.slice(at).filter((x) => x.method === "notifications/message");
  check("a call that asked for them gets its upstream's, the logger naming it",
    /Started/.test(JSON.stringify(a?.result)) && scoped.length >= 1 &&
    scoped.every((x) => x.params.logger === "everything"), { a, scoped });
  const y = await gs.close();
  check("... and the gateway exits 0 too", y.code === 0, y);
});
