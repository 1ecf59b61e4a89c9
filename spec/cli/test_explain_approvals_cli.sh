#!/usr/bin/env bash
# test_explain_approvals_cli.sh — `toolgate explain --event` looks the
# call up in the remembered approvals the hook would, read-only: a user's
# "always" granted with `toolgate approvals grant` (for a session, or a
# project with a pattern) turns the starter's ask into the hook's allow,
# and explain shows that allow, naming the approval (scope, tool, when,
# id), while writing nothing; another session or project asks as before;
# a rule's deny still denies; a revoke is seen; --no-db and a missing
# database say the approvals were not consulted.
#
#   spec/cli/test_explain_approvals_cli.sh PATH/TO/toolgate
. "$(dirname "$0")/harness.sh" explain-approvals "$@"

export HOME="$WORK/home"
mkdir -p "$HOME" "$WORK/proj" "$WORK/other"
run init policies
expect "init" 0
PROJ=$(cd "$WORK/proj" && pwd -P)
OTHER=$(cd "$WORK/other" && pwd -P)
DB="$XDG_STATE_HOME/toolgate/toolgate.db"

# event FILE SESSION CWD COMMAND: a Claude Code PreToolUse of Bash
event() {
  printf '{"session_id":"%s","cwd":"%s","transcript_path":"%s/t.jsonl","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"%s"}}' \
    "$2" "$3" "$WORK" "$4" >"$WORK/$1"
}
# hook FILE: the hook's answer to it, in-process, into $WORK/hook_answer
hook() {
  (cd "$WORK" && "$TG" hook claude-code --policies "$WORK/policies" --no-resident \
    <"$WORK/$1" >"$WORK/hook_answer" 2>"$WORK/stderr")
  RC=$?
  OUT=$(cat "$WORK/hook_answer")
}
# explain FILE ARGS...: explain --event of it, text into $WORK/stdout
explain() {
  local f=$1
  shift
  run explain --event "$f" --agent claude --policies policies "$@"
}
same_answer() { # NAME: explain's agent gets exactly the hook's last answer
  if [ -s "$WORK/hook_answer" ] && grep -qF "$(cat "$WORK/hook_answer")" "$WORK/stdout"; then
    pass "$1"; else fail "$1" "hook: $(cat "$WORK/hook_answer") explain: $OUT"; fi
}
db_dump() { # the database's content, read-only
  python3 - "$DB" <<'PY'
import sqlite3, sys, hashlib
c = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
print(hashlib.sha256("\n".join(c.iterdump()).encode()).hexdigest())
PY
}

event ev_a1.json a1 "$PROJ" "make"
event ev_a2.json a2 "$PROJ" "make"
event ev_a2_other.json a2 "$OTHER" "make"
event ev_a1_rm.json a1 "$PROJ" "rm -rf build"

# ---- an approval for a session ------------------------------------------------
hook ev_a1.json
if [ "$RC" -eq 0 ] && [ ! -s "$WORK/hook_answer" ]; then
  pass "before any grant, the hook leaves the session's make to the agent (the starter asks)"
else fail "before any grant, the hook leaves the session's make to the agent (the starter asks)" "exit $RC: $OUT"; fi
run approvals grant exec --session a1
expect "approvals grant exec --session a1" 0 "granted approval 1" stdout
hook ev_a1.json
if grep -qF '"permissionDecision":"allow"' "$WORK/hook_answer"; then
  pass "the hook then allows the session's make (remembered)"
else fail "the hook then allows the session's make (remembered)" "exit $RC: $OUT"; fi
before=$(db_dump)
explain ev_a1.json
expect "explain --event: the hook's allow" 0 '"permissionDecision":"allow"' stdout
same_answer "explain --event: the agent gets exactly the hook's answer"
expect "explain --event names the approval: id, scope, tool, session, when" 0 \
  "approvals the call is allowed by remembered approval 1: all calls of exec, for session a1, granted " stdout
expect "explain --event: the dry run says the approval answers the ask" 0 \
  "approval  approved by a remembered approve-always answer" stdout
explain ev_a1.json --json
json_ok "explain --event --json: approvals.answered_by is approval 1" \
  'objs[0]["approvals"]["consulted"] is True and
   objs[0]["approvals"]["database"] == "'"$DB"'" and
   objs[0]["approvals"]["answered_by"]["id"] == 1 and
   objs[0]["approvals"]["answered_by"]["scope"] == "tool" and
   objs[0]["approvals"]["answered_by"]["tool"] == "exec" and
   objs[0]["approvals"]["answered_by"]["where"] == "session" and
   objs[0]["approvals"]["answered_by"]["session"] == "a1" and
   isinstance(objs[0]["approvals"]["answered_by"]["created"], (int, float)) and
   objs[0]["answer"]["output"]["hookSpecificOutput"]["permissionDecision"] == "allow"'
