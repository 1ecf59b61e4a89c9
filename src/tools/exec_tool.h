/*
 * exec_tool.h — the built-in `exec` tool: a shell command (proc/command.c,
 * proc/process.c) run as one attempt.
 */
#ifndef TG_EXEC_TOOL_H
#define TG_EXEC_TOOL_H

#include "core/core.h"

/* Registers `exec` (builtin.c). */
int tg__exec_tool_register(tg_core *core, char err[TG_ERRMSG]);

#endif
