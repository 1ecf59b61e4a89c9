#!/usr/bin/env bash
# test_store_cli.sh — the storage commands of the `toolgate` command line,
# black box: the audit trail (`toolgate log`, with --follow from another
# process), remembered approvals (`toolgate approvals`, the tty prompt's
# scopes through a pseudo-terminal; no credential of theirs in the file,
# its WAL or the list), the file private however its path is reached,
# --db / --no-db, and bad input to each (exit 2 with a message that says
# what was wrong).
#
#   spec/cli/test_store_cli.sh PATH/TO/toolgate
#
# Everything happens in a temp folder, XDG_STATE_HOME included. JSON and
# the pseudo-terminal are driven with python3.
. "$(dirname "$0")/harness.sh" store-cli "$@"
FOLLOWER=
at_exit '[ -n "$FOLLOWER" ] && kill "$FOLLOWER" 2>/dev/null'

mkdir -p "$WORK/pol"
cat >"$WORK/pol/10.lua" <<'EOF'
local tg = require "toolgate"
tg.tool { name = "echo", read_only = true, run = function(args) return args end }
tg.tool { name = "sh", run = function(args) return { ran = args.command } end }
tg.rule { name = "ask-sh", tools = { "sh" },
  check = function(call) return tg.ask("run " .. tostring(call.args.command)) end }
EOF
P=(--policies "$WORK/pol")
DEFAULT_DB=$XDG_STATE_HOME/toolgate/toolgate.db

# ---- the audit trail -----------------------------------------------------

run call echo '{"n":1}' "${P[@]}"
expect "a call is recorded in the default database" 0
if [ -f "$DEFAULT_DB" ]; then pass "the default database is made"; else
  fail "the default database is made" "no $DEFAULT_DB"; fi
run call sh '{"command":"npm test"}' "${P[@]}" --session s2 --approve=deny
expect "a rejected call exits 1" 1
run log
expect "log shows the calls as a table" 0 "TOOL" stdout
if grep -q 'echo .*allow .*ok' "$WORK/stdout" &&
   grep -q 's2 .*sh .*ask .*ask-sh .*rejected' "$WORK/stdout"; then
  pass "log's rows: session, tool, verdict, rule, status"
else
  fail "log's rows: session, tool, verdict, rule, status" "$OUT"
fi
run log --json
json_ok "log --json: one record a line, oldest first" \
  'len(objs) == 2 and objs[0]["tool"] == "echo" and objs[1]["tool"] == "sh"
   and objs[1]["decision"]["rule"] == "ask-sh"
   and objs[1]["decision"]["approval"] == "mode-reject"
   and objs[1]["error"]["code"] == "REJECTED" and objs[0]["args"] == {"n": 1}
   and objs[0]["result"] == {"n": 1} and objs[0]["id"] < objs[1]["id"]'
run log --json --status rejected
json_ok "log --status filters" 'len(objs) == 1 and objs[0]["status"] == "rejected"'
run log --json --session s2 --tool sh --since 1h --limit 5
json_ok "log --session --tool --since --limit" 'len(objs) == 1'
run log --json --limit 1
json_ok "log --limit N: the latest N" 'len(objs) == 1 and objs[0]["tool"] == "sh"'
run log --since 2099-01-01
expect "log with nothing matching says so" 0
if grep -qF "no calls recorded that match" "$WORK/stderr"; then
  pass "log: 'no calls recorded that match'"; else
  fail "log: 'no calls recorded that match'" "$ERR"; fi

run log --since yesterday
expect "log --since garbage: exit 2" 2 "'yesterday' is not a time"
run log --limit 0
expect "log --limit 0: exit 2" 2 "'--limit' needs a whole number"
run log --limit 12abc
expect "log --limit 12abc: exit 2" 2 "not '12abc'"
run log --status fine
expect "log --status unknown: exit 2" 2 "takes ok, error, denied"
run log --nope
expect "log unknown option: exit 2" 2 "unknown option '--nope'"
run log extra
expect "log takes no argument: exit 2" 2 "unexpected argument 'extra'"
run log --db "$WORK/none.db"
expect "log on a missing database: exit 2 naming it" 2 "$WORK/none.db: there is no such file"
run log --db ""
expect "log --db '': exit 2" 2 "needs a file name"
printf 'not a database at all, just text\n%.0s' {1..200} >"$WORK/junk.db"
run log --db "$WORK/junk.db"
expect "log on a corrupt file: exit 2 naming it" 2 "$WORK/junk.db: cannot read it: it is not a database"
run log --help
expect "log --help" 0 "--follow" stdout

