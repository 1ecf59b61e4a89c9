/*
 * schema.c — toolgate.schema(s): the JSON Schema validator the chain uses,
 * for the host's own values.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lua_module.h"
#include "lua/luaraw.h"
#include "lua/luajson.h"
#include "lua/luaarg.h" /* after lauxlib: argument errors name the method */

/* ---- toolgate.schema ------------------------------------------------------
 * The validator the chain uses, for the host's own values:
 * toolgate.schema(s) compiles s (a table, a boolean or JSON text) and
 * returns a validator; v:validate(value) answers true, or false and the
 * list of failures {path, keyword, message}. */

#define SCHEMA_MT "toolgate.schema"

typedef struct {
  tg_schema *s;
} lschema;

static int l_schema_gc(lua_State *L) {
  lschema *u = luaL_checkudata(L, 1, SCHEMA_MT);
  tg_schema_free(u->s);
  u->s = NULL;
  return 0;
}

/* The schema at idx as JSON (NULL with why in err). Raises nothing. */
static cJSON *schema_json(lua_State *L, int idx, char *err, size_t errlen) {
  if (lua_type(L, idx) == LUA_TSTRING) {
    static const char pre[] = "invalid JSON: ";
    size_t n;
    const char *text = lua_tolstring(L, idx, &n);
    snprintf(err, errlen, "%s", pre); /* errlen is TG_ERRMSG */
    return tg_json_parse(text, n, NULL, err + strlen(pre),
                         errlen - strlen(pre));
  }
  if (lua_istable(L, idx) || lua_isboolean(L, idx))
    return tg__json_from_lua(L, idx, err, errlen);
  snprintf(err, errlen, "the schema must be a table, a boolean or JSON text "
           "(got %s)", luaL_typename(L, idx));
  return NULL;
}

static int l_schema(lua_State *L) {
  lschema *u = lua_newuserdatauv(L, sizeof *u, 0); /* first: it may raise */
  u->s = NULL;
  luaL_setmetatable(L, SCHEMA_MT);
  char err[TG_ERRMSG];
  cJSON *j = schema_json(L, 1, err, sizeof err);
  if (j) u->s = tg_schema_compile(j, err);
  cJSON_Delete(j);
  if (!u->s) return luaL_error(L, "toolgate.schema: %s", err);
  return 1;
}

static int l_schema_validate(lua_State *L) {
  lschema *u = luaL_checkudata(L, 1, SCHEMA_MT);
  if (!u->s) return luaL_error(L, "toolgate.schema: this validator is freed");
  char err[TG_ERRMSG];
  cJSON *v = tg__json_from_lua(L, 2, err, sizeof err);
  if (!v) return luaL_error(L, "toolgate.schema: validate: %s", err);
  cJSON *errors = tg_schema_errors(u->s, v, 0);
  cJSON_Delete(v);
  if (!errors) return luaL_error(L, "toolgate.schema: out of memory");
  if (!errors->child) {
    cJSON_Delete(errors);
    lua_pushboolean(L, 1);
    return 1;
  }
  luaL_checkstack(L, 2, NULL);
  lua_pushboolean(L, 0);
  int rc = tg__json_push(L, errors); /* protected: it does not raise */
  cJSON_Delete(errors);
  if (rc != 0) return luaL_error(L, "toolgate.schema: out of memory");
  return 2;
}

/* The validator's metatable, and toolgate.schema on the module table at
 * the top of the stack. */
void tg__lm_schema_open(lua_State *L) {
  static const luaL_Reg methods[] = {{"validate", l_schema_validate},
                                     {NULL, NULL}};
  luaL_newmetatable(L, SCHEMA_MT);
  lua_newtable(L);
  luaL_setfuncs(L, methods, 0);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, l_schema_gc);
  lua_setfield(L, -2, "__gc");
  lua_pop(L, 1);
  lua_pushcfunction(L, l_schema);
  lua_setfield(L, -2, "schema");
}
