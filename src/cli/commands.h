/*
 * commands.h — the command line front's commands (the agent hooks' and
 * MCP's are in src/hook/commands.h and src/mcp/commands.h). Each takes the
 * words after its name and returns the process exit code
 * (kit/exit_codes.h). Adding a command is one function here and one entry
 * in src/main.c's table.
 */
#ifndef TOOLGATE_CLI_COMMANDS_H
#define TOOLGATE_CLI_COMMANDS_H

int cmd_call(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_explain(int argc, char **argv);
int cmd_reload(int argc, char **argv);
int cmd_watch(int argc, char **argv);
int cmd_test(int argc, char **argv);
int cmd_log(int argc, char **argv);
int cmd_approvals(int argc, char **argv);
int cmd_route(int argc, char **argv); /* the chat side */
int cmd_search(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_import(int argc, char **argv);
int cmd_init(int argc, char **argv); /* the starter policies */
int cmd_doctor(int argc, char **argv); /* what is wrong with a set-up */

/* Their usage text, for `toolgate CMD --help` and `toolgate help`. */
extern const char cmd_call_usage[];
extern const char cmd_check_usage[];
extern const char cmd_explain_usage[];
extern const char cmd_reload_usage[];
extern const char cmd_watch_usage[];
extern const char cmd_test_usage[];
extern const char cmd_log_usage[];
extern const char cmd_approvals_usage[];
extern const char cmd_route_usage[];
extern const char cmd_search_usage[];
extern const char cmd_export_usage[];
extern const char cmd_import_usage[];
extern const char cmd_init_usage[];
extern const char cmd_doctor_usage[];

#endif
