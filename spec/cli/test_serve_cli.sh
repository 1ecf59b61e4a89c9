#!/usr/bin/env bash
# test_serve_cli.sh — `toolgate serve` as MCP clients start it: many on
# one policies folder (one per window or agent, beside `toolgate watch`),
# all answering and all reached by `toolgate reload` and by a save; one
# without a policies folder; where its audit trail goes (--db, --no-db,
# the config's db, beside the config) and which project its approvals are
# for (--project, the config's project); and the shipped gateway example
# copied elsewhere. Every wait is for a line to appear, with a generous
# bound, never a sleep that a slow machine could outrun.
#
#   spec/cli/test_serve_cli.sh PATH/TO/toolgate
. "$(dirname "$0")/harness.sh" serve-cli "$@"
REPO=$(cd "$(dirname "$0")/../.." && pwd)
export XDG_RUNTIME_DIR="$WORK/run"
mkdir -m 700 "$XDG_RUNTIME_DIR"
WAIT_S=120 # an upper bound for slow (valgrind, a loaded machine) runs
RWORK=$(cd "$WORK" && pwd -P) # as toolgate resolves the config's paths

# ---- serve processes with a hand on their stdin ------------------------------------

declare -A FD PID
# closes, in a child, our ends of the other servers' fifos: a child that
# kept one would hold that server's stdin open after we close ours
close_ours() {
  local f
  for f in "${FD[@]}"; do exec {f}>&-; done
}
# start NAME DIR ARGS...: `toolgate serve ARGS` in DIR, stdin from a fifo
# we hold open, stdout in $WORK/NAME.out, stderr in $WORK/NAME.err
start() {
  local name=$1 dir=$2 fd
  shift 2
  mkfifo "$WORK/$name.in"
  (close_ours; cd "$dir" && exec "$TG" serve "$@" <"$WORK/$name.in" \
     >"$WORK/$name.out" 2>"$WORK/$name.err") &
  PID[$name]=$!
  exec {fd}>"$WORK/$name.in"
  FD[$name]=$fd
}
send() { printf '%s\n' "$2" >&"${FD[$1]}"; }
hello() {
  send "$1" '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"spec","version":"1"}}}'
  send "$1" '{"jsonrpc":"2.0","method":"notifications/initialized"}'
}
call() { # NAME ID TOOL ARGS
  send "$1" "{\"jsonrpc\":\"2.0\",\"id\":$2,\"method\":\"tools/call\",\"params\":{\"name\":\"$3\",\"arguments\":$4}}"
}
# wait_for FILE TEXT: until FILE has TEXT (1, and a failed check, at the bound)
wait_for() {
  local end=$((SECONDS + WAIT_S))
  while [ $SECONDS -lt $end ]; do
    grep -qF -- "$2" "$1" 2>/dev/null && return 0
    sleep 0.05
  done
  return 1
}
# stop NAME: closes its stdin, waits; its exit status in STOPPED
stop() {
  local f=${FD[$1]}
  exec {f}>&-
  unset "FD[$1]"
  wait "${PID[$1]}"
  STOPPED=$?
}
at_exit 'for p in "${PID[@]}"; do kill $p 2>/dev/null; done'

reply() { grep -F "\"id\":$2," "$WORK/$1.out"; }
# the last stdout, one JSON document (--print-config's, indented) on a line
one_line() {
  python3 -c 'import json, sys; print(json.dumps(json.load(sys.stdin)))' \
    <"$WORK/stdout" >"$WORK/stdout.line" 2>&1
}

# ---- many servers on one folder --------------------------------------------------

