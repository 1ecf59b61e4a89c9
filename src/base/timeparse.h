/*
 * timeparse.h — times as people type them (`toolgate log --since 10m`,
 * `approvals grant --until 2025-07-01`, Lua `until = "2h"`): tg_time_parse
 * for the fronts (src/kit/kit.h); the start of the current
 * hour/day/week/month is the usage ledger's period.
 */
#ifndef TG_TIMEPARSE_H
#define TG_TIMEPARSE_H

#include <stdint.h>
#include "toolgate.h"

/* Parses a time as the CLI and the Lua module take it: "now"; a duration
 * counted back from now_ms (0: the wall clock now; dir < 0: "since") or
 * ahead of it (dir > 0:
 * "until") — "90s", "10m", "2h", "3d", "1w"; or a date "2025-06-01",
 * "2025-06-01T14:30[:05]" (a space for the T is fine) in local time, or
 * UTC with a trailing "Z". *out_ms is ms since the epoch. -EINVAL with
 * what is wrong in err. */
int tg_time_parse(const char *text, int64_t now_ms, int dir, int64_t *out_ms,
           char err[TG_ERRMSG]);

/* The start, in ms since the epoch, of the period ("hour", "day", "week"
 * (from Monday) or "month", in local time) that now_ms falls in. -1 when
 * period is none of those. */
int64_t tg__period_start(const char *period, int64_t now_ms);

/* The names tg__period_start knows, for messages. */
#define TG_PERIODS "hour, day, week or month"

#endif
