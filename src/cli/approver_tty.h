/*
 * approver_tty.h — asks the person at the terminal to approve a call.
 *
 * The prompt goes to stderr; the answer is read from the terminal on fd 0
 * through a uv_tty_t, so the loop keeps running (timers, other calls, the
 * approval timeout) while the person thinks.
 */
#ifndef TOOLGATE_CLI_APPROVER_TTY_H
#define TOOLGATE_CLI_APPROVER_TTY_H

#include <uv.h>
#include <cjson/cJSON.h>
#include "toolgate.h"

typedef struct tty_approver tty_approver;

/* 1 when stdin and stderr are both terminals: someone can be asked. */
int tty_approver_possible(void);

/* Installs an approver on rt that asks on the terminal. NULL if out of
 * memory. The terminal is opened at the first ask. */
tty_approver *tty_approver_new(tg_runtime *rt);

/* 1 while an ask waits for its answer. */
int tty_approver_pending(const tty_approver *a);

/* Uninstalls the approver and closes the terminal handle (its memory goes
 * with the close callback, so the loop must run once more). Safe with
 * NULL. */
void tty_approver_close(tty_approver *a);

#endif
