#!/usr/bin/env bash
# test_taint_cli.sh — a sensitive session and the MCP tools toolgate.lua
# marks as reaching the network (servers.NAME.network): the starter's
# 80_taint.lua denies them, by toolgate's name and by the agent's own
# (mcp__NAME__tool), through `toolgate hook` (./toolgate.lua) and `toolgate
# test --config`; a toolgate.lua that does not load refuses a sensitive
# session's call and leaves a clean one alone; hostile toolgate.lua keys
# are errors that name the key (and the nearest one); `toolgate explain`
# shows a rule's tg.taint without keeping it; `toolgate explain --event`
# sees the taint the hook keeps in its database, and writes nothing.
#
#   spec/cli/test_taint_cli.sh PATH/TO/toolgate
. "$(dirname "$0")/harness.sh" taint-cli "$@"

export HOME="$WORK/home"
mkdir -p "$HOME"
run init policies
expect "init" 0

cat >"$WORK/toolgate.lua" <<'LUA'
return {
  servers = {
    web = { command = "true", network = true },
    files = { command = "true", network = { "upload*" }, tools = { "list", "upload_file" } },
  },
}
LUA
cp "$WORK/toolgate.lua" "$WORK/good.lua"

# hook EVENT...: one Claude Code event of session $S, answered in-process
# (HOOK_HOW: how it is answered; default in-process)
HOOK_HOW=--no-resident
hook() {
  printf '{"session_id":"%s","cwd":"%s","hook_event_name":"%s","tool_name":"%s","tool_input":%s%s}' \
    "$S" "$WORK" "$@" >"$WORK/event"
  (cd "$WORK" && "$TG" hook claude-code --policies "$WORK/policies" $HOOK_HOW \
    <"$WORK/event" >"$WORK/stdout" 2>"$WORK/stderr")
  RC=$?
  OUT=$(cat "$WORK/stdout")
  ERR=$(cat "$WORK/stderr")
}
denied() { # NAME TEXT: the last answer denies, naming TEXT
  if [ "$RC" -eq 0 ] && grep -qF '"permissionDecision":"deny"' "$WORK/stdout" &&
    grep -qF -- "$2" "$WORK/stdout"; then pass "$1"; else fail "$1" "exit $RC: $OUT $ERR"; fi
}
not_denied() {
  if [ "$RC" -eq 0 ] && ! grep -qF '"deny"' "$WORK/stdout"; then pass "$1"
  else fail "$1" "exit $RC: $OUT $ERR"; fi
}

# ---- through the hook: ./toolgate.lua marks the tools ------------------------
S=clean
hook PreToolUse mcp__web__fetch '{"url":"https://x.example"}' ''
not_denied "a clean session's network MCP tool is not refused"
S=hot
hook PostToolUse Read "{\"file_path\":\"$WORK/conf.py\"}" \
  ",\"tool_response\":{\"type\":\"text\",\"file\":{\"filePath\":\"$WORK/conf.py\",\"content\":\"K=AKIAABCDEFGHIJKLMNOP\"}}"
expect "the Read of a key taints the session" 0
hook PreToolUse mcp__web__fetch '{"url":"https://x.example"}' ''
denied "then the agent's mcp__web__fetch is denied" "tainted-no-network-tool"
denied "naming the tool and what made the session sensitive" \
  "mcp__web__fetch reaches the network (toolgate.lua marks it), and this session is sensitive since"
denied "and the call that did it" "(Read): a redaction rule matched in read_file's result"
hook PreToolUse mcp__files__upload_file '{"path":"a"}' ''
denied "a tool a glob marks is denied" "mcp__files__upload_file reaches the network"
hook PreToolUse mcp__files__list '{}' ''
not_denied "a tool of that server no glob marks is not"
hook PreToolUse mcp__other__fetch '{}' ''
not_denied "a server toolgate.lua does not declare is not"

# ---- a resident instance reads its own folder's toolgate.lua, again after a save
mkdir -p "$WORK/dd"
cp "$WORK/good.lua" "$WORK/dd/toolgate.lua"
# here, web is not marked: a denial below is the instance's answer
echo 'return { servers = { files = { command = "true", network = { "upload*" } } } }' \
  >"$WORK/toolgate.lua"
(cd "$WORK/dd" && exec "$TG" daemon --policies "$WORK/policies" --socket "$WORK/d.sock" \
  >"$WORK/daemon.out" 2>&1) &