# Control characters an agent put in a tool name do not reach the terminal.
run call "$(printf 'ev\033[2Jil')" '{}' "${P[@]}"
run log
if grep -q "$(printf '\033')" "$WORK/stdout"; then
  fail "log shows control characters as ?" "an escape reached stdout"
else
  pass "log shows control characters as ?"
fi

# ---- --db and --no-db ----------------------------------------------------

run call echo '{}' "${P[@]}" --db "$WORK/mine.db"
expect "call --db PATH" 0
run log --db "$WORK/mine.db" --json
json_ok "the call went into --db's file" 'len(objs) == 1'
run call echo '{}' "${P[@]}" --no-db --db "$WORK/other.db"
expect "--db with --no-db: exit 2" 2 "contradict"
run call echo '{}' "${P[@]}" --no-db
expect "call --no-db" 0
run log --json
json_ok "--no-db recorded nothing" 'len(objs) == 3'
run call echo '{}' "${P[@]}" --db "$WORK"
expect "call --db on a folder: exit 2 naming it" 2 "$WORK: it is not a regular file"
sqlite3 "$WORK/newer.db" "PRAGMA user_version=9; CREATE TABLE t(x);" 2>/dev/null
run call echo '{}' "${P[@]}" --db "$WORK/newer.db"
expect "a database of another program: exit 2" 2 "another program's"
run explain sh '{"command":"x"}' "${P[@]}" --no-db
expect "explain --no-db" 0

# ---- log --follow, from another process ----------------------------------

(cd "$WORK" && exec "$TG" log --follow --json >"$WORK/follow.out" 2>"$WORK/follow.err") &
FOLLOWER=$!
sleep 0.5
run call echo '{"live":true}' "${P[@]}"
seen=
for _ in $(seq 1 40); do
  if grep -q '"live":true' "$WORK/follow.out" 2>/dev/null; then seen=1; break; fi
  sleep 0.1
done
if [ -n "$seen" ] && [ "$(grep -c . "$WORK/follow.out")" -eq 4 ]; then
  pass "log --follow prints a call another process makes, after the rest"
else
  fail "log --follow prints a call another process makes, after the rest" \
    "$(cat "$WORK/follow.out" "$WORK/follow.err")"
fi
kill "$FOLLOWER" 2>/dev/null
wait "$FOLLOWER" 2>/dev/null
FOLLOWER=

# ---- approvals -------------------------------------------------------------

run call sh '{"command":"npm test --ci"}' "${P[@]}" --approve=deny
expect "before a grant, an ask is rejected" 1
run approvals grant sh --pattern 'command=npm test*' --until 2h
expect "approvals grant --pattern --until" 0 "granted approval 1" stdout
run call sh '{"command":"npm test --ci"}' "${P[@]}" --approve=deny
expect "a granted pattern covers the call (project: this folder)" 0
run call sh '{"command":"npm run build"}' "${P[@]}" --approve=deny
expect "the pattern does not cover another command" 1
run approvals grant sh --args '{"command":"ls"}' --session s9 --json
json_ok "approvals grant --args --session --json" 'objs == [{"id": 2}]'
run approvals list
expect "approvals list" 0 "command = npm test*" stdout
if grep -qF 'args {"command":"ls"}' "$WORK/stdout" &&
   grep -qF "session s9" "$WORK/stdout" && grep -qF "project /" "$WORK/stdout"; then
  pass "approvals list: what each covers, where"
else
  fail "approvals list: what each covers, where" "$OUT"
fi
run approvals list --json
json_ok "approvals list --json" \
  'len(objs) == 2 and objs[0]["scope"] == "pattern" and objs[0]["arg"] == "command"
   and objs[0]["glob"] == "npm test*" and objs[0]["until"] > 0
   and objs[1]["args"] == {"command": "ls"} and objs[1]["session"] == "s9"'
run log --json --limit 1 --status ok
json_ok "the audit names the approval that covered a call" \
  'objs[0]["decision"]["approval"] == "remembered"
   and objs[0]["decision"]["approval_id"] == 1'
run approvals revoke 1
expect "approvals revoke ID" 0 "revoked approval 1" stdout
run call sh '{"command":"npm test --ci"}' "${P[@]}" --approve=deny
expect "a revoked approval asks again" 1
run approvals list --all --json
json_ok "approvals list --all shows the revoked one" \
  'len(objs) == 2 and objs[0]["revoked"] > 0'
