/*
 * bench_schema.c — what validating a tool call's args costs: a typical MCP
 * tool schema (a GitHub-style create_issue, draft-07) against a typical
 * args object, with and without a `pattern`, in ns per validation.
 *
 * Usage: bench_schema [iterations]   (prints a Markdown table)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "base/schema.h"
#include "toolgate.h"

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

/* ns per validation, the fastest of 5 rounds. */
static double time_old(const cJSON *schema, const cJSON *args, long n) {
  double best = 1e300;
  char err[256];
  for (int round = 0; round < 5; round++) {
    double t0 = now_ns();
    for (long i = 0; i < n; i++)
      if (!tg__schema_validate(schema, args, err, sizeof err)) {
        fprintf(stderr, "bench_schema: invalid: %s\n", err);
        exit(1);
      }
    double t = (now_ns() - t0) / (double)n;
    if (t < best) best = t;
  }
  return best;
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 200000;
  cJSON *args = parse(ARGS);
  const struct { const char *name, *text; } cases[] = {
      {"create_issue, 8 properties", SCHEMA_PLAIN},
      {"create_issue + 2 patterns", SCHEMA_PATTERN},
  };
  printf("| schema | raw walk ns/validation |\n| --- | ---: |\n");
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    cJSON *s = parse(cases[i].text);
    printf("| %s | %.0f |\n", cases[i].name, time_old(s, args, n));
    cJSON_Delete(s);
  }
  cJSON_Delete(args);
  return 0;
}
