/*
 * interrupt.h — Ctrl-C while a call runs: the first SIGINT cancels the
 * call (it ends "cancelled" with its partial output), a second one kills
 * the commands still running and exits at once with 130.
 */
#ifndef TOOLGATE_CLI_INTERRUPT_H
#define TOOLGATE_CLI_INTERRUPT_H

#include <uv.h>

typedef struct cli_interrupt cli_interrupt;

/* Called on the first Ctrl-C; returns 0 if it cancelled something, else a
 * negative code (the call is already ending: nothing more to do). */
typedef int (*cli_cancel_fn)(void *ud);

/* Called on the second Ctrl-C, just before the process exits: kill what
 * must not outlive it. */
typedef void (*cli_quit_fn)(void *ud);

/* Starts watching SIGINT on `loop`. The watcher does not keep the loop
 * alive. NULL (after a message) if it could not be set up. */
cli_interrupt *cli_interrupt_start(uv_loop_t *loop, cli_cancel_fn cancel,
                                   cli_quit_fn quit, void *ud);

/* Stops watching; the memory goes with the handle's close callback, so the
 * loop must run once more. Safe with NULL. */
void cli_interrupt_close(cli_interrupt *in);

#endif