many() {
  local n=$1 pol="$WORK/many$1/policies" i ok
  mkdir -p "$pol"
  printf 'local tg = require "toolgate"\ntg.tool { name = "first%s", read_only = true, run = function() return 1 end }\n' "$n" \
    >"$pol/10_first.lua"
  for i in $(seq 1 "$n"); do start "m$n-$i" "$WORK/many$n" --policies "$pol"; done
  (close_ours; exec "$TG" watch --policies "$pol" --json >"$WORK/watch$n.out" 2>&1) &
  local watch=$!
  ok=1
  for i in $(seq 1 "$n"); do
    hello "m$n-$i"
    send "m$n-$i" '{"jsonrpc":"2.0","id":2,"method":"tools/list"}'
    call "m$n-$i" 3 "first$n" '{}'
  done
  for i in $(seq 1 "$n"); do
    wait_for "$WORK/m$n-$i.out" '"id":3,' || { ok=0; fail "$n servers: m$n-$i answers" "$(cat "$WORK/m$n-$i.err")"; }
  done
  [ $ok = 1 ] && pass "$n servers started together on one folder: all answer"
  wait_for "$WORK/watch$n.out" '"type":"watching"' || fail "$n servers: watch runs beside them" "$(cat "$WORK/watch$n.out")"

  run reload --policies "$pol" --json
  expect "$n servers: toolgate reload exits 0" 0
  local pids
  pids=$(for i in $(seq 1 "$n"); do echo "${PID[m$n-$i]}"; done)
  json_ok "$n servers and a watch: toolgate reload reached every one, once" \
    "len(objs) == $((n + 1)) and all(o['ok'] for o in objs) and
     set(str(o['pid']) for o in objs) >= set('''$pids'''.split()) and
     len(set(o['pid'] for o in objs)) == $((n + 1))"
  ok=1
  for i in $(seq 1 "$n"); do
    wait_for "$WORK/m$n-$i.err" "(control)" || { ok=0; fail "$n servers: m$n-$i reloaded" "$(cat "$WORK/m$n-$i.err")"; }
  done
  [ $ok = 1 ] && pass "$n servers: each says it reloaded"

  # a save: every server's folder watch reloads, and each client is told
  printf 'local tg = require "toolgate"\ntg.tool { name = "added", read_only = true, run = function() return 2 end }\n' \
    >"$pol/20_added.lua.tmp" && mv "$pol/20_added.lua.tmp" "$pol/20_added.lua"
  ok=1
  for i in $(seq 1 "$n"); do
    wait_for "$WORK/m$n-$i.out" 'notifications/tools/list_changed' || { ok=0; fail "$n servers: m$n-$i saw the save" "$(cat "$WORK/m$n-$i.err")"; }
    call "m$n-$i" 4 added '{}'
  done
  for i in $(seq 1 "$n"); do
    wait_for "$WORK/m$n-$i.out" '"id":4,' && reply "m$n-$i" 4 | grep -qF '"status":"ok"' ||
      { ok=0; fail "$n servers: m$n-$i runs the new tool" "$(reply "m$n-$i" 4)"; }
  done
  [ $ok = 1 ] && pass "$n servers: a save reached each (list_changed, the new tool runs)"

  ok=1
  for i in $(seq 1 "$n"); do
    stop "m$n-$i"
    [ "$STOPPED" = 0 ] || { ok=0; fail "$n servers: m$n-$i exits 0" "$STOPPED $(cat "$WORK/m$n-$i.err")"; }
  done
  kill -TERM $watch
  wait $watch
  [ $ok = 1 ] && pass "$n servers: each exits 0 when its client closes stdin"
  run log --json --tool "first$n" --limit 100
  json_ok "$n servers: every call is in the one database they share" "len(objs) == $n"
}
many 2
many 10

# ---- no policies folder: the built-in defaults ------------------------------------------

mkdir -p "$WORK/bare"
start bare "$WORK/bare"
hello bare
call bare 2 list_dir '{}'
if wait_for "$WORK/bare.out" '"id":2,' && reply bare 2 | grep -qF '"status":"ok"'; then
  pass "no policies folder: it answers, with the built-in tools"
else
  fail "no policies folder: it answers" "$(cat "$WORK/bare.out" "$WORK/bare.err")"
fi
stop bare
[ "$STOPPED" = 0 ] && grep -qF "running with the built-in defaults" "$WORK/bare.err" &&
  ! grep -qF "socket path" "$WORK/bare.err" &&
  pass "no policies folder: says it runs with the built-in defaults, exits 0" ||
  fail "no policies folder: says so, exits 0" "$STOPPED $(cat "$WORK/bare.err")"

# ---- where the audit trail goes ---------------------------------------------------------