run approvals revoke 1
expect "revoking it again: exit 2" 2 "no approval in force has id 1"
run approvals revoke 99
expect "approvals revoke an unknown id: exit 2" 2 "no approval in force has id 99"
run approvals revoke abc
expect "approvals revoke abc: exit 2" 2 "a whole number, not 'abc'"
run approvals revoke
expect "approvals revoke without an id: exit 2" 2 "which one?"
run approvals grant
expect "approvals grant without a tool: exit 2" 2 "which tool?"
run approvals grant sh --pattern 'npm test*'
expect "approvals grant --pattern without ARG=: exit 2" 2 "ARG=GLOB"
run approvals grant sh --pattern 'command=[x'
expect "approvals grant with a bad glob: exit 2" 2 "is not valid"
run approvals grant sh --until soon
expect "approvals grant --until garbage: exit 2" 2 "'soon' is not a time"
run approvals grant sh --until 2001-01-01
expect "approvals grant --until in the past: exit 2" 2 "already past"
run approvals grant sh --args '{"a":1,"a":2}'
expect "approvals grant --args with a duplicate key: exit 2" 2 'duplicate key "a"'
run approvals grant sh --args '[1]'
expect "approvals grant --args not an object: exit 2" 2 "JSON object"
run approvals grant sh --args '{}' --pattern 'a=b'
expect "approvals grant --args with --pattern: exit 2" 2 "give one"
run approvals grant sh --project . --session s
expect "approvals grant --project with --session: exit 2" 2 "give one"
run approvals grant sh --project "$WORK/nowhere"
expect "approvals grant --project missing: exit 2" 2 "$WORK/nowhere"
run approvals list --until 2h
expect "approvals list with a grant option: exit 2" 2 "is for grant"
run approvals frobnicate
expect "approvals unknown subcommand: exit 2" 2 "unknown subcommand 'frobnicate'"
run approvals
expect "approvals without a subcommand: exit 2" 2 "missing"
run approvals list --db "$WORK/none.db"
expect "approvals list on a missing database: exit 2" 2 "there is no such file"

# ---- no secret of an approval is kept raw ----------------------------------
# One credential of each shape the audit masks; the database, its WAL (held
# open by a follower meanwhile) and approvals list must hold none of them.

SDB=$WORK/secret.db
SECRETS=(AKIAQWERTYUIOPASDF12 ghp_a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8
  github_pat_11ABCDEFG0123456789 sEcReTtOkEn.12345 MIIEsecretpemBODYxyz)
SECRET_ARGS='{"command":"deploy AKIAQWERTYUIOPASDF12 ghp_a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8 github_pat_11ABCDEFG0123456789_abcdefghijklmnop -H \"Authorization: Bearer sEcReTtOkEn.12345\" -----BEGIN RSA PRIVATE KEY-----\nMIIEsecretpemBODYxyz\n-----END RSA PRIVATE KEY-----"}'
no_secret_in() { # name file...
  local name=$1 s f
  shift
  for f in "$@"; do
    [ -f "$f" ] || continue
    for s in "${SECRETS[@]}"; do
      if grep -aqF -- "$s" "$f"; then fail "$name" "$f holds $s"; return; fi
    done
  done
  pass "$name"
}
run approvals grant sh --db "$SDB"  # makes the file
(cd "$WORK" && exec "$TG" log --follow --db "$SDB" >/dev/null 2>&1) &
SECRET_FOLLOWER=$!
at_exit 'kill "$SECRET_FOLLOWER" 2>/dev/null'
run approvals revoke 1 --db "$SDB"
run approvals grant sh --args "$SECRET_ARGS" --session s --db "$SDB"
expect "approvals grant --args with credentials in them" 0 "granted approval 2" stdout
run call sh "$SECRET_ARGS" "${P[@]}" --session s --approve=deny --db "$SDB"
expect "the sealed grant covers the same args (matched by digest)" 0
run call sh '{"command":"deploy AKIAQWERTYUIOPASDF13"}' "${P[@]}" --session s --approve=deny --db "$SDB"
expect "... and no other args" 1
run approvals grant sh --pattern 'command=curl *Bearer sEcReTtOkEn.12345*' --db "$SDB"
expect "approvals grant --pattern with a bearer token: refused" 2 "credential"
if grep -qF "exact args" "$WORK/stderr" && ! grep -qF sEcReTtOkEn "$WORK/stderr"; then
  pass "the refusal says what to do, without echoing the secret"
