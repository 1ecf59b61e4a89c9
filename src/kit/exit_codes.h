/*
 * exit_codes.h — the exit status of every `toolgate` command, whichever
 * front runs it (the command line, the agent hooks, MCP): scripts and
 * agents read the same numbers from all of them.
 */
#ifndef TOOLGATE_KIT_EXIT_CODES_H
#define TOOLGATE_KIT_EXIT_CODES_H

enum {
  CLI_EXIT_OK = 0,
  CLI_EXIT_FAILED = 1,     /* the call failed, was denied, rejected, ... */
  CLI_EXIT_USAGE = 2,      /* usage or configuration error */
  CLI_EXIT_INTERRUPTED = 130 /* a second Ctrl-C */
};

#endif
