---@meta toolgate
-- LuaLS (lua-language-server) definitions of the POLICY side of
-- `require "toolgate"`: the API a file in policies/ gets inside its
-- generation's sandboxed lua_State. Not loaded at run time; lua/README.md
-- ("Editor support") says how to point the language server here. The host
-- side has its own definitions in lua/types/host/.
-- spec/lua/types_spec.lua checks that every function and field tg and ctx
-- have is named here, and nothing more.

---@class tg
---@field null tg.null JSON null
---@field generation integer the number of the generation this file loads into
---@field version string toolgate's version
local tg = {}

---JSON null (`tg.null`).
---@class tg.null

---@alias tg.json nil|boolean|number|string|table|tg.null

---What rules and hooks are given (a hook may change args in place).
---@class tg.call
---@field id string
---@field tool string
---@field args table
---@field session string
---@field turn integer
---@field attempt integer
---@field metadata? table
---@field dry_run? boolean true when rt:explain / `toolgate explain` asks
---@field network boolean toolgate.lua marks the tool as reaching the network (servers.NAME.network); raises when it does not load

---A verdict, made by tg.allow, tg.deny or tg.ask.
---@class tg.verdict

---What a hook returns, made by tg.abort, tg.args or tg.result.
---@class tg.hook_answer

---@class tg.error
---@field phase string
---@field code string
---@field message string
---@field suggestion? string
---@field retryable boolean

---What an after_tool hook is given besides the call.
---@class tg.res
---@field status "ok"|"error"|"denied"|"rejected"|"cancelled"|"timeout"
---@field result? tg.json
---@field error? tg.error
---@field attempts integer
---@field truncated boolean

---@class tg.rule_spec
---@field name string unique among the rules
---@field check fun(call: tg.call): tg.verdict? return tg.allow(), tg.deny(reason), tg.ask(prompt) or nothing
---@field priority? integer lower runs first (1000)
---@field tools? string|string[] only for these tools
---@field fail? "closed"|"open" what a raise means ("closed": the call fails)

---Registers a rule (only while the file loads).
---@param spec tg.rule_spec
function tg.rule(spec) end

---Registers a hook run before the tool ("*": every tool; they run first).
---@param tools string|string[]
---@param fn fun(call: tg.call): tg.hook_answer?
function tg.before_tool(tools, fn) end

---Registers a hook run after the tool, in reverse registration order.
---@param tools string|string[]
---@param fn fun(call: tg.call, res: tg.res): tg.hook_answer?
function tg.after_tool(tools, fn) end

---@class tg.listed_tool
---@field name string
---@field description? string
---@field title? string
---@field annotations? table
---@field inputSchema? table
---@field server? string the upstream MCP server, for its tools

---Registers a hook run when a front (toolgate serve) makes its tool list:
---it gets the list and returns the tools to show — fewer, reordered,
---re-described (description, title, annotations); never more.
---@param fn fun(tools: tg.listed_tool[]): tg.listed_tool[]
function tg.list_tools(fn) end

---@class tg.retry
---@field attempts? integer 1..100 (1: no retry)
---@field initial_ms? integer (200)
---@field max_ms? integer (10000)
---@field multiplier? number 1..100 (2)
---@field jitter? number 0..1 (0)
---@field retryable? fun(err: tg.error): boolean whether an error is worth another attempt

---@class tg.tool_spec
---@field name string
---@field run fun(args: table, ctx: tg.ctx): any, any runs as a coroutine; return the result, or nil, "message" / nil, {code=, message=, retryable=}
---@field description? string
---@field schema? table a JSON Schema for args
---@field read_only? boolean
---@field timeout_ms? integer
---@field max_result_bytes? integer
---@field retry? tg.retry

---Registers a Lua tool (only while the file loads).
---@param spec tg.tool_spec
function tg.tool(spec) end

---@class tg.event
---@field seq integer
---@field type string
---@field call_id? string
---@field ts_ms number
---@field ts number
---@field [string] any

---Registers an event handler: every event, or one type.
---@param type_or_fn string|fun(event: tg.event)
---@param fn? fun(event: tg.event)
function tg.on_event(type_or_fn, fn) end

---@class tg.file_change
---@field path string
---@field type "created"|"modified"|"deleted"|"renamed"
---@field old_path? string
---@field root string
---@field size integer
---@field mtime? number
---@field tool string
---@field call_id string

---Registers a handler for changes the file tools make under glob.
---@param glob string
---@param fn fun(change: tg.file_change)
function tg.on_file_change(glob, fn) end

