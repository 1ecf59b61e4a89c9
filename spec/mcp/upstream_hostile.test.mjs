// upstream_hostile.test.mjs — an upstream server that answers with what a
// well-behaved one never sends: its errors' codes are what toolgate's
// client gets only when they are JSON-RPC's (integers an int holds), else
// -32603 with the upstream's message kept; and the server goes on.
import { run, withUpstream } from "./lib.mjs";

// A minimal MCP server on stdio: prompts/get answers with the error whose
// code the prompt's name says (as raw JSON text: 1e300 is no JS number
// JSON.stringify would write as such).
const UPSTREAM = String.raw`
const codes = { big: "1e300", frac: "1.5", neg: "-1e20", ok: "-32001", str: '"x"' };
function answer(m, id) {
  if (m.method === "initialize")
    process.stdout.write('{"jsonrpc":"2.0","id":' + id + ',"result":{"protocolVersion":"2025-06-18",' +
      '"capabilities":{"prompts":{}},"serverInfo":{"name":"hostile","version":"0"}}}\n');
  else if (m.method === "prompts/list")
    process.stdout.write('{"jsonrpc":"2.0","id":' + id + ',"result":{"prompts":[' +
      Object.keys(codes).map((k) => '{"name":"' + k + '"}').join(",") + ']}}\n');
  else if (m.method === "prompts/get")
    process.stdout.write('{"jsonrpc":"2.0","id":' + id + ',"error":{"code":' +
      codes[m.params.name] + ',"message":"no such luck"}}\n');
  else
    process.stdout.write('{"jsonrpc":"2.0","id":' + id + ',"error":{"code":-32601,"message":"no"}}\n');
}
`;

await run("upstream_hostile", async (check) => {
  const { s, init } = await withUpstream("h", UPSTREAM);
  check("initialize is answered once the upstream is up", !!init?.result, init);

  const cases = [["big", -32603], ["frac", -32603], ["neg", -32603], ["str", -32603], ["ok", -32001]];
  let id = 10;
  for (const [name, code] of cases) {
    s.send({ jsonrpc: "2.0", id: ++id, method: "prompts/get", params: { name: "h__" + name } });
    const r = await s.reply(id);
    check(`an upstream error with code ${name} reaches the client as ${code}, its message kept`,
      r?.error?.code === code && /upstream server 'h': no such luck/.test(r.error.message), r);
  }
  s.send({ jsonrpc: "2.0", id: 99, method: "ping" });
  check("... and the server goes on", !!(await s.reply(99))?.result);
  s.close();
  const { code, signal } = await s.exited;
  check("toolgate exits cleanly", code === 0 && !signal && !/Sanitizer|runtime error/.test(s.stderr),
    { code, signal, stderr: s.stderr.slice(-1500) });
});
