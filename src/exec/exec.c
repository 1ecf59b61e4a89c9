/*
 * exec.c — one attempt of a tool: its deadline (timeout stage), its
 * progress heartbeat (progress stage), and the hand-off to the executor
 * (C tool or Lua tool). The executor ends the attempt exactly once; a
 * timeout or cancel asks it to stop for real and keeps what it produced.
 *
 * Ownership: execute.c allocates the tg_exec and calls tg__exec_release
 * when it has taken the outcome. A C tool without a cancel function may
 * finish after that (it cannot be stopped): the struct then stays alive,
 * detached from its call, until the tool calls tg_exec_finish_*.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "exec.h"
#include "core/progress.h"
#include "base/util.h"
#include "proc/process.h"

void tg__exec_maybe_free(tg_exec *ex) {
  if (!ex->released || ex->closer.closing || ex->nested) return;
  if (ex->kind == TG_TOOL_C && !ex->tool_finished) return;
  cJSON_Delete(ex->result);
  tg__err_clear(&ex->error);
  free(ex->progress_message);
  free(ex->own_call_id);
  tg__generation_unref(ex->gen);
  free(ex);
}

static void timers_closed(tg_closer *c) {
  tg__exec_maybe_free(tg__owner_of(c, tg_exec, closer));
}

void tg__exec_close_timer(tg_exec *ex, uv_timer_t **t) {
  if (!*t) return;
  tg__close(&ex->closer, (uv_handle_t *)*t, 1);
  *t = NULL;
}

/* ---- progress --------------------------------------------------------- */

static void add_progress(tg_exec *ex, cJSON *d);

/* The heartbeat: a progress event, and the progress manager's item for
 * the call (core/progress.h). */
static void heartbeat(tg_exec *ex) {
  cJSON *d = tg__event_data_to(ex->core, ex->gen, ex->listen);
  if (d) add_progress(ex, d);
  tg__emit_to(ex->core, ex->gen, "progress", ex->call_id, d, ex->listen);
  if (!ex->finished && ex->owner)
    tg__progress_of_call(ex->core, ex->call_id, ex->tool->name,
                         ex->progress_current, ex->progress_total,
                         ex->progress_message);
}

static void add_progress(tg_exec *ex, cJSON *d) {
  cJSON_AddNumberToObject(d, "attempt", ex->attempt);
  cJSON_AddNumberToObject(d, "elapsed_ms", tg__now_ms() - ex->start_ms);
  if (ex->progress_current >= 0)
    cJSON_AddNumberToObject(d, "current", ex->progress_current);
  if (ex->progress_total >= 0)
    cJSON_AddNumberToObject(d, "total", ex->progress_total);
  if (ex->progress_message)
    cJSON_AddStringToObject(d, "message", ex->progress_message);
  if (ex->progress_output) { /* the same, named for what they are */
    cJSON_AddNumberToObject(d, "bytes", ex->progress_current);
    cJSON_AddStringToObject(d, "last_line",
                            ex->progress_message ? ex->progress_message : "");
  }
}

void tg_exec_progress(tg_exec *ex, double current, double total,
                      const char *message) {
  if (!ex || ex->finished) return;
  ex->progress_current = current;
  ex->progress_total = total;
  if (message) {
    char *m = tg__strdup(message);
    if (m) {
      free(ex->progress_message);
      ex->progress_message = m;
    }
  }
}

/* ---- deadline and heartbeat: one timer -------------------------------- */

static uint64_t timeout_of(const tg_exec *ex) {
  if (ex->timeout_ms) return ex->timeout_ms;
  return ex->tool->timeout_ms ? ex->tool->timeout_ms : ex->core->cfg.timeout_ms;
}

static void timer_cb(uv_timer_t *t);

/* The timer, for whichever is due first: the deadline (until it has
 * passed) or the next heartbeat. */
static void arm(tg_exec *ex) {
  uint64_t now = uv_now(ex->core->loop);
  uint64_t due = ex->beat_at;
  if (!ex->timed_out && ex->deadline_at < due) due = ex->deadline_at;
  /* UINT64_MAX: never (libuv keeps such a timer, and the loop, alive, as
   * the two timers were) */
  uv_timer_start(ex->timer, timer_cb,
                 due == UINT64_MAX ? UINT64_MAX : due > now ? due - now : 0, 0);
}

/* now + ms, UINT64_MAX when that is past the clock's end (as libuv
 * clamps a timer's due time). */
