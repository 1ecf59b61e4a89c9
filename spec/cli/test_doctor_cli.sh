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
# the agents' own homes and Gemini CLI's system settings: this test's own
# (none of the machine's /etc/gemini-cli is read)
unset CODEX_HOME COPILOT_HOME GEMINI_CLI_HOME GEMINI_CLI_TRUST_WORKSPACE \
  GEMINI_CLI_TRUSTED_FOLDERS_PATH GEMINI_CLI_SYSTEM_DEFAULTS_PATH
export GEMINI_CLI_SYSTEM_SETTINGS_PATH="$WORK/gemini-system/settings.json"
# Gemini CLI reads a project's .gemini/settings.json only in a folder the
# user trusts (folder trust is on by default): the good set-up trusts it
mkdir -p "$HOME/.gemini"
TRUSTED="$HOME/.gemini/trustedFolders.json"
printf '{"%s": "TRUST_FOLDER"}' "$WORK" >"$TRUSTED"
cp "$TRUSTED" "$WORK/trusted.good"
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
expect "a good set-up: Gemini CLI trusts the folder" 0 \
  "ok: Gemini CLI trusts this folder, so it runs the hooks in .gemini/settings.json: $TRUSTED trusts it ($WORK: TRUST_FOLDER)" stdout
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

# ---- Gemini CLI's folder trust ---------------------------------------------
# google-gemini/gemini-cli docs/cli/trusted-folders.md: in a folder not
# trusted "The CLI will not load the .gemini/settings.json file from the
# project", and packages/core/src/hooks/hookRegistry.ts registers no hook
# of any settings file there (the user's neither); trustedFolders.json maps a path to TRUST_FOLDER, TRUST_PARENT
# (its parent) or DO_NOT_TRUST, the longest rule winning
# (packages/core/src/utils/trust.ts); security.folderTrust.enabled is on
# by default (docs/reference/configuration.md), the system settings over
# the user's; GEMINI_CLI_TRUSTED_FOLDERS_PATH and GEMINI_CLI_TRUST_WORKSPACE
# are in that reference's environment variables.
IGNORED="Gemini CLI does not trust this folder, so it runs no hook here and toolgate's hooks in .gemini/settings.json never run"
UNKNOWN="Gemini CLI may not trust this folder, and then toolgate's hooks in .gemini/settings.json never run"
# no_fault NAME: doctor says all is well, and nothing of Gemini's trust
no_fault() {
  run doctor
  expect "$1: all is well" 0 "all is well" stdout
  if grep -qF "Gemini CLI does not trust" "$WORK/stdout" ||
     grep -qF "Gemini CLI may not trust" "$WORK/stdout"; then
    fail "$1: no trust fault" "$(cat "$WORK/stdout")"
  else
    pass "$1: no trust fault"
  fi
}
rm -f "$TRUSTED"
run doctor
expect "gemini, no trusted folders: a fault" 1 \
  "$IGNORED: folder trust is on (Gemini CLI's default) and there is no $TRUSTED, so no folder is trusted yet" stdout
expect "gemini, not trusted: says how to trust it" 1 \
  'run gemini here and choose "Trust folder", or /permissions in it; hooks in the user' stdout
expect "gemini, not trusted: the fix" 1 "— run: gemini" stdout
# the user's hooks do not run there either, and it is said once
run hook install gemini --user
expect "gemini --user too" 0
run doctor
[ "$(grep -c "Gemini CLI does not trust" "$WORK/stdout")" = 1 ] &&
  pass "gemini, project and user hooks: said once" ||
  fail "gemini, project and user hooks: said once" "$(cat "$WORK/stdout")"
run hook uninstall gemini
expect "gemini, the project's hooks out" 0
run doctor
expect "gemini, only the user's hooks: a fault all the same" 1 \
  "Gemini CLI does not trust this folder, so it runs no hook here and toolgate's hooks in $HOME/.gemini/settings.json never run" stdout
