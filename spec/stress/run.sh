#!/usr/bin/env bash
# Randomized stress of the Lua host API under ASan (not part of .ci/test:
# it takes minutes). Starts calls of every kind and cancels them at random
# moments, from every callback, with reloads and closes in between; checks
# that every call ends exactly once with a valid status, that no command
# outlives the runtime, and that ASan stays silent.
#   spec/stress/run.sh [FIRST_SEED [SEEDS [ITERS]]]
set -euo pipefail
cd "$(dirname "$0")/../.."
first=${1:-1} seeds=${2:-10} iters=${3:-3000}
build=build-stress-asan
cmake -S . -B "$build" -DTOOLGATE_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null
cmake --build "$build" -j"$(nproc)" --target toolgate_lua >/dev/null
# ASan is preloaded into lua5.4 alone (the module is built with it): a
# tool run under it, mktemp, would abort on its own leaks at exit
asan="$(gcc -print-file-name=libasan.so)"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1"
export LSAN_OPTIONS="suppressions=$PWD/spec/lsan.supp"
export LUA_CPATH="$PWD/$build/lua/?.so;;"
# the runtimes' databases in a temp folder, not the home's
XDG_STATE_HOME=$(mktemp -d "${TMPDIR:-/tmp}/toolgate-stress-state.XXXXXX")
export XDG_STATE_HOME
trap 'rm -rf "$XDG_STATE_HOME"' EXIT
for seed in $(seq "$first" $((first + seeds - 1))); do
  for script in calls files; do
    if ! timeout 300 env LD_PRELOAD="$asan" lua5.4 "spec/stress/$script.lua" "$seed" "$iters" >/tmp/toolgate-stress-$script-$seed.log 2>&1; then
      echo "FAIL $script seed $seed (log: /tmp/toolgate-stress-$script-$seed.log)"
      exit 1
    fi
    echo "ok   $script seed $seed"
  done
done
