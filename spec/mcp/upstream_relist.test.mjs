// upstream_relist.test.mjs — an upstream whose tools change while toolgate
// lists them: it answers tools/list, then registers another tool and says
// notifications/tools/list_changed while its prompts/list is still to be
// answered (as server-everything does with the tools it registers once it
// knows its client). The list toolgate got is older than the notice: it
// lists again before it offers the tools, so the client sees the last
// list, not a stale one and a flap.
import { run, withUpstream } from "./lib.mjs";

// tools/list answers the tools it has (t1..tN), then, while it has fewer
// than it is growing to, registers one more and says so — before it
// answers the prompts/list toolgate sent beside it. prompts/get of its
// prompt "grow" makes it grow to 5.
const UPSTREAM = String.raw`
let n = 1, target = 3;
const out = (s) => process.stdout.write(s + "\n");
function answer(m, id) {
  if (m.method === "initialize") {
    out('{"jsonrpc":"2.0","id":' + id + ',"result":{"protocolVersion":"2025-06-18",' +
      '"capabilities":{"tools":{"listChanged":true},"prompts":{}},"serverInfo":{"name":"grows","version":"0"}}}');
  } else if (m.method === "tools/list") {
    const tools = [];
    for (let i = 1; i <= n; i++) tools.push({ name: "t" + i, inputSchema: { type: "object" } });
    out(JSON.stringify({ jsonrpc: "2.0", id: m.id, result: { tools } }));
    if (n < target) {
      n++;
      out('{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}');
    }
  } else if (m.method === "prompts/list") {
    out('{"jsonrpc":"2.0","id":' + id + ',"result":{"prompts":[{"name":"grow"}]}}');
  } else if (m.method === "prompts/get") {
    target = 5;
    out('{"jsonrpc":"2.0","id":' + id + ',"result":{"messages":[]}}');
    n++;
    out('{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}');
  } else {
    out('{"jsonrpc":"2.0","id":' + id + ',"result":{}}');
  }
}
`;

const names = (r) => (r?.result?.tools || []).map((t) => t.name).sort();
const isChanged = (m) => m.method === "notifications/tools/list_changed";

await run("upstream_relist", async (check) => {
  const { s, init } = await withUpstream("g", UPSTREAM);
  check("initialize is answered once the upstream is up", !!init?.result, init);
  s.send({ jsonrpc: "2.0", id: 2, method: "tools/list" });
  let r = await s.reply(2);
  check("the first list has the tools registered while it was listed",
    ["g__t1", "g__t2", "g__t3"].every((n) => names(r).includes(n)), names(r));

  // a change while serving, and another while that one is listed
  s.send({ jsonrpc: "2.0", id: 3, method: "prompts/get", params: { name: "g__grow" } });
  check("its prompt makes it grow", !!(await s.reply(3))?.result);
  check("the client is told the list changed", !!(await s.next(isChanged, 10000)));
  s.send({ jsonrpc: "2.0", id: 4, method: "tools/list" });
  r = await s.reply(4);
  check("the list it gets then is the last one (t5), not one between",
    names(r).includes("g__t5"), names(r));
  s.send({ jsonrpc: "2.0", id: 5, method: "ping" });
  await s.reply(5);
  check("... told once", s.messages.filter(isChanged).length === 1,
    s.messages.filter(isChanged).length);
  s.close();
  const { code, signal } = await s.exited;
  check("toolgate exits cleanly", code === 0 && !signal && !/Sanitizer|runtime error/.test(s.stderr),
    { code, signal, stderr: s.stderr.slice(-1500) });
});
