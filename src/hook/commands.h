/*
 * commands.h — the commands of the agent hooks front, for src/main.c's
 * table: `toolgate hook` and `toolgate daemon`. Each takes the words after
 * its name and returns the process exit code.
 */
#ifndef TOOLGATE_HOOK_COMMANDS_H
#define TOOLGATE_HOOK_COMMANDS_H

int cmd_hook(int argc, char **argv);
int cmd_daemon(int argc, char **argv);

/* Their usage text, for `toolgate CMD --help` and `toolgate help`. */
extern const char cmd_hook_usage[];
extern const char cmd_daemon_usage[];

#endif
