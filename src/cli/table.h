/*
 * table.h — columns for `toolgate log` and `toolgate approvals list`. The
 * text comes from the database, that is from agents (tool names, session
 * ids, args): a control character could drive the terminal, so each one
 * is shown as '?'.
 */
#ifndef TOOLGATE_CLI_TABLE_H
#define TOOLGATE_CLI_TABLE_H

#include <stdint.h>
#include <stdio.h>
#include <cjson/cJSON.h>
#include "toolgate.h"

/* s in a column of width bytes (0: as long as it is), padded; a longer
 * one is cut and ends in '~'. NULL prints "-". */
void table_cell(FILE *f, const char *s, int width);
/* ms since the epoch as local "YYYY-MM-DD HH:MM:SS" into buf (20 bytes). */
char *table_time(int64_t ms, char buf[20]);
/* The string at o[k], or NULL. */
const char *table_str(const cJSON *o, const char *k);
/* The number at o[k], or dflt. */
double table_num(const cJSON *o, const char *k, double dflt);

#endif
