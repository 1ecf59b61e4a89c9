/* luaoutcome.h — a call's outcome as a Lua table, the same shape for the
 * host module (handle:wait()) and for Lua tools (ctx.call). */
#ifndef TG_LUAOUTCOME_H
#define TG_LUAOUTCOME_H

#include "luacompat.h"
#include <cjson/cJSON.h>
#include "toolgate.h"

/* Pushes {id, tool, status, result, error = {phase, code, message,
 * suggestion, retryable}, decision = {verdict, rule}, attempts,
 * duration_ms, truncated}. Absent result and error are nil, not JSON null,
 * so `if out.error then` reads naturally. */
void tg__push_outcome(lua_State *L, const tg_outcome *o);

#endif