cp "$WORK/trusted.good" "$TRUSTED"
no_fault "gemini, the user's hooks in a trusted folder"
run hook uninstall gemini --user
run hook install gemini
expect "gemini, back in the project" 0
rm -f "$TRUSTED"
printf '{"%s": "TRUST_FOLDER", "%s": "DO_NOT_TRUST"}' "$(dirname "$WORK")" "$WORK" >"$TRUSTED"
run doctor
expect "gemini, the longer DO_NOT_TRUST wins" 1 "$IGNORED: folder trust is on (Gemini CLI's default) and $TRUSTED marks $WORK DO_NOT_TRUST" stdout
printf '{"%s": "DO_NOT_TRUST", "%s/sub": "TRUST_PARENT"}' "$(dirname "$WORK")" "$WORK" >"$TRUSTED"
no_fault "gemini, TRUST_PARENT of a folder inside trusts this one"
printf '{"%s/sub": "TRUST_FOLDER"}' "$WORK" >"$TRUSTED"
run doctor
expect "gemini, a folder inside trusted is not this one" 1 "$IGNORED: folder trust is on (Gemini CLI's default) and no rule in $TRUSTED covers this folder" stdout
ln -s "$WORK" "$WORK/home/link"
printf '{"%s/home/link": "TRUST_FOLDER"}' "$WORK" >"$TRUSTED"
no_fault "gemini, a rule naming the folder through a symlink"
rm -f "$WORK/home/link"
# hostile bytes: whether it is trusted cannot be told, a fault each
printf '{"%s": "trust_folder"}' "$WORK" >"$TRUSTED"
run doctor
expect "gemini, a trust level in another case: cannot be told" 1 \
  "$UNKNOWN: whether this folder is trusted cannot be told: in $TRUSTED, $WORK is not TRUST_FOLDER" stdout
expect "gemini, cannot be told: the fix edits the file" 1 "— run: \${EDITOR:-vi} $TRUSTED" stdout
printf '{"%s": "TRUST_FOLDER", "%s": "TRUST_FOLDER"}' "$WORK" "$WORK" >"$TRUSTED"
run doctor
expect "gemini, a key twice: cannot be told" 1 "$UNKNOWN: whether this folder is trusted cannot be told: $TRUSTED is not a JSON object" stdout
printf '// mine\n{"%s": "TRUST_FOLDER"' "$WORK" >"$TRUSTED"
run doctor
expect "gemini, garbled: cannot be told" 1 "$UNKNOWN: whether this folder is trusted cannot be told: $TRUSTED is not a JSON object" stdout
rm -f "$TRUSTED"; mkfifo "$TRUSTED"
run doctor
expect "gemini, a FIFO: cannot be told, no hang" 1 "$UNKNOWN: whether this folder is trusted cannot be told: $TRUSTED is a FIFO, not a file" stdout
rm -f "$TRUSTED"; head -c $((20 * 1024 * 1024)) /dev/zero | tr '\0' ' ' >"$TRUSTED"
run doctor
expect "gemini, 20 MB: cannot be told" 1 "$UNKNOWN: whether this folder is trusted cannot be told: $TRUSTED is more than 16 MiB" stdout
rm -f "$TRUSTED"; ln -s "$WORK/trusted.good" "$TRUSTED"
no_fault "gemini, trustedFolders.json a symlink to a good file"
rm -f "$TRUSTED"
# where the file is: GEMINI_CLI_TRUSTED_FOLDERS_PATH
export GEMINI_CLI_TRUSTED_FOLDERS_PATH="$WORK/trust-elsewhere.json"
cp "$WORK/trusted.good" "$GEMINI_CLI_TRUSTED_FOLDERS_PATH"
no_fault "gemini, GEMINI_CLI_TRUSTED_FOLDERS_PATH names a file that trusts it"
unset GEMINI_CLI_TRUSTED_FOLDERS_PATH
run doctor
expect "gemini, ... and without it, HOME's file (none) decides" 1 "$IGNORED" stdout
# folder trust off: the user's settings, the system's over them
printf '{"security": {"folderTrust": {"enabled": false}}}' >"$HOME/.gemini/settings.json"
no_fault "gemini, folder trust off in the user's settings"
mkdir -p "$WORK/gemini-system"
printf '{"security": {"folderTrust": {"enabled": true}}}' >"$GEMINI_CLI_SYSTEM_SETTINGS_PATH"
run doctor
expect "gemini, the system settings turn it on over the user's" 1 \
  "$IGNORED: folder trust is on ($GEMINI_CLI_SYSTEM_SETTINGS_PATH) and there is no $TRUSTED" stdout
