#!/usr/bin/env bash
# include/toolgate.h stands alone: it compiles with -std=c11 -Wall -Wextra
# -Werror -pedantic with no libuv or cJSON header reachable (uv.h and
# cjson/cJSON.h are replaced by ones that fail), in C and in C++; and it
# agrees with the real uv.h and cJSON.h included before or after it
# (uv_loop_t * and cJSON * pass through the API unchanged).
# Usage: spec/pkg/check_header.sh INCLUDE_DIR WORK_DIR
set -euo pipefail
inc=$1 work=$2
rm -rf "$work"; mkdir -p "$work/poison/cjson"
echo '#error "toolgate.h must not need uv.h"' >"$work/poison/uv.h"
echo '#error "toolgate.h must not need cJSON.h"' >"$work/poison/cjson/cJSON.h"
echo '#error "toolgate.h must not need cJSON.h"' >"$work/poison/cJSON.h"
strict=(-Wall -Wextra -Werror -pedantic)

cat >"$work/alone.c" <<'C'
#include "toolgate.h"
int main(void) {
  tg_config cfg;
  tg_config_init(&cfg);
  (void)tg_runtime_run;
  return cfg.builtin_tools == 1 && TG_RUN_DEFAULT == 0 ? 0 : 1;
}
C
echo "==> toolgate.h alone: gcc -std=c11 ${strict[*]}"
gcc -std=c11 "${strict[@]}" -I"$work/poison" -I"$inc" -c "$work/alone.c" -o "$work/alone.o"
if command -v g++ >/dev/null; then
  echo "==> toolgate.h alone: g++ -std=c++11 ${strict[*]}"
  cp "$work/alone.c" "$work/alone.cc"
  g++ -std=c++11 "${strict[@]}" -I"$work/poison" -I"$inc" -c "$work/alone.cc" -o "$work/alone_cc.o"
fi

for order in before after; do
  {
    [ $order = before ] && printf '#include <uv.h>\n#include <cjson/cJSON.h>\n'
    echo '#include "toolgate.h"'
    [ $order = after ] && printf '#include <uv.h>\n#include <cjson/cJSON.h>\n'
    cat <<'C'
static int types_agree(uv_loop_t *loop, tg_runtime *rt, const tg_outcome *out) {
  cJSON *j = tg_outcome_to_json(out);
  const cJSON *r = out->result;
  uv_loop_t *l = tg_runtime_loop(rt);
  cJSON_Delete(j);
  return r != NULL && l == loop && uv_run(l, (uv_run_mode)TG_RUN_NOWAIT) == 0;
}
int main(void) { return types_agree(0, 0, 0); }
C
  } >"$work/with_$order.c"
  echo "==> uv.h and cJSON.h $order toolgate.h: gcc -std=c11 ${strict[*]} -D_POSIX_C_SOURCE=200809L"
  gcc -std=c11 "${strict[@]}" -D_POSIX_C_SOURCE=200809L \
    $(pkg-config --cflags libuv libcjson) -I"$inc" \
    -c "$work/with_$order.c" -o "$work/with_$order.o"
done
echo "ok: toolgate.h compiles alone and with uv.h and cJSON.h"
