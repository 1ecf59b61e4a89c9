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

/* TG_JSON_MAX_DEPTH, tg_json_parse, tg_json_print and tg_json_number_text
 * are public: include/toolgate.h. */

/* Holds a tree built in C (a host's tg_call_request.args) to the rules of
 * tg_json_parse: 0, or -1 with "$.path: what" in err. Raw and invalid
 * nodes are refused too. (A NUL inside a C string cannot be seen here:
 * cJSON has already cut the string there.) */
int tg__json_check(const cJSON *v, char *err, size_t errlen);

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
