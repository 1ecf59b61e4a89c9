// starting_passthrough.test.mjs — what passes through to an upstream
// besides tool calls, while the upstream is still starting and while a
// request of the client's is with it:
//  - `--startup-wait-ms 0` (and `mcp.startup_wait_ms = 0`): toolgate
//    answers at once, without the upstream's tools, and says list_changed
//    (tools, prompts, resources) once it has listed;
//  - prompts/get, resources/read, completion/complete and
//    resources/subscribe aimed at the upstream before it has listed get
//    the retryable "upstream unavailable" (code UPSTREAM_UNAVAILABLE), not
//    "unknown";
//  - notifications/cancelled for a passed-through prompts/get,
//    resources/read or completion/complete reaches the upstream with its
//    own id for the request, and its late answer is dropped.
// Nothing waits on the clock: the upstream lists nothing until the spec
// makes the file `release`, and answers the requests it stalls only when
// the spec makes `release-stalled`.
import fs from "node:fs";
import path from "node:path";
import { run, project, rawServer, readLog, until } from "./lib.mjs";

const UPSTREAM = String.raw`
const fs = require("node:fs");
const out = (o) => process.stdout.write(JSON.stringify(o) + "\n");
const seen = (m) => fs.appendFileSync("seen.jsonl", JSON.stringify(m) + "\n");
let buf = "", released = false, stallsReleased = false;
const queue = [], stalled = [];
const ok = (m, result) => out({ jsonrpc: "2.0", id: m.id, result });
const stalls = (m) => (m.method === "prompts/get" && m.params.name === "stall") ||
  (m.method === "resources/read" && m.params.uri === "slow://stall") ||
  (m.method === "completion/complete" && m.params.ref.name === "stall");
function answer(m) {
  if (m.id === undefined) return;
  if (stalls(m) && !stallsReleased) return stalled.push(m);
  const p = m.params || {};
  if (m.method === "initialize")
    ok(m, { protocolVersion: "2025-06-18", serverInfo: { name: "slow", version: "0" },
      capabilities: { tools: {}, prompts: {}, resources: { subscribe: true }, completions: {} } });
  else if (m.method === "tools/list")
    ok(m, { tools: [{ name: "echo", inputSchema: { type: "object" } }] });
  else if (m.method === "prompts/list")
    ok(m, { prompts: [{ name: "greet" }, { name: "stall" }] });
  else if (m.method === "prompts/get")
    ok(m, { messages: [{ role: "user", content: { type: "text", text: "hello from " + p.name } }] });
  else if (m.method === "resources/list")
    ok(m, { resources: [{ uri: "slow://doc", name: "doc" }, { uri: "slow://stall", name: "stall" }] });
  else if (m.method === "resources/templates/list")
    ok(m, { resourceTemplates: [] });
  else if (m.method === "resources/read")
    ok(m, { contents: [{ uri: p.uri, text: "the doc" }] });
  else if (m.method === "resources/subscribe" || m.method === "resources/unsubscribe")
    ok(m, {});
  else if (m.method === "completion/complete")
    ok(m, { completion: { values: ["a"], hasMore: false } });
  else out({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "no " + m.method } });
}
process.stdin.on("data", (d) => {
  buf += d;
  let nl;
  while ((nl = buf.indexOf("\n")) >= 0) {
    const m = JSON.parse(buf.slice(0, nl));
    buf = buf.slice(nl + 1);
    seen(m);
    if (released) answer(m); else queue.push(m);
  }
});
// the spec's word, not a delay: polled until it comes
const poll = setInterval(() => {
  if (!released && fs.existsSync("release")) {
    released = true;
    queue.splice(0).forEach(answer);
  }
  if (released && !stallsReleased && fs.existsSync("release-stalled")) {
    stallsReleased = true;
    stalled.splice(0).forEach(answer);
    fs.writeFileSync("stalled-answered", "");
    clearInterval(poll);
  }
}, 20);
`;

const seenBy = (p) => {
  const f = path.join(p.dir, "seen.jsonl");
  return fs.existsSync(f) ? fs.readFileSync(f, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l)) : [];
};

// A JSON-RPC error that says: upstream slow is still starting, try again.
const unavailable = (r) => r?.error?.code === -32603 &&
  /upstream server 'slow' is still starting/.test(r.error.message) && /try again/.test(r.error.message) &&
  r.error.data?.code === "UPSTREAM_UNAVAILABLE" && r.error.data?.retryable === true &&
  r.error.data?.phase === "UPSTREAM" && r.error.data?.server === "slow";

async function startingThenUp(check, how, config, args) {
  const p = project(config);
  fs.writeFileSync(path.join(p.dir, "slow.js"), UPSTREAM);
  const s = rawServer(p, args);
  const ids = { next: 1 };
  const ask = (method, params) => {
    const id = ++ids.next;
    return s.exchange({ jsonrpc: "2.0", id, method, params }, (m) => m.id === id, 30000);
  };
  s.send({ jsonrpc: "2.0", id: 1, method: "initialize",
    params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "0" } } });
  check(`${how}: initialize is answered`, !!(await s.reply(1, 30000))?.result);
  s.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  const list = await ask("tools/list", {});
  check(`${how}: tools/list is answered at once, without the tools of the upstream still starting`,
    Array.isArray(list?.result?.tools) && !list.result.tools.some((t) => t.name.startsWith("slow__")), list);
  return { p, s, ask, ids };
}

