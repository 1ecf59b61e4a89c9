/*
 * period.c — calendar periods in local time (period.h), through
 * localtime_r and mktime, which know the time zone's rules: the next
 * period's start is this one's with the day, week or month moved on and
 * mktime left to normalise (tm_isdst -1: whatever holds then).
 */
#include <string.h>
#include <time.h>
#include "period.h"

static const char *const names[] = {"session", "day", "week", "month",
                                    "total"};

int tg__period_of(const char *name) {
  for (int i = 0; name && i < 5; i++)
    if (strcmp(name, names[i]) == 0) return i;
  return -1;
}

const char *tg__period_name(tg_period p) {
  return (unsigned)p < 5 ? names[p] : "?";
}

static int64_t ms_of(struct tm tm) {
  tm.tm_isdst = -1;
  time_t t = mktime(&tm);
  return t == (time_t)-1 ? INT64_MIN : (int64_t)t * 1000;
}

/* floor division: times before 1970 round down too */
static time_t seconds_of(int64_t ms) {
  return (time_t)(ms >= 0 ? ms / 1000 : -((-ms + 999) / 1000));
}

int tg__period_bounds(tg_period p, int64_t now_ms, int64_t *start,
                      int64_t *end) {
  if (p == TG_PERIOD_SESSION || p == TG_PERIOD_TOTAL) {
    *start = INT64_MIN;
    *end = 0;
    return 0;
  }
  time_t now = seconds_of(now_ms);
  struct tm tm;
  if (!localtime_r(&now, &tm)) return -1;
  tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
  struct tm next = tm;
  if (p == TG_PERIOD_DAY) {
    next.tm_mday += 1;
  } else if (p == TG_PERIOD_WEEK) {
    tm.tm_mday -= (tm.tm_wday + 6) % 7; /* back to Monday */
    next = tm;
    next.tm_mday += 7;
  } else {
    tm.tm_mday = 1;
    next = tm;
    next.tm_mon += 1;
  }
  *start = ms_of(tm);
  *end = ms_of(next);
  return *start == INT64_MIN || *end == INT64_MIN ? -1 : 0;
}
