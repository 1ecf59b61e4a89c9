#!/usr/bin/env bash
# test_cli.sh — black-box checks of the `toolgate` command line.
#
#   spec/cli/test_cli.sh PATH/TO/toolgate
#
# Writes its own policies to a temporary directory, runs the binary with
# stdin from /dev/null (so nothing is interactive) and prints one line per
# check. Exits 1 if any check failed. JSON is checked with python3.
. "$(dirname "$0")/harness.sh" cli "$@"

# ---- policies ----------------------------------------------------------

mkdir -p "$WORK/pol" "$WORK/broken" "$WORK/syntax"
cat >"$WORK/pol/10-tools.lua" <<'EOF'
local tg = require "toolgate"
tg.tool { name = "echo", read_only = true,
  run = function(args, ctx) return args end }
tg.tool { name = "write",
  run = function(args, ctx) return "wrote " .. tostring(args.path) end }
EOF
# Registered out of priority order: check must list them by priority.
cat >"$WORK/pol/20-rules.lua" <<'EOF'
local tg = require "toolgate"
tg.rule { name = "late-rule", priority = 30, tools = { "echo" },
  check = function(call) end }
tg.rule { name = "no-bad", priority = 5, tools = { "echo" },
  check = function(call)
    if call.args.bad then return tg.deny("bad args are blocked") end
  end }
tg.rule { name = "ask-write", priority = 10, tools = { "write" },
  check = function(call) return tg.ask("write " .. tostring(call.args.path)) end }
EOF
# Loads (valid Lua) but fails at line 3.
printf 'local tg = require "toolgate"\n\nerror("broken on purpose")\n' \
  >"$WORK/broken/bad.lua"
# A syntax error on line 2.
printf 'local tg = require "toolgate"\ntg.rule { name = "x" priority = 1 }\n' \
  >"$WORK/syntax/oops.lua"
P=(--policies "$WORK/pol")

# ---- exit codes -----------------------------------------------------------

run call echo '{"a":1}' "${P[@]}"
expect "call ok exits 0" 0
run call echo '{"bad":true}' "${P[@]}"
expect "call denied by a rule exits 1" 1
run call echo '{"a":' "${P[@]}"
expect "bad JSON exits 2 and says so" 2 "not valid JSON"
run call echo '{"a":1,}' "${P[@]}"
expect "bad JSON message says where" 2 "column"
run call echo '[1,2]' "${P[@]}"
expect "args not an object exits 2" 2 "JSON object"
run call nope '{}' "${P[@]}"
expect "unknown tool exits 2" 2 "unknown tool 'nope'"
expect "unknown tool lists registered tools" 2 "echo"
run call echo '{}' --policies "$WORK/no-such-dir"
expect "explicit missing policy dir exits 2" 2 "no-such-dir"
run call echo '{}' --policies "$WORK/broken"
expect "broken policy file exits 2 with file:line" 2 "bad.lua:3"
run call echo '{}'
expect "no ./policies: runs with no policies (unknown tool)" 2 "unknown tool 'echo'"
run call echo
expect "missing JSON is a usage error" 2 "JSON"
run call echo '{}' --approve=sometimes "${P[@]}"
expect "bad --approve value names the option" 2 "--approve"
run call echo '{}' --timeout-ms soon "${P[@]}"
expect "bad --timeout-ms value names the option" 2 "--timeout-ms"
run call echo '{}' --frobnicate "${P[@]}"
expect "unknown option is named" 2 "--frobnicate"
run call echo '{}' --events
expect "option without its value is named" 2 "--events"
run frobnicate
expect "unknown command exits 2" 2 "unknown command"
run
expect "no command exits 2" 2 "usage"
run --help
expect "--help exits 0" 0
dups=$(awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 }' "$WORK/stdout" | sort | uniq -d)
if [ -z "$dups" ] && grep -q '^  call ' "$WORK/stdout"; then
  pass "--help lists each command once"
