// run.mjs — the official MCP conformance suite (@modelcontextprotocol/
// conformance, pinned in ../package.json) against `toolgate serve` as a
// gateway. The suite tests a server over Streamable HTTP and toolgate
// speaks stdio, so a stdio↔HTTP bridge (supergateway, pinned) stands in
// front of it; behind toolgate stands the suite's reference server
// (reference-server.mjs, on stdio). The same scenarios also run through
// the bridge alone, in front of the reference server itself, to tell
// what the bridge loses from what toolgate does.
//
//   node --import ./conformance/node20.mjs conformance/run.mjs PATH/TO/toolgate
//
// Passes when every scenario passes through toolgate except those in
// BRIDGE_LOSES (and TOOLGATE_EXCEPTIONS), and the bridge alone fails
// exactly the scenarios of BRIDGE_LOSES — a list that is no longer true
// fails the run, so it cannot go stale. Offline: everything runs from
// node_modules on localhost.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { through, quote } from "./bridge.mjs";

// What the bridge itself loses (supergateway 4.0.0, stdio→Streamable HTTP,
// --stateful), and why; README.md says more.
export const BRIDGE_LOSES = {
  "dns-rebinding-protection":
    "the scenario sends requests with a foreign Host/Origin header and " +
    "expects them refused; supergateway's HTTP server has no Host or " +
    "Origin check, so it accepts them (HTTP is the bridge's, not toolgate's)",
};

// What toolgate fails that the bridge alone passes, and why: none.
export const TOOLGATE_EXCEPTIONS = {};

const here = path.dirname(fileURLToPath(import.meta.url));
const mods = path.resolve(here, "../node_modules");
const SUITE = path.join(mods, "@modelcontextprotocol/conformance/dist/index.js");
const REFERENCE = path.join(here, "reference-server.mjs");
const TOOLGATE = path.resolve(process.argv[2] || path.join(here, "../../../build/toolgate"));

const keep = process.env.TOOLGATE_KEEP;
const top = fs.mkdtempSync(path.join(os.tmpdir(), "toolgate-conformance-"));
const dirs = { bridge: path.join(top, "bridge"), toolgate: path.join(top, "toolgate") };
for (const d of Object.values(dirs)) fs.mkdirSync(d);
fs.copyFileSync(path.join(here, "toolgate.lua"), path.join(dirs.toolgate, "toolgate.lua"));
process.env.REFERENCE_SERVER = REFERENCE;
process.env.XDG_STATE_HOME = path.join(top, "state");

const guard = setTimeout(() => {
  console.log("FAIL conformance: did not finish within 170 s");
  process.exit(1);
}, 170000);

// both at once: the suite mostly waits on its own timers
const [alone, gated] = await Promise.all([
  through("bridge alone", `${quote(process.execPath)} ${quote(REFERENCE)}`, dirs.bridge,
          SUITE, ["--suite", "all"]),
  through("toolgate", `${quote(TOOLGATE)} serve --config ${quote(path.join(dirs.toolgate, "toolgate.lua"))}` +
          ` --log ${quote(path.join(dirs.toolgate, "toolgate.log"))} --log-level info` +
          ` 2>>${quote(path.join(dirs.toolgate, "stderr.txt"))}`, dirs.toolgate,
          SUITE, ["--suite", "all"]),
]);
clearTimeout(guard);

let failures = 0;
const fail = (msg) => { failures++; console.log(`FAIL ${msg}`); };
const ok = (msg) => console.log(`ok   ${msg}`);
const failedOf = (r) => Object.keys(r.results).filter((s) => r.results[s].failed > 0).sort();

for (const r of [alone, gated])
  if (Object.keys(r.results).length < 20)
    fail(`${r.label}: the suite ran ${Object.keys(r.results).length} scenarios; its output:\n${r.out.slice(-3000)}`);

const scenarios = Object.keys(gated.results);
for (const s of scenarios) {
  const { passed, failed } = gated.results[s];
  const why = BRIDGE_LOSES[s] || TOOLGATE_EXCEPTIONS[s];
  if (!failed) ok(`toolgate: ${s} (${passed} checks)`);
  else if (why) ok(`toolgate: ${s} fails as listed: ${why}`);
  else fail(`toolgate: ${s}: ${failed} of ${passed + failed} checks failed (details: ${dirs.toolgate}/suite.txt)`);
}
// the bridge alone fails exactly what BRIDGE_LOSES lists
const lost = failedOf(alone);
const listed = Object.keys(BRIDGE_LOSES).sort();
for (const s of lost)
  if (!BRIDGE_LOSES[s]) fail(`bridge alone: ${s} fails and is not in BRIDGE_LOSES`);
for (const s of listed)
  if (!lost.includes(s)) fail(`bridge alone: ${s} is in BRIDGE_LOSES but passes: take it off the list`);
for (const s of Object.keys(TOOLGATE_EXCEPTIONS))
  if (gated.results[s] && !gated.results[s].failed)
    fail(`toolgate: ${s} is in TOOLGATE_EXCEPTIONS but passes: take it off the list`);

// toolgate's stderr (the bridge starts it through a shell): no crash or
// sanitizer report
const errFile = path.join(dirs.toolgate, "stderr.txt");
const reports = (fs.existsSync(errFile) ? fs.readFileSync(errFile, "utf8") : "")
  .split("\n").filter((l) => /Sanitizer|runtime error|Segmentation|Assertion/.test(l));
if (reports.length) fail(`toolgate reported errors on stderr:\n${reports.slice(0, 20).join("\n")}`);
else ok("toolgate: no crash or sanitizer report on its stderr");

const count = (r) => {
  const f = failedOf(r).length;
  return `${Object.keys(r.results).length - f} passed, ${f} failed (${failedOf(r).join(", ") || "none"})`;
};
console.log(`conformance: through toolgate ${count(gated)}; bridge alone ${count(alone)}`);
if (failures || keep) console.log(`conformance: files in ${top}`);
else fs.rmSync(top, { recursive: true, force: true });
process.exit(failures ? 1 : 0);
