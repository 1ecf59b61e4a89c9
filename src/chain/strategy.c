/*
 * strategy.c — a call whose tool does not run here (strategy.h): its
 * caller runs it elsewhere (an agent, after the answer), or gives what it
 * returned (an agent's result after its tool; a test case's fixture, for
 * toolgate test). The chain is the same one: only the tool stage differs
 * (here), and how an ask is met (approve.c), so what a test or an agent's
 * hook sees is what a real call would do, rules and hooks included. When
 * the call ends, what its caller reads beside the outcome is kept in
 * how->seen.
 */
#include <stdlib.h>
#include <string.h>
#include "call.h"
#include "lua/luajson.h"

/* The given error {code, message?, retryable?} as the attempt's. */
static void given_error(tg_call *c, const cJSON *e) {
  const char *code = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "code"));
  const char *msg = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "message"));
  tg__err_clear(&c->error);
  c->error.phase = TG_PHASE_EXECUTE;
  c->error.code = tg__strdup(code ? code : tg_error_code_name(TG_E_TOOL_ERROR));
  c->error.message = tg__strdup(msg ? msg : "the tool failed (test fixture)");
  c->error.retryable = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "retryable"));
  c->status = TG_STATUS_ERROR;
}

tg_step tg__strategy_execute(tg_call *c) {
  const tg_call_strategy *f = c->how;
  if (f->tool == TG_TOOL_ELSEWHERE || (!f->has_result && !f->error)) {
    c->no_tool = 1; /* no tool "runs" */
    return TG_NEXT;
  }
  c->attempt = 1;
  if (c->call_ref != LUA_NOREF) { /* post-hooks see the attempt */
    lua_State *L = c->gen->L;
    lua_rawgeti(L, LUA_REGISTRYINDEX, c->call_ref);
    lua_pushinteger(L, c->attempt);
    tg__rawsetfield(L, -2, "attempt");
    lua_pop(L, 1);
  }
  cJSON_Delete(c->result);
  c->result = f->has_result ? cJSON_Duplicate(f->result, 1) : NULL;
  if (f->error) {
    given_error(c, f->error); /* the result, if any, is partial output */
  } else {
    tg__err_clear(&c->error);
    c->status = TG_STATUS_OK;
  }
  return TG_NEXT;
}

/* call.metadata as the hooks left it: an agent's hook reads what policy
 * code put there for the agent (context for the model). NULL when nobody
 * built the call table, or when it holds something that is not JSON. */
static cJSON *metadata_left(tg_call *c) {
  if (c->call_ref == LUA_NOREF)
    return c->metadata ? cJSON_Duplicate(c->metadata, 1) : NULL;
  lua_State *L = c->gen->L;
  char why[200];
  lua_rawgeti(L, LUA_REGISTRYINDEX, c->call_ref);
  tg__rawgetfield(L, -1, "metadata");
  cJSON *m = lua_istable(L, -1)
                 ? tg__json_from_lua_max(L, -1, c->core->cfg.max_args_bytes,
                                         why, sizeof why)
                 : NULL;
  lua_pop(L, 2);
  if (m && !cJSON_IsObject(m)) {
    cJSON_Delete(m);
    m = NULL;
  }
  return m;
}

void tg__strategy_record(tg_call *c) {
  tg_call_seen *f = &c->how->seen;
  tg__call_seen_clear(f);
  f->no_tool = c->no_tool;
  f->reason = tg__strdup(c->reason);
  f->args = cJSON_Duplicate(c->args, 1);
  f->tool = tg__strdup(c->tool_name);
  f->remembered = c->remembered;
  f->short_circuit = c->has_short;
  if (c->has_short && c->short_result)
    f->short_result = cJSON_Duplicate(c->short_result, 1);
  if (c->how->keep_metadata) f->metadata = metadata_left(c);
  for (size_t i = 0; c->rule && i < c->gen->nrules; i++)
    if (strcmp(c->gen->rules[i].name, c->rule) == 0)
      f->rule_where = tg__strdup(c->gen->rules[i].where);
}

void tg__call_seen_clear(tg_call_seen *f) {
  free(f->reason);
  free(f->rule_where);
  cJSON_Delete(f->args);
  free(f->tool);
  cJSON_Delete(f->short_result);
  cJSON_Delete(f->metadata);
  f->reason = f->rule_where = f->tool = NULL;
  f->args = f->short_result = f->metadata = NULL;
  f->remembered = f->short_circuit = f->no_tool = 0;
}
