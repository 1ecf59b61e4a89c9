/*
 * luajson.c — cJSON <-> Lua values (see luajson.h for the mapping).
 *
 * Policy code hands us its values (results, rewritten args, what it
 * encodes) and C reads them outside any protected call, where a Lua error
 * is a panic. So Lua -> JSON reads raw — lua_next, lua_rawgeti,
 * lua_rawlen, metatables compared by identity — and checks the stack
 * once up front: nothing in it can raise or run policy code.
 *
 * JSON -> Lua allocates Lua memory, which can fail (the policy memory
 * cap) and unwind: the tree being pushed belongs to the caller, so the
 * building runs inside a protected call and the caller always gets
 * control back to free it. tg.json_decode and tg.json_encode own what they
 * build and raise again only after freeing it.
 *
 * Both directions are bounded by TG_JSON_MAX_DEPTH so a hostile value can
 * neither blow the C stack nor loop on a cycle.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "luajson.h"
#include "luacall.h"

/* Registry keys: addresses of these statics are unique per process and
 * immutable, so they carry no state (the values live in each lua_State). */
static const char array_mt_key = 'a';
static const char object_mt_key = 'o';
static const char null_sentinel = 'n';

/* Stack slots a conversion may use: two per level (key and value) and a
 * few for the metatable checks. */
#define STACK_NEEDED (2 * (TG_JSON_MAX_DEPTH + 2) + 8)

static void push_mt(lua_State *L, const char *key) {
  lua_pushlightuserdata(L, (void *)key);
  lua_rawget(L, LUA_REGISTRYINDEX);
}

/* ---- protected calls ----------------------------------------------------- */

/* Work to run in a protected call: fn pushes one value, or returns 0. */
typedef struct job {
  int (*fn)(lua_State *L, struct job *jb);
  const cJSON *j;      /* push_job: the tree */
  const char *text;    /* text_job: the string */
  size_t len;
  int rc;              /* push_job: push_at's answer */
} job;

static int job_trampoline(lua_State *L) {
  job *jb = lua_touserdata(L, 1);
  lua_settop(L, 0);
  return jb->fn(L, jb);
}

/* Runs jb in a protected call: LUA_OK with its one result on top, or an
 * error code with the error on top (lua/luacall.h: nothing can fail
 * before the protection is in place). */
static int run_protected(lua_State *L, job *jb) {
  return tg__lua_pcall_c(L, job_trampoline, jb, 1);
}

void tg__json_open(lua_State *L) {
  const char *keys[2] = {&array_mt_key, &object_mt_key};
  const char *names[2] = {"array", "object"};
  for (int i = 0; i < 2; i++) {
    lua_pushlightuserdata(L, (void *)keys[i]);
    lua_createtable(L, 0, 1);
    lua_pushstring(L, names[i]);
    lua_setfield(L, -2, "__jsontype");
    lua_rawset(L, LUA_REGISTRYINDEX);
  }
  tg__lua_call_open(L);
}

/* JSON null: a light userdata whose address is a fixed static. */
void tg__json_push_null(lua_State *L) {
  lua_pushlightuserdata(L, (void *)&null_sentinel);
}

int tg__json_isnull(lua_State *L, int idx) {
  return lua_type(L, idx) == LUA_TLIGHTUSERDATA &&
         lua_touserdata(L, idx) == (void *)&null_sentinel;
}

static void mark(lua_State *L, int idx, const char *key) {
  idx = lua_absindex(L, idx);
  push_mt(L, key);
  lua_setmetatable(L, idx);
}

void tg__json_mark_array(lua_State *L, int idx) { mark(L, idx, &array_mt_key); }
void tg__json_mark_object(lua_State *L, int idx) {
  mark(L, idx, &object_mt_key);
}

/* Is the metatable of the table at idx the marker under key? Compared by
 * identity: no lookups, so no metamethod, and nothing to intern. */
static int has_mt(lua_State *L, int idx, const char *key) {
  if (!lua_getmetatable(L, idx)) return 0;
  push_mt(L, key);
  int eq = lua_rawequal(L, -1, -2);
  lua_pop(L, 2);
  return eq;
}

/* ---- JSON -> Lua --------------------------------------------------------- */

