/*
 * network.c — the tools a configuration marks as reaching the network
 * (network.h): globs kept with the runtime, read from the process's
 * reader on first use when no front declared them, and again when the
 * file changed (its stamp).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>
#include "network.h"
#include "core.h"
#include "base/glob.h"

static tg_network_reader reader;
static tg_network_stamp stamp_of;

void tg__network_set_reader(tg_network_reader fn, tg_network_stamp stamp) {
  reader = fn;
  stamp_of = stamp;
}

void tg__network_declare(tg_core *core, const cJSON *globs) {
  cJSON_Delete(core->network_tools);
  core->network_tools = globs ? cJSON_Duplicate(globs, 1) : NULL;
  core->network_declared = 1;
}

/* Reads the reader's globs when none were read yet, or when the file
 * changed since (a resident instance sees a save): 0, or -1 with err. */
static int read_globs(tg_core *core, char err[TG_ERRMSG]) {
  uint64_t now = stamp_of ? stamp_of() : 0;
  if (core->network_read && (!stamp_of || now == core->network_stamp))
    return 0;
  cJSON *globs = NULL;
  char why[TG_ERRMSG] = "";
  if (reader(NULL, &globs, why, sizeof why) < 0) {
    /* nothing kept: the next call reads the file again, once it is fixed */
    snprintf(err, TG_ERRMSG, "which tools reach the network cannot be "
             "read: %.460s", why);
    return -1;
  }
  cJSON_Delete(core->network_tools);
  core->network_tools = globs;
  core->network_read = 1;
  core->network_stamp = now;
  return 0;
}

static int matches(const cJSON *globs, const char *tool) {
  const cJSON *g;
  cJSON_ArrayForEach(g, globs)
    if (cJSON_IsString(g) && tg_glob_match(g->valuestring, tool)) return 1;
  return 0;
}

int tg__network_of(tg_core *core, const char *tool, char err[TG_ERRMSG]) {
  if (!tool || !*tool) return 0;
  if (matches(core->network_marked, tool)) return 1;
  if (!core->network_declared && reader && read_globs(core, err) < 0)
    return -1;
  return matches(core->network_tools, tool);
}

int tg__network_mark(tg_core *core, const char *tool) {
  if (!core->network_marked && !(core->network_marked = cJSON_CreateArray()))
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
  cJSON_AddItemToArray(core->network_marked, s);
  return 0;
}

void tg__network_free(tg_core *core) {
  cJSON_Delete(core->network_tools);
  cJSON_Delete(core->network_marked);
  core->network_tools = core->network_marked = NULL;
  core->network_declared = core->network_read = 0;
}
