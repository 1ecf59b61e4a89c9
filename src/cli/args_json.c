/*
 * args_json.c — "is this a JSON object?", with a useful answer when not.
 */
#include <stdio.h>
#include <string.h>
#include "toolgate.h"
#include "args_json.h"
#include "output.h"

static const char *type_name(const cJSON *v) {
  if (cJSON_IsArray(v)) return "an array";
  if (cJSON_IsString(v)) return "a string";
  if (cJSON_IsNumber(v)) return "a number";
  if (cJSON_IsBool(v)) return "a boolean";
  if (cJSON_IsNull(v)) return "null";
  return "not an object";
}

/* Reports the parse error at byte `at` as line:column plus what is there. */
static void report_syntax(const char *cmd, const char *text, size_t at) {
  size_t len = strlen(text);
  if (at > len) at = len;
  int line = 1, col = 1;
  for (size_t i = 0; i < at; i++) {
    if (text[i] == '\n') {
      line++;
      col = 1;
    } else {
      col++;
    }
  }
  size_t near = strcspn(text + at, "\n");
  if (near > 20) near = 20;
  if (at >= len)
    cli_error("%s: the args are not valid JSON: unexpected end at line %d, "
              "column %d", cmd, line, col);
  else
    cli_error("%s: the args are not valid JSON: error at line %d, column %d "
              "(byte %zu), near '%.*s'", cmd, line, col, at, (int)near,
              text + at);
}

cJSON *args_json_parse(const char *cmd, const char *text) {
  const char *end = NULL;
  cJSON *v = cJSON_ParseWithOpts(text, &end, 1);
  if (!v) {
    report_syntax(cmd, text, end ? (size_t)(end - text) : 0);
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
