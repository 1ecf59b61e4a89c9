/*
 * interrupt.c — SIGINT through a uv_signal_t, so the handler runs on the
 * loop like everything else and may call into the runtime.
 */
#include <stdio.h>
#include <stdlib.h>
#include "interrupt.h"
#include "kit/output.h"

struct cli_interrupt {
  uv_signal_t sig;   /* sig.data points back here */
  cli_cancel_fn cancel;
  cli_quit_fn quit;
  void *ud;
  int count;
};

static void quit_now(cli_interrupt *in) {
  if (in->quit) in->quit(in->ud);
  uv_tty_reset_mode(); /* in case a prompt changed the terminal */
  fputc('\n', stderr);
  cli_error("interrupted");
  fflush(NULL);
  exit(CLI_EXIT_INTERRUPTED);
}

static void on_sigint(uv_signal_t *h, int signum) {
  cli_interrupt *in = h->data;
  if (++in->count > 1) quit_now(in);
  fputs("\n", stderr); /* the ^C the terminal echoed ends no line */
  if (in->cancel(in->ud) == 0)
    cli_error("cancelling the call (Ctrl-C again to quit at once)");
  else
    cli_error("the call is already ending (Ctrl-C again to quit at once)");
}

static void on_closed(uv_handle_t *h) { free(h->data); }

cli_interrupt *cli_interrupt_start(uv_loop_t *loop, cli_cancel_fn cancel,
                                   cli_quit_fn quit, void *ud) {
  cli_interrupt *in = calloc(1, sizeof *in);
  if (!in) {
    cli_error("out of memory");
    return NULL;
  }
  in->cancel = cancel;
  in->quit = quit;
  in->ud = ud;
  int rc = uv_signal_init(loop, &in->sig);
  if (rc < 0) {
    free(in); /* nothing was registered with the loop */
  } else {
    in->sig.data = in;
    rc = uv_signal_start(&in->sig, on_sigint, SIGINT);
    if (rc < 0) uv_close((uv_handle_t *)&in->sig, on_closed);
  }
  if (rc < 0) {
    cli_error("cannot watch for Ctrl-C: %s", uv_strerror(rc));
    return NULL;
  }
  /* Ctrl-C must not keep the loop running once the call is over. */
  uv_unref((uv_handle_t *)&in->sig);
  return in;
}

void cli_interrupt_close(cli_interrupt *in) {
  if (!in) return;
  uv_close((uv_handle_t *)&in->sig, on_closed);
}
