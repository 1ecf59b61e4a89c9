/*
 * reload_cmd.c — `toolgate reload`: asks every instance running for a
 * policies folder to reload it, through its control socket
 * (src/control/control.h: where the sockets are, what is said). Each MCP
 * client may start a `toolgate serve` of its own on one folder, beside a
 * `toolgate watch`: every one has a socket (tg_control_paths), and each
 * is asked in turn and answers for itself.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>
#include "toolgate.h"
#include "kit/kit.h"
#include "commands.h"
#include "kit/options.h"
#include "kit/output.h"

/* A reload takes milliseconds; an instance silent for seconds is stuck or
 * is a host that does not turn its loop: say so, do not hang the caller. */
#define RELOAD_TIMEOUT_MS 5000
#define RELOAD_TEXT_(x) #x
#define RELOAD_TEXT(x) RELOAD_TEXT_(x)

const char cmd_reload_usage[] =
    "usage: toolgate reload [--policies DIR] [--socket PATH] [--json]\n"
    "\n"
    "Asks every toolgate instance running for the policies in DIR (default\n"
    "./policies) — 'toolgate watch', 'toolgate serve', 'toolgate daemon',\n"
    "or a program that listens with tg_runtime_listen / rt:listen — to\n"
    "reload them now. The instances are found through sockets whose paths\n"
    "follow from DIR (see docs/cli.md, \"Hot reload\"); --socket names one\n"
    "instead. With more than one instance, each line names its pid.\n"
    "\n"
    "options:\n"
    "  --policies DIR      the policies folder (default ./policies)\n"
    "  --socket PATH       the instance's control socket\n"
    "  --json              print each instance's reply as one JSON line:\n"
    "                      {\"ok\":true,\"generation\":N,\"files\":n,\"duration_ms\":x,\n"
    "                      \"pid\":P} or {\"ok\":false,\"error\":\"file:line: message\",...}\n"
    "  --timeout-ms N      how long to wait for the reply (default "
    RELOAD_TEXT(RELOAD_TIMEOUT_MS) ")\n"
    "\n"
    "exit status: 0 every instance reloaded; 1 a reload failed (that\n"
    "instance keeps its current generation; the message names file:line),\n"
    "or an instance did not answer in time; 2 usage error, or no instance\n"
    "is running for DIR.\n";

/* Returns -1 to go on, else the exit code. */
static int parse_reload_options(int argc, char **argv, const char **dir,
                                const char **socket, int *json,
                                uint64_t *timeout_ms) {
  const char *timeout = NULL;
  const opt_spec specs[] = {
      {"--policies", OPT_VALUE, NULL, dir},
      {"--socket", OPT_VALUE, NULL, socket},
      {"--json", OPT_FLAG, json, NULL},
      {"--timeout-ms", OPT_VALUE, NULL, &timeout},
  };
  const opt_parser p = {"reload", specs, sizeof specs / sizeof *specs, NULL,
                        0, 0, NULL, "reload [--policies DIR] [--json]"};
  int npos;
  int rc = opt_parse(&p, argc, argv, &npos);
  if (rc == OPT_PARSE_HELP) {
    fputs(cmd_reload_usage, stdout);
    return CLI_EXIT_OK;
  }
  if (rc != OPT_PARSE_OK ||
      (timeout && opt_millis("reload", "--timeout-ms", timeout, timeout_ms) < 0))
    return CLI_EXIT_USAGE;
  return -1;
}

/* The instance's reply, told; its exit code. With several instances,
 * each line starts with the pid of the one it is about. */
