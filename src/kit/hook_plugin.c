/*
 * hook_plugin.c — toolgate's OpenCode plugin written with its hook line,
 * and the line read back. The shipped file has two lines to fill in,
 *
 *   const COMMAND = null // written by `toolgate hook install opencode`
 *   const TIMEOUT_MS = 30000 // written by `toolgate hook install opencode`
 *
 * which become `const COMMAND = "<the line, as a JSON string>"` and the
 * time limit in milliseconds. A JSON string is a JavaScript string
 * literal, so the line goes in quoted by the JSON printer and comes back
 * through the strict JSON parser: no text of the line is ever JavaScript.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>
#include "base/json.h"
#include "hook_plugin.h"

#define COMMAND_AT "\nconst COMMAND = "
#define TIMEOUT_AT "\nconst TIMEOUT_MS = "
#define MARK "export const ToolgatePlugin = "

/* The line of text that starts after the first "\n" of at (its end: the
 * next "\n"); NULL when there is none. */
static const char *line_at(const char *text, const char *at, const char **end) {
  const char *p = strstr(text, at);
  if (!p) return NULL;
  p += 1;
  *end = strchr(p, '\n');
  if (!*end) *end = p + strlen(p);
  return p;
}

char *hook_plugin_text(const char *line, unsigned timeout_ms) {
  const char *src = hook_plugin_opencode, *c_end = NULL, *t_end = NULL;
  const char *c = line_at(src, COMMAND_AT, &c_end);
  const char *t = line_at(src, TIMEOUT_AT, &t_end);
  if (!c || !t || t < c_end) return NULL;
  cJSON *s = cJSON_CreateString(line);
  char *lit = s ? tg_json_print(s, 0) : NULL;
  cJSON_Delete(s);
  if (!lit) return NULL;
  size_t n = strlen(src) + strlen(lit) + 128;
  char *out = malloc(n);
  if (out)
    snprintf(out, n, "%.*sconst COMMAND = %s // written by `toolgate hook "
             "install opencode`%.*sconst TIMEOUT_MS = %u // written by "
             "`toolgate hook install opencode`%s",
             (int)(c - src), src, lit, (int)(t - c_end), c_end, timeout_ms,
             t_end);
  free(lit);
  return out;
}

char *hook_plugin_command(const char *text) {
  const char *end = NULL;
  const char *c = text && strstr(text, MARK) ? line_at(text, COMMAND_AT, &end)
                                            : NULL;
  if (!c) return NULL;
  c += strlen(COMMAND_AT) - 1;
  if (*c != '"') return NULL; /* null: no command */
  /* the string literal: up to its closing quote, escapes skipped */
  const char *stop = c + 1;
  while (stop < end && *stop != '"') stop += *stop == '\\' && stop + 1 < end ? 2 : 1;
  if (stop >= end) return NULL;
  cJSON *v = tg_json_parse(c, (size_t)(stop + 1 - c), NULL, NULL, 0);
  char *out = cJSON_IsString(v) ? strdup(v->valuestring) : NULL;
  cJSON_Delete(v);
  return out;
}
