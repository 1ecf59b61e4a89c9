/*
 * daemon_cmd.c — `toolgate daemon`: a resident instance for agent hooks.
 * It loads the policies (as `toolgate hook` would in-process: the same
 * configuration, so the same answers), reloads them on save, SIGHUP and
 * `toolgate reload`, and answers hook events and other control requests
 * on the policies folder's control socket until SIGINT or SIGTERM, or
 * `toolgate hook --start-daemon` starts one when none runs. Beside another
 * instance of the folder it takes a socket of its own (control.h, "Many
 * instances"). Quiet: it prints only why it could not start.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>
#include "hook.h"

const char cmd_daemon_usage[] =
    "usage: toolgate daemon [--policies DIR] [--socket PATH] [options]\n"
    "\n"
    "Runs a resident instance for the policies in DIR (default ./policies)\n"
    "that answers 'toolgate hook' events over its control socket (the path\n"
    "'toolgate hook --policies DIR' looks for), so a hook costs little more\n"
    "than starting a process. Reloads the policies when a file is saved, on\n"
    "SIGHUP and on 'toolgate reload'; a policy error keeps the generation\n"
    "that loaded ('toolgate reload' says why). Runs until SIGINT or SIGTERM.\n"
    "When another instance ('toolgate serve', 'toolgate watch') already has\n"
    "that path, it answers the hooks, and this one runs beside it on a\n"
    "socket of its own that 'toolgate reload' reaches too, until that\n"
    "instance stops: then one beside it takes the path.\n"
    "\n"
    "options:\n"
    "  --policies DIR      the policies folder (default ./policies)\n"
    "  --socket PATH       the control socket to listen on\n"
    "  --trusted-policies, --policy-time-limit MS, --policy-memory-cap BYTES\n"
    "                      the policy sandbox (give 'toolgate hook' the same)\n"
    "  --db PATH           the database the calls it judges, turns, usage\n"
    "                      and sessions go to (default\n"
    "                      ${XDG_STATE_HOME:-~/.local/state}/toolgate/toolgate.db)\n"
    "  --no-db             none: turns and transcript marks kept in memory\n"
    "\n"
    "exit status: 0 stopped by a signal; 2 usage or configuration error\n"
    "(the policies do not load, another instance has the --socket path).\n";

typedef struct {
  tg_runtime *rt;
  uv_signal_t stop[2];
} daemon_run;

static void on_stop(uv_signal_t *h, int signum) {
  (void)signum;
  uv_stop(h->loop);
}

int cmd_daemon(int argc, char **argv) {
  const char *dir = "policies", *socket = NULL;
  hook_sandbox sb;
  memset(&sb, 0, sizeof sb);
  const opt_spec specs[] = {
      {"--policies", OPT_VALUE, NULL, &dir},
      {"--socket", OPT_VALUE, NULL, &socket},
      HOOK_SANDBOX_OPTS(&sb),
  };
  const opt_parser p = {"daemon", specs, sizeof specs / sizeof *specs, NULL,
                        0, 0, NULL, "daemon [options]"};
  int npos, rc = opt_parse(&p, argc, argv, &npos);
  if (rc == OPT_PARSE_HELP) {
    fputs(cmd_daemon_usage, stdout);
    return CLI_EXIT_OK;
  }
  if (rc != OPT_PARSE_OK) return CLI_EXIT_USAGE;
  char err[TG_ERRMSG] = "";
  daemon_run d;
  memset(&d, 0, sizeof d);
  d.rt = hook_runtime_new(dir, &sb, err);
  if (!d.rt || tg_runtime_watch(d.rt, 1, err) < 0 ||
      tg_runtime_reload_on_signal(d.rt, SIGHUP, err) < 0 ||
      tg_runtime_listen(d.rt, socket, err) < 0) {
    cli_error("daemon: %s", err);
    tg_runtime_free(d.rt);
    return CLI_EXIT_USAGE;
  }
  /* no event subscription: it would make every hook's call build its
   * events; a reload's error is told to `toolgate reload` */
  static const int sigs[2] = {SIGINT, SIGTERM};
  for (int i = 0; i < 2; i++) {
    uv_signal_init(tg_runtime_loop(d.rt), &d.stop[i]);
    uv_signal_start(&d.stop[i], on_stop, sigs[i]);
  }
  tg_runtime_run(d.rt, TG_RUN_DEFAULT);
  for (int i = 0; i < 2; i++) uv_close((uv_handle_t *)&d.stop[i], NULL);
  tg_runtime_free(d.rt);
  return CLI_EXIT_OK;
}
