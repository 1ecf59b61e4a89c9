// lib.mjs — what the MCP specs share: a check list that prints one line per
// check and fails the process at the end; a scratch project (policies,
// toolgate.lua) per spec; `toolgate serve` driven by the official SDK's
// client, or by raw JSON-RPC lines for what an SDK would never send.
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const here = path.dirname(fileURLToPath(import.meta.url));
export const REPO = path.resolve(here, "../..");
export const TOOLGATE = process.env.TOOLGATE || path.join(REPO, "build/toolgate");
export const EVERYTHING = path.join(here,
  "node_modules/@modelcontextprotocol/server-everything/dist/index.js");

// ---- checks ------------------------------------------------------------------

export function checks(spec) {
  let failed = 0, passed = 0;
  const check = (what, ok, detail) => {
    if (ok) {
      passed++;
      console.log(`ok   ${spec}: ${what}`);
    } else {
      failed++;
      console.log(`FAIL ${spec}: ${what}${detail === undefined ? "" : ": " +
        (typeof detail === "string" ? detail : JSON.stringify(detail))}`);
    }
    return ok;
  };
  const done = () => {
    console.log(`${spec}: ${passed} passed, ${failed} failed`);
    process.exit(failed ? 1 : 0);
  };
  return { check, done };
}

// Runs fn(check); a throw is a failed check, not a crash of the runner.
export async function run(spec, fn) {
  const c = checks(spec);
  // a spec that hangs ends as a failed check, not in silence: far beyond
  // the slowest spec on a loaded 2-core machine (about a minute)
  const guard = setTimeout(() => {
    c.check("finishes within 240 s", false);
    c.done();
  }, 240000);
  try {
    await fn(c.check);
  } catch (e) {
    c.check("runs without an exception", false, e && e.stack || String(e));
  }
  clearTimeout(guard);
  c.done();
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export async function until(cond, ms = 5000, step = 20) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await cond()) return true;
    await sleep(step);
  }
  return false;
}

// ---- a scratch project ----------------------------------------------------------

// A folder with policies/ (the shipped ones and the specs' own) and, when
// config is given, toolgate.lua holding it. Removed at exit.
export function project(config) {
  const keep = process.env.TOOLGATE_KEEP; /* keep the folder to look into */
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolgate-mcp-"));
  const pol = path.join(dir, "policies");
  fs.mkdirSync(pol);
  for (const from of [path.join(REPO, "policies"), path.join(here, "policies")])
    for (const f of fs.readdirSync(from))
      if (f.endsWith(".lua")) fs.copyFileSync(path.join(from, f), path.join(pol, f));
  if (config !== undefined) fs.writeFileSync(path.join(dir, "toolgate.lua"), config);
  process.on("exit", (code) => {
    const err = path.join(dir, "stderr.txt");
    if (fs.existsSync(err) && fs.statSync(err).size && code)
      process.stdout.write("--- toolgate's stderr:\n" + fs.readFileSync(err, "utf8").slice(-4000));
    if (!keep) fs.rmSync(dir, { recursive: true, force: true });
  });
  return { dir, policies: pol, log: path.join(dir, "toolgate.log"),
           socket: path.join(dir, "control.sock") };
}

export const readLog = (p) => (fs.existsSync(p.log) ? fs.readFileSync(p.log, "utf8") : "");

// ---- the SDK's client --------------------------------------------------------------

// Connects an SDK Client to `toolgate serve` run in project p. Every message
// toolgate sends is also kept in `seen`, in order.
export async function sdkClient(p, { capabilities = {}, args = [], name = "spec" } = {}) {
  const transport = new StdioClientTransport({
    command: TOOLGATE,
    args: ["serve", "--log", p.log, "--log-level", "debug", "--socket", p.socket, ...args],
    cwd: p.dir,
    // the SDK passes only a few variables by default: toolgate needs
    // XDG_STATE_HOME (run.sh's private database folder) too
    env: { ...process.env },
    stderr: "pipe",
  });
  const client = new Client({ name, version: "1.0.0" }, { capabilities });
  const seen = [];
  const errors = [];
  client.onerror = (e) => errors.push(String(e));
  await client.connect(transport);
  // its stderr (a crash report, a sanitizer's) is kept beside the log
  const errLog = fs.createWriteStream(path.join(p.dir, "stderr.txt"));
  transport.stderr?.on("data", (d) => errLog.write(d));
  const inner = transport.onmessage;
  transport.onmessage = (m) => {
    seen.push(m);
    inner(m);
  };
  // After client.close(): did toolgate leave a crash or sanitizer report?
  const stderrClean = async () => {
    await until(() => transport.pid === null || transport.pid === undefined, 3000);
    await sleep(100);
    const t = fs.readFileSync(path.join(p.dir, "stderr.txt"), "utf8");
    return !/Sanitizer|runtime error|Assertion|Segmentation/.test(t) || t.slice(-2000);
  };
  return { client, transport, seen, errors, pid: transport.pid, stderrClean };
}

// ---- the v2 SDK's client (the 2026-07-28 era) ---------------------------------------

