/*
 * test_chain_tools.c — C tools through the public API (include/toolgate.h):
 * finishing now or later, retries, progress, timeouts with and without a
 * cancel function, and cancelling a call by id.
 */
#include "helpers.h"

/* ---- finishing -------------------------------------------------------- */

TEST(ctool_finishes_inside_start) {
  tg_config cfg = config_allowing();
  cfg.db_off = 1; /* with storage on, done waits for the audit record */
  tg_runtime *rt = new_runtime(&cfg);
  tg_tool_def d = tool_def("echo", echo_start, NULL, NULL);
  register_tool(rt, &d);
  outcome o = {0};
  start_call(rt, "c1", "echo", "{\"x\":1}", &o);
  /* a tool that finishes inside start ends the call before start returns */
  ASSERT_INT_EQ(o.n, 1);
  ASSERT_INT_EQ(echo_starts, 1);
  ASSERT_CALL_OK(o);
  ASSERT_INT_EQ(o.phase, TG_PHASE_NONE);
  ASSERT_STR_EQ(o.id, "c1");
  ASSERT_STR_EQ(o.tool, "echo");
  ASSERT_INT_EQ(o.attempts, 1);
  ASSERT_NOT_NULL(o.result);
  const cJSON *echo = cJSON_GetObjectItemCaseSensitive(o.result, "echo");
  ASSERT_NUM_EQ(num_at(echo, "x"), 1);
  tg_runtime_run(rt, TG_RUN_DEFAULT);
  ASSERT_INT_EQ(o.n, 1);
  outcome_free(&o);
  tg_runtime_free(rt);
}

TEST(ctool_finishes_later_from_timer) {
  tg_config cfg = config_allowing();
  tg_runtime *rt = new_runtime(&cfg);
  slow_tool s = {0};
  s.delay_ms = 20;
  tg_tool_def d = tool_def("slow", slow_start, NULL, &s);
  register_tool(rt, &d);
  outcome o = {0};
  start_call(rt, NULL, "slow", NULL, &o);
  ASSERT_INT_EQ(o.n, 0);
  ASSERT_INT_EQ(s.starts, 1);
  run_until(rt, &o.n, 1);
  ASSERT_CALL_OK(o);
  ASSERT_STR_EQ(str_at(o.result, "done"), "late or not");
  ASSERT_STR_EQ(o.id, "call-1");
  ASSERT_TRUE(o.duration_ms >= 15);
  slow_close(rt, &s);
  outcome_free(&o);
  tg_runtime_free(rt);
}

/* ---- retry ------------------------------------------------------------ */

typedef struct {
  int starts;
  int attempts_seen[8];
  int succeed_on;          /* attempt that succeeds; 0: never */
  int fatal;               /* fail with retryable = 0 */
} flaky_tool;

static void flaky_start(tg_exec *ex, const cJSON *args, void *ud) {
  (void)args;
  flaky_tool *f = ud;
  if (f->starts < 8) f->attempts_seen[f->starts] = tg_exec_attempt(ex);
  f->starts++;
  if (f->succeed_on && tg_exec_attempt(ex) == f->succeed_on) {
    cJSON *r = cJSON_CreateObject();
    cJSON_AddNumberToObject(r, "attempt", tg_exec_attempt(ex));
    tg_exec_finish_ok(ex, r);
    return;
  }
  if (f->fatal)
    tg_exec_finish_error(ex, NULL, "FATAL", "bad input", 0);
  else
    tg_exec_finish_error(ex, NULL, "FLAKY", "upstream hiccup", 1);
}

static tg_tool_def flaky_def(flaky_tool *f) {
  tg_tool_def d = tool_def("flaky", flaky_start, NULL, f);
  d.retry_attempts = 3;
  d.retry_initial_ms = 5;
  d.retry_max_ms = 20;
  d.retry_multiplier = 2;
  return d;
}

