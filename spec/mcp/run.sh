#!/usr/bin/env bash
# run.sh — the MCP specs: each *.test.mjs drives `toolgate serve` (the
# official SDK's client, or raw JSON-RPC) and prints one line per check.
#   spec/mcp/run.sh PATH/TO/toolgate [NAME...]
# Needs node and spec/mcp/node_modules (`npm ci` here; .ci/test runs it).
# Exits 1 if any spec failed.
set -u
TG=${1:?usage: run.sh PATH/TO/toolgate [NAME...]}
shift
case $TG in /*) ;; *) TG=$PWD/$TG ;; esac
cd "$(dirname "$0")"
if [ ! -d node_modules/@modelcontextprotocol/sdk ]; then
  echo "spec/mcp: node_modules missing: run 'npm ci' in spec/mcp" >&2
  exit 1
fi
# toolgate keeps its database under XDG_STATE_HOME: a private one, never
# the real home's (whose file another toolgate may have made)
state=$(mktemp -d "${TMPDIR:-/tmp}/toolgate-mcp-state.XXXXXX")
trap 'rm -rf "$state"' EXIT
export XDG_STATE_HOME="$state"
specs=("$@")
[ ${#specs[@]} -gt 0 ] || specs=(*.test.mjs)
failed=0
for s in "${specs[@]}"; do
  case $s in *.mjs) ;; *) s=$s.test.mjs ;; esac
  echo "==> $s"
  TOOLGATE=$TG timeout 300 node "$s" || failed=$((failed + 1))
done
[ $failed -eq 0 ] || { echo "spec/mcp: $failed spec file(s) failed"; exit 1; }