---The last n file changes (default: all kept), oldest first.
---@param n? integer
---@return tg.file_change[]
function tg.recent_changes(n) end

---Registers the policies' redactor (once, while the file loads): it sees
---every string about to leave the runtime — events, audit rows, stored
---messages and memories, exports — after the built-in masks, and returns
---it masked (or nil to keep it). If it raises, the whole string is masked.
---@param fn fun(s: string): string?
function tg.redact(fn) end

---What is remembered: tg.memory.record and tg.memory.recall (README
---"Storage": memory). nil, err, "ENOTSUP" when storage is off.
tg.memory = {}

---@class tg.memory_item
---@field id integer
---@field kind string
---@field content string
---@field metadata any
---@field scope "session"|"project"
---@field session string?
---@field project string?
---@field created integer
---@field score number higher is better

---Remembers something for this session (scope "session", the default) or
---for every session of this project (scope "project"); returns its id.
---@param m {kind: string, content: string, metadata?: any, scope?: "session"|"project", session?: string, project?: string}
---@return integer? id
---@return string? err
---@return string? code
function tg.memory.record(m) end

---The memories most relevant to query (its words), best first.
---@param query string
---@param opts? {scope?: "session"|"project", session?: string, project?: string, limit?: integer, min_score?: number, max_tokens?: integer}
---@return tg.memory_item[]? memories
---@return string? err
---@return string? code
function tg.memory.recall(query, opts) end

---@return tg.verdict
function tg.allow() end

---@param reason? string
---@return tg.verdict
function tg.deny(reason) end

---@param prompt? string
---@return tg.verdict
function tg.ask(prompt) end

---Stops the call (a pre-hook: denied; a post-hook: the result is withheld).
---@param reason? string
---@return tg.hook_answer
function tg.abort(reason) end

---Replaces the call's args (and, optionally, the tool it calls).
---@param new_args table
---@param new_tool? string
---@return tg.hook_answer
function tg.args(new_args, new_tool) end

---Answers with this value (a pre-hook: the tool does not run).
---@param value tg.json
---@return tg.hook_answer
function tg.result(value) end

---Marks a table as a JSON array.
---@generic T: table
---@param t? T
---@return T
function tg.array(t) end

---Marks a table as a JSON object ({} is one already).
---@generic T: table
---@param t? T
---@return T
function tg.object(t) end

---@param v tg.json
---@return string
function tg.json_encode(v) end

---@param s string
---@return tg.json? value
---@return string? err
function tg.json_decode(s) end

---A file a patch touches, as apply_patch's own parser reads it.
---@class tg.patch_file
---@field op "modify"|"create"|"delete"|"rename"
---@field path string the file the section leaves (for a delete: the one it removes)
---@field from? string the old name of a rename
---@field mode? integer git's new mode, when given (0100644, 0100755)

---The files a unified diff touches, from apply_patch's own parser: what
---the tool will read, create, delete and rename. nil, why when the tool
---would refuse the patch (it then touches nothing).
---@param text string
---@return tg.patch_file[]? files
---@return string? err
function tg.patch_files(text) end

---Where path leads when a program opens or creates it, as the kernel
---walks it from cwd (default: the first workspace root, else the process's cwd): symlinks followed (a dangling one to
---where a create lands), `..` applied to the real parent. nil, why for a
---symlink loop, a name below a file, a /proc/self link.
---@param path string
---@param cwd? string an absolute folder
---@return string? path absolute
---@return string? err
function tg.resolve_path(path, cwd) end

-- ---- a session's taint -----------------------------------------------------

---A sensitive session: what tg.session_taint returns.
---@class tg.taint
---@field level integer 1 to 100
---@field reason string why, as tg.taint was told (masked)
---@field call? string the id of the call that made the session sensitive
---@field tool? string that call's tool
---@field at integer when, ms since the epoch

---Marks a session sensitive (kept with the session: in the database, shared
---by hook processes, a resident instance and a restart; in memory without
---one). A taint only rises: a level not above the one it has keeps the
---first cause. Given a call, its session, and the call's id and tool are
---kept as the cause. Raises for a bad argument.
---@param session string|tg.call a session id, or the call that caused it
---@param level integer 1 to 100
---@param reason string
---@return true? ok
---@return string? err
---@return string? code "EINVAL"|"ENOMEM"|"EIO"
function tg.taint(session, level, reason) end

---The session's taint, or nil when it is clean. Raises when it cannot be
---read (the rule fails: fail closed).
---@param session string|tg.call a session id, or a call (its session)
---@return tg.taint?
function tg.session_taint(session) end