TEST(ctool_retryable_error_uses_all_attempts) {
  tg_config cfg = config_allowing();
  tg_runtime *rt = new_runtime(&cfg);
  flaky_tool f = {0};
  tg_tool_def d = flaky_def(&f);
  register_tool(rt, &d);
  event_log ev = {0};
  tg_events_subscribe(rt, log_event, &ev);
  outcome o = {0};
  start_call(rt, "r1", "flaky", NULL, &o);
  run_until(rt, &o.n, 1);
  ASSERT_INT_EQ(f.starts, 3);
  ASSERT_INT_EQ(f.attempts_seen[0], 1);
  ASSERT_INT_EQ(f.attempts_seen[1], 2);
  ASSERT_INT_EQ(f.attempts_seen[2], 3);
  ASSERT_INT_EQ(o.attempts, 3);
  ASSERT_STATUS(o, TG_STATUS_ERROR);
  ASSERT_INT_EQ(o.phase, TG_PHASE_EXECUTE);
  ASSERT_STR_EQ(o.code, "FLAKY");
  ASSERT_CONTAINS(o.message, "upstream hiccup");
  ASSERT_INT_EQ(o.retryable, 1);
  ASSERT_INT_EQ(count_events(&ev, "attempt", "r1"), 3);
  ASSERT_INT_EQ(count_events(&ev, "retry", "r1"), 2);
  tg_runtime_run(rt, TG_RUN_DEFAULT);
  ASSERT_INT_EQ(f.starts, 3);
  ASSERT_INT_EQ(o.n, 1);
  outcome_free(&o);
  event_log_free(&ev);
  tg_runtime_free(rt);
}

TEST(ctool_retry_then_success) {
  tg_config cfg = config_allowing();
  tg_runtime *rt = new_runtime(&cfg);
  flaky_tool f = {0};
  f.succeed_on = 2;
  tg_tool_def d = flaky_def(&f);
  register_tool(rt, &d);
  outcome o = {0};
  start_call(rt, NULL, "flaky", NULL, &o);
  run_until(rt, &o.n, 1);
  ASSERT_INT_EQ(f.starts, 2);
  ASSERT_INT_EQ(o.attempts, 2);
  ASSERT_CALL_OK(o);
  ASSERT_INT_EQ(o.phase, TG_PHASE_NONE);
  ASSERT_NUM_EQ(num_at(o.result, "attempt"), 2);
  outcome_free(&o);
  tg_runtime_free(rt);
}

TEST(ctool_non_retryable_error_is_not_retried) {
  tg_config cfg = config_allowing();
  tg_runtime *rt = new_runtime(&cfg);
  flaky_tool f = {0};
  f.fatal = 1;
  tg_tool_def d = flaky_def(&f);
  register_tool(rt, &d);
  outcome o = {0};
  start_call(rt, NULL, "flaky", NULL, &o);
  run_until(rt, &o.n, 1);
  ASSERT_INT_EQ(f.starts, 1);
  ASSERT_INT_EQ(o.attempts, 1);
  ASSERT_STATUS(o, TG_STATUS_ERROR);
  ASSERT_INT_EQ(o.phase, TG_PHASE_EXECUTE);
  ASSERT_STR_EQ(o.code, "FATAL");
  ASSERT_INT_EQ(o.retryable, 0);
  outcome_free(&o);
  tg_runtime_free(rt);
}

/* ---- progress --------------------------------------------------------- */

/* A long tool that reports its own progress twice and ends only once
 * the runtime's periodic progress has been seen five times: what is
 * tested is that progress comes while it runs, not how many ticks fit in
 * a span of time on a loaded machine (10 s without five is a failure). */
typedef struct {
  tg_exec *ex;
  uv_timer_t step, end;
  const event_log *log; /* the runtime's events */
  int stepped, polls;
} progress_tool;

static void progress_step_cb(uv_timer_t *t) {
  progress_tool *p = t->data;
  tg_exec_progress(p->ex, 3, 4, "three of four");
  p->stepped = 1;
}

static void progress_end_cb(uv_timer_t *t) {
  progress_tool *p = t->data;
  if (!p->ex) return;
  if ((!p->stepped || count_events(p->log, "progress", "p1") < 5) &&
      ++p->polls < 1000)
    return; /* polled every 10 ms */
  uv_timer_stop(t);
  cJSON *r = cJSON_CreateObject();
  cJSON_AddBoolToObject(r, "ok", 1);
  tg_exec_finish_ok(p->ex, r);
  p->ex = NULL;
}

static void progress_start(tg_exec *ex, const cJSON *args, void *ud) {
  (void)args;
  progress_tool *p = ud;
  uv_loop_t *loop = tg_runtime_loop(tg_exec_runtime(ex));
  p->ex = ex;
  uv_timer_init(loop, &p->step);
  uv_timer_init(loop, &p->end);
  p->step.data = p->end.data = p;
  tg_exec_progress(ex, 1, 4, "one of four");
  uv_update_time(loop);
  uv_timer_start(&p->step, progress_step_cb, 100, 0);
  uv_timer_start(&p->end, progress_end_cb, 10, 10);
}

