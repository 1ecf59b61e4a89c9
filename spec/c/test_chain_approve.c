/*
 * test_chain_approve.c — approvals through the C API:
 * an approver that answers later, approve-always for the tool or for the
 * exact args (per session), reject with guidance, the approval timeout,
 * and the non-interactive approve modes.
 */
#include "helpers.h"

/* A runtime (default verdict: ask) with a C tool "write" that is not
 * read-only, so every call to it is asked. */
static tg_runtime *ask_rt(tg_config *cfg) {
  tg_runtime *rt = new_runtime(cfg);
  tg_tool_def d = tool_def("write", echo_start, NULL, NULL);
  d.read_only = 0;
  register_tool(rt, &d);
  return rt;
}

/* Starts a call to "write" with these args and, when it ends at once or
 * after the loop, returns with its outcome in o. */
static void call_write(tg_runtime *rt, const char *session, const char *args,
                       outcome *o) {
  char err[TG_ERRMSG] = "";
  tg_call_request req;
  memset(&req, 0, sizeof req);
  req.tool = "write";
  req.args_json = args;
  req.session = session;
  int rc = tg_call_start(rt, &req, record_outcome, o, err);
  if (rc != 0) TG_FAIL("tg_call_start = %d: %s", rc, err);
  run_until(rt, &o->n, 1);
}

/* ---- answering later --------------------------------------------------- */

static tg_runtime *later_rt_;
static approver *later_a_;
static int later_rc_ = 1;

static void answer_timer_cb(uv_timer_t *t) {
  later_rc_ = tg_approval_answer(later_rt_, later_a_->last_id,
                                 TG_ANSWER_APPROVE, TG_SCOPE_TOOL, NULL);
  uv_close((uv_handle_t *)t, (uv_close_cb)free);
}

static void approver_later_cb(tg_runtime *rt, const tg_approval_request *req,
                              void *ud) {
  approver_cb(rt, req, ud); /* records the request, does not answer */
  later_rt_ = rt;
  later_a_ = ud;
  uv_timer_t *t = malloc(sizeof *t);
  ASSERT_NOT_NULL(t);
  uv_timer_init(tg_runtime_loop(rt), t);
  uv_update_time(tg_runtime_loop(rt));
  uv_timer_start(t, answer_timer_cb, 20, 0);
}

TEST(approval_answered_later_from_timer) {
  tg_runtime *rt = ask_rt(NULL);
  approver a = {0};
  tg_runtime_set_approver(rt, approver_later_cb, &a);
  outcome o = {0};
  start_call(rt, "a1", "write", "{\"path\":\"notes.txt\"}", &o);
  ASSERT_INT_EQ(a.n, 1);
  ASSERT_INT_EQ(o.n, 0);
  ASSERT_INT_EQ(echo_starts, 0);
  ASSERT_TRUE(a.last_id > 0);
  ASSERT_STR_EQ(a.last_call_id, "a1");
  ASSERT_STR_EQ(a.last_tool, "write");
  ASSERT_STR_EQ(a.last_session, "default");
  ASSERT_STR_EQ(str_at(a.last_args, "path"), "notes.txt");
  run_until(rt, &o.n, 1);
  ASSERT_OK(later_rc_);
  ASSERT_INT_EQ(echo_starts, 1);
  ASSERT_CALL_OK(o);
  ASSERT_INT_EQ(o.verdict, TG_VERDICT_ASK);
  ASSERT_TRUE(o.duration_ms >= 15);
  /* answered: a second answer finds nothing waiting */
  ASSERT_INT_EQ(tg_approval_answer(rt, a.last_id, TG_ANSWER_APPROVE,
                                   TG_SCOPE_TOOL, NULL),
                -ENOENT);
  approver_free(&a);
  outcome_free(&o);
  tg_runtime_free(rt);
}

/* ---- approve-always ---------------------------------------------------- */

TEST(approval_always_tool_scope_is_not_asked_again) {
  tg_runtime *rt = ask_rt(NULL);
  approver a = {0};
  a.answer_now = TG_ANSWER_ALWAYS;
  a.scope = TG_SCOPE_TOOL;
  tg_runtime_set_approver(rt, approver_cb, &a);
  outcome o1 = {0}, o2 = {0}, o3 = {0};
  call_write(rt, NULL, "{\"path\":\"a\"}", &o1);
  ASSERT_INT_EQ(a.n, 1);
  ASSERT_CALL_OK(o1);
  call_write(rt, NULL, "{\"path\":\"something else\"}", &o2);
  ASSERT_INT_EQ(a.n, 1); /* the whole tool is covered */
  ASSERT_CALL_OK(o2);
  ASSERT_INT_EQ(echo_starts, 2);
  /* remembered for the session only */
  call_write(rt, "other-session", "{\"path\":\"a\"}", &o3);
  ASSERT_INT_EQ(a.n, 2);
  ASSERT_STR_EQ(a.last_session, "other-session");
  ASSERT_CALL_OK(o3);
  approver_free(&a);
  outcome_free(&o1);
  outcome_free(&o2);
  outcome_free(&o3);
  tg_runtime_free(rt);
}

