/*
 * reload_cmd.c — `toolgate reload`: asks the instance running for a
 * policies folder to reload it, through its control socket
 * (src/control/control.h: where the socket is, what is said).
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
    "Asks the toolgate instance running for the policies in DIR (default\n"
    "./policies) — 'toolgate watch', or a program that listens with\n"
    "tg_runtime_listen / rt:listen — to reload them now. The instance is\n"
    "found through a socket whose path follows from DIR (see docs/cli.md,\n"
    "\"Hot reload\"); --socket names it instead.\n"
    "\n"
    "options:\n"
    "  --policies DIR      the policies folder (default ./policies)\n"
    "  --socket PATH       the instance's control socket\n"
    "  --json              print the instance's reply as one JSON object:\n"
    "                      {\"ok\":true,\"generation\":N,\"files\":n,\"duration_ms\":x}\n"
    "                      or {\"ok\":false,\"error\":\"file:line: message\",...}\n"
    "  --timeout-ms N      how long to wait for the reply (default "
    RELOAD_TEXT(RELOAD_TIMEOUT_MS) ")\n"
    "\n"
    "exit status: 0 reloaded; 1 the reload failed (the instance keeps its\n"
    "current generation; the message names file:line), or the instance did\n"
    "not answer in time; 2 usage error, or no instance is running for DIR.\n";

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

static int report(const char *line, int json) {
  char bad[300] = "";
  cJSON *r = tg_json_parse(line, strlen(line), NULL, bad, sizeof bad);
  const cJSON *ok = cJSON_GetObjectItem(r, "ok");
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
  const cJSON *gen = cJSON_GetObjectItem(r, "generation");
  const cJSON *files = cJSON_GetObjectItem(r, "files");
  const cJSON *ms = cJSON_GetObjectItem(r, "duration_ms");
  const char *why = cJSON_GetStringValue(cJSON_GetObjectItem(r, "error"));
  if (json) {
    cli_print_json_line(stdout, r);
  } else if (good && cJSON_IsNumber(gen) && cJSON_IsNumber(files) &&
             cJSON_IsNumber(ms)) {
    printf("reloaded: generation %.0f, %.0f file%s in %.2f ms\n",
           gen->valuedouble, files->valuedouble,
           files->valuedouble == 1 ? "" : "s", ms->valuedouble);
  } else if (good) {
    printf("reloaded (the instance did not say which generation): %s\n",
           line);
  }
  if (!good && cJSON_IsNumber(gen))
    cli_error("reload failed; generation %.0f stays: %s", gen->valuedouble,
              why ? why : "(the instance gave no reason)");
  else if (!good)
    cli_error("reload failed: %s", why ? why : "(the instance gave no reason)");
  cJSON_Delete(r);
  return good ? CLI_EXIT_OK : CLI_EXIT_FAILED;
}

int cmd_reload(int argc, char **argv) {
  const char *dir = "policies", *socket = NULL;
  int json = 0;
  uint64_t timeout_ms = RELOAD_TIMEOUT_MS;
  int code = parse_reload_options(argc, argv, &dir, &socket, &json,
                                  &timeout_ms);
  if (code >= 0) return code;
  char path[4096], err[TG_ERRMSG] = "";
  if (!socket) {
    if (tg_control_path(dir, path, sizeof path, err) < 0) {
      cli_error("reload: %s", err);
      return CLI_EXIT_USAGE;
    }
    socket = path;
  }
  char *reply = NULL;
  int rc = tg_control_request(socket, "{\"cmd\":\"reload\"}", &reply,
                              timeout_ms, err);
  if (rc == -ENOENT || rc == -ECONNREFUSED) {
    cli_error("reload: no toolgate instance is running for '%s' (nothing "
              "listens on %s); start one with 'toolgate watch --policies %s'",
              dir, socket, dir);
    return CLI_EXIT_USAGE;
  }
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
  code = report(reply, json);
  free(reply);
  return code;
}
