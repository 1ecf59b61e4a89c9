/*
 * period.h — the periods budgets count in: a calendar day,
 * week (from Monday) or month in the local time of the process (TZ), or
 * the whole of a session, or all time. Calendar periods roll at local
 * midnight; a day with a daylight-saving change is 23 or 25 hours long.
 */
#ifndef TG_PERIOD_H
#define TG_PERIOD_H

#include <stdint.h>

typedef enum {
  TG_PERIOD_SESSION = 0,
  TG_PERIOD_DAY,
  TG_PERIOD_WEEK,
  TG_PERIOD_MONTH,
  TG_PERIOD_TOTAL
} tg_period;

#define TG_PERIOD_NAMES "session, day, week, month or total"

/* The period named name, or -1. */
int tg__period_of(const char *name);
const char *tg__period_name(tg_period p);

/* The period holding now_ms (ms since the epoch): [*start, *end). For
 * "session" and "total", *start is INT64_MIN and *end 0 (never rolls).
 * Returns 0, or -1 when the local time cannot be computed. */
int tg__period_bounds(tg_period p, int64_t now_ms, int64_t *start,
                      int64_t *end);

#endif