after=$(db_dump)
if [ -n "$before" ] && [ "$before" = "$after" ] && grep -qF '"answered_by":{"id":1' "$WORK/stdout"; then
  pass "explain --event used the approval and left the database as it was (no audit row)"
else fail "explain --event used the approval and left the database as it was (no audit row)" \
  "before $before after $after: $OUT"; fi

# another session: asked as before, by the hook and by explain
hook ev_a2.json
explain ev_a2.json
if [ ! -s "$WORK/hook_answer" ] && grep -qF "approvals none in $DB covers the call" "$WORK/stdout" &&
  grep -qF "the agent gets: exit code 0, no output (its own permission flow)" "$WORK/stdout"; then
  pass "another session: no approval covers it, left to the agent as the hook leaves it"
else fail "another session: no approval covers it, left to the agent as the hook leaves it" "hook: $(cat "$WORK/hook_answer") explain: $OUT"; fi

# a rule's deny still denies
hook ev_a1_rm.json
explain ev_a1_rm.json --json
json_ok "a rule's deny: explain denies as the hook, no approval answered" \
  'objs[0]["approvals"]["consulted"] is True and objs[0]["approvals"]["answered_by"] is None and
   objs[0]["answer"]["output"]["hookSpecificOutput"]["permissionDecision"] == "deny"'
grep -qF '"permissionDecision":"deny"' "$WORK/hook_answer" ||
  fail "the hook denies rm -rf too" "$(cat "$WORK/hook_answer")"

# ---- an approval for a project, by pattern ------------------------------------
run approvals grant exec --pattern 'command=make*' --project "$PROJ"
expect "approvals grant exec --pattern command=make* --project" 0 "granted approval 2" stdout
hook ev_a2.json
explain ev_a2.json
if grep -qF '"permissionDecision":"allow"' "$WORK/hook_answer" &&
  grep -qF "approvals the call is allowed by remembered approval 2: calls of exec where command matches make*, for project $PROJ, granted " "$WORK/stdout"; then
  pass "the project's approval: the hook allows, explain names approval 2"
else fail "the project's approval: the hook allows, explain names approval 2" "hook: $(cat "$WORK/hook_answer") explain: $OUT"; fi
same_answer "the project's approval: the agent gets exactly the hook's answer"
hook ev_a2_other.json
explain ev_a2_other.json
if [ ! -s "$WORK/hook_answer" ] && grep -qF "approvals none in $DB covers the call" "$WORK/stdout" &&
  grep -qF "no output (its own permission flow)" "$WORK/stdout"; then
  pass "another project: asked as before, by the hook and by explain"
else fail "another project: asked as before, by the hook and by explain" "hook: $(cat "$WORK/hook_answer") explain: $OUT"; fi

# a revoke is seen
run approvals revoke 2
expect "approvals revoke 2" 0
hook ev_a2.json
explain ev_a2.json
if [ ! -s "$WORK/hook_answer" ] && grep -qF "approvals none in $DB covers the call" "$WORK/stdout"; then
  pass "after a revoke: asked again, by the hook and by explain"
else fail "after a revoke: asked again, by the hook and by explain" "hook: $(cat "$WORK/hook_answer") explain: $OUT"; fi

# ---- not consulted -----------------------------------------------------------------
explain ev_a1.json --no-db
if [ "$RC" -eq 0 ] &&
  grep -qF "approvals remembered approvals were not consulted: --no-db" "$WORK/stdout" &&
  grep -qF "the agent gets: exit code 0, no output (its own permission flow)" "$WORK/stdout"; then
  pass "--no-db: the approvals were not consulted, and the make is left to the agent"
else fail "--no-db: the approvals were not consulted, and the make is left to the agent" "exit $RC: $OUT $ERR"; fi
explain ev_a1.json --db "$WORK/none.db"
if [ "$RC" -eq 0 ] && [ ! -e "$WORK/none.db" ] &&
  grep -qF "approvals remembered approvals were not consulted: no database at $WORK/none.db" "$WORK/stdout"; then
  pass "no such database: the approvals were not consulted, and none is made"
else fail "no such database: the approvals were not consulted, and none is made" "exit $RC: $OUT $ERR"; fi

finish
