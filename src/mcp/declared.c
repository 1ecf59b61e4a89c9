/*
 * declared.c — the tools toolgate.lua's servers declare (servers.x.tools),
 * named as `toolgate serve` names them (server, separator, tool), for the
 * commands that judge calls without starting the servers: `toolgate
 * check` knows their names, `toolgate test` judges them as stand-ins; and
 * the tools they mark as reaching the network (servers.x.network), as
 * globs over those names, for call.network in every front.
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

/* Loads the config at path (NULL: ./toolgate.lua when there is one) into
 * c with an empty array in *out: 1, 0 when there is no file, -1 with err. */
static int load(const char *path, mcp_config *c, cJSON **out, char *err,
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
  if (mcp_config_load(path, c, err, errlen) < 0) {
    cJSON_Delete(*out);
    *out = NULL;
    return -1;
  }
  return 1;
}

/* Adds "<name><sep><glob>" to out, once. */
static void add_glob(cJSON *out, const char *name, const char *sep,
                     const char *glob) {
  size_t n = strlen(name) + strlen(sep) + strlen(glob) + 1;
  char *g = malloc(n);
  if (!g) return;
  snprintf(g, n, "%s%s%s", name, sep, glob);
  const cJSON *e;
  int have = 0;
  cJSON_ArrayForEach(e, out) have |= !strcmp(e->valuestring, g);
  if (!have) cJSON_AddItemToArray(out, cJSON_CreateString(g));
  free(g);
}

cJSON *mcp_network_globs(const mcp_config *c) {
  cJSON *out = cJSON_CreateArray();
  const char *sep = c->separator ? c->separator : "__";
  for (size_t i = 0; out && i < c->nservers; i++) {
    const mcp_upstream_conf *u = &c->servers[i];
    /* as serve names them, and as an agent's own MCP client does
     * (mcp__github__x is judged as github__x, whatever our separator) */
    static const char *const every[] = {"*", NULL};
    const char *const *globs = u->network_all
                                   ? every
                                   : (const char *const *)u->network;
    for (size_t k = 0; globs && globs[k]; k++) {
      add_glob(out, u->bare ? "" : u->name, u->bare ? "" : sep, globs[k]);
      add_glob(out, u->name, "__", globs[k]);
    }
  }
  return out;
}

int mcp_network_tools(const char *path, cJSON **out, char *err,
                      size_t errlen) {
  mcp_config c;
  int rc = load(path, &c, out, err, errlen);
  if (rc <= 0) return rc;
  cJSON_Delete(*out);
  *out = mcp_network_globs(&c);
  mcp_config_free(&c);
  if (*out) return 0;
  snprintf(err, errlen, "out of memory");
  return -1;
}

uint64_t mcp_config_stamp(void) {
  struct stat st;
  if (stat("toolgate.lua", &st) < 0) return 0;
  uint64_t h = 1469598103934665603ull; /* FNV-1a over the facts */
  const uint64_t facts[] = {(uint64_t)st.st_ino, (uint64_t)st.st_size,
                            (uint64_t)st.st_mtim.tv_sec,
                            (uint64_t)st.st_mtim.tv_nsec,
                            (uint64_t)st.st_ctim.tv_nsec};
  for (size_t i = 0; i < sizeof facts / sizeof *facts; i++)
    for (int b = 0; b < 64; b += 8) h = (h ^ ((facts[i] >> b) & 0xff)) * 1099511628211ull;
  return h ? h : 1;
}

int mcp_declared_tools(const char *path, cJSON **out, char *err,
                       size_t errlen) {
  mcp_config c;
  int rc = load(path, &c, out, err, errlen);
  if (rc <= 0) return rc;
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
