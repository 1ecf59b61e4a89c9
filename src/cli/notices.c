/* notices.c — notifications on stderr (notices.h). */
#include <stdio.h>
#include <string.h>
#include <cjson/cJSON.h>
#include "notices.h"
#include "kit/output.h"

static const char *str(const cJSON *o, const char *k) {
  return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k));
}

static const char *color_of(const char *level) {
  if (!level) return "0";
  return !strcmp(level, "error") ? "31" : !strcmp(level, "warning") ? "33"
         : !strcmp(level, "success") ? "32" : "36";
}

static void shown(tg_runtime *rt, const char *change, const cJSON *n,
                  const cJSON *list, void *ud) {
  cli_notices *p = ud;
  if (strcmp(change, "shown") != 0) return;
  if (p->before) p->before(p->ud);
  int color = cli_color_wanted(stderr);
  fputs("toolgate: ", stderr);
  cli_sgr(stderr, color, color_of(str(n, "level")));
  fputs(str(n, "level"), stderr);
  cli_sgr(stderr, color, "0");
  fprintf(stderr, ": %s", str(n, "title"));
  if (str(n, "message")) fprintf(stderr, ": %s", str(n, "message"));
  fputc('\n', stderr);
}

void cli_notices_to_stderr(tg_runtime *rt, cli_notices *n) {
  tg_notify_subscribe(rt, shown, n);
}
