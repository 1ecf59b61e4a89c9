/*
 * lmodule.h — what the parts of the host module share (lmodule.c, the
 * runtime object and its methods; lmodule_tool.c, rt:tool). The runtime
 * object stays private to lmodule.c: the other parts reach it through
 * these functions.
 */
#ifndef TG_LMODULE_H
#define TG_LMODULE_H

#include "lua/luacompat.h"
#include <cjson/cJSON.h>
#include "toolgate.h"

typedef struct lrt lrt;

/* The runtime at idx (raises when it is not one, or is closed). */
lrt *tg__lm_check_rt(lua_State *L, int idx);
tg_runtime *tg__lm_runtime(lrt *r);
/* The host thread inside one of the module's functions right now, on
 * which callbacks run; NULL when the host is not (the runtime closing). */
lua_State *tg__lm_thread(lrt *r);
/* Pushes the runtime's private table `field`, made on first use; it lives
 * as long as the runtime. */
void tg__lm_push_state(lua_State *L, lrt *r, const char *field);
/* Copies the option table at idx raw into a new table on the stack and
 * returns its index (0 for nil); an option not in names raises. */
int tg__lm_copy_opts(lua_State *L, int idx, const char *fn,
                     const char *const *names);
/* Returns nil, err, code. */
int tg__lm_fail(lua_State *L, const char *err, const char *code);

/* luaopen_toolgate's last step: _VERSION, __close, names for argument
 * errors, rt:tool. The module table is on top. */
void tg__lm_conventions(lua_State *L);

/* rt:tool{...} (lmodule_tool.c). */
int tg__lm_tool(lua_State *L);

#endif