else
  fail "--help lists each command once" "listed twice: $dups"
fi
run --version
if [ "$RC" -eq 0 ] && grep -q '^toolgate [0-9]' "$WORK/stdout"; then
  pass "--version prints the version"
else
  fail "--version prints the version" "exit $RC, stdout: $OUT"
fi

# ---- --json ---------------------------------------------------------------

run call echo '{"a":1}' "${P[@]}" --json
expect "call --json exits 0" 0
json_ok "--json prints exactly one JSON line with every field" \
  'len(objs) == 1 and all(k in objs[0] for k in ("id", "tool", "status",
   "result", "error", "decision", "attempts", "duration_ms"))
   and objs[0]["status"] == "ok" and objs[0]["result"] == {"a": 1}'
run call echo '{"bad":true}' "${P[@]}" --json
json_ok "--json on a deny: status denied, decision names the rule" \
  'len(objs) == 1 and objs[0]["status"] == "denied"
   and objs[0]["decision"]["rule"] == "no-bad"
   and objs[0]["error"]["phase"] == "AUTHORIZE"'

# ---- approvals ------------------------------------------------------------

run call write '{"path":"x"}' "${P[@]}" --approve=allow --json
expect "--approve=allow lets an asked call run" 0
json_ok "--approve=allow: status ok, result from the tool" \
  'objs[0]["status"] == "ok" and objs[0]["result"] == "wrote x"'
run call write '{"path":"x"}' "${P[@]}" --approve=deny --json
expect "--approve=deny exits 1" 1
json_ok "--approve=deny: status rejected" 'objs[0]["status"] == "rejected"'
run call write '{"path":"x"}' "${P[@]}"
expect "no terminal, no --approve: rejected, and says why" 1 "no terminal"

# ---- --events -------------------------------------------------------------

rm -f "$WORK/events.jsonl"
run call echo '{"a":1}' "${P[@]}" --events "$WORK/events.jsonl"
expect "call --events exits 0" 0
json_ok "--events: JSON lines, seq strictly increasing, call_start..call_end" \
  'len(objs) >= 2
   and all(a["seq"] < b["seq"] for a, b in zip(objs, objs[1:]))
   and "call_start" in [o["type"] for o in objs]
   and "call_end" in [o["type"] for o in objs]
   and [o["type"] for o in objs].index("call_start")
       < [o["type"] for o in objs].index("call_end")' \
  "$WORK/events.jsonl"
run call echo '{"a":2}' "${P[@]}" --events "$WORK/events.jsonl"
json_ok "--events appends" \
  'sum(o["type"] == "call_start" for o in objs) == 2' "$WORK/events.jsonl"

# ---- check ----------------------------------------------------------------

run check "$WORK/pol"
expect "check on good policies exits 0" 0
if grep -n . "$WORK/stdout" | awk -F: '
     /no-bad/ { a = $1 } /ask-write/ { b = $1 } /late-rule/ { c = $1 }
     END { exit !(a && b && c && a < b && b < c) }'; then
  pass "check lists rules in priority order"
else
  fail "check lists rules in priority order" "stdout: $OUT"
fi
run check "$WORK/pol" --json
json_ok "check --json: one object, rules by priority" \
  'len(objs) == 1 and [r["priority"] for r in objs[0]["rules"]] == [5, 10, 30]'
run check "$WORK/syntax"
expect "check on a syntax error exits 1 with file:line" 1 "oops.lua:2"
run check "$WORK/broken"
expect "check on a failing file exits 1 with file:line" 1 "bad.lua:3"
run check "$WORK/no-such-dir"
expect "check on a missing dir exits 1" 1 "no-such-dir"

