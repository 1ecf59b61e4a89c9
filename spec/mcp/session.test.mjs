// session.test.mjs — the 2025 era through the official SDK client:
// initialize, tools/list, calls allowed / denied / asked, validation,
// progress, cancellation, elicitation answered, calls in flight at once,
// reloads as log notifications and tools/list_changed.
import fs from "node:fs";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { ElicitRequestSchema, LoggingMessageNotificationSchema,
         ToolListChangedNotificationSchema, LATEST_PROTOCOL_VERSION }
  from "@modelcontextprotocol/sdk/types.js";
import { run, project, sdkClient, text, outcome, readLog, until, sleep, TOOLGATE } from "./lib.mjs";

const CONFIG = `return {
  policies = "policies",
  workspace = { "." },
  defaults = { progress_interval_ms = 50 },
}`;

await run("session", async (check) => {
  const p = project(CONFIG);

  // ---- a client without elicitation ----
  const a = await sdkClient(p);
  const c = a.client;
  check("initialize: toolgate answers with its name, version and instructions",
    c.getServerVersion()?.name === "toolgate" && /policies/.test(c.getInstructions()),
    c.getServerVersion());
  check("initialize agrees on the SDK's latest version (" + LATEST_PROTOCOL_VERSION + ")",
    new RegExp(`speaking ${LATEST_PROTOCOL_VERSION}`).test(readLog(p)), readLog(p));
  const caps = c.getServerCapabilities();
  check("the server offers tools with listChanged, and logging",
    caps?.tools?.listChanged === true && !!caps?.logging, caps);

  const { tools } = await c.listTools();
  const names = tools.map((t) => t.name);
  check("tools/list has the built-ins and the Lua tools",
    ["exec", "read_file", "write_file", "list_dir", "apply_patch", "word_count", "slow", "note"]
      .every((n) => names.includes(n)), names);
  check("tools/list is sorted by name", names.join() === [...names].sort().join(), names);
  const slow = tools.find((t) => t.name === "slow");
  check("a Lua tool comes with its description and input schema",
    slow.description.startsWith("Counts to n") && slow.inputSchema.type === "object" &&
    slow.inputSchema.required?.[0] === "n" && slow.inputSchema.properties?.n?.maximum === 1000,
    slow);
  check("read-only tools say so", slow.annotations?.readOnlyHint === true &&
    tools.find((t) => t.name === "note").annotations?.readOnlyHint === false);
  const again = await c.listTools();
  check("tools/list is the same list every time",
    JSON.stringify(again.tools) === JSON.stringify(tools));

  let r = await c.callTool({ name: "word_count", arguments: { text: "one two three" } });
  check("an allowed call runs and returns its result",
    !r.isError && r.structuredContent?.words === 3 && JSON.parse(text(r)).words === 3, r);
  check("the result's _meta tells the outcome", outcome(r)?.status === "ok" &&
    outcome(r)?.verdict === "allow" && /^mcp-\d+$/.test(outcome(r)?.call_id), r._meta);

  r = await c.callTool({ name: "exec", arguments: { command: "rm -rf /tmp/x" } });
  check("a denied call is an isError result the agent can read",
    r.isError === true && /did not run/.test(text(r)) && /shell-destructive/.test(text(r)) &&
    outcome(r)?.status === "denied" && outcome(r)?.code === "DENIED", r);

  r = await c.callTool({ name: "note", arguments: { text: "a secret" } });
  check("a rule's deny reason reaches the agent",
    r.isError && /notes must not hold secrets/.test(text(r)), r);

  r = await c.callTool({ name: "note", arguments: { text: "hello" } });
  check("an ask without elicitation is rejected: approval was not possible here",
    r.isError && /approval was not possible here/.test(text(r)) &&
    /elicitation/.test(text(r)) && outcome(r)?.status === "rejected", text(r));

  r = await c.callTool({ name: "word_count", arguments: { text: 7 } });
  check("a validation error names the path that failed",
    r.isError && outcome(r)?.code === "INVALID_ARGS" && /text/.test(text(r)), text(r));
  r = await c.callTool({ name: "word_count", arguments: {} });
  check("a missing required argument is a validation error",
    r.isError && outcome(r)?.phase === "VALIDATE", text(r));

  let err = null;
  try { await c.callTool({ name: "no_such_tool", arguments: {} }); } catch (e) { err = e; }
  check("an unknown tool is a JSON-RPC error (-32602)",
    err && err.code === -32602 && /Unknown tool: no_such_tool/.test(err.message), String(err));

  // progress while the slow tool runs
  const progress = [];
  r = await c.callTool({ name: "slow", arguments: { n: 4, step_ms: 60 } }, undefined,
    { onprogress: (p) => progress.push(p) });
  check("a slow call ends ok", !r.isError && r.structuredContent?.done === 4, r);
  check("progress notifications came while it ran", progress.length >= 2, progress);
  check("progress grows and carries total and message",
    progress.every((p, i) => i === 0 || p.progress > progress[i - 1].progress) &&
    progress.some((p) => p.total === 4 && /step/.test(p.message)), progress);
  const fast = [];
  await c.callTool({ name: "word_count", arguments: { text: "x" } }, undefined,
    { onprogress: (p) => fast.push(p) });
  check("a short tool sends no progress", fast.length === 0, fast);

  // cancellation
  const ac = new AbortController();
  let cancelErr = null;
  const pending = c.callTool({ name: "slow", arguments: { n: 100, step_ms: 50 } }, undefined, {
    signal: ac.signal,
    onprogress: (pr) => { if (pr.progress >= 2) ac.abort("enough"); },
  }).catch((e) => { cancelErr = e; });
  await pending;
  check("cancelling a call rejects it at the client", cancelErr !== null, String(cancelErr));
  const cancelledAt = a.seen.length;
  await sleep(400);
  const late = a.seen.slice(cancelledAt).filter((m) =>
    m.method === "notifications/progress" || ("id" in m && "result" in m));
  check("nothing is sent for a cancelled call afterwards", late.length === 0, late);
  check("the log shows the call ended cancelled",
    await until(() => /slow: cancelled CANCELLED/.test(readLog(p))), readLog(p).slice(-800));
  check("no SDK error about an unknown progress token or response",
    a.errors.length === 0, a.errors);

  // many calls in flight at once
  const t0 = Date.now();
  const many = await Promise.all(Array.from({ length: 16 }, (_, i) =>
    c.callTool({ name: "slow", arguments: { n: 2, step_ms: 150 } })));
  const took = Date.now() - t0;
  check("16 calls run at once (not one after another)",
    many.every((x) => !x.isError && x.structuredContent.done === 2) && took < 16 * 300 / 2,
    `took ${took} ms`);

  // reloads: a log notification, and list_changed when the tools change
  const logs = [];
  let changed = 0;
  c.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(n.params));
  c.setNotificationHandler(ToolListChangedNotificationSchema, () => { changed++; });
  await c.setLoggingLevel("info");
  fs.writeFileSync(path.join(p.policies, "60_extra.lua"),
    `local tg = require "toolgate"
     tg.tool { name = "extra", description = "added by a reload", read_only = true,
               run = function() return "extra!" end }`);
  check("a saved policy file reloads: a log notification says so",
    await until(() => logs.some((l) => /policies loaded: generation 2/.test(l.data))),
    logs);
  check("a reload that changes the tools sends tools/list_changed",
    await until(() => changed > 0), changed);
  const after = (await c.listTools()).tools.map((t) => t.name);
  check("the new tool is listed and callable", after.includes("extra") &&
    text(await c.callTool({ name: "extra", arguments: {} })) === "extra!", after);
  fs.writeFileSync(path.join(p.policies, "61_broken.lua"), "this is not lua");
  check("a policy error is a log notification at level error",
    await until(() => logs.some((l) => l.level === "error" && /61_broken.lua/.test(l.data))),
    logs);
  const broken = logs.length;
  fs.unlinkSync(path.join(p.policies, "61_broken.lua"));
  check("removing the broken file reloads",
    await until(() => logs.slice(broken).some((l) => /policies loaded/.test(l.data))));

  // serve is the long-running instance: `toolgate reload` and SIGHUP reach it
  const seen = logs.length;
  const reload = spawnSync(TOOLGATE, ["reload", "--socket", p.socket], { encoding: "utf8" });
  check("toolgate reload reaches the running serve", reload.status === 0 &&
    /reloaded: generation/.test(reload.stdout), reload.stdout + reload.stderr);
  check("... and the client hears of it",
    await until(() => logs.slice(seen).some((l) => /\(control\)/.test(l.data))), logs.slice(seen));
  process.kill(a.pid, "SIGHUP");
  check("SIGHUP reloads it too",
    await until(() => logs.slice(seen).some((l) => /\(signal\)/.test(l.data))), logs.slice(seen));
  await c.close();

  // ---- a client with elicitation ----
  const answers = [];
  const b = await sdkClient(p, { capabilities: { elicitation: {} }, name: "eliciting" });
  b.client.setRequestHandler(ElicitRequestSchema, async (req) => {
    answers.push(req.params);
    const next = queue.shift();
    return next;
  });
  const queue = [
    { action: "accept", content: { decision: "approve" } },
    { action: "decline" },
    { action: "accept", content: { decision: "reject", guidance: "use a shorter note" } },
    { action: "accept", content: { decision: "always_args" } },
  ];
  r = await b.client.callTool({ name: "note", arguments: { text: "hello" } });
  check("an ask becomes elicitation/create; accept runs the call",
    !r.isError && r.structuredContent?.noted === "hello" && answers.length === 1, r);
  check("the question names the tool, the args and the rule's prompt",
    /note/.test(answers[0].message) && /hello/.test(answers[0].message) &&
    /keep the note 'hello'\?/.test(answers[0].message) &&
    answers[0].requestedSchema?.properties?.decision?.enum?.includes("approve"), answers[0]);
  r = await b.client.callTool({ name: "note", arguments: { text: "hi" } });
  check("decline rejects the call; the agent reads that it did not run",
    r.isError && /did not run/.test(text(r)) && /rejected/.test(text(r)) &&
    outcome(r)?.status === "rejected", text(r));
  r = await b.client.callTool({ name: "note", arguments: { text: "hey" } });
  check("a rejection carries the user's guidance",
    r.isError && /use a shorter note/.test(text(r)), text(r));
  r = await b.client.callTool({ name: "note", arguments: { text: "again" } });
  const asked = answers.length;
  const r2 = await b.client.callTool({ name: "note", arguments: { text: "again" } });
  check("approve-always for these args: the same call is not asked again",
    !r.isError && !r2.isError && answers.length === asked, { asked, now: answers.length });

  // approve-always for args holding credentials: the database keeps their
  // keyed digest and a masked copy, never the credentials (one of each
  // shape the audit masks); checked in the file, its WAL (serve holds it
  // open) and `toolgate approvals list --json`
  const SECRETS = ["AKIAQWERTYUIOPASDF12", "ghp_a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8",
    "github_pat_11ABCDEFG0123456789", "hIdDeNtOkEn.12345", "MIIEhiddenpemBODYxyz"];
  const secretNote = "aws=AKIAQWERTYUIOPASDF12 gh=ghp_a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8 " +
    "pat=github_pat_11ABCDEFG0123456789_abcdefghijklmnop auth=Bearer hIdDeNtOkEn.12345 " +
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEhiddenpemBODYxyz\n-----END RSA PRIVATE KEY-----";
  queue.push({ action: "accept", content: { decision: "always_args" } });
  const askedBefore = answers.length;
  r = await b.client.callTool({ name: "note", arguments: { text: secretNote } });
  const db = path.join(p.dir, "toolgate.db"); // beside its toolgate.lua
  const listed = () => spawnSync(TOOLGATE, ["approvals", "list", "--json", "--db", db],
    { encoding: "utf8" }).stdout;
  await until(() => /REDACTED:aws-access-key/.test(listed()));
  const r3 = await b.client.callTool({ name: "note", arguments: { text: secretNote } });
  check("always_args on args with credentials: stored, and the same call is not asked again",
    !r.isError && !r3.isError && answers.length === askedBefore + 1,
    { r, r3, asked: answers.length - askedBefore });
  const list = listed();
  check("approvals list --json shows those args masked, no credential in clear",
    /\[REDACTED:aws-access-key\]/.test(list) && /Bearer \[REDACTED\]/.test(list) &&
    !SECRETS.some((s) => list.includes(s)), list);
  const held = [db, db + "-wal"].filter((f) => fs.existsSync(f))
    .map((f) => [f, fs.readFileSync(f).toString("latin1")]);
  check("neither the database nor its WAL holds any of those credentials",
    held.length === 2 && fs.statSync(db + "-wal").size > 0 &&
    !held.some(([, t]) => SECRETS.some((s) => t.includes(s))),
    held.map(([f, t]) => [f, t.length, SECRETS.filter((s) => t.includes(s))]));
  check("the database and its WAL are private (0600)",
    [db, db + "-wal", db + "-shm"].every((f) => (fs.statSync(f).mode & 0o777) === 0o600),
    [db, db + "-wal", db + "-shm"].map((f) => (fs.statSync(f).mode & 0o777).toString(8)));

  // cancelling while the question is open withdraws it
  const ac2 = new AbortController();
  let heldQuestion = null;
  b.client.setRequestHandler(ElicitRequestSchema, (req) => new Promise((resolve) => {
    heldQuestion = resolve;
    setTimeout(() => ac2.abort("changed my mind"), 50);
  }));
  const cancelled = await b.client.callTool({ name: "note", arguments: { text: "later" } },
    undefined, { signal: ac2.signal }).then(() => "answered", () => "rejected");
  check("a call cancelled while its question is open ends", cancelled === "rejected");
  check("toolgate withdraws its open question (notifications/cancelled)",
    await until(() => b.seen.some((m) => m.method === "notifications/cancelled")),
    b.seen.filter((m) => m.method).map((m) => m.method));
  if (heldQuestion) heldQuestion({ action: "accept", content: { decision: "approve" } });
  await sleep(200);
  check("the late answer to a withdrawn question changes nothing",
    !/later.*ok/.test(readLog(p)) && b.errors.length === 0, b.errors);
  await b.client.close();
  const clean = await b.stderrClean();
  check("toolgate exits without a crash or sanitizer report", clean === true, clean);
});
