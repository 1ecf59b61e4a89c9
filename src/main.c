/*
 * main.c — the `toolgate` command: finds the command named by the first
 * word and hands it the rest. The one file that knows every front: each
 * front declares its commands in its own header (src/cli/commands.h,
 * src/hook/commands.h, ...), and no front includes another. Adding a
 * command is one entry in `commands`.
 */
#include <stdio.h>
#include <string.h>
#include <cjson/cJSON.h>
#include "toolgate.h"
#include "kit/output.h"
#include "kit/declared_tools.h"
#include "kit/hook_line.h"
#include "cli/commands.h"
#include "hook/commands.h"
#include "mcp/commands.h"

typedef struct {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *usage;   /* its full --help text */
  const char *summary; /* one line for the list */
} cli_command;

static const cli_command commands[] = {
    {"init", cmd_init, cmd_init_usage,
     "write the starter policies: a baseline for a coding agent"},
    {"call", cmd_call, cmd_call_usage, "run one tool call through the chain"},
    {"check", cmd_check, cmd_check_usage,
     "load policies and list what they register"},
    {"explain", cmd_explain, cmd_explain_usage,
     "show which rules decide a call, without running it"},
    {"reload", cmd_reload, cmd_reload_usage,
     "ask the running instance to reload its policies"},
    {"watch", cmd_watch, cmd_watch_usage,
     "reload policies as they are saved, until Ctrl-C"},
    {"test", cmd_test, cmd_test_usage,
     "run the policy unit tests (*_test.lua)"},
    {"serve", cmd_serve, cmd_serve_usage,
     "serve MCP on stdio: every tool call through the policies"},
    {"log", cmd_log, cmd_log_usage,
     "show the audit trail: recent calls, or follow them live"},
    {"approvals", cmd_approvals, cmd_approvals_usage,
     "list, revoke or grant remembered approvals"},
    {"route", cmd_route, cmd_route_usage,
     "show which model a model request would go to"},
    {"search", cmd_search, cmd_search_usage,
     "search the recorded messages and calls (full text)"},
    {"export", cmd_export, cmd_export_usage,
     "write a session as JSON, Markdown or one HTML page"},
    {"import", cmd_import, cmd_import_usage,
     "store a session from a JSON export"},
    {"doctor", cmd_doctor, cmd_doctor_usage,
     "say what is wrong with this project's set-up, and the fix"},
    /* the agent hooks front, src/hook/ */
    {"hook", cmd_hook, cmd_hook_usage,
     "answer a coding agent's hook event; install the hook"},
    {"daemon", cmd_daemon, cmd_daemon_usage,
     "a resident instance that answers hook events fast"},
};

#define NCOMMANDS (sizeof commands / sizeof *commands)

static void usage(FILE *f) {
  fputs("usage: toolgate COMMAND [ARGS...]\n"
        "       toolgate help [COMMAND] | --help | --version\n"
        "\n"
        "commands:\n",
        f);
  for (size_t i = 0; i < NCOMMANDS; i++)
    fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].summary);
  fputs("\nRun 'toolgate COMMAND --help' for a command's options.\n", f);
}

static const cli_command *find_command(const char *name) {
  for (size_t i = 0; i < NCOMMANDS; i++)
    if (strcmp(commands[i].name, name) == 0) return &commands[i];
  return NULL;
}

/* `toolgate help [COMMAND]`. */
static int help(int argc, char **argv) {
  if (argc < 1) {
    usage(stdout);
    return CLI_EXIT_OK;
  }
  const cli_command *c = find_command(argv[0]);
  if (!c) {
    cli_error("help: unknown command '%s'", argv[0]);
    usage(stderr);
    return CLI_EXIT_USAGE;
  }
  fputs(c->usage, stdout);
  return CLI_EXIT_OK;
}

int main(int argc, char **argv) {
  kit_set_argv0(argc > 0 ? argv[0] : NULL); /* hook install's path of us */
  /* the tools toolgate.lua's servers declare, for check and test */
  kit_set_declared_tools(mcp_declared_tools);
  kit_set_network_tools(mcp_network_tools, mcp_config_stamp);
  if (argc < 2) {
    usage(stderr);
    return CLI_EXIT_USAGE;
  }
  const char *name = argv[1];
  if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0)
    return help(0, NULL);
  if (strcmp(name, "help") == 0) return help(argc - 2, argv + 2);
  if (strcmp(name, "--version") == 0 || strcmp(name, "version") == 0) {
    printf("toolgate %s\n", TG_VERSION);
    return CLI_EXIT_OK;
  }
  const cli_command *c = find_command(name);
  if (!c) {
    cli_error("unknown %s '%s'", name[0] == '-' ? "option" : "command", name);
    usage(stderr);
    return CLI_EXIT_USAGE;
  }
  return c->run(argc - 2, argv + 2);
}
