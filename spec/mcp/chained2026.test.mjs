// chained2026.test.mjs — an upstream of the 2026-07-28 era that answers a
// tool call input_required (toolgate in front of another toolgate, whose
// rule asks), with a client of that era too (the v2 SDK): the client can
// be asked only through its own call's input_required result, so the
// outer toolgate parks the call and puts the inner one's question there
// (under a key of its own: the inner one's is "approval", which only the
// outer toolgate's own question may use); the client's answer goes back
// to the inner toolgate with its requestState, and the call runs. The
// inner toolgates run in the outer one's folder, beside its toolgate.lua:
// they do not read it (it would make each start another, without end).
import { run, project, v2Client, readLog, until, TOOLGATE } from "./lib.mjs";

await run("chained2026", async (check) => {
  const inner = project();
  const outer = project(`return {
  policies = "policies",
  servers = {
    inner = {
      command = ${JSON.stringify(TOOLGATE)},
      -- no --socket: the two outer toolgates each start an inner one on
      -- the same folder, and a socket named outright is one process's
      args = { "serve", "--policies", ${JSON.stringify(inner.policies)}, "--log-level", "debug" },
    },
  },
}`);
  const questions = [];
  const answers = [];
  const c = await v2Client(outer, { capabilities: { elicitation: {} } });
  c.setRequestHandler("elicitation/create", async (req) => {
    questions.push(req.params.message);
    return answers.shift() || { action: "accept", content: { decision: "approve" } };
  });
  check("the outer toolgate speaks 2026-07-28 to the inner one",
    await until(() => /upstream inner ready \(2026-07-28\)/.test(readLog(outer)), 60000),
    readLog(outer).slice(-800));

  let r = await c.callTool({ name: "inner__note", arguments: { text: "asked twice" } });
  check("the inner toolgate's ask reaches a 2026 client through its call, and the call runs",
    !r.isError && r.structuredContent?.noted === "asked twice", r);
  check("the user was asked by the outer toolgate, then for the inner one",
    questions.length === 2 && /inner__note/.test(questions[0]) &&
    /^\[inner\] toolgate: may the agent run/.test(questions[1]), questions);

  // by hand: the inner question's key is the outer toolgate's, not "approval"
  const m = await v2Client(outer, { capabilities: { elicitation: {} },
    inputRequired: { autoFulfill: false } });
  check("the second client's toolgate lists the inner tools",
    await until(async () => (await m.listTools()).tools.some((t) => t.name === "inner__note"),
      60000, 200));
  const call = { name: "inner__note", arguments: { text: "by hand" } };
  let ir = await m.callTool(call, { allowInputRequired: true });
  check("by hand: first the outer toolgate's own question",
    ir.resultType === "input_required" && Object.keys(ir.inputRequests || {}).join() === "approval", ir);
  ir = await m.callTool({ ...call, requestState: ir.requestState,
    inputResponses: { approval: { action: "accept", content: { decision: "approve" } } } },
    { allowInputRequired: true });
  const keys = Object.keys(ir?.inputRequests || {});
  check("then the inner one's, under another key",
    ir?.resultType === "input_required" && keys.length === 1 && keys[0] !== "approval" &&
    /^\[inner\]/.test(ir.inputRequests[keys[0]]?.params?.message), ir);
  r = await m.callTool({ ...call, requestState: ir.requestState,
    inputResponses: { [keys[0]]: { action: "decline" } } }, { allowInputRequired: true });
  check("declined at the inner question: the call did not run",
    r.isError === true && /did not run/.test(JSON.stringify(r.content)) &&
    r._meta?.["toolgate/outcome"]?.code !== "UPSTREAM_UNAVAILABLE", r);

  // the inner toolgates run in the outer one's folder: they pass over its
  // toolgate.lua rather than start its servers (themselves) again
  check("each inner toolgate passes over the gateway's toolgate.lua",
    /upstream inner: .*is the config of the toolgate gateway that started this one as its server: not read/
      .test(readLog(outer)), readLog(outer).slice(-800));
  check("... so no toolgate starts another below it",
    !/upstream inner: .*upstream inner: started/.test(readLog(outer)), readLog(outer).slice(-800));

  await m.close();
  await c.close();
  check("the outer toolgate's log has no crash",
    !/Sanitizer|runtime error/.test(readLog(outer)), readLog(outer).slice(-600));
});
