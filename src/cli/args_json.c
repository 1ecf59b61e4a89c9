/*
 * args_json.c — "is this a JSON object?", with a useful answer when not.
 * The text goes through the one parser (base/json.c), so the CLI refuses
 * exactly what the chain would (duplicate keys, 1e400, bad UTF-8) and says
 * where, as line and column.
 */
#include <stdio.h>
#include <string.h>
#include <cjson/cJSON.h>
#include "toolgate.h"
#include "kit/kit.h"
#include "args_json.h"
#include "kit/output.h"

static const char *type_name(const cJSON *v) {
  if (cJSON_IsArray(v)) return "an array";
  if (cJSON_IsString(v)) return "a string";
  if (cJSON_IsNumber(v)) return "a number";
  if (cJSON_IsBool(v)) return "a boolean";
  if (cJSON_IsNull(v)) return "null";
  return "not an object";
}

/* Reports the parser's message with the line and column of byte `at`, and
 * the text there when it is plain ASCII (the message names anything
 * else). */
static void report(const char *cmd, const char *text, size_t at,
                   const char *why) {
  size_t len = strlen(text);
  if (at > len) at = len;
  int line = 1, col = 1;
  for (size_t i = 0; i < at; i++) {
    if (text[i] == '\n') {
      line++;
      col = 1;
    } else if (((unsigned char)text[i] & 0xC0) != 0x80) {
      col++; /* a column is a character, not a byte */
    }
  }
  size_t near = 0;
  while (near < 20 && text[at + near] >= 0x20 && text[at + near] < 0x7F)
    near++;
  if (near)
    cli_error("%s: the args are not valid JSON at line %d, column %d, near "
              "'%.*s': %s", cmd, line, col, (int)near, text + at, why);
  else
    cli_error("%s: the args are not valid JSON at line %d, column %d: %s",
              cmd, line, col, why);
}

cJSON *args_json_parse(const char *cmd, const char *text) {
  char why[300];
  size_t at = 0;
  cJSON *v = tg_json_parse(text, strlen(text), &at, why, sizeof why);
  if (!v) {
    report(cmd, text, at, why);
    return NULL;
  }
  if (!cJSON_IsObject(v)) {
    cli_error("%s: the args must be a JSON object, like '{\"path\": \"x\"}', "
              "not %s", cmd, type_name(v));
    cJSON_Delete(v);
    return NULL;
  }
  return v;
}
