/*
 * hooks.c — pre-hooks ("*" hooks, then glob hooks, then the tool's own,
 * each in registration order) and post-hooks (the same list backwards).
 *
 * The run order is the generation's (tg__hook_walk_next), the one explain
 * and check list.
 *
 * A pre-hook may return nothing (go on), tg.abort(reason), tg.args(t[,
 * tool]) to rewrite the call, or tg.result(v) to answer without running the
 * tool. After the hooks, the args as policy code left them are compared
 * with the args the rules judged; any change — returned or made in place —
 * sends the call back to the rules (call.c, stage REJUDGE).
 */
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include "call.h"
#include "lua/luajson.h"

static void fill_hook(cJSON *d, const char *stage, const tg_hook *h,
                      const char *outcome) {
  cJSON_AddStringToObject(d, "stage", stage);
  cJSON_AddStringToObject(d, "hook", h->where);
  cJSON_AddStringToObject(d, "outcome", outcome);
}

/* Inline: once per hook per call, and usually nobody listens. */
static inline void emit_hook(tg_call *c, const char *stage, const tg_hook *h,
                             const char *outcome) {
  cJSON *d = tg__call_event_data(c); /* NULL: nobody listens */
  if (d) fill_hook(d, stage, h, outcome);
  tg__call_emit(c, "hook", d);
}

void tg__hooks_log(tg_call *c, const char *stage, const char *where,
                   const char *what) {
  if (!c->core->sink.audit) return; /* only the audit record keeps it */
  if (!c->hooks_log && !(c->hooks_log = cJSON_CreateArray())) return;
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "stage", stage);
  if (where) cJSON_AddStringToObject(o, "hook", where);
  else cJSON_AddNullToObject(o, "hook");
  cJSON_AddStringToObject(o, "what", what);
  cJSON_AddItemToArray(c->hooks_log, o);
}

static void fail_hook(tg_call *c, const char *msg) {
  tg__call_fail(c, TG_STATUS_ERROR, TG_PHASE_POLICY, TG_E_HOOK_ERROR, 0,
                "the tool did not run: %s", msg);
}

/* A post-hook that fails or aborts withholds the result: no copy of it
 * stays with the call, so neither the outcome nor a later event nor a later
 * post-hook can carry it (docs/policies.md). */
static void withhold_result(tg_call *c) {
  cJSON_Delete(c->result);
  c->result = NULL;
  cJSON_Delete(c->short_result);
  c->short_result = NULL;
  c->truncated = 0;
}

static void fail_post(tg_call *c, const char *msg) {
  withhold_result(c);
  tg__call_fail(c, TG_STATUS_ERROR, TG_PHASE_POLICY, TG_E_HOOK_ERROR, 0,
                "a post-hook failed, so the result is withheld: %s", msg);
}

/* tg.args(t, tool?): the call table's args (and tool) are replaced. */
static int apply_args(tg_call *c, const tg_hook *h, lua_State *L, int v) {
  c->hook_args = 1;
  tg__hooks_log(c, "before", h->where, "args");
  tg__call_push_table(c);                      /* call */
  tg__rawgetfield(L, v, "args");
  tg__rawsetfield(L, -2, "args");               /* checked after the hook */
  const char *tool = tg__rawgetstring(L, v, "tool");
  if (tool && strcmp(tool, c->tool_name) != 0) {
    char *copy = tg__strdup(tool);
    if (!copy) {
      lua_pop(L, 1);
      tg__call_fail(c, TG_STATUS_ERROR, TG_PHASE_INTERNAL, TG_E_NOMEM, 0,
                    "out of memory rerouting the call");
      return -1;
    }
    lua_pushstring(L, tool);
    tg__rawsetfield(L, -2, "tool");
    /* the hook walk goes on with the name it started with: keep it */
    if (!c->first_name) c->first_name = c->tool_name;
    else free(c->tool_name);
    c->tool_name = copy;
    c->tool = tg__call_find_tool(c, copy); /* an agent's own tool too */
    c->rewritten = 1;
    tg__hooks_log(c, "before", h->where, "tool");
  }
  lua_pop(L, 1);
  if (!c->tool) {
    tg__call_fail(c, TG_STATUS_ERROR, TG_PHASE_PRE_HOOK, TG_E_UNKNOWN_TOOL, 0,
                  "a pre-hook rerouted the call to unknown tool '%s'",
                  c->tool_name);
    return -1;
  }
  return 0;
}

