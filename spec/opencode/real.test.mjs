// real.test.mjs — toolgate's OpenCode plugin inside a real OpenCode
// (the opencode-ai package, `npm ci` in spec/opencode; skipped without
// it). OpenCode's model is a stand-in on the loopback address that speaks
// the OpenAI chat API: its first answer of a run is one tool call, its
// next one text. The plugin is installed in the project's
// .opencode/plugins/ by `toolgate hook install opencode`, so OpenCode's
// own plugin loader runs it; what the model is sent back for the tool
// call (the tool message) shows what toolgate made of it.
//
//   TOOLGATE=build/toolgate node --test spec/opencode/real.test.mjs
import { test } from "node:test"
import assert from "node:assert/strict"
import { spawnSync, spawn } from "node:child_process"
import fs from "node:fs"
import http from "node:http"
import os from "node:os"
import path from "node:path"
import { fileURLToPath } from "node:url"

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.resolve(here, "../..")
const TOOLGATE = process.env.TOOLGATE && path.resolve(process.env.TOOLGATE)

function findOpencode() {
  if (process.env.OPENCODE) return process.env.OPENCODE
  const nm = path.join(here, "node_modules")
  if (!fs.existsSync(nm)) return null
  for (const d of fs.readdirSync(nm).filter((d) => d.startsWith("opencode-"))) {
    const bin = path.join(nm, d, "bin", "opencode")
    if (fs.existsSync(bin) && spawnSync(bin, ["--version"], { timeout: 60000 }).status === 0) return bin
  }
  return null
}
const OPENCODE = findOpencode()
const skip = !OPENCODE ? "no opencode (npm ci in spec/opencode)" : !TOOLGATE ? "TOOLGATE not set" : false

// The stand-in model: answers the first request of a run with `call`
// ({name, args}), any request holding a tool result with text; keeps the
// tool messages it was sent.
function model() {
  const seen = { tool: [], requests: 0 }
  let call = null
  const srv = http.createServer((req, res) => {
    let body = ""
    req.on("data", (c) => (body += c))
    req.on("end", () => {
      if (!req.url.endsWith("/chat/completions")) { res.writeHead(404); res.end(); return }
      const j = JSON.parse(body)
      seen.requests++
      const results = (j.messages || []).filter((m) => m.role === "tool")
      res.writeHead(200, { "content-type": "text/event-stream" })
      const chunk = (delta, finish) => res.write("data: " + JSON.stringify({ id: "c", object: "chat.completion.chunk",
        created: 0, model: "m", choices: [{ index: 0, delta, finish_reason: finish || null }] }) + "\n\n")
      if (results.length || !j.tools || !call) {
        for (const m of results) seen.tool.push(typeof m.content === "string" ? m.content : JSON.stringify(m.content))
        chunk({ role: "assistant", content: "done" })
        chunk({}, "stop")
      } else {
        chunk({ role: "assistant", tool_calls: [{ index: 0, id: "call_1", type: "function",
          function: { name: call.name, arguments: JSON.stringify(call.args) } }] })
        chunk({}, "tool_calls")
      }
      res.end("data: [DONE]\n\n")
    })
  })
  return new Promise((resolve) => srv.listen(0, "127.0.0.1", () =>
    resolve({ srv, seen, port: srv.address().port, next: (c) => { call = c; seen.tool = [] } })))
}

const env = (home) => ({ ...process.env, HOME: home, XDG_CONFIG_HOME: path.join(home, ".config"),
  XDG_DATA_HOME: path.join(home, ".local/share"), XDG_STATE_HOME: path.join(home, ".local/state"),
  XDG_CACHE_HOME: path.join(home, ".cache") })

function run(cmd, args, opts) {
  return new Promise((resolve) => {
    const p = spawn(cmd, args, { ...opts, stdio: ["ignore", "pipe", "pipe"] })
    let out = "", err = ""
    p.stdout.on("data", (d) => (out += d))
    p.stderr.on("data", (d) => (err += d))
    const t = setTimeout(() => p.kill("SIGKILL"), opts.timeout)
    p.on("close", (code) => { clearTimeout(t); resolve({ code, out, err }) })
  })
}

