#!/usr/bin/env bash
# Runs busted specs through the built Lua module: the given spec files, or
# all of them (spec/lua and the examples'). ctest runs each file as its own
# test (busted_<lua>_<file>), so ctest -j spreads them.
# Usage: spec/run-busted.sh INTERPRETER BUILD_DIR SANITIZE(ON|OFF) [SPEC...]
set -euo pipefail
interp=$1 build=$2 sanitize=${3:-OFF}
shift $(($# < 3 ? $# : 3))
cd "$(dirname "$0")/.."
# A runtime made without db = ... keeps its database under XDG_STATE_HOME:
# never the real home's. (Made before LD_PRELOAD: the ASan runtime aborts
# mktemp and rm on their leaks.)
state=$(mktemp -d "${TMPDIR:-/tmp}/toolgate-state.XXXXXX")
trap 'LD_PRELOAD= rm -rf "$state"' EXIT
export XDG_STATE_HOME="$state"
export LUA_CPATH="$build/lua/?.so;;"
export TOOLGATE_BUILD_DIR="$build"
case "$sanitize" in
  ON|on|1|TRUE|true)
    # The interpreter is not instrumented: load the ASan runtime first.
    export LD_PRELOAD="$(gcc -print-file-name=libasan.so)"
    export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1"
    export LSAN_OPTIONS="suppressions=$PWD/spec/lsan.supp:print_suppressions=0"
    export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1" ;;
esac
# the examples' specs (examples/*/spec/) run beside ours
(($#)) || set -- spec/lua examples
"$interp" /usr/bin/busted --output=utfTerminal "$@"