static void push_number(lua_State *L, double d) {
#if TG_LUA54
  if (d == floor(d) && fabs(d) <= 9007199254740992.0 &&
      !(d == 0 && signbit(d))) { /* -0 stays a float */
    lua_pushinteger(L, (lua_Integer)d);
    return;
  }
#endif
  lua_pushnumber(L, d);
}

/* depth: the containers around j; amt: the stack slot of the array
 * metatable, looked up once per push (a registry lookup per array cost
 * more than building it). */
static int push_at(lua_State *L, const cJSON *j, int depth, int amt) {
  luaL_checkstack(L, 4, "JSON too deep");
  if (cJSON_IsObject(j) || cJSON_IsArray(j)) {
    if (depth + 1 > TG_JSON_MAX_DEPTH) return TG_JSON_TOO_DEEP;
    int arr = cJSON_IsArray(j);
    int n = cJSON_GetArraySize(j);
    lua_createtable(L, arr ? n : 0, arr ? 0 : n);
    int i = 1;
    for (const cJSON *c = j->child; c; c = c->next, i++) {
      if (!arr) lua_pushstring(L, c->string ? c->string : "");
      if (push_at(L, c, depth + 1, amt) < 0) {
        lua_pop(L, arr ? 1 : 2);
        return TG_JSON_TOO_DEEP;
      }
      if (arr) lua_rawseti(L, -2, i);
      else lua_rawset(L, -3);
    }
    if (arr) { /* empty arrays must stay arrays on the way back */
      lua_pushvalue(L, amt);
      lua_setmetatable(L, -2);
    }
    return 0;
  }
  if (cJSON_IsString(j)) lua_pushstring(L, j->valuestring);
  else if (cJSON_IsNumber(j)) push_number(L, j->valuedouble);
  else if (cJSON_IsBool(j)) lua_pushboolean(L, cJSON_IsTrue(j));
  else tg__json_push_null(L);
  return 0;
}

/* Pushes j with the array metatable below it for the walk, then drops
 * the metatable: leaves j's value on top. */
static int push_tree(lua_State *L, const cJSON *j) {
  push_mt(L, &array_mt_key);
  int rc = push_at(L, j, 0, lua_gettop(L));
  if (rc == 0) lua_remove(L, -2);
  else lua_pop(L, 1);
  return rc;
}

static int push_job(lua_State *L, job *jb) {
  jb->rc = push_tree(L, jb->j);
  return jb->rc < 0 ? 0 : 1;
}

int tg__json_push(lua_State *L, const cJSON *j) {
  if (!lua_checkstack(L, 3)) return TG_JSON_NO_MEMORY;
  if (!j) {
    tg__json_push_null(L);
    return 0;
  }
  /* A call cannot run on a suspended coroutine (a Lua tool being resumed
   * with a value). The runtime pushes there between calls into policy
   * code, where the memory cap refuses nothing. */
  if (lua_status(L) != LUA_OK) return push_tree(L, j);
  job jb = {push_job, j, NULL, 0, 0};
  int st = run_protected(L, &jb);
  if (st == LUA_OK && jb.rc == 0) return 0;
  lua_pop(L, 1); /* the error, or the nil of a push that gave up */
  return st == LUA_ERRMEM ? TG_JSON_NO_MEMORY : TG_JSON_TOO_DEEP;
}

static size_t max_memory(lua_State *L);

/* An upper bound on what parsing text takes: a cJSON node per value (a
 * value but the first follows a '[', '{', ',' or ':' outside strings)
 * and a copy of the text's strings. One pass, no allocation. */
static size_t parse_memory(const char *text, size_t len) {
  size_t marks = 1;
  int in_string = 0;
  for (size_t i = 0; i < len; i++) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') i++;
      else if (c == '"') in_string = 0;
    } else if (c == '"') {
      in_string = 1;
    } else if (c == '[' || c == '{' || c == ',' || c == ':') {
      marks++;
    }
  }
  return marks * sizeof(cJSON) + len;
}

