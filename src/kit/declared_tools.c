/*
 * declared_tools.c — the reader of declared tools that main.c sets
 * (declared_tools.h), and of the tools that reach the network, which it
 * also hands to the runtime.
 */
#include <stdio.h>
#include <cjson/cJSON.h>
#include "declared_tools.h"
#include "runtime/front_api.h"

static kit_declared_tools_fn reader;

void kit_set_declared_tools(kit_declared_tools_fn fn) { reader = fn; }

int kit_declared_tools(const char *path, cJSON **out, char *err,
                       size_t errlen) {
  if (reader) return reader(path, out, err, errlen);
  *out = cJSON_CreateArray();
  if (*out) return 0;
  snprintf(err, errlen, "out of memory");
  return -1;
}

static kit_declared_tools_fn network_reader;

void kit_set_network_tools(kit_declared_tools_fn fn, uint64_t (*stamp)(void)) {
  network_reader = fn;
  tg_runtime_set_network_reader(fn, stamp);
}

int kit_network_tools(const char *path, cJSON **out, char *err,
                      size_t errlen) {
  if (network_reader) return network_reader(path, out, err, errlen);
  *out = cJSON_CreateArray();
  if (*out) return 0;
  snprintf(err, errlen, "out of memory");
  return -1;
}
