/*
 * schema.h — JSON Schema (draft 2020-12 and draft-07), compiled once and
 * validated many times. The public functions (tg_schema_compile,
 * tg_schema_validate, tg_schema_errors, tg_schema_free) are declared in
 * include/toolgate.h; this adds what toolgate itself and its tests need.
 * What is supported, and how `pattern` reads: docs/json-schema.md.
 */
#ifndef TG_SCHEMA_H
#define TG_SCHEMA_H

#include <stddef.h>
#include <cjson/cJSON.h>
#include "toolgate.h"

/* Hands over the schema document at an absolute URI (no fragment) that a
 * $ref names and the schema does not hold: a new tree the compiled schema
 * then owns, or NULL when there is none (the $ref is refused). */
typedef cJSON *(*tg__schema_fetch_fn)(void *ud, const char *uri);

typedef struct {
  tg__schema_fetch_fn fetch; /* NULL: every $ref outside the schema (but
                                the built-in meta-schema) is refused */
  void *fetch_ud;
  int draft7;                /* without $schema, read draft-07, not
                                2020-12 (the test suite's draft7/) */
} tg__schema_opts;

/* Compiles doc. copy 0: doc is borrowed and must outlive the result (a
 * tool keeps its schema JSON beside the compiled form); 1: copied. opts
 * may be NULL. NULL with "schema at $.path: what" in err. */
tg_schema *tg__schema_compile(const cJSON *doc, int copy,
                              const tg__schema_opts *opts, char *err,
                              size_t errlen);

#endif
