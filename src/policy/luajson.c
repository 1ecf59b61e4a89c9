/*
 * luajson.c — cJSON <-> Lua values (see luajson.h for the mapping).
 *
 * Both directions are bounded by TG_JSON_MAX_DEPTH so a hostile value can
 * neither blow the C stack nor loop on a cycle.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "luajson.h"

/* Registry keys: addresses of these statics are unique per process and
 * immutable, so they carry no state (the tables live in each lua_State). */
static const char array_mt_key = 'a';
static const char object_mt_key = 'o';
static const char null_sentinel = 'n';

static void push_mt(lua_State *L, const char *key) {
  lua_pushlightuserdata(L, (void *)key);
  lua_rawget(L, LUA_REGISTRYINDEX);
}

void tg_json_open(lua_State *L) {
  const char *keys[2] = {&array_mt_key, &object_mt_key};
  const char *names[2] = {"array", "object"};
  for (int i = 0; i < 2; i++) {
    lua_pushlightuserdata(L, (void *)keys[i]);
    lua_createtable(L, 0, 1);
    lua_pushstring(L, names[i]);
    lua_setfield(L, -2, "__jsontype");
    lua_rawset(L, LUA_REGISTRYINDEX);
  }
}

/* JSON null: a light userdata whose address is a fixed static. */
void tg_json_push_null(lua_State *L) {
  lua_pushlightuserdata(L, (void *)&null_sentinel);
}

int tg_json_isnull(lua_State *L, int idx) {
  return lua_type(L, idx) == LUA_TLIGHTUSERDATA &&
         lua_touserdata(L, idx) == (void *)&null_sentinel;
}

static void mark(lua_State *L, int idx, const char *key) {
  idx = lua_absindex(L, idx);
  push_mt(L, key);
  lua_setmetatable(L, idx);
}

void tg_json_mark_array(lua_State *L, int idx) { mark(L, idx, &array_mt_key); }
void tg_json_mark_object(lua_State *L, int idx) { mark(L, idx, &object_mt_key); }

static void push_number(lua_State *L, double d) {
#if TG_LUA54
  if (d == floor(d) && fabs(d) <= 9007199254740992.0) {
    lua_pushinteger(L, (lua_Integer)d);
    return;
  }
#endif
  lua_pushnumber(L, d);
}

static int push_at(lua_State *L, const cJSON *j, int depth) {
  if (depth > TG_JSON_MAX_DEPTH) return -1;
  luaL_checkstack(L, 4, "JSON too deep");
  if (cJSON_IsObject(j) || cJSON_IsArray(j)) {
    int arr = cJSON_IsArray(j);
    int n = cJSON_GetArraySize(j);
    lua_createtable(L, arr ? n : 0, arr ? 0 : n);
    int i = 1;
    for (const cJSON *c = j->child; c; c = c->next, i++) {
      if (push_at(L, c, depth + 1) < 0) {
        lua_pop(L, 1);
        return -1;
      }
      if (arr) lua_rawseti(L, -2, i);
      else lua_setfield(L, -2, c->string ? c->string : "");
    }
    /* empty arrays must stay arrays on the way back */
    if (arr) tg_json_mark_array(L, -1);
    return 0;
  }
  if (cJSON_IsString(j)) lua_pushstring(L, j->valuestring);
  else if (cJSON_IsNumber(j)) push_number(L, j->valuedouble);
  else if (cJSON_IsBool(j)) lua_pushboolean(L, cJSON_IsTrue(j));
  else tg_json_push_null(L);
  return 0;
}

int tg_json_push(lua_State *L, const cJSON *j) {
  if (!j) {
    tg_json_push_null(L);
    return 0;
  }
  return push_at(L, j, 0);
}

/* ---- Lua -> JSON ------------------------------------------------------ */

typedef struct {
  char *err;
  size_t errlen;
  size_t bytes, max_bytes; /* about the JSON text's size; 0: no limit */
  char path[256];
} conv;

/* Counts toward the size limit; 0 when still under it. */
static int over_budget(conv *cv, size_t n) {
  cv->bytes += n;
  return cv->max_bytes && cv->bytes > cv->max_bytes;
}

static cJSON *conv_fail(conv *cv, const char *what) {
  snprintf(cv->err, cv->errlen, "$%s: %s", cv->path, what);
  return NULL;
}

/* Appends ".key" or "[i]" to the path; returns the old length to restore. */
static size_t path_push(conv *cv, const char *key, long long i) {
  size_t len = strlen(cv->path);
  size_t room = sizeof cv->path - len;
  if (key) snprintf(cv->path + len, room, ".%s", key);
  else snprintf(cv->path + len, room, "[%lld]", i);
  return len;
}

