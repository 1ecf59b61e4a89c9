/*
 * test_exec.c — the built-in `exec` tool with real processes: output and
 * exit status, streaming progress, caps, stdin, env and cwd, timeout and
 * cancel killing the whole process group (grandchildren checked in /proc),
 * the runtime killing what still runs when it is freed, two runtimes.
 */
#include "helpers.h"
#include "internal.h"

/* ---- helpers ------------------------------------------------------------ */

/* A runtime where exec runs without asking. */
static tg_runtime *exec_rt(tg_config *cfg) {
  tg_config c;
  if (!cfg) {
    tg_config_init(&c);
    cfg = &c;
  }
  cfg->approve_mode = TG_APPROVE_ALLOW;
  return new_runtime(cfg);
}

/* Runs one exec call with args JSON to its end. */
static void run_exec(tg_runtime *rt, const char *id, const char *args,
                     outcome *o) {
  start_call(rt, id, "exec", args, o);
  run_until(rt, &o->n, 1);
}

/* A process that exists and is not a zombie (a killed grandchild is
 * reparented to init, which may reap it late). */
static int alive(pid_t pid) {
  char path[64], buf[512];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  char *rp = strrchr(buf, ')');
  return rp && rp[1] && rp[2] != 'Z' && rp[2] != 'X';
}

/* SIGKILL is delivered by the time a call ends, but a process may still be
 * finishing its exit: give it a (generous) moment. */
static int gone(pid_t pid) {
  for (int i = 0; i < 300 && alive(pid); i++) usleep(10000);
  return !alive(pid);
}

/* The pids printed in text (whitespace separated); returns how many. */
static int pids_in(const char *text, pid_t *pids, int max) {
  int n = 0;
  while (text && *text && n < max) {
    char *end;
    long v = strtol(text, &end, 10);
    if (end == text) {
      text++;
      continue;
    }
    if (v > 1) pids[n++] = (pid_t)v;
    text = end;
  }
  return n;
}

/* The last progress event of the call, or NULL. */
static const cJSON *last_progress(const event_log *r, const char *id) {
  const cJSON *d = NULL;
  for (int i = 0; i < r->n; i++)
    if (!strcmp(r->ev[i].type, "progress") && !strcmp(r->ev[i].call_id, id))
      d = r->ev[i].data;
  return d;
}

/* Turns the loop until a progress event of the call carries a last line. */
static const char *wait_for_line(tg_runtime *rt, event_log *r, const char *id) {
  for (int i = 0; i < 400; i++) {
    const cJSON *d = last_progress(r, id);
    const char *l = d ? str_at(d, "last_line") : NULL;
    if (l && *l) return l;
    run_for(rt, 25);
  }
  TG_FAIL("no progress event with output for %s", id);
  return NULL;
}

/* ---- output and status ---------------------------------------------------- */

TEST(stdout_stderr_and_exit_code) {
  tg_runtime *rt = exec_rt(NULL);
  outcome o = {0};
  run_exec(rt, "c1", "{\"command\":\"echo hello; echo oops >&2\"}", &o);
  ASSERT_CALL_OK(o);
  ASSERT_NUM_EQ(0, num_at(o.result, "exit_code"));
  ASSERT_TRUE(is_null_at(o.result, "signal"));
  ASSERT_STR_EQ("hello\n", str_at(o.result, "stdout"));
  ASSERT_STR_EQ("oops\n", str_at(o.result, "stderr"));
  ASSERT_INT_EQ(bool_at(o.result, "stdout_truncated"), 0);
  ASSERT_INT_EQ(bool_at(o.result, "stderr_truncated"), 0);
  ASSERT_INT_EQ(bool_at(o.result, "timed_out"), 0);
  ASSERT_INT_EQ(bool_at(o.result, "cancelled"), 0);
  ASSERT_TRUE(num_at(o.result, "duration_ms") >= 0);
  outcome_free(&o);
  tg_runtime_free(rt);
}

