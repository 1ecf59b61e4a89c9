#!/usr/bin/env bash
# An installed toolgate works on its own. Installs the build into a
# temporary prefix, then:
#   - checks the layout (header, libtoolgate.a, libtoolgate.so with its
#     SONAME, the Lua library, the Lua module, the command, toolgate.pc,
#     toolgateConfig.cmake);
#   - builds spec/pkg/prog.c with `pkg-config --cflags --libs toolgate`
#     alone (libtoolgate.so) and with `--static` (libtoolgate.a), and
#     through find_package(toolgate) (toolgate::toolgate and
#     toolgate::toolgate_static), and runs each: one call to a Lua tool of
#     a tiny policy that requires toolgate.shell;
#   - moves the prefix elsewhere and, with the source tree hidden (an empty
#     tmpfs over it in a private mount namespace, where unshare allows;
#     else it stays, and only the next check holds), runs from another cwd
#     the moved `toolgate check` on a copy of policies/, `toolgate call`,
#     the program linked with the moved libtoolgate.so, and the moved Lua
#     module: each must take the Lua library from the moved prefix.
# Usage: spec/pkg/test_install.sh SOURCE_DIR BUILD_DIR [SANITIZE] [LUA]
set -euo pipefail
src=$(realpath "$1") build=$(realpath "$2") sanitize=${3:-OFF} lua=${4:-lua5.4}
work=$(realpath "$(mktemp -d "${TMPDIR:-/tmp}/toolgate-install.XXXXXX")")
trap 'rm -rf "$work"' EXIT
say() { echo "==> $*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

cflags=(-std=c11 -Wall -Wextra -Werror -pedantic)
case "$sanitize" in
  ON|on|1|TRUE|true) cflags+=(-fsanitize=address,undefined)
    export ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS="suppressions=$src/spec/lsan.supp:print_suppressions=0"
    asan_preload=$(gcc -print-file-name=libasan.so) ;;
  *) sanitize=OFF ;;
esac

say "cmake --install $build --prefix $work/inst"
cmake --install "$build" --prefix "$work/inst" >"$work/install.log"
pc=$(find "$work/inst" -name toolgate.pc)
[ -n "$pc" ] || fail "no toolgate.pc installed"
export PKG_CONFIG_PATH="$(dirname "$pc")"
libdir=$(pkg-config --variable=libdir toolgate)
luadir=$(pkg-config --variable=luadir toolgate)
cmoddir=$(pkg-config --variable=cmoddir toolgate)
soname=$(readelf -d "$libdir/libtoolgate.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
for f in bin/toolgate include/toolgate.h "${libdir#$work/inst/}/libtoolgate.a" \
         "${libdir#$work/inst/}/libtoolgate.so" "${libdir#$work/inst/}/$soname" \
         "${libdir#$work/inst/}/cmake/toolgate/toolgateConfig.cmake" \
         "${libdir#$work/inst/}/cmake/toolgate/toolgateConfigVersion.cmake" \
         "${luadir#$work/inst/}/toolgate/shell.lua" "${cmoddir#$work/inst/}/toolgate.so" \
         share/toolgate/starter/policies/30_secrets.lua \
         share/toolgate/starter/policies/10_shell.lua \
         share/toolgate/starter/policies/README.md; do
  [ -e "$work/inst/$f" ] || fail "not installed: $f"
done
case "$soname" in libtoolgate.so.[0-9]*) ;; *) fail "libtoolgate.so has no versioned SONAME ($soname)";; esac
say "installed: $(cd "$work/inst" && find . -type f -o -type l | sort | tr '\n' ' ')"

cp -r "$src/spec/pkg/prog.c" "$src/spec/pkg/consumer" "$src/spec/pkg/policies" "$work/"
cp -r "$src/policies" "$work/shipped-policies"
cd "$work"

say "cc prog.c \$(pkg-config --cflags --libs toolgate)"
cc "${cflags[@]}" -o prog_shared prog.c $(pkg-config --cflags --libs toolgate)
readelf -d prog_shared | grep -q "NEEDED.*\[$soname\]" || fail "prog_shared does not use $soname"
# -ltoolgate takes the .so when both are there: a folder with only the
# archive, searched first, makes the same line take libtoolgate.a.
mkdir static-only && ln -s "$libdir/libtoolgate.a" static-only/
say "cc prog.c -L static-only \$(pkg-config --static --cflags --libs toolgate)"
cc "${cflags[@]}" -o prog_static prog.c -Lstatic-only $(pkg-config --static --cflags --libs toolgate)
! readelf -d prog_static | grep -q "NEEDED.*libtoolgate" || fail "prog_static is not linked statically"

