#!/usr/bin/env bash
# run.sh — the MCP conformance suite through `toolgate serve` (run.mjs
# for the 2025 eras, run2026.mjs for 2026-07-28; README.md says what runs,
# what the bridge loses and what fails for want of fixtures).
#   spec/mcp/conformance/run.sh PATH/TO/toolgate [2026]
# Exits 77 (ctest: skipped) when node or spec/mcp/node_modules is missing.
set -u
TG=${1:?usage: run.sh PATH/TO/toolgate [2026]}
ERA=${2:-2025}
case $TG in /*) ;; *) TG=$PWD/$TG ;; esac
cd "$(dirname "$0")"
if ! command -v node >/dev/null 2>&1; then
  echo "mcp_conformance: skipped: node is not installed" >&2
  exit 77
fi
suite=@modelcontextprotocol/conformance main=run.mjs
[ "$ERA" = 2026 ] && suite=@modelcontextprotocol/conformance-2026 main=run2026.mjs
for m in $suite supergateway @modelcontextprotocol/sdk; do
  if [ ! -d "../node_modules/$m" ]; then
    echo "mcp_conformance: skipped: spec/mcp/node_modules/$m missing: run 'npm ci' in spec/mcp" >&2
    exit 77
  fi
done
exec node "$main" "$TG"
