/*
 * helpers.h — what every C spec (spec/c/test_*.c) shares. Include it
 * first. In order:
 *
 *   1. the harness: TEST, TEST_MAIN, and typed asserts that print
 *      file:line and both values (ASSERT_INT_EQ, ASSERT_NUM_EQ,
 *      ASSERT_STR_EQ, ASSERT_OK, ASSERT_STATUS, ...);
 *   2. temp directories and files;
 *   3. runtimes: plain, with a policies folder, confined to a workspace;
 *   4. loop runners: run_until (the loop must get there), wait_until (for
 *      what the loop does not hold: a watch, a child process), run_for;
 *   5. outcomes: captured from the done callback, started or run to the end;
 *   6. events: an event log recorded from a subscription;
 *   7. small C tools (echo, a slow tool) and an approver;
 *   8. reading JSON results (str_at, num_at, bool_at).
 *
 * Every test runs in its own child process, so the globals here start
 * fresh in each test and a failed assert just ends that process.
 */
#ifndef TG_SPEC_HELPERS_H
#define TG_SPEC_HELPERS_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* nftw and its flags (remove_tree) */
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <uv.h>
#include <cjson/cJSON.h>
#include "toolgate.h"

/* ==== 1. the harness ===================================================== */

typedef void (*tg_test_fn)(void);
typedef struct {
  const char *name;
  tg_test_fn fn;
} tg_test_entry;

#define TEST(name) static void test_##name(void)
#define TEST_ENTRY(name) { #name, test_##name }

/* Ends the test: prints file:line and the message. */
#define TG_FAIL(...) tg_fail_(__FILE__, __LINE__, __VA_ARGS__)

static inline _Noreturn void tg_fail_(const char *file, int line,
                                      const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static inline _Noreturn void tg_fail_(const char *file, int line,
                                      const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "%s:%d: ", file, line);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, "\n");
  exit(1);
}

/* A string for a failure message, printed with TG_Q_FMT_: "s" in quotes,
 * or NULL without. */
#define TG_Q_FMT_ "%s%s%s"
#define TG_Q_(s) (s) ? "\"" : "", (s) ? (s) : "NULL", (s) ? "\"" : ""

/* ---- truth and pointers ---- */

