// mcp_bench.mjs — what `toolgate serve` costs an MCP client, by the same
// SDK client in one run, in interleaved rounds, one call at a time and 16
// in flight: server-everything's echo called directly and through toolgate
// as a gateway (the default policies loaded, echo marked read-only so no
// one is asked; audit on, the default), and a local Lua tool served by
// toolgate itself with audit on and off (--no-db). Prints p50/p99 and
// calls/s for each, what the gateway adds, what the audit costs (ratios
// taken within each round), the load average, toolgate's CPU per call
// and its RSS when idle. When bench_relay (bench/bench_relay.c) is built
// beside toolgate, the same echo through it too: a relay that copies the
// bytes and does nothing else, the ceiling of any gateway that runs as a
// process of its own on this machine.
//   node bench/mcp_bench.mjs PATH/TO/toolgate [calls-per-round] [rounds]
// Uses the SDK and server-everything from spec/mcp/node_modules (npm ci).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const mods = path.join(repo, "spec/mcp/node_modules");
const { Client } = await import(path.join(mods, "@modelcontextprotocol/sdk/dist/esm/client/index.js"));
const { StdioClientTransport } =
  await import(path.join(mods, "@modelcontextprotocol/sdk/dist/esm/client/stdio.js"));
const everything = path.join(mods, "@modelcontextprotocol/server-everything/dist/index.js");

const toolgate = path.resolve(process.argv[2] || path.join(repo, "build/toolgate"));
const CALLS = Number(process.argv[3] || 2000);
const ROUNDS = Number(process.argv[4] || 5);
const IN_FLIGHT = 16;

function project() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolgate-bench-"));
  fs.writeFileSync(path.join(dir, "toolgate.lua"), `return {
  policies = ${JSON.stringify(path.join(repo, "policies"))},
  servers = { everything = { command = ${JSON.stringify(process.execPath)},
    args = { ${JSON.stringify(everything)}, "stdio" }, read_only = { "echo" } } },
}`);
  // a local Lua tool, answered by toolgate itself: what the chain and the
  // audit cost without an upstream
  fs.mkdirSync(path.join(dir, "local"));
  fs.writeFileSync(path.join(dir, "local", "10_echo.lua"), `local tg = require "toolgate"
tg.tool { name = "echo", description = "echoes its message", read_only = true,
  schema = { type = "object", required = { "message" },
             properties = { message = { type = "string" } } },
  run = function(args) return { content = { { type = "text", text = "Echo: " .. args.message } } } end }
`);
  fs.writeFileSync(path.join(dir, "local.lua"), `return { policies = "local" }`);
  process.on("exit", () => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const relay = path.join(path.dirname(toolgate), "bench_relay");

// kind: "direct" (server-everything), "relay" (through bench_relay),
// "gated" (through toolgate serve),
// "lua" (toolgate's local Lua tool, audit on), "lua-noaudit" (--no-db)
async function connect(kind, dir) {
  const serve = (config, extra) => new StdioClientTransport({ command: toolgate, cwd: dir,
    stderr: "ignore", args: ["serve", "--config", path.join(dir, config), "--log-level",
      "warning", "--socket", path.join(dir, `${kind}.sock`), ...extra] });
  const transport =
    kind === "direct" ? new StdioClientTransport({ command: process.execPath,
      args: [everything, "stdio"], stderr: "ignore" })
    : kind === "relay" ? new StdioClientTransport({ command: relay,
      args: [process.execPath, everything, "stdio"], stderr: "ignore" })
    : kind === "gated" ? serve("toolgate.lua", ["--db", path.join(dir, "gated.db")])
    : kind === "lua" ? serve("local.lua", ["--db", path.join(dir, "lua.db")])
    : serve("local.lua", ["--no-db"]);
  const client = new Client({ name: "bench", version: "1" }, { capabilities: {} });
  await client.connect(transport);
  return { client, transport, tool: kind === "gated" ? "everything__echo" : "echo" };
}

const call = (c, i) => c.client.callTool({ name: c.tool, arguments: { message: `m${i}` } });

async function sequential(c, n) {
  const lat = new Float64Array(n);
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) {
    const s = process.hrtime.bigint();
    const r = await call(c, i);
    lat[i] = Number(process.hrtime.bigint() - s) / 1000;
    if (r.isError) throw new Error("echo failed: " + JSON.stringify(r));
  }
  return { lat, secs: Number(process.hrtime.bigint() - t0) / 1e9 };
}

