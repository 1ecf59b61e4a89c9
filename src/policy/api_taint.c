/*
 * api_taint.c — tg.taint and tg.session_taint (api_taint.h). The first
 * argument is a session id, or a call table: then its session, and the
 * call's id and tool are kept as the cause. The store is reached through
 * core/taint.h only (the sink, or memory with storage off). A taint that
 * cannot be read raises: the rule that asked fails, and a failing rule
 * never lets a call through.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "api_taint.h"
#include "generation.h"
#include "core/taint.h"
#include "call_facts.h"
#include "lua/luaraw.h"
#include "base/util.h"

static tg_generation *gen_of(lua_State *L) {
  return (tg_generation *)lua_touserdata(L, lua_upvalueindex(1));
}

/* The call table's field k as a string, or NULL. */
static const char *call_field(lua_State *L, int t, const char *k) {
  const char *s = NULL;
  if (tg__rawgetfield(L, t, k) == LUA_TSTRING) s = lua_tostring(L, -1);
  lua_pop(L, 1); /* the table keeps the string */
  return s;
}

/* Argument 1: a session id, or a call table: then its session, id and
 * tool as C built it (*id, *tool: an agent's own id and name of the call
 * when it is an agent's, as the user saw it, else toolgate's). What a
 * policy wrote into the table since is not read, and a table a policy
 * made names no cause: the cause cannot be forged. */
static const char *session_arg(lua_State *L, const char *fn, const char **id,
                               const char **tool) {
  *id = *tool = NULL;
  if (lua_type(L, 1) == LUA_TTABLE) {
    const char *s;
    if (tg__call_facts_origin(L, 1)) {
      int o = lua_gettop(L);
      s = call_field(L, o, "session");
      *id = call_field(L, o, "id");
      *tool = call_field(L, o, "tool");
      lua_replace(L, 1); /* kept on the stack: its strings stay alive */
    } else {
      s = NULL;
      if (tg__rawgetfield(L, 1, "session") == LUA_TSTRING)
        s = tg__checknonul(L, -1, fn, "the session");
      lua_pop(L, 1); /* the table keeps the string */
    }
    if (!s) luaL_error(L, "%s: the call has no session", fn);
    return s;
  }
  if (lua_type(L, 1) != LUA_TSTRING)
    luaL_error(L, "%s: the session must be a session id or a call (got %s)",
               fn, luaL_typename(L, 1));
  return tg__checknonul(L, 1, fn, "the session");
}

static int failed(lua_State *L, const char *err, int rc) {
  lua_pushnil(L);
  lua_pushstring(L, err);
  lua_pushstring(L, rc == -EINVAL ? "EINVAL" : rc == -ENOMEM ? "ENOMEM"
                                                            : "EIO");
  return 3;
}

const char *tg__l_taint_level_reason(lua_State *L, const char *fn, int idx,
                                    int *level) {
  lua_Number lv = lua_type(L, idx) == LUA_TNUMBER ? lua_tonumber(L, idx) : 0;
  if (!isfinite(lv) || lv != floor(lv) || lv < 1 || lv > TG_TAINT_LEVEL_MAX)
    luaL_error(L, "%s: the level must be a whole number from 1 to %d", fn,
               TG_TAINT_LEVEL_MAX);
  if (lua_type(L, idx + 1) != LUA_TSTRING)
    luaL_error(L, "%s: the reason must be a string (got %s)", fn,
               luaL_typename(L, idx + 1));
  *level = (int)lv;
  return tg__checknonul(L, idx + 1, fn, "the reason");
}

int tg__l_taint(lua_State *L) {
  const char *fn = "tg.taint";
  tg_generation *g = gen_of(L);
  const char *call_id, *tool;
  const char *session = session_arg(L, fn, &call_id, &tool);
  int lv;
  const char *reason = tg__l_taint_level_reason(L, fn, 2, &lv);
  if (!*reason) return luaL_error(L, "%s: the reason must not be empty", fn);
  tg_taint t;
  tg__taint_fill(&t, lv, reason, call_id, tool, (int64_t)tg__wall_ms());
  char err[TG_ERRMSG] = "";
  /* a session the policy names is an id as the store keeps them (a call's
   * own session is the runtime's, whatever its length) */
  if (lua_type(L, 1) == LUA_TSTRING && strlen(session) > TG_TAINT_SESSION_MAX) {
    snprintf(err, sizeof err, "a session id is 1 to %d bytes",
             TG_TAINT_SESSION_MAX);
    return failed(L, err, -EINVAL);
  }
  int rc = tg__taint_raise(g->core, session, &t, err);
  if (rc < 0) return failed(L, err, rc);
  lua_pushboolean(L, 1);
  return 1;
}

int tg__l_session_taint(lua_State *L) {
  const char *fn = "tg.session_taint";
  tg_generation *g = gen_of(L);
  const char *call_id, *tool;
  const char *session = session_arg(L, fn, &call_id, &tool);
  tg_taint t;
  char err[TG_ERRMSG] = "";
  int rc = tg__taint_read(g->core, session, &t, err);
  return tg__l_taint_answer(L, fn, session, rc, &t, err);
}

int tg__l_taint_answer(lua_State *L, const char *fn, const char *session,
                       int rc, const tg_taint *t, const char *err) {
  if (rc < 0)
    return luaL_error(L, "%s: session %s: its taint cannot be read: %s", fn,
                      session, err);
  if (rc == 0) {
    lua_pushnil(L);
    return 1;
  }
  lua_createtable(L, 0, 5);
  lua_pushinteger(L, t->level);
  lua_setfield(L, -2, "level");
  lua_pushstring(L, t->reason);
  lua_setfield(L, -2, "reason");
  if (*t->call_id) {
    lua_pushstring(L, t->call_id);
    lua_setfield(L, -2, "call");
  }
  if (*t->tool) {
    lua_pushstring(L, t->tool);
    lua_setfield(L, -2, "tool");
  }
  lua_pushinteger(L, (lua_Integer)t->ts_ms);
  lua_setfield(L, -2, "at");
  return 1;
}