/* A non-zero exit is the command's answer, not a tool failure. */
TEST(nonzero_exit_is_ok_with_exit_code) {
  tg_runtime *rt = exec_rt(NULL);
  outcome o = {0};
  run_exec(rt, "c1", "{\"command\":\"echo partial; exit 3\"}", &o);
  ASSERT_CALL_OK(o);
  ASSERT_NUM_EQ(3, num_at(o.result, "exit_code"));
  ASSERT_STR_EQ("partial\n", str_at(o.result, "stdout"));
  ASSERT_INT_EQ(1, o.attempts);
  outcome_free(&o);
  tg_runtime_free(rt);
}

TEST(killed_by_a_signal_reports_its_name) {
  tg_runtime *rt = exec_rt(NULL);
  outcome o = {0};
  run_exec(rt, "c1", "{\"command\":\"kill -TERM $$\"}", &o);
  ASSERT_CALL_OK(o);
  ASSERT_TRUE(is_null_at(o.result, "exit_code"));
  ASSERT_STR_EQ("SIGTERM", str_at(o.result, "signal"));
  outcome_free(&o);
  tg_runtime_free(rt);
}

TEST(env_merged_over_environment_and_cwd) {
  setenv("TG_EXEC_INHERITED", "from-parent", 1);
  setenv("TG_EXEC_REPLACED", "old", 1);
  char *dir = temp_dir();
  char args[1024];
  snprintf(args, sizeof args,
           "{\"command\":\"printf '%%s|%%s|%%s|%%s' \\\"$TG_EXEC_NEW\\\" "
           "\\\"$TG_EXEC_REPLACED\\\" \\\"$TG_EXEC_INHERITED\\\" \\\"$(pwd)\\\"\","
           "\"env\":{\"TG_EXEC_NEW\":\"a b\",\"TG_EXEC_REPLACED\":\"new\"},"
           "\"cwd\":\"%s\"}", dir);
  tg_runtime *rt = exec_rt(NULL);
  outcome o = {0};
  run_exec(rt, "c1", args, &o);
  ASSERT_CALL_OK(o);
  char want[1024];
  snprintf(want, sizeof want, "a b|new|from-parent|%s", dir);
  ASSERT_STR_EQ(want, str_at(o.result, "stdout"));
  outcome_free(&o);
  tg_runtime_free(rt);
  remove_tree(dir);
}

TEST(stdin_is_written_then_closed) {
  tg_runtime *rt = exec_rt(NULL);
  outcome o = {0};
  run_exec(rt, "c1", "{\"command\":\"cat; echo end\",\"stdin\":\"line 1\\n\"}",
           &o);
  ASSERT_CALL_OK(o);
  ASSERT_STR_EQ("line 1\nend\n", str_at(o.result, "stdout"));
  outcome_free(&o);
  /* no stdin given: /dev/null, never the runtime's own stdin */
  outcome o2 = {0};
  run_exec(rt, "c2", "{\"command\":\"wc -c\"}", &o2);
  ASSERT_INT_EQ(0, atoi(str_at(o2.result, "stdout")));
  outcome_free(&o2);
  tg_runtime_free(rt);
}

/* Megabytes each way at once: stdin is written as the pipe takes it while
 * stdout is read, so neither side blocks the other. */
static char *big_stdin_args(const char *command, size_t n) {
  char *args = malloc(n + 256);
  ASSERT_NOT_NULL(args);
  int k = sprintf(args, "{\"command\":\"%s\",\"stdin\":\"", command);
  for (size_t i = 0; i < n; i++) args[k + i] = (char)('a' + i % 26);
  strcpy(args + k + n, "\"}");
  return args;
}

