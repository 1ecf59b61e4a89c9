/*
 * options.c — reading what the host passes to the module, and answering a
 * failure the host may handle. Option tables are copied raw and read
 * strictly (an unknown name raises: a typo must not pass as the default);
 * a failure is nil, message, code, luv's convention. Every method reads
 * its arguments through these, so they read and fail alike.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lua_module.h"
#include "lua/luaraw.h"
#include "lua/luajson.h"
#include <uv.h>
#include "lua/luaarg.h" /* after lauxlib: argument errors name the method */

/* Is the value at idx exactly the string `want` (no NUL tricks)? */
int tg__lm_is_str(lua_State *L, int idx, const char *want) {
  size_t n;
  if (lua_type(L, idx) != LUA_TSTRING) return 0;
  const char *s = lua_tolstring(L, idx, &n);
  return n == strlen(want) && memcmp(s, want, n) == 0;
}

static int known_name(const char *k, size_t n, const char *const *names) {
  for (; *names; names++)
    if (strlen(*names) == n && memcmp(*names, k, n) == 0) return 1;
  return 0;
}

static void raise_unknown_option(lua_State *L, const char *fn, int key,
                                 const char *const *names) {
  key = lua_absindex(L, key); /* the buffer below moves the top */
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  for (const char *const *n = names; *n; n++) {
    if (n != names) luaL_addstring(&b, ", ");
    luaL_addstring(&b, *n);
  }
  luaL_pushresult(&b);
  luaL_error(L, "%s: unknown option '%s' (known: %s)", fn,
             lua_tostring(L, key), lua_tostring(L, -1));
}

/* Copies the option table at idx into a new table left on the stack and
 * returns its index (0 when idx is nil). Raw: no __index or __pairs runs,
 * and the copy is ours, so nothing can change or free what we read from
 * it. A name not in `names` is an error naming it: a typo must not pass
 * as the default. */
int tg__lm_copy_opts(lua_State *L, int idx, const char *fn,
                     const char *const *names) {
  if (lua_isnoneornil(L, idx)) return 0;
  idx = lua_absindex(L, idx);
  if (!lua_istable(L, idx))
    luaL_error(L, "%s: the options must be a table (got %s)", fn,
               luaL_typename(L, idx));
  lua_newtable(L);
  int copy = lua_gettop(L);
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    size_t n;
    if (lua_type(L, -2) != LUA_TSTRING)
      luaL_error(L, "%s: option names are strings (got a %s key)", fn,
                 luaL_typename(L, -2));
    const char *k = lua_tolstring(L, -2, &n);
    if (!known_name(k, n, names)) raise_unknown_option(L, fn, -2, names);
    lua_pushvalue(L, -2);
    lua_insert(L, -2);
    lua_rawset(L, copy);
  }
  return copy;
}

/* Pushes opts[k] (nil when there are no options). */
int tg__lm_get_opt(lua_State *L, int o, const char *k) {
  if (!o) {
    lua_pushnil(L);
    return LUA_TNIL;
  }
  lua_getfield(L, o, k);
  return lua_type(L, -1);
}

/* The table at idx as a JSON object (max_bytes: 0 for no limit), or NULL
 * with "<what>: why" in err. The caller owns the result. */
cJSON *tg__lm_object_of(lua_State *L, int idx, size_t max_bytes,
                        const char *what, char *err) {
  char why[TG_ERRMSG - 16];
  cJSON *j = max_bytes ? tg__json_from_lua_max(L, idx, max_bytes, why, sizeof why)
                       : tg__json_from_lua(L, idx, why, sizeof why);
  if (j && !cJSON_IsObject(j)) {
    cJSON_Delete(j);
    j = NULL;
    snprintf(why, sizeof why, "must be a table with keys (a JSON object), "
             "not a list");
  }
  if (!j) snprintf(err, TG_ERRMSG, "%s: %s", what, why);
  return j;
}

/* nil, message, code: how a method fails in a way the host may handle
 * (luv's convention). code is a short stable string: an errno name
 * ("EINVAL", "EEXIST", "ENOENT") or one of toolgate.error_codes. */
int tg__lm_fail(lua_State *L, const char *err, const char *code) {
  lua_pushnil(L);
  lua_pushstring(L, err);
  lua_pushstring(L, code);
  return 3;
}

/* The errno name of a negative code from the C API ("EINVAL"). */
const char *tg__lm_errno_name(int rc, char *buf, size_t len) {
  return uv_err_name_r(rc, buf, len);
}

int tg__lm_ok_or_fail(lua_State *L, int rc, const char *err) {
  if (rc >= 0) {
    lua_pushboolean(L, 1);
    return 1;
  }
  char code[32];
  return tg__lm_fail(L, err, tg__lm_errno_name(rc, code, sizeof code));
}

/* An optional string argument without NUL bytes. */
const char *tg__lm_opt_str_arg(lua_State *L, int idx, const char *fn,
                               const char *what) {
  if (lua_isnoneornil(L, idx)) return NULL;
  luaL_checkstring(L, idx);
  return tg__checknonul(L, idx, fn, what);
}

/* The string option k of fn in the copied options at o (NULL when absent
 * or there are no options); the copy keeps it alive. */
const char *tg__lm_opt_string(lua_State *L, int o, const char *fn,
                              const char *k) {
  int ty = tg__lm_get_opt(L, o, k);
  if (ty != LUA_TNIL && ty != LUA_TSTRING)
    luaL_error(L, "%s: '%s' must be a string (got %s)", fn, k,
               luaL_typename(L, -1));
  char what[64];
  snprintf(what, sizeof what, "'%s'", k);
  const char *v = ty == LUA_TNIL ? NULL : tg__checknonul(L, -1, fn, what);
  lua_pop(L, 1);
  return v;
}

/* A table at idx as a JSON object (NULL for nil); raises otherwise. */
cJSON *tg__lm_object_arg(lua_State *L, int idx, const char *fn,
                         const char *what) {
  if (lua_isnoneornil(L, idx)) return NULL;
  char why[TG_ERRMSG - 64];
  cJSON *j = lua_istable(L, idx) ? tg__json_from_lua(L, idx, why, sizeof why)
                                 : NULL;
  if (!lua_istable(L, idx)) snprintf(why, sizeof why, "must be a table");
  if (j && !cJSON_IsObject(j)) {
    cJSON_Delete(j);
    j = NULL;
    snprintf(why, sizeof why, "must be a table with keys (a JSON object)");
  }
  if (!j) luaL_error(L, "%s: %s %s", fn, what, why);
  return j;
}
