/*
 * instance.h — what makes a command a long-running instance (`toolgate
 * watch`, `toolgate serve`): it reloads its policies on every save (the
 * runtime's watch, asked for in tg_config), on SIGHUP and on `toolgate
 * reload` (the control socket), and stops on SIGINT or SIGTERM.
 *
 * The runtime's reload handles do not keep the loop alive; the stop
 * signals do, which is what keeps such a command running until stopped.
 */
#ifndef TOOLGATE_KIT_INSTANCE_H
#define TOOLGATE_KIT_INSTANCE_H

#include <uv.h>
#include <cjson/cJSON.h>
#include "toolgate.h"

typedef struct cli_instance cli_instance;
struct cli_instance {
  tg_runtime *rt;
  uv_signal_t stop[2];   /* SIGINT, SIGTERM */
  int nstop;             /* how many are open */
  int stopping;          /* a stop signal came, or cli_instance_stop */
  /* Called once when it is asked to stop (may be NULL: the loop is
   * stopped, the command sees `stopping`). */
  void (*on_stop)(cli_instance *in, void *ud);
  void *ud;
};

/* SIGHUP reloads, the control socket at socket listens (NULL: one that
 * `toolgate reload --policies DIR` finds — the folder's own path, or one
 * beside it when another instance has that; no_socket: none, for an
 * instance without a policies folder), SIGINT/SIGTERM stop. -1 with a
 * message printed for `command` on failure. */
int cli_instance_start(cli_instance *in, tg_runtime *rt, const char *socket,
                       int no_socket, const char *command);
/* Marks it stopping, tells on_stop, stops the loop. */
void cli_instance_stop(cli_instance *in);
/* Closes the signal handles (before tg_runtime_free). */
void cli_instance_close(cli_instance *in);

#endif
