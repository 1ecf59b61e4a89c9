/*
 * execute.c — the attempt loop: retry around timeout around progress
 * around the executor. Each attempt gets a fresh deadline; a retryable
 * failure waits out the back-off on a timer; cancel and deny never retry.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "call.h"
#include "../exec/exec.h"
#include "../policy/luajson.h"

enum { EX_START = 0, EX_RUNNING = 1, EX_BACKOFF = 2 };

static void backoff_done_cb(uv_timer_t *t) {
  tg_call *c = t->data;
  c->exec_state = EX_START;
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
    tg__emit(c->rt, c->gen, "handler_error", c->id, d);
    return 0; /* an unsure predicate does not retry */
  }
  int r = lua_toboolean(L, -1);
  lua_pop(L, 1);
  return r;
}

static void emit_attempt(tg_call *c) {
  if (!tg__events_wanted(c->rt, c->gen)) {
    c->rt->bus.seq++;
    return;
  }
  cJSON *d = cJSON_CreateObject();
  cJSON_AddNumberToObject(d, "attempt", c->attempt);
  tg__emit(c->rt, c->gen, "attempt", c->id, d);
}

static void emit_retry(tg_call *c, double delay, const tg_err *e) {
  if (!tg__events_wanted(c->rt, c->gen)) {
    c->rt->bus.seq++;
    return;
  }
  cJSON *d = cJSON_CreateObject();
  cJSON_AddNumberToObject(d, "attempt", c->attempt);
  cJSON_AddNumberToObject(d, "next_attempt", c->attempt + 1);
  cJSON_AddNumberToObject(d, "delay_ms", delay);
  cJSON_AddStringToObject(d, "code", e->code ? e->code : "");
  cJSON_AddStringToObject(d, "error", e->message ? e->message : "");
  tg__emit(c->rt, c->gen, "retry", c->id, d);
}

static void start_attempt(tg_call *c) {
  c->attempt++;
  if (c->call_ref != LUA_NOREF) { /* hooks and tools see the attempt */
    lua_State *L = c->gen->L;
    lua_rawgeti(L, LUA_REGISTRYINDEX, c->call_ref);
    lua_pushinteger(L, c->attempt);
    tg_rawsetfield(L, -2, "attempt"); /* a hook's __newindex does not run */
    lua_pop(L, 1);
  }
  emit_attempt(c);
  if (c->cancel_requested) return; /* a handler of `attempt` cancelled it */
  tg_exec *ex = calloc(1, sizeof *ex);
  if (!ex) {
    tg__call_fail(c, TG_STATUS_ERROR, TG_PHASE_INTERNAL, TG_E_NOMEM, 0,
                  "out of memory starting the tool");
    return;
  }
  ex->call = c;
  ex->rt = c->rt;
  ex->gen = c->gen;
  tg__generation_ref(ex->gen);
  ex->tool = c->tool;
  ex->kind = c->tool->kind;
  ex->call_id = c->id;
  ex->attempt = c->attempt;
  ex->co_ref = LUA_NOREF;
  c->exec = ex;
  c->exec_state = EX_RUNNING;
  tg__exec_start(ex, c->args);
}

/* The attempt has finished: take its result or decide on a retry.
 * Returns TG_NEXT when the loop is over, TG_WAIT during a back-off. */
static tg_step attempt_finished(tg_call *c) {
  tg_exec *ex = c->exec;
  c->exec = NULL;
  c->exec_state = EX_START;
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
  double delay = tg__retry_delay_ms(c->rt, &c->tool->retry, c->attempt);
  emit_retry(c, delay, &e);
  uv_timer_t *t = tg__call_wait_timer(c);
  if (!t) return TG_NEXT;
  c->exec_state = EX_BACKOFF;
  uv_update_time(c->rt->loop);
  uv_timer_start(t, backoff_done_cb, (uint64_t)(delay + 0.5), 0);
  return TG_WAIT;
}

tg_step tg__stage_execute(tg_call *c) {
  if (c->has_short) { /* a pre-hook answered for the tool */
    c->result = c->short_result;
    c->short_result = NULL;
    c->status = TG_STATUS_OK;
    return TG_NEXT;
  }
  /* Called again by every event that moves the attempt loop on: the
   * attempt's end, the back-off timer. */
  if (c->exec_state == EX_BACKOFF) return TG_WAIT;
  if (c->exec_state == EX_START) {
    start_attempt(c);
    /* not started: cancelled (the driver handles it on TG_WAIT) or failed */
    if (!c->exec) return c->cancel_requested ? TG_WAIT : TG_NEXT;
  }
  if (!c->exec->finished) return TG_WAIT;
  return attempt_finished(c);
}

void tg__execute_cancel(tg_call *c) {
  if (c->exec && !c->exec->cancelled) tg__exec_cancel(c->exec);
}