// A v2 SDK client (@modelcontextprotocol/client) on `toolgate serve` in
// project p; mode: its versionNegotiation mode ({ pin: "2026-07-28" },
// "auto" or "legacy"); inputRequired: its option of that name (e.g.
// { autoFulfill: false } to see input_required results by hand). Each
// client gets a control socket of its own: two `serve` may not share one.
let v2Clients = 0;
export async function v2Client(p, { mode = { pin: "2026-07-28" }, capabilities = {},
                                    inputRequired, name = "v2-spec" } = {}) {
  const { Client: V2 } = await import("@modelcontextprotocol/client");
  const { StdioClientTransport: V2Stdio } = await import("@modelcontextprotocol/client/stdio");
  const transport = new V2Stdio({
    command: TOOLGATE,
    args: ["serve", "--log", p.log, "--log-level", "debug", "--socket", `${p.socket}.${v2Clients++}`],
    cwd: p.dir, env: { ...process.env }, stderr: "pipe",
  });
  const client = new V2({ name, version: "1.0.0" },
    { capabilities, versionNegotiation: { mode }, ...(inputRequired ? { inputRequired } : {}) });
  const errLog = fs.createWriteStream(path.join(p.dir, "stderr.txt"), { flags: "a" });
  await client.connect(transport);
  transport.stderr?.on("data", (d) => errLog.write(d));
  return client;
}

// ---- raw JSON-RPC ---------------------------------------------------------------------

// `toolgate serve` with our own hands on its stdin: send() writes one
// message (an object) or raw text; next(pred) waits for a message.
export function rawServer(p, args = []) {
  const child = spawn(TOOLGATE,
    ["serve", "--log", p.log, "--log-level", "debug", "--socket", p.socket, ...args],
    { cwd: p.dir, stdio: ["pipe", "pipe", "pipe"] });
  const messages = [];
  const waiters = [];
  let stderr = "";
  child.stderr.on("data", (d) => { stderr += d; });
  // a line's chunks are joined once its newline comes: a 20 MiB answer
  // comes in hundreds of chunks, and appending each to one string and
  // scanning it again would be quadratic (minutes on a loaded machine)
  let pending = [];
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (d) => {
    let start = 0, nl;
    while ((nl = d.indexOf("\n", start)) >= 0) {
      pending.push(d.slice(start, nl));
      const line = pending.join("");
      pending = [];
      start = nl + 1;
      let m;
      try { m = JSON.parse(line); } catch { m = { notJson: line }; }
      messages.push(m);
      for (const w of [...waiters]) if (w.pred(m)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(m);
      }
    }
    if (start < d.length) pending.push(d.slice(start));
  });
  const exited = new Promise((r) => child.on("exit", (code, signal) => r({ code, signal })));
  child.stdin.on("error", () => {});
  return {
    child, messages, exited,
    get stderr() { return stderr; },
    send(m) {
      child.stdin.write(typeof m === "string" || Buffer.isBuffer(m) ? m : JSON.stringify(m) + "\n");
    },
    // The first message from index `from` on that pred accepts.
    next(pred, ms = 5000, from = 0) {
      const have = messages.slice(from).find(pred);
      if (have) return Promise.resolve(have);
      return new Promise((resolve) => {
        const w = { pred: (m) => messages.indexOf(m) >= from && pred(m), resolve };
        waiters.push(w);
        setTimeout(() => {
          const i = waiters.indexOf(w);
          if (i >= 0) { waiters.splice(i, 1); resolve(null); }
        }, ms);
      });
    },
    reply(id, ms) { return this.next((m) => m.id === id && ("result" in m || "error" in m), ms); },
    // Sends m and waits for the first message after it that pred accepts.
    async exchange(m, pred, ms) {
      const from = messages.length;
      this.send(m);
      return this.next(pred, ms, from);
    },
    close() { child.stdin.end(); return exited; },
  };
}

// The line-reading loop of a spec's own upstream server: each request
// goes to the script's answer(m, id), id being the request's id as JSON
// text.
const UPSTREAM_LOOP = String.raw`
let buf = "";
process.stdin.on("data", (d) => {
  buf += d;
  let nl;
  while ((nl = buf.indexOf("\n")) >= 0) {
    const m = JSON.parse(buf.slice(0, nl));
    buf = buf.slice(nl + 1);
    if (m.id !== undefined) answer(m, JSON.stringify(m.id));
  }
});
`;

// `toolgate serve` as a gateway in front of one upstream server of the
// spec's own (source: a node script defining answer(m, id), run with
// UPSTREAM_LOOP as server `name`), initialized.
export async function withUpstream(name, source) {
  const p = project(`return { policies = "policies",
    servers = { ${name} = { command = "node", args = { "upstream.js" } } } }`);
  fs.writeFileSync(path.join(p.dir, "upstream.js"), source + UPSTREAM_LOOP);
  const s = rawServer(p);
  s.send({ jsonrpc: "2.0", id: 1, method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "0" } } });
  const init = await s.reply(1, 15000);
  s.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  return { p, s, init };
}

export const text = (result) =>
  (result && result.content || []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
export const outcome = (result) => result && result._meta && result._meta["toolgate/outcome"];
