/*
 * route_cmd.c — `toolgate route REQUEST`: which model a model request
 * would go to (tg_route), for people (default) or machines (--json), as
 * `toolgate explain` shows which rule decides a call. The routing hooks
 * run for real (they are judges, like rules); a routing table and
 * fallbacks come from --models, and --unavailable marks models down to see
 * the fallback at work.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cjson/cJSON.h>
#include "toolgate.h"
#include "kit/kit.h"
#include "args_json.h"
#include "commands.h"
#include "notices.h"
#include "kit/options.h"
#include "kit/output.h"

const char cmd_route_usage[] =
    "usage: toolgate route REQUEST [options]\n"
    "\n"
    "Shows which model a model request would go to: the routing table's\n"
    "choice (routes by task_weight, else the requested model, else the\n"
    "default), each routing hook of the policies (tg.route_model) that\n"
    "changed it and why, in run order, and the fallback taken when the\n"
    "model is unavailable. REQUEST is a JSON object {requested_model?,\n"
    "task_weight?, context?, session?}.\n"
    "\n"
    "options:\n"
    "  --policies DIR      policy files (default ./policies, if it exists)\n"
    "  --models FILE       the routing table, a JSON file: {\"routes\":\n"
    "                      {\"light\": \"small\"}, \"default\": \"mid\",\n"
    "                      \"fallback\": {\"big\": [\"mid\"], \"*\": [\"mid\"]}}\n"
    "  --unavailable LIST  models to treat as unavailable, comma-separated\n"
    "  --json              print the decision as one JSON object\n"
    "  --session S         the session id (default \"default\")\n"
    SANDBOX_OPT_USAGE
    "\n"
    "exit status: 0 routed (available or not); 2 usage or configuration\n"
    "error: bad JSON, a bad models file, policies that do not load, no model\n"
    "selected at all.\n";

typedef struct {
  const char *request, *policies, *models, *unavailable, *session;
  int json;
  sandbox_options sandbox;
} route_options;

static int parse_route_options(route_options *o, int argc, char **argv) {
  static const char *const names[] = {"REQUEST"};
  const char *pos[1];
  const opt_spec specs[] = {
      {"--policies", OPT_VALUE, NULL, &o->policies},
      {"--models", OPT_VALUE, NULL, &o->models},
      {"--unavailable", OPT_VALUE, NULL, &o->unavailable},
      {"--json", OPT_FLAG, &o->json, NULL},
      {"--session", OPT_VALUE, NULL, &o->session},
      SANDBOX_OPT_SPECS(&o->sandbox),
  };
  const opt_parser p = {"route", specs, sizeof specs / sizeof *specs, pos,
                        1, 1, names, "route REQUEST [options]"};
  int npos;
  int rc = opt_parse(&p, argc, argv, &npos);
  if (rc == OPT_PARSE_HELP) {
    fputs(cmd_route_usage, stdout);
    return CLI_EXIT_OK;
  }
  if (rc != OPT_PARSE_OK) return CLI_EXIT_USAGE;
  o->request = pos[0];
  struct stat st;
  if (!o->policies && !(stat("policies", &st) < 0 && errno == ENOENT))
    o->policies = "policies";
  return -1;
}

/* The models file, parsed; NULL after a message. */
static cJSON *read_models(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    cli_error("route: --models %s: %s", path, strerror(errno));
    return NULL;
  }
  char *text = NULL;
  size_t len = 0, cap = 0, n;
  char buf[4096];
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
    if (len + n + 1 > cap || len + n > (1u << 22)) {
      cap = (len + n + 1) * 2;
      char *t = len + n > (1u << 22) ? NULL : realloc(text, cap);
      if (!t) {
        cli_error("route: --models %s: too big (at most 4 MiB)", path);
        free(text);
        fclose(f);
        return NULL;
      }
      text = t;
    }
    memcpy(text + len, buf, n);
    len += n;
  }
  fclose(f);
  char err[TG_ERRMSG] = "";
  cJSON *m = tg_json_parse(text ? text : "", len, NULL, err, sizeof err);
  free(text);
  if (!m) cli_error("route: --models %s: %s", path, err);
  return m;
}

/* Marks each model of the comma-separated list down for an hour. */
static int mark_unavailable(tg_runtime *rt, const char *list) {
  char *copy = strdup(list), *save = NULL;
  char err[TG_ERRMSG] = "";
  int rc = copy ? 0 : -1;
  for (char *m = copy ? strtok_r(copy, ",", &save) : NULL; m && rc == 0;
       m = strtok_r(NULL, ",", &save))
    if ((rc = tg_model_unavailable(rt, m, tg_runtime_now(rt) + 3600000, err)) < 0)
      cli_error("route: --unavailable: %s", err);
  free(copy);
  return rc;
}

