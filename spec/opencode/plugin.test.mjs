// plugin.test.mjs — toolgate's OpenCode plugin (share/opencode/toolgate.js)
// driven as OpenCode drives it: its hooks called with OpenCode's
// (input, output) objects, the plugin file written the way `toolgate hook
// install opencode` writes it (COMMAND and TIMEOUT_MS filled in). The
// commands are small shell lines standing in for toolgate's answers and
// failures, then the real toolgate (TOOLGATE: the binary) on the hook
// fixtures' policies. spec/opencode/real.test.mjs runs the same plugin
// inside a real OpenCode.
//
//   node --test spec/opencode/plugin.test.mjs    (TOOLGATE=build/toolgate)
import { test } from "node:test"
import assert from "node:assert/strict"
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.resolve(here, "../..")
const template = fs.readFileSync(path.join(root, "share/opencode/toolgate.js"), "utf8")
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "tg-opencode-"))
let n = 0

// The plugin as an install writes it, for command (a /bin/sh line).
export function installed(command, timeoutMs) {
  const text = template
    .replace(/^const COMMAND = .*$/m, () => "const COMMAND = " + JSON.stringify(command))
    .replace(/^const TIMEOUT_MS = .*$/m, () => "const TIMEOUT_MS = " + timeoutMs)
  assert.notEqual(text, template)
  const file = path.join(tmp, "toolgate-" + n++ + ".js")
  fs.writeFileSync(file, text)
  return file
}

async function hooks(command, timeoutMs = 20000) {
  const mod = await import(pathToFileURL(installed(command, timeoutMs)).href)
  assert.deepEqual(Object.keys(mod), ["ToolgatePlugin"]) // OpenCode calls every exported function
  return mod.ToolgatePlugin({ directory: root, worktree: root, project: {}, client: {}, $: null })
}

const input = (tool) => ({ tool, sessionID: "ses_test", callID: "call_1" })

async function before(h, tool, args) {
  const output = { args: structuredClone(args) }
  await h["tool.execute.before"](input(tool), output)
  return output.args
}

async function after(h, tool, args, text) {
  const output = { title: "t", output: text, metadata: {} }
  await h["tool.execute.after"]({ ...input(tool), args }, output)
  return output.output
}

// A line that answers `answer` (printf'd) and records the event it read.
function answering(answer, seen) {
  return `cat > ${seen}; printf '%s' '${answer.replace(/'/g, "'\\''")}'`
}

test("a deny throws: the tool does not run, the model reads the reason", async () => {
  const seen = path.join(tmp, "seen-deny.json")
  const h = await hooks(answering('{"decision":"deny","reason":"no force pushes"}', seen))
  await assert.rejects(before(h, "bash", { command: "git push -f" }), /^Error: no force pushes$/)
  const ev = JSON.parse(fs.readFileSync(seen, "utf8"))
  assert.deepEqual(ev, { hook_event_name: "PreToolUse", toolgate_agent: "opencode", session_id: "ses_test", cwd: root,
    tool_name: "bash", tool_input: { command: "git push -f" }, tool_use_id: "call_1" })
})

test("an allow with args rewrites them in place; nothing leaves them", async () => {
  const seen = path.join(tmp, "seen-allow.json")
  let h = await hooks(answering('{"decision":"allow","reason":"r","args":{"command":"npm i --ignore-scripts"}}', seen))
  assert.deepEqual(await before(h, "bash", { command: "npm i", description: "d" }),
    { command: "npm i --ignore-scripts" })
  h = await hooks(answering("", seen))
  assert.deepEqual(await before(h, "bash", { command: "ls" }), { command: "ls" })
  h = await hooks(answering('{"decision":"allow","reason":"fine"}', seen))
  assert.deepEqual(await before(h, "read", { filePath: "/a" }), { filePath: "/a" })
})

test("every failure of the hook blocks the tool", async () => {
  const cases = [
    ["/nonexistent/toolgate hook opencode", /toolgate could not judge this call, so the tool is blocked/],
    ["echo 'toolgate: broken' >&2; exit 2", /blocked: toolgate: broken/],
    ["exit 1", /blocked: the hook ended with exit 1/],
    ["kill -9 $$", /blocked: the hook ended with signal SIGKILL/],
    ["echo not-json", /not JSON/],
    ["echo '[1]'", /not a JSON object/],
    ["echo '{\"decision\":\"maybe\"}'", /unknown decision/],
    ["echo '{\"decision\":\"allow\",\"args\":[1]}'", /rewrite is not an object/],
  ]
  for (const [line, why] of cases) {
    const h = await hooks(line)
    await assert.rejects(before(h, "bash", { command: "ls" }), why, line)
  }
  await assert.rejects(before(await hooks(null), "bash", { command: "ls" }), /names no toolgate command/)
})

