/*
 * json_canon.c — canonical JSON text (json_canon.h): a sorted copy
 * printed by the one printer (tg_json_print), so numbers and strings are
 * written the same way everywhere.
 */
#include <stdlib.h>
#include <string.h>
#include "json_canon.h"
#include "toolgate.h"

static int key_cmp(const void *a, const void *b) {
  const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;
  return strcmp(x->string ? x->string : "", y->string ? y->string : "");
}

/* Sorts every object's members by key, in place. -1 when out of memory. */
static int sort_keys(cJSON *j) {
  size_t n = 0;
  for (cJSON *c = j->child; c; c = c->next) {
    if (sort_keys(c) < 0) return -1;
    n++;
  }
  if (!cJSON_IsObject(j) || n < 2) return 0;
  cJSON **v = malloc(n * sizeof *v);
  if (!v) return -1;
  n = 0;
  for (cJSON *c = j->child; c; c = c->next) v[n++] = c;
  qsort(v, n, sizeof *v, key_cmp);
  for (size_t i = 0; i < n; i++) { /* relink; cJSON's head->prev is the tail */
    v[i]->next = i + 1 < n ? v[i + 1] : NULL;
    v[i]->prev = i > 0 ? v[i - 1] : v[n - 1];
  }
  j->child = v[0];
  free(v);
  return 0;
}

char *tg__json_canonical(const cJSON *v) {
  cJSON *copy = cJSON_Duplicate(v, 1);
  if (!copy) return NULL;
  /* out of memory part way, the text would not be canonical: none */
  char *s = sort_keys(copy) == 0 ? tg_json_print(copy, 0) : NULL;
  cJSON_Delete(copy);
  return s;
}
