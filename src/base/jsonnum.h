/*
 * jsonnum.h — the one conversion from a JSON (or Lua) number to a C
 * integer.
 *
 * A JSON number is a double. Casting a double that is NaN, infinite or
 * out of the target's range to an integer type is undefined behaviour in
 * C, and a fraction is silently cut: `offset: 1e20` once became a random
 * line number, `timeout_ms: 1.5` one millisecond. Every number that an
 * agent, an upstream server or a policy gives and that becomes a C integer
 * goes through here instead, with its allowed range stated; anything else
 * is refused with a message naming the argument and the range.
 */
#ifndef TG_JSONNUM_H
#define TG_JSONNUM_H

#include <stddef.h>
#include <stdint.h>
#include <cjson/cJSON.h>

/* 2^53 - 1: the largest integer up to which every integer is a double, so
 * the range checks below are exact. Ranges must lie within +-this. */
#define TG_JSON_INT_MAX 9007199254740991

/* A numeric macro as text, for the "maximum" of a JSON Schema written as a
 * string literal: the schema and the C check then share one constant. */
#define TG_NUM_TEXT(x) TG_NUM_TEXT_(x)
#define TG_NUM_TEXT_(x) #x

/* d as an integer in [min, max]: 0 with *out set, or -1 (NaN, infinite,
 * a fraction, or out of range; *out untouched). */
int tg__int_of_double(double d, int64_t min, int64_t max, int64_t *out);

/* The JSON value v as an integer in [min, max]. Returns 0, or -1 with err
 * saying "WHAT must be an integer from MIN to MAX, got X" (v may be any
 * JSON value; NULL counts as "nothing"). */
int tg__json_int(const cJSON *v, const char *what, int64_t min, int64_t max,
                 int64_t *out, char *err, size_t errlen);

/* The optional member `key` of the object args: dflt when it is absent or
 * null, else as tg__json_int, naming it "TOOL: KEY" in the error. */
int tg__json_int_arg(const cJSON *args, const char *tool, const char *key,
                     int64_t min, int64_t max, int64_t dflt, int64_t *out,
                     char *err, size_t errlen);

#endif
