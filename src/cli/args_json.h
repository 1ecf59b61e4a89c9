/*
 * args_json.h — checks the JSON args of a call before anything is loaded,
 * so a typo is reported with its line and column.
 */
#ifndef TOOLGATE_CLI_ARGS_JSON_H
#define TOOLGATE_CLI_ARGS_JSON_H

#include <cjson/cJSON.h>
#include "toolgate.h"

/* The parsed object (free with cJSON_Delete), or NULL after a message,
 * prefixed with the command's name, that says what is wrong and where. */
cJSON *args_json_parse(const char *cmd, const char *text);

#endif