TEST(large_stdin_does_not_deadlock) {
  tg_config cfg;
  tg_config_init(&cfg);
  cfg.exec_output_cap = 16u << 20;
  tg_runtime *rt = exec_rt(&cfg);
  size_t n = 6u << 20;
  char *args = big_stdin_args("cat", n);
  outcome o = {0};
  run_exec(rt, "c1", args, &o);
  ASSERT_CALL_OK(o);
  ASSERT_NUM_EQ(0, num_at(o.result, "exit_code"));
  ASSERT_INT_EQ(n, strlen(str_at(o.result, "stdout")));
  ASSERT_INT_EQ(bool_at(o.result, "stdout_truncated"), 0);
  outcome_free(&o);
  free(args);
  /* a command that reads none of it: no SIGPIPE for us, no hang */
  args = big_stdin_args("echo ignored", n);
  outcome o2 = {0};
  run_exec(rt, "c2", args, &o2);
  ASSERT_CALL_OK(o2);
  ASSERT_STR_EQ("ignored\n", str_at(o2.result, "stdout"));
  outcome_free(&o2);
  free(args);
  tg_runtime_free(rt);
}

TEST(output_is_valid_utf8) {
  tg_runtime *rt = exec_rt(NULL);
  outcome o = {0};
  run_exec(rt, "c1", "{\"command\":\"printf 'a\\\\377b\\\\000c \\\\303\\\\251'\"}",
           &o);
  ASSERT_STR_EQ("a\xEF\xBF\xBD" "b\xEF\xBF\xBD" "c \xC3\xA9",
                str_at(o.result, "stdout"));
  outcome_free(&o);
  tg_runtime_free(rt);
}

/* ---- caps ------------------------------------------------------------------- */

TEST(cap_keeps_head_and_tail_and_marks_the_cut) {
  tg_config cfg;
  tg_config_init(&cfg);
  cfg.exec_output_cap = 64 * 1024;
  tg_runtime *rt = exec_rt(&cfg);
  outcome o = {0};
  run_exec(rt, "c1",
           "{\"command\":\"yes | head -c 5000000; printf end; echo small >&2\"}",
           &o);
  ASSERT_CALL_OK(o);
  const char *out = str_at(o.result, "stdout");
  ASSERT_INT_EQ(bool_at(o.result, "stdout_truncated"), 1);
  ASSERT_INT_EQ(bool_at(o.result, "stderr_truncated"), 0);
  ASSERT_STR_EQ("small\n", str_at(o.result, "stderr"));
  ASSERT_STARTS_WITH(out, "y\ny\ny\n");                  /* the head */
  ASSERT_CONTAINS(out, "\n...[4934467 bytes cut]...\n"); /* 5000003 - 64 KiB */
  ASSERT_STR_EQ(out + strlen(out) - 5, "y\nend");        /* the tail */
  ASSERT_TRUE(strlen(out) < 64 * 1024 + 64);
  outcome_free(&o);
  tg_runtime_free(rt);
}

/* The cut never splits a character; the counts add up. */
TEST(capture_cuts_at_character_boundaries) {
  tg_capture c;
  tg__capture_init(&c, 9);                    /* head 4 bytes, tail 5 */
  for (int i = 0; i < 10; i++) tg__capture_add(&c, "\xC3\xA9", 2); /* é */
  ASSERT_TRUE(tg__capture_truncated(&c));
  cJSON *t = tg__capture_text(&c);
  /* head: 2 é (4 bytes); tail: the ring's oldest byte is a continuation
   * byte, skipped, leaving 2 é (4 bytes); 20 - 8 = 12 cut */
  ASSERT_STR_EQ("\xC3\xA9\xC3\xA9\n...[12 bytes cut]...\n\xC3\xA9\xC3\xA9",
                t->valuestring);
  cJSON_Delete(t);
  tg__capture_free(&c);
}

