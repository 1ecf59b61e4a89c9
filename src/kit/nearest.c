/*
 * nearest.c — the nearest known name (nearest.h), with the policy
 * layer's measure, so that every "did you mean" agrees.
 */
#include <stddef.h>
#include "nearest.h"
#include "policy/generation.h"

const char *kit_nearest_name(const char *name, const char *const *names) {
  const char *best = NULL;
  size_t best_d = 3;
  for (int i = 0; names && names[i]; i++) {
    size_t d = tg__name_distance(name, names[i]);
    if (d < best_d) best_d = d, best = names[i];
  }
  return best;
}
