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

/* For methods that may run host code (lmodule_chat.c): entering the
 * runtime remembers the calling thread for callbacks; leaving restores it
 * and, outermost, raises what a callback raised. protect runs body(arg)
 * protected on L (a raise is kept and re-raised on leave); callback calls
 * the host function below nargs arguments inside such a body. */
lua_State *tg__lm_enter(lrt *r, lua_State *L);
void tg__lm_leave(lrt *r, lua_State *L, lua_State *prev);
int tg__lm_protect(lrt *r, lua_State *L, lua_CFunction body, void *arg);
int tg__lm_callback(lrt *r, lua_State *L, int nargs, const char *what);
/* A JSON box on the stack with one empty slot: what is put there is freed
 * by the box's __gc if a raise comes first (leave may raise). */
cJSON **tg__lm_box(lua_State *L);
/* The JSON box's job for one value: pushes v (NULL: nil) and frees it;
 * raises "fn: out of memory" when it cannot. */
void tg__lm_push_json(lua_State *L, cJSON *v, const char *fn);

/* The chat side (lmodule_chat.c): its methods into the methods table at
 * idx, and toolgate.new's `models` option (the copied options at o, 0:
 * none) applied to a new runtime; raises on a bad one. */
void tg__lm_chat_methods(lua_State *L, int idx);
void tg__lm_chat_new(lua_State *L, lrt *r, int o);

#endif