TEST(capture_last_line) {
  tg_capture c;
  char view[TG_CAPTURE_LINE_VIEW];
  tg__capture_init(&c, 1024);
  ASSERT_STR_EQ("", tg__capture_last_line(&c, view));
  tg__capture_add(&c, "one\ntw", 6);         /* a line still being written */
  ASSERT_STR_EQ("tw", tg__capture_last_line(&c, view));
  tg__capture_add(&c, "o\r\n\n", 4);         /* finished, then empty lines */
  ASSERT_STR_EQ("two", tg__capture_last_line(&c, view));
  tg__capture_add(&c, "50%\r60%\r", 8);      /* a progress bar */
  ASSERT_STR_EQ("60%", tg__capture_last_line(&c, view));
  tg__capture_add(&c, "\xFF\n", 2);           /* shown as U+FFFD */
  ASSERT_STR_EQ("\xEF\xBF\xBD", tg__capture_last_line(&c, view));
  tg__capture_add(&c, "x", 1);                /* a long line is cut at 200 */
  for (int i = 0; i < 150; i++) tg__capture_add(&c, "\xC3\xA9", 2);
  tg__capture_last_line(&c, view);
  ASSERT_INT_EQ(199, strlen(view)); /* not in the middle of an é */
  ASSERT_NOT_CONTAINS(view, "\xEF\xBF\xBD");
  tg__capture_free(&c);
}

/* ---- progress ---------------------------------------------------------------- */

/* Output is streamed: the first line is in a progress event while the
 * command still sleeps, before the call ends. */
TEST(progress_carries_output_before_exit) {
  tg_config cfg;
  tg_config_init(&cfg);
  cfg.progress_interval_ms = 50;
  tg_runtime *rt = exec_rt(&cfg);
  event_log rec = {0};
  tg_events_subscribe(rt, log_event, &rec);
  outcome o = {0};
  run_exec(rt, "c1", "{\"command\":\"echo first; sleep 0.4; echo second\"}", &o);
  ASSERT_CALL_OK(o);
  int end = find_event(&rec, "call_end"), seen = -1;
  for (int i = 0; i < rec.n; i++) {
    if (strcmp(rec.ev[i].type, "progress")) continue;
    const char *l = str_at(rec.ev[i].data, "last_line");
    if (l && !strcmp(l, "first") && seen < 0) {
      seen = i;
      ASSERT_NUM_EQ(6, num_at(rec.ev[i].data, "bytes"));
      ASSERT_TRUE(num_at(rec.ev[i].data, "elapsed_ms") >= 0);
    }
  }
  ASSERT_TRUE(seen >= 0);
  ASSERT_TRUE(seen < end);
  outcome_free(&o);
  event_log_free(&rec);
  tg_runtime_free(rt);
}

TEST(short_command_emits_no_progress) {
  tg_runtime *rt = exec_rt(NULL); /* the default 1 s interval */
  event_log rec = {0};
  tg_events_subscribe(rt, log_event, &rec);
  outcome o = {0};
  run_exec(rt, "c1", "{\"command\":\"true\"}", &o);
  ASSERT_CALL_OK(o);
  ASSERT_INT_EQ(0, count_events(&rec, "progress", NULL));
  outcome_free(&o);
  event_log_free(&rec);
  tg_runtime_free(rt);
}

/* ---- stopping ------------------------------------------------------------------ */

static const char *const TWO_SLEEPERS =
    "sleep 100 & a=$!; sleep 100 & echo $a $!; wait";

TEST(timeout_kills_grandchildren_and_keeps_partial_output) {
  tg_runtime *rt = exec_rt(NULL);
  outcome o = {0};
  char args[256];
  /* long enough for the sleepers to start even under valgrind */
  snprintf(args, sizeof args,
           "{\"command\":\"echo before; %s\",\"timeout_ms\":1500}",
           TWO_SLEEPERS);
  run_exec(rt, "c1", args, &o);
  ASSERT_STATUS(o, TG_STATUS_TIMEOUT);
  ASSERT_INT_EQ(TG_PHASE_TIMEOUT, o.phase);
  ASSERT_CONTAINS(o.message, "1500 ms");
  ASSERT_INT_EQ(bool_at(o.result, "timed_out"), 1);
  ASSERT_INT_EQ(bool_at(o.result, "cancelled"), 0);
  const char *out = str_at(o.result, "stdout");
  ASSERT_STARTS_WITH(out, "before\n");
  pid_t pids[2];
  ASSERT_INT_EQ(2, pids_in(out + 7, pids, 2));
  ASSERT_TRUE(gone(pids[0]));
  ASSERT_TRUE(gone(pids[1]));
  outcome_free(&o);
  tg_runtime_free(rt);
}