TEST(ctool_progress_events_while_running) {
  tg_config cfg = config_allowing();
  cfg.progress_interval_ms = 20;
  tg_runtime *rt = new_runtime(&cfg);
  progress_tool p;
  memset(&p, 0, sizeof p);
  tg_tool_def d = tool_def("long", progress_start, NULL, &p);
  register_tool(rt, &d);
  event_log ev = {0};
  tg_events_subscribe(rt, log_event, &ev);
  p.log = &ev;
  outcome o = {0};
  start_call(rt, "p1", "long", NULL, &o);
  run_until(rt, &o.n, 1);
  ASSERT_CALL_OK(o);
  int n = count_events(&ev, "progress", "p1");
  if (n < 5) TG_FAIL("expected >= 5 progress events while it ran, got %d", n);
  int first = -1, last = -1, start = -1, end = -1;
  for (int i = 0; i < ev.n; i++) {
    if (!strcmp(ev.ev[i].type, "call_start")) start = i;
    if (!strcmp(ev.ev[i].type, "call_end")) end = i;
    if (strcmp(ev.ev[i].type, "progress")) continue;
    ASSERT_STR_EQ(ev.ev[i].call_id, "p1");
    ASSERT_TRUE(num_at(ev.ev[i].data, "current") >= 1);
    ASSERT_NUM_EQ(num_at(ev.ev[i].data, "total"), 4);
    ASSERT_TRUE(str_at(ev.ev[i].data, "message"));
    if (first < 0) first = i;
    last = i;
  }
  ASSERT_TRUE(start >= 0 && start < first && last < end);
  ASSERT_NUM_EQ(num_at(ev.ev[first].data, "current"), 1);
  ASSERT_STR_EQ(str_at(ev.ev[first].data, "message"), "one of four");
  ASSERT_NUM_EQ(num_at(ev.ev[last].data, "current"), 3);
  ASSERT_STR_EQ(str_at(ev.ev[last].data, "message"), "three of four");
  uv_close((uv_handle_t *)&p.step, NULL);
  uv_close((uv_handle_t *)&p.end, NULL);
  uv_run(tg_runtime_loop(rt), UV_RUN_NOWAIT);
  outcome_free(&o);
  event_log_free(&ev);
  tg_runtime_free(rt);
}

TEST(ctool_short_tool_emits_no_progress) {
  tg_config cfg = config_allowing();
  cfg.progress_interval_ms = 20;
  tg_runtime *rt = new_runtime(&cfg);
  tg_tool_def d = tool_def("echo", echo_start, NULL, NULL);
  register_tool(rt, &d);
  slow_tool s = {0};
  s.delay_ms = 0; /* set below: finishes on the next loop turn */
  tg_tool_def d2 = tool_def("quick", slow_start, NULL, &s);
  register_tool(rt, &d2);
  event_log ev = {0};
  tg_events_subscribe(rt, log_event, &ev);
  outcome a = {0}, b = {0};
  start_call(rt, NULL, "echo", NULL, &a);
  s.delay_ms = 1; /* a 1 ms timer: the tool takes about 1 ms */
  start_call(rt, NULL, "quick", NULL, &b);
  run_until(rt, &b.n, 1);
  run_for(rt, 60); /* no heartbeat may fire after the end either */
  ASSERT_CALL_OK(a);
  ASSERT_CALL_OK(b);
  ASSERT_INT_EQ(count_events(&ev, "progress", NULL), 0);
  slow_close(rt, &s);
  outcome_free(&a);
  outcome_free(&b);
  event_log_free(&ev);
  tg_runtime_free(rt);
}

/* ---- timeout ---------------------------------------------------------- */

TEST(timeout_calls_cancel_fn_and_keeps_partial) {
  tg_config cfg = config_allowing();
  tg_runtime *rt = new_runtime(&cfg);
  slow_tool s = {0};
  s.cancel_finishes = 1; /* never finishes on its own */
  tg_tool_def d = tool_def("hang", slow_start, slow_cancel, &s);
  d.timeout_ms = 30;
  register_tool(rt, &d);
  outcome o = {0};
  start_call(rt, NULL, "hang", NULL, &o);
  run_until(rt, &o.n, 1);
  ASSERT_INT_EQ(s.cancels, 1);
  ASSERT_STATUS(o, TG_STATUS_TIMEOUT);
  ASSERT_INT_EQ(o.phase, TG_PHASE_TIMEOUT);
  ASSERT_STR_EQ(o.code, "TIMEOUT");
  ASSERT_INT_EQ(o.attempts, 1);
  ASSERT_NOT_NULL(o.result);
  ASSERT_NUM_EQ(num_at(o.result, "lines_so_far"), 2);
  ASSERT_TRUE(o.duration_ms >= 25);
  tg_runtime_run(rt, TG_RUN_DEFAULT);
  ASSERT_INT_EQ(s.cancels, 1);
  ASSERT_INT_EQ(o.n, 1);
  outcome_free(&o);
  tg_runtime_free(rt);
}

