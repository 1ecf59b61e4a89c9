#!/usr/bin/env bash
# test_doctor_cli.sh — `toolgate doctor` on a project set up well, then
# broken one way at a time (a hook line naming a binary that is gone, a
# line that does not answer, a policy that does not load, a database that
# cannot be written, a resident instance serving another folder); and
# settings files that are odd (a symlink loop, a FIFO, 20 MB, a folder,
# invalid UTF-8: each a fault, without a hang); and `toolgate test
# --watch` running the cases again after a save.
#
# Nothing here sleeps for time to pass: a background command's output
# goes to a FIFO, read line by line with a generous bound.
#
#   spec/cli/test_doctor_cli.sh PATH/TO/toolgate
. "$(dirname "$0")/harness.sh" doctor-cli "$@"

export HOME="$WORK/home" XDG_RUNTIME_DIR="$WORK/run"
mkdir -p "$HOME" "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
SETTINGS="$WORK/.claude/settings.json"

# wait_for FD TEXT: reads FD's lines until one contains TEXT (60 s bound)
wait_for() {
  local line
  while IFS= read -r -t 60 -u "$1" line; do
    case $line in *"$2"*) LINE=$line; return 0 ;; esac
  done
  return 1
}

# ---- a good set-up ---------------------------------------------------------
run init policies
expect "init" 0
run hook install claude-code
expect "hook install" 0
run hook install codex
expect "hook install codex" 0
run hook install gemini
expect "hook install gemini" 0
run hook install copilot
expect "hook install copilot" 0
run doctor
expect "a good set-up: all is well" 0 "all is well" stdout
expect "a good set-up: Gemini CLI's line answers" 0 \
  "ok: the gemini hook in .gemini/settings.json answers (6 lines; BeforeTool" stdout
expect "a good set-up: Copilot CLI's line answers" 0 \
  "ok: the copilot hook in .github/hooks/toolgate.json answers (8 lines; preToolUse" stdout
expect "a good set-up: Claude Code's line answers" 0 \
  "ok: the claude-code hook in .claude/settings.json answers" stdout
expect "a good set-up: Codex's line answers" 0 \
  "ok: the codex hook in .codex/hooks.json answers" stdout
