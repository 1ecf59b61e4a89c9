#!/usr/bin/env bash
# spec/nvim/run.sh — toolgate in a real headless Neovim (lua/README.md,
# "Embedding in a host loop"): spec/nvim/attach.lua attaches a runtime to
# vim.loop and checks calls, timers, vim.api and the watch from inside;
# this script checks what only the outside sees: `toolgate reload` gets an
# answer while the editor idles, the idle editor costs about no CPU, and
# SIGTERM ends it.
#
#   spec/nvim/run.sh BUILD_DIR     (a LuaJIT build: Neovim's Lua is LuaJIT)
set -u
BUILD=${1:?usage: run.sh BUILD_DIR}
case $BUILD in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
cd "$(dirname "$0")/../.."
command -v nvim >/dev/null || { echo "nvim is not installed (Debian: neovim)"; exit 1; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/toolgate-nvim.XXXXXX")
LOG=$WORK/log
NVIM_PID=
cleanup() {
  [ -n "$NVIM_PID" ] && kill -KILL "$NVIM_PID" 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT
failed=0
pass() { echo "ok   $1"; }
fail() { failed=1; echo "FAIL $1: $2"; }

mkdir -p "$WORK/policies" "$WORK/ws"
cat >"$WORK/policies/10_tools.lua" <<'EOF'
local tg = require "toolgate"
tg.tool { name = "slow", read_only = true,
  run = function(args, ctx) ctx.sleep(args.ms or 200); return "slept" end }
tg.tool { name = "guarded", run = function() return "ran" end }
tg.rule { name = "ask-guarded", tools = { "guarded" },
  check = function() return tg.ask("may it?") end }
tg.rule { name = "rest", check = function() return tg.allow() end }
EOF
: >"$LOG"

# Waits up to $2 seconds for a line of the log that starts with $1.
wait_log() {
  local i
  for ((i = 0; i < $2 * 20; i++)); do
    grep -q "^$1" "$LOG" && return 0
    grep -q "^FAIL" "$LOG" && [ "$1" != "FAIL" ] && sleep 0.2 && return 1
    kill -0 "$NVIM_PID" 2>/dev/null || return 1
    sleep 0.05
  done
  return 1
}

# utime + stime of a process, in clock ticks (/proc/PID/stat, fields 14-15
# after the command name, which may hold spaces).
cpu_ticks() {
  local stat
  stat=$(cat "/proc/$1/stat") || return 1
  stat=${stat##*) }
  set -- $stat
  echo $((${12} + ${13}))
}

TG_NVIM_DIR=$WORK TG_NVIM_LOG=$LOG \
  nvim --headless -u NONE -i NONE -n \
    --cmd "lua package.cpath = '$BUILD/lua/?.so;' .. package.cpath" \
    -c "luafile spec/nvim/attach.lua" \
    </dev/null >"$WORK/nvim.out" 2>&1 &
NVIM_PID=$!

if wait_log READY 30; then
  sock=$(sed -n 's/^READY //p' "$LOG")
  # `toolgate reload` from outside, answered by the idle editor
  out=$("$BUILD/toolgate" reload --socket "$sock" --timeout-ms 3000 2>&1)
  rc=$?
  if [ $rc -eq 0 ] && [[ $out == *"reloaded: generation 3"* ]]; then
    pass "toolgate reload is answered while the editor idles ($out)"
  else
    fail "toolgate reload is answered while the editor idles" "exit $rc: $out"
  fi
  if wait_log "RELOADED control 3" 5; then
    pass "the editor saw the reload (policy_loaded, trigger control)"
  else
    fail "the editor saw the reload" "no 'RELOADED control 3' in the log"
  fi
  # CPU over an idle second: the old recipe spun at ~98%
  sleep 0.3
  hz=$(getconf CLK_TCK)
  t0=$(cpu_ticks "$NVIM_PID")
  sleep 1
  t1=$(cpu_ticks "$NVIM_PID")
  used=$((t1 - t0))
  if [ $((used * 100)) -le $((hz * 10)) ]; then
    pass "an idle editor with an attached runtime uses ~0% CPU ($used/$hz s in 1 s)"
  else
    fail "an idle editor uses ~0% CPU" "$used/$hz s of CPU in one idle second"
  fi
  # SIGTERM ends it
  kill -TERM "$NVIM_PID"
  gone=0
  for ((i = 0; i < 100; i++)); do
    kill -0 "$NVIM_PID" 2>/dev/null || { gone=1; break; }
    sleep 0.05
  done
  wait "$NVIM_PID" 2>/dev/null
  if [ $gone -eq 1 ]; then
    NVIM_PID=
    pass "SIGTERM ends the editor"
  else
    fail "SIGTERM ends the editor" "still running 5 s after SIGTERM"
  fi
else
  fail "the editor got ready" "no READY line within 30 s"
fi

sed -n 's/^\(ok   .*\)/\1/p; s/^\(FAIL .*\)/\1/p' "$LOG"
grep -q "^FAIL" "$LOG" && failed=1
if [ $failed -ne 0 ]; then
  echo "--- nvim output:"
  cat "$WORK/nvim.out"
  exit 1
fi
echo "all Neovim checks passed"
