/*
 * check_cmd.c — `toolgate check [DIR]`: loads a policy directory the way
 * `call` and `serve` would, and shows what it registers, or the first
 * error as file:line: message.
 */
#include <stdio.h>
#include <string.h>
#include <cjson/cJSON.h>
#include "toolgate.h"
#include "commands.h"
#include "describe_text.h"
#include "kit/options.h"
#include "kit/output.h"
#include "kit/declared_tools.h"
#include "kit/kit.h"

const char cmd_check_usage[] =
    "usage: toolgate check [DIR | --policies DIR] [--config FILE] [--json]\n"
    "                      [--strict]\n"
    "\n"
    "Loads the policy files in DIR (default ./policies) and lists what they\n"
    "register: rules in evaluation order, hooks in run order, tools, event\n"
    "handlers, the agents' tool names they write and the toolgate tool each\n"
    "is (Bash: exec), warnings (a rule or hook naming a tool no one knows,\n"
    "with the nearest known name; two rules sharing a priority). Known\n"
    "names: toolgate's tools, the agents' (Bash, Edit, Read, shell, ...)\n"
    "and their MCP tools (mcp__SERVER__TOOL), and the tools toolgate.lua's\n"
    "servers declare (servers.x.tools: x__tool). --json prints the\n"
    "description as one JSON object. --strict makes warnings errors.\n"
    "\n"
    "  --config FILE       toolgate.lua, for its servers' declared tools\n"
    "                      (default: ./toolgate.lua if there is one)\n"
    "\n"
    "options (the policy sandbox, as for call):\n"
    SANDBOX_OPT_USAGE
    "\n"
    "exit status: 0 the policies load; 1 they do not (the message names\n"
    "file:line), or --strict and there are warnings; 2 usage error.\n";

/* Returns -1 to go on, else the exit code. */
static int parse_check_options(int argc, char **argv, const char **dir,
                               const char **config, int *json, int *strict,
                               sandbox_options *sb) {
  static const char *const names[] = {"DIR"};
  const opt_spec specs[] = {{"--json", OPT_FLAG, json, NULL},
                            {"--strict", OPT_FLAG, strict, NULL},
                            {"--policies", OPT_VALUE, NULL, dir},
                            {"--config", OPT_VALUE, NULL, config},
                            SANDBOX_OPT_SPECS(sb)};
  const opt_parser p = {"check", specs, sizeof specs / sizeof *specs, dir, 0,
                        1, names, "check [DIR] [--json] [--strict]"};
  int npos;
  int rc = opt_parse(&p, argc, argv, &npos);
  if (rc == OPT_PARSE_HELP) {
    fputs(cmd_check_usage, stdout);
    return CLI_EXIT_OK;
  }
  return rc == OPT_PARSE_OK ? -1 : CLI_EXIT_USAGE;
}

int cmd_check(int argc, char **argv) {
  const char *dir = "policies", *config = NULL;
  int json = 0, strict = 0;
  sandbox_options sb = {0, NULL, NULL};
  int code = parse_check_options(argc, argv, &dir, &config, &json, &strict,
                                 &sb);
  if (code >= 0) return code;
  tg_config cfg;
  char err[TG_ERRMSG] = "";
  tg_config_init(&cfg);
  cfg.policies_dir = dir;
  cfg.db_off = 1; /* check makes no call: nothing to record */
  if (sandbox_options_apply("check", &sb, &cfg) < 0) return CLI_EXIT_USAGE;
  tg_runtime *rt = tg_runtime_new(&cfg, NULL, err);
  if (!rt) {
    cli_error("%s", err);
    return CLI_EXIT_FAILED;
  }
  cJSON *decl = NULL;
  if (kit_declared_tools(config, &decl, err, sizeof err) < 0) {
    cli_error("check: %s", err);
    tg_runtime_free(rt);
    return CLI_EXIT_FAILED;
  }
  tg_runtime_declare_tools(rt, decl);
  cJSON_Delete(decl);
  cJSON *d = tg_runtime_describe(rt);
  if (json)
    cli_print_json_line(stdout, d);
  else
    describe_print(stdout, d, dir, cli_color_wanted(stdout));
  int warnings = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(d, "warnings"));
  cJSON_Delete(d);
  tg_runtime_free(rt);
  if (strict && warnings > 0) {
    cli_error("check: %d warning%s, and --strict makes them errors", warnings,
              warnings == 1 ? "" : "s");
    return CLI_EXIT_FAILED;
  }
  return CLI_EXIT_OK;
}