TEST(approval_always_args_scope_asks_for_other_args) {
  tg_runtime *rt = ask_rt(NULL);
  approver a = {0};
  a.answer_now = TG_ANSWER_ALWAYS;
  a.scope = TG_SCOPE_ARGS;
  tg_runtime_set_approver(rt, approver_cb, &a);
  outcome o1 = {0}, o2 = {0}, o3 = {0};
  call_write(rt, NULL, "{\"path\":\"a\",\"n\":1}", &o1);
  ASSERT_INT_EQ(a.n, 1);
  call_write(rt, NULL, "{\"path\":\"a\",\"n\":1}", &o2);
  ASSERT_INT_EQ(a.n, 1); /* the exact args are covered */
  call_write(rt, NULL, "{\"path\":\"b\",\"n\":1}", &o3);
  ASSERT_INT_EQ(a.n, 2); /* other args are asked again */
  ASSERT_CALL_OK(o1);
  ASSERT_CALL_OK(o2);
  ASSERT_CALL_OK(o3);
  ASSERT_INT_EQ(echo_starts, 3);
  approver_free(&a);
  outcome_free(&o1);
  outcome_free(&o2);
  outcome_free(&o3);
  tg_runtime_free(rt);
}

TEST(approval_always_args_scope_ignores_key_order) {
  /* "these exact args": the same object, whatever order its keys come in
   * (approve.c keeps a "canonical JSON text" of them) */
  tg_runtime *rt = ask_rt(NULL);
  approver a = {0};
  a.answer_now = TG_ANSWER_ALWAYS;
  a.scope = TG_SCOPE_ARGS;
  tg_runtime_set_approver(rt, approver_cb, &a);
  outcome o1 = {0}, o2 = {0};
  call_write(rt, NULL, "{\"path\":\"a\",\"n\":1}", &o1);
  ASSERT_INT_EQ(a.n, 1);
  call_write(rt, NULL, "{\"n\":1,\"path\":\"a\"}", &o2);
  ASSERT_INT_EQ(a.n, 1);
  ASSERT_CALL_OK(o2);
  approver_free(&a);
  outcome_free(&o1);
  outcome_free(&o2);
  tg_runtime_free(rt);
}

/* ---- reject ------------------------------------------------------------ */

TEST(approval_reject_with_guidance) {
  tg_runtime *rt = ask_rt(NULL);
  approver a = {0};
  a.answer_now = TG_ANSWER_REJECT;
  a.guidance = "write to the staging copy instead";
  tg_runtime_set_approver(rt, approver_cb, &a);
  outcome o = {0};
  call_write(rt, NULL, "{\"path\":\"prod.db\"}", &o);
  ASSERT_INT_EQ(a.n, 1);
  ASSERT_INT_EQ(echo_starts, 0);
  ASSERT_STATUS(o, TG_STATUS_REJECTED);
  ASSERT_INT_EQ(o.phase, TG_PHASE_APPROVE);
  ASSERT_STR_EQ(o.code, "REJECTED");
  ASSERT_CONTAINS(o.message, "did not run");
  ASSERT_CONTAINS(o.message, "write to the staging copy instead");
  ASSERT_NULL(o.result);
  approver_free(&a);
  outcome_free(&o);
  tg_runtime_free(rt);
}

TEST(approval_timeout_rejects) {
  tg_config cfg;
  tg_config_init(&cfg);
  cfg.approval_timeout_ms = 30;
  tg_runtime *rt = ask_rt(&cfg);
  approver a = {0}; /* never answers */
  tg_runtime_set_approver(rt, approver_cb, &a);
  outcome o = {0};
  call_write(rt, NULL, "{}", &o);
  ASSERT_INT_EQ(a.n, 1);
  ASSERT_INT_EQ(echo_starts, 0);
  ASSERT_STATUS(o, TG_STATUS_REJECTED);
  ASSERT_INT_EQ(o.phase, TG_PHASE_APPROVE);
  ASSERT_CONTAINS(o.message, "did not run");
  ASSERT_TRUE(o.duration_ms >= 25);
  /* an answer after the timeout is ignored */
  ASSERT_INT_EQ(tg_approval_answer(rt, a.last_id, TG_ANSWER_APPROVE,
                                   TG_SCOPE_TOOL, NULL),
                -ENOENT);
  tg_runtime_run(rt, TG_RUN_DEFAULT);
  ASSERT_INT_EQ(echo_starts, 0);
  ASSERT_INT_EQ(o.n, 1);
  approver_free(&a);
  outcome_free(&o);
  tg_runtime_free(rt);
}

/* ---- cancel from inside the approver ---------------------------------- */