/* A grandchild that ignores SIGTERM gets SIGKILL after the grace. */
TEST(sigkill_after_the_grace) {
  tg_config cfg;
  tg_config_init(&cfg);
  cfg.kill_grace_ms = 200;
  cfg.progress_interval_ms = 20;
  tg_runtime *rt = exec_rt(&cfg);
  event_log rec = {0};
  tg_events_subscribe(rt, log_event, &rec);
  outcome o = {0};
  start_call(rt, "c1", "exec",
             "{\"command\":\"trap '' TERM; sleep 100 & echo $!; wait\"}", &o);
  pid_t pid;
  ASSERT_INT_EQ(1, pids_in(wait_for_line(rt, &rec, "c1"), &pid, 1));
  ASSERT_OK(tg_call_cancel(rt, "c1"));
  run_until(rt, &o.n, 1);
  ASSERT_STATUS(o, TG_STATUS_CANCELLED);
  ASSERT_STR_EQ("SIGKILL", str_at(o.result, "signal")); /* sh ignored TERM */
  ASSERT_TRUE(gone(pid));
  outcome_free(&o);
  event_log_free(&rec);
  tg_runtime_free(rt);
}

TEST(cancel_kills_grandchildren) {
  tg_config cfg;
  tg_config_init(&cfg);
  cfg.progress_interval_ms = 20;
  tg_runtime *rt = exec_rt(&cfg);
  event_log rec = {0};
  tg_events_subscribe(rt, log_event, &rec);
  outcome o = {0};
  char args[256];
  snprintf(args, sizeof args, "{\"command\":\"%s\"}", TWO_SLEEPERS);
  start_call(rt, "c1", "exec", args, &o);
  pid_t pids[2];
  ASSERT_INT_EQ(2, pids_in(wait_for_line(rt, &rec, "c1"), pids, 2));
  ASSERT_TRUE(alive(pids[0]) && alive(pids[1]));
  ASSERT_OK(tg_call_cancel(rt, "c1"));
  run_until(rt, &o.n, 1);
  ASSERT_STATUS(o, TG_STATUS_CANCELLED);
  ASSERT_INT_EQ(TG_PHASE_CANCEL, o.phase);
  ASSERT_INT_EQ(bool_at(o.result, "cancelled"), 1);
  ASSERT_TRUE(gone(pids[0]));
  ASSERT_TRUE(gone(pids[1]));
  outcome_free(&o);
  event_log_free(&rec);
  tg_runtime_free(rt);
}

/* The shell exited; what it left running in its group would be an orphan. */
TEST(leftovers_are_killed_when_the_shell_exits) {
  tg_runtime *rt = exec_rt(NULL);
  outcome o = {0};
  run_exec(rt, "c1", "{\"command\":\"sleep 100 & echo $!\"}", &o);
  ASSERT_CALL_OK(o);
  ASSERT_NUM_EQ(0, num_at(o.result, "exit_code"));
  pid_t pid;
  ASSERT_INT_EQ(1, pids_in(str_at(o.result, "stdout"), &pid, 1));
  ASSERT_TRUE(gone(pid));
  ASSERT_TRUE(o.duration_ms < 30000);
  outcome_free(&o);
  tg_runtime_free(rt);
}