# Tool names no tool registers: warnings; --strict makes them errors.
mkdir -p "$WORK/typos"
cat >"$WORK/typos/10.lua" <<'EOF'
local tg = require "toolgate"
tg.rule { name = "no-rm", tools = { "exce" }, check = function() end }
tg.after_tool("wirte_file", function() end)
EOF
run check "$WORK/typos"
expect "check with unknown tool names exits 0 (warnings)" 0
if grep -qF "names the tool 'exce', but no tool has that name (did you mean 'exec'?)" \
     "$WORK/stdout" && grep -qF "'wirte_file'" "$WORK/stdout"; then
  pass "check warns about tool names no tool registers"
else
  fail "check warns about tool names no tool registers" "stdout: $OUT"
fi
run check "$WORK/typos" --strict
expect "check --strict with warnings exits 1" 1 "2 warnings, and --strict makes them errors"
run check "$WORK/typos" --strict --json
json_ok "check --strict --json: the warnings are in the JSON" \
  'len(objs[0]["warnings"]) == 2'
run check "$WORK/pol" --strict
expect "check --strict without warnings exits 0" 0

# The agents' tool names are known: rules in the agent's terms are no
# typos, and a misspelt one gets the nearest name of either kind.
mkdir -p "$WORK/agentnames" "$WORK/tgtypo"
cat >"$WORK/agentnames/10.lua" <<'EOF'
local tg = require "toolgate"
tg.rule { name = "agent-terms", tools = { "Bash", "Edit", "MultiEdit", "Read", "Glob",
  "WebFetch", "shell", "local_shell", "glob", "web_fetch", "mcp__github__create_issue",
  "mcp__github__*" }, check = function() end }
tg.before_tool("NotebookEdit", function() end)
EOF
run check "$WORK/agentnames" --strict
expect "check --strict accepts the agents' tool names" 0
out_has() { # name, text: stdout holds text
  if grep -qF -- "$2" "$WORK/stdout"; then pass "$1"; else fail "$1" "stdout: $OUT"; fi
}
out_has "check shows what toolgate judges an agent's tool as" \
  "Bash          exec (claude-code, codex)"
cat >>"$WORK/agentnames/10.lua" <<'EOF'
tg.rule { name = "typo", priority = 2, tools = { "Bassh", "Wirte" }, check = function() end }
EOF
run check "$WORK/agentnames"
expect "check with a misspelt agent tool exits 0 (warnings)" 0
out_has "check warns about a misspelt agent tool, with the agent's name" \
  "names the tool 'Bassh', but no tool has that name (did you mean 'Bash'?)"
out_has "... and suggests the nearest of every known name" "(did you mean 'Write'?)"
run check "$WORK/agentnames" --strict
expect "check --strict refuses a misspelt agent tool" 1 "2 warnings"
cat >"$WORK/tgtypo/10.lua" <<'EOF'
local tg = require "toolgate"
tg.rul { name = "x", check = function() end }
EOF
run check "$WORK/tgtypo"
expect "a misspelt tg.* function fails with file:line" 1 "10.lua:2"
expect "a misspelt tg.* function names the one meant" 1 "did you mean tg.rule?"

# explain --event: an agent's hook event, mapped, judged and answered as
# `toolgate hook` answers it (spec/c/test_hooks.c compares every fixture).
mkdir -p "$WORK/evpol"
cat >"$WORK/evpol/10.lua" <<'EOF'
local tg = require "toolgate"
tg.rule { name = "no-force", tools = { "Bash" }, check = function(c)
  if c.args.command:match("%-%-force") then return tg.deny("no force pushes") end end }
tg.before_tool("Bash", function(c) return tg.args { command = c.args.command .. " --dry-run" } end)
EOF
printf '{"session_id":"s","transcript_path":"/t.jsonl","cwd":"/","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"git push --force"}}' >"$WORK/ev_deny.json"
printf '{"session_id":"s","cwd":"/","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}' >"$WORK/ev_either.json"
printf '{"session_id":"s","cwd":"/","hook_event_name":"PreToolUse","toolgate_agent":"opencode","tool_name":"bash","tool_input":{"command":"ls"}}' >"$WORK/ev_opencode.json"
printf '{"session_id":"s","cwd":"/","hook_event_name":"PreToolUse","turn_id":"t","tool_name":"Bash","tool_input":{"command":"make"}}' >"$WORK/ev_rewrite.json"
run explain --event "$WORK/ev_deny.json" --policies "$WORK/evpol"
expect "explain --event exits 0" 0
out_has "explain --event shows the mapped call and the agent's name" \
  "mapped    exec (not read-only); rules may also name it Bash"
