---@meta toolgate
-- LuaLS (lua-language-server) definitions of the HOST side of
-- `require "toolgate"`: the runtime a script or an editor plugin makes.
-- Not loaded at run time; lua/README.md ("Editor support") says how to
-- point the language server here. The policy side has its own definitions
-- in lua/types/policy/ (the same module name means another API there).
-- spec/lua/types_spec.lua checks that every method and field the module
-- has is named here, and nothing more.

---@class toolgate
---@field _VERSION string the version, "major.minor.patch" (CMakeLists.txt's project VERSION)
---@field version string the same as _VERSION
---@field null toolgate.null JSON null
---@field event_types string the event types, space-separated
---@field error_codes table<string, string> each code the runtime emits -> its line of documentation
local toolgate = {}

---JSON null (`toolgate.null`): a light userdata, the same value everywhere.
---@class toolgate.null

---@alias toolgate.verdict "ask"|"allow"|"deny"
---@alias toolgate.answer "approve"|"allow"|"always"|"reject"|"deny"
---@alias toolgate.status "ok"|"error"|"denied"|"rejected"|"cancelled"|"timeout"
---@alias toolgate.phase "NONE"|"AUTHORIZE"|"PRE_HOOK"|"VALIDATE"|"APPROVE"|"EXECUTE"|"TIMEOUT"|"CANCEL"|"UPSTREAM"|"POLICY"|"INTERNAL"
---@alias toolgate.json nil|boolean|number|string|table|toolgate.null

---@class toolgate.options
---@field policies? string folder of *.lua policy files
---@field session? string default session id of calls ("default")
---@field default_verdict? toolgate.verdict when no rule answers for a tool that is not read-only ("ask")
---@field timeout_ms? integer default per-attempt timeout (60000)
---@field approval_timeout_ms? integer an unanswered ask is rejected after this (300000)
---@field progress_interval_ms? integer heartbeat of `progress` events while a tool runs (1000)
---@field seed? integer retry jitter RNG seed (0: from the clock)
---@field max_args_bytes? integer bigger args JSON is refused (16 MiB)
---@field approve? toolgate.approver|"allow"|"deny" the approver; default: none, an ask is rejected
---@field watch? boolean reload when a policy file is saved, added or deleted
---@field workspace? string|string[] roots the file tools are confined to (default: the cwd)
---@field file_max_bytes? integer largest file the file tools read or write (16 MiB)
---@field builtin_tools? boolean register exec and the file tools (true)
---@field exec_output_cap? integer bytes of stdout and of stderr exec keeps (1 MiB)
---@field kill_grace_ms? integer exec stopped: SIGTERM, then SIGKILL this much later (2000)
---@field trusted_policies? boolean policies get the full standard library (false)
---@field policy_time_limit_ms? integer time per call into policy code (500)
---@field policy_memory_cap? integer bytes a policy generation may hold (64 MiB)
---@field models? toolgate.models the routing table and fallbacks (rt:set_models)

---Makes a runtime. Raises on an option of the wrong type or an unknown
---option name; returns nil, "file:line: message", "EINVAL" when a policy
---file fails to load.
---@param opts? toolgate.options
---@return toolgate.runtime? rt
---@return string? err
---@return string? code
function toolgate.new(opts) end

---@class toolgate.schema_error
---@field path string the JSON path of the failing value ("$.items[2]")
---@field keyword string the keyword that failed ("pattern")
---@field message string

---A compiled JSON Schema (draft 2020-12 by default, draft-07 by `$schema`).
---@class toolgate.validator
local validator = {}

---@param value toolgate.json
---@return boolean ok
---@return toolgate.schema_error[]? errors
function validator:validate(value) end

---Compiles a JSON Schema the way the chain does (raises with the reason on
---a bad schema).
---@param schema table|boolean|string a table, a boolean or JSON text
---@return toolgate.validator
function toolgate.schema(schema) end

---A file a patch touches, as apply_patch's own parser reads it.
---@class toolgate.patch_file
---@field op "modify"|"create"|"delete"|"rename"
---@field path string the file the section leaves (for a delete: the one it removes)
---@field from? string the old name of a rename
---@field mode? integer git's new mode, when given (0100644, 0100755)

---The files a unified diff touches, from apply_patch's own parser: what
---the tool will read, create, delete and rename. nil, why when the tool
---would refuse the patch (it then touches nothing).
---@param text string
---@return toolgate.patch_file[]? files
---@return string? err
function toolgate.patch_files(text) end

---Where path leads when a program opens or creates it, as the kernel
---walks it from cwd (default: the process's cwd): symlinks followed (a dangling one to
---where a create lands), `..` applied to the real parent. nil, why for a
---symlink loop, a name below a file, a /proc/self link.
---@param path string
---@param cwd? string an absolute folder
---@return string? path absolute
---@return string? err
function toolgate.resolve_path(path, cwd) end

---@class toolgate.call_options
---@field id? string the call id (default "call-N")
---@field session? string
---@field turn? integer
---@field metadata? table a JSON object
---@field on_done? fun(outcome: toolgate.outcome)
---@field on_progress? fun(event: toolgate.event)

---@class toolgate.explain_options
---@field id? string
---@field session? string
---@field turn? integer
---@field metadata? table

---@class toolgate.error
---@field phase toolgate.phase
---@field code string one of toolgate.error_codes, or a tool's own
---@field message string
---@field suggestion? string
---@field retryable boolean

---@class toolgate.outcome
---@field id string
---@field tool string
---@field status toolgate.status
---@field result? toolgate.json absent when the call produced none
---@field error? toolgate.error absent on success
---@field decision { verdict: "allow"|"deny"|"ask"|"none", rule?: string }
---@field attempts integer
---@field duration_ms number
---@field truncated boolean

---@class toolgate.event
---@field seq integer strictly increasing per runtime
---@field type string one of toolgate.event_types
---@field call_id? string
---@field ts_ms number monotonic clock, for durations
---@field ts number wall clock, milliseconds since the Unix epoch
---@field [string] any the event's own fields

---@class toolgate.approval_request
---@field approval_id integer pass to rt:answer
---@field call_id string
---@field tool string
---@field args table
---@field session string
---@field prompt? string the rule's ask text
---@field rule? string

---Answers now (returns an answer, optionally followed by
---{scope=, guidance=} or a guidance string), or later with rt:answer
---(returns nothing).
---@alias toolgate.approver fun(request: toolgate.approval_request): toolgate.answer?, (toolgate.answer_options|string)?

---@class toolgate.answer_options
---@field scope? "tool"|"args" what "always" covers ("tool")
---@field guidance? string

---@class toolgate.file_change
---@field path string relative to its workspace root
---@field type "created"|"modified"|"deleted"|"renamed"
---@field old_path? string renamed only
---@field root string
---@field size integer
---@field mtime? number seconds; absent when deleted
---@field tool string
---@field call_id string

---@class toolgate.retry
---@field attempts? integer 1..100 (1: no retry)
---@field initial_ms? integer first back-off (200)
---@field max_ms? integer longest back-off (10000)
---@field multiplier? number 1..100 (2)
---@field jitter? number 0..1 (0)

---@class toolgate.tool_spec
---@field name string
---@field run fun(args: table, ctx: toolgate.ctx): any, any runs as a coroutine of the host's state; return the result, or nil, "message" / nil, {code=, message=, retryable=}
---@field description? string
---@field schema? table a JSON Schema for args
---@field read_only? boolean read-only tools are allowed when no rule answers
---@field timeout_ms? integer per attempt (default: the runtime's)
---@field max_result_bytes? integer
---@field retry? toolgate.retry

---What a host tool's run gets besides its args; the same as a policy Lua
---tool's ctx.
---@class toolgate.ctx
---@field call_id string
---@field tool string
---@field attempt integer 1, 2, ... across retries
---@field session? string
local ctx = {}

---Waits ms milliseconds without blocking the loop. Returns true, or false
---when the call was cancelled or timed out meanwhile (at once once it is).
---@param ms number
---@return boolean slept
function ctx.sleep(ms) end

---Reports progress: (current, total?, message?) or just a message.
---@param current number|string
---@param total? number
---@param message? string
function ctx.progress(current, total, message) end

---Whether the call was cancelled or timed out.
---@return boolean
function ctx.cancelled() end

---Keeps v as the partial result should the attempt be stopped.
---@param v toolgate.json
function ctx.partial(v) end

---Calls another tool through the whole chain (one level deeper, at most 8)
---and waits for its outcome without blocking the loop.
---@param tool string
---@param args? table
---@return toolgate.outcome? outcome
---@return string? err when the call could not start
function ctx.call(tool, args) end

---Runs a shell command as a call of the exec tool (judged by the chain)
---and waits for it.
---@param command string|{command: string, cwd?: string, env?: table<string, string>, stdin?: string, timeout_ms?: integer}
---@return toolgate.exec_result? result
---@return string? err when the command did not run
function ctx.exec(command) end

---@class toolgate.exec_result
---@field exit_code? integer
---@field signal? string
---@field stdout string
---@field stderr string
---@field stdout_truncated boolean
---@field stderr_truncated boolean
---@field duration_ms number
---@field timed_out boolean
---@field cancelled boolean

---A running or ended call.
---@class toolgate.call
---@field id string
local call = {}

---Runs the loop until this call ends; returns its outcome.
---@return toolgate.outcome? outcome
---@return string? err the runtime was closed first
---@return string? code
function call:wait() end

---Cancels the call.
---@return true? ok
---@return string? err it already ended
---@return string? code
function call:cancel() end

---@return boolean
function call:done() end

---The outcome, nil before the end.
---@return toolgate.outcome?
function call:outcome() end

---@class toolgate.runtime
local runtime = {}

---Starts a call. args is a table or JSON text. Returns a handle, or nil,
---message, code for a request refused at once: "UNKNOWN_TOOL", "EINVAL"
---(args that cannot be JSON), "EEXIST" (an id already running).
---@param tool string
---@param args? table|string
---@param opts? toolgate.call_options
---@return toolgate.call? handle
---@return string? err
---@return string? code
function runtime:call(tool, args, opts) end

---Registers a tool written in the host's own Lua, served through the whole
---chain. Host tools live as long as the runtime. Returns true, or nil,
---message, "EEXIST" when the name is taken; raises on a bad spec.
---@param spec toolgate.tool_spec
---@return true? ok
---@return string? err
---@return string? code
function runtime:tool(spec) end

---Runs the loop until nothing is left to do; returns whether work remains.
---@return boolean
function runtime:run() end

---One non-blocking turn of the loop; returns whether work remains.
---@return boolean
function runtime:run_once() end

---The loop's backend fd, for hosts that poll it in their own loop.
---@return integer
function runtime:fd() end

---The loop's next timeout in ms (-1: none).
---@return integer
function runtime:timeout() end

---@class toolgate.attach_options
---@field schedule? fun(fn: function) defers callbacks to the host's main context (Neovim: vim.schedule)
---@field on_error? fun(err: string) where errors of callbacks go without schedule (default: stderr)

---Attaches the runtime to a luv loop (Neovim's vim.loop, luvit): a poll on
---rt:fd() and a timer re-armed from rt:timeout(); costs nothing while idle.
---@param uv table the luv module
---@param opts? toolgate.attach_options
---@return toolgate.runtime rt
function runtime:attach(uv, opts) end

---The audit records, oldest first (storage on). nil, message, code when
---storage is off ("ENOTSUP") or the database fails ("EIO").
---@param filter? {session?: string, tool?: string, status?: string, call_id?: string, since?: string|integer, after?: integer, limit?: integer}
---@return table[]? records
---@return string? err
---@return string? code
function runtime:audit(filter) end

---The remembered approvals in force (`all`: revoked and expired too).
---@param opts? {all?: boolean}
---@return table[]? approvals
---@return string? err
---@return string? code
function runtime:approvals(opts) end

---Remembers an approval ahead of time; returns its id.
---@param spec {tool: string, scope?: "tool"|"args"|"pattern", args?: table, arg?: string, glob?: string, where?: "session"|"project", session?: string, project?: string, until?: string|integer}
---@return integer? id
---@return string? err
---@return string? code
function runtime:grant(spec) end

---Revokes a remembered approval.
---@param id integer
---@return boolean? ok
---@return string? err
---@return string? code
function runtime:revoke(id) end

---Queues a model-usage record for the usage ledger.
---@param u {model: string, input_tokens?: integer, output_tokens?: integer, cost?: number, session?: string, turn?: integer, ts?: integer}
---@return boolean? ok
---@return string? err
---@return string? code
function runtime:record_usage(u) end

---Sums usage over a period ("hour", "day", "week", "month": the current
---one, local time) or a time range.
---@param f {period?: string, since?: string|integer, ["until"]?: string|integer, session?: string, model?: string}
---@return {records: integer, input_tokens: integer, output_tokens: integer, cost: number, since: integer}? totals
---@return string? err
---@return string? code
function runtime:usage(f) end

---Begins a session (a fresh id "s-..." when none is given) or resumes
---one (its end cleared, its title kept unless given); returns its id.
---@param s? {id?: string, project?: string, title?: string, started?: string|integer}
---@return string? id
---@return string? err
---@return string? code
function runtime:session(s) end

---Marks a session ended.
---@param id string
---@return boolean? ok
---@return string? err
---@return string? code "ENOENT" for an unknown session
function runtime:end_session(id) end

---Records a message of a session (begun before); returns its id.
---@param m {session: string, role: "system"|"user"|"assistant"|"tool", content?: string, tool_calls?: table, ts?: string|integer}
---@return integer? id
---@return string? err
---@return string? code
function runtime:message(m) end

---The sessions, latest first: {id, project, title, started, ended, agent, turn, messages}.
---@param opts? {limit?: integer}
---@return table[]? sessions
---@return string? err
---@return string? code
function runtime:sessions(opts) end

---Full-text search (FTS5 syntax) over messages and calls, best first:
---{kind = "message"|"call", id, session, role?, tool?, call_id?, snippet, score, ts}.
---@param query string
---@param opts? {session?: string, limit?: integer}
---@return table[]? hits
---@return string? err
---@return string? code "EINVAL" for a query FTS5 cannot parse
function runtime:search(query, opts) end

---Remembers something for a session (scope "session", default: the
---runtime's) or for every session of a project (scope "project", default:
---the runtime's project); returns its id.
---@param m {kind: string, content: string, metadata?: any, scope?: "session"|"project", session?: string, project?: string}
---@return integer? id
---@return string? err
---@return string? code
function runtime:remember(m) end

---The memories most relevant to query (taken as words), best first:
---{id, kind, content, metadata, scope, session, project, created, score}.
---@param query string
---@param opts? {scope?: "session"|"project", session?: string, project?: string, limit?: integer, min_score?: number, max_tokens?: integer}
---@return table[]? memories
---@return string? err
---@return string? code
function runtime:recall(query, opts) end

---A sensitive session: what runtime:session_taint returns.
---@class toolgate.taint
---@field level integer 1 to 100
---@field reason string why
---@field call? string the id of the call that made the session sensitive
---@field tool? string that call's tool ("host" for runtime:taint's)
---@field at integer when, ms since the epoch

---Marks a session sensitive, as a policy's tg.taint does (kept where the
---runtime keeps taints: its database, or memory when storage is off); the
---cause is the host's (tool "host", no call). A taint only rises. Raises
---for an argument of the wrong kind.
---@param session string
---@param level integer 1 to 100
---@param reason string 1 to 511 bytes, no NUL
---@return true? ok
---@return string? err
---@return string? code "EINVAL"|"ENOMEM"|"EIO"
function runtime:taint(session, level, reason) end

---The session's taint, or nil when it is clean. Raises when it cannot be
---read (nil would say clean).
---@param session string
---@return toolgate.taint?
function runtime:session_taint(session) end

---Makes a sensitive session clean again: a person's decision, as
---`toolgate approvals clear-taint`. Policies have no such function.
---@param session string
---@return true? ok
---@return string? err
---@return string? code "ENOENT" when it was clean, "EINVAL"
function runtime:untaint(session) end

---The database's path (":memory:"), or nil when storage is off.
---@return string?
function runtime:db() end

---Detaches the runtime from the host loop it was attached to.
function runtime:detach() end

---Subscribes to events: all, or one type. Returns an id for off_event.
---@param type_or_fn string|fun(event: toolgate.event)
---@param fn? fun(event: toolgate.event)
---@return integer id
function runtime:on_event(type_or_fn, fn) end

---@param id integer
function runtime:off_event(id) end

---Calls fn for each change the file tools make to a path matching glob.
---@param glob string
---@param fn fun(change: toolgate.file_change)
---@return integer id
function runtime:on_file_change(glob, fn) end

---@param id integer
function runtime:off_file_change(id) end

---The last n file changes (default: all kept, up to 256), oldest first.
---@param n? integer
---@return toolgate.file_change[]
function runtime:recent_changes(n) end

---Sets the approver.
---@param approver toolgate.approver|"allow"|"deny"
function runtime:set_approver(approver) end

---Answers a pending ask later.
---@param approval_id integer
---@param answer toolgate.answer
---@param opts? toolgate.answer_options|string
---@return true? ok
---@return string? err nothing waits under that id
---@return string? code
function runtime:answer(approval_id, answer, opts) end

---Builds a new policy generation; returns its number.
---@param dir? string
---@return integer? generation
---@return string? err "file:line: message" (the old generation stays)
---@return string? code
function runtime:reload(dir) end

---A dry run: what the chain would decide, without running the call.
---@param tool string
---@param args? table|string
---@param opts? toolgate.explain_options
---@return table? explanation
---@return string? err
---@return string? code "UNKNOWN_TOOL" or "EINVAL"
function runtime:explain(tool, args, opts) end

---Runs the policy unit tests (*_test.lua files) of dir, as `toolgate test`
---does: each case through the real chain with the tool replaced by its
---fixture. Returns the report {passed, failed, filtered, cases = {...}}.
---@param dir? string default: the policies folder
---@param opts? {run?: string} a Lua pattern a case's name must match
---@return table? report
---@return string? err
---@return string? code "EINVAL"
function runtime:test(dir, opts) end

---Serves `toolgate reload` on a control socket; returns its path.
---@param path? string
---@return string? path
---@return string? err
---@return string? code an errno name ("EADDRINUSE")
function runtime:listen(path) end

---The current policy generation number.
---@return integer
function runtime:generation() end

---What is registered: rules, hooks, tools.
---@return { generation: integer, files: table, rules: table[], hooks: table, tools: table[], event_handlers: table[], warnings: table }
function runtime:describe() end

-- ---- the chat side: turns, layers, routing, budgets, notifications -------

---@class toolgate.models
---@field routes? table<string, string> task_weight -> model
---@field default? string the model of a request that names none
---@field fallback? table<string, string[]> model ("*": any) -> what to use while it is unavailable

---@class toolgate.layer_ctx
---@field session string
---@field turn integer
---@field model? string chat layers
---@field project? string chat layers
---@field request? table chat layers
---@field tool? string tool layers
---@field call_id? string tool layers
---@field usage? {model?: string, input_tokens: integer, output_tokens: integer, cost: number} after_chat

---@class toolgate.layer_spec
---@field name? string for layer_error's where ("host")
---@field before_chat? fun(ctx: toolgate.layer_ctx)
---@field after_chat? fun(ctx: toolgate.layer_ctx, ok: boolean, err?: string)
---@field before_tool? fun(ctx: toolgate.layer_ctx)
---@field after_tool? fun(ctx: toolgate.layer_ctx, ok: boolean, err?: string)

---@class toolgate.chat_request
---@field session? string default: the runtime's
---@field model? string the model the chat goes to
---@field project? string what project-scoped budgets count
---@field request? table what layers see as ctx.request

---@class toolgate.usage
---@field model? string default: the chat's
---@field input_tokens? integer
---@field output_tokens? integer
---@field cost? number

---@class toolgate.route_request
---@field requested_model? string
---@field task_weight? string
---@field context? table
---@field session? string

---@class toolgate.progress_spec
---@field id string unique among running items
---@field label? string
---@field kind? "indeterminate"|"determinate"|"steps" ("indeterminate")
---@field total? number determinate and steps: > 0
---@field on_cancel? fun(id: string) makes it cancellable

---Sets the runtime's clock to ms (ms since the epoch) until set again; nil:
---the system clock. Budgets, model availability and notification expiry
---read it.
---@param ms? integer
function runtime:set_clock(ms) end

---The runtime's clock, ms since the epoch.
---@return integer
function runtime:now() end

---A user turn begins: the session's turn rises by one (from 1); calls of
---the session carry it.
---@param session? string
---@return integer turn
function runtime:turn_begin(session) end

---The session's current turn (0 before the first).
---@param session? string
---@return integer
function runtime:turn(session) end

---A model call begins: runs the before_chat layers (host, then policies).
---@param request? toolgate.chat_request
---@return true? ok
---@return string? err
---@return string? code "EBUSY": the session has a chat open
function runtime:chat_begin(request) end

---The model call ended: records usage (budgets, alerts), runs the
---after_chat layers.
---@param ok boolean
---@param err? string
---@param usage? toolgate.usage
---@param session? string
---@return true? ok
---@return string? err
---@return string? code "ENOENT": no chat open
function runtime:chat_end(ok, err, usage, session) end

---Adds a host layer; returns its id. A layer that raises is logged (a
---layer_error event) and skipped.
---@param spec toolgate.layer_spec
---@return integer id
function runtime:layer(spec) end

---@param id integer
function runtime:remove_layer(id) end

---Sets the routing table and fallbacks (nil clears them).
---@param models? toolgate.models
---@return true? ok
---@return string? err
---@return string? code
function runtime:set_models(models) end

---Routes a model request: the routing table, the policies' routing hooks
---in order, the fallback. Returns the decision {requested_model,
---selected_model, reason, task_weight, context, session, hooks, fallback?,
---available}.
---@param request toolgate.route_request
---@return table? decision
---@return string? err
---@return string? code
function runtime:route(request) end

---Marks a model unavailable until until_ms (the runtime clock).
---@param model string
---@param until_ms integer
---@return true? ok
---@return string? err
---@return string? code
function runtime:model_unavailable(model, until_ms) end

---A budget's status {name, spent, limit, percent, level, period,
---period_start, resets_at, session?}.
---@param name string
---@param session? string
---@return table? status
---@return string? err
---@return string? code "ENOENT"
function runtime:budget_status(name, session) end

---Every budget's status, in declaration order.
---@return table[]
function runtime:budgets() end

---Shows a notification; returns its id.
---@param level "info"|"success"|"warning"|"error"
---@param title string
---@param message? string
---@param opts? {duration_ms?: integer, action?: {label: string, command?: string}}
---@return integer? id
---@return string? err
---@return string? code
function runtime:notify(level, title, message, opts) end

---@param id integer
---@return true? ok
---@return string? err
---@return string? code "ENOENT"
function runtime:dismiss(id) end

---The notifications, oldest first.
---@return table[]
function runtime:notifications() end

---Calls fn(change, notification, list) on every change ("shown",
---"dismissed", "expired", "dropped").
---@param fn fun(change: string, notification: table, list: table[])
---@return integer id
function runtime:on_notification(fn) end

---@param id integer
function runtime:off_notification(id) end

---Starts a progress item.
---@param spec toolgate.progress_spec
---@return true? ok
---@return string? err
---@return string? code "EEXIST", "EINVAL"
function runtime:progress_start(spec) end

---Moves an item (determinate: current of total; steps: the step number
---and its label).
---@param id string
---@param current number
---@param message? string
---@return true? ok
---@return string? err
---@return string? code
function runtime:progress_update(id, current, message) end

---@param id string
---@return true? ok
---@return string? err
---@return string? code
function runtime:progress_done(id) end

---@param id string
---@param message? string
---@return true? ok
---@return string? err
---@return string? code
function runtime:progress_fail(id, message) end

---Asks a cancellable item to stop (a call's item cancels the call).
---@param id string
---@return true? ok
---@return string? err
---@return string? code "ENOENT", "ENOTSUP"
function runtime:progress_cancel(id) end

---The running items, oldest first.
---@return table[]
function runtime:progress() end

---Calls fn(change, item, list) on every change ("start", "update", "done",
---"fail", "cancel").
---@param fn fun(change: string, item: table, list: table[])
---@return integer id
function runtime:on_progress_change(fn) end

---@param id integer
function runtime:off_progress_change(id) end

---Cancels calls still running and frees the runtime (also done by the
---garbage collector, and by a <close> variable going out of scope).
function runtime:close() end

return toolgate
