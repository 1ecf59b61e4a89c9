/*
 * output.h — how the fronts' commands write: "toolgate: ..." on stderr,
 * colour only on a terminal without NO_COLOR, JSON lines for machines and
 * a readable rendering of a call's outcome for people.
 */
#ifndef TOOLGATE_KIT_OUTPUT_H
#define TOOLGATE_KIT_OUTPUT_H

#include <stdio.h>
#include <cjson/cJSON.h>
#include "toolgate.h"

#include "exit_codes.h" /* what a command returns after its error line */

#if defined(__GNUC__)
#define CLI_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define CLI_PRINTF(a, b)
#endif

/* "toolgate: <message>\n" on stderr. */
void cli_error(const char *fmt, ...) CLI_PRINTF(1, 2);

/* 1 when `f` is a terminal and NO_COLOR is not set (https://no-color.org). */
int cli_color_wanted(FILE *f);

/* An SGR escape ("1", "31", ...) when colour is on, else nothing. */
void cli_sgr(FILE *f, int color, const char *code);

/* One JSON value on one line, then a newline. */
void cli_print_json_line(FILE *f, const cJSON *v);

/* The outcome JSON of tg_outcome_to_json, for people: status, the result
 * (a string raw, anything else as indented JSON) or the error, the
 * decision, attempts and duration. */
void cli_print_outcome(FILE *f, const cJSON *outcome, int color);

#endif