test("a hook past its time limit blocks, and is killed", async () => {
  const pidfile = path.join(tmp, "slow.pid")
  const h = await hooks(`echo $$ > ${pidfile}; exec sleep 60`, 3000)
  await assert.rejects(before(h, "bash", { command: "ls" }), /did not answer within 3000 ms/)
  const pid = Number(fs.readFileSync(pidfile, "utf8"))
  let alive = true
  for (let i = 0; i < 100 && alive; i++) { // killed; reaped by the next tick
    try { process.kill(pid, 0); await new Promise((r) => setTimeout(r, 50)) } catch (e) { alive = false }
  }
  assert.equal(alive, false)
})

test("after the tool: a block withholds the result, context is added", async () => {
  const seen = path.join(tmp, "seen-after.json")
  let h = await hooks(answering('{"decision":"block","reason":"it holds a private key"}', seen))
  assert.equal(await after(h, "bash", { command: "cat k" }, "-----BEGIN PRIVATE KEY-----"), "it holds a private key")
  const ev = JSON.parse(fs.readFileSync(seen, "utf8"))
  assert.equal(ev.hook_event_name, "PostToolUse")
  assert.deepEqual(ev.tool_input, { command: "cat k" })
  assert.deepEqual(ev.tool_response, { title: "t", output: "-----BEGIN PRIVATE KEY-----", metadata: {} })
  h = await hooks(answering('{"output":"key=[redacted]"}', seen))
  assert.equal(await after(h, "bash", { command: "cat k" }, "key=AKIA1234"), "key=[redacted]")
  h = await hooks(answering('{"context":"run the tests"}', seen))
  assert.equal(await after(h, "edit", {}, "Edit applied."), "Edit applied.\n\nrun the tests")
  h = await hooks("exit 3")
  assert.match(await after(h, "bash", {}, "secret"), /^toolgate could not check this tool's result, so it is withheld/)
})

test("prompts and sessions are told, and a failure there stops nothing", async () => {
  const seen = path.join(tmp, "seen-events.jsonl")
  const h = await hooks(`cat >> ${seen}; echo >> ${seen}`)
  await h["chat.message"]({ sessionID: "ses_test" }, { message: {}, parts: [{ type: "text", text: "write a test" }] })
  await h.event({ event: { type: "session.created", properties: { info: { id: "ses_test" } } } })
  await h.event({ event: { type: "session.idle", properties: { sessionID: "ses_test" } } })
  await h.event({ event: { type: "message.updated", properties: { sessionID: "ses_test" } } })
  const got = fs.readFileSync(seen, "utf8").trim().split("\n").map((l) => JSON.parse(l))
  assert.deepEqual(got.map((e) => e.hook_event_name), ["UserPromptSubmit", "SessionStart", "Stop"])
  assert.equal(got[0].prompt, "write a test")
  const broken = await hooks("exit 9")
  await broken["chat.message"]({ sessionID: "s" }, { parts: [] }) // does not throw
})

// With toolgate itself: the hook fixtures' policies answer.
const TOOLGATE = process.env.TOOLGATE
test("with toolgate: a deny, a rewrite, a removed binary", { skip: !TOOLGATE && "TOOLGATE not set" }, async () => {
  const policies = path.join(root, "spec/fixtures/hooks/policies")
  const line = `${TOOLGATE} hook opencode --policies ${policies} --no-db --no-resident`
  const h = await hooks(line)
  await assert.rejects(before(h, "bash", { command: "git push --force origin main" }),
    /Denied by rule 'no-force-push'/)
  assert.deepEqual(await before(h, "bash", { command: "npm install left-pad", description: "d" }),
    { command: "npm install left-pad --ignore-scripts", description: "d" })
  assert.deepEqual(await before(h, "bash", { command: "echo hello" }), { command: "echo hello" })
  assert.match(await after(h, "bash", { command: "cat id_rsa" }, "-----BEGIN PRIVATE KEY-----\nMII"),
    /^post-hook at .*10_agents.lua:93 failed the call, so the result is withheld: the output holds a private key; do not repeat it$/)
  // the binary gone: blocked
  const gone = await hooks(line.replace(TOOLGATE, path.join(tmp, "removed/toolgate")))
  await assert.rejects(before(gone, "bash", { command: "ls" }), /so the tool is blocked/)
})
