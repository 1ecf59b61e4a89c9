/*
 * builtin.c — the executors toolgate ships, registered into a runtime when
 * its config says builtin_tools (the default). Each executor module adds
 * one line here.
 */
#include "builtin.h"
#include "exec_tool.h"
#include "fs_tools.h"

int tg__builtins_register(tg_core *core, char err[TG_ERRMSG]) {
  if (tg__exec_tool_register(core, err) < 0) return -1;
  if (tg__fs_tools_register(core, err) < 0) return -1;
  return 0;
}
