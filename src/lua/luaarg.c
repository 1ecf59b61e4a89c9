/* luaarg.c — argument errors that name the function (luaarg.h). Written
 * against the public Lua API only, like lauxlib, whose messages these are. */
#include <string.h>
#include "luaarg.h"
#include "luaweak.h"

#define NAMES_KEY "toolgate.argnames"

/* Pushes the registry's table of names (function -> name), made weakly
 * keyed on first use. */
static void push_names(lua_State *L) {
  tg__push_weak_registry(L, NAMES_KEY);
}

void tg__arg_name(lua_State *L, int idx, const char *name) {
  idx = lua_absindex(L, idx);
  push_names(L);
  lua_pushvalue(L, idx);
  lua_pushstring(L, name);
  lua_rawset(L, -3);
  lua_pop(L, 1);
}

void tg__arg_names(lua_State *L, int idx) {
  idx = lua_absindex(L, idx);
  push_names(L);
  lua_pushnil(L);
  while (lua_next(L, idx)) {          /* names, key, value */
    if (lua_iscfunction(L, -1) && lua_type(L, -2) == LUA_TSTRING) {
      lua_pushvalue(L, -2);           /* names, key, value, key */
      lua_rawset(L, -4);              /* names[value] = key */
    } else {
      lua_pop(L, 1);
    }
  }
  lua_pop(L, 1);
}

/* The name the module gave the running function (pushed, or NULL with
 * nothing pushed). */
static const char *given_name(lua_State *L, lua_Debug *ar) {
  if (!lua_getinfo(L, "f", ar)) return NULL;
  lua_getfield(L, LUA_REGISTRYINDEX, NAMES_KEY);
  if (!lua_istable(L, -1)) {
    lua_pop(L, 2);
    return NULL;
  }
  lua_pushvalue(L, -2);
  lua_rawget(L, -2);
  lua_remove(L, -2);
  lua_remove(L, -2);
  if (lua_type(L, -1) == LUA_TSTRING) return lua_tostring(L, -1);
  lua_pop(L, 1);
  return NULL;
}

int tg__argerror(lua_State *L, int arg, const char *extramsg) {
  lua_Debug ar;
  if (!lua_getstack(L, 0, &ar)) /* no stack frame? */
    return luaL_error(L, "bad argument #%d (%s)", arg, extramsg);
  lua_getinfo(L, "n", &ar);
  const char *name = given_name(L, &ar);
  if (!name) name = ar.name ? ar.name : "?";
  if (ar.namewhat && strcmp(ar.namewhat, "method") == 0) {
    arg--; /* do not count self */
    if (arg == 0)
      return luaL_error(L, "calling '%s' on bad self (%s)", name, extramsg);
  }
  return luaL_error(L, "bad argument #%d to '%s' (%s)", arg, name, extramsg);
}

int tg__typeerror(lua_State *L, int arg, const char *tname) {
  const char *got;
  int t = lua_type(L, arg);
  if (luaL_getmetafield(L, arg, "__name") && lua_type(L, -1) == LUA_TSTRING)
    got = lua_tostring(L, -1);
  else if (t == LUA_TLIGHTUSERDATA)
    got = "light userdata";
  else
    got = t == LUA_TNONE ? "no value" : lua_typename(L, t);
  return tg__argerror(L, arg, lua_pushfstring(L, "%s expected, got %s",
                                              tname, got));
}

const char *tg__checklstring(lua_State *L, int arg, size_t *len) {
  const char *s = lua_type(L, arg) == LUA_TNUMBER || lua_type(L, arg) == LUA_TSTRING
                      ? lua_tolstring(L, arg, len) : NULL;
  if (!s) tg__typeerror(L, arg, lua_typename(L, LUA_TSTRING));
  return s;
}

const char *tg__optlstring(lua_State *L, int arg, const char *def,
                           size_t *len) {
  if (lua_isnoneornil(L, arg)) {
    if (len) *len = def ? strlen(def) : 0;
    return def;
  }
  return tg__checklstring(L, arg, len);
}

lua_Number tg__checknumber(lua_State *L, int arg) {
  int isnum = 0;
  lua_Number d = lua_tonumberx(L, arg, &isnum);
  if (!isnum) tg__typeerror(L, arg, lua_typename(L, LUA_TNUMBER));
  return d;
}

lua_Number tg__optnumber(lua_State *L, int arg, lua_Number def) {
  return lua_isnoneornil(L, arg) ? def : tg__checknumber(L, arg);
}

lua_Integer tg__checkinteger(lua_State *L, int arg) {
  int isnum = 0;
  lua_Integer d = lua_tointegerx(L, arg, &isnum);
  if (!isnum) {
    if (lua_isnumber(L, arg))
      tg__argerror(L, arg, "number has no integer representation");
    else
      tg__typeerror(L, arg, lua_typename(L, LUA_TNUMBER));
  }
  return d;
}

lua_Integer tg__optinteger(lua_State *L, int arg, lua_Integer def) {
  return lua_isnoneornil(L, arg) ? def : tg__checkinteger(L, arg);
}

void tg__checktype(lua_State *L, int arg, int t) {
  if (lua_type(L, arg) != t) tg__typeerror(L, arg, lua_typename(L, t));
}

void tg__checkany(lua_State *L, int arg) {
  if (lua_type(L, arg) == LUA_TNONE) tg__argerror(L, arg, "value expected");
}

void *tg__checkudata(lua_State *L, int arg, const char *tname) {
  void *p = luaL_testudata(L, arg, tname);
  if (!p) tg__typeerror(L, arg, tname);
  return p;
}
