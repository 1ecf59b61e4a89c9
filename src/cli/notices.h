/*
 * notices.h — the CLI's view of notifications: each one shown
 * while a command runs (a budget alert, a policy's tg.notify) is printed
 * on stderr as "toolgate: <level>: <title>: <message>", coloured on a
 * terminal, so it never mixes with a command's output on stdout.
 */
#ifndef TOOLGATE_CLI_NOTICES_H
#define TOOLGATE_CLI_NOTICES_H

#include "toolgate.h"

/* What printing needs; the command owns it for as long as its runtime. */
typedef struct {
  void (*before)(void *ud); /* may be NULL: clears a line being drawn */
  void *ud;
} cli_notices;

/* Prints rt's notifications on stderr from now on. */
void cli_notices_to_stderr(tg_runtime *rt, cli_notices *n);

#endif