DAEMON=$!
at_exit "kill $DAEMON 2>/dev/null"
for _ in $(seq 600); do [ -S "$WORK/d.sock" ] && break; sleep 0.1; done
HOOK_HOW="--socket $WORK/d.sock"
S=hot
hook PreToolUse mcp__web__fetch '{}' ''
denied "the resident instance denies by its toolgate.lua" "mcp__web__fetch reaches the network"
echo 'return { servers = { web = { command = "true" } } }' >"$WORK/dd/toolgate.lua.tmp"
mv "$WORK/dd/toolgate.lua.tmp" "$WORK/dd/toolgate.lua"
hook PreToolUse mcp__web__fetch '{}' ''
not_denied "after a save that unmarks it, the instance reads it again"
kill "$DAEMON"; wait "$DAEMON" 2>/dev/null
HOOK_HOW=--no-resident
cp "$WORK/good.lua" "$WORK/toolgate.lua"

# ---- serve reads the same key ---------------------------------------------------
run serve --config good.lua --print-config
json_ok "serve --print-config shows the marks" \
  'objs[0]["servers"]["web"]["network"] is True and objs[0]["servers"]["files"]["network"] == ["upload*"]' \
  <(tr -d '\n' <"$WORK/stdout"; echo)

# ---- a toolgate.lua that does not load ----------------------------------------
echo 'return { servers = { web = { command = "true", netwrok = true } } }' >"$WORK/toolgate.lua"
S=hot
hook PreToolUse mcp__web__fetch '{}' ''
denied "a broken toolgate.lua: the sensitive session is refused" "cannot be told"
denied "saying why" "unknown key 'netwrok' (did you mean 'network'?)"
S=clean
hook PreToolUse mcp__web__fetch '{}' ''
not_denied "a broken toolgate.lua: a clean session is not refused"
hook PreToolUse Read "{\"file_path\":\"$WORK/a.txt\"}" ''
not_denied "nor its reads"
S=hot
hook PreToolUse Bash '{"command":"ls"}' ''
not_denied "nor a sensitive session's own tools (toolgate.lua marks servers' only)"
cp "$WORK/good.lua" "$WORK/toolgate.lua"

# ---- toolgate test --config: the stand-ins are marked by the config -----------
mkdir -p "$WORK/tc"
cp policies/80_taint.lua "$WORK/tc/" 2>/dev/null || cp "$WORK/policies/80_taint.lua" "$WORK/tc/"
cat >"$WORK/tc/net_test.lua" <<'LUA'
return {
  { name = "a key in a result", tool = "read_file", args = { path = "c.py" }, session = "t",
    result = { content = "AKIAABCDEFGHIJKLMNOP" }, expect = "allow" },
  { name = "web__fetch after it", tool = "web__fetch", args = {}, session = "t",
    expect = "deny", rule = "tainted-no-network-tool" },
  { name = "files__list after it", tool = "files__list", args = {}, session = "t",
    stand_in = true, expect = "ask" },
  { name = "files__upload_file after it", tool = "files__upload_file", args = {}, session = "t",
    expect = "deny", rule = "tainted-no-network-tool" },
}
LUA
cat >"$WORK/web.lua" <<'LUA'
return { servers = { web = { command = "true", network = true, tools = { "fetch" } },
  files = { command = "true", network = { "upload*" }, tools = { "list", "upload_file" } } } }
LUA
run test --config web.lua tc
expect "test --config: the config's network tools are denied after a taint" 0 "4 passed, 0 failed" stdout
expect "test lists what a case tainted" 0 \
  "tainted session t (level 1): a redaction rule matched in read_file's result" stdout

# ---- hostile toolgate.lua keys: errors naming the key ---------------------------
bad() { # NAME LUA TEXT: test --config refuses it (exit 2) naming TEXT
  printf '%s\n' "$2" | big >"$WORK/bad.lua"
  run test --config bad.lua tc
  expect "toolgate.lua: $1" 2 "$3"
}
# big: BIG(N, c) in the text becomes a string literal of N c's (the file
# runs in a sandbox without string.rep)
big() {
  python3 -c 'import re, sys
sys.stdout.write(re.sub(r"BIG\((\d+), (\w)\)",
    lambda m: "\"" + m.group(2) * int(m.group(1)) + "\"", sys.stdin.read()))'
}
bad "network of the wrong type" 'return { servers = { w = { command = "x", network = "yes" } } }' \
  "servers.w: network must be true, false or a list of tool names (globs), not string"
bad "a network entry of the wrong type" 'return { servers = { w = { command = "x", network = { 5 } } } }' \
  "servers.w: network[1] must be a string, not number"
bad "a network list with a name key" 'return { servers = { w = { command = "x", network = { a = "b" } } } }' \
  "network must be a list (1, 2, 3, ...)"
bad "a 900 kB tool name" 'return { servers = { w = { command = "x", network = { BIG(900000, x) } } } }' \
  "servers.w: network[1] must be a tool name or glob (1 to 128 bytes)"
bad "an empty tool name" 'return { servers = { w = { command = "x", network = { "" } } } }' \
  "network[1] must be a tool name or glob (1 to 128 bytes)"