run doctor --json
json_ok "--json: ok, no fault" 'objs[0]["ok"] is True and objs[0]["faults"] == []'
SOCK=$(python3 -c 'import json,sys,re
for n in json.load(open(sys.argv[1]))["notes"]:
    m = re.search(r"\(socket (.*)\)", n)
    if m: print(m.group(1))' "$WORK/stdout")

# ---- the binary the hook names is gone ---------------------------------------
cp "$SETTINGS" "$WORK/settings.good"
sed -i "s#$TG#$WORK/gone/toolgate#g" "$SETTINGS"
run doctor
expect "a binary that is gone: exit 1" 1
expect "a binary that is gone: named" 1 \
  "runs $WORK/gone/toolgate, which does not exist" stdout
expect "a binary that is gone: the fix" 1 \
  "— run: toolgate hook install claude-code --project --policies policies" stdout

# ... in Copilot CLI's flat file too
cp "$WORK/.github/hooks/toolgate.json" "$WORK/copilot.good"
sed -i "s#$TG#$WORK/gone/toolgate#g" "$WORK/.github/hooks/toolgate.json"
run doctor
expect "a binary that is gone from copilot's hooks: named" 1 \
  "the copilot hook in .github/hooks/toolgate.json (preToolUse) runs $WORK/gone/toolgate, which does not exist" stdout
expect "... with copilot's fix" 1 \
  "— run: toolgate hook install copilot --project --policies policies" stdout
cp "$WORK/copilot.good" "$WORK/.github/hooks/toolgate.json"

# ---- a hook line that does not answer ------------------------------------------
mkdir -p "$WORK/bin"
printf '#!/bin/sh\necho crashed >&2\nexit 3\n' >"$WORK/bin/broken"
chmod +x "$WORK/bin/broken"
sed "s#$TG#$WORK/bin/broken#g" "$WORK/settings.good" >"$SETTINGS"
run doctor
expect "a line that does not answer" 1 "hook in .claude/settings.json does not answer (exit 2" stdout
expect "a line that does not answer: the fix" 1 "— run: toolgate hook install" stdout
# a line a shell would read as more than words is not run
sed "s#$TG#$TG';touch $WORK/ran;'#g" "$WORK/settings.good" >"$SETTINGS"
run doctor
expect "a line with shell text: refused" 1 "is not the fail-closed line" stdout
[ ! -e "$WORK/ran" ] && pass "a line with shell text: not run" \
  || fail "a line with shell text: not run" "$WORK/ran exists"
cp "$WORK/settings.good" "$SETTINGS"

# ---- a policy that does not load ------------------------------------------------
echo 'this is not lua (' >"$WORK/policies/99_broken.lua"
run doctor
expect "a policy that does not load" 1 "the policies in policies do not load: policies/99_broken.lua:1" stdout
expect "a policy that does not load: the fix" 1 "— run: toolgate check policies" stdout
run doctor --json
json_ok "--json: the fault with its fix" '
  objs[0]["ok"] is False and
  any("do not load" in f["what"] and f["run"] == "toolgate check policies"
      for f in objs[0]["faults"])'
rm "$WORK/policies/99_broken.lua"

# ---- a database that cannot be written --------------------------------------------
: >"$WORK/afile"
run doctor --db "$WORK/afile/toolgate.db"
expect "no database write access" 1 "the database $WORK/afile/toolgate.db cannot be made: $WORK/afile is not a folder" stdout

# ---- a resident instance serving another folder ---------------------------------------
if [ -z "$SOCK" ]; then
  fail "the socket path" "doctor --json named no socket"
else
  mkdir -p "$WORK/other"
  cp "$WORK/policies/"*.lua "$WORK/other/"
  mkdir -p -m 700 "$(dirname "$SOCK")"
  mkfifo "$WORK/watch.fifo"
  (cd "$WORK" && exec "$TG" watch --policies other --socket "$SOCK" --no-db \
     >"$WORK/watch.fifo" 2>&1) &
  WATCH=$!
  at_exit "kill $WATCH 2>/dev/null"
  exec 3<"$WORK/watch.fifo"
  if wait_for 3 "socket:"; then
    run doctor
    expect "an instance serving another folder" 1 "serves other, not policies" stdout
    expect "an instance serving another folder: the fix" 1 "— run: kill $WATCH" stdout
  else
    fail "an instance serving another folder" "toolgate watch did not start"
  fi
  kill "$WATCH"; wait "$WATCH" 2>/dev/null
  exec 3<&-
  run doctor
  expect "good again" 0 "all is well" stdout
fi

# ---- odd settings files: each a fault, and doctor neither hangs nor crashes ----
# (beside the good .claude/settings.json: the local one is the odd one)
LOCAL="$WORK/.claude/settings.local.json"
odd() { # NAME TEXT: doctor exits 1 naming the local settings and TEXT
  run doctor
  expect "odd settings, $1: a fault" 1 \
    "the claude-code settings .claude/settings.local.json cannot be read: $2" stdout
  rm -rf "$LOCAL"
}
ln -s settings.local.json "$LOCAL"
odd "a symlink loop" "Too many levels of symbolic links"
ln -s nowhere.json "$LOCAL"
odd "a symlink to nothing" "a symbolic link to nothing"
mkfifo "$LOCAL"
odd "a FIFO no one writes" "not a regular file (a FIFO)"
head -c $((20 * 1024 * 1024)) /dev/zero | tr '\0' ' ' >"$LOCAL"
odd "a 20 MB file" "20971520 bytes, more than the 16 MiB"
mkdir "$LOCAL"
odd "a folder" "a folder, not a file"
printf '{"hooks": {"PreToolUse": [{"hooks": [{"command": "\377\376 toolgate hook claude-code"}]}]}}' >"$LOCAL"
odd "invalid UTF-8 in a string" \
  'not a JSON object ($.hooks.PreToolUse[0].hooks[0].command: a string is not valid UTF-8'
printf '\377\376\000{' >"$LOCAL"
odd "invalid UTF-8 bytes" 'not a JSON object ($: expected a JSON value, found byte 0xff'
printf '{"hooks": {}}\000{"b": 2}' >"$LOCAL"
odd "a NUL after the object" 'not a JSON object ($: text after the JSON value: byte 0x00'
run doctor
expect "odd settings gone: good again" 0 "all is well" stdout

# ---- hooks switched off: Claude Code runs none, toolgate's included ---------
# (https://code.claude.com/docs/en/settings: "disableAllHooks")
printf '{"disableAllHooks": true}' >"$LOCAL"
run doctor
expect "disableAllHooks: a fault" 1 \
  '.claude/settings.local.json sets "disableAllHooks": true: Claude Code runs no hook' stdout
expect "disableAllHooks: the fix" 1 '— run: ${EDITOR:-vi} .claude/settings.local.json' stdout
rm -f "$LOCAL"

# ---- ./toolgate.lua's network marks ---------------------------------------------
echo 'return { servers = { web = { command = "true", network = true } } }' >"$WORK/toolgate.lua"
run doctor
expect "toolgate.lua's marks are named" 0 \
  "toolgate.lua marks these MCP tools as reaching the network: web__*" stdout
echo 'return { servers = { web = { command = "true", netwrok = true } } }' >"$WORK/toolgate.lua"
run doctor
expect "a toolgate.lua that does not load is a fault" 1 \
  "toolgate.lua does not load, so which MCP tools reach the network is not known" stdout
expect "naming the key" 1 "unknown key 'netwrok' (did you mean 'network'?)" stdout
rm -f "$WORK/toolgate.lua"

# ---- test --watch: a save runs the cases again ------------------------------------------
mkdir -p "$WORK/tw/tests"
cat >"$WORK/tw/p.lua" <<'LUA'
local tg = require "toolgate"
tg.rule { name = "no-exec", tools = "exec", check = function() return tg.deny("no") end }
LUA
cat >"$WORK/tw/p_test.lua" <<'LUA'
return { { name = "exec denied", tool = "exec", args = { command = "ls" }, expect = "deny" } }
LUA
mkfifo "$WORK/test.fifo"
(cd "$WORK" && exec "$TG" test --watch tw >"$WORK/test.fifo" 2>&1) &
TW=$!
at_exit "kill $TW 2>/dev/null"
exec 4<"$WORK/test.fifo"
if wait_for 4 " failed — tw"; then
  case $LINE in "1 passed, 0 failed"*) pass "test --watch: the first run" ;;
    *) fail "test --watch: the first run" "$LINE" ;; esac
  wait_for 4 "watching tw" >/dev/null
  sed -i 's/"deny"/"allow"/' "$WORK/tw/p_test.lua"
  if wait_for 4 " failed — tw"; then
    case $LINE in "0 passed, 1 failed"*) pass "test --watch: a save runs them again" ;;
      *) fail "test --watch: a save runs them again" "$LINE" ;; esac
  else
    fail "test --watch: a save runs them again" "no second summary"
  fi
  # an editor's atomic save in tests/: a temporary file renamed over
  echo 'return { { name = "more", tool = "exec", args = { command = "ls" }, expect = "allow" } }' \
    >"$WORK/tw/tests/more_test.lua.tmp"
  mv "$WORK/tw/tests/more_test.lua.tmp" "$WORK/tw/tests/more_test.lua"
  if wait_for 4 " failed — tw"; then
    case $LINE in "0 passed, 2 failed"*) pass "test --watch: a save in tests/ too" ;;
      *) fail "test --watch: a save in tests/ too" "$LINE" ;; esac
  else
    fail "test --watch: a save in tests/ too" "no third summary"
  fi
