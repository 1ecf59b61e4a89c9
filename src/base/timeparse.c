/*
 * timeparse.c — "now", durations ("90s", "10m", "2h", "3d", "1w") counted
 * back or ahead from now, and dates ("2025-06-01", "2025-06-01T14:30",
 * "2025-06-01 14:30:05", local time, or UTC with a trailing "Z"). Parsed by
 * hand: sscanf would take " 10m", "+10m" and "10mx" alike, and a typo in
 * `--until` must not turn into "forever".
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "timeparse.h"
#include "util.h"
#include <cjson/cJSON.h>
#include "toolgate.h"

/* Reads exactly n digits at *p. -1 when they are not all digits. */
static int digits(const char **p, int n) {
  int v = 0;
  for (int i = 0; i < n; i++, (*p)++) {
    if (**p < '0' || **p > '9') return -1;
    v = v * 10 + (**p - '0');
  }
  return v;
}

static int days_in(int year, int month) {
  static const int d[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  int leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return month == 2 && leap ? 29 : d[month - 1];
}

/* "HH:MM" or "HH:MM:SS" at *p into tm. */
static int clock_part(const char **p, struct tm *tm) {
  int h = digits(p, 2);
  if (h < 0 || **p != ':') return -1;
  (*p)++;
  int m = digits(p, 2), s = 0;
  if (m < 0) return -1;
  if (**p == ':') {
    (*p)++;
    if ((s = digits(p, 2)) < 0) return -1;
  }
  if (h > 23 || m > 59 || s > 59) return -1;
  tm->tm_hour = h;
  tm->tm_min = m;
  tm->tm_sec = s;
  return 0;
}

static int parse_date(const char *s, int64_t *out) {
  struct tm tm;
  memset(&tm, 0, sizeof tm);
  const char *p = s;
  int y = digits(&p, 4);
  if (y < 1970 || *p++ != '-') return -1;
  int mo = digits(&p, 2);
  if (mo < 1 || mo > 12 || *p++ != '-') return -1;
  int d = digits(&p, 2);
  if (d < 1 || d > days_in(y, mo)) return -1;
  if ((*p == 'T' || *p == ' ') && (p++, clock_part(&p, &tm) < 0)) return -1;
  int utc = *p == 'Z';
  if (utc) p++;
  if (*p) return -1;
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_isdst = -1;
  time_t t = utc ? timegm(&tm) : mktime(&tm);
  if (t == (time_t)-1) return -1;
  *out = (int64_t)t * 1000;
  return 0;
}

/* "10m" and friends into ms; -1 when s is not one. */
static int64_t parse_duration(const char *s) {
  static const struct { char unit; int64_t ms; } units[] = {
      {'s', 1000}, {'m', 60000}, {'h', 3600000}, {'d', 86400000},
      {'w', 604800000}};
  int64_t n = 0;
  const char *p = s;
  for (; *p >= '0' && *p <= '9'; p++) {
    n = n * 10 + (*p - '0');
    if (n > 1000000000) return -1; /* 31 years in seconds: plenty */
  }
  if (p == s || !p[0] || p[1]) return -1;
  for (size_t i = 0; i < sizeof units / sizeof *units; i++)
    if (*p == units[i].unit) return n * units[i].ms;
  return -1;
}

int tg_time_parse(const char *text, int64_t now_ms, int dir, int64_t *out_ms,
                  char err[TG_ERRMSG]) {
  if (!now_ms) now_ms = (int64_t)tg__wall_ms();
  if (!text || !*text) {
    if (err) snprintf(err, TG_ERRMSG, "a time is empty");
    return -EINVAL;
  }
  if (strcmp(text, "now") == 0) {
    *out_ms = now_ms;
    return 0;
  }
  int64_t d = parse_duration(text);
  if (d >= 0) {
    *out_ms = dir < 0 ? now_ms - d : now_ms + d;
    return 0;
  }
  if (strlen(text) < 40 && parse_date(text, out_ms) == 0) return 0;
  if (err)
    snprintf(err, TG_ERRMSG, "'%.60s' is not a time: write a duration "
             "(90s, 10m, 2h, 3d, 1w), a date (2025-06-01, "
             "2025-06-01T14:30, add Z for UTC) or now", text);
  return -EINVAL;
}

int64_t tg__period_start(const char *period, int64_t now_ms) {
  time_t t = (time_t)(now_ms / 1000);
  struct tm tm;
  if (!period || !localtime_r(&t, &tm)) return -1;
  if (strcmp(period, "hour") == 0) {
    tm.tm_min = tm.tm_sec = 0;
  } else if (strcmp(period, "day") == 0) {
    tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
  } else if (strcmp(period, "week") == 0) {
    tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
    tm.tm_mday -= (tm.tm_wday + 6) % 7; /* back to Monday; mktime fixes */
  } else if (strcmp(period, "month") == 0) {
    tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
    tm.tm_mday = 1;
  } else {
    return -1;
  }
  tm.tm_isdst = -1;
  time_t s = mktime(&tm);
  return s == (time_t)-1 ? -1 : (int64_t)s * 1000;
}
