// robust.test.mjs — hostile and broken input by raw JSON-RPC lines: each
// gets a JSON-RPC error saying what was wrong and the server keeps
// serving; version negotiation; a client that closes stdin mid-call.
import fs from "node:fs";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { run, project, rawServer, until, sleep, TOOLGATE, REPO } from "./lib.mjs";

const init = (id, version = "2025-06-18") => ({
  jsonrpc: "2.0", id, method: "initialize",
  params: { protocolVersion: version, capabilities: {}, clientInfo: { name: "raw", version: "0" } },
});

const alive = async (s, id) => {
  s.send({ jsonrpc: "2.0", id, method: "ping" });
  const r = await s.reply(id);
  return !!(r && r.result);
};

const errorOf = (m) => m && m.error;

await run("robust", async (check) => {
  const p = project(`return { policies = "policies" }`);
  const s = rawServer(p, ["--max-message-bytes", "64K", "--ask-fallback", "allow"]);

  s.send({ jsonrpc: "2.0", id: "early", method: "tools/list" });
  let r = await s.reply("early");
  check("a request before initialize, naming no version, is refused with the versions spoken",
    errorOf(r)?.code === -32022 && /UnsupportedProtocolVersion/.test(r.error.message) &&
    r.error.data?.supported?.includes("2026-07-28") &&
    r.error.data?.supported?.includes("2025-06-18"), r);
  check("ping is answered before initialize", await alive(s, "p0"));

  s.send(init(1, "2025-06-18"));
  r = await s.reply(1);
  check("initialize with 2025-06-18 speaks 2025-06-18", r?.result?.protocolVersion === "2025-06-18", r);
  s.send(init(2));
  r = await s.reply(2);
  check("a second initialize is refused", errorOf(r)?.code === -32600 &&
    /already initialized/.test(r.error.message), r);
  s.send({ jsonrpc: "2.0", method: "notifications/initialized" });

  s.send("this is not json\n");
  r = await s.next((m) => m.error && m.id === null);
  check("malformed JSON: -32700 Parse error with id null, saying where",
    r?.error?.code === -32700 && /byte 0/.test(r.error.data), r);
  check("... and the server keeps serving", await alive(s, "p1"));

  s.send('{"jsonrpc":"2.0","id":7,"method":"ping"\n');
  r = await s.next((m) => m.error?.code === -32700 && /end of/.test(m.error.data || ""));
  check("a truncated message is a parse error", !!r, s.messages.slice(-2));
  check("... and the server keeps serving", await alive(s, "p2"));

  const cases = [
    [{ jsonrpc: "1.0", id: 10, method: "ping" }, 10, -32600, /jsonrpc/],
    [{ jsonrpc: "2.0", id: { x: 1 }, method: "ping" }, null, -32600, /"id"/],
    [{ jsonrpc: "2.0", id: 9007199254740993, method: "ping" }, null, -32600, /2\^53/],
    [{ jsonrpc: "2.0", id: 1.5, method: "ping" }, null, -32600, /fraction/],
    [{ jsonrpc: "2.0", id: 11, method: 42 }, 11, -32600, /method/],
    [{ jsonrpc: "2.0", id: 12, method: "ping", params: [1, 2] }, 12, -32600, /params/],
    [{ jsonrpc: "2.0", id: 13, method: "no/such/method" }, 13, -32601, /no\/such\/method/],
    [{ jsonrpc: "2.0", id: 14, method: "tools/call", params: { name: 5 } }, 14, -32602, /name/],
    [{ jsonrpc: "2.0", id: 15, method: "tools/call", params: { name: "slow", arguments: [1] } }, 15, -32602, /arguments/],
    [{ jsonrpc: "2.0", id: 16, method: "tools/call", params: { name: "slow", arguments: {}, _meta: { progressToken: {} } } }, 16, -32602, /progressToken/],
    [{ jsonrpc: "2.0", id: 17, method: "tools/call", params: { name: "exec\u0001x", arguments: {} } }, 17, -32602, /Unknown tool/],
    [{ jsonrpc: "2.0", id: 18, method: "logging/setLevel", params: { level: "loud" } }, 18, -32602, /level/],
    [{ jsonrpc: "2.0", id: 19, method: "tools/list", params: { cursor: "x" } }, 19, -32602, /cursor/],
    [{ jsonrpc: "2.0", id: 20, method: "ping", params: { _meta: 3 } }, 20, -32602, /_meta/],
    [[{ jsonrpc: "2.0", id: 21, method: "ping" }], null, -32600, /batch/],
    [{ jsonrpc: "2.0" }, null, -32600, /neither/],
    ["hello", null, -32600, /object/],
  ];
  for (const [msg, id, code, why] of cases) {
    s.send(JSON.stringify(msg) + "\n");
    r = await s.next((m) => m.error && m.id === id && why.test(m.error.message), 3000);
    check(`${JSON.stringify(msg).slice(0, 70)} -> ${code}`, r?.error?.code === code,
      s.messages.slice(-1));
  }
  for (const [bytes, what] of [['{"jsonrpc":"2.0","id":30,"method":"ping","params":{"a":1,"a":2}}', "a duplicate key"],
                               ['{"jsonrpc":"2.0","id":31,"method":"ping","params":{"a":"\\ud800"}}', "a lone surrogate"],
                               ['{"jsonrpc":"2.0","id":32,"method":"ping","params":{"a":1e400}}', "1e400"],
                               ['{"jsonrpc":"2.0","id":34,"method":"ping","params":{"a":"\\u0000"}}', "a NUL character"],
                               ['{"jsonrpc":"2.0","id":33,"method":"ping","params":{"a":"\xff"}}', "invalid UTF-8"]]) {
    r = await s.exchange(Buffer.concat([Buffer.from(bytes, "latin1"), Buffer.from("\n")]),
      (m) => m.error?.code === -32700, 3000);
    check(`${what} is refused as a parse error`, r?.id === null, r);
  }
  check("the server still serves after all that", await alive(s, "p3"));

  // sizes
  const big = JSON.stringify({ jsonrpc: "2.0", id: 40, method: "tools/call",
    params: { name: "word_count", arguments: { text: "x".repeat(100000) } } });
  s.send(big + "\n");
  r = await s.next((m) => m.error && /over 65536 bytes/.test(m.error.message));
  check("a message over --max-message-bytes is refused with -32600", r?.error?.code === -32600, r);
  check("... and the server keeps serving", await alive(s, "p4"));
  const huge = "x".repeat(3 << 20);
  s.send(huge + "\n");
  r = await s.next((m) => m.error && /over 65536 bytes/.test(m.error.message) && m !== r);
  check("3 MiB without a newline in between is refused once, memory bounded",
    !!r && await alive(s, "p5"), s.messages.slice(-2));
  s.send("\r\n\n   \n");
  s.send('{"jsonrpc":"2.0","id":"crlf","method":"ping"}\r\n');
  check("blank lines are skipped and CRLF line ends work", !!(await s.reply("crlf")));
  s.send({ jsonrpc: "2.0", id: 99999, result: {} });
  check("a response to a request we never made is ignored",
    await alive(s, "p6") && await until(() => /did not make/.test(fs.readFileSync(p.log, "utf8"))));
  s.send({ jsonrpc: "2.0", method: "notifications/whatever", params: {} });
  check("an unknown notification gets no answer", await alive(s, "p7") &&
    !s.messages.some((m) => m.error && m.id === null && /whatever/.test(JSON.stringify(m))));

  // stdout is only protocol
  check("every line on stdout is JSON-RPC 2.0",
    s.messages.every((m) => m.jsonrpc === "2.0"), s.messages.filter((m) => m.jsonrpc !== "2.0"));

  // the client goes away mid-call
  const pidFile = path.join(p.dir, "child.pid");
  s.send({ jsonrpc: "2.0", id: 50, method: "tools/call", params: { name: "exec",
    arguments: { command: `echo $$ > ${pidFile}; exec sleep 30` } } });
  check("a long exec call started", await until(() => fs.existsSync(pidFile) &&
    fs.readFileSync(pidFile, "utf8").trim() !== ""), 5000);
  const pid = Number(fs.readFileSync(pidFile, "utf8"));
  const t0 = Date.now();
  const { code, signal } = await s.close();
  check("closing stdin mid-call: the process exits 0", code === 0 && signal === null,
    { code, signal, stderr: s.stderr.slice(-400) });
  check("... promptly", Date.now() - t0 < 5000, `${Date.now() - t0} ms`);
  let gone = false;
  try { process.kill(pid, 0); } catch { gone = true; }
  check("... and the command it ran is killed", gone, pid);
  check("... the call was cancelled", /exec: cancelled CANCELLED/.test(fs.readFileSync(p.log, "utf8")));
  check("... and nothing was sent for it", !s.messages.some((m) => m.id === 50));

  // version negotiation
  const t = rawServer(p);
  t.send(init(1, "1999-01-01"));
  r = await t.reply(1);
  check("an unknown version in initialize gets our latest, 2025-11-25",
    r?.result?.protocolVersion === "2025-11-25", r);
  t.send({ jsonrpc: "2.0", id: 2, method: "initialize", params: { protocolVersion: 20250618 } });
  r = await t.reply(2);
  check("initialize with a non-string version is -32602", r?.error?.code === -32602, r);
  const e = await t.close();
  check("a second server exits 0 when its stdin closes", e.code === 0, e);

  // requests and the end of input in one go (a pipe from printf): what
  // was answered before the end still goes out
  const batch = [init(1), { jsonrpc: "2.0", id: 2, method: "tools/call",
    params: { name: "word_count", arguments: { text: "a b c" } } }, "{broken"]
    .map((m) => (typeof m === "string" ? m : JSON.stringify(m))).join("\n");
  const once = spawnSync(TOOLGATE, ["serve", "--socket", p.socket + "2"],
    { cwd: p.dir, input: batch, encoding: "utf8", timeout: 20000 });
  const lines = once.stdout.trim().split("\n").map((l) => JSON.parse(l));
  // JSON-RPC answers in any order: a call's answer waits for its audit record
  const byId = (id) => lines.find((l) => l.id === id);
  check("requests followed at once by the end of input are all answered, exit 0",
    once.status === 0 && lines.length === 3 && byId(1)?.result?.protocolVersion &&
    byId(2)?.result?.structuredContent?.words === 3 &&
    lines.some((l) => l.id === null && l.error?.code === -32700),
    { status: once.status, stdout: once.stdout.slice(0, 600) });

  // toolgate.lua: a hostile or mistaken config is a clear error, exit 2
  const serveWith = (config, args = []) => {
    fs.writeFileSync(path.join(p.dir, "bad.lua"), config);
    return spawnSync(TOOLGATE, ["serve", "--config", "bad.lua", "--print-config", ...args],
      { cwd: p.dir, encoding: "utf8", input: "", timeout: 20000 });
  };
  const bad = [
    ["return { polices = 'x' }", /unknown key 'polices'/],
    ["return { servers = { s = { command = 'x', args = 'y' } } }", /servers\.s: args must be a list/],
    ["return { servers = { s = { args = { 'y' } } } }", /servers\.s: command is missing/],
    ["return { servers = { ['a b'] = { command = 'x' } } }", /'a b' is not a server name/],
    // names that run into each other with the separator: s's tool a__x and
    // s__a's tool x would both be s__a__x (which server runs it, which
    // described it, where prompts/get goes: whichever came first)
    ["return { servers = { s = { command = 'x' }, s__a = { command = 'x' } } }",
      /servers: 's' and 's__a' run into each other/],
    ["return { servers = { a = { command = 'x' }, a_ = { command = 'x' } } }",
      /servers: 'a' and 'a_' run into each other/],
    ["return { mcp = { separator = '-' }, servers = { a = { command = 'x' }, ['a-b'] = { command = 'x' } } }",
      /servers: 'a' and 'a-b' run into each other/],
    ["return { mcp = { ask_fallback = 'maybe' } }", /ask_fallback: "maybe" is not one/],
    ["return { mcp = { max_calls = -1 } }", /max_calls must be a whole number/],
    ["return { expose = { '[a' } }", /expose/],
    ["return 42", /must return a table/],
    ["while true do end", /runs too long/],
    ["local s = 'x' for i = 1, 40 do s = s .. s end", /not enough memory/],
    ["os.execute('touch /tmp/pwned')", /execute|nil/],
    ["return { policies = 'a\0b' }", /NUL/],
    ["this is not lua", /bad\.lua:1:/],
  ];
  for (const [src, want] of bad) {
    const r = serveWith(src);
    check(`config ${JSON.stringify(src).slice(0, 60)}: exit 2, saying ${want}`,
      r.status === 2 && want.test(r.stderr), { status: r.status, stderr: r.stderr });
  }
  const ex = spawnSync(TOOLGATE, ["serve", "--config",
    path.join(REPO, "examples/mcp-gateway/toolgate.lua"), "--print-config"], { encoding: "utf8" });
  let conf = null;
  try { conf = JSON.parse(ex.stdout); } catch {}
  check("the example config loads, its paths resolved against its folder",
    ex.status === 0 && conf?.servers?.everything?.command === "npx" &&
    conf.policies === path.join(REPO, "examples/mcp-gateway/policies"), ex.stderr || conf);
  const fifo = path.join(p.dir, "fifo");
  spawnSync("mkfifo", [fifo]);
  for (const args of [["--config", fifo], ["--log", fifo]]) {
    const r = spawnSync(TOOLGATE, ["serve", ...args], { cwd: p.dir, encoding: "utf8",
      input: "", timeout: 10000 });
    check(`serve ${args[0]} naming a FIFO nobody writes or reads: an error, not a hang`,
      r.status === 2 && /fifo/.test(r.stderr), { status: r.status, stderr: r.stderr });
  }
  const missing = spawnSync(TOOLGATE, ["serve", "--config", "nope.lua"], { cwd: p.dir, encoding: "utf8" });
  check("a missing config file: exit 2 naming it", missing.status === 2 &&
    /nope\.lua/.test(missing.stderr), missing.stderr);
  await sleep(10);
});