TEST(timeout_without_cancel_fn_drops_late_result) {
  tg_config cfg = config_allowing();
  tg_runtime *rt = new_runtime(&cfg);
  slow_tool s = {0};
  /* finishes long after its 30 ms timeout: long enough that the outcome
   * (after the audit commit, slow under valgrind on a busy machine) still
   * comes first */
  s.delay_ms = 1000;
  tg_tool_def d = tool_def("stubborn", slow_start, NULL, &s);
  d.timeout_ms = 30;
  register_tool(rt, &d);
  outcome o = {0};
  start_call(rt, "late-1", "stubborn", NULL, &o);
  run_until(rt, &o.n, 1);
  ASSERT_INT_EQ(s.late_finished, 0); /* the outcome did not wait for the tool */
  ASSERT_STATUS(o, TG_STATUS_TIMEOUT);
  ASSERT_INT_EQ(o.phase, TG_PHASE_TIMEOUT);
  ASSERT_NULL(o.result);
  run_until(rt, &s.late_finished, 1);
  ASSERT_STR_EQ(s.late_call_id, "late-1");
  tg_runtime_run(rt, TG_RUN_DEFAULT);
  ASSERT_INT_EQ(o.n, 1);
  ASSERT_STATUS(o, TG_STATUS_TIMEOUT);
  slow_close(rt, &s);
  outcome_free(&o);
  tg_runtime_free(rt);
}

/* ---- cancel ----------------------------------------------------------- */

static tg_runtime *cancel_rt_;
static const char *cancel_id_;
static int cancel_rc_ = 1;
static void cancel_timer_cb(uv_timer_t *t) {
  cancel_rc_ = tg_call_cancel(cancel_rt_, cancel_id_);
  uv_close((uv_handle_t *)t, (uv_close_cb)free);
}

/* Cancels call id from a timer after ms. */
static void cancel_later(tg_runtime *rt, const char *id, uint64_t ms) {
  uv_timer_t *t = malloc(sizeof *t);
  ASSERT_NOT_NULL(t);
  cancel_rt_ = rt;
  cancel_id_ = id;
  uv_timer_init(tg_runtime_loop(rt), t);
  uv_update_time(tg_runtime_loop(rt));
  uv_timer_start(t, cancel_timer_cb, ms, 0);
}

TEST(cancel_running_call_keeps_partial) {
  tg_config cfg = config_allowing();
  tg_runtime *rt = new_runtime(&cfg);
  slow_tool s = {0};
  s.cancel_finishes = 1;
  tg_tool_def d = tool_def("hang", slow_start, slow_cancel, &s);
  register_tool(rt, &d);
  outcome o = {0};
  start_call(rt, "k1", "hang", NULL, &o);
  cancel_later(rt, "k1", 20);
  run_until(rt, &o.n, 1);
  ASSERT_OK(cancel_rc_);
  ASSERT_INT_EQ(s.cancels, 1);
  ASSERT_STATUS(o, TG_STATUS_CANCELLED);
  ASSERT_INT_EQ(o.phase, TG_PHASE_CANCEL);
  ASSERT_NOT_NULL(o.result);
  ASSERT_NUM_EQ(num_at(o.result, "lines_so_far"), 2);
  ASSERT_INT_EQ(o.attempts, 1);
  /* the call has ended: it can no longer be cancelled */
  ASSERT_INT_EQ(tg_call_cancel(rt, "k1"), -ENOENT);
  tg_runtime_run(rt, TG_RUN_DEFAULT);
  ASSERT_INT_EQ(o.n, 1);
  outcome_free(&o);
  tg_runtime_free(rt);
}

TEST(cancel_running_call_without_cancel_fn) {
  tg_config cfg = config_allowing();
  tg_runtime *rt = new_runtime(&cfg);
  slow_tool s = {0};
  s.delay_ms = 1000; /* the cancelled outcome comes long before */
  tg_tool_def d = tool_def("stubborn", slow_start, NULL, &s);
  register_tool(rt, &d);
  outcome o = {0};
  start_call(rt, "k2", "stubborn", NULL, &o);
  cancel_later(rt, "k2", 20);
  run_until(rt, &o.n, 1);
  ASSERT_OK(cancel_rc_);
  ASSERT_INT_EQ(s.late_finished, 0);
  ASSERT_STATUS(o, TG_STATUS_CANCELLED);
  ASSERT_INT_EQ(o.phase, TG_PHASE_CANCEL);
  run_until(rt, &s.late_finished, 1); /* the late result is dropped */
  tg_runtime_run(rt, TG_RUN_DEFAULT);
  ASSERT_INT_EQ(o.n, 1);
  slow_close(rt, &s);
  outcome_free(&o);
  tg_runtime_free(rt);
}

