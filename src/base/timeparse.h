/*
 * timeparse.h — times as people type them (`toolgate log --since 10m`,
 * `approvals grant --until 2025-07-01`, Lua `until = "2h"`): tg_time_parse
 * is public (toolgate.h); the start of the current hour/day/week/month is
 * the usage ledger's period.
 */
#ifndef TG_TIMEPARSE_H
#define TG_TIMEPARSE_H

#include <stdint.h>

/* The start, in ms since the epoch, of the period ("hour", "day", "week"
 * (from Monday) or "month", in local time) that now_ms falls in. -1 when
 * period is none of those. */
int64_t tg__period_start(const char *period, int64_t now_ms);

/* The names tg__period_start knows, for messages. */
#define TG_PERIODS "hour, day, week or month"

#endif
