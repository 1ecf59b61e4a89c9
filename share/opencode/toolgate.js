// toolgate.js — toolgate's plugin for OpenCode: every tool call OpenCode's
// agent makes is judged by toolgate's policies before it runs, and its
// result is shown to toolgate's post-hooks before the model reads it.
//
// OpenCode runs no hook commands; a plugin is its extension point
// (https://opencode.ai/docs/plugins/): a module in .opencode/plugins/ or
// ~/.config/opencode/plugins/ whose "tool.execute.before" may throw to
// stop a tool (the model reads the error) or change output.args, and
// whose "tool.execute.after" may change output.output, the text the model
// reads. `toolgate hook install opencode` writes this file there with
// COMMAND filled in: the same fail-closed line it writes into the other
// agents' settings (`/bin/sh -c '...' toolgate-hook /abs/toolgate hook
// opencode --policies DIR`). For each event the plugin runs that line
// with one JSON event on stdin (the shape of Claude Code's hook events,
// spec/fixtures/hooks/opencode/README.md) and reads its answer:
//
//   exit 0, stdout empty           nothing to say
//   exit 0, stdout a JSON object   {"decision": "deny"|"allow"|"block",
//                                   "reason", "args", "output", "context"}
//   anything else                  the hook failed: a tool call is blocked
//                                  and a result withheld (fail closed) —
//                                  a missing program, a crash, exit 2, a
//                                  timeout, an answer that is not JSON
//
// A prompt, a session's start and an idle session are told to toolgate
// for its records; a failure there is reported, never a stopped agent.
import { spawn } from "node:child_process"

const COMMAND = null // written by `toolgate hook install opencode`
const TIMEOUT_MS = 30000 // written by `toolgate hook install opencode`
const MAX_OUTPUT = 16 * 1024 * 1024

// Runs the line with event on stdin: {answer} (an object, {} for nothing)
// or {failed: why}.
function runHook(command, event, cwd, timeoutMs) {
  return new Promise((resolve) => {
    if (typeof command !== "string" || command === "") {
      resolve({ failed: "the plugin names no toolgate command (run toolgate hook install opencode)" })
      return
    }
    let child
    try {
      child = spawn("/bin/sh", ["-c", command], { cwd, stdio: ["pipe", "pipe", "pipe"], detached: true })
    } catch (e) {
      resolve({ failed: "toolgate did not start: " + (e && e.message) })
      return
    }
    let out = "", err = "", done = false, big = false
    const finish = (r) => {
      if (done) return
      done = true
      clearTimeout(timer)
      resolve(r)
    }
    const timer = setTimeout(() => {
      try { process.kill(-child.pid, "SIGKILL") } catch (e) { try { child.kill("SIGKILL") } catch (e2) {} }
      finish({ failed: "toolgate did not answer within " + timeoutMs + " ms" })
    }, timeoutMs)
    child.stdout.on("data", (d) => { if (out.length < MAX_OUTPUT) out += d; else big = true })
    child.stderr.on("data", (d) => { if (err.length < 65536) err += d })
    child.on("error", (e) => finish({ failed: "toolgate did not start: " + e.message }))
    child.on("close", (code, signal) => {
      const said = err.trim()
      if (code !== 0) {
        finish({ failed: said || ("the hook ended with " + (signal ? "signal " + signal : "exit " + code)) })
        return
      }
      if (big) return finish({ failed: "toolgate's answer is too long" })
      const text = out.trim()
      if (text === "") return finish({ answer: {} })
      let a
      try { a = JSON.parse(text) } catch (e) { return finish({ failed: "toolgate's answer is not JSON" }) }
      if (a === null || typeof a !== "object" || Array.isArray(a)) {
        return finish({ failed: "toolgate's answer is not a JSON object" })
      }
      finish({ answer: a })
    })
    child.stdin.on("error", () => {}) // a hook that exits before reading
    child.stdin.end(JSON.stringify(event))
  })
}

// Every event says it is OpenCode's (toolgate_agent): its event names
// are Claude Code's, so `toolgate explain --event` tells them apart by it.
function toolEvent(name, input, args, directory) {
  return {
    hook_event_name: name,
    toolgate_agent: "opencode",
    session_id: input.sessionID,
    cwd: directory,
    tool_name: input.tool,
    tool_input: args,
    tool_use_id: input.callID,
  }
}

// The plugin, for a command and a time limit. Only ToolgatePlugin is
// exported: OpenCode takes every exported function for a plugin.
function makeToolgatePlugin(command, timeoutMs) {
  return async ({ directory }) => {
    const ask = (event) => runHook(command, event, directory, timeoutMs)
    const tell = async (event) => {
      const r = await ask(event)
      if (r.failed) console.error("toolgate: " + event.hook_event_name + " not recorded: " + r.failed)
    }
    return {
      "tool.execute.before": async (input, output) => {
        const r = await ask(toolEvent("PreToolUse", input, output.args, directory))
        if (r.failed) throw new Error("toolgate could not judge this call, so the tool is blocked: " + r.failed)
        const a = r.answer
        if (a.decision === "deny") throw new Error(a.reason || "denied by toolgate")
        if (a.decision !== undefined && a.decision !== "allow") {
          throw new Error("toolgate's answer has an unknown decision, so the tool is blocked")
        }
        if (a.args !== undefined) {
          if (a.args === null || typeof a.args !== "object" || Array.isArray(a.args)) {
            throw new Error("toolgate's rewrite is not an object, so the tool is blocked")
          }
          for (const k of Object.keys(output.args)) delete output.args[k]
          Object.assign(output.args, a.args)
        }
      },
      "tool.execute.after": async (input, output) => {
        const r = await ask({
          ...toolEvent("PostToolUse", input, input.args, directory),
          tool_response: { title: output.title, output: output.output, metadata: output.metadata },
        })
        if (r.failed) {
          output.output = "toolgate could not check this tool's result, so it is withheld: " + r.failed
          return
        }
        const a = r.answer
        if (a.decision === "block") {
          output.output = a.reason || "toolgate withheld this tool's result"
          return
        }
        if (typeof a.output === "string") output.output = a.output // replaced by the post-hooks
        if (typeof a.context === "string" && a.context !== "") {
          output.output = (typeof output.output === "string" ? output.output : "") + "\n\n" + a.context
        }
      },
      "chat.message": async (input, output) => {
        const parts = Array.isArray(output && output.parts) ? output.parts : []
        const prompt = parts.filter((p) => p && p.type === "text" && typeof p.text === "string")
          .map((p) => p.text).join("\n")
        await tell({ hook_event_name: "UserPromptSubmit", toolgate_agent: "opencode", session_id: input.sessionID, cwd: directory, prompt })
      },
      event: async ({ event }) => {
        const props = (event && event.properties) || {}
        const sid = props.sessionID || (props.info && props.info.id)
        if (typeof sid !== "string") return
        if (event.type === "session.created") {
          await tell({ hook_event_name: "SessionStart", toolgate_agent: "opencode", session_id: sid, cwd: directory })
        } else if (event.type === "session.idle") {
          await tell({ hook_event_name: "Stop", toolgate_agent: "opencode", session_id: sid, cwd: directory })
        }
      },
    }
  }
}

export const ToolgatePlugin = makeToolgatePlugin(COMMAND, TIMEOUT_MS)
