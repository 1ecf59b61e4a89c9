// mcp_bench.mjs — what `toolgate serve` costs an MCP client: server-
// everything's echo called directly and through toolgate (the default
// policies loaded, echo marked read-only so no one is asked), by the same
// SDK client in the same run, in interleaved rounds: one call at a time
// and 16 in flight. Prints latency p50/p99 and calls/s for each, what
// toolgate adds, and toolgate's RSS when idle.
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
  process.on("exit", () => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function connect(viaToolgate, dir) {
  const transport = viaToolgate
    ? new StdioClientTransport({ command: toolgate, cwd: dir, stderr: "ignore",
        args: ["serve", "--log-level", "warning", "--socket", path.join(dir, "s.sock")] })
    : new StdioClientTransport({ command: process.execPath, args: [everything, "stdio"],
        stderr: "ignore" });
  const client = new Client({ name: "bench", version: "1" }, { capabilities: {} });
  await client.connect(transport);
  return { client, transport, tool: viaToolgate ? "everything__echo" : "echo" };
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
const direct = await connect(false, dir);
const gated = await connect(true, dir);
for (const c of [direct, gated]) await sequential(c, 300); // warm-up: JIT, caches
await new Promise((r) => setTimeout(r, 1000));
const idleMb = rss(gated.transport.pid);

// per mode, per round: the p50/p99 of the round and its calls/s; the
// median over rounds is reported (a busy machine slows both alike)
const results = { seq: { direct: [], gated: [] }, conc: { direct: [], gated: [] } };
let gatedCpu = 0;
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, c] of [["direct", direct], ["gated", gated]]) {
    const cpu0 = name === "gated" ? cpu(c.transport.pid) : 0;
    const s = await sequential(c, CALLS);
    results.seq[name].push({ p50: pct(s.lat, 0.5), p99: pct(s.lat, 0.99), rate: CALLS / s.secs });
    const k = await concurrent(c, CALLS);
    results.conc[name].push({ p50: pct(k.lat, 0.5), p99: pct(k.lat, 0.99), rate: CALLS / k.secs });
    if (name === "gated") gatedCpu += cpu(c.transport.pid) - cpu0;
  }
}
const med = (xs, k) => pct(xs.map((x) => x[k]), 0.5);
const row = (label, r) => {
  const d = { p50: med(r.direct, "p50"), p99: med(r.direct, "p99"), rate: med(r.direct, "rate") };
  const g = { p50: med(r.gated, "p50"), p99: med(r.gated, "p99"), rate: med(r.gated, "rate") };
  return `| ${label} | ${d.p50.toFixed(0)} | ${d.p99.toFixed(0)} | ${d.rate.toFixed(0)} | ` +
    `${g.p50.toFixed(0)} | ${g.p99.toFixed(0)} | ${g.rate.toFixed(0)} | ` +
    `${(g.p50 - d.p50).toFixed(0)} | ${(100 * g.rate / d.rate).toFixed(0)}% |`;
};
console.log(`server-everything echo, ${CALLS} calls per round, median of ${ROUNDS} rounds ` +
  `(node ${process.version}, SDK client):\n`);
console.log("| calls | direct p50 µs | direct p99 µs | direct calls/s | toolgate p50 µs | " +
  "toolgate p99 µs | toolgate calls/s | added p50 µs | throughput kept |");
console.log("|---|---|---|---|---|---|---|---|---|");
console.log(row("one at a time", results.seq));
console.log(row(`${IN_FLIGHT} in flight`, results.conc));
console.log(`\ntoolgate's own CPU per call (user + system, both modes): ` +
  `${(gatedCpu / (2 * CALLS * ROUNDS) * 1e6).toFixed(1)} µs`);
console.log(`toolgate serve idle RSS: ${idleMb.toFixed(1)} MB (after warm-up, 1 s idle)`);
await direct.client.close();
await gated.client.close();
process.exit(0);
