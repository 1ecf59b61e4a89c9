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
#include <stdlib.h>
#include <string.h>
#include "json.h"

/* ---- a sorted index of an object's members --------------------------- */

/* Names in byte order, a shorter one first when it is the other's start
 * (strcmp's order, for names without NUL; k may hold one). */
static int name_cmp(const char *k, size_t klen, const char *name) {
  size_t nlen = strlen(name);
  int r = memcmp(k, name, klen < nlen ? klen : nlen);
  if (r) return r;
  return klen < nlen ? -1 : klen > nlen;
}

static int member_order(const void *a, const void *b) {
  const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;
  return strcmp(x->string ? x->string : "", y->string ? y->string : "");
}

const cJSON **tg__json_members_sorted(const cJSON *o, size_t *n) {
  *n = 0;
  for (const cJSON *c = o->child; c; c = c->next) (*n)++;
  const cJSON **m = *n ? malloc(*n * sizeof *m) : NULL;
  if (!m) return NULL;
  size_t i = 0;
  for (const cJSON *c = o->child; c; c = c->next) m[i++] = c;
  qsort(m, *n, sizeof *m, member_order);
  return m;
}

const cJSON *tg__json_members_find(const cJSON *const *m, size_t n,
                                   const char *k, size_t klen) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int r = name_cmp(k, klen, m[mid]->string ? m[mid]->string : "");
    if (r == 0) return m[mid];
    if (r < 0) hi = mid;
    else lo = mid + 1;
  }
  return NULL;
}

/* ---- equality --------------------------------------------------------- */

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

/* Big objects through a sorted index of b's members (no search per
 * member); 0 when the index cannot be made (out of memory). */
static int big_objects_equal(const cJSON *a, const cJSON *b, size_t n,
                             int depth) {
  size_t nb;
  const cJSON **m = tg__json_members_sorted(b, &nb);
  int eq = m && nb == n;
  for (const cJSON *c = a->child; eq && c; c = c->next) {
    const cJSON *d = c->string ? tg__json_members_find(m, nb, c->string,
                                                       strlen(c->string))
                               : NULL;
    eq = d && equal_at(c, d, depth);
  }
  free(m);
  return eq;
}

static int objects_equal(const cJSON *a, const cJSON *b, int depth) {
  size_t na = 0, nb = 0;
  for (const cJSON *c = a->child; c; c = c->next) na++;
  for (const cJSON *c = b->child; c; c = c->next) nb++;
  if (na != nb) return 0;
  if (na > TG_JSON_SORT_OVER) return big_objects_equal(a, b, na, depth);
  for (const cJSON *c = a->child; c; c = c->next) {
    const cJSON *d = c->string ? member(b, c->string) : NULL;
    if (!d || !equal_at(c, d, depth)) return 0;
  }
  return 1;
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
