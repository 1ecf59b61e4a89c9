/*
 * test_schema_suite.c — the official JSON-Schema-Test-Suite against the
 * validator: every file of tests/draft7/ (Debian's json-schema-test-suite
 * package, or $TG_SCHEMA_SUITE), read as draft-07, and our own draft
 * 2020-12 cases in spec/schema/2020-12/ in the same format. Prints the
 * count per file and the totals; fails on any failure of a required case.
 * The suite's remote references (http://localhost:1234/...) are served
 * from its remotes/ folder; then refRemote.json runs once more without
 * them, where every case must be refused when its schema compiles (as
 * toolgate itself refuses remote $refs), and the refusals are listed. The
 * optional/ files (format, bignum, ECMA-262 regex corners) are run and
 * counted, but do not fail the test.
 *
 * Usage: test_schema_suite [-v]   (-v: every failing case, also optional)
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>
#include "base/schema.h"
#include "internal.h"

#define REMOTE "http://localhost:1234/"

typedef struct {
  int passed, failed, refused;
} tally;

typedef struct {
  const char *remotes; /* the suite's remotes/ folder; NULL: none served */
  int verbose;
} suite;

static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *buf = NULL;
  size_t cap = 0, n = 0, got;
  do {
    if (n + 4096 > cap) {
      char *g = realloc(buf, cap = (n + 4096) * 2);
      if (!g) break;
      buf = g;
    }
    got = fread(buf + n, 1, cap - n, f);
    n += got;
  } while (got);
  fclose(f);
  *len = n;
  return buf;
}

static cJSON *read_json(const char *path) {
  size_t len;
  char *text = slurp(path, &len), err[256];
  if (!text) return NULL;
  cJSON *j = tg_json_parse(text, len, NULL, err, sizeof err);
  if (!j) fprintf(stderr, "%s: %s\n", path, err);
  free(text);
  return j;
}

/* http://localhost:1234/x.json -> remotes/x.json, as the suite asks. */
static cJSON *fetch(void *ud, const char *uri) {
  const suite *s = ud;
  if (!s->remotes || strncmp(uri, REMOTE, strlen(REMOTE)) ||
      strstr(uri, ".."))
    return NULL;
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", s->remotes, uri + strlen(REMOTE));
  return read_json(path);
}

static void run_case(const suite *s, const tg_schema *c, const cJSON *t,
                     const char *group, tally *n, int required) {
  const cJSON *data = cJSON_GetObjectItemCaseSensitive(t, "data");
  const cJSON *want = cJSON_GetObjectItemCaseSensitive(t, "valid");
  const char *what = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(t, "description"));
  char err[512] = "";
  int valid = tg_schema_validate(c, data, err, sizeof err) == 0;
  if (valid == cJSON_IsTrue(want)) {
    n->passed++;
    return;
  }
  n->failed++;
  if (required || s->verbose)
    printf("    FAIL %s / %s: expected %s%s%s\n", group, what,
           cJSON_IsTrue(want) ? "valid, got: " : "invalid, got valid",
           valid ? "" : err, "");
}

static void run_group(const suite *s, const cJSON *g, int draft7, tally *n,
                      int required) {
  const char *group = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(g, "description"));
  const cJSON *tests = cJSON_GetObjectItemCaseSensitive(g, "tests");
  tg__schema_opts o = {fetch, (void *)s, draft7};
  char err[TG_ERRMSG];
  tg_schema *c = tg__schema_compile(cJSON_GetObjectItemCaseSensitive(g, "schema"), 1, &o,
                                    err, sizeof err);
  if (!c) {
    n->refused += cJSON_GetArraySize(tests);
    if (required || s->verbose)
      printf("    REFUSED %s: %s\n", group, err);
    return;
  }
  for (const cJSON *t = tests ? tests->child : NULL; t; t = t->next)
    run_case(s, c, t, group, n, required);
  tg_schema_free(c);
}

static void run_file(const suite *s, const char *dir, const char *name,
                     int draft7, tally *total, int required) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  cJSON *groups = read_json(path);
  tally n = {0, 0, 0};
  if (!groups) n.refused = 1;
  for (const cJSON *g = groups ? groups->child : NULL; g; g = g->next)
    run_group(s, g, draft7, &n, required);
  printf("  %-28s %3d passed, %d failed, %d refused%s\n", name, n.passed,
         n.failed, n.refused,
         required ? "" : s->remotes ? " (optional)" : " (all must be refused)");
  total->passed += n.passed;
  total->failed += n.failed;
  total->refused += n.refused;
  cJSON_Delete(groups);
}

static int by_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every *.json of dir, in name order. Returns the tally. */
static tally run_dir(const suite *s, const char *dir, int draft7,
                     int required) {
  tally t = {0, 0, 0};
  DIR *d = opendir(dir);
  if (!d) {
    printf("%s: cannot open\n", dir);
    t.refused = 1;
    return t;
  }
  char *names[256];
  size_t n = 0;
  for (struct dirent *e; (e = readdir(d)) && n < 256;) {
    size_t len = strlen(e->d_name);
    if (len > 5 && !strcmp(e->d_name + len - 5, ".json"))
      names[n++] = strdup(e->d_name);
  }
  closedir(d);
  qsort(names, n, sizeof *names, by_name);
  printf("%s\n", dir);
  for (size_t i = 0; i < n; i++) {
    run_file(s, dir, names[i], draft7, &t, required);
    free(names[i]);
  }
  printf("  %-28s %3d passed, %d failed, %d refused\n", "total", t.passed,
         t.failed, t.refused);
  return t;
}

int main(int argc, char **argv) {
  const char *root = getenv("TG_SCHEMA_SUITE");
  if (!root) root = "/usr/share/json-schema-test-suite";
  char remotes[1024], draft7[1024], optional[1024], ours[1024];
  snprintf(remotes, sizeof remotes, "%s/remotes", root);
  snprintf(draft7, sizeof draft7, "%s/tests/draft7", root);
  snprintf(optional, sizeof optional, "%s/tests/draft7/optional", root);
  snprintf(ours, sizeof ours, "%s/spec/schema/2020-12", TG_SOURCE_DIR);
  suite s = {remotes, argc > 1 && !strcmp(argv[1], "-v")};
  DIR *d = opendir(draft7);
  if (d) closedir(d);
  if (!d) {
    fprintf(stderr, "test_schema_suite: no %s: install the Debian package "
                    "json-schema-test-suite (.ci/deps does) or set "
                    "TG_SCHEMA_SUITE\n", draft7);
    return 1;
  }
  tally a = run_dir(&s, draft7, 1, 1);
  run_dir(&s, optional, 1, 0);
  tally b = run_dir(&s, ours, 0, 1);
  /* without the remotes: every case of refRemote.json refused, and said */
  suite none = {NULL, 1};
  tally r = {0, 0, 0};
  printf("%s without remotes/ (refused: remote $ref)\n", draft7);
  run_file(&none, draft7, "refRemote.json", 1, &r, 0);
  int bad = a.failed + a.refused + b.failed + b.refused + r.passed + r.failed;
  printf("required: %d passed, %d failed, %d refused\n", a.passed + b.passed,
         a.failed + b.failed, a.refused + b.refused);
  return bad ? 1 : 0;
}