int tg__json_decode_lua(lua_State *L, const char *text, size_t len) {
  char err[300];
  luaL_checkstack(L, 4, NULL); /* before anything is ours to free */
  /* the parse tree is malloc'd, outside the memory cap, and built in
   * one C call: a text of many small values ("[0,0,0,...]") would take
   * some 20 times its size and seconds */
  size_t max = max_memory(L);
  if (max && parse_memory(text, len) > max) {
    lua_pushnil(L);
    lua_pushfstring(L, "the text holds too many values: parsed, they would "
                    "take more than %d MiB of memory; decode less at a "
                    "time, or raise policy_memory_cap (the limit is %d "
                    "times it)", (int)(max >> 20), TG_JSON_MEMORY_FACTOR);
    return 2;
  }
  cJSON *j = tg_json_parse(text, len, NULL, err, sizeof err);
  if (!j) {
    lua_pushnil(L);
    lua_pushfstring(L, "invalid JSON: %s", err);
    return 2;
  }
  job jb = {push_job, j, NULL, 0, 0};
  int st = run_protected(L, &jb);
  cJSON_Delete(j);
  if (st != LUA_OK) return lua_error(L); /* out of memory, raised again */
  return 1; /* the parser bounds the depth: push_at cannot give up */
}

static int text_job(lua_State *L, job *jb) {
  lua_pushlstring(L, jb->text, jb->len);
  return 1;
}

int tg__json_encode_lua(lua_State *L, int idx) {
  char err[300];
  luaL_checkstack(L, 4, NULL);
  cJSON *j = tg__json_from_lua(L, idx, err, sizeof err);
  if (!j) return luaL_error(L, "tg.json_encode: %s", err);
  char *text = tg_json_print(j, 0);
  cJSON_Delete(j);
  if (!text) return luaL_error(L, "tg.json_encode: out of memory");
  job jb = {text_job, NULL, text, strlen(text), 0};
  int st = run_protected(L, &jb);
  free(text);
  if (st != LUA_OK) return lua_error(L);
  return 1;
}

/* ---- Lua -> JSON ------------------------------------------------------ */

static const char max_memory_key = 'm';

void tg__json_set_max_memory(lua_State *L, size_t max) {
  lua_pushlightuserdata(L, (void *)&max_memory_key);
  lua_pushnumber(L, (lua_Number)max);
  lua_rawset(L, LUA_REGISTRYINDEX);
}

/* The state's limit (0: none). Needs one free stack slot; raises
 * nothing. */
static size_t max_memory(lua_State *L) {
  lua_pushlightuserdata(L, (void *)&max_memory_key);
  lua_rawget(L, LUA_REGISTRYINDEX);
  size_t max = (size_t)lua_tonumber(L, -1);
  lua_pop(L, 1);
  return max;
}

typedef struct {
  char *err;
  size_t errlen;
  size_t bytes, max_bytes; /* about the JSON text's size; 0: no limit */
  size_t mem, max_mem;     /* what the cJSON tree takes; 0: no limit */
} conv;

static cJSON *conv_fail(conv *cv, const tg_json_seg *path, const char *fmt,
                        ...) __attribute__((format(printf, 3, 4)));
static cJSON *conv_fail(conv *cv, const tg_json_seg *path, const char *fmt,
                        ...) {
  va_list ap;
  va_start(ap, fmt);
  tg__json_path_verror(cv->err, cv->errlen, path, fmt, ap);
  va_end(ap);
  return NULL;
}

static cJSON *made(conv *cv, const tg_json_seg *path, cJSON *v) {
  return v ? v : conv_fail(cv, path, "out of memory");
}

/* Counts n bytes toward the size limit: 0 while under it, 1 after
 * reporting. */
static int over_budget(conv *cv, const tg_json_seg *path, size_t n) {
  cv->bytes += n;
  if (!cv->max_bytes || cv->bytes <= cv->max_bytes) return 0;
  conv_fail(cv, path, "over the size limit of %zu bytes", cv->max_bytes);
  return 1;
}

/* Counts n bytes of the cJSON tree toward the state's limit (set by
 * tg__json_set_max_memory): 0 while under it, 1 after reporting. A table
 * or a string referenced many times is converted once per reference, so
 * a value of a few KB in Lua can stand for terabytes of JSON ({t, t}
 * nested 40 deep): without the limit one conversion, a C loop no time
 * limit sees, would run for days and take the host's memory. */
static int over_memory(conv *cv, const tg_json_seg *path, size_t n) {
  cv->mem += n;
  if (!cv->max_mem || cv->mem <= cv->max_mem) return 0;
  conv_fail(cv, path, "the value's JSON would take more than %zu MiB of "
            "memory (a table or a string in it referenced many times?); "
            "send less, or raise policy_memory_cap (the limit is %d times "
            "it)", cv->max_mem >> 20, TG_JSON_MEMORY_FACTOR);
  return 1;
}

