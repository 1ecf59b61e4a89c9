/*
 * daemon_cmd.c — `toolgate daemon`: a resident instance for agent hooks.
 * It loads the policies (as `toolgate hook` would in-process: the same
 * configuration, so the same answers), reloads them on save, SIGHUP and
 * `toolgate reload`, and answers hook events and other control requests
 * on the policies folder's control socket until SIGINT or SIGTERM, or,
 * with --idle-exit (which `toolgate hook --start-daemon` gives the daemon
 * it starts), until no hook has come for that long. Beside another
 * instance of the folder it takes a socket of its own (control.h, "Many
 * instances"). Quiet: it prints only why it could not start.
 *
 * `toolgate daemon status` and `toolgate daemon stop` find the instance
 * on the same socket. When a hook was last answered there is the socket
 * file's mtime: each hook answered by a resident instance touches it
 * (hook_cmd.c), which costs the hook one syscall and the daemon nothing
 * on its hot path (no event subscription, no change to the server).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <uv.h>
#include "hook.h"

#define STOP_WAIT_MS 10000 /* how long `daemon stop` waits for it to go */

const char cmd_daemon_usage[] =
    "usage: toolgate daemon [--policies DIR] [--socket PATH] [options]\n"
    "       toolgate daemon status [--policies DIR] [--socket PATH] [--json]\n"
    "       toolgate daemon stop [--policies DIR] [--socket PATH]\n"
    "\n"
    "Runs a resident instance for the policies in DIR (default ./policies)\n"
    "that answers 'toolgate hook' events over its control socket (the path\n"
    "'toolgate hook --policies DIR' looks for), so a hook costs little more\n"
    "than starting a process. Reloads the policies when a file is saved, on\n"
    "SIGHUP and on 'toolgate reload'; a policy error keeps the generation\n"
    "that loaded ('toolgate reload' says why). Runs until SIGINT or SIGTERM,\n"
    "'toolgate daemon stop', or --idle-exit. When another instance\n"
    "('toolgate serve', 'toolgate watch') already has that path, it answers\n"
    "the hooks, and this one runs beside it on a socket of its own that\n"
    "'toolgate reload' reaches too, until that instance stops: then one\n"
    "beside it takes the path.\n"
    "\n"
    "status: whether an instance serves DIR, its pid, generation and when it\n"
    "last answered a hook. stop: ends the daemon serving DIR (SIGTERM) and\n"
    "waits for it to go; an instance that is not a daemon (toolgate watch,\n"
    "serve) is left alone.\n"
    "\n"
    "options:\n"
    "  --policies DIR      the policies folder (default ./policies)\n"
    "  --socket PATH       the control socket to listen on\n"
    "  --idle-exit MS      exit when no hook has been answered for MS ms\n"
    "                      (default: never; 'toolgate hook --start-daemon'\n"
    "                      gives the daemon it starts 30 minutes)\n"
    "  --json              status: print the instance's reply as JSON\n"
    "  --trusted-policies, --policy-time-limit MS, --policy-memory-cap BYTES\n"
    "                      the policy sandbox (give 'toolgate hook' the same)\n"
    "  --db PATH           the database the calls it judges, turns, usage\n"
    "                      and sessions go to (default\n"
    "                      ${XDG_STATE_HOME:-~/.local/state}/toolgate/toolgate.db)\n"
    "  --no-db             none: turns and transcript marks kept in memory\n"
    "\n"
    "exit status: 0 stopped by a signal or idle; 2 usage or configuration\n"
    "error (the policies do not load, another instance has the --socket\n"
    "path). status: 0 one serves DIR, 1 none. stop: 0 stopped (or none was\n"
    "running), 1 it did not stop, or it is not a daemon.\n";

typedef struct {
  tg_runtime *rt;
  uv_signal_t stop[2];
  uv_timer_t idle;
  char sock[PATH_MAX];
  uint64_t idle_ms;
  const char *dir;
  const hook_sandbox *sb;
} daemon_run;

/* A reload that loaded: its content is the last good copy for the hooks
 * that answer in-process once this daemon is gone (hook_opts.c). */
static void on_runtime_event(tg_runtime *rt, const tg_event *ev, void *ud) {
  (void)rt;
  daemon_run *d = ud;
  if (!strcmp(ev->type, "policy_loaded")) hook_keep_last_good(d->dir, d->sb);
}

static void on_stop(uv_signal_t *h, int signum) {
  (void)signum;
  uv_stop(h->loop);
}

