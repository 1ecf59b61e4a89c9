#!/usr/bin/env bash
# What the libraries export is the public API, nothing more:
#   libtoolgate.so   exactly the functions declared in include/toolgate.h
#   toolgate.so      (the Lua module) luaopen_toolgate, and at most those
# An internal function with default visibility (a missing -fvisibility, a
# TG_API on an internal declaration) fails here, and so does a public one
# without TG_API (declared but not exported).
# Usage: spec/pkg/check_exports.sh HEADER LIBTOOLGATE_SO MODULE_SO
set -euo pipefail
header=$1 lib=$2 module=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Declared: tg_* names followed by '(' in the header without its comments
# (function pointer typedefs read '(*tg_x_cb)(' and do not match).
gcc -fpreprocessed -dD -E -P "$header" 2>/dev/null |
  grep -oE '\btg_[a-z0-9_]+[[:space:]]*\(' | sed -E 's/[[:space:]]*\($//' |
  sort -u >"$tmp/declared"
[ -s "$tmp/declared" ] || { echo "no declarations found in $header" >&2; exit 1; }

exports() { nm -D --defined-only "$1" | awk '{print $NF}' | sed 's/@.*//' | sort -u; }
exports "$lib" >"$tmp/lib"
exports "$module" >"$tmp/module"
{ cat "$tmp/declared"; echo luaopen_toolgate; } | sort -u >"$tmp/module_allowed"

fail=0
extra=$(comm -23 "$tmp/lib" "$tmp/declared")
if [ -n "$extra" ]; then
  echo "FAIL: $lib exports symbols not declared in $header:" >&2
  echo "$extra" | sed 's/^/  /' >&2
  fail=1
fi
missing=$(comm -13 "$tmp/lib" "$tmp/declared")
if [ -n "$missing" ]; then
  echo "FAIL: declared in $header but not exported by $lib (TG_API missing, or not defined):" >&2
  echo "$missing" | sed 's/^/  /' >&2
  fail=1
fi
extra=$(comm -23 "$tmp/module" "$tmp/module_allowed")
if [ -n "$extra" ]; then
  echo "FAIL: $module exports symbols beyond luaopen_toolgate and $header:" >&2
  echo "$extra" | sed 's/^/  /' >&2
  fail=1
fi
grep -qx luaopen_toolgate "$tmp/module" || {
  echo "FAIL: $module does not export luaopen_toolgate" >&2; fail=1; }
[ $fail = 0 ] || exit 1
echo "ok: $(wc -l <"$tmp/lib") functions exported by $(basename "$lib"), $(wc -l <"$tmp/module") by $(basename "$module")"
