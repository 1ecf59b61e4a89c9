/*
 * luajson.h — converting between cJSON values and Lua values.
 *
 * JSON null is the light userdata `toolgate.null` (tg_json_push_null); a
 * table is a JSON array when it carries the array metatable (tg.array{}) or
 * when its keys are exactly 1..n with n > 0; otherwise an object with string
 * keys. An empty plain table is an empty object.
 */
#ifndef TG_LUAJSON_H
#define TG_LUAJSON_H

#include <stddef.h>
#include <cjson/cJSON.h>
#include "../base/luacompat.h"

#define TG_JSON_MAX_DEPTH 128

/* Creates the array/object metatables in L's registry. Call once per state
 * before the other functions. */
void tg_json_open(lua_State *L);

/* Pushes the Lua form of j (never NULL). Integral numbers within +-2^53
 * become Lua integers on 5.4. Returns 0, or -1 when nesting exceeds
 * TG_JSON_MAX_DEPTH (then nothing is pushed). Does not raise, except on
 * out-of-memory as any Lua API. */
int tg_json_push(lua_State *L, const cJSON *j);

/* Converts the Lua value at idx. Returns a new cJSON the caller frees, or
 * NULL with "$.path: what was wrong" in err (functions, userdata, NaN,
 * non-string keys in an object, cycles/too deep). Does not raise. */
cJSON *tg_json_from_lua(lua_State *L, int idx, char *err, size_t errlen);

/* Does the Lua value at idx convert to a JSON value equal to j? Answers
 * without allocating (the hot path: did a hook change the args?). A value
 * that would not convert is "not equal". Does not raise. */
int tg_json_equal_lua(lua_State *L, int idx, const cJSON *j);

/* The same, refusing values whose strings add up to more than about
 * max_bytes of JSON text ("$.x: over the size limit of N bytes"). */
cJSON *tg_json_from_lua_max(lua_State *L, int idx, size_t max_bytes,
                            char *err, size_t errlen);

void tg_json_push_null(lua_State *L);
int tg_json_isnull(lua_State *L, int idx);

/* Sets the array (or object) marker metatable on the table at idx. */
void tg_json_mark_array(lua_State *L, int idx);
void tg_json_mark_object(lua_State *L, int idx);

#endif
