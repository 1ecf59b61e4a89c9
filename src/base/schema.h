/*
 * validate.h — JSON Schema validation of tool arguments (the subset SPEC §1
 * names: type, properties, required, enum, const, minimum/maximum,
 * exclusiveMinimum/exclusiveMaximum, minLength/maxLength, pattern, items,
 * minItems/maxItems, additionalProperties, anyOf/oneOf/allOf).
 */
#ifndef TG_VALIDATE_H
#define TG_VALIDATE_H

#include <stddef.h>
#include <cjson/cJSON.h>

/* schema must have passed tg__schema_check (tools are checked when they are
 * registered). Returns 1 when instance satisfies schema; otherwise 0 with
 * "$.path.to[2].field: what failed" in err (the first failure found). */
int tg__schema_validate(const cJSON *schema, const cJSON *instance, char *err,
                       size_t errlen);

/* Checks that a schema is usable (keywords of the right JSON types,
 * patterns that compile). 0 when fine; -1 with "schema at $.path: ..." */
int tg__schema_check(const cJSON *schema, char *err, size_t errlen);

#endif
