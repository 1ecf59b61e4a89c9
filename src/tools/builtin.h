/* builtin.h — registering the shipped executors (exec, file tools). */
#ifndef TG_BUILTIN_H
#define TG_BUILTIN_H

#include "core/core.h"

/* Registers every built-in tool. 0, or a negative code with err filled. */
int tg__builtins_register(tg_core *core, char err[TG_ERRMSG]);

#endif