static const char *json_kind(lua_State *L, int idx) {
  if (!lua_getmetatable(L, idx)) return NULL;
  lua_getfield(L, -1, "__jsontype");
  const char *k = lua_tostring(L, -1);
  const char *r = k && !strcmp(k, "array") ? "array"
                  : k && !strcmp(k, "object") ? "object" : NULL;
  lua_pop(L, 2);
  return r;
}

/* The length n when the table's keys are exactly 1..n (n may be 0 only
 * when the table is marked as an array); -1 otherwise. */
static long long sequence_len(lua_State *L, int idx) {
  long long n = 0, max = 0;
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    lua_pop(L, 1);
    if (lua_type(L, -1) != LUA_TNUMBER) {
      lua_pop(L, 1);
      return -1;
    }
    lua_Number k = lua_tonumber(L, -1);
    if (k < 1 || k != floor(k) || k > 1e15) {
      lua_pop(L, 1);
      return -1;
    }
    n++;
    if ((long long)k > max) max = (long long)k;
  }
  return max == n ? n : -1;
}

static cJSON *from_lua(lua_State *L, int idx, conv *cv, int depth);

static cJSON *array_from(lua_State *L, int idx, long long n, conv *cv,
                         int depth) {
  cJSON *a = cJSON_CreateArray();
  if (!a) return conv_fail(cv, "out of memory");
  for (long long i = 1; i <= n; i++) {
    lua_rawgeti(L, idx, (int)i);
    size_t old = path_push(cv, NULL, i - 1);
    cJSON *v = from_lua(L, lua_gettop(L), cv, depth + 1);
    cv->path[old] = '\0';
    lua_pop(L, 1);
    if (!v) {
      cJSON_Delete(a);
      return NULL;
    }
    cJSON_AddItemToArray(a, v);
  }
  return a;
}

static cJSON *object_from(lua_State *L, int idx, conv *cv, int depth) {
  cJSON *o = cJSON_CreateObject();
  if (!o) return conv_fail(cv, "out of memory");
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    if (lua_type(L, -2) != LUA_TSTRING) {
      lua_pop(L, 2);
      cJSON_Delete(o);
      return conv_fail(cv, "an object key is not a string (mixed table? "
                           "use tg.array{} for lists)");
    }
    const char *k = lua_tostring(L, -2);
    size_t old = path_push(cv, k, 0);
    cJSON *v = from_lua(L, lua_gettop(L), cv, depth + 1);
    cv->path[old] = '\0';
    lua_pop(L, 1);
    if (!v) {
      lua_pop(L, 1);
      cJSON_Delete(o);
      return NULL;
    }
    cJSON_AddItemToObject(o, k, v);
  }
  return o;
}

static cJSON *table_from(lua_State *L, int idx, conv *cv, int depth) {
  const char *kind = json_kind(L, idx);
  long long n = kind && !strcmp(kind, "object") ? -1 : sequence_len(L, idx);
  if (kind && !strcmp(kind, "array") && n < 0)
    return conv_fail(cv, "a table marked as array has non-sequence keys");
  if (n > 0 || (n == 0 && kind && !strcmp(kind, "array")))
    return array_from(L, idx, n, cv, depth);
  return object_from(L, idx, cv, depth);
}

static cJSON *from_lua(lua_State *L, int idx, conv *cv, int depth) {
  if (depth > TG_JSON_MAX_DEPTH)
    return conv_fail(cv, "nested too deeply (a cycle?)");
  if (!lua_checkstack(L, 4)) return conv_fail(cv, "Lua stack exhausted");
  switch (lua_type(L, idx)) {
    case LUA_TNIL: return cJSON_CreateNull();
    case LUA_TBOOLEAN: return cJSON_CreateBool(lua_toboolean(L, idx));
    case LUA_TNUMBER: {
      lua_Number d = lua_tonumber(L, idx);
      if (isnan(d) || isinf(d)) return conv_fail(cv, "NaN or infinity is not JSON");
      return cJSON_CreateNumber((double)d);
    }
    case LUA_TSTRING: {
      size_t len;
      const char *s = lua_tolstring(L, idx, &len);
      if (over_budget(cv, len + 3)) {
        char m[96];
        snprintf(m, sizeof m, "over the size limit of %zu bytes",
                 cv->max_bytes);
        return conv_fail(cv, m);
      }
      if (memchr(s, '\0', len))
        return conv_fail(cv, "a string with a NUL byte cannot be sent as JSON");
      return cJSON_CreateString(s);
    }
    case LUA_TTABLE: return table_from(L, idx, cv, depth);
    case LUA_TLIGHTUSERDATA:
      if (tg_json_isnull(L, idx)) return cJSON_CreateNull();
      /* fall through */
    default: {
      char m[80];
      snprintf(m, sizeof m, "a %s is not JSON", luaL_typename(L, idx));
      return conv_fail(cv, m);
    }
  }
}