test("OpenCode runs toolgate's plugin: deny, rewrite, withheld and masked results, removed binary", { skip, timeout: 900000 }, async () => {
  const m = await model()
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tg-opencode-real-"))
  const home = path.join(dir, "home"), proj = path.join(dir, "proj")
  fs.mkdirSync(home)
  fs.mkdirSync(path.join(proj, "policies"), { recursive: true })
  for (const f of fs.readdirSync(path.join(root, "spec/fixtures/hooks/policies"))) {
    fs.copyFileSync(path.join(root, "spec/fixtures/hooks/policies", f), path.join(proj, "policies", f))
  }
  fs.writeFileSync(path.join(proj, "README.md"), "the twin of README\n")
  spawnSync("git", ["init", "-q"], { cwd: proj }) // OpenCode's project: its worktree
  fs.writeFileSync(path.join(proj, "opencode.json"), JSON.stringify({
    $schema: "https://opencode.ai/config.json",
    provider: { stand_in: { npm: "@ai-sdk/openai-compatible", name: "stand-in",
      options: { baseURL: `http://127.0.0.1:${m.port}/v1`, apiKey: "none" },
      models: { m: { name: "m", tool_call: true } } } },
    model: "stand_in/m", permission: "allow", autoupdate: false, share: "disabled",
  }))
  // OpenCode takes its project from PWD: the shell's word for the cwd
  const st = { cwd: proj, env: { ...env(home), PWD: proj }, timeout: 120000 }
  // the install, as a user runs it: the plugin in .opencode/plugins/
  const inst = spawnSync(TOOLGATE, ["hook", "install", "opencode"], { ...st, encoding: "utf8" })
  assert.equal(inst.status, 0, inst.stdout + inst.stderr)
  const plugin = path.join(proj, ".opencode/plugins/toolgate.js")
  assert.ok(fs.existsSync(plugin))
  const opencode = async (call) => {
    m.next(call)
    const r = await run(OPENCODE, ["run", "-m", "stand_in/m", "--print-logs", "--log-level", "ERROR", "go"], { ...st, timeout: 300000 })
    assert.equal(r.code, 0, r.out + r.err)
    assert.equal(m.seen.tool.length, 1, "one tool result: " + r.out + r.err)
    return m.seen.tool[0]
  }
  try {
    // a first run installs what OpenCode fetches on its first start (its
    // plugin package, the provider's): its answer is not looked at
    m.next(null)
    await run(OPENCODE, ["run", "-m", "stand_in/m", "hello"], { ...st, timeout: 300000 })
    // denied: the model reads the rule's reason, the command never ran
    let t = await opencode({ name: "bash", args: { command: "git push --force origin main; touch ran-1", description: "push" } })
    assert.match(t, /Denied by rule 'no-force-push'/)
    assert.ok(!fs.existsSync(path.join(proj, "ran-1")))
    // rewritten: read README is steered to README.md
    t = await opencode({ name: "read", args: { filePath: path.join(proj, "README") } })
    assert.match(t, /the twin of README/)
    // after the tool: the output with a key is withheld from the model
    t = await opencode({ name: "bash", args: { command: "printf '%s\\n' '-----BEGIN PRIVATE KEY-----'", description: "key" } })
    assert.doesNotMatch(t, /BEGIN PRIVATE KEY-----$/m)
    assert.match(t, /the output holds a private key/)
    // after the tool: a post-hook's masked output is what the model reads
    t = await opencode({ name: "bash", args: { command: "printf 'key=AKIAABCDEFGH\\n'", description: "creds" } })
    assert.match(t, /key=\[redacted\]/)
    assert.doesNotMatch(t, /AKIAABCDEFGH/)
    // the binary removed: every tool call is blocked
    const text = fs.readFileSync(plugin, "utf8")
    const moved = path.join(dir, "gone-toolgate")
    fs.writeFileSync(plugin, text.split(TOOLGATE).join(moved))
    t = await opencode({ name: "bash", args: { command: "touch ran-2", description: "touch" } })
    assert.match(t, /the hook did not answer \(exit 127/)
    assert.ok(!fs.existsSync(path.join(proj, "ran-2")))
  } finally {
    m.srv.close()
    if (!process.env.KEEP) fs.rmSync(dir, { recursive: true, force: true })
  }
})
