/*
 * execute.c — the attempt loop: retry around timeout around progress
 * around the executor. Each attempt gets a fresh deadline; a retryable
 * failure waits out the back-off on a timer; cancel and deny never retry.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "call.h"
#include "exec/exec.h"
#include "lua/luajson.h"

static void backoff_done_cb(uv_timer_t *t) {
  tg_call *c = t->data;
  c->exec_state = TG_EXEC_START;
  tg__call_advance(c);
}

/* Asks the tool's Lua predicate, if any, whether err is worth a retry. */
static int is_retryable(tg_call *c, const tg_err *e) {
  const tg_tool *t = c->tool;
  if (t->retryable_ref == LUA_NOREF || t->kind != TG_TOOL_LUA) return e->retryable;
  lua_State *L = c->gen->L;
  lua_rawgeti(L, LUA_REGISTRYINDEX, t->retryable_ref);
  tg__push_error(L, e);
  char msg[512];
  if (tg__policy_pcall(c, 1, 1, "retryable predicate", NULL, t->where, msg,
                       sizeof msg) < 0) {
    cJSON *d = cJSON_CreateObject();
    cJSON_AddStringToObject(d, "error", msg);
    tg__call_emit(c, "handler_error", d);
    return 0; /* an unsure predicate does not retry */
  }
  int r = lua_toboolean(L, -1);
  lua_pop(L, 1);
  return r;
}

static void emit_attempt(tg_call *c) {
  cJSON *d = tg__call_event_data(c); /* NULL: nobody listens */
  if (d) {
    cJSON_AddNumberToObject(d, "attempt", c->attempt);
  }
  tg__call_emit(c, "attempt", d);
}

static void emit_retry(tg_call *c, double delay, const tg_err *e) {
  cJSON *d = tg__call_event_data(c); /* NULL: nobody listens */
  if (d) {
    cJSON_AddNumberToObject(d, "attempt", c->attempt);
    cJSON_AddNumberToObject(d, "next_attempt", c->attempt + 1);
    cJSON_AddNumberToObject(d, "delay_ms", delay);
    cJSON_AddStringToObject(d, "code", e->code ? e->code : "");
    cJSON_AddStringToObject(d, "error", e->message ? e->message : "");
  }
  tg__call_emit(c, "retry", d);
}

/* ---- what an attempt asks of its call (exec.h) -------------------------- */

static void attempt_done(tg_exec *ex) { tg__call_advance(ex->owner); }

/* ctx.call: a call one level deeper, with the parent's session and turn. */
static int attempt_call(tg_exec *ex, const char *id, const char *tool,
                        const cJSON *args, tg_done_cb done, void *ud,
                        char err[TG_ERRMSG]) {
  tg_call *c = ex->owner;
  cJSON *meta = cJSON_CreateObject();
  if (!meta) {
    snprintf(err, TG_ERRMSG, "out of memory");
    return -12;
  }
  cJSON_AddStringToObject(meta, "parent_call", c->id);
  tg_call_request req = {.id = id, .tool = tool, .args = args,
                         .session = c->session, .turn = c->turn,
                         .metadata = meta, .project = c->project};
  int rc = tg__call_start_nested(c->ch, &req, c->depth, done, ud, err);
  cJSON_Delete(meta);
  return rc;
}

static void attempt_cancel(tg_exec *ex, const char *id) {
  tg__chain_cancel(ex->ops_ud, id);
}

static const tg_exec_ops exec_ops = {attempt_done, attempt_call,
                                     attempt_cancel};

static void start_attempt(tg_call *c) {
  c->attempt++;
  if (c->call_ref != LUA_NOREF) { /* hooks and tools see the attempt */
    lua_State *L = c->gen->L;
    lua_rawgeti(L, LUA_REGISTRYINDEX, c->call_ref);
    lua_pushinteger(L, c->attempt);
    tg__rawsetfield(L, -2, "attempt"); /* a hook's __newindex does not run */
    lua_pop(L, 1);
  }
  emit_attempt(c);
  if (c->cancel_requested) return; /* a handler of `attempt` cancelled it */
  tg_exec *ex = tg__exec_new(c->core, c->gen, c->tool, c->id, c->session,
                             c->attempt, &c->listen, c, &exec_ops, c->ch);
  if (!ex) {
    tg__call_fail(c, TG_STATUS_ERROR, TG_PHASE_INTERNAL, TG_E_NOMEM, 0,
                  "out of memory starting the tool");
    return;
  }
  c->exec = ex;
  c->exec_state = TG_EXEC_RUNNING;
  tg__exec_start(ex, c->args);
}

/* The attempt has finished: take its result or decide on a retry.
 * Returns TG_NEXT when the loop is over, TG_WAIT during a back-off. */
static tg_step attempt_finished(tg_call *c) {
  tg_exec *ex = c->exec;
  c->exec = NULL;
  c->exec_state = TG_EXEC_START;
  cJSON_Delete(c->result);
  c->result = ex->result; /* partial output too, on failure */
  ex->result = NULL;
  tg_err e = ex->error;
  memset(&ex->error, 0, sizeof ex->error);
  tg__exec_release(ex);
  if (e.phase == TG_PHASE_NONE) {
    tg__err_clear(&c->error);
    c->status = TG_STATUS_OK;
    return TG_NEXT;
  }
  tg__err_clear(&c->error);
  c->error = e;
  if (c->cancel_requested) {
    c->cancel_handled = 1;
    c->status = TG_STATUS_CANCELLED;
    return TG_NEXT;
  }
  c->status = e.phase == TG_PHASE_TIMEOUT ? TG_STATUS_TIMEOUT : TG_STATUS_ERROR;
  if (c->attempt >= c->tool->retry.attempts || !is_retryable(c, &e))
    return TG_NEXT;
  double delay = tg__retry_delay_ms(&c->core->rng, &c->tool->retry, c->attempt);
  emit_retry(c, delay, &e);
  uv_timer_t *t = tg__call_wait_timer(c);
  if (!t) return TG_NEXT;
  c->exec_state = TG_EXEC_BACKOFF;
  uv_update_time(c->core->loop);
  uv_timer_start(t, backoff_done_cb, (uint64_t)(delay + 0.5), 0);
  return TG_WAIT;
}

tg_step tg__stage_execute(tg_call *c) {
  tg_tool_how how = c->how ? c->how->tool : TG_TOOL_RUNS;
  /* the tool runs elsewhere (an agent's, after the answer): the call
   * ends here, a pre-hook's tg.result kept */
  if (how == TG_TOOL_ELSEWHERE) return tg__strategy_execute(c);
  if (c->has_short) { /* a pre-hook answered for the tool */
    c->result = c->short_result;
    c->short_result = NULL;
    c->status = TG_STATUS_OK;
    return TG_NEXT;
  }
  if (how == TG_TOOL_GIVEN) return tg__strategy_execute(c); /* given */
  /* Called again by every event that moves the attempt loop on: the
   * attempt's end, the back-off timer. */
  if (c->exec_state == TG_EXEC_BACKOFF) return TG_WAIT;
  if (c->exec_state == TG_EXEC_START) {
    if (c->attempt == 0) tg__call_before_tool(c);
    start_attempt(c);
    /* not started: cancelled (the driver handles it on TG_WAIT) or failed */
    if (!c->exec) return c->cancel_requested ? TG_WAIT : TG_NEXT;
  }
  if (!tg__exec_finished(c->exec)) return TG_WAIT;
  return attempt_finished(c);
}

int tg__execute_cancel(tg_call *c) {
  if (!c->exec) return 0;
  tg__exec_cancel(c->exec); /* once: a second ask does nothing */
  return 1;
}
