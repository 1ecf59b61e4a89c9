// chained.test.mjs — an upstream of the 2026-07-28 era behind the gateway:
// toolgate in front of another toolgate. The outer one probes with
// server/discover and speaks the stateless era to it; calls, progress and
// cancel pass; an inner `ask` comes back as input_required, the outer one
// puts the question to the user and sends the call again with the answer.
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { run, project, sdkClient, text, outcome, readLog, until, TOOLGATE } from "./lib.mjs";

await run("chained", async (check) => {
  const inner = project();
  const outer = project(`return {
  policies = "policies",
  defaults = { progress_interval_ms = 50 },
  servers = {
    inner = {
      command = ${JSON.stringify(TOOLGATE)},
      args = { "serve", "--policies", ${JSON.stringify(inner.policies)},
               "--socket", ${JSON.stringify(inner.socket)}, "--log-level", "debug" },
      read_only = { "word_count", "slow" },
    },
  },
}`);
  const a = await sdkClient(outer, { capabilities: { elicitation: {} } });
  const c = a.client;
  const questions = [];
  const answers = [];
  c.setRequestHandler(ElicitRequestSchema, async (req) => {
    questions.push(req.params.message);
    return answers.shift() || { action: "accept", content: { decision: "approve" } };
  });

  check("the outer toolgate speaks 2026-07-28 to the inner one",
    await until(() => /upstream inner ready \(2026-07-28\)/.test(readLog(outer))), readLog(outer));
  const names = (await c.listTools()).tools.map((t) => t.name);
  check("the inner tools are listed, namespaced",
    ["inner__word_count", "inner__slow", "inner__note", "inner__exec"].every((n) => names.includes(n)),
    names);

  let r = await c.callTool({ name: "inner__word_count", arguments: { text: "one two" } });
  check("a stateless call round-trips", !r.isError && r.structuredContent?.words === 2, r);

  const progress = [];
  r = await c.callTool({ name: "inner__slow", arguments: { n: 4, step_ms: 80 } }, undefined,
    { onprogress: (x) => progress.push(x) });
  check("progress of the inner tool reaches the client", !r.isError && progress.length >= 2, progress);

  const ac = new AbortController();
  const ended = c.callTool({ name: "inner__slow", arguments: { n: 100, step_ms: 50 } }, undefined,
    { signal: ac.signal, onprogress: () => ac.abort("stop") }).then(() => "answered", () => "cancelled");
  check("a cancelled call ends", (await ended) === "cancelled");
  check("... and the inner toolgate cancels it too",
    await until(() => /upstream inner: .*the client cancelled mcp-\d+ \(slow\)/.test(readLog(outer))),
    readLog(outer).slice(-600));

  r = await c.callTool({ name: "inner__note", arguments: { text: "twice asked" } });
  check("an inner ask: input_required relayed to the user, the call sent again, it runs",
    !r.isError && r.structuredContent?.noted === "twice asked", r);
  check("the user was asked by the outer toolgate, then for the inner one",
    questions.length === 2 && /inner__note/.test(questions[0]) &&
    /^\[inner\] toolgate: may the agent run/.test(questions[1]) &&
    /twice asked/.test(questions[1]), questions);

  questions.length = 0;
  answers.push({ action: "accept", content: { decision: "approve" } },
               { action: "decline" });
  r = await c.callTool({ name: "inner__note", arguments: { text: "declined inside" } });
  check("declined at the inner question: an isError result saying it did not run",
    r.isError && /did not run/.test(text(r)) && outcome(r)?.status === "error", text(r));

  await c.close();
  const clean = await a.stderrClean();
  check("toolgate exits without a crash or sanitizer report", clean === true, clean);
  check("the inner toolgate is stopped with the outer one",
    await until(() => /upstream inner stopped/.test(readLog(outer))), readLog(outer).slice(-400));
});