static uint64_t after(uint64_t now, uint64_t ms) {
  return now + ms < now ? UINT64_MAX : now + ms;
}

/* The deadline first, as its own timer did when both were due: the
 * attempt is stopped (timed out); while it has not finished, heartbeats
 * go on, every progress_interval_ms from the last. */
static void timer_cb(uv_timer_t *t) {
  tg_exec *ex = t->data;
  if (ex->finished) return;
  uint64_t now = uv_now(ex->core->loop);
  int beat = now >= ex->beat_at;
  if (beat) {
    uint64_t every = ex->core->cfg.progress_interval_ms;
    ex->beat_at = every ? after(now, every) : UINT64_MAX;
  }
  if (!ex->timed_out && now >= ex->deadline_at) {
    ex->timed_out = 1;
    tg__exec_cancel(ex);
    if (ex->finished) return;
  }
  arm(ex);
  if (beat && ex->owner) heartbeat(ex);
}

/* The deadline and the heartbeat are armed only for a tool that did not
 * finish inside its start function: most tools in a hot loop do. One
 * timer serves both (a timer is an allocation, a handle to close and two
 * heap operations: per attempt, it showed in the gateway's own work). The
 * deadline still counts from the attempt's start. */
void tg__exec_start(tg_exec *ex, const cJSON *args) {
  ex->start_ms = tg__now_ms();
  ex->progress_current = ex->progress_total = -1;
  if (ex->tool->kind == TG_TOOL_LUA) tg__luatool_start(ex, args);
  else ex->tool->start(ex, args, ex->tool->ud);
  if (ex->finished || ex->cancelled) return;
  uv_update_time(ex->core->loop); /* timers count from the loop's clock */
  uint64_t now = uv_now(ex->core->loop);
  uint64_t elapsed = (uint64_t)(tg__now_ms() - ex->start_ms);
  uint64_t limit = timeout_of(ex);
  ex->deadline_at = after(now, elapsed < limit ? limit - elapsed : 0);
  ex->beat_at = after(now, ex->core->cfg.progress_interval_ms);
  if (!(ex->timer = malloc(sizeof *ex->timer))) return;
  uv_timer_init(ex->core->loop, ex->timer);
  ex->timer->data = ex;
  arm(ex);
}

/* ---- stopping ----------------------------------------------------------- */

/* The attempt's error when it was stopped: TIMEOUT or CANCEL. */
void tg__exec_stop_error(tg_exec *ex, const char *detail) {
  tg__err_clear(&ex->error);
  if (ex->timed_out) {
    ex->error.phase = TG_PHASE_TIMEOUT;
    ex->error.code = tg__strdup(tg_error_code_name(TG_E_TIMEOUT));
    char m[256];
    snprintf(m, sizeof m, "the tool ran past its timeout of %llu ms and was "
             "stopped%s", (unsigned long long)timeout_of(ex), detail);
    ex->error.message = tg__strdup(m);
    ex->error.retryable = 1;
  } else {
    ex->error.phase = TG_PHASE_CANCEL;
    ex->error.code = tg__strdup(tg_error_code_name(TG_E_CANCELLED));
    char m[256];
    snprintf(m, sizeof m, "the call was cancelled while the tool ran%s; do "
             "not assume it finished", detail);
    ex->error.message = tg__strdup(m);
  }
}

void tg__exec_cancel(tg_exec *ex) {
  if (ex->finished || ex->cancelled) return;
  ex->cancelled = 1;
  if (ex->tool->kind == TG_TOOL_LUA) {
    tg__luatool_cancel(ex);
    return;
  }
  if (ex->tool->cancel) {
    ex->tool->cancel(ex, ex->tool->ud); /* the tool finishes when stopped */
    return;
  }
  /* A C tool that cannot be stopped: give up on it now. */
  tg__exec_stop_error(ex, " (the tool cannot be interrupted; its late result "
                     "will be dropped)");
  tg__exec_done(ex);
}

void tg__exec_done(tg_exec *ex) {
  if (ex->finished) return;
  ex->finished = 1;
  if (ex->timer) uv_timer_stop(ex->timer);
  if (ex->owner) ex->ops->done(ex);
}

void tg__exec_release(tg_exec *ex) {
  if (ex->kind == TG_TOOL_C && !ex->tool_finished) {
    /* a C tool still running may ask for its call id after the call ends */
    ex->own_call_id = tg__strdup(ex->call_id);
    ex->call_id = ex->own_call_id;
  }
  ex->owner = NULL;
  ex->released = 1;
  tg__exec_close_timer(ex, &ex->timer);
  if (ex->tool->kind == TG_TOOL_LUA) tg__luatool_release(ex);
  tg__exec_maybe_free(ex);
}