else fail "the refusal says what to do, without echoing the secret" "$ERR"; fi
run approvals grant sh --pattern 'command=*AKIAQWERTYUIOPASDF12*' --db "$SDB"
expect "approvals grant --pattern with an AWS key id: refused" 2 "credential"
run approvals list --json --all --db "$SDB"
cp "$WORK/stdout" "$WORK/list.json"
json_ok "approvals list --json shows the args masked" \
  'objs[1]["scope"] == "args" and "[REDACTED:aws-access-key]" in objs[1]["args"]["command"]
   and "Bearer [REDACTED]" in objs[1]["args"]["command"]
   and "[REDACTED:private-key]" in objs[1]["args"]["command"]'
run approvals list --db "$SDB"
cp "$WORK/stdout" "$WORK/list.txt"
no_secret_in "approvals list (--json and table) shows no credential" \
  "$WORK/list.json" "$WORK/list.txt"
if [ -s "$SDB-wal" ]; then pass "the WAL is in use while checked"
else fail "the WAL is in use while checked" "no $SDB-wal"; fi
no_secret_in "neither the database nor its WAL holds a credential" \
  "$SDB" "$SDB-wal" "$SDB-journal"
kill "$SECRET_FOLLOWER" 2>/dev/null; wait "$SECRET_FOLLOWER" 2>/dev/null
no_secret_in "... nor the database once checkpointed and closed" "$SDB" "$SDB-wal"

# ---- the database is private however its path is reached -----------------

ln -s "$WORK/made-through-link.db" "$WORK/dangling.db"
run approvals grant sh --db "$WORK/dangling.db"
expect "a database path that is a dangling symlink: refused" 2 "symbolic link"
if [ ! -e "$WORK/made-through-link.db" ]; then pass "... and nothing made at its target"
else fail "... and nothing made at its target" "$(ls -l "$WORK/made-through-link.db")"; fi
mkdir -p "$WORK/realdir" && ln -s "$WORK/realdir" "$WORK/linkdir"
(umask 000; cd "$WORK" && "$TG" approvals grant sh --db "$WORK/linkdir/x.db" >/dev/null 2>&1)
if [ "$(stat -c %a "$WORK/realdir/x.db")" = 600 ]; then
  pass "a database made through a symlinked folder under umask 0 is 0600"
else fail "a database made through a symlinked folder under umask 0 is 0600" \
  "$(ls -l "$WORK/realdir")"; fi
if [ "$(id -u)" = 0 ]; then
  : >"$WORK/planted.db" && chmod 666 "$WORK/planted.db" && chown 65534 "$WORK/planted.db"
  run approvals grant sh --db "$WORK/planted.db"
  expect "a database file of another user: refused" 2 "belongs to another user"
else
  pass "a database file of another user: skipped (needs root)"
fi

# ---- the tty prompt offers the scopes ------------------------------------

if python3 -c 'import pty' 2>/dev/null; then
  python3 - "$TG" "$WORK" >"$WORK/pty.out" 2>&1 <<'EOF'
import os, pty, sys, time, select
tg, work = sys.argv[1], sys.argv[2]
pid, fd = pty.fork()
if pid == 0:
    os.chdir(work)
    os.execv(tg, [tg, "call", "sh", '{"command":"make -j8"}',
                  "--policies", work + "/pol", "--session", "tty"])
out = b""
def until(text, timeout=10):
    global out
    end = time.time() + timeout
    while text.encode() not in out and time.time() < end:
        r, _, _ = select.select([fd], [], [], 0.1)
        if r:
            try: out += os.read(fd, 4096)
            except OSError: break
    if text.encode() not in out:
        print("never saw %r in %r" % (text, out)); sys.exit(1)
for prompt, answer in [("approve?", "A"), ("[t/a/p]", "p"),
                       ("ARG=GLOB", "command=make *"), ("[s/p]", "s"),
                       ("until", "1d")]:
    until(prompt)
    os.write(fd, (answer + "\n").encode())