static tg_runtime *make_runtime(const route_options *o) {
  tg_config cfg;
  char err[TG_ERRMSG] = "";
  tg_config_init(&cfg);
  cfg.policies_dir = o->policies;
  cfg.session = o->session;
  if (sandbox_options_apply("route", &o->sandbox, &cfg) < 0) return NULL;
  cJSON *models = o->models ? read_models(o->models) : NULL;
  if (o->models && !models) return NULL;
  tg_runtime *rt = tg_runtime_new(&cfg, NULL, err);
  if (!rt) cli_error("%s", err);
  if (rt && models && tg_runtime_set_models(rt, models, err) < 0) {
    cli_error("route: --models %s: %s", o->models, err);
    tg_runtime_free(rt);
    rt = NULL;
  }
  cJSON_Delete(models);
  if (rt && o->unavailable && mark_unavailable(rt, o->unavailable) < 0) {
    tg_runtime_free(rt);
    rt = NULL;
  }
  return rt;
}

/* ---- for people -------------------------------------------------------- */

static const char *str(const cJSON *o, const char *k) {
  return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k));
}

static const char *or_none(const char *s) { return s ? s : "(none)"; }

static void print_decision(FILE *f, const cJSON *d, uint64_t gen, int color) {
  char *ctx = tg_json_print(cJSON_GetObjectItemCaseSensitive(d, "context"), 0);
  fprintf(f, "route     requested %s, task_weight %s, context %s  "
             "(generation %llu, session %s)\n",
          or_none(str(d, "requested_model")), or_none(str(d, "task_weight")),
          ctx ? ctx : "{}", (unsigned long long)gen, str(d, "session"));
  free(ctx);
  const cJSON *b = cJSON_GetObjectItemCaseSensitive(d, "baseline");
  fprintf(f, "baseline  %s: %s\n", or_none(str(b, "selected_model")),
          str(b, "reason"));
  const cJSON *hooks = cJSON_GetObjectItemCaseSensitive(d, "hooks"), *h;
  fprintf(f, "\nrouting hooks: %.0f ran, %d changed the decision\n",
          cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(d, "hooks_run")),
          cJSON_GetArraySize(hooks));
  int n = 0;
  cJSON_ArrayForEach(h, hooks)
    fprintf(f, "  %-3d%-30s %s -> %s: %s\n", ++n, str(h, "where"),
            or_none(str(h, "from")), str(h, "to"), str(h, "reason"));
  cJSON_ArrayForEach(h, cJSON_GetObjectItemCaseSensitive(d, "errors")) {
    fputs("  -  ", f);
    cli_sgr(f, color, "31");
    fprintf(f, "%-30s error, skipped: %s\n", str(h, "where"), str(h, "error"));
    cli_sgr(f, color, "0");
  }
  const cJSON *fb = cJSON_GetObjectItemCaseSensitive(d, "fallback");
  if (fb)
    fprintf(f, "\nfallback  %s -> %s: %s\n", str(fb, "from"),
            or_none(str(fb, "to")), str(fb, "reason"));
  int up = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(d, "available"));
  fputs("\nmodel     ", f);
  cli_sgr(f, color, up ? "32" : "31");
  cli_sgr(f, color, "1");
  fputs(str(d, "selected_model"), f);
  cli_sgr(f, color, "0");
  fprintf(f, "%s\nreason    %s\n", up ? "" : "  (unavailable, and no fallback is)",
          str(d, "reason"));
}

int cmd_route(int argc, char **argv) {
  route_options o;
  memset(&o, 0, sizeof o);
  int code = parse_route_options(&o, argc, argv);
  if (code >= 0) return code;
  cJSON *req = args_json_parse("route", o.request);
  if (!req) return CLI_EXIT_USAGE;
  tg_runtime *rt = make_runtime(&o);
  if (!rt) {
    cJSON_Delete(req);
    return CLI_EXIT_USAGE;
  }
  cli_notices notices = {NULL, NULL}; /* a hook's tg.notify */
  cli_notices_to_stderr(rt, &notices);
  char err[TG_ERRMSG] = "";
  cJSON *d = tg_route(rt, req, err);
  if (!d) {
    cli_error("route: %s", err);
    code = CLI_EXIT_USAGE;
  } else if (o.json) {
    cli_print_json_line(stdout, d);
    code = CLI_EXIT_OK;
  } else {
    print_decision(stdout, d, tg_runtime_generation(rt), cli_color_wanted(stdout));
    code = CLI_EXIT_OK;
  }
  cJSON_Delete(d);
  cJSON_Delete(req);
  tg_runtime_free(rt);
  return code;
}
