/*
 * spinner.h — the one-line activity indicator `toolgate call` shows on
 * stderr while a tool runs: a frame, the tool's name, the elapsed time and
 * the last line of output the tool reported, redrawn in place with "\r".
 *
 * Only on a terminal: cli_spinner_new returns NULL when stderr is not one,
 * and every function accepts NULL, so callers need no checks. A run shorter
 * than 200 ms draws nothing.
 */
#ifndef TOOLGATE_CLI_SPINNER_H
#define TOOLGATE_CLI_SPINNER_H

#include <uv.h>

typedef struct cli_spinner cli_spinner;

/* A stopped spinner for `tool` on `loop`, or NULL (no terminal). */
cli_spinner *cli_spinner_new(uv_loop_t *loop, const char *tool);

/* The tool has started: count from now (if not counting already) and draw
 * from 200 ms on. */
void cli_spinner_start(cli_spinner *s);

/* The tool's latest line of output (or progress message). */
void cli_spinner_set_line(cli_spinner *s, const char *line);

/* Erases the line for one message on stderr (a notification); the next
 * tick draws it again. */
void cli_spinner_clear(cli_spinner *s);

/* Erases the line and stops drawing; anything may print after this. */
void cli_spinner_stop(cli_spinner *s);

/* Stops and frees; the memory goes with the timer's close callback, so the
 * loop must run once more. */
void cli_spinner_close(cli_spinner *s);

#endif