# one call of list_dir on folder MARK by a server started with ARGS in DIR;
# then it stops. NOXDG=1: with no XDG_STATE_HOME (as MCP clients start
# it), and a HOME of ours, so that a database there would be seen
one_call() {
  local name=$1 dir=$2 mark=$3
  shift 3
  mkdir -p "$dir/$mark"
  (if [ "${NOXDG:-}" = 1 ]; then unset XDG_STATE_HOME; export HOME="$WORK/home"; fi
   start "$name" "$dir" "$@"
   hello "$name"
   call "$name" 2 list_dir "{\"path\":\"$mark\"}"
   wait_for "$WORK/$name.out" '"id":2,'
   stop "$name"
   exit "$STOPPED")
}
in_log() { # DB MARK: the call on MARK is in DB's audit trail
  [ -f "$1" ] && "$TG" log --db "$1" --json --limit 1000 | grep -qF "\"path\":\"$2\""
}
DEFAULT_DB="$XDG_STATE_HOME/toolgate/toolgate.db"
mkdir -p "$WORK/st/policies"

one_call db1 "$WORK/st" mark_db --policies policies --db "$WORK/st/given.db"
in_log "$WORK/st/given.db" mark_db && ! in_log "$DEFAULT_DB" mark_db &&
  pass "--db PATH: the audit trail goes there" || fail "--db PATH" "$(cat "$WORK/db1.err")"

one_call db2 "$WORK/st" mark_nodb --policies policies --no-db
! in_log "$DEFAULT_DB" mark_nodb && [ ! -e "$WORK/st/toolgate.db" ] &&
  pass "--no-db: no audit trail anywhere" || fail "--no-db" "$(cat "$WORK/db2.err")"

run serve --policies policies --db x.db --no-db
expect "--db and --no-db together: a usage error" 2 "contradict"

mkdir -p "$WORK/cfg/policies" "$WORK/elsewhere"
echo 'return { policies = "policies" }' >"$WORK/cfg/toolgate.lua"
NOXDG=1 one_call db3 "$WORK/elsewhere" mark_cfg --config "$WORK/cfg/toolgate.lua"
in_log "$WORK/cfg/toolgate.db" mark_cfg && [ ! -e "$WORK/elsewhere/toolgate.db" ] &&
  [ ! -e "$WORK/home/.local/state/toolgate/toolgate.db" ] &&
  pass "from a config: the audit trail is beside it, whatever the folder and environment" ||
  fail "from a config: beside it" "$(cat "$WORK/db3.err")"

mkdir -p "$WORK/cfg2/policies" "$WORK/cfg2/data"
echo 'return { policies = "policies", db = "data/audit.db" }' >"$WORK/cfg2/toolgate.lua"
NOXDG=1 one_call db4 "$WORK/elsewhere" mark_key --config "$WORK/cfg2/toolgate.lua"
in_log "$WORK/cfg2/data/audit.db" mark_key && [ ! -e "$WORK/cfg2/toolgate.db" ] &&
  pass "the config's db key, relative to the config: the audit trail goes there" ||
  fail "the config's db key" "$(cat "$WORK/db4.err")"

NOXDG=1 one_call db5 "$WORK/elsewhere" mark_opt --config "$WORK/cfg2/toolgate.lua" --db "$WORK/opt.db"
in_log "$WORK/opt.db" mark_opt && ! in_log "$WORK/cfg2/data/audit.db" mark_opt &&
  pass "--db overrides the config's db" || fail "--db over the config" "$(cat "$WORK/db5.err")"

mkdir -p "$WORK/cfg3/policies"
echo 'return { policies = "policies", db = false }' >"$WORK/cfg3/toolgate.lua"
NOXDG=1 one_call db6 "$WORK/elsewhere" mark_off --config "$WORK/cfg3/toolgate.lua"
[ ! -e "$WORK/cfg3/toolgate.db" ] && ! in_log "$DEFAULT_DB" mark_off &&
  pass "db = false in the config: no database" || fail "db = false" "$(cat "$WORK/db6.err")"

echo 'return { db = true }' >"$WORK/cfg3/bad.lua"
run serve --config "$WORK/cfg3/bad.lua"
expect "db = true in the config: an error naming the key" 2 "db must be a file name or false"