TEST(runtime_free_kills_a_running_command) {
  tg_config cfg;
  tg_config_init(&cfg);
  cfg.progress_interval_ms = 20;
  cfg.kill_grace_ms = 30000; /* freeing does not wait for the grace */
  tg_runtime *rt = exec_rt(&cfg);
  event_log rec = {0};
  tg_events_subscribe(rt, log_event, &rec);
  outcome o = {0};
  char args[256];
  snprintf(args, sizeof args,
           "{\"command\":\"trap '' TERM; %s\"}", TWO_SLEEPERS);
  start_call(rt, "c1", "exec", args, &o);
  pid_t pids[2];
  ASSERT_INT_EQ(2, pids_in(wait_for_line(rt, &rec, "c1"), pids, 2));
  uint64_t t0 = uv_hrtime();
  tg_runtime_free(rt);
  ASSERT_TRUE((uv_hrtime() - t0) / 1000000 < 20000);
  ASSERT_INT_EQ(1, o.n);
  ASSERT_STATUS(o, TG_STATUS_CANCELLED);
  ASSERT_TRUE(gone(pids[0]));
  ASSERT_TRUE(gone(pids[1]));
  outcome_free(&o);
  event_log_free(&rec);
}

/* ---- errors ----------------------------------------------------------------------- */

TEST(bad_cwd_is_a_clear_execute_error) {
  tg_runtime *rt = exec_rt(NULL);
  outcome o = {0};
  run_exec(rt, "c1", "{\"command\":\"pwd\",\"cwd\":\"/no/such/dir\"}", &o);
  ASSERT_STATUS(o, TG_STATUS_ERROR);
  ASSERT_INT_EQ(TG_PHASE_EXECUTE, o.phase);
  ASSERT_STR_EQ("SPAWN_FAILED", o.code);
  ASSERT_CONTAINS(o.message, "'/no/such/dir' does not exist");
  outcome_free(&o);
  outcome o2 = {0};
  run_exec(rt, "c2", "{\"command\":\"pwd\",\"cwd\":\"/etc/passwd\"}", &o2);
  ASSERT_INT_EQ(TG_PHASE_EXECUTE, o2.phase);
  ASSERT_CONTAINS(o2.message, "is not a directory");
  outcome_free(&o2);
  tg_runtime_free(rt);
}

TEST(bad_args_fail_validation) {
  tg_runtime *rt = exec_rt(NULL);
  static const char *const bad[][2] = {
      {"{\"command\":42}", "$.command"},
      {"{}", "command"},
      {"{\"command\":\"true\",\"env\":{\"A\":1}}", "$.env.A"},
      {"{\"command\":\"true\",\"timeout_ms\":-5}", "$.timeout_ms"},
      {"{\"command\":\"true\",\"shell\":\"bash\"}", "shell"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    outcome o = {0};
    char id[16];
    snprintf(id, sizeof id, "c%zu", i);
    run_exec(rt, id, bad[i][0], &o);
    ASSERT_STATUS(o, TG_STATUS_ERROR);
    ASSERT_INT_EQ(TG_PHASE_VALIDATE, o.phase);
    ASSERT_CONTAINS(o.message, bad[i][1]);
    outcome_free(&o);
  }
  tg_runtime_free(rt);
}

/* exec's own parsing of its args (ctx.exec under trusted_policies uses it
 * without the schema): a timeout_ms that is NaN, infinite, a fraction or
 * out of range was cast unchecked to uint64_t (issue 8, item 11). */
TEST(exec_args_numbers_checked_without_the_schema) {
  tg_runtime *rt = exec_rt(NULL);
  static const struct { double v; const char *got; } bad[] = {
      {NAN, "got NaN"}, {INFINITY, "got infinity"}, {1.5, "got 1.5"},
      {1e20, "got 1e+20"}, {0, "got 0"}, {-1, "got -1"},
      {86400001, "got 86400001"}};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    cJSON *args = cJSON_CreateObject();
    cJSON_AddStringToObject(args, "command", "true");
    cJSON_AddNumberToObject(args, "timeout_ms", bad[i].v);
    tg_command a;
    char err[256] = "";
    ASSERT_INT_EQ(tg__command_parse(&rt->core.cfg, args, &a, err, sizeof err), -1);
    ASSERT_CONTAINS(err, "exec: timeout_ms must be an integer from 1 to "
                         "86400000");
    ASSERT_CONTAINS(err, bad[i].got);
    cJSON_Delete(args);
  }
  cJSON *args = cJSON_Parse("{\"command\":\"true\",\"timeout_ms\":86400000}");
  tg_command a;
  char err[256] = "";
  ASSERT_OK(tg__command_parse(&rt->core.cfg, args, &a, err, sizeof err), err);
  ASSERT_INT_EQ(a.timeout_ms, 86400000);
  tg__command_free(&a);
  cJSON_Delete(args);
  tg_runtime_free(rt);
}