static int cancel_in_approver_rc = 1;
static void approver_cancels_cb(tg_runtime *rt, const tg_approval_request *req,
                                void *ud) {
  approver_cb(rt, req, ud); /* records, does not answer */
  cancel_in_approver_rc = tg_call_cancel(rt, req->call_id);
}

TEST(approval_cancel_from_inside_approver_callback) {
  /* an approver that gives up at once (a dismissed prompt) cancels the
   * call from inside its callback: the call ends cancelled, it does not
   * sit until the approval timeout */
  tg_config cfg;
  tg_config_init(&cfg);
  cfg.approval_timeout_ms = 60000; /* far beyond any loaded machine */
  tg_runtime *rt = ask_rt(&cfg);
  approver a = {0};
  tg_runtime_set_approver(rt, approver_cancels_cb, &a);
  outcome o = {0};
  call_write(rt, NULL, "{}", &o);
  ASSERT_INT_EQ(a.n, 1);
  ASSERT_OK(cancel_in_approver_rc);
  ASSERT_INT_EQ(echo_starts, 0);
  if (o.status != TG_STATUS_CANCELLED)
    TG_FAIL("ended %s after %.0f ms (%s), not cancelled",
            tg_status_name(o.status), o.duration_ms, o.message);
  ASSERT_INT_EQ(o.phase, TG_PHASE_CANCEL);
  ASSERT_TRUE(o.duration_ms < 30000); /* not at the approval timeout */
  ASSERT_INT_EQ(tg_approval_answer(rt, a.last_id, TG_ANSWER_APPROVE,
                                   TG_SCOPE_TOOL, NULL),
                -ENOENT);
  approver_free(&a);
  outcome_free(&o);
  tg_runtime_free(rt);
}

/* ---- non-interactive modes ---------------------------------------------- */

TEST(approve_mode_allow_approves_without_asking) {
  tg_config cfg;
  tg_config_init(&cfg);
  cfg.approve_mode = TG_APPROVE_ALLOW;
  tg_runtime *rt = ask_rt(&cfg);
  approver a = {0};
  tg_runtime_set_approver(rt, approver_cb, &a); /* the mode wins */
  outcome o = {0};
  call_write(rt, NULL, "{}", &o);
  ASSERT_INT_EQ(a.n, 0);
  ASSERT_CALL_OK(o);
  ASSERT_INT_EQ(echo_starts, 1);
  /* switched at run time */
  tg_runtime_set_approve_mode(rt, TG_APPROVE_DENY);
  outcome o2 = {0};
  call_write(rt, NULL, "{}", &o2);
  ASSERT_INT_EQ(a.n, 0);
  ASSERT_STATUS(o2, TG_STATUS_REJECTED);
  ASSERT_INT_EQ(echo_starts, 1);
  approver_free(&a);
  outcome_free(&o);
  outcome_free(&o2);
  tg_runtime_free(rt);
}

TEST(approve_mode_deny_rejects_without_asking) {
  tg_config cfg;
  tg_config_init(&cfg);
  cfg.approve_mode = TG_APPROVE_DENY;
  tg_runtime *rt = ask_rt(&cfg);
  approver a = {0};
  a.answer_now = TG_ANSWER_APPROVE;
  tg_runtime_set_approver(rt, approver_cb, &a);
  outcome o = {0};
  call_write(rt, NULL, "{}", &o);
  ASSERT_INT_EQ(a.n, 0);
  ASSERT_INT_EQ(echo_starts, 0);
  ASSERT_STATUS(o, TG_STATUS_REJECTED);
  ASSERT_INT_EQ(o.phase, TG_PHASE_APPROVE);
  ASSERT_CONTAINS(o.message, "did not run");
  approver_free(&a);
  outcome_free(&o);
  tg_runtime_free(rt);
}

TEST(approval_with_no_approver_rejects) {
  tg_runtime *rt = ask_rt(NULL); /* callback mode, no approver set */
  outcome o = {0};
  call_write(rt, NULL, "{}", &o);
  ASSERT_INT_EQ(echo_starts, 0);
  ASSERT_STATUS(o, TG_STATUS_REJECTED);
  ASSERT_INT_EQ(o.phase, TG_PHASE_APPROVE);
  outcome_free(&o);
  tg_runtime_free(rt);
}

TEST_MAIN(TEST_ENTRY(approval_answered_later_from_timer),
          TEST_ENTRY(approval_always_tool_scope_is_not_asked_again),
          TEST_ENTRY(approval_always_args_scope_asks_for_other_args),
          TEST_ENTRY(approval_always_args_scope_ignores_key_order),
          TEST_ENTRY(approval_reject_with_guidance),
          TEST_ENTRY(approval_timeout_rejects),
          TEST_ENTRY(approval_cancel_from_inside_approver_callback),
          TEST_ENTRY(approve_mode_allow_approves_without_asking),
          TEST_ENTRY(approve_mode_deny_rejects_without_asking),
          TEST_ENTRY(approval_with_no_approver_rejects))