/* Handles one pre-hook's answer at v. 0: go on, 1: stop hooks, -1: end. */
static int pre_answer(tg_call *c, const tg_hook *h, lua_State *L, int v) {
  const char *k = tg__verdict_kind(L, v);
  if (!k) return 0;
  if (!strcmp(k, "abort")) {
    const char *why = tg__rawgetstring(L, v, "reason");
    tg__call_fail(c, TG_STATUS_DENIED, TG_PHASE_PRE_HOOK, TG_E_ABORTED, 0,
                  "the tool did not run; do not assume it succeeded. Aborted "
                  "by hook at %s: %s", h->where, why ? why : "");
    return -1;
  }
  if (!strcmp(k, "args")) return apply_args(c, h, L, v) < 0 ? -1 : 0;
  if (!strcmp(k, "result")) {
    char msg[512];
    tg__rawgetfield(L, v, "result");
    cJSON *r = tg__json_from_lua(L, -1, msg, sizeof msg);
    lua_pop(L, 1);
    if (!r) {
      char m2[700];
      snprintf(m2, sizeof m2, "hook at %s returned a result that is not "
               "JSON: %s", h->where, msg);
      fail_hook(c, m2);
      return -1;
    }
    cJSON_Delete(c->short_result);
    c->short_result = r;
    c->has_short = 1;
    tg__hooks_log(c, "before", h->where, "result");
    return 1;
  }
  char m[600];
  snprintf(m, sizeof m, "pre-hook at %s returned %s; a pre-hook returns "
           "nothing, tg.abort(reason), tg.args(t) or tg.result(v)",
           h->where, *k ? k : luaL_typename(L, v));
  fail_hook(c, m);
  return -1;
}

/* After each pre-hook: call.args must still be a plain table, so that a
 * failure names the hook that broke it. call and key are stack slots of
 * the call table and the string "args": this runs once per hook per call. */
static int check_args_left(tg_call *c, const tg_hook *h, int call, int key) {
  lua_State *L = c->gen->L;
  lua_pushvalue(L, key);
  lua_rawget(L, call);
  const char *bad = tg__args_problem(L, -1);
  lua_pop(L, 1);
  if (!bad) return 0;
  char m[600];
  snprintf(m, sizeof m, "pre-hook at %s left call.args as %s; args must be "
           "a plain table with keys (a JSON object)", h->where, bad);
  fail_hook(c, m);
  return -1;
}

/* Compares the args policy code left in the call table with c->args; takes
 * them when they changed. `last` is the last hook that ran, for messages. */
static int sync_args(tg_call *c, const tg_hook *last) {
  lua_State *L = c->gen->L;
  char msg[512], m[800];
  tg__call_push_table(c);
  tg__rawgetfield(L, -1, "args"); /* a plain table: check_args_left */
  if (tg__json_equal_lua(L, -1, c->args)) {
    lua_pop(L, 2);
    return 0;
  }
  cJSON *now = tg__json_from_lua_max(L, -1, c->core->cfg.max_args_bytes, msg,
                                    sizeof msg);
  lua_pop(L, 2);
  if (now && !cJSON_IsObject(now)) {
    snprintf(msg, sizeof msg, "they are a list (a JSON array), not a table "
             "with keys (a JSON object)");
    cJSON_Delete(now);
    now = NULL;
  }
  if (!now) {
    snprintf(m, sizeof m, "the args the pre-hooks left in call.args cannot "
             "be used: %s (the last pre-hook that ran is at %s)", msg,
             last->where);
    fail_hook(c, m);
    return -1;
  }
  if (tg_json_equal(now, c->args)) {
    cJSON_Delete(now);
    return 0;
  }
  cJSON_Delete(c->args);
  c->args = now;
  c->rewritten = 1;
  return 0;
}

