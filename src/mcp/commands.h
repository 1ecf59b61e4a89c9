/*
 * commands.h — the command of the MCP front, for src/main.c's table:
 * `toolgate serve` (serve_cmd.c). It takes the words after its name and
 * returns the process exit code (kit/exit_codes.h).
 */
#ifndef TOOLGATE_MCP_COMMANDS_H
#define TOOLGATE_MCP_COMMANDS_H

int cmd_serve(int argc, char **argv);
/* Its usage text, for `toolgate serve --help` and `toolgate help serve`. */
extern const char cmd_serve_usage[];

#endif