run serve --config "$WORK/cfg2/toolgate.lua" --print-config
one_line
json_ok "--print-config shows the database and the project, resolved" \
  "objs[0]['db'] == '$RWORK/cfg2/data/audit.db' and objs[0]['project'] == '$RWORK/cfg2'" \
  "$WORK/stdout.line"

# servers.NAME.prefix = false: shown, and anything but a boolean refused
echo 'return { db = false, servers = { s = { command = "true", prefix = false } } }' >"$WORK/cfg3/bare.lua"
run serve --config "$WORK/cfg3/bare.lua" --print-config
one_line
json_ok "--print-config shows a server's prefix = false" \
  "objs[0]['servers']['s']['prefix'] is False" "$WORK/stdout.line"
echo 'return { servers = { s = { command = "true", prefix = "no" } } }' >"$WORK/cfg3/bad2.lua"
run serve --config "$WORK/cfg3/bad2.lua"
expect "prefix = \"no\": an error naming the key" 2 "servers.s: prefix must be a boolean"

# ---- the project approvals are remembered for ------------------------------------------

mkdir -p "$WORK/pr/policies" "$WORK/projA" "$WORK/projB"
printf 'local tg = require "toolgate"\ntg.tool { name = "touchy", run = function() return "ran" end }\n' \
  >"$WORK/pr/policies/10_touchy.lua"
PDB="$WORK/pr/shared.db"
run approvals grant touchy --project "$WORK/projA" --db "$PDB"
expect "approvals grant for project A" 0
# touchy is asked for; this client cannot be asked: only an approval lets it run
touchy() { # NAME DIR ARGS...: the outcome's status of one call of touchy
  local name=$1 dir=$2
  shift 2
  start "$name" "$dir" "$@"
  hello "$name"
  call "$name" 2 touchy '{}'
  wait_for "$WORK/$name.out" '"id":2,'
  stop "$name"
  reply "$name" 2 | grep -oE '"status":"[a-z]+"'
}
[ "$(touchy pa "$WORK/pr" --policies policies --db "$PDB" --project "$WORK/projA")" = '"status":"ok"' ] &&
  [ "$(touchy pb "$WORK/pr" --policies policies --db "$PDB" --project "$WORK/projB")" = '"status":"rejected"' ] &&
  pass "--project DIR: the approvals remembered for DIR apply, not another's" ||
  fail "--project" "$(cat "$WORK/pa.out" "$WORK/pb.out")"
printf 'return { policies = "policies", db = "shared.db", project = "%s" }\n' "$WORK/projA" \
  >"$WORK/pr/toolgate.lua"
[ "$(touchy pc "$WORK/elsewhere" --config "$WORK/pr/toolgate.lua")" = '"status":"ok"' ] &&
  pass "the config's project key: its approvals apply" || fail "project key" "$(cat "$WORK/pc.out" "$WORK/pc.err")"
echo 'return { policies = "policies", db = "shared.db" }' >"$WORK/pr/toolgate.lua"
run approvals grant touchy --project "$WORK/pr" --db "$PDB"
[ "$(touchy pd "$WORK/elsewhere" --config "$WORK/pr/toolgate.lua")" = '"status":"ok"' ] &&
  pass "from a config without project: the project is the config's folder" ||
  fail "project: the config's folder" "$(cat "$WORK/pd.out" "$WORK/pd.err")"

# two servers on one database: an approval granted while they run reaches both
mkdir -p "$WORK/projC"
start pe "$WORK/pr" --policies policies --db "$PDB" --project "$WORK/projC"
start pf "$WORK/pr" --policies policies --db "$PDB" --project "$WORK/projC"
hello pe
hello pf
call pe 2 touchy '{}'
wait_for "$WORK/pe.out" '"id":2,'
reply pe 2 | grep -qF '"status":"rejected"' && pass "two servers, one database: asked for, rejected at first" ||
  fail "rejected before the grant" "$(reply pe 2)"