/* ms since the socket was last touched (a hook answered), or -1. */
static double socket_idle_ms(const char *sock) {
  struct stat st;
  if (stat(sock, &st) < 0) return -1;
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  return (double)(now.tv_sec - st.st_mtim.tv_sec) * 1e3 +
         (double)(now.tv_nsec - st.st_mtim.tv_nsec) / 1e6;
}

static void on_idle_check(uv_timer_t *t) {
  daemon_run *d = t->data;
  double idle = socket_idle_ms(d->sock);
  /* a socket gone or replaced by another instance: this one is not found
   * any more, so it serves nobody */
  if (idle < 0 || idle >= (double)d->idle_ms) uv_stop(t->loop);
}

static int socket_of(const char *dir, const char *socket, char *out,
                     size_t len) {
  char err[TG_ERRMSG];
  if (socket) {
    snprintf(out, len, "%s", socket);
    return 0;
  }
  if (tg_control_path(dir, out, len, err) < 0) {
    cli_error("daemon: %s", err);
    return -1;
  }
  return 0;
}

/* The instance's status reply, or NULL (none answers: *none set). */
static cJSON *status_of(const char *sock, int *none) {
  char err[TG_ERRMSG], *reply = NULL;
  *none = 0;
  int rc = tg_control_request(sock, "{\"cmd\":\"status\"}", &reply, 10000, err);
  if (rc < 0) {
    *none = rc == -ENOENT || rc == -ECONNREFUSED;
    if (!*none) cli_error("daemon: the instance on %s does not answer: %s",
                          sock, err);
    return NULL;
  }
  cJSON *j = tg_json_parse(reply, strlen(reply), NULL, NULL, 0);
  free(reply);
  if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "ok"))) {
    cJSON_Delete(j);
    cli_error("daemon: the instance on %s gave no status", sock);
    return NULL;
  }
  return j;
}

/* Whether pid runs `toolgate daemon` (its argv[1]). */
static int is_daemon(pid_t pid) {
  char path[64], buf[4096];
  snprintf(path, sizeof path, "/proc/%ld/cmdline", (long)pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return 0;
  buf[n] = '\0';
  size_t first = strlen(buf);
  return (size_t)n > first + 1 && strcmp(buf + first + 1, "daemon") == 0;
}

/* Whether pid has ended: gone, or a zombie its parent has not reaped. */
static int has_ended(pid_t pid) {
  if (kill(pid, 0) < 0 && errno == ESRCH) return 1;
  char path[64], buf[512];
  snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return 0;
  buf[n] = '\0';
  const char *paren = strrchr(buf, ')'); /* the name may hold spaces */
  return paren && paren[1] == ' ' && paren[2] == 'Z';
}

static int daemon_status(const char *dir, const char *sock, int json) {
  int none;
  cJSON *j = status_of(sock, &none);
  if (!j) {
    if (none) printf("no resident instance serves %s (socket %s)\n", dir, sock);
    return CLI_EXIT_FAILED;
  }
  double idle = socket_idle_ms(sock);
  if (idle >= 0) cJSON_AddNumberToObject(j, "idle_ms", (double)(long long)idle);
  pid_t pid = (pid_t)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(j, "pid"));
  cJSON_AddBoolToObject(j, "daemon", is_daemon(pid));
  cJSON_AddStringToObject(j, "socket", sock);
  if (json) {
    cli_print_json_line(stdout, j);
  } else {
    const char *pol = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "policies"));
    printf("%s %ld serves %s: generation %.0f, idle for %.0f s (no hook "
           "answered since) (socket %s)\n", is_daemon(pid) ? "daemon" : "instance",
           (long)pid, pol ? pol : dir,
           cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(j, "generation")),
           idle >= 0 ? idle / 1000 : 0, sock);
  }
  cJSON_Delete(j);
  return CLI_EXIT_OK;
}

static int daemon_stop(const char *dir, const char *sock) {
  int none;
  cJSON *j = status_of(sock, &none);
  if (!j) {
    if (!none) return CLI_EXIT_FAILED;
    printf("no resident instance serves %s: nothing to stop\n", dir);
    return CLI_EXIT_OK;
  }
  pid_t pid = (pid_t)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(j, "pid"));
  cJSON_Delete(j);
  if (pid <= 1 || !is_daemon(pid)) {
    cli_error("daemon stop: the instance serving %s (pid %ld) is not a "
              "'toolgate daemon' (toolgate watch or serve?): left running",
              dir, (long)pid);
    return CLI_EXIT_FAILED;
  }
  if (kill(pid, SIGTERM) < 0) {
    cli_error("daemon stop: cannot signal pid %ld: %s", (long)pid,
              strerror(errno));
    return CLI_EXIT_FAILED;
  }
  for (int waited = 0; waited < STOP_WAIT_MS; waited += 20) {
    if (has_ended(pid)) {
      printf("stopped the daemon %ld serving %s\n", (long)pid, dir);
      return CLI_EXIT_OK;
    }
    usleep(20000);
  }
  cli_error("daemon stop: pid %ld did not stop within %d ms", (long)pid,
            STOP_WAIT_MS);
  return CLI_EXIT_FAILED;
}