/* Runs the pre-hooks in order; the last one that ran in *last. */
static tg_step run_pre_hooks(tg_call *c, const tg_hook **last) {
  lua_State *L = c->gen->L;
  tg_hook_walk w;
  tg__hook_walk_start(&w, c->gen, 0, c->tool_name,
                      tg__call_also_names(c));
  const tg_hook *h = tg__hook_walk_next(&w);
  if (!h) return TG_NEXT; /* no hook: no call table to build */
  tg__call_push_table(c);
  lua_pushliteral(L, "args");
  int call = lua_gettop(L) - 1, key = call + 1;
  char msg[1024];
  tg_step step = TG_NEXT;
  for (; step == TG_NEXT && h; h = tg__hook_walk_next(&w)) {
    *last = h;
    lua_rawgeti(L, LUA_REGISTRYINDEX, h->fn_ref);
    lua_pushvalue(L, call);
    if (tg__policy_pcall(c, 1, 1, "pre-hook", NULL, h->where, msg,
                         sizeof msg) < 0) {
      emit_hook(c, "before", h, "error");
      fail_hook(c, msg);
      step = TG_END;
      break;
    }
    int r = pre_answer(c, h, L, lua_gettop(L));
    if (r >= 0 && check_args_left(c, h, call, key) < 0) r = -1;
    const char *k = tg__verdict_kind(L, -1);
    emit_hook(c, "before", h, r < 0 ? "error" : k ? k : "continue");
    lua_pop(L, 1);
    if (r < 0) step = TG_END;
    if (r > 0) break;
  }
  lua_pop(L, 2); /* call, key */
  return step;
}

tg_step tg__stage_pre_hooks(tg_call *c) {
  const tg_hook *last = NULL;
  if (run_pre_hooks(c, &last) == TG_END) return TG_END;
  /* only hooks may rewrite: rules are judges */
  if (last && sync_args(c, last) < 0) return TG_END;
  if (!c->rewritten) return TG_NEXT;
  if (!c->hook_args) /* changed in place: no one hook to name */
    tg__hooks_log(c, "before", NULL, "args");
  tg__call_restore_table(c); /* the rules judge again what will run */
  cJSON *d = tg__call_event_data(c); /* NULL: nobody listens */
  if (d) {
    cJSON_AddStringToObject(d, "tool", c->tool_name);
    cJSON_AddItemToObject(d, "args", cJSON_Duplicate(c->args, 1));
  }
  tg__call_emit(c, "rewrite", d);
  return TG_NEXT;
}

/* ---- post-hooks ------------------------------------------------------- */

void tg__push_error(lua_State *L, const tg_err *e) {
  lua_createtable(L, 0, 5);
  lua_pushstring(L, tg_phase_name(e->phase));
  lua_setfield(L, -2, "phase");
  lua_pushstring(L, e->code ? e->code : tg_error_code_name(TG_E_NOMEM));
  lua_setfield(L, -2, "code");
  lua_pushstring(L, e->message ? e->message : "");
  lua_setfield(L, -2, "message");
  if (e->suggestion) {
    lua_pushstring(L, e->suggestion);
    lua_setfield(L, -2, "suggestion");
  }
  lua_pushboolean(L, e->retryable);
  lua_setfield(L, -2, "retryable");
}

/* res = {status, result, error, attempts, truncated}; a fresh table, so
 * lua_setfield runs no policy code (later writes to it are raw). */