/* Text that JSON can carry: UTF-8 without NUL. what: "a string", "a key". */
static int bad_text(conv *cv, const tg_json_seg *path, const char *s,
                    size_t len, const char *what) {
  size_t bad = tg__utf8_invalid_at(s, len);
  if (bad == len) return 0;
  if (s[bad] == '\0')
    conv_fail(cv, path, "%s holds a NUL byte (offset %zu): toolgate cannot "
              "carry NUL characters", what, bad);
  else
    conv_fail(cv, path, "%s is not valid UTF-8 (byte 0x%02x at offset %zu); "
              "JSON text is UTF-8 (send bytes encoded, e.g. base64)", what,
              (unsigned char)s[bad], bad);
  return 1;
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
    if (k < 1 || k != floor(k) || k > 2147483647.0) {
      lua_pop(L, 1);
      return -1;
    }
    n++;
    if ((long long)k > max) max = (long long)k;
  }
  return max == n ? n : -1;
}

static cJSON *from_lua(lua_State *L, int idx, conv *cv,
                       const tg_json_seg *path, int depth);

static cJSON *array_from(lua_State *L, int idx, long long n, conv *cv,
                         const tg_json_seg *path, int depth) {
  cJSON *a = made(cv, path, cJSON_CreateArray());
  for (long long i = 1; a && i <= n; i++) {
    tg_json_seg s = {path, NULL, 0, (size_t)(i - 1)};
    lua_rawgeti(L, idx, (int)i);
    cJSON *v = from_lua(L, lua_gettop(L), cv, &s, depth);
    lua_pop(L, 1);
    if (!v) {
      cJSON_Delete(a);
      return NULL;
    }
    cJSON_AddItemToArray(a, v);
  }
  return a;
}

/* One member: the key at -2, the value at -1 (both stay). */
static int member_from(lua_State *L, cJSON *o, conv *cv,
                       const tg_json_seg *path, int depth) {
  if (lua_type(L, -2) != LUA_TSTRING) {
    conv_fail(cv, path, "an object key is not a string (mixed table? use "
              "tg.array{} for lists)");
    return -1;
  }
  size_t klen;
  const char *k = lua_tolstring(L, -2, &klen);
  tg_json_seg s = {path, k, klen, 0};
  if (bad_text(cv, &s, k, klen, "a key") || over_budget(cv, &s, klen + 4) ||
      over_memory(cv, &s, klen + 1))
    return -1;
  cJSON *v = from_lua(L, lua_gettop(L), cv, &s, depth);
  if (!v) return -1;
  if (!cJSON_AddItemToObject(o, k, v)) {
    cJSON_Delete(v);
    conv_fail(cv, &s, "out of memory");
    return -1;
  }
  return 0;
}

static cJSON *object_from(lua_State *L, int idx, conv *cv,
                          const tg_json_seg *path, int depth) {
  cJSON *o = made(cv, path, cJSON_CreateObject());
  if (!o) return NULL;
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    int rc = member_from(L, o, cv, path, depth);
    lua_pop(L, 1);
    if (rc < 0) {
      lua_pop(L, 1);
      cJSON_Delete(o);
      return NULL;
    }
  }
  return o;
}

/* depth: the containers around this one. */
static cJSON *table_from(lua_State *L, int idx, conv *cv,
                         const tg_json_seg *path, int depth) {
  if (depth + 1 > TG_JSON_MAX_DEPTH)
    return conv_fail(cv, path, "nested deeper than %d levels (a cycle?)",
                     TG_JSON_MAX_DEPTH);
  int arr = has_mt(L, idx, &array_mt_key);
  int obj = !arr && has_mt(L, idx, &object_mt_key);
  long long n = obj ? -1 : sequence_len(L, idx);
  if (arr && n < 0)
    return conv_fail(cv, path, "a table marked as array has non-sequence keys");
  if (n > 0 || (n == 0 && arr))
    return array_from(L, idx, n, cv, path, depth + 1);
  return object_from(L, idx, cv, path, depth + 1);
}

/* A Lua number as a JSON number: a 5.4 integer only when a double holds it
 * exactly (2^53 + 1 does not), never NaN or infinity. */