/* ---- the C tool's side ------------------------------------------------- */

/* Records the tool's end. Returns 0 when the chain still waits for it,
 * -1 when the attempt was already given up (the value is dropped). */
static int tool_finished(tg_exec *ex, cJSON *result) {
  ex->tool_finished = 1;
  if (ex->finished) {
    cJSON_Delete(result);
    tg__exec_maybe_free(ex);
    return -1;
  }
  cJSON_Delete(ex->result);
  ex->result = result;
  return 0;
}

void tg_exec_finish_ok(tg_exec *ex, cJSON *result) {
  if (tool_finished(ex, result) < 0) return;
  if (ex->cancelled) tg__exec_stop_error(ex, "");
  tg__exec_done(ex);
}

void tg_exec_finish_error(tg_exec *ex, cJSON *partial_result, const char *code,
                          const char *message, int retryable) {
  if (tool_finished(ex, partial_result) < 0) return;
  if (ex->cancelled) {
    tg__exec_stop_error(ex, "");
  } else {
    tg__err_clear(&ex->error);
    /* a gateway's tool fails in the UPSTREAM phase: its codes say so */
    ex->error.phase = code && tg_error_code_phases(tg_error_code_of(code)) ==
                                  TG_PHASE_BIT(UPSTREAM)
                          ? TG_PHASE_UPSTREAM
                          : TG_PHASE_EXECUTE;
    ex->error.code =
        tg__strdup(code ? code : tg_error_code_name(TG_E_TOOL_ERROR));
    ex->error.message = tg__strdup(message ? message : "the tool failed");
    ex->error.retryable = retryable;
  }
  tg__exec_done(ex);
}

void tg__exec_fail(tg_exec *ex, cJSON *partial_result, tg_error_code code,
                   const char *message, int retryable) {
  tg_exec_finish_error(ex, partial_result, tg_error_code_name(code), message,
                       retryable);
}

const char *tg_exec_call_id(const tg_exec *ex) { return ex->call_id; }
int tg_exec_attempt(const tg_exec *ex) { return ex->attempt; }
tg_runtime *tg_exec_runtime(tg_exec *ex) { return ex->core->rt; }

tg_exec *tg__exec_new(tg_core *core, tg_generation *gen, const tg_tool *tool,
                      const char *call_id, const char *session, int attempt,
                      const tg_listener *listen, void *owner,
                      const tg_exec_ops *ops, void *ops_ud) {
  tg_exec *ex = calloc(1, sizeof *ex);
  if (!ex) return NULL;
  ex->owner = owner;
  ex->ops = ops;
  ex->ops_ud = ops_ud;
  ex->core = core;
  ex->gen = gen;
  tg__generation_ref(gen);
  ex->tool = tool;
  ex->kind = tool->kind;
  ex->call_id = call_id;
  ex->session = session;
  ex->listen = listen;
  ex->attempt = attempt;
  ex->co_ref = LUA_NOREF;
  ex->closer.closed = timers_closed;
  return ex;
}

int tg__exec_finished(const tg_exec *ex) { return ex->finished; }

void tg__exec_output_progress(tg_proc *p, void *ud) {
  tg_exec *ex = ud;
  tg_exec_progress(ex, (double)tg__proc_bytes(p), -1, tg__proc_last_line(p));
}

/* ---- a C tool's nested calls and session (issue 10) -------------------- */

const char *tg_exec_session(const tg_exec *ex) {
  return ex->owner ? ex->session : NULL;
}

int tg_exec_call(tg_exec *ex, const char *id, const char *tool,
                 const cJSON *args, tg_done_cb done, void *ud,
                 char err[TG_ERRMSG]) {
  if (!ex->owner || ex->finished || ex->tool_finished) {
    snprintf(err, TG_ERRMSG, "the tool attempt has ended");
    return -ESRCH;
  }
  if (!id || !*id || !tool || !done) {
    snprintf(err, TG_ERRMSG, "a nested call needs an id, a tool and a done "
             "callback");
    return -EINVAL;
  }
  return ex->ops->call(ex, id, tool, args, done, ud, err);
}

void tg_exec_call_cancel(tg_exec *ex, const char *id) {
  if (id) ex->ops->cancel(ex, id);
}
