// upstream_noisy.test.mjs — an upstream server that writes its stderr (and
// log notifications) without end: toolgate's log takes a burst of its
// lines, then at most 50 a second, and says how many it dropped; its own
// lines and the upstream's later ones still get through.
import { run, readLog, until, withUpstream } from "./lib.mjs";

// 20,000 lines on stderr and 20,000 notifications/message at start; a
// "late line" on stderr two seconds later.
const UPSTREAM = String.raw`
let noise = "";
for (let i = 0; i < 20000; i++) noise += "noise line " + i + "\n";
process.stderr.write(noise);
setTimeout(() => process.stderr.write("late line\n"), 2000);
function answer(m, id) {
  if (m.method === "initialize") {
    process.stdout.write('{"jsonrpc":"2.0","id":' + id + ',"result":{"protocolVersion":"2025-06-18",' +
      '"capabilities":{"prompts":{},"logging":{}},"serverInfo":{"name":"noisy","version":"0"}}}\n');
    let logs = "";
    for (let i = 0; i < 20000; i++)
      logs += '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"log ' + i + '"}}\n';
    process.stdout.write(logs);
  } else if (m.method === "prompts/list") {
    process.stdout.write('{"jsonrpc":"2.0","id":' + id + ',"result":{"prompts":[]}}\n');
  } else {
    process.stdout.write('{"jsonrpc":"2.0","id":' + id + ',"result":{}}\n');
  }
}
`;

await run("upstream_noisy", async (check) => {
  const { p, s, init } = await withUpstream("n", UPSTREAM);
  check("initialize is answered once the upstream is up", !!init?.result, init);
  check("toolgate says it drops the upstream's lines",
    await until(() => /upstream n writes more than 50 lines a second to its log: dropping them/.test(readLog(p)), 5000),
    readLog(p).slice(-1500));
  check("its later line gets through, after the count of those dropped",
    await until(() => /upstream n: \d+ lines of its log were dropped \(it wrote more than 50 a second\)\n.*upstream n: late line/.test(readLog(p)), 8000),
    readLog(p).slice(-1500));
  const noisy = readLog(p).split("\n").filter((l) => /upstream n: (noise line|log) \d+/.test(l)).length;
  check("the flood is cut to a burst: at most 200 lines, and 50 a second after", noisy <= 200 + 50 * 5, noisy);
  s.send({ jsonrpc: "2.0", id: 3, method: "ping" });
  check("the server goes on", !!(await s.reply(3))?.result);
  s.close();
  const { code, signal } = await s.exited;
  check("toolgate exits cleanly", code === 0 && !signal && !/Sanitizer|runtime error/.test(s.stderr),
    { code, signal, stderr: s.stderr.slice(-1500) });
});
