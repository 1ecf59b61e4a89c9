/*
 * json.h — the one way JSON text enters toolgate, and the one way it
 * leaves.
 *
 * Every byte of JSON text is hostile (an agent's args, a host's strings,
 * replies on the control socket), and every part of toolgate must see the
 * same value in it: a rule that judges `command` and the tool that runs it
 * must read the same member. So text is parsed strictly (RFC 8259) by
 * tg_json_parse, which refuses what readers could disagree about —
 * duplicate names in an object, numbers that are not finite doubles,
 * strings that are not UTF-8 or carry NUL (cJSON keeps strings as C
 * strings) — and trees built by C hosts are held to the same rules by
 * tg__json_check. tg_json_print writes numbers that read back exactly
 * and strings that are always valid UTF-8.
 *
 * A pure library: cJSON and libc only.
 */
#ifndef TG_JSON_H
#define TG_JSON_H

#include <stdarg.h>
#include <stddef.h>
#include <cjson/cJSON.h>
#include "toolgate.h"

/* ---- JSON text ---------------------------------------------------------
 * The one way JSON text enters toolgate and the one way it leaves; the
 * fronts that read an agent's JSON themselves use the same rules (through
 * src/kit/kit.h), so what they see is what the rules judge. */

/* How deep JSON values may nest (containers, the outermost counted as
 * 1): args, results, metadata, and what policies are given. */
#define TG_JSON_MAX_DEPTH 128

/* Parses exactly one JSON value from text[0, len) (NUL bytes inside count
 * as text, and are refused like any control character). Returns the tree
 * (cJSON_Delete it), or NULL with "$.a[2].command: what was wrong (byte
 * N)" in err; *at (may be NULL) receives that byte offset. Refused besides
 * syntax errors: duplicate names in an object, numbers beyond the range of
 * a double (1e400), invalid UTF-8 and lone surrogates (\ud800), \u0000,
 * raw control characters in strings, nesting deeper than
 * TG_JSON_MAX_DEPTH, and anything after the value. */
struct cJSON *tg_json_parse(const char *text, size_t len, size_t *at, char *err,
              size_t errlen);

/* JSON text for v, compact (pretty 0) or indented by two spaces with
 * `"key": value` (pretty 1); free() it. Numbers are written with the
 * fewest digits that read back as the same double ("0.1",
 * "9007199254740991", "-0"), whatever the locale; NaN and infinities as
 * null. Bytes of a string that are not UTF-8 come out as U+FFFD, so the
 * text is always valid UTF-8. NULL when out of memory. */
char *tg_json_print(const struct cJSON *v, int pretty);
/* The compact text of tg_json_print, appended to *buf (of *len bytes
 * used, *cap allocated; NUL-terminated after), which it grows with
 * realloc: a writer that gathers many messages prints each straight into
 * its buffer. 0, or -1 when out of memory (*len unchanged). */
int tg_json_print_append(const struct cJSON *v, char **buf, size_t *len,
                         size_t *cap);
/* Compact JSON text for v with every object's members in key order: the
 * same value, written in any key order, gives the same text (what a
 * digest of args, or an approve-always for "these exact args", is taken
 * over). free() it; NULL when out of memory. */
char *tg_json_print_sorted(const struct cJSON *v);
/* The SHA-256 of tg_json_print_sorted(v) ("null" for NULL): whether a
 * value is the same as one seen before, whatever its key order (a list
 * that came through Lua tables, args). 0, or -1 when out of memory. */
int tg_json_digest(const struct cJSON *v, unsigned char out[32]);

/* Are a and b the same JSON value? Numbers only when they are the same
 * double (0 and -0 differ), strings byte for byte, objects whatever the
 * order of their members, arrays in order. cJSON_Compare is not this: it
 * takes numbers within a relative epsilon as equal. Both NULL: 1. */
int tg_json_equal(const struct cJSON *a, const struct cJSON *b);

/* The number as tg_json_print writes it, into buf (at least
 * TG_JSON_NUMBER_MAX bytes). Returns buf. */
#define TG_JSON_NUMBER_MAX 32
char *tg_json_number_text(double d, char *buf);

/* Holds a tree built in C (a host's tg_call_request.args) to the rules of
 * tg_json_parse: 0, or -1 with "$.path: what" in err. Raw and invalid
 * nodes are refused too. (A NUL inside a C string cannot be seen here:
 * cJSON has already cut the string there.) */
int tg__json_check(const cJSON *v, char *err, size_t errlen);

/* 1 when a tree built in C nests containers deeper than
 * TG_JSON_MAX_DEPTH (v itself is level 1): the parser's own limit, so no
 * stage ever works on a tree the parser would have refused. */
int tg__json_too_deep(const cJSON *v);

/* The length of the valid UTF-8 sequence at s (n > 0 bytes left), or 0
 * when it is not one: a stray continuation byte, an overlong form, a
 * surrogate, past U+10FFFF, cut short, or NUL (a C string cannot carry
 * it). */
size_t tg__utf8_seq(const unsigned char *s, size_t n);

/* The offset of the first byte of s[0, n) that does not start a valid
 * sequence (tg__utf8_seq), or n when all of it is valid UTF-8. */
size_t tg__utf8_invalid_at(const char *s, size_t n);

/* s[0, n) as a JSON string literal in buf, cut (ending ...") when it does
 * not fit: for names in messages. Returns buf. */
char *tg__json_quote(const char *s, size_t n, char *buf, size_t size);

/* Cuts off the end of s a UTF-8 sequence that a truncating snprintf left
 * incomplete, so a message never ends in half a character. */
void tg__utf8_trim(char *s);

/* Objects with more members than this are compared through a sorted index
 * (tg__json_members_sorted), not by a search per member: hostile args
 * with a million keys must not cost a million squared steps. */
#define TG_JSON_SORT_OVER 32

/* The members of object o sorted by name (malloc'd; free() it), their
 * number in *n; NULL when out of memory (or o has none: *n is then 0). */
const cJSON **tg__json_members_sorted(const cJSON *o, size_t *n);

/* The member of the sorted index m[0, n) named k (klen bytes, which may
 * hold a NUL: then no member has that name), or NULL. */
const cJSON *tg__json_members_find(const cJSON *const *m, size_t n,
                                   const char *k, size_t klen);

/* A JSON path as a chain of steps on the C stack, each pointing at its
 * parent, formatted only when an error is reported. key NULL: an array
 * index. The root "$" is the NULL chain. */
typedef struct tg_json_seg {
  const struct tg_json_seg *up;
  const char *key;
  size_t keylen;
  size_t index;
} tg_json_seg;

/* Writes the path ("$", "$.a[2]", "$[\"not an ident\"]") into buf, cut at
 * a character boundary when it does not fit. Returns buf. */
char *tg__json_path_text(const tg_json_seg *s, char *buf, size_t size);

/* "<path>: <what>" into err (what from fmt), cut at a character
 * boundary: the one shape of every error about a place in a JSON value. */
void tg__json_path_error(char *err, size_t errlen, const tg_json_seg *path,
                        const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void tg__json_path_verror(char *err, size_t errlen, const tg_json_seg *path,
                         const char *fmt, va_list ap)
    __attribute__((format(printf, 4, 0)));

#endif
