/*
 * declared.c — the tools toolgate.lua's servers declare (servers.x.tools),
 * named as `toolgate serve` names them (server, separator, tool), for the
 * commands that judge calls without starting the servers: `toolgate
 * check` knows their names, `toolgate test` judges them as stand-ins.
 * main.c hands this to the kit (kit/declared_tools.h), so that the CLI
 * reads the MCP front's configuration without including it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cjson/cJSON.h>
#include "kit/kit.h"
#include "config.h"
#include "commands.h"

static int read_only(const mcp_upstream_conf *u, const char *tool) {
  for (size_t i = 0; u->read_only && u->read_only[i]; i++)
    if (tg_glob_match(u->read_only[i], tool)) return 1;
  return 0;
}

int mcp_declared_tools(const char *path, cJSON **out, char *err,
                       size_t errlen) {
  struct stat st;
  *out = cJSON_CreateArray();
  if (!*out) {
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  if (!path) {
    if (stat("toolgate.lua", &st) < 0) return 0; /* none: nothing declared */
    path = "toolgate.lua";
  }
  mcp_config c;
  if (mcp_config_load(path, &c, err, errlen) < 0) {
    cJSON_Delete(*out);
    *out = NULL;
    return -1;
  }
  const char *sep = c.separator ? c.separator : "__";
  for (size_t i = 0; i < c.nservers; i++) {
    const mcp_upstream_conf *u = &c.servers[i];
    for (size_t k = 0; u->tools && u->tools[k]; k++) {
      size_t n = strlen(u->name) + strlen(sep) + strlen(u->tools[k]) + 1;
      char *name = malloc(n);
      if (!name) continue;
      if (u->bare) snprintf(name, n, "%s", u->tools[k]);
      else snprintf(name, n, "%s%s%s", u->name, sep, u->tools[k]);
      cJSON *o = cJSON_CreateObject();
      cJSON_AddStringToObject(o, "name", name);
      cJSON_AddBoolToObject(o, "read_only", read_only(u, u->tools[k]));
      cJSON_AddItemToArray(*out, o);
      free(name);
    }
  }
  mcp_config_free(&c);
  return 0;
}