static void push_res(tg_call *c, lua_State *L) {
  lua_createtable(L, 0, 5);
  lua_pushstring(L, tg_status_name(c->status));
  lua_setfield(L, -2, "status");
  if (c->result && tg__json_push(L, c->result) == 0)
    lua_setfield(L, -2, "result");
  if (c->error.phase != TG_PHASE_NONE) {
    tg__push_error(L, &c->error);
    lua_setfield(L, -2, "error");
  }
  lua_pushinteger(L, c->attempt);
  lua_setfield(L, -2, "attempts");
  lua_pushboolean(L, c->truncated);
  lua_setfield(L, -2, "truncated");
}

/* Applies a post-hook's answer at v. Returns -1 when the call failed. */
static int post_answer(tg_call *c, const tg_hook *h, lua_State *L, int v,
                       int res) {
  const char *k = tg__verdict_kind(L, v);
  char msg[700];
  if (!k) return 0;
  if (!strcmp(k, "result")) {
    tg__rawgetfield(L, v, "result");
    cJSON *r = tg__json_from_lua(L, -1, msg, sizeof msg);
    if (!r) {
      lua_pop(L, 1);
      char m2[900];
      snprintf(m2, sizeof m2, "post-hook at %s returned a result that is "
               "not JSON: %s", h->where, msg);
      fail_post(c, m2);
      return -1;
    }
    /* later hooks see it; raw: a hook may have put a metatable on res */
    tg__rawsetfield(L, res, "result");
    lua_pushstring(L, "ok");
    tg__rawsetfield(L, res, "status");
    lua_pushnil(L);
    tg__rawsetfield(L, res, "error");
    cJSON_Delete(c->result);
    c->result = r;
    tg__err_clear(&c->error);
    c->status = TG_STATUS_OK;
    tg__hooks_log(c, "after", h->where, "result");
    return 0;
  }
  if (!strcmp(k, "abort")) {
    const char *why = tg__rawgetstring(L, v, "reason");
    withhold_result(c);
    tg__hooks_log(c, "after", h->where, "abort");
    tg__call_fail(c, TG_STATUS_ERROR, TG_PHASE_POLICY, TG_E_ABORTED, 0,
                  "post-hook at %s failed the call, so the result is "
                  "withheld: %s", h->where, why ? why : "");
    lua_pushnil(L);
    tg__rawsetfield(L, res, "result"); /* later post-hooks do not see it */
    lua_pushboolean(L, 0);
    tg__rawsetfield(L, res, "truncated");
    tg__push_error(L, &c->error);
    tg__rawsetfield(L, res, "error");
    lua_pushstring(L, "error");
    tg__rawsetfield(L, res, "status");
    return 0;
  }
  snprintf(msg, sizeof msg, "post-hook at %s returned %s; a post-hook "
           "returns nothing, tg.result(v) or tg.abort(reason)",
           h->where, *k ? k : luaL_typename(L, v));
  fail_post(c, msg);
  return -1;
}

tg_step tg__stage_post_hooks(tg_call *c) {
  /* no tool ran and nothing was given: nothing to look at */
  if (c->no_tool) return TG_NEXT;
  tg_generation *g = c->gen;
  tg_hook_walk w;
  tg__hook_walk_start(&w, g, 1, c->tool_name, tg__call_also_names(c));
  const tg_hook *h = tg__hook_walk_next(&w);
  if (!h) return TG_NEXT;
  lua_State *L = g->L;
  char msg[1024];
  push_res(c, L);
  int res = lua_gettop(L);
  for (; h; h = tg__hook_walk_next(&w)) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, h->fn_ref);
    tg__call_push_table(c);
    lua_pushvalue(L, res);
    if (tg__policy_pcall(c, 2, 1, "post-hook", NULL, h->where, msg,
                         sizeof msg) < 0) {
      emit_hook(c, "after", h, "error");
      fail_post(c, msg);
      break;
    }
    int r = post_answer(c, h, L, lua_gettop(L), res);
    const char *kind = tg__verdict_kind(L, -1);
    emit_hook(c, "after", h, r < 0 ? "error" : kind ? kind : "continue");
    lua_pop(L, 1);
    if (r < 0) break;
  }
  lua_pop(L, 1); /* res */
  return TG_NEXT;
}
