/*
 * builtin.c — the executors toolgate ships, registered into a runtime when
 * its config says builtin_tools (the default). Each executor module adds
 * one line here.
 */
#include "builtin.h"

int tg__builtins_register(tg_runtime *rt, char err[TG_ERRMSG]) {
  (void)rt;
  (void)err;
  return 0;
}