-- ---- the chat side: turns, layers, routing, budgets, notifications ------

---What a chat layer is given (a table of its own for each layer).
---@class tg.chat_ctx
---@field session string
---@field turn integer the session's turn (rises once per user turn)
---@field model? string the model the chat goes to
---@field project? string
---@field request? table what the host passed as the chat's request
---@field usage? tg.usage after_chat: what the model call cost

---@class tg.usage
---@field model? string
---@field input_tokens integer
---@field output_tokens integer
---@field cost number

---Registers a layer run before each model call (only while the file loads).
---What it returns is ignored; one that raises or overruns is logged (a
---layer_error event) and skipped.
---@param fn fun(ctx: tg.chat_ctx)
function tg.before_chat(fn) end

---Registers a layer run after each model call, with ok and the error text.
---@param fn fun(ctx: tg.chat_ctx, ok: boolean, err?: string)
function tg.after_chat(fn) end

---The decision a routing hook sees; it may change selected_model and
---reason (other keys are read-only facts; a key it does not have is an
---error).
---@class tg.route_decision
---@field requested_model? string
---@field selected_model string
---@field reason string
---@field task_weight? string
---@field context table
---@field session string

---Registers a routing hook (only while the file loads): run in
---registration order after the routing table, before the fallback.
---@param fn fun(decision: tg.route_decision): tg.route_decision?
function tg.route_model(fn) end

---@class tg.budget_thresholds
---@field info? number fraction of the limit (0.50)
---@field warning? number (0.75)
---@field critical? number (0.90)
---@field exceeded? number (1.00)

---@class tg.budget_alert
---@field budget string
---@field level "info"|"warning"|"critical"|"exceeded"
---@field threshold number
---@field spent number
---@field limit number
---@field unit "cost"|"tokens"
---@field percent number
---@field period "session"|"day"|"week"|"month"|"total"
---@field period_start? integer ms since the epoch
---@field resets_at? integer ms since the epoch
---@field session? string
---@field message string

---@class tg.budget_spec
---@field name string unique among the budgets
---@field limit number in the currency usage is counted in, or tokens (unit "tokens")
---@field unit? "cost"|"tokens" what is summed: the records' cost (default), or their input + output tokens
---@field period "session"|"day"|"week"|"month"|"total" calendar periods roll in local time
---@field scope? {session?: string, project?: string, model?: string} which usage counts (default: all)
---@field thresholds? tg.budget_thresholds the levels to tell (the ones given replace the defaults)
---@field on_alert? fun(alert: tg.budget_alert) told once per level per period
---@field notify? boolean send a notification per alert (true)

---Declares a budget (only while the file loads).
---@param spec tg.budget_spec
function tg.budget(spec) end

---@class tg.budget_status
---@field name string
---@field spent number
---@field limit number
---@field percent number
---@field level "ok"|"info"|"warning"|"critical"|"exceeded"
---@field period string
---@field period_start? integer
---@field resets_at? integer
---@field session? string

---A budget's status now (session: for "session" budgets; default: the
---runtime's). Raises for an unknown name.
---@param name string
---@param session? string
---@return tg.budget_status
function tg.budget_status(name, session) end

---Shows a notification to the user; returns its id.
---@param level "info"|"success"|"warning"|"error"
---@param title string
---@param message? string
---@param opts? {duration_ms?: integer, action?: {label: string, command?: string}}
---@return integer id
function tg.notify(level, title, message, opts) end

---What a Lua tool's run gets besides its args.
---@class tg.ctx
---@field call_id string
---@field tool string
---@field attempt integer
---@field session? string
local ctx = {}

---Yields to the loop for ms milliseconds; other calls go on.
---@param ms number
---@return boolean
function ctx.sleep(ms) end

---@param current number|string
---@param total? number
---@param message? string
function ctx.progress(current, total, message) end

---@param v tg.json
function ctx.partial(v) end

---@return boolean
function ctx.cancelled() end

---Calls another tool through the whole chain and waits for its outcome.
---@param tool string
---@param args? table
---@return table? outcome
---@return string? err
function ctx.call(tool, args) end

---Runs a shell command (through the chain as an exec call unless the host
---trusts the policies) and waits for it.
---@param command string|{command: string, cwd?: string, env?: table<string, string>, stdin?: string, timeout_ms?: integer}
---@return table? result exec's result table
---@return string? err
function ctx.exec(command) end

return tg
