#!/usr/bin/env bash
# Builds the benchmarks against Lua 5.4 and LuaJIT (Release) and prints
# their tables: the chain, policy reload, the exec tool, the sandbox's
# bounded patterns against the builtin ones, the time limit's stop of
# runaway policy code, JSON Schema validation of a typical MCP tool's
# args, the audit trail's cost (audit on / off) and the chat side
# (routing hooks, budgets over usage records); for Lua 5.4, one
# `toolgate hook` process beside true, a shell hook and a Python hook;
# then, when node is there, what `toolgate serve` adds to an MCP call
# (bench/mcp_bench.mjs). Usage: bench/run.sh [calls-per-size]
set -euo pipefail
cd "$(dirname "$0")/.."
.ci/deps
for lua in lua5.4 luajit; do
  dir=build-bench-$lua
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DTOOLGATE_LUA=$lua >/dev/null
  cmake --build "$dir" -j"$(nproc)" --target bench_chain bench_reload bench_exec bench_pattern bench_watchdog \
    bench_schema bench_scale bench_audit bench_chat bench_hook toolgate >/dev/null
  "$dir/bench_chain" "${1:-200000}"
  echo
  "$dir/bench_reload"
  echo
  "$dir/bench_exec"
  echo
  "$dir/bench_pattern"
  echo
  "$dir/bench_watchdog"
  echo
  "$dir/bench_schema"
  echo
  "$dir/bench_scale"
  echo
  "$dir/bench_audit" "${1:-200000}"
  echo
  "$dir/bench_chat"
  echo
  if [ "$lua" = lua5.4 ]; then # the process, not the Lua: once is enough
    "$dir/bench_hook" "$PWD/$dir/toolgate" "$PWD/policies" 300
    echo
  fi
done
# ---- [mcp] toolgate serve in front of server-everything, against direct ----
if command -v node >/dev/null && command -v npm >/dev/null; then
  [ -d spec/mcp/node_modules/@modelcontextprotocol/sdk ] ||
    (cd spec/mcp && npm ci --no-audit --no-fund --loglevel=error)
  cmake --build build-bench-lua5.4 -j"$(nproc)" --target toolgate >/dev/null
  node bench/mcp_bench.mjs build-bench-lua5.4/toolgate
fi