run approvals grant touchy --project "$WORK/projC" --db "$PDB"
both=0
for name in pe pf; do # each sees it once its snapshot has caught up
  end=$((SECONDS + WAIT_S))
  id=10
  while [ $SECONDS -lt $end ]; do # a round trip a try, not a sleep
    call $name $id touchy '{}'
    wait_for "$WORK/$name.out" "\"id\":$id," || break
    if reply $name $id | grep -qF '"status":"ok"'; then both=$((both + 1)); break; fi
    id=$((id + 1))
  done
done
[ $both = 2 ] && pass "an approval granted while they run reaches both servers through the database" ||
  fail "approval through the database" "$(tail -3 "$WORK/pe.out" "$WORK/pf.out")"
stop pe
stop pf

# ---- the shipped gateway example, copied ----------------------------------------------

cp -r "$REPO/examples/mcp-gateway" "$WORK/gw"
links=$(find "$WORK/gw" -type l)
[ -z "$links" ] && pass "examples/mcp-gateway holds no symlinks (a copy works anywhere)" ||
  fail "the example holds symlinks" "$links"
cmp -s "$REPO/policies/10_shell.lua" "$WORK/gw/policies/10_shell.lua" &&
  pass "its 10_shell.lua is the shipped policies/10_shell.lua" ||
  fail "examples/mcp-gateway/policies/10_shell.lua differs from policies/10_shell.lua" "copy it again"
run check "$WORK/gw/policies"
expect "the copied example's policies load" 0
run serve --config "$WORK/gw/toolgate.lua" --print-config
one_line
json_ok "the copied example's config: its policies and its database are in the copy" \
  "objs[0]['policies'] == '$RWORK/gw/policies' and objs[0]['db'] == '$RWORK/gw/toolgate.db'" \
  "$WORK/stdout.line"

# ---- a gateway whose server is toolgate serve, in the gateway's folder -----------------

# Run where the gateway starts it, the server would find ./toolgate.lua —
# the gateway's — and start the gateway's servers again, without end.
mkdir -p "$WORK/loop/policies"
cat >"$WORK/loop/toolgate.lua" <<EOF
return { policies = "policies",
  servers = { inner = { command = "$TG", args = { "serve", "--policies", "policies", "--no-db" } } } }
EOF
RLOOP=$(cd "$WORK/loop" && pwd -P)/toolgate.lua
(cd "$WORK/loop" && TOOLGATE_GATEWAY_CONFIGS="$RLOOP" "$TG" serve --config toolgate.lua --no-db \
  </dev/null >"$WORK/stdout" 2>"$WORK/stderr")
RC=$? ERR=$(cat "$WORK/stderr")
expect "serve refuses a config named outright that started it (a gateway's own)" 2 \
  "is the config of a toolgate gateway that started this one"
printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"ping"}' |
  (cd "$WORK/loop" && TOOLGATE_GATEWAY_CONFIGS="$RLOOP" "$TG" serve --policies policies \
     --no-db --log-level info >"$WORK/stdout" 2>"$WORK/stderr")
RC=$? ERR=$(cat "$WORK/stderr")
expect "./toolgate.lua found so is passed over, said in the log" 0 \
  "is the config of the toolgate gateway that started this one as its server: not read"
grep -q "upstream inner" "$WORK/stderr" &&
  fail "... and its servers are not started" "$(head -c 1500 "$WORK/stderr")" ||
  pass "... and its servers are not started"
deep=$(printf '/g%d/toolgate.lua\n' 1 2 3 4 5 6 7 8)
printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"ping"}' |
  (cd "$WORK/loop" && TOOLGATE_GATEWAY_CONFIGS="$deep" "$TG" serve --config toolgate.lua \
     --no-db >"$WORK/stdout" 2>"$WORK/stderr")
RC=$? ERR=$(cat "$WORK/stderr")
expect "gateways nested 8 deep: taken for a loop of configs" 2 "nested 8 deep"

# no server left a crash or sanitizer report on its stderr
reports=$(grep -lE 'Sanitizer|runtime error|Segmentation' "$WORK"/*.err 2>/dev/null)
[ -z "$reports" ] && pass "no server reported a crash or a sanitizer error" ||
  fail "a server reported an error" "$(head -c 2000 $reports)"

finish