async function concurrent(c, n) {
  const lat = new Float64Array(n);
  let next = 0;
  const t0 = process.hrtime.bigint();
  const worker = async () => {
    while (next < n) {
      const i = next++;
      const s = process.hrtime.bigint();
      const r = await call(c, i);
      lat[i] = Number(process.hrtime.bigint() - s) / 1000;
      if (r.isError) throw new Error("echo failed: " + JSON.stringify(r));
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  return { lat, secs: Number(process.hrtime.bigint() - t0) / 1e9 };
}

const pct = (a, p) => {
  const s = Float64Array.from(a).sort();
  return s[Math.min(s.length - 1, Math.floor(p * s.length))];
};

// CPU seconds the process has used (user + system), from /proc.
function cpu(pid) {
  const f = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  const v = f.slice(f.lastIndexOf(")") + 2).split(" ");
  return (Number(v[11]) + Number(v[12])) / 100; /* utime, stime: ticks of 10 ms */
}

function rss(pid) {
  const m = fs.readFileSync(`/proc/${pid}/status`, "utf8").match(/VmRSS:\s+(\d+) kB/);
  return m ? Number(m[1]) / 1024 : NaN;
}

const dir = project();
const KINDS = ["direct", ...(fs.existsSync(relay) ? ["relay"] : []), "gated", "lua", "lua-noaudit"];
const conns = {};
for (const k of KINDS) conns[k] = await connect(k, dir);
for (const k of KINDS) await sequential(conns[k], 300); // warm-up: JIT, caches
await new Promise((r) => setTimeout(r, 1000));
const idleMb = rss(conns.gated.transport.pid);
const load = fs.readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");

// per mode, per kind, per round: the p50/p99 of the round and its calls/s;
// the rounds interleave the kinds (a busy moment slows all alike) and the
// median over rounds is reported, with each round's ratios
const results = { seq: {}, conc: {} };
for (const m of ["seq", "conc"]) for (const k of KINDS) results[m][k] = [];
let gatedCpu = 0;
for (let round = 0; round < ROUNDS; round++) {
  for (const k of KINDS) {
    const c = conns[k];
    const cpu0 = k === "gated" ? cpu(c.transport.pid) : 0;
    const s = await sequential(c, CALLS);
    results.seq[k].push({ p50: pct(s.lat, 0.5), p99: pct(s.lat, 0.99), rate: CALLS / s.secs });
    const q = await concurrent(c, CALLS);
    results.conc[k].push({ p50: pct(q.lat, 0.5), p99: pct(q.lat, 0.99), rate: CALLS / q.secs });
    if (k === "gated") gatedCpu += cpu(c.transport.pid) - cpu0;
  }
}
const loadAfter = fs.readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
const med = (xs) => pct(xs, 0.5);
const col = (rs, key) => med(rs.map((r) => r[key]));
// ratios within each round, then their median: both sides of a ratio ran
// seconds apart
const perRound = (m, a, b, f) => med(results[m][a].map((x, i) => f(x, results[m][b][i])));
const LABEL = { direct: "server-everything echo, direct",
  relay: "echo through bench_relay (copies bytes only)", gated: "echo through toolgate serve (audit on)",
  lua: "local Lua tool, audit on", "lua-noaudit": "local Lua tool, audit off (--no-db)" };
console.log(`${CALLS} calls per round, median of ${ROUNDS} interleaved rounds ` +
  `(node ${process.version}, SDK client); load average ${load} before, ${loadAfter} after:\n`);
console.log("| what | calls | p50 µs | p99 µs | calls/s |");
console.log("|---|---|---|---|---|");
for (const [m, label] of [["seq", "one at a time"], ["conc", `${IN_FLIGHT} in flight`]])
  for (const k of KINDS)
    console.log(`| ${LABEL[k]} | ${label} | ${col(results[m][k], "p50").toFixed(0)} | ` +
      `${col(results[m][k], "p99").toFixed(0)} | ${col(results[m][k], "rate").toFixed(0)} |`);
const hasRelay = KINDS.includes("relay");
console.log("\n| calls | gateway: added p50 µs | gateway: throughput kept | " +
  (hasRelay ? "bench_relay: added p50 µs | bench_relay: throughput kept | " : "") +
  "Lua tool: audit on − off, p50 µs | Lua tool: throughput audit on / off |");
console.log("|---|---|---|---|---|" + (hasRelay ? "---|---|" : ""));
const kept = (m, k) => `${(100 * perRound(m, k, "direct", (g, d) => g.rate / d.rate)).toFixed(0)}%`;
const added = (m, k) => perRound(m, k, "direct", (g, d) => g.p50 - d.p50).toFixed(0);
for (const [m, label] of [["seq", "one at a time"], ["conc", `${IN_FLIGHT} in flight`]])
  console.log(`| ${label} | ${added(m, "gated")} | ${kept(m, "gated")} | ` +
    (hasRelay ? `${added(m, "relay")} | ${kept(m, "relay")} | ` : "") +
    `${perRound(m, "lua", "lua-noaudit", (a, b) => a.p50 - b.p50).toFixed(0)} | ` +
    `${(100 * perRound(m, "lua", "lua-noaudit", (a, b) => a.rate / b.rate)).toFixed(0)}% |`);
console.log(`\ntoolgate's own CPU per gateway call (user + system, both modes): ` +
  `${(gatedCpu / (2 * CALLS * ROUNDS) * 1e6).toFixed(1)} µs`);
console.log(`toolgate serve idle RSS: ${idleMb.toFixed(1)} MB (after warm-up, 1 s idle)`);
for (const k of KINDS) await conns[k].client.close();
process.exit(0);
