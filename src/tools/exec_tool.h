/*
 * exec_tool.h — the built-in `exec` tool (a shell command, process.c) and
 * the parsing of its args, shared with ctx.exec for Lua tools.
 */
#ifndef TG_EXEC_TOOL_H
#define TG_EXEC_TOOL_H

#include "proc/process.h"

/* exec's args, parsed: strings borrowed from the args JSON except env. */
typedef struct {
  tg_proc_opts proc;
  char **env;                 /* owned "NAME=value" strings, NULL-terminated */
  uint64_t timeout_ms;        /* 0: not given */
} tg_exec_args;

/* Fills a from {command, cwd?, env?, timeout_ms?, stdin?} and the
 * runtime's defaults (cap, grace, cwd). Returns 0, or -1 with what is
 * wrong in err (then nothing needs freeing). */
int tg__exec_args_parse(tg_runtime *rt, const cJSON *args, tg_exec_args *a,
                        char *err, size_t errlen);
void tg__exec_args_free(tg_exec_args *a);

/* Output callback of a process an attempt runs (the exec tool, ctx.exec):
 * the bytes so far and the last line become the attempt's progress. ud
 * is the tg_exec. */
void tg__exec_output_progress(tg_proc *p, void *ud);

/* Registers `exec` into rt (builtin.c). */
int tg__exec_tool_register(tg_runtime *rt, char err[TG_ERRMSG]);

#endif
