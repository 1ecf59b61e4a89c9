/*
 * watch_cmd.c — `toolgate watch`: a long-running instance for policy
 * authors. It loads the policies, then reloads them on every save in the
 * folder, on SIGHUP and on `toolgate reload` (the control socket), and
 * prints each reload or failed reload until Ctrl-C or SIGTERM.
 *
 * The runtime's reload handles do not keep the loop alive (watch.h); our
 * SIGINT/SIGTERM handles do, which is what makes this command run until
 * it is stopped.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>
#include <cjson/cJSON.h>
#include "toolgate.h"
#include "commands.h"
#include "events_file.h"
#include "kit/instance.h"
#include "kit/options.h"
#include "kit/output.h"

const char cmd_watch_usage[] =
    "usage: toolgate watch [--policies DIR] [--socket PATH] [--json] [--events]\n"
    "\n"
    "Loads the policies in DIR (default ./policies) and reloads them whenever\n"
    "a .lua file there is saved, added or deleted, on SIGHUP, and when\n"
    "'toolgate reload' asks. Prints every reload (generation, files, time)\n"
    "and every failed one (file:line: message; the previous generation\n"
    "stays) until Ctrl-C. Keep it open beside the editor.\n"
    "\n"
    "options:\n"
    "  --policies DIR      the policies folder (default ./policies)\n"
    "  --socket PATH       the control socket to listen on (default: the\n"
    "                      path 'toolgate reload --policies DIR' looks for)\n"
    "  --json              one JSON object per line: first {\"type\":\"watching\",\n"
    "                      ...}, then the policy_loaded / policy_error events\n"
    "  --events            print every other event too\n"
    "\n"
    "It also answers 'toolgate hook' for DIR (as 'toolgate daemon' does): the\n"
    "calls it judges, turns, usage and sessions go to its database.\n"
    DB_OPT_USAGE
    SANDBOX_OPT_USAGE
    "\n"
    "Any number of instances may run on one folder ('toolgate serve' for\n"
    "each MCP client, 'toolgate daemon'): each has a socket of its own, and\n"
    "'toolgate reload' reaches them all.\n"
    "\n"
    "exit status: 0 stopped with Ctrl-C or SIGTERM; 2 usage or configuration\n"
    "error (the policies do not load at start, the --socket path is in use).\n";

typedef struct {
  const char *dir, *socket;
  int json, all_events;
  sandbox_options sandbox;
  db_options db;             /* the hooks it answers are recorded there */
  tg_runtime *rt;
  cli_instance inst;         /* reload triggers, SIGINT/SIGTERM */
} watch_run;

/* ---- printing ----------------------------------------------------------- */

static const char *trigger_text(const char *t) {
  if (!t) return "reload";
  if (!strcmp(t, "watch")) return "file saved";
  if (!strcmp(t, "signal")) return "SIGHUP";
  if (!strcmp(t, "control")) return "toolgate reload";
  return t;
}

static void stamp(void) {
  char buf[16];
  time_t now = time(NULL);
  struct tm tm;
  localtime_r(&now, &tm);
  strftime(buf, sizeof buf, "%H:%M:%S", &tm);
  printf("[%s] ", buf);
}

static double num(const cJSON *o, const char *k) {
  return cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, k));
}

static const char *text(const cJSON *o, const char *k) {
  const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k));
  return s ? s : "";
}

static void on_event(tg_runtime *rt, const tg_event *ev, void *ud) {
  watch_run *w = ud;
  int loaded = !strcmp(ev->type, "policy_loaded");
  int failed = !strcmp(ev->type, "policy_error");
  if (!loaded && !failed && !w->all_events) return;
  if (w->json) {
    cli_print_json_line(stdout, ev->data);
  } else if (loaded) {
    stamp();
    printf("generation %.0f loaded: %.0f file%s in %.2f ms (%s)\n",
           num(ev->data, "generation"), num(ev->data, "files"),
           num(ev->data, "files") == 1 ? "" : "s",
           num(ev->data, "duration_ms"),
           trigger_text(text(ev->data, "trigger")));
  } else if (failed) {
    stamp();
    printf("policy error (%s); generation %.0f stays:\n  %s\n",
           trigger_text(text(ev->data, "trigger")),
           num(ev->data, "generation"), text(ev->data, "error"));
  } else {
    stamp();
    cli_print_json_line(stdout, ev->data);
  }
  fflush(stdout);
}

