/*
 * instance.c — the long-running instance's reload triggers and stop
 * signals (instance.h), shared by `toolgate watch` and `toolgate serve`.
 */
#include <signal.h>
#include <string.h>
#include "instance.h"
#include "output.h"

void cli_instance_stop(cli_instance *in) {
  if (in->stopping) return;
  in->stopping = 1;
  if (in->on_stop) in->on_stop(in, in->ud);
  uv_stop(tg_runtime_loop(in->rt));
}

static void on_stop_signal(uv_signal_t *h, int signum) {
  cli_instance_stop(h->data);
}

static int start_stop_signals(cli_instance *in, const char *command) {
  static const int sigs[2] = {SIGINT, SIGTERM};
  for (int i = 0; i < 2; i++) {
    uv_signal_init(tg_runtime_loop(in->rt), &in->stop[i]);
    in->stop[i].data = in;
    in->nstop++;
    int rc = uv_signal_start(&in->stop[i], on_stop_signal, sigs[i]);
    if (rc < 0) {
      cli_error("%s: cannot handle signal %d: %s", command, sigs[i],
                uv_strerror(rc));
      return -1;
    }
  }
  return 0;
}

int cli_instance_start(cli_instance *in, tg_runtime *rt, const char *socket,
                       int no_socket, const char *command) {
  char err[TG_ERRMSG] = "";
  in->rt = rt;
  if (tg_runtime_reload_on_signal(rt, SIGHUP, err) < 0 ||
      (!no_socket && tg_runtime_listen(rt, socket, err) < 0)) {
    cli_error("%s: %s", command, err);
    return -1;
  }
  return start_stop_signals(in, command);
}

void cli_instance_close(cli_instance *in) {
  for (int i = 0; i < in->nstop; i++) uv_close((uv_handle_t *)&in->stop[i], NULL);
  in->nstop = 0;
}