else
  fail "test --watch: the first run" "no summary line"
fi
kill -INT "$TW"; wait "$TW"; RC=$?
[ "$RC" -eq 0 ] && pass "test --watch: Ctrl-C stops it, exit 0" \
  || fail "test --watch: Ctrl-C stops it, exit 0" "exit $RC"
exec 4<&-

# ---- a package manager's versioned folder ----------------------------------
# Homebrew's shape: the binary in Cellar/toolgate/0.1.0/bin, reached by a
# symlink in bin/. The line names the symlink (an upgrade keeps it), found
# through PATH or run by its path; run from the versioned folder itself,
# the line names that, and doctor says an upgrade would remove it.
BREW="$WORK/brew"
mkdir -p "$BREW/Cellar/toolgate/0.1.0/bin" "$BREW/bin" "$WORK/v1" "$WORK/v2" "$WORK/v3"
cp "$TG" "$BREW/Cellar/toolgate/0.1.0/bin/toolgate"
ln -s ../Cellar/toolgate/0.1.0/bin/toolgate "$BREW/bin/toolgate"
names_symlink() { # DIR NAME: DIR's settings name the symlink, not Cellar
  if grep -qF "$BREW/bin/toolgate" "$1/.claude/settings.json" &&
     ! grep -qF "Cellar" "$1/.claude/settings.json"; then
    pass "$2"
  else
    fail "$2" "$(cat "$1/.claude/settings.json" 2>&1)"
  fi
}
(cd "$WORK/v1" && PATH="$BREW/bin:$PATH" toolgate hook install claude-code >/dev/null 2>&1)
names_symlink "$WORK/v1" "hook install found in PATH through a symlink names the symlink"
(cd "$WORK/v2" && "$BREW/bin/toolgate" hook install claude-code >/dev/null 2>&1)
names_symlink "$WORK/v2" "hook install run by a symlink's path names the symlink"
(cd "$WORK/v3" && "$BREW/Cellar/toolgate/0.1.0/bin/toolgate" hook install claude-code >/dev/null 2>&1)
grep -qF "Cellar/toolgate/0.1.0/bin/toolgate" "$WORK/v3/.claude/settings.json" \
  && pass "hook install run from the versioned folder names it" \
  || fail "hook install run from the versioned folder names it" "$(cat "$WORK/v3/.claude/settings.json" 2>&1)"
(cd "$WORK/v3" && PATH="$BREW/bin:$PATH" "$TG" doctor >"$WORK/stdout" 2>"$WORK/stderr")
grep -qF "in a versioned folder that an upgrade removes" "$WORK/stdout" &&
  grep -qF "$BREW/bin/toolgate on PATH stays" "$WORK/stdout" \
  && pass "doctor says a versioned path would be removed, and names the stable one" \
  || fail "doctor says a versioned path would be removed, and names the stable one" "$(cat "$WORK/stdout")"

finish
