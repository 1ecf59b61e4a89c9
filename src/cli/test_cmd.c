/*
 * test_cmd.c — `toolgate test [DIR]`: the policy unit tests of a policies
 * folder (tg_policy_test), with a PASS/FAIL line per case and why each
 * failure failed, or the report as JSON (--json). The text is made from
 * the same JSON --json prints.
 */
#include <stdio.h>
#include <string.h>
#include <cjson/cJSON.h>
#include "toolgate.h"
#include "kit/kit.h"
#include "commands.h"
#include "kit/options.h"
#include "kit/output.h"
#include "kit/declared_tools.h"

const char cmd_test_usage[] =
    "usage: toolgate test [DIR | --policies DIR] [--run PATTERN] [--json]\n"
    "                     [--config FILE]\n"
    "\n"
    "Runs the policy unit tests of DIR (default ./policies): the cases that\n"
    "the *_test.lua files beside the policies, or in DIR/tests/, return.\n"
    "Each case is a call (tool, args, session) run through the chain of\n"
    "the policies in DIR — rules, pre-hooks, schema, post-hooks — with the\n"
    "tool replaced by the case's result or error, so no tool runs; it\n"
    "checks what the case expects: the verdict (expect), the rule that\n"
    "decided (rule), its reason (reason_match, a Lua pattern), the args and\n"
    "tool the pre-hooks leave (expect_args, expect_tool), the result after\n"
    "the post-hooks (expect_result) or the error (expect_error_code).\n"
    "\n"
    "A case may be an agent's call: tool and args as the agent sends them\n"
    "(Bash {command}, Edit {file_path, old_string, new_string},\n"
    "mcp__SERVER__TOOL {...}), mapped as its hook maps them; agent =\n"
    "\"claude-code\" or \"codex\" says whose (default: the agent whose\n"
    "tool has that name), cwd where its paths start (default: here); or\n"
    "event = the agent's hook event itself, instead of tool and args. A\n"
    "tool nobody registers (an upstream MCP server's) is judged by its name\n"
    "with stand_in = true (read_only = true if it only reads), or when\n"
    "toolgate.lua's server declares it (servers.x.tools).\n"
    "\n"
    "options:\n"
    "  --run PATTERN       only the cases whose name matches the Lua pattern\n"
    "  --json              print the report as one JSON object\n"
    "  --config FILE       toolgate.lua, for its servers' declared tools\n"
    "                      (default: ./toolgate.lua if there is one)\n"
    SANDBOX_OPT_USAGE
    "\n"
    "exit status: 0 every case passed; 1 a case failed; 2 usage error, a\n"
    "policy or test file that does not load (file:line), no test file, or\n"
    "no case matching --run.\n";

typedef struct {
  const char *dir, *run, *config;
  int json;
  sandbox_options sandbox;
} test_options;

/* Returns -1 to go on, else the exit code. */
static int parse_test_options(test_options *o, int argc, char **argv) {
  static const char *const names[] = {"DIR"};
  const opt_spec specs[] = {{"--json", OPT_FLAG, &o->json, NULL},
                            {"--run", OPT_VALUE, NULL, &o->run},
                            {"--policies", OPT_VALUE, NULL, &o->dir},
                            {"--config", OPT_VALUE, NULL, &o->config},
                            SANDBOX_OPT_SPECS(&o->sandbox)};
  const opt_parser p = {"test", specs, sizeof specs / sizeof *specs, &o->dir,
                        0, 1, names, "test [DIR] [--run PATTERN] [--json]"};
  int npos;
  int rc = opt_parse(&p, argc, argv, &npos);
  if (rc == OPT_PARSE_HELP) {
    fputs(cmd_test_usage, stdout);
    return CLI_EXIT_OK;
  }
  return rc == OPT_PARSE_OK ? -1 : CLI_EXIT_USAGE;
}

static const char *str(const cJSON *o, const char *k) {
  return cJSON_GetStringValue(cJSON_GetObjectItem(o, k));
}

static int num(const cJSON *o, const char *k) {
  return (int)cJSON_GetNumberValue(cJSON_GetObjectItem(o, k));
}

static void print_case(FILE *f, const cJSON *c, int color) {
  int ok = cJSON_IsTrue(cJSON_GetObjectItem(c, "passed"));
  cli_sgr(f, color, ok ? "32" : "1;31");
  fputs(ok ? "PASS" : "FAIL", f);
  cli_sgr(f, color, "0");
  fprintf(f, "  %s  %s\n", str(c, "where"), str(c, "name"));
  const cJSON *why;
  cJSON_ArrayForEach(why, cJSON_GetObjectItem(c, "failures"))
    fprintf(f, "      %s\n", cJSON_IsString(why) ? why->valuestring : "?");
}

static void print_report(FILE *f, const cJSON *r, int color) {
  const cJSON *c;
  cJSON_ArrayForEach(c, cJSON_GetObjectItem(r, "cases")) print_case(f, c, color);
  int failed = num(r, "failed"), filtered = num(r, "filtered");
  fputc('\n', f);
  cli_sgr(f, color, failed ? "1;31" : "1;32");
  fprintf(f, "%d passed, %d failed", num(r, "passed"), failed);
  cli_sgr(f, color, "0");
  if (filtered) fprintf(f, " (%d not matching --run)", filtered);
  fprintf(f, " — %s, generation %d\n", str(r, "dir"), num(r, "generation"));
}

int cmd_test(int argc, char **argv) {
  test_options o;
  memset(&o, 0, sizeof o);
  o.dir = "policies";
  int code = parse_test_options(&o, argc, argv);
  if (code >= 0) return code;
  tg_config cfg;
  char err[TG_ERRMSG] = "";
  tg_config_init(&cfg);
  /* unit tests judge the cases alone: no user's database read (usage a
   * budget sums, approvals remembered) nor written */
  cfg.db_off = 1;
  cfg.policies_dir = o.dir;
  if (sandbox_options_apply("test", &o.sandbox, &cfg) < 0) return CLI_EXIT_USAGE;
  tg_runtime *rt = tg_runtime_new(&cfg, NULL, err);
  if (!rt) {
    cli_error("test: %s", err);
    return CLI_EXIT_USAGE;
  }
  cJSON *decl = NULL;
  if (kit_declared_tools(o.config, &decl, err, sizeof err) < 0) {
    cli_error("test: %s", err);
    tg_runtime_free(rt);
    return CLI_EXIT_USAGE;
  }
  tg_runtime_declare_tools(rt, decl);
  cJSON_Delete(decl);
  cJSON *r = tg_policy_test(rt, o.dir, o.run, err);
  if (!r) {
    cli_error("test: %s", err);
    code = CLI_EXIT_USAGE;
  } else {
    if (o.json) cli_print_json_line(stdout, r);
    else print_report(stdout, r, cli_color_wanted(stdout));
    code = num(r, "failed") ? CLI_EXIT_FAILED : CLI_EXIT_OK;
  }
  cJSON_Delete(r);
  tg_runtime_free(rt);
  return code;
}
