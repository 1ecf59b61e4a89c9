// slow_upstream.test.mjs — an upstream server that is not up yet when the
// client calls one of its tools (`npx -y` fetching a package takes longer
// than the start-up hold): the call is answered with a retryable
// UPSTREAM_UNAVAILABLE result, not "Unknown tool"; once the server has
// listed its tools, the client gets notifications/tools/list_changed and
// the same call runs. Nothing here waits on the clock: the upstream's
// first run fails at once (so the start-up hold is over), and its second
// run answers nothing until the spec makes the file `release`.
import fs from "node:fs";
import path from "node:path";
import { run, project, rawServer, readLog, text, outcome, until } from "./lib.mjs";

const UPSTREAM = String.raw`
const fs = require("node:fs");
if (!fs.existsSync("started-once")) { // the first run: fails at once
  fs.writeFileSync("started-once", "");
  process.exit(1);
}
const out = (o) => process.stdout.write(JSON.stringify(o) + "\n");
let buf = "", released = false;
const queue = [];
function answer(m) {
  if (m.id === undefined) return;
  if (m.method === "initialize")
    out({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: "2025-06-18",
      capabilities: { tools: {} }, serverInfo: { name: "slow", version: "0" } } });
  else if (m.method === "tools/list")
    out({ jsonrpc: "2.0", id: m.id, result: { tools: [{ name: "echo",
      inputSchema: { type: "object", properties: { text: { type: "string" } } } }] } });
  else if (m.method === "tools/call")
    out({ jsonrpc: "2.0", id: m.id, result: { content: [{ type: "text",
      text: "echo: " + m.params.arguments.text }] } });
  else out({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "no " + m.method } });
}
process.stdin.on("data", (d) => {
  buf += d;
  let nl;
  while ((nl = buf.indexOf("\n")) >= 0) {
    const m = JSON.parse(buf.slice(0, nl));
    buf = buf.slice(nl + 1);
    if (released) answer(m); else queue.push(m);
  }
});
// the spec's word, not a delay: polled until it comes
const poll = setInterval(() => {
  if (!fs.existsSync("release")) return;
  clearInterval(poll);
  released = true;
  queue.splice(0).forEach(answer);
}, 20);
`;

await run("slow_upstream", async (check) => {
  const p = project(`return { policies = "policies",
    servers = { slow = { command = "node", args = { "slow.js" }, read_only = { "echo" } } } }`);
  fs.writeFileSync(path.join(p.dir, "slow.js"), UPSTREAM);
  const s = rawServer(p);
  s.send({ jsonrpc: "2.0", id: 1, method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "0" } } });
  const init = await s.reply(1, 30000);
  check("initialize is answered while the upstream is still starting", !!init?.result, init);
  s.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  check("its first run failed and it is being started again",
    await until(() => /upstream slow went down/.test(readLog(p)), 30000), readLog(p).slice(-1500));

  const early = await s.exchange({ jsonrpc: "2.0", id: 2, method: "tools/call",
    params: { name: "slow__echo", arguments: { text: "hi" } } }, (m) => m.id === 2, 30000);
  const o = outcome(early?.result);
  check("a call to its tool before it listed: a result, not a JSON-RPC error", !!early?.result && !early.error, early);
  check("... an error result the agent can read: the server is starting, try again",
    early?.result?.isError === true && /upstream server 'slow' is still starting/.test(text(early.result)) &&
    /try again/.test(text(early.result)), early);
  check("... UPSTREAM_UNAVAILABLE, retryable", o?.code === "UPSTREAM_UNAVAILABLE" && o?.phase === "UPSTREAM" &&
    o?.retryable === true && o?.status === "error", o);

  const unknown = await s.exchange({ jsonrpc: "2.0", id: 3, method: "tools/call",
    params: { name: "nosuch__echo", arguments: {} } }, (m) => m.id === 3, 30000);
  check("a name of no server of the config is still an unknown tool (-32602)",
    unknown?.error?.code === -32602 && /Unknown tool/.test(unknown.error.message), unknown);

  const from = s.messages.length;
  fs.writeFileSync(path.join(p.dir, "release"), "");
  const changed = await s.next((m) => m.method === "notifications/tools/list_changed", 60000, from);
  check("once it is up, the client is told the tool list changed", !!changed,
    { log: readLog(p).slice(-1500) });
  const list = await s.exchange({ jsonrpc: "2.0", id: 4, method: "tools/list" }, (m) => m.id === 4, 30000);
  check("tools/list has its tool now",
    (list?.result?.tools || []).some((t) => t.name === "slow__echo"), list);
  const later = await s.exchange({ jsonrpc: "2.0", id: 5, method: "tools/call",
    params: { name: "slow__echo", arguments: { text: "hi" } } }, (m) => m.id === 5, 30000);
  check("the same call runs now", later?.result && !later.result.isError &&
    text(later.result) === "echo: hi", later);
  const gone = await s.exchange({ jsonrpc: "2.0", id: 6, method: "tools/call",
    params: { name: "slow__nosuch", arguments: {} } }, (m) => m.id === 6, 30000);
  check("a tool it does not list, once it is up: unknown (-32602)",
    gone?.error?.code === -32602, gone);

  s.close();
  const { code, signal } = await s.exited;
  check("toolgate exits cleanly", code === 0 && !signal && !/Sanitizer|runtime error/.test(s.stderr),
    { code, signal, stderr: s.stderr.slice(-1500) });
});