rm -f "$GEMINI_CLI_SYSTEM_SETTINGS_PATH"
printf '{"Security": {"folderTrust": {"enabled": false}}}' >"$HOME/.gemini/settings.json"
run doctor
expect "gemini, a key in another case turns nothing off" 1 \
  "$IGNORED: folder trust is on (Gemini CLI's default)" stdout
printf '{"security": {"folderTrust": {"enabled": false}}' >"$HOME/.gemini/settings.json"
run doctor
expect "gemini, garbled user settings: cannot be told" 1 \
  "$UNKNOWN: whether Gemini CLI's folder trust is on cannot be told: $HOME/.gemini/settings.json is not a JSON object" stdout
rm -f "$HOME/.gemini/settings.json"
# the environment: =true trusts the sessions started with it (a note),
# =false distrusts even a trusted folder
GEMINI_CLI_TRUST_WORKSPACE=true run doctor
expect "gemini, GEMINI_CLI_TRUST_WORKSPACE=true: no fault" 0 \
  "note: Gemini CLI trusts this folder only in sessions started with this environment: GEMINI_CLI_TRUST_WORKSPACE=true" stdout
cp "$WORK/trusted.good" "$TRUSTED"
GEMINI_CLI_TRUST_WORKSPACE=false run doctor
expect "gemini, GEMINI_CLI_TRUST_WORKSPACE=false: a fault" 1 \
  "$IGNORED: GEMINI_CLI_TRUST_WORKSPACE=false distrusts every folder" stdout
no_fault "gemini, trusted again"

# ---- an agent's own home: CODEX_HOME ----------------------------------------
# Codex reads its user hooks beside its user config, in $CODEX_HOME
# (default ~/.codex): developers.openai.com/codex/hooks ("Where Codex looks
# for hooks") and /codex/environment-variables (CODEX_HOME).
run hook install codex --user
expect "codex --user without CODEX_HOME: ~/.codex" 0
[ -f "$HOME/.codex/hooks.json" ] && pass "codex --user wrote ~/.codex/hooks.json" ||
  fail "codex --user wrote ~/.codex/hooks.json" "no file"
run doctor
expect "codex in ~/.codex, no CODEX_HOME: no fault" 0 \
  "ok: the codex hook in $HOME/.codex/hooks.json answers" stdout
mkdir -p "$WORK/codex-home"
export CODEX_HOME="$WORK/codex-home"
run doctor
expect "CODEX_HOME elsewhere: the hooks in ~/.codex never run" 1 \
  "the codex hooks in $HOME/.codex/hooks.json never run: CODEX_HOME is set ($WORK/codex-home), so Codex reads its user's hooks from $WORK/codex-home/hooks.json" stdout
expect "CODEX_HOME elsewhere: the fix" 1 \
  "— run: toolgate hook uninstall codex --settings $HOME/.codex/hooks.json && toolgate hook install codex --user --policies policies" stdout
run hook uninstall codex --settings "$HOME/.codex/hooks.json"
expect "uninstall from ~/.codex" 0
run hook install codex --user
expect "codex --user with CODEX_HOME" 0
run doctor
expect "CODEX_HOME: its hooks answer, no fault" 0 \
  "ok: the codex hook in $WORK/codex-home/hooks.json answers" stdout
export CODEX_HOME=codex-home
run doctor
expect "CODEX_HOME relative: a fault" 1 \
  "CODEX_HOME is codex-home, not an absolute path: where Codex reads its user's hooks is not known here" stdout
unset CODEX_HOME
rm -rf "$WORK/codex-home" "$HOME/.codex"
run doctor
expect "CODEX_HOME gone: all is well" 0 "all is well" stdout

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