/* ---- runtimes ----------------------------------------------------------------------- */

TEST(two_runtimes_run_commands_side_by_side) {
  tg_runtime *a = exec_rt(NULL), *b = exec_rt(NULL);
  outcome oa = {0}, ob = {0};
  start_call(a, "c1", "exec", "{\"command\":\"sleep 0.2; echo A\"}", &oa);
  start_call(b, "c1", "exec", "{\"command\":\"sleep 0.1; echo B\"}", &ob);
  while (oa.n < 1 || ob.n < 1) {
    uv_run(tg_runtime_loop(a), UV_RUN_NOWAIT);
    uv_run(tg_runtime_loop(b), UV_RUN_NOWAIT);
    usleep(2000);
  }
  ASSERT_STR_EQ("A\n", str_at(oa.result, "stdout"));
  ASSERT_STR_EQ("B\n", str_at(ob.result, "stdout"));
  outcome_free(&oa);
  outcome_free(&ob);
  tg_runtime_free(a);
  tg_runtime_free(b);
}

TEST(exec_is_registered_unless_builtins_are_off) {
  tg_config cfg;
  tg_config_init(&cfg);
  cfg.builtin_tools = 0;
  tg_runtime *rt = exec_rt(&cfg);
  outcome o = {0};
  run_exec(rt, "c1", "{\"command\":\"true\"}", &o);
  ASSERT_STATUS(o, TG_STATUS_ERROR);
  ASSERT_STR_EQ("UNKNOWN_TOOL", o.code);
  outcome_free(&o);
  tg_runtime_free(rt);
}

/* ---- the CLI's spinner, on a real terminal (script(1) makes a pty) --------- */

/* Runs a shell command line, returns its output (malloc'd) and status. */
static char *run_capture(const char *cmdline, int *status) {
  FILE *f = popen(cmdline, "r");
  ASSERT_NOT_NULL(f);
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  ASSERT_NOT_NULL(buf);
  size_t k;
  while ((k = fread(buf + n, 1, cap - n - 1, f)) > 0) {
    n += k;
    if (n + 1 == cap) buf = realloc(buf, cap *= 2);
    ASSERT_NOT_NULL(buf);
  }
  buf[n] = '\0';
  *status = pclose(f);
  return buf;
}

static const char *const SLOW_CALL =
    TG_BINARY_DIR "/toolgate call --approve=allow exec "
    "'{\"command\":\"echo working; sleep 1.3\"}'";

TEST(cli_spinner_on_a_terminal) {
  if (system("command -v script >/dev/null 2>&1") != 0) {
    printf("  (pending: script(1) is not installed)\n");
    return;
  }
  int st;
  setenv("TG_SPIN_CMD", SLOW_CALL, 1); /* no quoting inside quoting */
  char *out = run_capture("script -qec 'sh -c \"$TG_SPIN_CMD\"' /dev/null 2>&1",
                          &st);
  /* (no check of script's status: under valgrind its own leaks set it) */
  ASSERT_CONTAINS(out, " exec 0.");            /* frame, tool, elapsed */
  ASSERT_CONTAINS(out, "  working\033[0m");    /* the last line, from the 1 s
                                                  progress heartbeat */
  char *status = strstr(out, "status");
  ASSERT_NOT_NULL(status);
  ASSERT_TRUE(strstr(out, "\r\033[K") < status); /* erased before the outcome */
  ASSERT_NOT_CONTAINS(status, "\r\033[K");       /* and never drawn after it */
  free(out);
}

