/*
 * policies.c — the runtime's policies from the host: their generation,
 * rt:reload, rt:test (the policy unit tests) and rt:listen (the control
 * socket `toolgate reload` talks to).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lua_module.h"
#include "kit/kit.h"
#include "lua/luaraw.h"
#include "lua/luajson.h"
#include <uv.h>
#include "lua/luaarg.h" /* after lauxlib: argument errors name the method */

static int l_generation(lua_State *L) {
  lua_pushinteger(
      L, (lua_Integer)tg_runtime_generation(tg__lm_check_rt(L, 1)->rt));
  return 1;
}

/* An optional path argument; -1 with err when it holds a NUL byte (no
 * such file can exist: the path C would see is another one). */
static int opt_path(lua_State *L, int idx, const char **path, char *err) {
  size_t n;
  *path = luaL_optlstring(L, idx, NULL, &n);
  if (*path && memchr(*path, '\0', n)) {
    snprintf(err, TG_ERRMSG, "the path contains a NUL byte (at byte %zu)",
             strlen(*path));
    return -1;
  }
  return 0;
}

/* rt:reload([dir]) -> generation | nil, "file:line: message" */
static int l_reload(lua_State *L) {
  lrt *r = tg__lm_check_rt(L, 1);
  const char *dir;
  char err[TG_ERRMSG] = "";
  if (opt_path(L, 2, &dir, err) < 0) return tg__lm_fail(L, err, "EINVAL");
  lua_State *prev = tg__lm_enter(r, L);
  int rc = tg_runtime_load_policies(r->rt, dir, err);
  tg__lm_leave(r, L, prev);
  char code[32];
  if (rc < 0)
    return tg__lm_fail(L, err, tg__lm_errno_name(rc, code, sizeof code));
  lua_pushinteger(L, (lua_Integer)tg_runtime_generation(r->rt));
  return 1;
}

/* rt:test([dir] [, {run = pattern}]) -> report | nil, err: the policy
 * unit tests of dir (default: the policies folder), as `toolgate test`
 * runs them (tg_policy_test). */
static const char *const test_opt_names[] = {"run", NULL};

static int l_test(lua_State *L) {
  lrt *r = tg__lm_check_rt(L, 1);
  const char *dir, *run = NULL;
  char err[TG_ERRMSG] = "";
  if (opt_path(L, 2, &dir, err) < 0) return tg__lm_fail(L, err, "EINVAL");
  int o = tg__lm_copy_opts(L, 3, "rt:test", test_opt_names);
  if (tg__lm_get_opt(L, o, "run") != LUA_TNIL) {
    if (lua_type(L, -1) != LUA_TSTRING || tg__has_nul(L, -1))
      return luaL_error(L, "rt:test: 'run' must be a Lua pattern (a string)");
    run = lua_tostring(L, -1); /* the options copy keeps it */
  }
  json_box *box = tg__lm_new_box(L);
  lua_State *prev = tg__lm_enter(r, L);
  tg__hook_install_case_reader(r->rt); /* cases as agents' own events */
  box->j[2] = tg_policy_test(r->rt, dir, run, err);
  tg__lm_leave(r, L, prev);
  if (!box->j[2]) return tg__lm_fail(L, err, "EINVAL");
  if (tg__json_push(L, box->j[2]) < 0)
    return tg__lm_fail(L, "the report is nested too deeply", "EINVAL");
  tg__lm_box_clear(box);
  return 1;
}

/* rt:listen([path]) -> path | nil, err: the control socket (toolgate reload) */
static int l_listen(lua_State *L) {
  lrt *r = tg__lm_check_rt(L, 1);
  const char *path;
  char err[TG_ERRMSG] = "";
  if (opt_path(L, 2, &path, err) < 0) return tg__lm_fail(L, err, "EINVAL");
  lua_State *prev = tg__lm_enter(r, L);
  int rc = tg_runtime_listen(r->rt, path, err);
  tg__lm_leave(r, L, prev); /* re-arms an attached host: a new fd */
  char code[32];
  if (rc < 0)
    return tg__lm_fail(L, err, tg__lm_errno_name(rc, code, sizeof code));
  lua_pushstring(L, tg_runtime_control_path(r->rt));
  return 1;
}

const luaL_Reg tg__lm_policy_methods[] = {
    {"generation", l_generation},
    {"reload", l_reload},
    {"test", l_test},
    {"listen", l_listen},
    {NULL, NULL}};