int cmd_daemon(int argc, char **argv) {
  const char *dir = "policies", *socket = NULL, *idle = NULL;
  int json = 0, sub = 0; /* 1 status, 2 stop */
  if (argc >= 1 && !strcmp(argv[0], "status")) sub = 1;
  if (argc >= 1 && !strcmp(argv[0], "stop")) sub = 2;
  if (sub) {
    argc--;
    argv++;
  }
  hook_sandbox sb;
  memset(&sb, 0, sizeof sb);
  const opt_spec specs[] = {
      {"--policies", OPT_VALUE, NULL, &dir},
      {"--socket", OPT_VALUE, NULL, &socket},
      {"--idle-exit", OPT_VALUE, NULL, &idle},
      {"--json", OPT_FLAG, &json, NULL},
      HOOK_SANDBOX_OPTS(&sb),
  };
  const char *name = sub == 1 ? "daemon status" : sub == 2 ? "daemon stop"
                                                           : "daemon";
  const opt_parser p = {name, specs, sizeof specs / sizeof *specs, NULL,
                        0, 0, NULL, "daemon [status|stop] [options]"};
  int npos, rc = opt_parse(&p, argc, argv, &npos);
  if (rc == OPT_PARSE_HELP) {
    fputs(cmd_daemon_usage, stdout);
    return CLI_EXIT_OK;
  }
  if (rc != OPT_PARSE_OK) return CLI_EXIT_USAGE;
  daemon_run d;
  memset(&d, 0, sizeof d);
  if (idle && opt_millis(name, "--idle-exit", idle, &d.idle_ms) < 0)
    return CLI_EXIT_USAGE;
  if (sub) {
    if (socket_of(dir, socket, d.sock, sizeof d.sock) < 0) return CLI_EXIT_USAGE;
    return sub == 1 ? daemon_status(dir, d.sock, json) : daemon_stop(dir, d.sock);
  }
  char err[TG_ERRMSG] = "";
  d.rt = hook_runtime_new(dir, &sb, err);
  if (!d.rt || tg_runtime_watch(d.rt, 1, err) < 0 ||
      tg_runtime_reload_on_signal(d.rt, SIGHUP, err) < 0 ||
      tg_runtime_listen(d.rt, socket, err) < 0 ||
      (d.idle_ms && socket_of(dir, socket, d.sock, sizeof d.sock) < 0)) {
    if (err[0]) cli_error("daemon: %s", err);
    tg_runtime_free(d.rt);
    return CLI_EXIT_USAGE;
  }
  /* the events of no call only (a hook's call builds none): a reload's
   * error is told to `toolgate reload` */
  d.dir = dir;
  d.sb = &sb;
  if (tg_events_subscribe_runtime(d.rt, on_runtime_event, &d) < 0)
    cli_error("daemon: reloads will not refresh the last good policies");
  static const int sigs[2] = {SIGINT, SIGTERM};
  for (int i = 0; i < 2; i++) {
    uv_signal_init(tg_runtime_loop(d.rt), &d.stop[i]);
    uv_signal_start(&d.stop[i], on_stop, sigs[i]);
  }
  if (d.idle_ms) {
    /* checked a few times per idle span (at most each minute): it exits
     * within a quarter span of going idle */
    uint64_t every = d.idle_ms / 4 ? d.idle_ms / 4 : 1;
    if (every > 60000) every = 60000;
    uv_timer_init(tg_runtime_loop(d.rt), &d.idle);
    d.idle.data = &d;
    uv_timer_start(&d.idle, on_idle_check, every, every);
    uv_unref((uv_handle_t *)&d.idle);
  }
  tg_runtime_run(d.rt, TG_RUN_DEFAULT);
  for (int i = 0; i < 2; i++) uv_close((uv_handle_t *)&d.stop[i], NULL);
  if (d.idle_ms) uv_close((uv_handle_t *)&d.idle, NULL);
  tg_runtime_free(d.rt);
  return CLI_EXIT_OK;
}