#define ASSERT_TRUE(c)                                                      \
  do {                                                                      \
    if (!(c)) TG_FAIL("ASSERT_TRUE(%s): false", #c);                        \
  } while (0)
#define ASSERT_FALSE(c)                                                     \
  do {                                                                      \
    if (c) TG_FAIL("ASSERT_FALSE(%s): true", #c);                           \
  } while (0)
#define ASSERT_NULL(p)                                                      \
  do {                                                                      \
    const void *p_ = (p);                                                   \
    if (p_) TG_FAIL("ASSERT_NULL(%s): %p", #p, p_);                         \
  } while (0)
#define ASSERT_NOT_NULL(p)                                                  \
  do {                                                                      \
    if ((p) == NULL) TG_FAIL("ASSERT_NOT_NULL(%s): NULL", #p);              \
  } while (0)

/* ---- numbers ----
 * ASSERT_INT_EQ takes integers (enums, sizes, counts, chars) and refuses a
 * float or double at compile time: a double cast to an integer would let
 * 1.9 pass for 1. Doubles go to ASSERT_NUM_EQ (exact) or ASSERT_NUM_NEAR. */

#define TG_IS_FLOATING_(x) \
  _Generic((x), float: 1, double: 1, long double: 1, default: 0)

#define ASSERT_INT_EQ(a, b)                                                 \
  do {                                                                      \
    _Static_assert(!TG_IS_FLOATING_(a) && !TG_IS_FLOATING_(b),              \
                   "ASSERT_INT_EQ on a floating value: use ASSERT_NUM_EQ"); \
    tg_assert_int_eq_(__FILE__, __LINE__, #a, #b, (long long)(a),           \
                      (long long)(b));                                      \
  } while (0)

static inline void tg_assert_int_eq_(const char *file, int line,
                                     const char *ea, const char *eb,
                                     long long a, long long b) {
  if (a != b)
    tg_fail_(file, line, "ASSERT_INT_EQ(%s, %s): %lld != %lld", ea, eb, a, b);
}

#define ASSERT_NUM_EQ(a, b)                                                 \
  tg_assert_num_(__FILE__, __LINE__, "ASSERT_NUM_EQ", #a, #b, (double)(a),  \
                 (double)(b), 0)
#define ASSERT_NUM_NEAR(a, b, tolerance)                                    \
  tg_assert_num_(__FILE__, __LINE__, "ASSERT_NUM_NEAR", #a, #b,             \
                 (double)(a), (double)(b), (double)(tolerance))

/* The shortest text that reads back as d (1.9, not 1.8999999999999999). */
static inline const char *tg_num_text_(double d, char buf[32]) {
  for (int prec = 15; prec <= 17; prec++) {
    snprintf(buf, 32, "%.*g", prec, d);
    if (strtod(buf, NULL) == d) break;
  }
  return buf;
}

/* a and b equal, or within tolerance of each other; NaN equals nothing. */
static inline void tg_assert_num_(const char *file, int line,
                                  const char *macro, const char *ea,
                                  const char *eb, double a, double b,
                                  double tolerance) {
  double d = a > b ? a - b : b - a;
  if (a == b || d <= tolerance) return;
  char ta[32], tb[32], td[32], tt[32];
  if (tolerance > 0)
    tg_fail_(file, line, "%s(%s, %s): %s and %s differ by %s, more than %s",
             macro, ea, eb, tg_num_text_(a, ta), tg_num_text_(b, tb),
             tg_num_text_(d, td), tg_num_text_(tolerance, tt));
  tg_fail_(file, line, "%s(%s, %s): %s != %s", macro, ea, eb,
           tg_num_text_(a, ta), tg_num_text_(b, tb));
}

/* ---- strings (NULL never equals or contains anything) ---- */

#define ASSERT_STR_EQ(a, b) \
  tg_assert_str_eq_(__FILE__, __LINE__, #a, #b, (a), (b))
static inline void tg_assert_str_eq_(const char *file, int line,
                                     const char *ea, const char *eb,
                                     const char *a, const char *b) {
  if (a && b && strcmp(a, b) == 0) return;
  tg_fail_(file, line,
           "ASSERT_STR_EQ(%s, %s):\n     " TG_Q_FMT_ "\n  != " TG_Q_FMT_, ea,
           eb, TG_Q_(a), TG_Q_(b));
}

enum { TG_CONTAINS_, TG_NOT_CONTAINS_, TG_STARTS_WITH_ };
#define ASSERT_CONTAINS(hay, needle)                                        \
  tg_assert_text_(__FILE__, __LINE__, TG_CONTAINS_, #hay, #needle, (hay),   \
                  (needle))
#define ASSERT_NOT_CONTAINS(hay, needle)                                    \
  tg_assert_text_(__FILE__, __LINE__, TG_NOT_CONTAINS_, #hay, #needle,      \
                  (hay), (needle))
#define ASSERT_STARTS_WITH(s, prefix)                                       \
  tg_assert_text_(__FILE__, __LINE__, TG_STARTS_WITH_, #s, #prefix, (s),    \
                  (prefix))

static inline void tg_assert_text_(const char *file, int line, int kind,
                                   const char *es, const char *en,
                                   const char *s, const char *n) {
  static const char *const macro[] = {
      "ASSERT_CONTAINS", "ASSERT_NOT_CONTAINS", "ASSERT_STARTS_WITH"};
  static const char *const fails[] = {"does not contain", "contains",
                                      "does not start with"};
  int ok = 0;
  if (s && n) {
    if (kind == TG_CONTAINS_) ok = strstr(s, n) != NULL;
    else if (kind == TG_NOT_CONTAINS_) ok = strstr(s, n) == NULL;
    else ok = strncmp(s, n, strlen(n)) == 0;
  }
  if (ok) return;
  tg_fail_(file, line, "%s(%s, %s):\n  " TG_Q_FMT_ "\n  %s " TG_Q_FMT_,
           macro[kind], es, en, TG_Q_(s), fails[kind], TG_Q_(n));
}

/* ---- return codes ----
 * ASSERT_OK(rc) or ASSERT_OK(rc, err): rc (0, -1 with errno, or -errno)
 * must be 0; a failure prints rc and err, or else what errno says. */

#define TG_FIRST_(a, ...) a
#define ASSERT_OK(...)                                                      \
  do {                                                                      \
    _Static_assert(!TG_IS_FLOATING_(TG_FIRST_(__VA_ARGS__, 0)),             \
                   "ASSERT_OK takes an integer return code");               \
    tg_assert_ok_(__FILE__, __LINE__, #__VA_ARGS__, __VA_ARGS__,            \
                  (const char *)NULL);                                      \
  } while (0)

static inline void tg_assert_ok_(const char *file, int line, const char *expr,
                                 long long rc, ...) {
  if (rc == 0) return;
  int saved = errno;
  va_list ap;
  va_start(ap, rc);
  const char *err = va_arg(ap, const char *);
  va_end(ap);
  if (err && *err)
    tg_fail_(file, line, "ASSERT_OK(%s): returned %lld: %s", expr, rc, err);
  if (rc == -1)
    tg_fail_(file, line, "ASSERT_OK(%s): returned -1 (errno: %s)", expr,
             strerror(saved));
  if (rc < 0 && rc > -4096)
    tg_fail_(file, line, "ASSERT_OK(%s): returned %lld (%s)", expr, rc,
             strerror((int)-rc));
  tg_fail_(file, line, "ASSERT_OK(%s): returned %lld", expr, rc);
}

/* ---- the outcome of a call (an `outcome`, section 5) ---- */

#define ASSERT_STATUS(o, want)                                              \
  tg_assert_status_(__FILE__, __LINE__, #o, (o).status, (want), (o).code,   \
                    (o).message)
/* ended ok */
#define ASSERT_CALL_OK(o) ASSERT_STATUS(o, TG_STATUS_OK)
/* ended in error with this code (the tool refused) */
#define ASSERT_CALL_ERROR(o, want_code)                                     \
  do {                                                                      \
    ASSERT_STATUS(o, TG_STATUS_ERROR);                                      \
    if (strcmp((o).code, (want_code)) != 0)                                 \
      TG_FAIL("%s: expected code %s, got %s: %s", #o, (want_code),          \
              (o).code, (o).message);                                       \
  } while (0)

static inline void tg_assert_status_(const char *file, int line,
                                     const char *eo, tg_status got,
                                     tg_status want, const char *code,
                                     const char *message) {
  if (got != want)
    tg_fail_(file, line, "%s ended %s, not %s (code '%s': %s)", eo,
             tg_status_name(got), tg_status_name(want), code, message);
}

/* ---- running the tests ---- */

/* TG_TEST_SKIP="a,b" skips tests by name (by hand: CI skips none). */
static inline int tg_test_skipped(const char *name) {
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

/* How long one test may take: 60 s, or TG_TEST_TIMEOUT seconds (the
 * valgrind pass of CI gives more, its run being 20-50 times slower). A
 * test's own deadlines for what should end (a flood, a run of saves) are
 * this less a few seconds, so they fail with a message before the alarm. */
static inline unsigned tg_test_timeout_s(void) {
  const char *s = getenv("TG_TEST_TIMEOUT");
  long v = s ? strtol(s, NULL, 10) : 0;
  return v >= 20 ? (unsigned)v : 60;
}

/* Runs each test (or only argv[1]) in its own child with an alarm (above),
 * so one crash or hang fails that test only. */
/* Runtimes keep their database under XDG_STATE_HOME: each test gets a
 * fresh one of its own, removed after it, so no test writes into the real
 * home, nor sees what another test (or run) remembered there. */
static inline void tg_test_private_state(char dir[64]) {
  snprintf(dir, 64, "/tmp/tg-state-XXXXXX");
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    exit(2);
  }
}

static inline void tg_test_remove_state(const char *dir) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "cannot remove %s\n", dir);
}

static inline int tg_test_run_all(const tg_test_entry *tests, size_t n,
                                  int argc, char **argv) {
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
      alarm(tg_test_timeout_s());
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

#define TEST_MAIN(...)                                                      \
  int main(int argc, char **argv) {                                         \
    static const tg_test_entry tests_[] = {__VA_ARGS__};                    \
    return tg_test_run_all(tests_, sizeof tests_ / sizeof tests_[0], argc,  \
                           argv);                                           \
  }

/* ==== 2. temp directories and files ====================================== */

/* A fresh empty directory under /tmp (malloc'd); remove with remove_tree. */
static inline char *temp_dir(void) {
  char tmpl[] = "/tmp/tg-spec-XXXXXX";
  char *d = mkdtemp(tmpl);
  if (!d) TG_FAIL("mkdtemp: %s", strerror(errno));
  char *p = strdup(d);
  ASSERT_NOT_NULL(p);
  return p;
}

/* dir/name (malloc'd). */
static inline char *path_join(const char *dir, const char *name) {
  size_t n = strlen(dir) + strlen(name) + 2;
  char *p = malloc(n);
  ASSERT_NOT_NULL(p);
  snprintf(p, n, "%s/%s", dir, name);
  return p;
}

/* Writes text into dir/name (created or truncated). */
static inline void put_file(const char *dir, const char *name,
                            const char *text) {
  char *p = path_join(dir, name);
  FILE *f = fopen(p, "wb");
  if (!f) TG_FAIL("cannot write %s: %s", p, strerror(errno));
  fputs(text, f);
  fclose(f);
  free(p);
}

/* The content of the file at path (malloc'd), or NULL if it cannot be
 * opened. */
static inline char *read_text(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  ASSERT_NOT_NULL(s);
  size_t got = fread(s, 1, (size_t)n, f);
  s[got] = '\0';
  fclose(f);
  return s;
}

/* The content of dir/name (malloc'd), or NULL when it does not exist. */
static inline char *file_text(const char *dir, const char *name) {
  char *p = path_join(dir, name);
  char *s = read_text(p);
  free(p);
  return s;
}

/* Is there anything (a dangling symlink too) at dir/name? */
static inline int file_exists(const char *dir, const char *name) {
  char *p = path_join(dir, name);
  struct stat st;
  int ok = lstat(p, &st) == 0;
  free(p);
  return ok;
}

static inline void make_subdir(const char *dir, const char *name) {
  char *p = path_join(dir, name);
  if (mkdir(p, 0755) < 0) TG_FAIL("mkdir %s: %s", p, strerror(errno));
  free(p);
}

/* dir/name -> target */
static inline void make_symlink(const char *target, const char *dir,
                                const char *name) {
  char *p = path_join(dir, name);
  if (symlink(target, p) < 0) TG_FAIL("symlink %s: %s", p, strerror(errno));
  free(p);
}

static inline void remove_file(const char *dir, const char *name) {
  char *p = path_join(dir, name);
  if (unlink(p) < 0) TG_FAIL("unlink %s: %s", p, strerror(errno));
  free(p);
}

static inline int tg_remove_one_(const char *p, const struct stat *st,
                                 int type, struct FTW *ftw) {
  (void)st;
  (void)ftw;
  return type == FTW_DP ? rmdir(p) : unlink(p);
}

/* Removes dir and everything in it (symlinks, not what they point to);
 * frees the path. */
static inline void remove_tree(char *dir) {
  if (nftw(dir, tg_remove_one_, 16, FTW_DEPTH | FTW_PHYS) != 0)
    fprintf(stderr, "could not remove all of %s\n", dir);
  free(dir);
}

/* ==== 3. runtimes ======================================================== */

/* The defaults, but a call no rule answers is allowed rather than asked. */
static inline tg_config config_allowing(void) {
  tg_config cfg;
  tg_config_init(&cfg);
  cfg.default_verdict = TG_VERDICT_ALLOW;
  return cfg;
}

/* A runtime that must come up; cfg NULL: the defaults. */
static inline tg_runtime *new_runtime(tg_config *cfg) {
  char err[TG_ERRMSG] = "";
  tg_runtime *rt = tg_runtime_new(cfg, NULL, err);
  if (!rt) TG_FAIL("tg_runtime_new failed: %s", err);
  return rt;
}

/* A runtime judged by the policy files in dir (cfg NULL: the defaults). */
static inline tg_runtime *runtime_with_policies(tg_config *cfg,
                                                const char *dir) {
  tg_config c;
  if (!cfg) {
    tg_config_init(&c);
    cfg = &c;
  }
  cfg->policies_dir = dir;
  return new_runtime(cfg);
}

/* A runtime whose file tools are confined to root, calls allowed unless a
 * policy (policies_dir, or NULL) says otherwise; file_max_bytes 0: the
 * default. */
static inline tg_runtime *runtime_in_workspace(const char *root,
                                               size_t file_max_bytes,
                                               const char *policies_dir) {
  const char *roots[] = {root, NULL};
  tg_config cfg = config_allowing();
  cfg.workspace_roots = roots;
  cfg.file_max_bytes = file_max_bytes;
  cfg.policies_dir = policies_dir;
  return new_runtime(&cfg);
}

/* ==== 4. the loop ======================================================== */

#define WAIT_MS 10000 /* generous: a loaded 2-core machine, valgrind */

/* Turns the loop until *counter reaches want; the loop must get there
 * (running out of work first fails the test). */
static inline void run_until(tg_runtime *rt, const int *counter, int want) {
  while (*counter < want)
    if (uv_run(tg_runtime_loop(rt), UV_RUN_ONCE) == 0 && *counter < want)
      TG_FAIL("the loop ran out of work with %d of %d done", *counter, want);
}

static inline void tg_keepalive_cb_(uv_timer_t *t) { (void)t; }

/* Turns the loop until *counter reaches want or ms pass, a timer keeping
 * it alive (a folder watch's handles do not; a child process is not in
 * it). Returns 1 if reached. */
static inline int wait_until(tg_runtime *rt, const int *counter, int want,
                             uint64_t ms) {
  uv_loop_t *loop = tg_runtime_loop(rt);
  uv_timer_t t;
  uv_timer_init(loop, &t);
  uv_timer_start(&t, tg_keepalive_cb_, 5, 5);
  uv_update_time(loop);
  uint64_t end = uv_now(loop) + ms;
  while (*counter < want && uv_now(loop) < end) uv_run(loop, UV_RUN_ONCE);
  uv_close((uv_handle_t *)&t, NULL);
  uv_run(loop, UV_RUN_NOWAIT);
  return *counter >= want;
}

/* Turns the loop for about ms milliseconds. */
static inline void run_for(tg_runtime *rt, uint64_t ms) {
  int never = 0;
  wait_until(rt, &never, 1, ms);
}

/* ==== 5. outcomes ======================================================== */

static inline void copy_str(char *dst, size_t n, const char *s) {
  snprintf(dst, n, "%s", s ? s : "");
}

/* What a call's done callback said (strings copied; "" for NULL). */
typedef struct {
  int n;                 /* times done was called */
  tg_status status;
  tg_phase phase;
  char id[64], tool[64], code[64], rule[128];
  char message[2048];
  int has_rule, retryable, attempts;
  tg_verdict verdict;
  double duration_ms;
  cJSON *result;         /* a copy, or NULL */
  cJSON *json;           /* tg_outcome_to_json */
} outcome;

/* The done callback that fills the outcome ud points to. */
static inline void record_outcome(tg_runtime *rt, const tg_outcome *o,
                                  void *ud) {
  (void)rt;
  outcome *r = ud;
  r->n++;
  r->status = o->status;
  r->phase = o->error.phase;
  copy_str(r->id, sizeof r->id, o->id);
  copy_str(r->tool, sizeof r->tool, o->tool);
  copy_str(r->code, sizeof r->code, o->error.code);
  copy_str(r->message, sizeof r->message, o->error.message);
  copy_str(r->rule, sizeof r->rule, o->rule);
  r->has_rule = o->rule != NULL;
  r->retryable = o->error.retryable;
  r->attempts = o->attempts;
  r->verdict = o->verdict;
  r->duration_ms = o->duration_ms;
  cJSON_Delete(r->result);
  r->result = o->result ? cJSON_Duplicate(o->result, 1) : NULL;
  cJSON_Delete(r->json);
  r->json = tg_outcome_to_json(o);
}

static inline void outcome_free(outcome *r) {
  cJSON_Delete(r->result);
  cJSON_Delete(r->json);
  r->result = r->json = NULL;
}

/* Starts a call that must be accepted; its outcome lands in *out when it
 * ends (id, args_json may be NULL). */
static inline void start_call(tg_runtime *rt, const char *id,
                              const char *tool, const char *args_json,
                              outcome *out) {
  char err[TG_ERRMSG] = "";
  tg_call_request req;
  memset(&req, 0, sizeof req);
  req.id = id;
  req.tool = tool;
  req.args_json = args_json;
  int rc = tg_call_start(rt, &req, record_outcome, out, err);
  if (rc != 0) TG_FAIL("tg_call_start(%s) = %d: %s", tool, rc, err);
}

/* Calls tool with args (a tree; NULL: none) and runs the loop until the
 * call ends. */
static inline outcome call_tool_args(tg_runtime *rt, const char *tool,
                                     const cJSON *args) {
  outcome o;
  memset(&o, 0, sizeof o);
  tg_call_request req;
  memset(&req, 0, sizeof req);
  req.tool = tool;
  req.args = args;
  char err[TG_ERRMSG] = "";
  int rc = tg_call_start(rt, &req, record_outcome, &o, err);
  if (rc != 0) TG_FAIL("tg_call_start(%s) = %d: %s", tool, rc, err);
  run_until(rt, &o.n, 1);
  return o;
}

/* Calls tool with args_json (NULL: none) and runs the loop until the call
 * ends. */
static inline outcome call_tool(tg_runtime *rt, const char *tool,
                                const char *args_json) {
  outcome o;
  memset(&o, 0, sizeof o);
  start_call(rt, NULL, tool, args_json, &o);
  run_until(rt, &o.n, 1);
  return o;
}

/* write_file and apply_patch with their string arguments escaped here. */
static inline outcome call_write_file(tg_runtime *rt, const char *path,
                                      const char *content, int create_dirs) {
  cJSON *a = cJSON_CreateObject();
  cJSON_AddStringToObject(a, "path", path);
  cJSON_AddStringToObject(a, "content", content);
  if (create_dirs) cJSON_AddTrueToObject(a, "create_dirs");
  outcome o = call_tool_args(rt, "write_file", a);
  cJSON_Delete(a);
  return o;
}

static inline outcome call_apply_patch(tg_runtime *rt, const char *patch) {
  cJSON *a = cJSON_CreateObject();
  cJSON_AddStringToObject(a, "patch", patch);
  outcome o = call_tool_args(rt, "apply_patch", a);
  cJSON_Delete(a);
  return o;
}

/* ==== 6. events ========================================================== */

typedef struct {
  uint64_t seq;
  char type[40];
  char call_id[64];
  cJSON *data;
} logged_event;

/* Every event of a runtime, in order: tg_events_subscribe(rt, log_event,
 * &log). */
typedef struct {
  logged_event *ev;
  int n, cap;
} event_log;

static inline void log_event(tg_runtime *rt, const tg_event *e, void *ud) {
  (void)rt;
  event_log *r = ud;
  if (r->n == r->cap) {
    r->cap = r->cap ? r->cap * 2 : 64;
    r->ev = realloc(r->ev, (size_t)r->cap * sizeof *r->ev);
    ASSERT_NOT_NULL(r->ev);
  }
  logged_event *x = &r->ev[r->n++];
  x->seq = e->seq;
  copy_str(x->type, sizeof x->type, e->type);
  copy_str(x->call_id, sizeof x->call_id, e->call_id);
  x->data = cJSON_Duplicate(e->data, 1);
}

static inline void event_log_free(event_log *r) {
  for (int i = 0; i < r->n; i++) cJSON_Delete(r->ev[i].data);
  free(r->ev);
  memset(r, 0, sizeof *r);
}

/* How many logged events have this type (and call id, if not NULL). */
static inline int count_events(const event_log *r, const char *type,
                               const char *id) {
  int k = 0;
  for (int i = 0; i < r->n; i++)
    if (!strcmp(r->ev[i].type, type) && (!id || !strcmp(r->ev[i].call_id, id)))
      k++;
  return k;
}

/* Index of the first event of a type, or -1. */
static inline int find_event(const event_log *r, const char *type) {
  for (int i = 0; i < r->n; i++)
    if (!strcmp(r->ev[i].type, type)) return i;
  return -1;
}

/* ==== 7. C tools and an approver ========================================= */

/* A tool definition with the given start/cancel; read-only so no rule or
 * default verdict asks for it. */
static inline tg_tool_def tool_def(const char *name, tg_tool_start_fn start,
                                   tg_tool_cancel_fn cancel, void *ud) {
  tg_tool_def d;
  memset(&d, 0, sizeof d);
  d.name = name;
  d.read_only = 1;
  d.start = start;
  d.cancel = cancel;
  d.ud = ud;
  return d;
}

/* Registers a tool that must be accepted. */
static inline void register_tool(tg_runtime *rt, const tg_tool_def *d) {
  char err[TG_ERRMSG] = "";
  int rc = tg_tool_register(rt, d, err);
  if (rc != 0) TG_FAIL("tg_tool_register(%s) = %d: %s", d->name, rc, err);
}

/* echo: finishes at once with {"echo": args}; counts its starts. */
static int echo_starts __attribute__((unused));
static inline void echo_start(tg_exec *ex, const cJSON *args, void *ud) {
  (void)ud;
  echo_starts++;
  cJSON *r = cJSON_CreateObject();
  cJSON_AddItemToObject(r, "echo", cJSON_Duplicate(args, 1));
  tg_exec_finish_ok(ex, r);
}

/* A running C tool that finishes from a timer (or is stopped). */
typedef struct {
  tg_exec *ex;
  uv_timer_t timer;
  int timer_open;
  int starts, cancels;
  uint64_t delay_ms;       /* finish ok after this; 0: never on its own */
  int cancel_finishes;     /* the cancel fn finishes with a partial result */
  int late_finished;
  char late_call_id[64];
} slow_tool;

static inline void slow_timer_cb(uv_timer_t *t) {
  slow_tool *s = t->data;
  tg_exec *ex = s->ex;
  s->ex = NULL;
  if (!ex) return;
  /* the attempt may have been given up (no cancel fn): the id stays valid */
  copy_str(s->late_call_id, sizeof s->late_call_id, tg_exec_call_id(ex));
  s->late_finished = 1;
  cJSON *r = cJSON_CreateObject();
  cJSON_AddStringToObject(r, "done", "late or not");
  tg_exec_finish_ok(ex, r);
}

static inline void slow_start(tg_exec *ex, const cJSON *args, void *ud) {
  (void)args;
  slow_tool *s = ud;
  s->starts++;
  s->ex = ex;
  if (!s->delay_ms) return;
  if (!s->timer_open) {
    uv_timer_init(tg_runtime_loop(tg_exec_runtime(ex)), &s->timer);
    s->timer.data = s;
    s->timer_open = 1;
  }
  /* the loop's cached clock may be stale (runtime creation, a long turn) */
  uv_update_time(tg_runtime_loop(tg_exec_runtime(ex)));
  uv_timer_start(&s->timer, slow_timer_cb, s->delay_ms, 0);
}

/* Stops the timer; with cancel_finishes, finishes with {lines_so_far: 2}
 * and code STOPPED. */
static inline void slow_cancel(tg_exec *ex, void *ud) {
  slow_tool *s = ud;
  s->cancels++;
  if (s->timer_open) uv_timer_stop(&s->timer);
  s->ex = NULL;
  if (!s->cancel_finishes) return;
  cJSON *partial = cJSON_CreateObject();
  cJSON_AddNumberToObject(partial, "lines_so_far", 2);
  tg_exec_finish_error(ex, partial, "STOPPED", "stopped on request", 0);
}

/* Closes the tool's timer (before the runtime's loop goes away). */
static inline void slow_close(tg_runtime *rt, slow_tool *s) {
  if (!s->timer_open) return;
  uv_close((uv_handle_t *)&s->timer, NULL);
  s->timer_open = 0;
  uv_run(tg_runtime_loop(rt), UV_RUN_NOWAIT);
}

/* An approver (tg_runtime_set_approver(rt, approver_cb, &a)) that records
 * what it was asked and, if answer_now is set, answers at once. */
typedef struct {
  int n;                   /* times asked */
  uint64_t last_id;
  char last_call_id[64], last_tool[64], last_session[64];
  cJSON *last_args;
  int answer_now;          /* a tg_answer; 0: never answers from the callback */
  tg_always_scope scope;
  const char *guidance;
} approver;

static inline void approver_cb(tg_runtime *rt, const tg_approval_request *req,
                               void *ud) {
  approver *a = ud;
  a->n++;
  a->last_id = req->approval_id;
  copy_str(a->last_call_id, sizeof a->last_call_id, req->call_id);
  copy_str(a->last_tool, sizeof a->last_tool, req->tool);
  copy_str(a->last_session, sizeof a->last_session, req->session);
  cJSON_Delete(a->last_args);
  a->last_args = req->args ? cJSON_Duplicate(req->args, 1) : NULL;
  if (a->answer_now)
    ASSERT_OK(tg_approval_answer(rt, req->approval_id,
                                 (tg_answer)a->answer_now, a->scope,
                                 a->guidance));
}

static inline void approver_free(approver *a) {
  cJSON_Delete(a->last_args);
  a->last_args = NULL;
}

/* ==== 8. reading JSON ==================================================== */

/* The string at key of an object, or NULL. */
static inline const char *str_at(const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* The number at key of an object, or NaN (which equals nothing). */
static inline double num_at(const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* 1 for true, 0 for false, -1 for anything else or nothing. */
static inline int bool_at(const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsTrue(v) ? 1 : cJSON_IsFalse(v) ? 0 : -1;
}

/* Is the value at key a JSON null (not missing)? */
static inline int is_null_at(const cJSON *o, const char *key) {
  return cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(o, key));
}

#endif
