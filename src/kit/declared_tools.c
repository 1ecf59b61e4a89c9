/*
 * declared_tools.c — the reader of declared tools that main.c sets
 * (declared_tools.h).
 */
#include <stdio.h>
#include <cjson/cJSON.h>
#include "declared_tools.h"

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
