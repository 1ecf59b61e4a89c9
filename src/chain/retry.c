/*
 * retry.c — back-off: the delay before attempt n+1 is
 *   min(initial_ms * multiplier^(n-1), max_ms) * (1 + jitter * u),
 * u uniform in [-1, 1), so it stays within [d*(1-jitter), d*(1+jitter)].
 */
#include <math.h>
#include "call.h"

double tg__retry_delay_ms(uint64_t *rng, const tg_retry *r, int n) {
  double d = (double)r->initial_ms * pow(r->multiplier, n > 0 ? n - 1 : 0);
  if (d > (double)r->max_ms) d = (double)r->max_ms;
  if (r->jitter > 0) d *= 1.0 + r->jitter * (2.0 * tg__random(rng) - 1.0);
  return d < 0 ? 0 : d;
}
