# harness.sh — what the spec/cli/*.sh scripts share, sourced first thing:
#
#   . "$(dirname "$0")/harness.sh" NAME "$@"    # NAME: the temp folder's tag
#
# Takes the toolgate binary from the script's first argument, makes a temp
# folder $WORK (removed at exit) that holds XDG_STATE_HOME too (the default
# database is ours, never the home's), and gives:
#   run ARGS...                   toolgate in $WORK, stdin /dev/null; sets RC, OUT, ERR
#   expect NAME RC [TEXT [WHERE]] the last run exited RC and WHERE (stderr, the
#                                 default, or stdout) contains TEXT
#   json_ok NAME EXPR [FILE]      every line of FILE (default: the last stdout)
#                                 is JSON and the python EXPR over `objs` holds
#   pass NAME / fail NAME WHY     one check's line
#   at_exit CMD                   also run CMD at exit (before $WORK goes)
#   finish                        prints the count; the script's exit status
set -u

TG=${2:?usage: $0 PATH/TO/toolgate}
case $TG in /*) ;; *) TG=$PWD/$TG ;; esac
WORK=$(mktemp -d "${TMPDIR:-/tmp}/toolgate-$1.XXXXXX")
export XDG_STATE_HOME="$WORK/state"
HARNESS_AT_EXIT=
trap 'eval "$HARNESS_AT_EXIT"; rm -rf "$WORK"' EXIT
checks=0
failed=0

at_exit() { HARNESS_AT_EXIT="$HARNESS_AT_EXIT $1;"; }

pass() { checks=$((checks + 1)); echo "ok   $1"; }
fail() { checks=$((checks + 1)); failed=$((failed + 1)); echo "FAIL $1: $2"; }

run() {
  (cd "$WORK" && "$TG" "$@" >"$WORK/stdout" 2>"$WORK/stderr" </dev/null)
  RC=$?
  OUT=$(cat "$WORK/stdout")
  ERR=$(cat "$WORK/stderr")
}

expect() {
  local name=$1 want=$2 text=${3:-} where=${4:-stderr}
  if [ "$RC" -ne "$want" ]; then
    fail "$name" "exit $RC, want $want (stderr: $ERR)"
  elif [ -n "$text" ] && ! grep -qF -- "$text" "$WORK/$where"; then
    fail "$name" "$where does not contain '$text' (stdout: $OUT stderr: $ERR)"
  else
    pass "$name"
  fi
}

json_ok() {
  local name=$1 expr=$2 file=${3:-$WORK/stdout} why
  if ! command -v python3 >/dev/null; then
    fail "$name" "python3 is needed to check JSON"
    return
  fi
  why=$(python3 - "$file" "$expr" <<'PY' 2>&1
import json, sys
lines = open(sys.argv[1]).read().splitlines()
try:
    objs = [json.loads(l) for l in lines]
except ValueError as e:
    print("not JSON: %s" % e)
    sys.exit(1)
if not eval("(" + sys.argv[2] + ")"):  # the expression may span lines
    print("not true: %s, on %r" % (sys.argv[2], lines[:6]))
    sys.exit(1)
PY
  )
  if [ -z "$why" ]; then pass "$name"; else fail "$name" "$why"; fi
}

finish() {
  echo "$((checks - failed))/$checks checks passed"
  [ "$failed" -eq 0 ]
}