out_has "explain --event shows the rule that decides" "no-force"
out_has "explain --event shows what the agent gets" '"permissionDecision":"deny"'
run explain --event "$WORK/ev_rewrite.json" --policies "$WORK/evpol" --json
json_ok "explain --event --json: Codex detected, the rewrite and updatedInput" \
  'objs[0]["agent"] == "codex" and objs[0]["agent_detected"]
   and objs[0]["judged"]["rewritten"]
   and objs[0]["judged"]["args"]["command"] == "make --dry-run"
   and objs[0]["answer"]["output"]["hookSpecificOutput"]["updatedInput"]["command"] == "make --dry-run"'
run explain --event "$WORK/ev_rewrite.json" --agent claude --policies "$WORK/evpol" --json
json_ok "explain --event --agent claude overrides the detection" \
  'objs[0]["agent"] == "claude-code" and not objs[0]["agent_detected"]'
run explain Bash '{"command":"git push --force"}' --policies "$WORK/evpol"
expect "explain TOOL JSON takes an agent's tool and input" 0
out_has "explain says the agent's tool is judged as toolgate's" \
  "agent     Bash is claude-code's tool, with its input: judged as exec"
out_has "explain of an agent's tool: the rule by its name decides" "deny: no force pushes   <- decides"
run explain --event "$WORK/ev_either.json" --policies "$WORK/evpol"
expect "explain --event: Claude Code's or OpenCode's? it asks for --agent" 2 "give --agent NAME"
run explain --event "$WORK/ev_either.json" --agent opencode --policies "$WORK/evpol" --json
json_ok "explain --event --agent opencode takes the event as OpenCode's" \
  'objs[0]["agent"] == "opencode" and not objs[0]["agent_detected"]'
run explain --event "$WORK/ev_opencode.json" --policies "$WORK/evpol" --json
json_ok "explain --event: OpenCode's plugin's event is detected by its toolgate_agent" \
  'objs[0]["agent"] == "opencode" and objs[0]["agent_detected"]'
run explain --event "$WORK/ev_deny.json" exec '{}'
expect "explain --event with TOOL JSON is a usage error" 2 "no TOOL or JSON"
run explain --event "$WORK/ev_deny.json" --agent aider
expect "explain --agent takes claude or codex" 2 "claude or codex"
run explain --agent codex exec '{}'
expect "explain --agent without --event is a usage error" 2 "go with --event"

# A rule that raised is named the same way by call, explain, test and log:
# "error", by the rule that failed (it fails closed: the call is denied).
mkdir -p "$WORK/raises"
cat >"$WORK/raises/10.lua" <<'EOF'
local tg = require "toolgate"
tg.tool { name = "echo", read_only = true, run = function(a) return a end }
tg.rule { name = "buggy", check = function(c) error("oops") end }
EOF
cat >"$WORK/raises/10_test.lua" <<'EOF'
return { { name = "c", tool = "echo", args = {}, expect = "allow" } }
EOF
R=(--policies "$WORK/raises" --db "$WORK/raises.db")
run call echo '{}' "${R[@]}"
expect "call: a rule that raised exits 1" 1
out_has "call names a rule that raised an error" "decision  error: rule 'buggy' failed closed"
run explain echo '{}' --policies "$WORK/raises"
out_has "explain names it an error" "verdict   error, rule 'buggy'"
run test "$WORK/raises"
out_has "test names it an error" "got error: rule 'buggy'"
run log --db "$WORK/raises.db"
out_has "log names it an error" "echo               -                     error    rule buggy"

