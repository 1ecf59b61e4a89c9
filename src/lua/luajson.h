/*
 * luajson.h — converting between cJSON values and Lua values.
 *
 * JSON null is the light userdata `toolgate.null` (tg__json_push_null); a
 * table is a JSON array when it carries the array metatable (tg.array{}) or
 * when its keys are exactly 1..n with n > 0; otherwise an object with string
 * keys. An empty plain table is an empty object.
 *
 * The values come from policy code and hosts, and these functions are
 * called from C outside protected calls: they read tables raw (no
 * metamethod ever runs) and do not raise. Nesting is bounded by
 * TG_JSON_MAX_DEPTH (base/json.h) both ways.
 */
#ifndef TG_LUAJSON_H
#define TG_LUAJSON_H

#include <stddef.h>
#include <cjson/cJSON.h>
#include "base/json.h"
#include "luacompat.h"

/* tg__json_push's failures (nothing is pushed). */
#define TG_JSON_TOO_DEEP (-1)
#define TG_JSON_NO_MEMORY (-2)

/* Creates the array/object metatables in L's registry. Call once per state
 * before the other functions. */
void tg__json_open(lua_State *L);

/* Pushes the Lua form of j (NULL: null). Integral numbers within +-2^53
 * become Lua integers on 5.4 (-0 stays a float). Returns 0, or
 * TG_JSON_TOO_DEEP / TG_JSON_NO_MEMORY with nothing pushed: the value is
 * built inside a protected call, so running out of memory (the policy
 * memory cap) cannot unwind past the caller, who still owns j. (On a
 * suspended coroutine, where no call can run, it builds unprotected.) */
int tg__json_push(lua_State *L, const cJSON *j);

/* Converts the Lua value at idx. Returns a new cJSON the caller frees, or
 * NULL with "$.path: what was wrong" in err: functions, userdata, NaN and
 * infinities, integers no double equals (5.4), strings that are not UTF-8
 * or hold NUL, keys that are not strings, nesting deeper than
 * TG_JSON_MAX_DEPTH (cycles). Reads raw; does not raise (except that
 * LuaJIT raises out-of-memory when it cannot grow the stack, before
 * anything is built). */
cJSON *tg__json_from_lua(lua_State *L, int idx, char *err, size_t errlen);

/* The same, refusing values whose strings and keys add up to more than
 * about max_bytes of JSON text ("$.x: over the size limit of N bytes"). */
cJSON *tg__json_from_lua_max(lua_State *L, int idx, size_t max_bytes,
                            char *err, size_t errlen);

/* Caps what one conversion of a value of L (tg__json_from_lua and _max,
 * tg.json_encode) may allocate for its cJSON tree: past max bytes it
 * fails with "... would take more than N MiB of memory ...". Tables and
 * strings referenced many times are converted once per reference, so the
 * tree of a small Lua value can be unbounded. The sandbox sets it to
 * TG_JSON_MEMORY_FACTOR times the policy memory cap; without it (hosts'
 * states) there is no limit. */
#define TG_JSON_MEMORY_FACTOR 4
void tg__json_set_max_memory(lua_State *L, size_t max);

/* Does the Lua value at idx convert to a JSON value equal to j? Answers
 * without allocating (the hot path: did a hook change the args?). A value
 * that would not convert is "not equal". Reads raw; does not raise. */
int tg__json_equal_lua(lua_State *L, int idx, const cJSON *j);

/* tg.json_decode(text): parses with tg_json_parse and pushes the value
 * (returns 1), or pushes nil and "invalid JSON: $.path: what (byte N)"
 * (returns 2), or nil and "the text holds too many values ..." when its
 * parse tree could take more than the state's limit
 * (tg__json_set_max_memory). Called from Lua: it raises only a memory
 * error, after freeing the parsed tree. */
int tg__json_decode_lua(lua_State *L, const char *text, size_t len);

/* tg.json_encode(v) for the value at idx: pushes its JSON text
 * (tg_json_print). Called from Lua: raises "tg.json_encode: $.path:
 * what" for values that do not convert, and memory errors, after freeing
 * what it built. */
int tg__json_encode_lua(lua_State *L, int idx);

void tg__json_push_null(lua_State *L);
int tg__json_isnull(lua_State *L, int idx);

/* Sets the array (or object) marker metatable on the table at idx. */
void tg__json_mark_array(lua_State *L, int idx);
void tg__json_mark_object(lua_State *L, int idx);

#endif
