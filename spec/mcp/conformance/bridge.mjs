// bridge.mjs — what both conformance runs share (run.mjs for the 2025
// eras, run2026.mjs for 2026-07-28): the stdio↔HTTP bridge (supergateway,
// pinned in ../package.json) in front of a command, and the suite's
// server scenarios against it, with their results read from its summary.
import { spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const BRIDGE = path.resolve(here, "../node_modules/supergateway/dist/index.js");

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
export const quote = (s) => `'${s.replace(/'/g, `'\\''`)}'`;

export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

// The bridge in front of `command` (a shell command line it starts, one
// per session), in a process group of its own; resolves once it answers.
export async function bridge(command, dir) {
  const port = await freePort();
  const log = fs.openSync(path.join(dir, "bridge.log"), "w");
  const child = spawn(process.execPath,
    [BRIDGE, "--stdio", command, "--outputTransport", "streamableHttp",
     "--stateful", "--port", String(port), "--healthEndpoint", "/healthz",
     "--logLevel", "info"],
    { cwd: dir, detached: true, stdio: ["ignore", log, log] });
  const stop = () => {
    try { process.kill(-child.pid, "SIGTERM"); } catch {}
  };
  process.on("exit", stop);
  const end = Date.now() + 30000;
  while (Date.now() < end) {
    try {
      const r = await fetch(`http://127.0.0.1:${port}/healthz`);
      if (r.ok) return { url: `http://localhost:${port}/mcp`, stop };
    } catch {}
    if (child.exitCode !== null) break;
    await sleep(100);
  }
  stop();
  throw new Error(`the bridge did not come up: ${fs.readFileSync(path.join(dir, "bridge.log"), "utf8").slice(-2000)}`);
}

// Runs the suite's server scenarios against url: the suite's bundle
// (suitePath) with args (which scenarios: "--suite all", "--requirements
// 2026-07-28"); resolves to {scenario: {passed, failed}} and the output.
export function suite(url, dir, suitePath, args) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath,
      ["--import", path.join(here, "node20.mjs"), suitePath, "server", ...args, "--url", url],
      { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d) => { out += d; });
    child.stderr.on("data", (d) => { out += d; });
    child.on("close", () => {
      fs.writeFileSync(path.join(dir, "suite.txt"), out);
      const results = {};
      const summary = out.slice(out.lastIndexOf("=== SUMMARY ==="));
      for (const m of summary.matchAll(/^[✓✗] (\S+): (\d+) passed, (\d+) failed/gmu))
        results[m[1]] = { passed: +m[2], failed: +m[3] };
      resolve({ results, out });
    });
  });
}

// The suite against `command` behind the bridge.
export async function through(label, command, dir, suitePath, args) {
  const b = await bridge(command, dir);
  try {
    return { label, ...(await suite(b.url, dir, suitePath, args)) };
  } finally {
    b.stop();
  }
}
