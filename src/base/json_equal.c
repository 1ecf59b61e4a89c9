/*
 * json_equal.c — tg_json_equal: are two JSON values the same value?
 *
 * cJSON_Compare takes numbers within a relative epsilon as equal, so a
 * pre-hook that changed 0.1 into 0.1000000000000000055 (or 0 into -0)
 * went unseen: the rules judged one number and the agent ran another.
 * Here numbers are equal only when they are the same double, sign of zero
 * included; strings byte for byte; objects by their names whatever the
 * order; arrays in order.
 */
#include <math.h>
#include <string.h>
#include "json.h"

static int same_number(double a, double b) {
  return a == b && signbit(a) == signbit(b);
}

/* The member of o named k, or NULL (names are unique: the parser and
 * tg__json_check refuse a name twice). */
static const cJSON *member(const cJSON *o, const char *k) {
  for (const cJSON *c = o->child; c; c = c->next)
    if (c->string && strcmp(c->string, k) == 0) return c;
  return NULL;
}

static int equal_at(const cJSON *a, const cJSON *b, int depth);

static int objects_equal(const cJSON *a, const cJSON *b, int depth) {
  int na = 0, nb = 0;
  for (const cJSON *c = b->child; c; c = c->next) nb++;
  for (const cJSON *c = a->child; c; c = c->next, na++) {
    const cJSON *d = c->string ? member(b, c->string) : NULL;
    if (!d || !equal_at(c, d, depth)) return 0;
  }
  return na == nb;
}

static int arrays_equal(const cJSON *a, const cJSON *b, int depth) {
  const cJSON *c = a->child, *d = b->child;
  for (; c && d; c = c->next, d = d->next)
    if (!equal_at(c, d, depth)) return 0;
  return !c && !d;
}

static int equal_at(const cJSON *a, const cJSON *b, int depth) {
  if (depth > TG_JSON_MAX_DEPTH + 1) return 0; /* a tree built in C may loop */
  int ta = a->type & 0xFF, tb = b->type & 0xFF;
  if (ta != tb) return 0;
  switch (ta) {
    case cJSON_False: case cJSON_True: case cJSON_NULL: return 1;
    case cJSON_Number: return same_number(a->valuedouble, b->valuedouble);
    case cJSON_String: case cJSON_Raw:
      return a->valuestring && b->valuestring &&
             strcmp(a->valuestring, b->valuestring) == 0;
    case cJSON_Array: return arrays_equal(a, b, depth + 1);
    case cJSON_Object: return objects_equal(a, b, depth + 1);
    default: return 0;
  }
}

int tg_json_equal(const cJSON *a, const cJSON *b) {
  if (!a || !b) return a == b;
  return equal_at(a, b, 0);
}