# The tools toolgate.lua's servers declare (servers.x.tools) are known to
# check and judged as stand-ins by test, without starting the servers.
mkdir -p "$WORK/decl/policies"
cat >"$WORK/decl/toolgate.lua" <<'EOF'
return { servers = { github = { command = "false", read_only = { "get_*" },
  tools = { "create_issue", "get_issue" } } } }
EOF
cat >"$WORK/decl/policies/10.lua" <<'EOF'
local tg = require "toolgate"
tg.rule { name = "issues", tools = { "github__create_issue" }, check = function() return tg.ask("an issue?") end }
EOF
cat >"$WORK/decl/policies/10_test.lua" <<'EOF'
return {
  { name = "declared", tool = "github__create_issue", args = {}, expect = "ask", rule = "issues" },
  { name = "declared read-only", tool = "github__get_issue", args = {}, expect = "allow", rule = false },
}
EOF
run check "$WORK/decl/policies" --strict
expect "check --strict without the config: an upstream's tool is unknown" 1 "1 warning"
run check "$WORK/decl/policies" --strict --config "$WORK/decl/toolgate.lua"
expect "check --strict --config knows the tools its servers declare" 0
cat >>"$WORK/decl/policies/10.lua" <<'EOF'
tg.rule { name = "typo", priority = 2, tools = { "github__get_isue" }, check = function() end }
EOF
run check "$WORK/decl/policies" --config "$WORK/decl/toolgate.lua"
out_has "check suggests a declared tool" "(did you mean 'github__get_issue'?)"
run test "$WORK/decl/policies" --config "$WORK/decl/toolgate.lua"
expect "test judges a declared tool as a stand-in (read-only from the globs)" 0 ""
run check "$WORK/decl/policies" --config "$WORK/decl/none.lua"
expect "check --config of a missing file fails" 1 "none.lua"

# ---- hostile policy code ------------------------------------------------------

mkdir -p "$WORK/hostile" "$WORK/many" "$WORK/redact"
# A rule answering with a table whose __index raises (line 4).
cat >"$WORK/hostile/10.lua" <<'EOF'
local tg = require "toolgate"
tg.tool { name = "echo", read_only = true, run = function(args) return args end }
local BAD = setmetatable({}, { __index = function() error("metamethod ran") end })
tg.rule { name = "weird", check = function(call) return BAD end }
EOF
H=(--policies "$WORK/hostile")
run call echo '{"a":1}' "${H[@]}" --json
expect "a rule returning a raising table: call exits 1, not an abort" 1
json_ok "a rule returning a raising table: a POLICY error naming file:line" \
  'objs[0]["status"] == "error" and objs[0]["error"]["phase"] == "POLICY"
   and "10.lua:4" in objs[0]["error"]["message"]'
run explain echo '{"a":1}' "${H[@]}" --json
expect "explain on a rule returning a raising table exits 0" 0
json_ok "explain on it reports the rule's bad answer" \
  'objs[0]["rules"][0]["status"] == "error"
   and "10.lua:4" in objs[0]["rules"][0]["error"]'
run explain echo '{"a":1}' "${H[@]}"
expect "explain (text) on it exits 0" 0

# 300 "*" pre-hooks; the last one aborts. check, explain and call agree.
{ echo 'local tg = require "toolgate"'
  echo 'tg.tool { name = "echo", read_only = true, run = function(args) return args end }'
  for _ in $(seq 299); do echo 'tg.before_tool("*", function(call) end)'; done
  echo 'tg.before_tool("*", function(call) return tg.abort("the 300th says no") end)'
} >"$WORK/many/10.lua"
M=(--policies "$WORK/many")
run check "$WORK/many" --json
json_ok "check lists all 300 pre-hooks" 'len(objs[0]["hooks"]["before"]) == 300'
run explain echo '{}' "${M[@]}" --json
json_ok "explain lists all 300 pre-hooks" 'len(objs[0]["pre_hooks"]) == 300'
rm -f "$WORK/many.jsonl"
run call echo '{}' "${M[@]}" --json --events "$WORK/many.jsonl"
expect "the 300th pre-hook runs: the call is aborted" 1
json_ok "the 300th pre-hook's abort is the outcome" \
  'objs[0]["status"] == "denied" and "the 300th says no" in objs[0]["error"]["message"]'