TEST(cli_no_spinner_without_a_terminal) {
  char cmd[1024];
  int st;
  snprintf(cmd, sizeof cmd, "%s 2>&1 </dev/null | cat", SLOW_CALL);
  char *out = run_capture(cmd, &st);
  ASSERT_CONTAINS(out, "status");
  ASSERT_NOT_CONTAINS(out, "\033[K");
  ASSERT_NOT_CONTAINS(out, " exec 0.");
  free(out);
}

/* Ctrl-C (SIGINT) during `toolgate call exec`: the command is stopped, the
 * partial output printed, exit 1. */
TEST(cli_ctrl_c_cancels_the_command) {
  char *dir = temp_dir(), marker[512], args[1024];
  snprintf(marker, sizeof marker, "%s/started", dir);
  snprintf(args, sizeof args,
           "{\"command\":\"echo partial; touch %s; sleep 100\"}", marker);
  int fds[2];
  ASSERT_OK(pipe(fds));
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 1);
    dup2(fds[1], 2);
    close(fds[0]);
    execl(TG_BINARY_DIR "/toolgate", "toolgate", "call", "--approve=allow",
          "exec", args, (char *)NULL);
    _exit(127);
  }
  close(fds[1]);
  for (int i = 0; i < 3000 && access(marker, F_OK) != 0; i++) usleep(10000);
  ASSERT_OK(access(marker, F_OK));
  kill(pid, SIGINT);
  char out[8192];
  size_t n = 0;
  ssize_t k;
  while (n < sizeof out - 1 && (k = read(fds[0], out + n, sizeof out - 1 - n)) > 0)
    n += (size_t)k;
  out[n] = '\0';
  close(fds[0]);
  int st = 0;
  waitpid(pid, &st, 0);
  ASSERT_TRUE(WIFEXITED(st));
  ASSERT_INT_EQ(1, WEXITSTATUS(st));
  ASSERT_CONTAINS(out, "cancelling the call");
  ASSERT_CONTAINS(out, "cancelled");
  ASSERT_CONTAINS(out, "partial\\n");     /* the command's output, in the result */
  ASSERT_CONTAINS(out, "\"cancelled\": true");
  remove_tree(dir);
}

TEST_MAIN(TEST_ENTRY(stdout_stderr_and_exit_code),
          TEST_ENTRY(nonzero_exit_is_ok_with_exit_code),
          TEST_ENTRY(killed_by_a_signal_reports_its_name),
          TEST_ENTRY(env_merged_over_environment_and_cwd),
          TEST_ENTRY(stdin_is_written_then_closed),
          TEST_ENTRY(large_stdin_does_not_deadlock),
          TEST_ENTRY(output_is_valid_utf8),
          TEST_ENTRY(cap_keeps_head_and_tail_and_marks_the_cut),
          TEST_ENTRY(capture_cuts_at_character_boundaries),
          TEST_ENTRY(capture_last_line),
          TEST_ENTRY(progress_carries_output_before_exit),
          TEST_ENTRY(short_command_emits_no_progress),
          TEST_ENTRY(timeout_kills_grandchildren_and_keeps_partial_output),
          TEST_ENTRY(sigkill_after_the_grace),
          TEST_ENTRY(cancel_kills_grandchildren),
          TEST_ENTRY(leftovers_are_killed_when_the_shell_exits),
          TEST_ENTRY(runtime_free_kills_a_running_command),
          TEST_ENTRY(bad_cwd_is_a_clear_execute_error),
          TEST_ENTRY(bad_args_fail_validation),
          TEST_ENTRY(exec_args_numbers_checked_without_the_schema),
          TEST_ENTRY(two_runtimes_run_commands_side_by_side),
          TEST_ENTRY(exec_is_registered_unless_builtins_are_off),
          TEST_ENTRY(cli_spinner_on_a_terminal),
          TEST_ENTRY(cli_no_spinner_without_a_terminal),
          TEST_ENTRY(cli_ctrl_c_cancels_the_command))