static void print_start(watch_run *w) {
  cJSON *d = tg_runtime_describe(w->rt);
  int files = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(d, "files"));
  cJSON_Delete(d);
  const char *sock = tg_runtime_control_path(w->rt);
  if (w->json) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "type", "watching");
    cJSON_AddStringToObject(j, "policies", w->dir);
    cJSON_AddNumberToObject(j, "generation",
                            (double)tg_runtime_generation(w->rt));
    cJSON_AddNumberToObject(j, "files", files);
    cJSON_AddStringToObject(j, "socket", sock);
    cJSON_AddNumberToObject(j, "pid", (double)getpid());
    cli_print_json_line(stdout, j);
    cJSON_Delete(j);
  } else {
    stamp();
    /* the reload command that reaches this instance, --socket included */
    printf("watching %s: generation %llu, %d file%s\n"
           "  reload: save a file, 'kill -HUP %ld' or 'toolgate reload "
           "%s%s'\n  socket: %s\n  Ctrl-C stops\n",
           w->dir, (unsigned long long)tg_runtime_generation(w->rt), files,
           files == 1 ? "" : "s", (long)getpid(),
           w->socket ? "--socket " : "--policies ",
           w->socket ? w->socket : w->dir, sock);
  }
  fflush(stdout);
}

/* ---- running ------------------------------------------------------------ */

static int set_up(watch_run *w) {
  tg_config cfg;
  char err[TG_ERRMSG] = "";
  tg_config_init(&cfg);
  cfg.policies_dir = w->dir;
  cfg.watch_policies = 1;
  if (sandbox_options_apply("watch", &w->sandbox, &cfg) < 0 ||
      db_options_apply("watch", &w->db, &cfg) < 0)
    return -1;
  w->rt = tg_runtime_new(&cfg, NULL, err);
  if (!w->rt) {
    cli_error("watch: %s", err);
    return -1;
  }
  if (cli_instance_start(&w->inst, w->rt, w->socket, 0, "watch") < 0) return -1;
  if (tg_events_subscribe(w->rt, on_event, w) < 0) {
    cli_error("watch: cannot subscribe to events");
    return -1;
  }
  return 0;
}

static int parse_watch_options(watch_run *w, int argc, char **argv) {
  const opt_spec specs[] = {
      {"--policies", OPT_VALUE, NULL, &w->dir},
      {"--socket", OPT_VALUE, NULL, &w->socket},
      {"--json", OPT_FLAG, &w->json, NULL},
      {"--events", OPT_FLAG, &w->all_events, NULL},
      SANDBOX_OPT_SPECS(&w->sandbox),
      DB_OPT_SPECS(&w->db),
  };
  const opt_parser p = {"watch", specs, sizeof specs / sizeof *specs, NULL,
                        0, 0, NULL, "watch [--policies DIR] [--json]"};
  int npos;
  int rc = opt_parse(&p, argc, argv, &npos);
  if (rc == OPT_PARSE_HELP) {
    fputs(cmd_watch_usage, stdout);
    return CLI_EXIT_OK;
  }
  return rc == OPT_PARSE_OK ? -1 : CLI_EXIT_USAGE;
}

int cmd_watch(int argc, char **argv) {
  watch_run w;
  memset(&w, 0, sizeof w);
  w.dir = "policies";
  int code = parse_watch_options(&w, argc, argv);
  if (code >= 0) return code;
  code = CLI_EXIT_USAGE;
  if (set_up(&w) == 0) {
    print_start(&w);
    while (!w.inst.stopping) tg_runtime_run(w.rt, TG_RUN_DEFAULT);
    code = CLI_EXIT_OK;
  }
  cli_instance_close(&w.inst);
  tg_runtime_free(w.rt); /* closes the socket (and removes its file) */
  if (code == CLI_EXIT_OK && !w.json) {
    fputc('\n', stderr);
    cli_error("stopped watching %s", w.dir);
  }
  return code;
}