say "find_package(toolgate) in a CMake project"
cmake_flags=()
[ $sanitize = OFF ] || cmake_flags+=(-DCMAKE_C_FLAGS=-fsanitize=address,undefined)
cmake -S consumer -B consumer-build -DCMAKE_PREFIX_PATH="$work/inst" "${cmake_flags[@]}" >consumer.log ||
  { cat consumer.log; fail "find_package(toolgate) failed"; }
cmake --build consumer-build >>consumer.log 2>&1 || { cat consumer.log; fail "the CMake consumer does not build"; }

expect_ok() { # name, command...: prints the output; the call must have succeeded
  local name=$1; shift
  local out
  out=$("$@" 2>&1) || { echo "$out" >&2; fail "$name failed"; }
  echo "  $name: $out"
  case "$out" in *'"status":"ok"'*'"commands":2'*|*'"commands":2'*'"status":"ok"'*) ;;
    *) fail "$name: unexpected output";; esac
}
mkdir elsewhere && cd elsewhere
TOOLGATE_TEST_LUA_DIR="$luadir" LD_LIBRARY_PATH="$libdir" expect_ok prog_shared ../prog_shared ../policies
expect_ok prog_static ../prog_static ../policies
TOOLGATE_TEST_LUA_DIR="$luadir" expect_ok prog_cmake ../consumer-build/prog_cmake ../policies
expect_ok prog_cmake_static ../consumer-build/prog_cmake_static ../policies
cd "$work"

# Moved: nothing but the relative layout can find the Lua library now.
mv inst moved
m=$work/moved
mlib=$m/${libdir#$work/inst/} mlua=$m/${luadir#$work/inst/} mcmod=$m/${cmoddir#$work/inst/}
cat >moved-checks.sh <<SH
set -euo pipefail
cd "$work/elsewhere"
$(declare -f say fail expect_ok)
export TOOLGATE_TEST_LUA_DIR="$mlua"
[ ! -e "$src/lua/toolgate/shell.lua" ] && echo "  (the source tree is hidden)" || echo "  (the source tree is visible)"
say "moved: toolgate check policies"
"$m/bin/toolgate" check ../shipped-policies >check.out 2>&1 || { cat check.out >&2; fail "toolgate check failed"; }
grep -q shell-destructive check.out || { cat check.out >&2; fail "toolgate check: the shell policy is missing"; }
say "moved: toolgate init, then the starter's own tests"
"$m/bin/toolgate" init starter >init.out 2>&1 || { cat init.out >&2; fail "toolgate init failed"; }
"$m/bin/toolgate" test starter >starter.out 2>&1 || { cat starter.out >&2; fail "the starter's tests failed"; }
tail -1 starter.out
say "moved: toolgate call split, prog_shared, the Lua module"
expect_ok "toolgate call" "$m/bin/toolgate" call --json --policies ../policies split '{"line":"ls -l | wc -l"}'
LD_LIBRARY_PATH="$mlib" expect_ok prog_shared ../prog_shared ../policies
if [ $sanitize = OFF ] || [ -n "${asan_preload:-}" ]; then
  preload=""; [ $sanitize = OFF ] || preload="${asan_preload:-}"
  LD_PRELOAD="\$preload" LUA_CPATH="$mcmod/?.so" expect_ok "$lua module" "$lua" -e '
    local toolgate = require "toolgate"
    local rt = assert(toolgate.new { policies = "../policies", builtin_tools = false })
    local out = rt:call("split", { line = "ls -l | wc -l" }):wait()
    print(string.format("{\"status\":\"%s\",\"commands\":%s}", out.status, out.result and out.result.commands))
    rt:close()'
fi
SH
hide=()
if unshare -m true 2>/dev/null; then hide=(unshare -m)
elif unshare -r -m true 2>/dev/null; then hide=(unshare -r -m)
fi
if ((${#hide[@]})); then
  "${hide[@]}" bash -c "set -e; mount -t tmpfs toolgate-hidden '$src'
    if [ -d '$build' ]; then mount -t tmpfs toolgate-hidden '$build'; fi
    bash '$work/moved-checks.sh'"
else
  echo "  (unshare -m is not allowed here: the source tree stays visible)"
  bash "$work/moved-checks.sh"
fi
say "ok: the installed tree works, moved and without the source tree"