json_ok "300 hook events, as many as check and explain list" \
  'sum(o["type"] == "hook" for o in objs) == 300' "$WORK/many.jsonl"

# A redaction post-hook that raises: the result is withheld everywhere.
cat >"$WORK/redact/10.lua" <<'EOF'
local tg = require "toolgate"
tg.tool { name = "leaky", read_only = true,
  run = function() return { token = "S3CRET-" .. "cli" } end }
tg.after_tool("leaky", function(call, res) error("redaction broke") end)
EOF
rm -f "$WORK/redact.jsonl"
run call leaky '{}' --policies "$WORK/redact" --json --events "$WORK/redact.jsonl"
expect "a failing redaction post-hook: call exits 1" 1
json_ok "a failing redaction post-hook: result null, status error" \
  'objs[0]["status"] == "error" and objs[0]["result"] is None'
if grep -q S3CRET "$WORK/stdout" "$WORK/stderr" "$WORK/redact.jsonl"; then
  fail "the withheld result is in no output and no event" \
    "$(grep -l S3CRET "$WORK/stdout" "$WORK/stderr" "$WORK/redact.jsonl")"
else
  pass "the withheld result is in no output and no event"
fi
run call leaky '{}' --policies "$WORK/redact"
if [ "$RC" -eq 1 ] && ! grep -q S3CRET "$WORK/stdout" "$WORK/stderr"; then
  pass "the withheld result is not printed for people either"
else
  fail "the withheld result is not printed for people either" "exit $RC: $OUT $ERR"
fi

# ---- a second Ctrl-C ---------------------------------------------------------

# The command ignores SIGTERM and the grace is long: only the second
# Ctrl-C's SIGKILL of the group can end it before the CLI exits.
(cd "$WORK" && exec "$TG" call --approve=allow --kill-grace-ms 20000 exec \
  '{"command":"trap \"\" TERM; sleep 37 & echo $! > sleeper.pid; wait"}' \
  >"$WORK/ctrlc.out" 2>&1 </dev/null) &
tgpid=$!
for _ in $(seq 100); do [ -s "$WORK/sleeper.pid" ] && break; sleep 0.05; done
kill -INT "$tgpid"; sleep 0.3; kill -INT "$tgpid"
wait "$tgpid"; RC=$?
sleeper=$(cat "$WORK/sleeper.pid" 2>/dev/null)
state=
for _ in $(seq 60); do # a killed process may wait a moment to be reaped
  state=$(awk '{print $3}' "/proc/$sleeper/stat" 2>/dev/null)
  case $state in ""|Z|X) break ;; esac
  sleep 0.05
done
if [ "$RC" -eq 130 ] && [ -n "$sleeper" ] && case $state in ""|Z|X) true ;; *) false ;; esac; then
  pass "a second Ctrl-C exits 130 and kills the command's group"
else
  fail "a second Ctrl-C exits 130 and kills the command's group" \
    "exit $RC, sleeper ${sleeper:-?} state '${state}' ($(cat "$WORK/ctrlc.out"))"
fi

# ---- JSON in and out (issue 8) ------------------------------------------------

# Duplicate keys: the rules would judge the last "command", exec would run
# the first. The one parser refuses the text, naming the key.
echo "still here" >"$WORK/victim"
run call --approve=allow exec \
  '{"command":"rm -f victim; echo removed","command":"echo hi"}' "${P[@]}"
expect "duplicate keys in args: exit 2, the key and its path named" 2 \
  '$.command: duplicate key "command"'