bad "a NUL in a tool name" 'return { servers = { w = { command = "x", network = { "a\0b" } } } }' \
  "servers.w: network[1] must be a string"
bad "a glob that is not one" 'return { servers = { w = { command = "x", network = { "[a" } } } }' \
  "servers.w: network[1]:"
bad "network = true on a bare server" \
  'return { servers = { w = { command = "x", prefix = false, network = true } } }' \
  "network = true with prefix = false would mark every tool of that name"
bad "a misspelt server key" 'return { servers = { w = { command = "x", netwrok = true } } }' \
  "servers.w: unknown key 'netwrok' (did you mean 'network'?)"
bad "a misspelt top key" 'return { server = {} }' "unknown key 'server' (did you mean 'servers'?)"
bad "a misspelt mcp key" 'return { mcp = { seperator = "." } }' \
  "mcp: unknown key 'seperator' (did you mean 'separator'?)"
bad "an unknown key nothing is near" 'return { servers = { w = { command = "x", colour = 1 } } }' \
  "servers.w: unknown key 'colour'"
bad "a 900 kB unknown key" 'return { servers = { w = { command = "x", [BIG(900000, k)] = 1 } } }' \
  "servers.w: unknown key 'kkkk"
if [ "${#ERR}" -lt 4096 ]; then pass "a 900 kB key is cut in the error"; else fail "a 900 kB key is cut in the error" "${#ERR} bytes"; fi
bad "a key that is not a name" 'return { servers = { w = { command = "x", [1] = true } } }' \
  "keys must be names"
bad "an 8 MB file" 'return { servers = { w = { command = BIG(8388608, c) } } }' \
  "bad.lua: larger than 1 MiB"
bad "a NUL in a command" 'return { servers = { w = { command = "a\0b" } } }' \
  "command must be a string without NUL bytes"
printf 'return { servers = { w = { command = "x", network = false } } }\n' >"$WORK/ok.lua"
run test --config ok.lua tc
expect "network = false is fine (nothing marked)" 1 "files__upload_file after it" stdout

# ---- explain shows a rule's tg.taint, and keeps nothing -----------------------
mkdir -p "$WORK/ex"
cat >"$WORK/ex/10_mark.lua" <<'LUA'
local tg = require "toolgate"
tg.rule { name = "marks", tools = { "exec" }, check = function(call)
  tg.taint(call, 3, "it would read the vault\27[31m") end }
LUA
run explain --policies ex --db "$WORK/ex.db" --session ex1 exec '{"command":"ls"}'
expect "explain shows what tg.taint would do" 0 \
  "taint     would mark session ex1 sensitive (level 3): it would read the vault [31m" stdout
if grep -q $'\033' "$WORK/stdout"; then fail "explain: no control character" "$OUT"
else pass "explain: no control character"; fi
run explain --json --policies ex --db "$WORK/ex.db" --session ex1 exec '{"command":"ls"}'
json_ok "explain --json lists it" \
  'objs[0]["taints"][0]["session"] == "ex1" and objs[0]["taints"][0]["level"] == 3'
run approvals clear-taint ex1 --db "$WORK/ex.db"
expect "explain kept no taint" 2 "not tainted"
run log --session ex1 --db "$WORK/ex.db"
if grep -q sensitive "$WORK/stdout"; then fail "the log shows no taint" "$OUT"
else pass "the log shows no taint"; fi

# ---- explain --event sees the session's stored taint, as the hook does ------
# A session tainted by the starter's 80_taint.lua through real hook calls
# (a Read of .env), then `explain --event` of its curl: the deny the hook
# gives, the taint named; another session as before; the database left as
# it was; --no-db and a missing database say the taint was not consulted;
# a database that cannot be read is an error, never an allow.
DB="$XDG_STATE_HOME/toolgate/toolgate.db"
db_dump() { # the database's content, read-only
  python3 - "$DB" <<'PY'
import sqlite3, sys, hashlib
c = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
print(hashlib.sha256("\n".join(c.iterdump()).encode()).hexdigest())
PY
}
printf 'TOKEN=abc123\n' >"$WORK/.env"
S=leak
hook PreToolUse Bash '{"command":"curl -s https://x.example/a"}' ''
not_denied "explain --event: a clean session's curl is not refused by the hook"
hook PostToolUse Read "{\"file_path\":\"$WORK/.env\"}" \
  ",\"tool_response\":{\"type\":\"text\",\"file\":{\"filePath\":\"$WORK/.env\",\"content\":\"TOKEN=abc123\"}}"
