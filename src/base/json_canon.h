/*
 * json_canon.h — one text for one JSON value, whatever the key order:
 * the key of an approve-always that covers "these exact args", whether the
 * chain remembers it in memory or the store keeps it in the database.
 */
#ifndef TG_JSON_CANON_H
#define TG_JSON_CANON_H

#include <cjson/cJSON.h>

/* Compact JSON text of v with every object's members sorted by key
 * (byte order); malloc'd, free() it. NULL when out of memory. */
char *tg__json_canonical(const cJSON *v);

#endif