await run("starting_passthrough", async (check) => {
  // ---- the wait from the config: none -------------------------------------------
  {
    const { p, s, ask, ids } = await startingThenUp(check, "mcp.startup_wait_ms = 0",
      `return { policies = "policies", mcp = { startup_wait_ms = 0 },
        servers = { slow = { command = "node", args = { "slow.js" } } } }`, []);

    const prompt = await ask("prompts/get", { name: "slow__greet" });
    check("prompts/get of the starting upstream's prompt: retryable upstream unavailable", unavailable(prompt), prompt);
    const read = await ask("resources/read", { uri: "slow://doc" });
    check("resources/read of a URI no upstream lists yet: retryable upstream unavailable", unavailable(read), read);
    const comp = await ask("completion/complete", { ref: { type: "ref/prompt", name: "slow__greet" },
      argument: { name: "x", value: "" } });
    check("completion/complete of its prompt: retryable upstream unavailable", unavailable(comp), comp);
    const sub = await ask("resources/subscribe", { uri: "slow://doc" });
    check("resources/subscribe: retryable upstream unavailable", unavailable(sub), sub);
    const unknown = await ask("prompts/get", { name: "nosuch__greet" });
    check("a prompt of no server of the config is still unknown (-32602)",
      unknown?.error?.code === -32602, unknown);

    const from = s.messages.length;
    fs.writeFileSync(path.join(p.dir, "release"), "");
    for (const what of ["tools", "prompts", "resources"]) {
      const n = await s.next((m) => m.method === `notifications/${what}/list_changed`, 60000, from);
      check(`once it is up: notifications/${what}/list_changed`, !!n, { log: readLog(p).slice(-1500) });
    }
    const prompts = await ask("prompts/list", {});
    check("prompts/list has its prompts now",
      (prompts?.result?.prompts || []).some((x) => x.name === "slow__greet"), prompts);
    const got = await ask("prompts/get", { name: "slow__greet" });
    check("prompts/get works now", got?.result?.messages?.[0]?.content?.text === "hello from greet", got);
    const readNow = await ask("resources/read", { uri: "slow://doc" });
    check("resources/read works now", readNow?.result?.contents?.[0]?.text === "the doc", readNow);

    // ---- cancellation of what passed through ----------------------------------
    const cancelled = [];
    for (const [method, params, sees] of [
      ["prompts/get", { name: "slow__stall" }, (m) => m.params?.name === "stall"],
      ["resources/read", { uri: "slow://stall" }, (m) => m.params?.uri === "slow://stall"],
      ["completion/complete", { ref: { type: "ref/prompt", name: "slow__stall" }, argument: { name: "x", value: "" } },
        (m) => m.params?.ref?.name === "stall"],
    ]) {
      const cid = ++ids.next;
      s.send({ jsonrpc: "2.0", id: cid, method, params });
      let up = null;
      await until(() => (up = seenBy(p).find((m) => m.method === method && sees(m))), 30000);
      check(`${method} reached the upstream`, !!up, seenBy(p).slice(-5));
      s.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: cid, reason: "spec" } });
      const told = up && await until(() => seenBy(p).some((m) => m.method === "notifications/cancelled" &&
        m.params?.requestId === up.id), 30000);
      check(`the client's cancel of ${method} reached the upstream with the upstream's id for it (${up?.id})`,
        told, seenBy(p).slice(-5));
      cancelled.push(cid);
    }
    fs.writeFileSync(path.join(p.dir, "release-stalled"), "");
    check("the upstream answered the cancelled requests late",
      await until(() => fs.existsSync(path.join(p.dir, "stalled-answered")), 30000));
    // the upstream's late answers came before this one on its stdout
    const after = await ask("prompts/get", { name: "slow__greet" });
    check("a request after them is answered", !!after?.result, after);
    check("the late answers to the cancelled requests are dropped",
      !s.messages.some((m) => cancelled.includes(m.id)), s.messages.filter((m) => cancelled.includes(m.id)));

    s.close();
    const { code, signal } = await s.exited;
    check("toolgate exits cleanly", code === 0 && !signal && !/Sanitizer|runtime error/.test(s.stderr),
      { code, signal, stderr: s.stderr.slice(-1500) });
  }

  // ---- the wait from the flag: none, over a config's ---------------------------
  {
    const { p, s, ask } = await startingThenUp(check, "--startup-wait-ms 0",
      `return { policies = "policies", mcp = { startup_wait_ms = 600000 },
        servers = { slow = { command = "node", args = { "slow.js" } } } }`, ["--startup-wait-ms", "0"]);
    const call = await ask("tools/call", { name: "slow__echo", arguments: {} });
    check("--startup-wait-ms 0: a call to its tool is the retryable unavailable result",
      call?.result?.isError === true &&
      call.result._meta?.["toolgate/outcome"]?.code === "UPSTREAM_UNAVAILABLE", call);
    const from = s.messages.length;
    fs.writeFileSync(path.join(p.dir, "release"), "");
    check("... and the tool list changes once it is up",
      !!(await s.next((m) => m.method === "notifications/tools/list_changed", 60000, from)));
    s.close();
    const { code } = await s.exited;
    check("toolgate exits cleanly", code === 0, s.stderr.slice(-1500));
  }
});