static cJSON *number_from(lua_State *L, int idx, conv *cv,
                          const tg_json_seg *path) {
  if (tg__isinteger(L, idx)) {
    long long i = (long long)lua_tointeger(L, idx);
    double d = (double)i;
    if (d >= 9223372036854775808.0 || (long long)d != i)
      return conv_fail(cv, path, "the integer %lld has no exact JSON number "
                       "(beyond 2^53); send it as a string", i);
    return made(cv, path, cJSON_CreateNumber(d));
  }
  lua_Number d = lua_tonumber(L, idx);
  if (!isfinite(d)) return conv_fail(cv, path, "NaN or infinity is not JSON");
  return made(cv, path, cJSON_CreateNumber((double)d));
}

static cJSON *from_lua(lua_State *L, int idx, conv *cv,
                       const tg_json_seg *path, int depth) {
  if (over_memory(cv, path, sizeof(cJSON))) return NULL;
  switch (lua_type(L, idx)) {
    case LUA_TNIL: return made(cv, path, cJSON_CreateNull());
    case LUA_TBOOLEAN:
      return made(cv, path, cJSON_CreateBool(lua_toboolean(L, idx)));
    case LUA_TNUMBER: return number_from(L, idx, cv, path);
    case LUA_TSTRING: {
      size_t len;
      const char *s = lua_tolstring(L, idx, &len);
      if (over_budget(cv, path, len + 3) || over_memory(cv, path, len + 1) ||
          bad_text(cv, path, s, len, "a string"))
        return NULL;
      return made(cv, path, cJSON_CreateString(s));
    }
    case LUA_TTABLE: return table_from(L, idx, cv, path, depth);
    case LUA_TLIGHTUSERDATA:
      if (tg__json_isnull(L, idx)) return made(cv, path, cJSON_CreateNull());
      /* fall through */
    default:
      return conv_fail(cv, path, "a %s is not JSON", luaL_typename(L, idx));
  }
}

cJSON *tg__json_from_lua_max(lua_State *L, int idx, size_t max_bytes,
                            char *err, size_t errlen) {
  char dummy[8];
  conv cv = {err ? err : dummy, err ? errlen : sizeof dummy, 0, max_bytes,
             0, 0};
  idx = lua_absindex(L, idx);
  if (!lua_checkstack(L, STACK_NEEDED))
    return conv_fail(&cv, NULL, "the Lua stack is exhausted");
  cv.max_mem = max_memory(L);
  return from_lua(L, idx, &cv, NULL, 0);
}

cJSON *tg__json_from_lua(lua_State *L, int idx, char *err, size_t errlen) {
  return tg__json_from_lua_max(L, idx, 0, err, errlen);
}

/* ---- Lua == JSON, without converting ---------------------------------- */

/* The array marker's identity, looked up once per comparison: the
 * registry keeps the metatable alive, so its address cannot be reused. */
typedef struct {
  const void *array_mt;
} eq_ctx;

static int equal_at(lua_State *L, const eq_ctx *q, int idx, const cJSON *j,
                    int depth);

static int is_array_marked(lua_State *L, const eq_ctx *q, int idx) {
  if (!lua_getmetatable(L, idx)) return 0;
  int yes = lua_topointer(L, -1) == q->array_mt;
  lua_pop(L, 1);
  return yes;
}

/* One walk over the table from its first key (a key can sit anywhere in
 * the hash part, also before the slots of the list's last element): every
 * key must be a position 1..len whose value equals that element, and
 * there must be len of them (keys are unique). */
static int array_equal(lua_State *L, const eq_ctx *q, int idx, const cJSON *j,
                       int depth) {
  int len = cJSON_GetArraySize(j);
  if (!is_array_marked(L, q, idx) || (int)lua_rawlen(L, idx) != len) return 0;
  const cJSON *small[16], **el = small;
  if (len > 16 && !(el = malloc((size_t)len * sizeof *el))) return 0;
  int i = 0, count = 0, eq = 1;
  for (const cJSON *c = j->child; c && i < len; c = c->next) el[i++] = c;
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    double k = lua_type(L, -2) == LUA_TNUMBER ? (double)lua_tonumber(L, -2) : 0;
    if (!(k >= 1 && k <= len && k == floor(k)) || ++count > len ||
        !equal_at(L, q, lua_gettop(L), el[(int)k - 1], depth)) {
      lua_pop(L, 2);
      eq = 0;
      break;
    }
    lua_pop(L, 1);
  }
  if (el != small) free(el);
  return eq && count == len;
}