if [ "$(cat "$WORK/victim" 2>/dev/null)" = "still here" ]; then
  pass "duplicate keys in args: the command did not run"
else
  fail "duplicate keys in args: the command did not run" "victim is gone"
fi
run explain exec '{"command":"rm -f victim","command":"echo hi"}' "${P[@]}"
expect "duplicate keys in explain's args: exit 2" 2 'duplicate key "command"'
mkdir -p "$WORK/envpol"
cat >"$WORK/envpol/10.lua" <<'LUA'
local tg = require "toolgate"
tg.rule { name = "no-env-files", priority = 10, tools = { "read_file" },
  check = function(call)
    if call.args.path:match("%.env$") then return tg.deny("secrets stay private") end
  end }
LUA
echo "SECRET=hunter2" >"$WORK/.env"
echo "fine" >"$WORK/ok.txt"
run call read_file '{"path":".env","path":"ok.txt"}' --policies "$WORK/envpol" --json
if [ "$RC" -eq 2 ] && grep -qF '$.path: duplicate key "path"' "$WORK/stderr" &&
   ! grep -q hunter2 "$WORK/stdout"; then
  pass "duplicate keys cannot get a .env file past no-env-files"
else
  fail "duplicate keys cannot get a .env file past no-env-files" \
    "exit $RC, stdout: $OUT, stderr: $ERR"
fi
run call echo '{"a":{"b":[0,{"c":1,"c":2}]}}' "${P[@]}"
expect "a nested duplicate key is named by its path" 2 \
  '$.a.b[1].c: duplicate key "c"'
expect "the JSON error says line and column" 2 "line 1, column 21"

run call echo '{"n":1e400}' "${P[@]}"
expect "1e400 is refused at parse" 2 '$.n: the number 1e400 is out of range'
run call echo "$(printf '{"s":"a\377"}')" "${P[@]}"
expect "invalid UTF-8 in args is refused" 2 '$.s: a string is not valid UTF-8'
run call echo '{"s":"\ud800"}' "${P[@]}"
expect "a lone surrogate in args is refused" 2 'high surrogate'
run call echo '{"s":"echo hi\u0000; rm -rf /"}' "${P[@]}"
expect "\\u0000 in args is refused, not cut" 2 '\u0000 (NUL) in a string'

# Numbers print so that they read back exactly.
run call echo '{"a":9007199254740991,"b":0.1,"c":-0.0,"d":1e300,"e":1.0000000000000002}' \
  "${P[@]}" --json
json_ok "--json: numbers read back exactly (2^53-1, 0.1, -0, 1e300)" \
  'objs[0]["result"] == {"a": 9007199254740991, "b": 0.1, "c": 0, "d": 1e300,
                         "e": 1.0000000000000002}
   and ("\"c\":-0," in lines[0] or "\"c\":-0}" in lines[0])
   and "9007199254740991" in lines[0]'

# Bytes that are not UTF-8 never reach --json raw: a Lua string is
# refused, an error message gets U+FFFD.
cat >"$WORK/pol/30-bytes.lua" <<'LUA'
local tg = require "toolgate"
tg.tool { name = "bin", read_only = true, run = function() return "\255\254" end }
tg.tool { name = "oops", read_only = true, run = function() error("bad \255 byte", 0) end }
LUA
run call bin '{}' "${P[@]}" --json
json_ok "--json: a Lua tool's invalid UTF-8 is an error, not raw bytes" \
  'objs[0]["status"] == "error" and objs[0]["error"]["code"] == "BAD_RESULT"
   and "not valid UTF-8" in objs[0]["error"]["message"]'
run call oops '{}' "${P[@]}" --json
json_ok "--json: an error message's invalid UTF-8 comes out as U+FFFD" \
  '"bad \ufffd byte" in objs[0]["error"]["message"]'
rm -f "$WORK/pol/30-bytes.lua"

finish