until("status")
_, st = os.waitpid(pid, 0)
sys.exit(os.WEXITSTATUS(st))
EOF
  RC=$?
  if [ "$RC" -eq 0 ]; then pass "the tty prompt: always, a pattern, the session, until"
  else fail "the tty prompt: always, a pattern, the session, until" "$(cat "$WORK/pty.out")"; fi
  run approvals list --json
  json_ok "the tty answer is stored as said" \
    'any(o["scope"] == "pattern" and o["glob"] == "make *" and o["where"] == "session"
         and o["session"] == "tty" and o["until"] > 0 for o in objs)'
  run call sh '{"command":"make -j2"}' "${P[@]}" --session tty --approve=deny
  expect "the tty's approval covers the next matching call" 0
  # a pattern holding a credential is refused, and the prompt asks again
  python3 - "$TG" "$WORK" >"$WORK/pty2.out" 2>&1 <<'EOF'
import os, pty, sys, time, select
tg, work = sys.argv[1], sys.argv[2]
pid, fd = pty.fork()
if pid == 0:
    os.chdir(work)
    os.execv(tg, [tg, "call", "sh", '{"command":"curl -H Bearer sEcReTtOkEn.12345"}',
                  "--policies", work + "/pol", "--session", "tty2", "--db",
                  work + "/tty2.db"])
out = b""
def until(text, after=0, timeout=10):
    global out
    end = time.time() + timeout
    while text.encode() not in out[after:] and time.time() < end:
        r, _, _ = select.select([fd], [], [], 0.1)
        if r:
            try: out += os.read(fd, 4096)
            except OSError: break
    if text.encode() not in out[after:]:
        print("never saw %r in %r" % (text, out)); sys.exit(1)
for prompt, answer in [("approve?", "A"), ("[t/a/p]", "p"),
                       ("ARG=GLOB", "command=curl -H Bearer sEcReTtOkEn.12345*"),
                       ("[s/p]", "s"), ("until", "")]:
    until(prompt)
    mark = len(out)
    os.write(fd, (answer + "\n").encode())
until("credential", mark)
until("approve?", mark)
os.write(fd, b"y\n")
until("status")
_, st = os.waitpid(pid, 0)
sys.exit(os.WEXITSTATUS(st))
EOF
  RC=$?
  if [ "$RC" -eq 0 ]; then pass "the tty prompt: a pattern with a credential is refused, then asked again"
  else fail "the tty prompt: a pattern with a credential is refused, then asked again" "$(cat "$WORK/pty2.out")"; fi
  no_secret_in "... and the database holds no credential" "$WORK/tty2.db"
else
  echo "skip the tty prompt (python3 has no pty module)"
fi

