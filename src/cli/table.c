/* table.c — columns of database text (table.h). */
#include <string.h>
#include <time.h>
#include "table.h"

static int safe(unsigned char c) { return c >= 0x20 && c != 0x7f; }

void table_cell(FILE *f, const char *s, int width) {
  if (!s) s = "-";
  size_t n = strlen(s);
  int cut = width > 0 && n > (size_t)width;
  size_t shown = cut ? (size_t)width - 1 : n;
  while (cut && shown && ((unsigned char)s[shown] & 0xC0) == 0x80)
    shown--; /* not inside a UTF-8 sequence */
  for (size_t i = 0; i < shown; i++)
    fputc(safe((unsigned char)s[i]) ? s[i] : '?', f);
  if (cut) fputc('~', f);
  for (size_t i = cut ? shown + 1 : n; width > 0 && i < (size_t)width; i++)
    fputc(' ', f);
}

char *table_time(int64_t ms, char buf[20]) {
  time_t t = (time_t)(ms / 1000);
  struct tm tm;
  if (!localtime_r(&t, &tm) || !strftime(buf, 20, "%Y-%m-%d %H:%M:%S", &tm))
    strcpy(buf, "?");
  return buf;
}

const char *table_str(const cJSON *o, const char *k) {
  return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k));
}

double table_num(const cJSON *o, const char *k, double dflt) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}
