/*
 * tg_test.h — a tiny test harness in the style of libuv's: one TEST per
 * behaviour, ASSERT_* macros that print file:line and what differed, and a
 * main() that runs every test in its own child process with a timeout, so
 * one crash or hang fails that test only.
 */
#ifndef TG_TEST_H
#define TG_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <signal.h>
#include <sys/wait.h>

typedef void (*tg_test_fn)(void);
typedef struct { const char *name; tg_test_fn fn; } tg_test_entry;

#define TEST(name) static void test_##name(void)
#define TEST_ENTRY(name) { #name, test_##name }

#define TG_FAIL(...)                                                      \
  do {                                                                    \
    fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                       \
    fprintf(stderr, __VA_ARGS__);                                         \
    fprintf(stderr, "\n");                                                \
    exit(1);                                                              \
  } while (0)

#define ASSERT(c) do { if (!(c)) TG_FAIL("assertion failed: %s", #c); } while (0)
#define ASSERT_EQ(a, b)                                                   \
  do {                                                                    \
    long long a_ = (long long)(a), b_ = (long long)(b);                   \
    if (a_ != b_) TG_FAIL("%s == %s: %lld != %lld", #a, #b, a_, b_);      \
  } while (0)
#define ASSERT_STR_EQ(a, b)                                               \
  do {                                                                    \
    const char *a_ = (a), *b_ = (b);                                      \
    if (!a_ || !b_ || strcmp(a_, b_) != 0)                                \
      TG_FAIL("%s == %s: \"%s\" != \"%s\"", #a, #b, a_ ? a_ : "(null)",  \
              b_ ? b_ : "(null)");                                        \
  } while (0)
#define ASSERT_CONTAINS(hay, needle)                                      \
  do {                                                                    \
    const char *h_ = (hay), *n_ = (needle);                               \
    if (!h_ || !strstr(h_, n_))                                           \
      TG_FAIL("\"%s\" does not contain \"%s\"", h_ ? h_ : "(null)", n_);  \
  } while (0)

/* TG_TEST_SKIP="a,b" skips tests by name: the valgrind pass of CI skips
 * the load tests whose deadlines a 20x slower run cannot meet. */
static int tg_test_skipped(const char *name) {
  const char *skip = getenv("TG_TEST_SKIP");
  size_t len = strlen(name);
  for (const char *p = skip; p && *p;) {
    const char *end = strchr(p, ',');
    size_t n = end ? (size_t)(end - p) : strlen(p);
    if (n == len && strncmp(p, name, n) == 0) return 1;
    p = end ? end + 1 : NULL;
  }
  return 0;
}

/* Runtimes keep their database under XDG_STATE_HOME: each test gets a
 * fresh one of its own, removed after it, so no test writes into the real
 * home, nor sees what another test (or run) remembered there. */
static void tg_test_private_state(char dir[64]) {
  snprintf(dir, 64, "/tmp/tg-state-XXXXXX");
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    exit(2);
  }
}

static void tg_test_remove_state(const char *dir) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "cannot remove %s\n", dir);
}

static int tg_test_run_all(const tg_test_entry *tests, size_t n, int argc,
                           char **argv) {
  int failed = 0, passed = 0;
  for (size_t i = 0; i < n; i++) {
    if (argc > 1 && strcmp(argv[1], tests[i].name) != 0) continue;
    if (tg_test_skipped(tests[i].name)) {
      printf("skip   %s (TG_TEST_SKIP)\n", tests[i].name);
      continue;
    }
    fflush(stdout);
    char state[64];
    tg_test_private_state(state);
    pid_t pid = fork();
    if (pid == 0) {
      setenv("XDG_STATE_HOME", state, 1);
      alarm(60);
      tests[i].fn();
      exit(0);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    tg_test_remove_state(state);
    int ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
    if (ok) passed++; else failed++;
    printf("%s %s", ok ? "ok    " : "FAILED", tests[i].name);
    if (WIFSIGNALED(st)) printf(" (signal %d)", WTERMSIG(st));
    printf("\n");
  }
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}

#define TEST_MAIN(...)                                                    \
  int main(int argc, char **argv) {                                       \
    static const tg_test_entry tests_[] = {__VA_ARGS__};                  \
    return tg_test_run_all(tests_, sizeof tests_ / sizeof tests_[0], argc, \
                           argv);                                         \
  }

#endif
