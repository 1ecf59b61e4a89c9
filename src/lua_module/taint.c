/*
 * taint.c — a session's taint from the host: rt:taint, rt:session_taint
 * and rt:untaint, named as the policies' tg.taint and tg.session_taint.
 * A Lua program that embeds the chain marks a session sensitive (its own
 * tool read a secret), reads it, and clears it (a person's decision, as
 * `toolgate approvals clear-taint`). Kept where the runtime keeps taints
 * (runtime/front_api.h: its database, or memory when storage is off).
 * Arguments of the wrong kind raise, as tg.taint's do; a store that fails
 * answers nil, err, code, except to rt:session_taint, which raises.
 */
#include <errno.h>
#include <string.h>
#include "lua_module.h"
#include "lua/luaraw.h"
#include "lua/luaarg.h" /* after lauxlib: argument errors name the method */

static const char *session_arg(lua_State *L, const char *fn) {
  if (lua_type(L, 2) != LUA_TSTRING)
    luaL_error(L, "%s: the session must be a session id (got %s)", fn,
               luaL_typename(L, 2));
  return tg__checknonul(L, 2, fn, "the session");
}

static int failed(lua_State *L, const char *err, int rc) {
  char code[32];
  return tg__lm_fail(L, err, tg__lm_errno_name(rc, code, sizeof code));
}

/* rt:taint(session, level, reason) -> true | nil, err, code */
static int l_taint(lua_State *L) {
  const char *fn = "rt:taint";
  lrt *r = tg__lm_check_rt(L, 1);
  const char *session = session_arg(L, fn);
  int lv;
  const char *reason = tg__l_taint_level_reason(L, fn, 3, &lv);
  char err[TG_ERRMSG] = "";
  int rc = tg_runtime_taint(r->rt, session, lv, reason, err);
  if (rc < 0) return failed(L, err, rc);
  lua_pushboolean(L, 1);
  return 1;
}

/* rt:session_taint(session) -> nil | {level, reason, call?, tool?, at};
 * raises when it cannot be read, as tg.session_taint does: nil would say
 * the session is clean, and a caller asking would let the call go */
static int l_session_taint(lua_State *L) {
  const char *fn = "rt:session_taint";
  lrt *r = tg__lm_check_rt(L, 1);
  const char *session = session_arg(L, fn);
  tg_taint t;
  char err[TG_ERRMSG] = "";
  int rc = tg_runtime_taint_of(r->rt, session, &t, err);
  return tg__l_taint_answer(L, fn, session, rc, &t, err);
}

/* rt:untaint(session) -> true | nil, err, code ("ENOENT": it was clean) */
static int l_untaint(lua_State *L) {
  const char *fn = "rt:untaint";
  lrt *r = tg__lm_check_rt(L, 1);
  const char *session = session_arg(L, fn);
  char err[TG_ERRMSG] = "";
  int rc = tg_runtime_untaint(r->rt, session, err);
  if (rc < 0) return failed(L, err, rc);
  lua_pushboolean(L, 1);
  return 1;
}

const luaL_Reg tg__lm_taint_methods[] = {
    {"taint", l_taint},
    {"session_taint", l_session_taint},
    {"untaint", l_untaint},
    {NULL, NULL}};