TEST(cancel_during_retry_backoff_stops_retrying) {
  tg_config cfg = config_allowing();
  tg_runtime *rt = new_runtime(&cfg);
  flaky_tool f = {0};
  tg_tool_def d = flaky_def(&f);
  d.retry_initial_ms = 20000; /* a long back-off to cancel in */
  d.retry_max_ms = 20000;
  register_tool(rt, &d);
  outcome o = {0};
  start_call(rt, "k3", "flaky", NULL, &o);
  ASSERT_INT_EQ(f.starts, 1);
  ASSERT_INT_EQ(o.n, 0); /* waiting out the back-off */
  cancel_later(rt, "k3", 20);
  run_until(rt, &o.n, 1);
  ASSERT_OK(cancel_rc_);
  ASSERT_STATUS(o, TG_STATUS_CANCELLED);
  ASSERT_INT_EQ(o.phase, TG_PHASE_CANCEL);
  ASSERT_INT_EQ(o.attempts, 1);
  ASSERT_TRUE(o.duration_ms < 19000); /* not after the back-off */
  tg_runtime_run(rt, TG_RUN_DEFAULT);
  ASSERT_INT_EQ(f.starts, 1); /* never retried after the cancel */
  outcome_free(&o);
  tg_runtime_free(rt);
}

TEST(cancel_unknown_id_is_enoent) {
  tg_runtime *rt = new_runtime(NULL);
  ASSERT_INT_EQ(tg_call_cancel(rt, "no-such-call"), -ENOENT);
  ASSERT_INT_EQ(tg_call_cancel(rt, NULL), -ENOENT);
  tg_runtime_free(rt);
}

TEST(cancel_while_waiting_for_approval) {
  tg_runtime *rt = new_runtime(NULL); /* default verdict: ask */
  tg_tool_def d = tool_def("write", echo_start, NULL, NULL);
  d.read_only = 0;
  register_tool(rt, &d);
  approver a = {0}; /* never answers */
  tg_runtime_set_approver(rt, approver_cb, &a);
  outcome o = {0};
  start_call(rt, "w1", "write", "{\"path\":\"x\"}", &o);
  ASSERT_INT_EQ(a.n, 1);
  ASSERT_INT_EQ(o.n, 0);
  uint64_t id = a.last_id;
  ASSERT_TRUE(id > 0);
  ASSERT_OK(tg_call_cancel(rt, "w1"));
  run_until(rt, &o.n, 1);
  ASSERT_STATUS(o, TG_STATUS_CANCELLED);
  ASSERT_INT_EQ(o.phase, TG_PHASE_CANCEL);
  ASSERT_INT_EQ(echo_starts, 0);
  ASSERT_INT_EQ(tg_approval_answer(rt, id, TG_ANSWER_APPROVE, TG_SCOPE_TOOL,
                                   NULL),
                -ENOENT);
  tg_runtime_run(rt, TG_RUN_DEFAULT); /* no approval timer left behind */
  ASSERT_INT_EQ(echo_starts, 0);
  ASSERT_INT_EQ(o.n, 1);
  approver_free(&a);
  outcome_free(&o);
  tg_runtime_free(rt);
}

TEST_MAIN(TEST_ENTRY(ctool_finishes_inside_start),
          TEST_ENTRY(ctool_finishes_later_from_timer),
          TEST_ENTRY(ctool_retryable_error_uses_all_attempts),
          TEST_ENTRY(ctool_retry_then_success),
          TEST_ENTRY(ctool_non_retryable_error_is_not_retried),
          TEST_ENTRY(ctool_progress_events_while_running),
          TEST_ENTRY(ctool_short_tool_emits_no_progress),
          TEST_ENTRY(timeout_calls_cancel_fn_and_keeps_partial),
          TEST_ENTRY(timeout_without_cancel_fn_drops_late_result),
          TEST_ENTRY(cancel_running_call_keeps_partial),
          TEST_ENTRY(cancel_running_call_without_cancel_fn),
          TEST_ENTRY(cancel_during_retry_backoff_stops_retrying),
          TEST_ENTRY(cancel_unknown_id_is_enoent),
          TEST_ENTRY(cancel_while_waiting_for_approval))
