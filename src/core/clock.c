/* clock.c — the runtime's wall clock (core.h: tg__clock_ms): the host's
 * injected one (tg_runtime_set_clock) or the system's. */
#include "core.h"
#include "base/util.h"

int64_t tg__clock_ms(const tg_core *core) {
  return core->clock ? core->clock(core->clock_ud) : (int64_t)tg__wall_ms();
}