/* ---- Lua == JSON, without converting ---------------------------------- */

static int equal_at(lua_State *L, int idx, const cJSON *j, int depth);

/* Is the metatable of the table at idx the array marker? Compared by
 * identity: no string lookups on this path. */
static int has_array_mt(lua_State *L, int idx) {
  if (!lua_getmetatable(L, idx)) return 0;
  push_mt(L, &array_mt_key);
  int eq = lua_rawequal(L, -1, -2);
  lua_pop(L, 2);
  return eq;
}

/* Answers may be false negatives (then the caller converts and compares
 * the cJSON values), never false positives. */
static int table_equal(lua_State *L, int idx, const cJSON *j, int depth) {
  int n = 0;
  if (cJSON_IsArray(j)) {
    int len = cJSON_GetArraySize(j);
    if (!has_array_mt(L, idx) || (int)lua_rawlen(L, idx) != len) return 0;
    lua_pushinteger(L, len); /* nothing may follow element len */
    if (len > 0 && lua_next(L, idx)) {
      lua_pop(L, 2);
      return 0;
    }
    if (len == 0) {
      lua_pop(L, 1);
      lua_pushnil(L);
      if (lua_next(L, idx)) {
        lua_pop(L, 2);
        return 0;
      }
    }
    for (const cJSON *c = j->child; c; c = c->next) {
      lua_rawgeti(L, idx, ++n);
      int eq = equal_at(L, lua_gettop(L), c, depth + 1);
      lua_pop(L, 1);
      if (!eq) return 0;
    }
    return 1;
  }
  if (!cJSON_IsObject(j) || has_array_mt(L, idx)) return 0;
  /* One pass over the Lua table, looking each key up in the (small) cJSON
   * object: cheaper than lua_getfield, which interns every key. */
  int keys = 0;
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    const cJSON *c = lua_type(L, -2) == LUA_TSTRING
        ? cJSON_GetObjectItemCaseSensitive(j, lua_tostring(L, -2)) : NULL;
    if (!c || !equal_at(L, lua_gettop(L), c, depth + 1)) {
      lua_pop(L, 2);
      return 0;
    }
    lua_pop(L, 1);
    keys++;
  }
  for (const cJSON *c = j->child; c; c = c->next) n++;
  return keys == n;
}

static int equal_at(lua_State *L, int idx, const cJSON *j, int depth) {
  if (depth > TG_JSON_MAX_DEPTH || !lua_checkstack(L, 4)) return 0;
  switch (lua_type(L, idx)) {
    case LUA_TBOOLEAN:
      return cJSON_IsBool(j) && !lua_toboolean(L, idx) == !cJSON_IsTrue(j);
    case LUA_TNUMBER:
      return cJSON_IsNumber(j) && (double)lua_tonumber(L, idx) == j->valuedouble;
    case LUA_TSTRING: {
      size_t len;
      const char *s = lua_tolstring(L, idx, &len);
      return cJSON_IsString(j) && strlen(j->valuestring) == len &&
             memcmp(s, j->valuestring, len) == 0;
    }
    case LUA_TTABLE: return table_equal(L, idx, j, depth);
    case LUA_TLIGHTUSERDATA: return tg_json_isnull(L, idx) && cJSON_IsNull(j);
    default: return 0; /* nil inside a table cannot happen; functions never equal */
  }
}

int tg_json_equal_lua(lua_State *L, int idx, const cJSON *j) {
  return equal_at(L, lua_absindex(L, idx), j, 0);
}

cJSON *tg_json_from_lua_max(lua_State *L, int idx, size_t max_bytes,
                            char *err, size_t errlen) {
  char dummy[8];
  conv cv = {err ? err : dummy, err ? errlen : sizeof dummy, 0, max_bytes, ""};
  return from_lua(L, lua_absindex(L, idx), &cv, 0);
}

cJSON *tg_json_from_lua(lua_State *L, int idx, char *err, size_t errlen) {
  return tg_json_from_lua_max(L, idx, 0, err, errlen);
}