/* The member of object j named k (klen bytes), looked for from *hint
 * (the member after the last one found), then from the start: small
 * objects only (big ones go through a sorted index). */
static const cJSON *member_named(const cJSON *j, const char *k, size_t klen,
                                 const cJSON **hint) {
  for (int pass = 0; pass < 2; pass++) {
    const cJSON *from = pass ? j->child : *hint;
    for (const cJSON *c = from; c; c = c->next) {
      if (pass && c == *hint) break; /* the first pass saw the rest */
      if (c->string && c->string[0] == k[0] && /* Lua ends k with a NUL */
          strlen(c->string) == klen && memcmp(c->string, k, klen) == 0) {
        *hint = c->next;
        return c;
      }
    }
  }
  return NULL;
}

/* One pass over the Lua table, looking each key up in the cJSON object:
 * cheaper than interning every cJSON key to look it up in Lua. A big
 * object is looked up through a sorted index of its members (malloc'd:
 * when that fails, "not equal", which callers take as a change). Keys
 * are unique on both sides, so equal counts and every Lua key found
 * equal make the two equal. */
static int object_equal(lua_State *L, const eq_ctx *q, int idx, const cJSON *j,
                        int depth) {
  if (is_array_marked(L, q, idx)) return 0;
  size_t keys = 0, n = 0;
  for (const cJSON *c = j->child; c; c = c->next) n++;
  const cJSON **sorted = NULL;
  if (n > TG_JSON_SORT_OVER) {
    size_t got;
    if (!(sorted = tg__json_members_sorted(j, &got))) return 0;
  }
  const cJSON *hint = j->child;
  int eq = 1;
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    size_t klen = 0;
    const char *k = lua_type(L, -2) == LUA_TSTRING ? lua_tolstring(L, -2, &klen)
                                                   : NULL;
    const cJSON *c = !k ? NULL
                     : sorted ? tg__json_members_find(sorted, n, k, klen)
                              : member_named(j, k, klen, &hint);
    if (!c || ++keys > n || !equal_at(L, q, lua_gettop(L), c, depth)) {
      lua_pop(L, 2);
      eq = 0;
      break;
    }
    lua_pop(L, 1);
  }
  free(sorted);
  return eq && keys == n;
}

/* Answers may be false negatives (then the caller converts and compares
 * the cJSON values), never false positives. */
static int equal_at(lua_State *L, const eq_ctx *q, int idx, const cJSON *j,
                    int depth) {
  switch (lua_type(L, idx)) {
    case LUA_TBOOLEAN:
      return cJSON_IsBool(j) && !lua_toboolean(L, idx) == !cJSON_IsTrue(j);
    case LUA_TNUMBER: {
      if (!cJSON_IsNumber(j)) return 0;
      double d = (double)lua_tonumber(L, idx);
      if (tg__isinteger(L, idx) &&
          (d >= 9223372036854775808.0 ||
           (long long)d != (long long)lua_tointeger(L, idx)))
        return 0; /* no double equals it: would not convert */
      return d == j->valuedouble && signbit(d) == signbit(j->valuedouble);
    }
    case LUA_TSTRING: {
      size_t len;
      const char *s = lua_tolstring(L, idx, &len);
      return cJSON_IsString(j) && strlen(j->valuestring) == len &&
             memcmp(s, j->valuestring, len) == 0;
    }
    case LUA_TTABLE:
      if (depth + 1 > TG_JSON_MAX_DEPTH) return 0;
      if (cJSON_IsArray(j)) return array_equal(L, q, idx, j, depth + 1);
      return cJSON_IsObject(j) && object_equal(L, q, idx, j, depth + 1);
    case LUA_TLIGHTUSERDATA: return tg__json_isnull(L, idx) && cJSON_IsNull(j);
    default: return 0; /* nil cannot be in a table; functions never equal */
  }
}

int tg__json_equal_lua(lua_State *L, int idx, const cJSON *j) {
  idx = lua_absindex(L, idx);
  if (!lua_checkstack(L, STACK_NEEDED)) return 0;
  push_mt(L, &array_mt_key);
  eq_ctx q = {lua_topointer(L, -1)};
  lua_pop(L, 1);
  return equal_at(L, &q, idx, j, 0);
}
