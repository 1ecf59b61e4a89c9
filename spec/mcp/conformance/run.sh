#!/usr/bin/env bash
# run.sh — the MCP conformance suite through `toolgate serve` (run.mjs;
# README.md says what runs and what the bridge loses).
#   spec/mcp/conformance/run.sh PATH/TO/toolgate
# Exits 77 (ctest: skipped) when node or spec/mcp/node_modules is missing.
set -u
TG=${1:?usage: run.sh PATH/TO/toolgate}
case $TG in /*) ;; *) TG=$PWD/$TG ;; esac
cd "$(dirname "$0")"
if ! command -v node >/dev/null 2>&1; then
  echo "mcp_conformance: skipped: node is not installed" >&2
  exit 77
fi
for m in @modelcontextprotocol/conformance supergateway @modelcontextprotocol/sdk; do
  if [ ! -d "../node_modules/$m" ]; then
    echo "mcp_conformance: skipped: spec/mcp/node_modules/$m missing: run 'npm ci' in spec/mcp" >&2
    exit 77
  fi
done
exec node run.mjs "$TG"
