// congested.test.mjs — a client that stops reading what toolgate sends:
// what toolgate itself has to say cannot pile up without bound. Past the
// output backlog's mark (16 MiB unread), list_changed notices are owed —
// one of each sent once the client reads again, however many changes
// came — log notifications are dropped and counted, each call's latest
// progress is held until then; answers are never dropped.
import fs from "node:fs";
import path from "node:path";
import { run, project, rawServer, readLog, sleep, until } from "./lib.mjs";

// An answer of 20 MiB: the client, not reading, leaves it in toolgate.
const BIG = String.raw`
local tg = require "toolgate"
tg.tool { name = "big", read_only = true, schema = { type = "object" },
  run = function() return { text = string.rep("x", 20 * 1048576) } end }
`;
const tool = (n) => `local tg = require "toolgate"
tg.tool { name = "extra_${n}", read_only = true, schema = { type = "object" },
  run = function() return ${n} end }
`;

await run("congested", async (check) => {
  const p = project();
  fs.writeFileSync(path.join(p.policies, "30_big.lua"), BIG);
  // building 20 MiB in Lua takes well under the default limit on an idle
  // machine, and several times it under ASan on a loaded one: a limit far
  // beyond both, as the time limit is not what this spec is about
  const s = rawServer(p, ["--policy-time-limit", "60000"]);
  s.send({ jsonrpc: "2.0", id: 1, method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "0" } } });
  check("initialize is answered", !!(await s.reply(1, 15000))?.result);
  s.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  s.send({ jsonrpc: "2.0", id: 2, method: "logging/setLevel", params: { level: "info" } });
  check("logging/setLevel is answered", !!(await s.reply(2))?.result);

  s.child.stdout.pause(); // the client stops reading
  s.send({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "big", arguments: {} } });
  check("the big answer is made", await until(() => /mcp-\d+ big: ok/.test(readLog(p)), 60000, 100),
    readLog(p).slice(-1500));
  // three reloads, each changing the tool list and logging to the client
  for (let n = 1; n <= 3; n++) {
    const before = (readLog(p).match(/policies loaded|generation \d+ loaded|reload/g) || []).length;
    fs.writeFileSync(path.join(p.policies, `40_extra_${n}.lua`), tool(n));
    await until(() => (readLog(p).match(/policies loaded|generation \d+ loaded|reload/g) || []).length > before, 10000, 50);
    await sleep(300);
  }
  check("toolgate says it drops notifications the client does not read",
    /dropping log notifications/.test(readLog(p)), readLog(p).slice(-2000));
  const from = s.messages.length;
  s.child.stdout.resume(); // and reads again
  const r = await s.reply(3, 120000);
  check("the big answer comes once the client reads again, whole",
    r?.result && !r.result.isError && JSON.stringify(r.result).length > 20 * 1048576, r && JSON.stringify(r).slice(0, 300));
  await sleep(1000);
  const after = s.messages.slice(from);
  const changed = after.filter((m) => m.method === "notifications/tools/list_changed").length;
  check("one tools/list_changed is owed for the three changes, and sent", changed === 1,
    after.filter((m) => m.method).map((m) => m.method));
  check("the log counts the notifications dropped meanwhile",
    /the client reads again: \d+ log notifications were dropped/.test(readLog(p)),
    readLog(p).slice(-1500));
  s.send({ jsonrpc: "2.0", id: 4, method: "tools/list" });
  const list = await s.reply(4);
  check("... and the tool list it then asks for has the three new tools",
    ["extra_1", "extra_2", "extra_3"].every((n) => list?.result?.tools?.some((t) => t.name === n)),
    list?.result?.tools?.map((t) => t.name));
  s.close();
  const { code, signal } = await s.exited;
  check("toolgate exits cleanly", code === 0 && !signal && !/Sanitizer|runtime error/.test(s.stderr),
    { code, signal, stderr: s.stderr.slice(-1500) });
});