static int report(const char *line, int json, int several) {
  char bad[300] = "";
  cJSON *r = tg_json_parse(line, strlen(line), NULL, bad, sizeof bad);
  const cJSON *ok = cJSON_GetObjectItemCaseSensitive(r, "ok");
  if (!cJSON_IsBool(ok)) {
    cli_error("reload: the instance sent a reply that is not understood: %s",
              r ? line : bad); /* the parser's reason when it is not JSON */
    cJSON_Delete(r);
    return CLI_EXIT_FAILED;
  }
  int good = cJSON_IsTrue(ok);
  /* The reply is the instance's word, not ours: a field may be missing or
   * of another type, and is then said to be missing rather than printed
   * as "(null)" or "nan". */
  const cJSON *gen = cJSON_GetObjectItemCaseSensitive(r, "generation");
  const cJSON *files = cJSON_GetObjectItemCaseSensitive(r, "files");
  const cJSON *ms = cJSON_GetObjectItemCaseSensitive(r, "duration_ms");
  const char *why = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "error"));
  const cJSON *pid = cJSON_GetObjectItemCaseSensitive(r, "pid");
  char who[48] = "";
  if (several && cJSON_IsNumber(pid))
    snprintf(who, sizeof who, "pid %.0f: ", pid->valuedouble);
  if (json) {
    cli_print_json_line(stdout, r);
  } else if (good && cJSON_IsNumber(gen) && cJSON_IsNumber(files) &&
             cJSON_IsNumber(ms)) {
    printf("%sreloaded: generation %.0f, %.0f file%s in %.2f ms\n", who,
           gen->valuedouble, files->valuedouble,
           files->valuedouble == 1 ? "" : "s", ms->valuedouble);
  } else if (good) {
    printf("%sreloaded (the instance did not say which generation): %s\n",
           who, line);
  }
  if (!good && cJSON_IsNumber(gen))
    cli_error("%sreload failed; generation %.0f stays: %s", who,
              gen->valuedouble, why ? why : "(the instance gave no reason)");
  else if (!good)
    cli_error("%sreload failed: %s", who,
              why ? why : "(the instance gave no reason)");
  cJSON_Delete(r);
  return good ? CLI_EXIT_OK : CLI_EXIT_FAILED;
}

/* The sockets of the folder's instances, collected. */
typedef struct {
  char **paths;
  size_t n;
} socket_list;

static int collect(const char *path, void *ud) {
  socket_list *l = ud;
  char **g = realloc(l->paths, (l->n + 1) * sizeof *g);
  if (!g) return 1;
  l->paths = g;
  if ((g[l->n] = strdup(path))) l->n++;
  return 0;
}

/* Asks the instance at socket; its exit code, or -1 when none listens
 * there (it has gone: another one may still answer). */
static int ask(const char *socket, int json, int several,
               uint64_t timeout_ms) {
  char err[TG_ERRMSG] = "", *reply = NULL;
  int rc = tg_control_request(socket, "{\"cmd\":\"reload\"}", &reply,
                              timeout_ms, err);
  if (rc == -ENOENT || rc == -ECONNREFUSED) return -1;
  if (rc == -ETIMEDOUT) {
    cli_error("reload: %s: the instance is stuck, or is a program that "
              "listens but does not turn its loop (a Lua host attaches the "
              "runtime to its loop with rt:attach, see lua/README.md); "
              "--timeout-ms N waits longer", err);
    return CLI_EXIT_FAILED;
  }
  if (rc < 0) {
    cli_error("reload: %s", err);
    return CLI_EXIT_FAILED;
  }
  int code = report(reply, json, several);
  free(reply);
  return code;
}

int cmd_reload(int argc, char **argv) {
  const char *dir = "policies", *socket = NULL;
  int json = 0;
  uint64_t timeout_ms = RELOAD_TIMEOUT_MS;
  int code = parse_reload_options(argc, argv, &dir, &socket, &json,
                                  &timeout_ms);
  if (code >= 0) return code;
  char err[TG_ERRMSG] = "";
  socket_list l = {NULL, 0};
  if (socket) {
    collect(socket, &l);
  } else if (tg_control_paths(dir, collect, &l, err) < 0) {
    cli_error("reload: %s", err);
    return CLI_EXIT_USAGE;
  }
  int answered = 0;
  code = CLI_EXIT_OK;
  for (size_t i = 0; i < l.n; i++) {
    int rc = ask(l.paths[i], json, l.n > 1, timeout_ms);
    if (rc >= 0) answered++;
    if (rc > code) code = rc;
    free(l.paths[i]);
  }
  free(l.paths);
  if (!answered) {
    char path[4096] = "";
    if (!socket && tg_control_path(dir, path, sizeof path, err) == 0)
      socket = path;
    cli_error("reload: no toolgate instance is running for '%s' (nothing "
              "listens on %s); start one with 'toolgate watch --policies %s'",
              dir, socket ? socket : "its socket", dir);
    return CLI_EXIT_USAGE;
  }
  return code;
}