expect "explain --event: the hook's Read of .env taints the session" 0
hook PreToolUse Bash '{"command":"curl -s https://x.example/a"}' ''
denied "explain --event: then the hook denies its curl" "tainted-no-network-shell"
cp "$WORK/stdout" "$WORK/hook_answer"
cp "$WORK/event" "$WORK/ev_curl_leak.json"
sed 's/"session_id":"leak"/"session_id":"other"/' "$WORK/event" >"$WORK/ev_curl_other.json"
before=$(db_dump)
run explain --event ev_curl_leak.json --agent claude --policies policies
expect "explain --event of the tainted session's curl: the hook's deny" 0 \
  '"permissionDecision":"deny"' stdout
expect "explain --event names the stored taint and its cause" 0 \
  "taint     session leak is sensitive (level 1) since" stdout
expect "explain --event: the call and tool that tainted it" 0 \
  "(Read): it read $WORK/.env, which holds credentials" stdout
if grep -qF "$(cat "$WORK/hook_answer")" "$WORK/stdout"; then
  pass "explain --event: the agent gets exactly the hook's answer"
else fail "explain --event: the agent gets exactly the hook's answer" "$OUT"; fi
run explain --event ev_curl_leak.json --agent claude --policies policies --json
json_ok "explain --event --json: stored_taint read from the hook's database" \
  'objs[0]["stored_taint"]["consulted"] is True and
   objs[0]["stored_taint"]["database"] == "'"$DB"'" and
   objs[0]["stored_taint"]["taint"]["tool"] == "Read" and
   objs[0]["stored_taint"]["taint"]["call"].startswith("hook-") and
   objs[0]["answer"]["output"]["hookSpecificOutput"]["permissionDecision"] == "deny"'
# a Read of .env by a clean session, explained: it would taint; it must not
printf '{"session_id":"fresh","cwd":"%s","hook_event_name":"PostToolUse","tool_name":"Read","tool_input":{"file_path":"%s/.env"},"tool_response":{"type":"text","file":{"filePath":"%s/.env","content":"TOKEN=abc123"}}}' \
  "$WORK" "$WORK" "$WORK" >"$WORK/ev_read_fresh.json"
run explain --event ev_read_fresh.json --agent claude --policies policies --json
json_ok "explain --event of a clean session's Read of .env: consulted, clean" \
  'objs[0]["stored_taint"]["consulted"] is True and objs[0]["stored_taint"]["taint"] is None'
after=$(db_dump)
if [ -n "$before" ] && [ "$before" = "$after" ] &&
  grep -qF '"consulted":true' "$WORK/stdout"; then
  pass "explain --event read the database and left it as it was (no audit row, no taint)"
else fail "explain --event read the database and left it as it was (no audit row, no taint)" \
  "before $before after $after"; fi
run approvals clear-taint fresh
expect "explain --event kept no taint of the session it explained" 2 "not tainted"
run explain --event ev_curl_other.json --agent claude --policies policies
expect "explain --event: another session is clean in the database" 0 \
  "taint     session other is not tainted (database $DB)" stdout
expect "explain --event: and its curl is left to the agent, as before" 0 \
  "the agent gets: exit code 0, no output (its own permission flow)" stdout
S=other
hook PreToolUse Bash '{"command":"curl -s https://x.example/a"}' ''
not_denied "explain --event: which is what the hook says for that session"
run explain --event ev_curl_leak.json --agent claude --policies policies --no-db
expect "explain --event --no-db: says the stored taint was not consulted" 0 \
  "taint     the session's stored taint was not consulted: --no-db" stdout
run explain --event ev_curl_leak.json --agent claude --policies policies --db "$WORK/none.db"
expect "explain --event, no such database: not consulted, and not made" 0 \
  "not consulted: no database at $WORK/none.db" stdout
if [ -e "$WORK/none.db" ]; then fail "explain --event makes no database" "$WORK/none.db"
else pass "explain --event makes no database"; fi
head -c 8192 /dev/zero | tr '\0' 'x' >"$WORK/corrupt.db"
chmod 600 "$WORK/corrupt.db"
run explain --event ev_curl_leak.json --agent claude --policies policies --db "$WORK/corrupt.db"
expect "explain --event, a database that cannot be read: an error, not an allow" 2 \
  "the remembered approvals cannot be read"
if [ -s "$WORK/stdout" ]; then fail "explain --event, unreadable database: no answer shown" "$OUT"
else pass "explain --event, unreadable database: no answer shown"; fi
cp "$DB" "$WORK/older.db"
python3 -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute("PRAGMA user_version=7"); c.commit()' \
  "$WORK/older.db"
chmod 600 "$WORK/older.db"
run explain --event ev_curl_leak.json --agent claude --policies policies --db "$WORK/older.db"
expect "explain --event, a database of an older schema: an error" 2 \
  "schema version 7, of an older toolgate, and is only read here"
v=$(python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("PRAGMA user_version").fetchone()[0])' \
  "$WORK/older.db")
if [ "$v" = 7 ]; then pass "explain --event left the older database as it was"
else fail "explain --event left the older database as it was" "user_version $v"; fi

finish
