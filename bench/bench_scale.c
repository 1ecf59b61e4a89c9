/*
 * bench_scale.c — work that must grow with its input linearly (or n log n),
 * never quadratically: comparing two big JSON objects (tg_json_equal, as
 * the chain does to tell whether a hook changed the args) and uniqueItems
 * over a long array. For each, the time at n and at 10n, and their ratio:
 * about 10 is linear, about 100 quadratic. The tests check these give the
 * right answer; how fast they give it is measured here, where the clock
 * belongs.
 *
 * Usage: bench_scale   (prints a Markdown table)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cjson/cJSON.h>
#include "toolgate.h"
#include "base/json.h" /* tg_json_parse, tg_json_equal */

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void die(const char *what, const char *err) {
  fprintf(stderr, "bench_scale: %s: %s\n", what, err);
  exit(1);
}

/* {"k0":0,"k1":1,...} with n members, in order or shuffled. */
static cJSON *object(int n, int shuffle) {
  char *s = malloc((size_t)n * 24 + 16), *p = s, err[256];
  *p++ = '{';
  for (int i = 0; i < n; i++) {
    int k = shuffle ? (int)(((long long)i * 7919) % n) : i;
    p += sprintf(p, "%s\"k%d\":%d", i ? "," : "", k, k);
  }
  strcpy(p, "}");
  cJSON *j = tg_json_parse(s, strlen(s), NULL, err, sizeof err);
  if (!j) die("parse", err);
  free(s);
  return j;
}

/* ms to compare two equal objects of n members, in different orders. */
static double json_equal_ms(int n) {
  cJSON *a = object(n, 0), *b = object(n, 1);
  double t0 = now_ms();
  if (!tg_json_equal(a, b)) die("json_equal", "not equal");
  double t = now_ms() - t0;
  cJSON_Delete(a);
  cJSON_Delete(b);
  return t;
}

/* ms to find the repeat at the end of n distinct numbers. */
static double unique_items_ms(int n) {
  cJSON *a = cJSON_CreateArray(), *s = cJSON_Parse("{\"uniqueItems\":true}");
  for (int i = 0; i < n; i++) cJSON_AddItemToArray(a, cJSON_CreateNumber(i));
  cJSON_AddItemToArray(a, cJSON_CreateNumber(0));
  char err[TG_ERRMSG];
  tg_schema *c = tg_schema_compile(s, err);
  if (!c) die("compile", err);
  double t0 = now_ms();
  if (tg_schema_validate(c, a, err, sizeof err) != -EINVAL)
    die("uniqueItems", "the repeat was not found");
  double t = now_ms() - t0;
  tg_schema_free(c);
  cJSON_Delete(s);
  cJSON_Delete(a);
  return t;
}

int main(void) {
  const struct {
    const char *name;
    double (*ms)(int);
    int n;
  } cases[] = {
      {"tg_json_equal, object members", json_equal_ms, 20000},
      {"uniqueItems, array items", unique_items_ms, 5000},
  };
  printf("| work | n | ms at n | ms at 10n | ratio (10: linear, 100: "
         "quadratic) |\n| --- | ---: | ---: | ---: | ---: |\n");
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    double a = cases[i].ms(cases[i].n), b = cases[i].ms(cases[i].n * 10);
    printf("| %s | %d | %.1f | %.1f | %.0f |\n", cases[i].name, cases[i].n, a,
           b, a > 0 ? b / a : 0);
  }
  return 0;
}