# ---- toolgate search: messages and calls, full text -------------------
SDB=$WORK/search.db
run call echo '{"note":"the walrus sleeps"}' "${P[@]}" --db "$SDB" --session walrus-s
expect "a call to search for" 0
# messages as a host records them (the triggers keep the index in step)
sqlite3 "$SDB" "INSERT INTO sessions (id, project, title, started) VALUES
  ('walrus-s', '$WORK', 'walruses', 1700000000000);
  INSERT INTO messages (session, role, content, ts) VALUES
  ('walrus-s', 'user', 'do walrus walrus sleep in water? $(printf '\033[2J')', 1700000000001),
  ('walrus-s', 'assistant', 'let me look', 1700000000002);" ||
  fail "messages inserted" "sqlite3 failed"
run search walrus --db "$SDB"
expect "search finds messages and calls" 0 "[walrus]" stdout
if grep -q $'\033\\[2J' "$WORK/stdout"; then
  fail "search shows no control characters" "$OUT"
else pass "search shows no control characters"; fi
run search walrus --db "$SDB" --json
json_ok "search --json: both kinds, bm25 order, snippets" \
  'len(objs) == 2 and {o["kind"] for o in objs} == {"message", "call"}
   and objs[0]["score"] <= objs[1]["score"] and all("[walrus]" in o["snippet"] for o in objs)'
run search walrus --db "$SDB" --json --limit 1
json_ok "search --limit" 'len(objs) == 1'
run search 'tool:echo' --db "$SDB" --json
json_ok "search a column: calls by tool" 'len(objs) == 1 and objs[0]["tool"] == "echo"'
run search walrus --db "$SDB" --session other
expect "search --session: nothing elsewhere (exit 1)" 1 "nothing matches"
run search '"unbalanced' --db "$SDB"
expect "bad FTS syntax: exit 2, a clear error" 2 "bad search query"
run search 'nosuch: x' --db "$SDB"
expect "an unknown column: exit 2" 2 "bad search query"
run search walrus --db "$SDB" --limit 0
expect "search --limit 0 is refused" 2 "--limit"
run search --db "$SDB"
expect "search without a query" 2
run search walrus --db "$WORK/none.db"
expect "search in a missing file" 2 "no such file"

# ---- toolgate export / import ----------------------------------------
run call echo '{"note":"<script>alert(1)</script>"}' "${P[@]}" --db "$SDB" --session walrus-s
run call sh '{"command":"rm -rf /"}' "${P[@]}" --db "$SDB" --session walrus-s --approve=deny
run export walrus-s --db "$SDB" -o "$WORK/w.json"
expect "export --format json (the default) to a file" 0
run export walrus-s --db "$SDB" --format markdown
expect "export --format markdown" 0 "| time | tool | decision | decided by | status | error | ms |" stdout
run export walrus-s --db "$SDB" --format html -o "$WORK/w.html"
expect "export --format html" 0
if grep -q '<script' "$WORK/w.html"; then fail "the HTML page has no script" "$(cat "$WORK/w.html")"
else pass "the HTML page has no script"; fi
run import "$WORK/w.json" --db "$WORK/other.db" --json
json_ok "import into another file: the same id, everything stored" \
  'objs[0]["session"] == "walrus-s" and not objs[0]["renamed"] and objs[0]["messages"] == 2
   and objs[0]["calls"] == 3 and objs[0]["skipped"] == []'
run export walrus-s --db "$WORK/other.db" -o "$WORK/w2.json"
if cmp -s "$WORK/w.json" "$WORK/w2.json"; then pass "export -> import -> export: the same bytes"
else fail "export -> import -> export: the same bytes" "$(diff "$WORK/w.json" "$WORK/w2.json" | head)"; fi
run import "$WORK/w.json" --db "$SDB"
expect "import into the file that has the id: a new one" 0 "a new id" stdout
printf '{"format":"toolgate-session","version":9}' >"$WORK/v9.json"
run import "$WORK/v9.json" --db "$SDB"
expect "import of an unknown version: exit 2" 2 "version 9 is not known"
printf '{"format":"toolgate-session","version":1,"session":{"id":"d","started":1},"calls":[],"calls":[]}' >"$WORK/dup.json"
run import "$WORK/dup.json" --db "$SDB"
expect "import with a duplicate key: exit 2, nothing stored" 2 "duplicate key"
mkfifo "$WORK/fifo"
run import "$WORK/fifo" --db "$SDB"
expect "import of a FIFO: refused, no hang" 2 "FIFO"
run export nobody --db "$SDB"
expect "export of an unknown session" 2 "no session 'nobody'"
run export walrus-s --db "$SDB" --format pdf
expect "export --format pdf is refused" 2 "json, markdown or html"
# the page in a real browser: what it shows, as text
CHROME=$(command -v chromium || command -v chromium-browser || true)
if [ -n "$CHROME" ]; then
  OUTDIR=${TG_TEST_OUTPUT:-$WORK}
  mkdir -p "$OUTDIR"
  timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu --user-data-dir="$WORK/chrome" \
    --screenshot="$OUTDIR/export.png" --window-size=1200,1600 "file://$WORK/w.html" \
    >/dev/null 2>&1
  timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu --user-data-dir="$WORK/chrome" \
    --dump-dom "file://$WORK/w.html" >"$WORK/dom.html" 2>/dev/null
  why=$(python3 - "$WORK/dom.html" <<'EOF'
import sys, html.parser
class P(html.parser.HTMLParser):
    def __init__(s):
        super().__init__(); s.text = []; s.tags = set()
    def handle_starttag(s, tag, a): s.tags.add(tag)
    def handle_data(s, d): s.text.append(d)
p = P(); p.feed(open(sys.argv[1]).read())
text = " ".join(p.text)
need = ["walruses", "echo", "sh", "ask-sh", "rejected", "REJECTED", "ok",
        "<script>alert(1)</script>", "do walrus walrus sleep"]
missing = [n for n in need if n not in text]
if missing or "script" in p.tags or "table" not in p.tags:
    print("missing %r; tags %r" % (missing, sorted(p.tags))); sys.exit(1)
EOF
)
  if [ $? -eq 0 ]; then pass "chromium shows the calls, the rule and the <script> as text"
  else fail "chromium shows the calls, the rule and the <script> as text" "$why"; fi
  if [ -s "$OUTDIR/export.png" ]; then pass "chromium took a screenshot ($OUTDIR/export.png)"
  else fail "chromium took a screenshot" "no $OUTDIR/export.png"; fi
else
  echo "skip the HTML page in chromium (no chromium: .ci/deps installs it)"
fi

finish
