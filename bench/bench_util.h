/*
 * bench_util.h — what the benchmarks share: percentiles over samples (one
 * definition, so every table's p50/p99 means the same) and removing the
 * temporary folders they make.
 */
#ifndef TG_BENCH_UTIL_H
#define TG_BENCH_UTIL_H

#include <stdio.h>
#include <stdlib.h>

static inline int bench_cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Sorts v[0, n) and returns its p-quantile (0..1), nearest rank; 0 for
 * no samples. */
static inline double bench_pct(double *v, size_t n, double p) {
  if (!n) return 0;
  qsort(v, n, sizeof *v, bench_cmp_double);
  size_t i = (size_t)(p * (double)(n - 1) + 0.5);
  return v[i];
}

/* rm -rf dir, then frees the name. */
static inline void bench_remove_dir(char *dir) {
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "bench: cannot remove %s\n", dir);
  free(dir);
}

#endif
