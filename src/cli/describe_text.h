/*
 * describe_text.h — tg_runtime_describe for people (`toolgate check`).
 */
#ifndef TOOLGATE_CLI_DESCRIBE_TEXT_H
#define TOOLGATE_CLI_DESCRIBE_TEXT_H

#include <stdio.h>
#include <cjson/cJSON.h>
#include "toolgate.h"

/* Prints what a policy directory registers: files, rules in evaluation
 * order, hooks in run order, tools, event handlers, warnings. */
void describe_print(FILE *f, const cJSON *d, const char *dir, int color);

#endif
