/*
 * network.c — the tools a configuration marks as reaching the network
 * (network.h): globs kept with the runtime, read from the process's
 * reader on first use when no front declared them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>
#include "network.h"
#include "core.h"
#include "base/glob.h"

static tg_network_reader reader;

void tg__network_set_reader(tg_network_reader fn) { reader = fn; }

void tg__network_declare(tg_core *core, const cJSON *globs) {
  cJSON_Delete(core->network_tools);
  core->network_tools = globs ? cJSON_Duplicate(globs, 1) : NULL;
  core->network_known = 1;
}

int tg__network_of(tg_core *core, const char *tool, char err[TG_ERRMSG]) {
  if (!tool || !*tool) return 0;
  if (!core->network_known && reader) {
    cJSON *globs = NULL;
    char why[TG_ERRMSG] = "";
    if (reader(NULL, &globs, why, sizeof why) < 0) {
      /* not kept: the next call reads the file again, once it is fixed */
      snprintf(err, TG_ERRMSG, "which tools reach the network cannot be "
               "read: %s", why);
      return -1;
    }
    if (!core->network_tools) core->network_tools = globs;
    else { /* beside the names marked one by one (tg__network_mark) */
      cJSON *g;
      while (globs && (g = cJSON_DetachItemFromArray(globs, 0)))
        cJSON_AddItemToArray(core->network_tools, g);
      cJSON_Delete(globs);
    }
  }
  core->network_known = 1;
  const cJSON *g;
  cJSON_ArrayForEach(g, core->network_tools)
    if (cJSON_IsString(g) && tg_glob_match(g->valuestring, tool)) return 1;
  return 0;
}

int tg__network_mark(tg_core *core, const char *tool) {
  if (!core->network_tools && !(core->network_tools = cJSON_CreateArray()))
    return -1;
  /* a name, not a glob: its glob characters stand for themselves */
  size_t n = strlen(tool);
  char *g = malloc(2 * n + 1), *q = g;
  if (!g) return -1;
  for (const char *p = tool; *p; p++) {
    if (strchr("*?[]{}\\", *p)) *q++ = '\\';
    *q++ = *p;
  }
  *q = '\0';
  cJSON *s = cJSON_CreateString(g);
  free(g);
  if (!s) return -1;
  cJSON_AddItemToArray(core->network_tools, s);
  return 0;
}

void tg__network_free(tg_core *core) {
  cJSON_Delete(core->network_tools);
  core->network_tools = NULL;
  core->network_known = 0;
}
