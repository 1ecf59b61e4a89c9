/*
 * api_memory.c — tg.memory.record{kind, content, metadata, scope,
 * session, project} and tg.memory.recall(query, {scope, session, project,
 * limit, min_score, max_tokens}) for policies. The store is reached only
 * through the core's sink (core/sink.h: memory_record, memory_recall,
 * filled by the runtime), never by name; with storage off they return
 * nil, "storage is off", "ENOTSUP". Tables are read raw and strictly.
 */
#include <errno.h>
#include <math.h>
#include <string.h>
#include "api_memory.h"
#include "generation.h"
#include "lua/luajson.h"
#include "lua/luaraw.h"
#include "base/jsonnum.h"

static tg_generation *gen_of(lua_State *L) {
  return (tg_generation *)lua_touserdata(L, lua_upvalueindex(1));
}

/* t[k] as a string (NULL when nil); raises for another type or a NUL. */
static const char *opt_str(lua_State *L, int t, const char *fn,
                           const char *k) {
  int ty = tg__rawgetfield(L, t, k);
  const char *s = NULL;
  if (ty == LUA_TSTRING) {
    char what[64];
    snprintf(what, sizeof what, "'%s'", k);
    s = tg__checknonul(L, -1, fn, what);
  } else if (ty != LUA_TNIL) {
    luaL_error(L, "%s: '%s' must be a string (got %s)", fn, k,
               luaL_typename(L, -1));
  }
  lua_pop(L, 1); /* the table keeps the string */
  return s;
}

static double opt_num(lua_State *L, int t, const char *fn, const char *k,
                      int whole) {
  int ty = tg__rawgetfield(L, t, k);
  double v = 0;
  if (ty == LUA_TNUMBER) v = lua_tonumber(L, -1);
  if ((ty != LUA_TNIL && ty != LUA_TNUMBER) || !isfinite(v) || v < 0 ||
      (whole && (v != floor(v) || v > TG_JSON_INT_MAX)))
    luaL_error(L, "%s: '%s' must be a %s >= 0", fn, k,
               whole ? "whole number" : "number");
  lua_pop(L, 1);
  return v;
}

static int off(lua_State *L) {
  lua_pushnil(L);
  lua_pushliteral(L, "storage is off");
  lua_pushliteral(L, "ENOTSUP");
  return 3;
}

static int failed(lua_State *L, const char *err, int64_t rc) {
  lua_pushnil(L);
  lua_pushstring(L, err);
  lua_pushstring(L, rc == -EINVAL ? "EINVAL" : rc == -ENOMEM ? "ENOMEM"
                                                              : "EIO");
  return 3;
}

static const char *const record_keys[] = {"kind", "content", "metadata",
                                          "scope", "session", "project",
                                          NULL};

static int l_record(lua_State *L) {
  const char *fn = "tg.memory.record";
  tg_generation *g = gen_of(L);
  luaL_checktype(L, 1, LUA_TTABLE);
  tg__check_keys(L, 1, fn, record_keys);
  tg_memory m = {opt_str(L, 1, fn, "kind"), opt_str(L, 1, fn, "content"),
                 NULL, opt_str(L, 1, fn, "scope"),
                 opt_str(L, 1, fn, "session"), opt_str(L, 1, fn, "project")};
  cJSON *meta = NULL;
  if (tg__rawgetfield(L, 1, "metadata") != LUA_TNIL) {
    char why[200];
    meta = tg__json_from_lua_max(L, lua_gettop(L), TG_MESSAGE_MAX, why,
                                 sizeof why);
    if (!meta) return luaL_error(L, "%s: 'metadata': %s", fn, why);
  }
  lua_pop(L, 1);
  m.metadata = meta;
  const tg_sink *s = &g->core->sink;
  if (!s->memory_record) {
    cJSON_Delete(meta);
    return off(L);
  }
  char err[TG_ERRMSG] = "";
  int64_t id = s->memory_record(s->ud, &m, err);
  cJSON_Delete(meta);
  if (id < 0) return failed(L, err, id);
  lua_pushinteger(L, (lua_Integer)id);
  return 1;
}

static const char *const recall_keys[] = {"scope", "session", "project",
                                          "limit", "min_score", "max_tokens",
                                          NULL};

static int l_recall(lua_State *L) {
  const char *fn = "tg.memory.recall";
  tg_generation *g = gen_of(L);
  luaL_checktype(L, 1, LUA_TSTRING);
  tg_recall_filter f = {tg__checknonul(L, 1, fn, "the query"), NULL, NULL,
                        NULL, 0, 0, 0};
  if (!lua_isnoneornil(L, 2)) {
    luaL_checktype(L, 2, LUA_TTABLE);
    tg__check_keys(L, 2, fn, recall_keys);
    f.scope = opt_str(L, 2, fn, "scope");
    f.session = opt_str(L, 2, fn, "session");
    f.project = opt_str(L, 2, fn, "project");
    f.limit = (size_t)opt_num(L, 2, fn, "limit", 1);
    f.min_score = opt_num(L, 2, fn, "min_score", 0);
    f.max_tokens = (size_t)opt_num(L, 2, fn, "max_tokens", 1);
  }
  const tg_sink *s = &g->core->sink;
  if (!s->memory_recall) return off(L);
  char err[TG_ERRMSG] = "";
  cJSON *hits = s->memory_recall(s->ud, &f, err);
  if (!hits) return failed(L, err, -EINVAL);
  int rc = tg__json_push(L, hits);
  cJSON_Delete(hits);
  if (rc < 0) return luaL_error(L, "%s: out of memory", fn);
  return 1;
}

static const luaL_Reg memory_api[] = {
    {"record", l_record}, {"recall", l_recall}, {NULL, NULL}};

void tg__policy_memory_open(lua_State *L, tg_generation *g) {
  lua_newtable(L);
  lua_pushlightuserdata(L, g);
  luaL_setfuncs(L, memory_api, 1);
}
