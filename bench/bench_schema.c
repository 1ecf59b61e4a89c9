/*
 * bench_schema.c — what validating a tool call's args costs: a typical MCP
 * tool schema (a GitHub-style create_issue, draft-07) against a typical
 * args object, with and without a `pattern`, in ns per validation, with
 * the schema compiled once (as the chain does since tools keep their
 * compiled schema); and what that compile costs, once per registration.
 *
 * Usage: bench_schema [iterations]   (prints a Markdown table)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <uv.h>
#include <cjson/cJSON.h>
#include "toolgate.h"
#include "kit/kit.h"

static const char SCHEMA_PLAIN[] =
    "{\"$schema\":\"http://json-schema.org/draft-07/schema#\","
    "\"type\":\"object\",\"properties\":{"
    "\"owner\":{\"type\":\"string\",\"description\":\"Repository owner\"},"
    "\"repo\":{\"type\":\"string\",\"description\":\"Repository name\"},"
    "\"title\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":256},"
    "\"body\":{\"type\":\"string\"},"
    "\"assignees\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
    "\"labels\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
    "\"milestone\":{\"type\":[\"number\",\"null\"]},"
    "\"state\":{\"type\":\"string\",\"enum\":[\"open\",\"closed\"]}},"
    "\"required\":[\"owner\",\"repo\",\"title\"],"
    "\"additionalProperties\":false}";

/* The same with the owner and repo constrained by patterns. */
static const char SCHEMA_PATTERN[] =
    "{\"$schema\":\"http://json-schema.org/draft-07/schema#\","
    "\"type\":\"object\",\"properties\":{"
    "\"owner\":{\"type\":\"string\",\"pattern\":\"^[A-Za-z0-9-]+$\"},"
    "\"repo\":{\"type\":\"string\",\"pattern\":\"^[A-Za-z0-9._-]+$\"},"
    "\"title\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":256},"
    "\"body\":{\"type\":\"string\"},"
    "\"assignees\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
    "\"labels\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
    "\"milestone\":{\"type\":[\"number\",\"null\"]},"
    "\"state\":{\"type\":\"string\",\"enum\":[\"open\",\"closed\"]}},"
    "\"required\":[\"owner\",\"repo\",\"title\"],"
    "\"additionalProperties\":false}";

static const char ARGS[] =
    "{\"owner\":\"octocat\",\"repo\":\"hello-world\",\"title\":\"Found a "
    "bug\",\"body\":\"It crashes when the input is empty.\",\"assignees\":"
    "[\"alice\",\"bob\"],\"labels\":[\"bug\",\"p1\"],\"milestone\":3,"
    "\"state\":\"open\"}";

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static cJSON *parse(const char *text) {
  char err[256];
  cJSON *j = tg_json_parse(text, strlen(text), NULL, err, sizeof err);
  if (!j) {
    fprintf(stderr, "bench_schema: %s\n", err);
    exit(1);
  }
  return j;
}

/* The same args with a wrong type deep inside: the failing path. */
static const char BAD_ARGS[] =
    "{\"owner\":\"octocat\",\"repo\":\"hello-world\",\"title\":\"Found a "
    "bug\",\"body\":\"It crashes when the input is empty.\",\"assignees\":"
    "[\"alice\",7],\"labels\":[\"bug\",\"p1\"],\"milestone\":3,"
    "\"state\":\"open\"}";

/* ns per validation, the fastest of 5 rounds. */
static double time_validate(const tg_schema *s, const cJSON *args, long n,
                            int want) {
  double best = 1e300;
  char err[256];
  for (int round = 0; round < 5; round++) {
    double t0 = now_ns();
    for (long i = 0; i < n; i++)
      if (tg_schema_validate(s, args, err, sizeof err) != want) {
        fprintf(stderr, "bench_schema: unexpected: %s\n", err);
        exit(1);
      }
    double t = (now_ns() - t0) / (double)n;
    if (t < best) best = t;
  }
  return best;
}

/* ns per compile, the fastest of 5 rounds of n / 100. */
static double time_compile(const cJSON *schema, long n) {
  double best = 1e300;
  char err[TG_ERRMSG];
  n = n / 100 > 0 ? n / 100 : 1;
  for (int round = 0; round < 5; round++) {
    double t0 = now_ns();
    for (long i = 0; i < n; i++) tg_schema_free(tg_schema_compile(schema, err));
    double t = (now_ns() - t0) / (double)n;
    if (t < best) best = t;
  }
  return best;
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 200000;
  cJSON *args = parse(ARGS), *bad = parse(BAD_ARGS);
  const struct { const char *name, *text; } cases[] = {
      {"create_issue, 8 properties", SCHEMA_PLAIN},
      {"create_issue + 2 patterns", SCHEMA_PATTERN},
  };
  printf("| schema | compile (once) ns | valid args ns/validation | "
         "invalid args ns/validation |\n| --- | ---: | ---: | ---: |\n");
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    cJSON *s = parse(cases[i].text);
    char err[TG_ERRMSG];
    tg_schema *c = tg_schema_compile(s, err);
    if (!c) {
      fprintf(stderr, "bench_schema: %s\n", err);
      return 1;
    }
    printf("| %s | %.0f | %.0f | %.0f |\n", cases[i].name,
           time_compile(s, n), time_validate(c, args, n, 0),
           time_validate(c, bad, n, -EINVAL));
    tg_schema_free(c);
    cJSON_Delete(s);
  }
  cJSON_Delete(args);
  cJSON_Delete(bad);
  return 0;
}
