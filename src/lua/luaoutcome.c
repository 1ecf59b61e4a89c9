/* luaoutcome.c — see luaoutcome.h. */
#include "luaoutcome.h"
#include "luajson.h"

static void set_str(lua_State *L, const char *k, const char *v) {
  if (!v) return;
  lua_pushstring(L, v);
  lua_setfield(L, -2, k);
}

void tg__push_outcome(lua_State *L, const tg_outcome *o) {
  lua_createtable(L, 0, 9);
  set_str(L, "id", o->id);
  set_str(L, "tool", o->tool);
  set_str(L, "status", tg_status_name(o->status));
  if (o->result && tg__json_push(L, o->result) == 0)
    lua_setfield(L, -2, "result");
  if (o->error.phase != TG_PHASE_NONE) {
    lua_createtable(L, 0, 5);
    set_str(L, "phase", tg_phase_name(o->error.phase));
    set_str(L, "code", o->error.code);
    set_str(L, "message", o->error.message);
    set_str(L, "suggestion", o->error.suggestion);
    lua_pushboolean(L, o->error.retryable);
    lua_setfield(L, -2, "retryable");
    lua_setfield(L, -2, "error");
  }
  lua_createtable(L, 0, 2);
  set_str(L, "verdict", tg_verdict_name(o->verdict));
  set_str(L, "rule", o->rule);
  lua_setfield(L, -2, "decision");
  lua_pushinteger(L, o->attempts);
  lua_setfield(L, -2, "attempts");
  lua_pushnumber(L, o->duration_ms);
  lua_setfield(L, -2, "duration_ms");
  lua_pushboolean(L, o->truncated);
  lua_setfield(L, -2, "truncated");
}

