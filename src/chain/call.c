/*
 * call.c — starting a call, driving its stages in order, cancelling it,
 * and ending it: call_end event, outcome to the caller, memory freed.
 *
 * Stage order (docs/policies.md, "The chain"): recover and events wrap everything here; then
 * authorize, pre-hooks, (rules again after a rewrite), validate, approve,
 * execute (result limit, retry, timeout, progress, execute), post-hooks.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "call.h"
#include "core/changes.h"
#include "core/taint.h"
#include "core/turns.h"
#include "core/progress.h"
#include "policy/api_changes.h"
#include "exec/exec.h"
#include "lua/luajson.h"
#include "policy/sandbox.h"
#include "policy/call_facts.h"

void tg__call_fail(tg_call *c, tg_status st, tg_phase phase, tg_error_code code,
                   int retryable, const char *fmt, ...) {
  char msg[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  tg__err_clear(&c->error);
  c->error.phase = phase;
  c->error.code = tg__strdup(tg_error_code_name(code));
  c->error.message = tg__strdup(msg);
  c->error.retryable = retryable;
  c->status = st;
}

/* The wait timer has closed after the call ended: nothing else holds it
 * (the driver frees it itself when it is still running). */
static void timer_closed(tg_closer *cl) {
  tg_call *c = tg__owner_of(cl, tg_call, closer);
  if (c->stage == TG_STAGE_END && !c->advancing) free(c);
}

uv_timer_t *tg__call_wait_timer(tg_call *c) {
  if (!c->wait_timer) {
    c->wait_timer = malloc(sizeof *c->wait_timer);
    if (!c->wait_timer) return NULL;
    uv_timer_init(c->core->loop, c->wait_timer);
    c->wait_timer->data = c;
  }
  return c->wait_timer;
}

static const char *server_of(const tg_call *c) {
  return c->tool ? c->tool->group : NULL;
}

/* The call table's field names, as Lua strings made once per generation
 * and kept in its registry: pushing one is an array read, where
 * lua_setfield / lua_getfield hash the C string every time (LuaJIT keeps
 * no cache of them). */
enum { K_ID = 1, K_TOOL, K_ARGS, K_SESSION, K_TURN, K_ATTEMPT, K_DRY_RUN,
       K_SERVER, K_METADATA, K_COUNT = K_METADATA };

static int push_keys(tg_call *c, lua_State *L) {
  static const char *const names[K_COUNT] = {
      "id", "tool", "args", "session", "turn", "attempt", "dry_run",
      "server", "metadata"};
  tg_generation *g = c->gen;
  if (g->call_keys_ref > 0) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, g->call_keys_ref);
    return lua_gettop(L);
  }
  lua_createtable(L, K_COUNT, 0);
  for (int k = 0; k < K_COUNT; k++) {
    lua_pushstring(L, names[k]);
    lua_rawseti(L, -2, k + 1);
  }
  lua_pushvalue(L, -1);
  g->call_keys_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  return lua_gettop(L);
}

/* t[key k] = the value on top (popped), raw. */
static void set_key(lua_State *L, int t, int keys, int k) {
  lua_rawgeti(L, keys, k);
  lua_insert(L, -2);
  lua_rawset(L, t);
}

/* Pushes t[key k], raw; returns its type. */
static int get_key(lua_State *L, int t, int keys, int k) {
  lua_rawgeti(L, keys, k);
  lua_rawget(L, t);
  return lua_type(L, -1);
}

/* The facts of the call as C knows them, written raw into the call table
 * at idx. The first rules judge them as built; rules judging again after
 * a rewrite judge them restored (tg__call_restore_table), so what they
 * judge is what runs, whatever policy code did to the table meanwhile. */
static void set_call_facts(tg_call *c, lua_State *L, int idx, int keys) {
  lua_pushstring(L, c->id);
  set_key(L, idx, keys, K_ID);
  lua_pushstring(L, c->tool_name);
  set_key(L, idx, keys, K_TOOL);
  if (tg__json_push(L, c->args) < 0) lua_newtable(L); /* depth checked at start */
  set_key(L, idx, keys, K_ARGS);
  lua_pushstring(L, c->session);
  set_key(L, idx, keys, K_SESSION);
  lua_pushinteger(L, (lua_Integer)c->turn);
  set_key(L, idx, keys, K_TURN);
  lua_pushinteger(L, c->attempt);
  set_key(L, idx, keys, K_ATTEMPT);
  if (c->dry_run) lua_pushboolean(L, 1);
  else lua_pushnil(L);
  set_key(L, idx, keys, K_DRY_RUN);
  if (server_of(c)) lua_pushstring(L, server_of(c));
  else lua_pushnil(L);
  set_key(L, idx, keys, K_SERVER); /* a gateway's upstream (tool.group) */
}

void tg__call_push_table(tg_call *c) {
  lua_State *L = c->gen->L;
  if (c->call_ref != LUA_NOREF) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, c->call_ref);
    return;
  }
  int keys = push_keys(c, L);
  lua_createtable(L, 0, 8);
  int t = lua_gettop(L);
  set_call_facts(c, L, t, keys);
  if (!c->metadata || tg__json_push(L, c->metadata) < 0) lua_newtable(L);
  set_key(L, t, keys, K_METADATA);
  tg__call_facts_attach(L, t); /* call.paths, call.commands */
  lua_remove(L, keys);
  lua_pushvalue(L, -1);
  c->call_ref = luaL_ref(L, LUA_REGISTRYINDEX);
}

void tg__call_restore_table(tg_call *c) {
  lua_State *L = c->gen->L;
  tg__call_push_table(c);
  /* only the facts' own __index stands in for a fact, and what it found
   * for the args before the rewrite is forgotten */
  tg__call_facts_reset(L, -1);
  int t = lua_gettop(L);
  set_call_facts(c, L, t, push_keys(c, L));
  lua_settop(L, t - 1);
}

const char *tg__args_problem(lua_State *L, int idx) {
  if (!lua_istable(L, idx)) return luaL_typename(L, idx);
  if (!lua_getmetatable(L, idx)) return NULL;
  const char *mark = tg__rawgetstring(L, -1, "__jsontype");
  lua_pop(L, 1);
  if (mark && !strcmp(mark, "object")) return NULL;
  return mark && !strcmp(mark, "array") ? "an array (tg.array)"
                                        : "a table with a metatable";
}

/* The whole string, its length too: "exec\0x" is not "exec". */
static int string_fact(lua_State *L, int t, int keys, int k, const char *v) {
  size_t n = 0;
  const char *s = get_key(L, t, keys, k) == LUA_TSTRING
                      ? lua_tolstring(L, -1, &n) : NULL;
  int ok = s && v && strlen(v) == n && memcmp(s, v, n) == 0;
  lua_pop(L, 1);
  return ok;
}

static int number_fact(lua_State *L, int t, int keys, int k, double v) {
  int ok = get_key(L, t, keys, k) == LUA_TNUMBER && lua_tonumber(L, -1) == v;
  lua_pop(L, 1);
  return ok;
}

static int flag_fact(lua_State *L, int t, int keys, int k, int v) {
  int ty = get_key(L, t, keys, k);
  int ok = v ? ty == LUA_TBOOLEAN && lua_toboolean(L, -1) : ty == LUA_TNIL;
  lua_pop(L, 1);
  return ok;
}

static int args_fact(lua_State *L, int t, int keys, const cJSON *args) {
  get_key(L, t, keys, K_ARGS);
  int ok = !tg__args_problem(L, -1) && tg__json_equal_lua(L, -1, args);
  lua_pop(L, 1);
  return ok;
}

int tg__call_facts_intact(tg_call *c) {
  if (c->call_ref == LUA_NOREF) return 1; /* no policy code has seen it */
  lua_State *L = c->gen->L;
  lua_rawgeti(L, LUA_REGISTRYINDEX, c->call_ref);
  int t = lua_gettop(L);
  int keys = push_keys(c, L);
  int ok = tg__call_facts_untouched(L, t);
  ok = ok && string_fact(L, t, keys, K_ID, c->id) &&
       string_fact(L, t, keys, K_TOOL, c->tool_name) &&
       string_fact(L, t, keys, K_SESSION, c->session) &&
       number_fact(L, t, keys, K_TURN, (double)c->turn) &&
       number_fact(L, t, keys, K_ATTEMPT, c->attempt) &&
       flag_fact(L, t, keys, K_DRY_RUN, c->dry_run) &&
       (server_of(c) ? string_fact(L, t, keys, K_SERVER, server_of(c))
                     : flag_fact(L, t, keys, K_SERVER, 0)) &&
       args_fact(L, t, keys, c->args);
  lua_settop(L, t - 1);
  return ok;
}

int tg__policy_pcall(tg_call *c, int nargs, int nres, const char *kind,
                     const char *name, const char *where, char *msg,
                     size_t msglen) {
  lua_State *L = c->gen->L;
  /* the time limit and memory cap hold here (sandbox.h) */
  if (tg__sandbox_pcall(c->gen->sb, L, nargs, nres) == LUA_OK) return 0;
  char what[600];
  if (name) snprintf(what, sizeof what, "%s '%s' defined at %s", kind, name, where);
  else snprintf(what, sizeof what, "%s defined at %s", kind, where);
  /* a limit that stopped it says more than the error value it left */
  int stopped = tg__sandbox_describe_stop(c->gen->sb, what, msg, msglen);
  if (!stopped && lua_type(L, -1) == LUA_TSTRING)
    snprintf(msg, msglen, "%s (in %s)", lua_tostring(L, -1), what);
  else if (!stopped)
    snprintf(msg, msglen, "%s raised a %s value", what, luaL_typename(L, -1));
  lua_pop(L, 1);
  return -1;
}

/* ---- ending a call ---------------------------------------------------- */

static tg_outcome outcome_of(const tg_call *c) {
  tg_outcome o;
  memset(&o, 0, sizeof o);
  o.id = c->id;
  o.tool = c->tool_name;
  o.status = c->status;
  o.result = c->result;
  o.error.phase = c->error.phase;
  o.error.code = c->error.code;
  o.error.message = c->error.message;
  o.error.suggestion = c->error.suggestion;
  o.error.retryable = c->error.retryable;
  o.verdict = c->verdict;
  o.rule = c->rule;
  o.attempts = c->attempt;
  o.duration_ms = c->duration_ms;
  o.truncated = c->truncated;
  return o;
}

static cJSON *error_json(const tg_error_view *e) {
  if (e->phase == TG_PHASE_NONE) return cJSON_CreateNull();
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "phase", tg_phase_name(e->phase));
  cJSON_AddStringToObject(o, "code", e->code ? e->code /* NULL: no memory */
                                             : tg_error_code_name(TG_E_NOMEM));
  cJSON_AddStringToObject(o, "message", e->message ? e->message : "");
  if (e->suggestion) cJSON_AddStringToObject(o, "suggestion", e->suggestion);
  cJSON_AddBoolToObject(o, "retryable", e->retryable);
  return o;
}

cJSON *tg_outcome_to_json(const tg_outcome *o) {
  cJSON *j = cJSON_CreateObject();
  cJSON_AddStringToObject(j, "id", o->id);
  cJSON_AddStringToObject(j, "tool", o->tool);
  cJSON_AddStringToObject(j, "status", tg_status_name(o->status));
  cJSON_AddItemToObject(j, "result", o->result ? cJSON_Duplicate(o->result, 1)
                                               : cJSON_CreateNull());
  cJSON_AddItemToObject(j, "error", error_json(&o->error));
  cJSON *d = cJSON_AddObjectToObject(j, "decision");
  cJSON_AddStringToObject(d, "verdict", tg_verdict_name(o->verdict));
  if (o->rule) cJSON_AddStringToObject(d, "rule", o->rule);
  else cJSON_AddNullToObject(d, "rule");
  cJSON_AddNumberToObject(j, "attempts", o->attempts);
  cJSON_AddNumberToObject(j, "duration_ms", o->duration_ms);
  if (o->truncated) cJSON_AddTrueToObject(j, "truncated");
  return j;
}

static void emit_call_end(tg_call *c, const tg_outcome *o) {
  cJSON *d = tg__call_event_data(c); /* NULL: nobody listens */
  if (d) {
    cJSON_AddStringToObject(d, "tool", c->tool_name);
    cJSON_AddStringToObject(d, "status", tg_status_name(o->status));
    cJSON_AddNumberToObject(d, "attempts", o->attempts);
    cJSON_AddNumberToObject(d, "duration_ms", o->duration_ms);
    cJSON_AddStringToObject(d, "verdict", tg_verdict_name(o->verdict));
    if (o->rule) cJSON_AddStringToObject(d, "rule", o->rule);
    cJSON_AddItemToObject(d, "error", error_json(&o->error));
  }
  tg__call_emit(c, "call_end", d);
}

static void unlink_call(tg_call *c) {
  if (c->prev) c->prev->next = c->next; else c->ch->calls = c->next;
  if (c->next) c->next->prev = c->prev;
  c->prev = c->next = NULL;
}

void tg__call_free_fields(tg_call *c) {
  if (c->call_ref != LUA_NOREF)
    luaL_unref(c->gen->L, LUA_REGISTRYINDEX, c->call_ref);
  c->call_ref = LUA_NOREF;
  c->closer.closed = timer_closed;
  tg__generation_unref(c->gen);
  if (c->id != c->idbuf) free(c->id);
  free(c->tool_name);
  if (c->session != c->core->cfg.session) free(c->session);
  free(c->rule);
  free(c->reason);
  cJSON_Delete(c->args);
  cJSON_Delete(c->metadata);
  cJSON_Delete(c->result);
  cJSON_Delete(c->short_result);
  cJSON_Delete(c->hooks_log);
  free(c->bad_args);
  free(c->project);
  free(c->first_name);
  tg__err_clear(&c->error);
  cJSON_Delete(c->red_args);
  cJSON_Delete(c->red_result);
  cJSON_Delete(c->red_hooks);
  cJSON_Delete(c->red_agent_input);
  free(c->red_reason);
  tg__err_clear(&c->red_error);
}

/* The error as the audit keeps it: its strings through the redactors. */
static const tg_err *redacted_error(tg_call *c) {
  tg_redactor *r = &c->core->redact;
  char *m = tg__redact_str(r, c->error.message);
  char *g = tg__redact_str(r, c->error.suggestion);
  if (!m && !g) return &c->error;
  c->red_error = c->error;
  c->red_error.code = tg__strdup(c->error.code);
  c->red_error.message = m ? m : tg__strdup(c->error.message);
  c->red_error.suggestion = g ? g : tg__strdup(c->error.suggestion);
  return &c->red_error;
}

/* Ends the call: event, outcome, free. The struct itself waits for its
 * timer's close callback when it has one. */
static void end_call(tg_call *c) {
  tg_outcome o = outcome_of(c);
  if (c->how && !c->how_recorded) tg__strategy_record(c);
  emit_call_end(c, &o);
  unlink_call(c);
  tg__progress_call_ended(c->core, c->core->progress, c->id,
                          o.status == TG_STATUS_OK, o.error.message);
  /* the files the call changed are announced after its call_end */
  tg__changes_call_ended(c->core, c->gen, tg__policy_file_change, c->id,
                         &c->listen);
  if (c->done) c->done(c->core->rt, &o, c->done_ud);
  tg__call_free_fields(c);
  tg__close(&c->closer, (uv_handle_t *)c->wait_timer, 1);
  c->wait_timer = NULL;
}

/* The store has the call's record (or has said, in a store_error event,
 * why it could not keep it): now the caller may hear the outcome. */
static void audit_committed(tg_audit_rec *rec, int ok) {
  tg_call *c = tg__owner_of(rec, tg_call, audit);
  c->advancing = 1; /* as in the driver: a callback's advance is a no-op */
  end_call(c);
  c->advancing = 0;
  if (c->closer.closing == 0) free(c);
}

/* The call's audit record, pointing into the call (core/sink.h). */
static void fill_audit(tg_call *c) {
  tg_redactor *r = &c->core->redact;
  c->red_args = tg__redact_copy(r, c->args);
  c->red_result = tg__redact_copy(r, c->result);
  c->red_hooks = tg__redact_copy(r, c->hooks_log);
  c->red_reason = tg__redact_str(r, c->reason);
  const cJSON *parent =
      c->metadata ? cJSON_GetObjectItemCaseSensitive(c->metadata, "parent_call")
                  : NULL;
  c->audit = (tg_audit_rec){
      .call_id = c->id, .session = c->session, .tool = c->tool_name,
      .parent_call = cJSON_IsString(parent) ? parent->valuestring : NULL,
      .turn = c->turn, .args = c->red_args ? c->red_args : c->args,
      .result = c->red_result ? c->red_result : c->result,
      .hooks = c->red_hooks ? c->red_hooks : c->hooks_log,
      .verdict = c->verdict, .rule = c->rule,
      .rule_where = c->rule ? c->rule_where : NULL,
      .decided_by = c->rule ? "rule" : "default",
      .reason = c->red_reason ? c->red_reason : c->reason,
      .approval = c->approval_how, .approval_id = c->approval_ref,
      .attempts = c->attempt, .status = c->status, .error = redacted_error(c),
      .truncated = c->truncated, .ts_ms = (int64_t)c->start_wall_ms,
      .duration_ms = c->duration_ms, .generation = c->gen->number,
      .committed = audit_committed};
  /* what the caller makes of the outcome (an agent's hook), its input
   * masked like the args */
  if (c->how && c->how->recording) {
    tg_outcome o = outcome_of(c);
    c->how->recording(c->how->recording_ud, &o, &c->audit);
    c->red_agent_input = tg__redact_copy(r, c->audit.agent.input);
    if (c->red_agent_input) c->audit.agent.input = c->red_agent_input;
  }
}

/* A redaction rule matched in the call's input (args) or result: a
 * secret passed through the call, so its session is sensitive from now on
 * (core/taint.h tells it in a session_tainted event). A taint that cannot
 * be kept is told in a store_error event; the call's outcome stays. */
static void taint_if_redacted(tg_call *c, int in_args, int in_result) {
  if ((!in_args && !in_result) || !c->session || !*c->session) return;
  char reason[TG_TAINT_REASON_MAX], err[TG_ERRMSG] = "";
  snprintf(reason, sizeof reason, "a redaction rule matched in %s's %s",
           c->tool_name, in_args ? "input" : "result");
  /* an agent's call by the agent's id and name, as the user saw it */
  const char *id = c->id, *tool = c->tool_name;
  if (c->metadata) {
    const char *aid = cJSON_GetStringValue(
        cJSON_GetObjectItemCaseSensitive(c->metadata, "agent_tool_use_id"));
    const char *atool = cJSON_GetStringValue(
        cJSON_GetObjectItemCaseSensitive(c->metadata, "agent_tool"));
    if (aid) id = aid;
    if (atool) tool = atool;
  }
  tg_taint t;
  tg__taint_fill(&t, 1, reason, id, tool, (int64_t)tg__wall_ms());
  if (tg__taint_raise(c->core, c->session, &t, err) < 0) {
    cJSON *d = tg__event_data(c->core, c);
    if (d) cJSON_AddStringToObject(d, "error", err);
    tg__emit(c->core, c, "store_error", c->id, d);
  }
}

/* The chain is through. With storage on, the record goes to the store
 * first and the call ends when it is committed (0: it waits); else it
 * ends now (1). */
static int finish(tg_call *c) {
  if (c->tool_layered) tg__call_after_tool(c); /* C after_tool layers */
  c->duration_ms = tg__now_ms() - c->start_ms;
  const tg_sink *sink = &c->core->sink;
  if (!sink->audit) {
    /* no record to mask: only whether a mask matched, for the taint of
     * the call's session (none: nothing to taint, nothing to scan) */
    if (c->session && *c->session) {
      tg_redactor *red = &c->core->redact;
      int in_args = tg__redact_matches(red, c->args);
      taint_if_redacted(c, in_args,
                        !in_args && tg__redact_matches(red, c->result));
    }
    end_call(c);
    return 1;
  }
  /* what policy code left in the call table (call.metadata) is read
   * before the table goes */
  if (c->how) tg__strategy_record(c);
  c->how_recorded = 1;
  /* no policy code sees the call again: its table goes now, not after
   * the commit (a burst of calls would pile them up in the generation) */
  if (c->call_ref != LUA_NOREF) luaL_unref(c->gen->L, LUA_REGISTRYINDEX, c->call_ref);
  c->call_ref = LUA_NOREF;
  fill_audit(c);
  taint_if_redacted(c, c->red_args != NULL, c->red_result != NULL);
  sink->audit(sink->ud, &c->audit);
  return 0;
}

/* ---- the driver ------------------------------------------------------- */

static tg_step stage_start(tg_call *c) {
  cJSON *d = tg__call_event_data(c); /* NULL: nobody listens */
  if (d) {
    cJSON_AddStringToObject(d, "tool", c->tool_name);
    cJSON_AddStringToObject(d, "session", c->session);
    cJSON_AddNumberToObject(d, "turn", (double)c->turn);
    cJSON_AddItemToObject(d, "args", cJSON_Duplicate(c->args, 1));
    cJSON_AddNumberToObject(d, "generation", (double)c->gen->number);
  }
  tg__call_emit(c, "call_start", d);
  if (!c->tool) {
    tg__call_fail(c, TG_STATUS_ERROR, TG_PHASE_VALIDATE, TG_E_UNKNOWN_TOOL, 0,
                  "unknown tool '%s'", c->tool_name);
    return TG_END;
  }
  if (c->bad_args) { /* nothing judged them: nothing may run on them */
    tg__call_fail(c, TG_STATUS_ERROR, TG_PHASE_VALIDATE, TG_E_INVALID_ARGS, 0,
                  "invalid arguments for '%s': %s", c->tool_name, c->bad_args);
    c->error.suggestion = tg__strdup("send the arguments as one JSON object, "
                                     "each key once");
    return TG_END;
  }
  return TG_NEXT;
}

static tg_step run_stage(tg_call *c);

/* Cancelling: stop whatever the call waits for, then go to post-hooks
 * (or straight to the end when pre-hooks have not run yet). */
static tg_step handle_cancel(tg_call *c) {
  if (c->stage == TG_STAGE_EXECUTE && tg__execute_cancel(c))
    /* the execute stage reports the cancelled attempt, partial output and
     * all, once the tool has stopped */
    return tg__exec_finished(c->exec) ? run_stage(c) : TG_WAIT;
  c->cancel_handled = 1;
  tg__approve_withdraw(c);
  if (c->wait_timer) uv_timer_stop(c->wait_timer);
  tg__call_fail(c, TG_STATUS_CANCELLED, TG_PHASE_CANCEL, TG_E_CANCELLED,
                0, "the call was cancelled%s; do not assume it succeeded",
                c->stage == TG_STAGE_EXECUTE ? " between attempts"
                                             : " before the tool ran");
  c->stage = c->stage > TG_STAGE_REJUDGE ? TG_STAGE_POST_HOOKS : TG_STAGE_END;
  return TG_NEXT;
}

static tg_step stage_rejudge(tg_call *c) {
  if (!c->rewritten) return TG_NEXT;
  c->rejudged = 1;
  return tg__stage_authorize(c);
}

/* The chain's stage order, in one table: what runs, where the call
 * goes next, and where it goes when the stage ends it (before validation
 * nothing has run, so straight to the end; after, post-hooks still run). */
typedef struct {
  tg_step (*run)(tg_call *c);
  tg_stage next, on_end;
} stage_def;

static const stage_def stages[] = {
    [TG_STAGE_START] = {stage_start, TG_STAGE_AUTHORIZE, TG_STAGE_END},
    [TG_STAGE_AUTHORIZE] = {tg__stage_authorize, TG_STAGE_PRE_HOOKS,
                            TG_STAGE_END},
    [TG_STAGE_PRE_HOOKS] = {tg__stage_pre_hooks, TG_STAGE_REJUDGE,
                            TG_STAGE_END},
    [TG_STAGE_REJUDGE] = {stage_rejudge, TG_STAGE_VALIDATE, TG_STAGE_END},
    [TG_STAGE_VALIDATE] = {tg__stage_validate, TG_STAGE_APPROVE,
                           TG_STAGE_POST_HOOKS},
    [TG_STAGE_APPROVE] = {tg__stage_approve, TG_STAGE_EXECUTE,
                          TG_STAGE_POST_HOOKS},
    [TG_STAGE_EXECUTE] = {tg__stage_execute, TG_STAGE_LIMIT, TG_STAGE_LIMIT},
    [TG_STAGE_LIMIT] = {tg__stage_limit, TG_STAGE_POST_HOOKS,
                        TG_STAGE_POST_HOOKS},
    [TG_STAGE_POST_HOOKS] = {tg__stage_post_hooks, TG_STAGE_END,
                             TG_STAGE_END},
};

/* After its start, a call its caller judged already (an agent's tool
 * that ran) goes straight to the tool stage: what it gave is what the
 * post-hooks look at. */
static tg_stage next_stage(tg_call *c, const stage_def *d, tg_step s) {
  if (s == TG_END) return d->on_end;
  if (d->next == TG_STAGE_AUTHORIZE && c->how && c->how->judged) {
    c->verdict = TG_VERDICT_ALLOW;
    return TG_STAGE_EXECUTE;
  }
  return d->next;
}

/* Runs one stage; sets the next one. */
static tg_step run_stage(tg_call *c) {
  if (c->stage == TG_STAGE_END) return TG_END;
  const stage_def *d = &stages[c->stage];
  tg_step s = d->run(c);
  if (s == TG_WAIT) return s;
  c->stage = next_stage(c, d, s);
  return TG_NEXT;
}

static int cancel_pending(const tg_call *c) {
  return c->cancel_requested && !c->cancel_handled &&
         c->stage < TG_STAGE_LIMIT && c->stage != TG_STAGE_START;
}

void tg__call_advance(tg_call *c) {
  if (c->advancing) return; /* the running driver will see the change */
  c->advancing = 1;
  for (;;) {
    int cancelling = cancel_pending(c);
    tg_step s = cancelling ? handle_cancel(c) : run_stage(c);
    /* A cancel that arrived while the stage ran (from an event handler,
     * say) is handled now, not after the wait the stage just began. */
    if (s == TG_WAIT && !cancelling && cancel_pending(c)) continue;
    if (s == TG_WAIT) {
      c->advancing = 0;
      return;
    }
    if (s == TG_END) break;
  }
  int ended = finish(c);
  c->advancing = 0;
  if (ended && c->closer.closing == 0) free(c);
}

/* ---- starting --------------------------------------------------------- */

/* Nesting deeper than policies can see (TG_JSON_MAX_DEPTH) is refused up
 * front, so no stage ever works on a silently cut copy. */
static cJSON *checked_depth(cJSON *j, const char *what, char *err) {
  if (!j || !tg__json_too_deep(j)) return j;
  cJSON_Delete(j);
  tg__errf(err, TG_ERRMSG, "%s are nested deeper than %d levels", what,
           TG_JSON_MAX_DEPTH);
  return NULL;
}

static cJSON *parse_args_json(tg_chain *ch, const tg_call_request *req,
                              char *err) {
  char why[300];
  if (req->args) {
    if (!cJSON_IsObject(req->args)) {
      tg__errf(err, TG_ERRMSG, "args must be a JSON object");
      return NULL;
    }
    /* a host's tree: the parser's rules (one value for each key) */
    if (tg__json_check(req->args, why, sizeof why) < 0) {
      tg__errf(err, TG_ERRMSG, "args are not valid JSON: %s", why);
      return NULL;
    }
    return cJSON_Duplicate(req->args, 1);
  }
  if (!req->args_json) return cJSON_CreateObject();
  size_t len = strlen(req->args_json);
  if (len > ch->core->cfg.max_args_bytes) {
    tg__errf(err, TG_ERRMSG, "args are %zu bytes, over the limit of %zu",
             len, ch->core->cfg.max_args_bytes);
    return NULL;
  }
  /* the one parser (base/json.c): duplicate keys, 1e400, bad UTF-8 refused */
  cJSON *j = tg_json_parse(req->args_json, len, NULL, why, sizeof why);
  if (!j) {
    tg__errf(err, TG_ERRMSG, "args are not valid JSON: %s", why);
    return NULL;
  }
  if (!cJSON_IsObject(j)) {
    cJSON_Delete(j);
    tg__errf(err, TG_ERRMSG, "args must be a JSON object, like {\"key\": \"value\"}");
    return NULL;
  }
  return j;
}

cJSON *tg__call_parse_args(tg_chain *ch, const tg_call_request *req,
                           char *err) {
  return checked_depth(parse_args_json(ch, req, err), "args", err);
}

/* "call-N" without snprintf: this runs once per call. */
static void call_id(char buf[32], uint64_t n) {
  char digits[21];
  int k = 0;
  do digits[k++] = (char)('0' + n % 10); while ((n /= 10) && k < 20);
  memcpy(buf, "call-", 5);
  int i = 5;
  while (k) buf[i++] = digits[--k];
  buf[i] = '\0';
}

static tg_call *find_call(tg_chain *ch, const char *id) {
  for (tg_call *c = ch->calls; c; c = c->next)
    if (strcmp(c->id, id) == 0) return c;
  return NULL;
}

static int check_request(tg_chain *ch, const tg_call_request *req,
                         char *err) {
  if (!req || !req->tool || !*req->tool) {
    tg__errf(err, TG_ERRMSG, "a call needs a tool name");
    return -EINVAL;
  }
  if (req->metadata && !cJSON_IsObject(req->metadata)) {
    tg__errf(err, TG_ERRMSG, "metadata must be a JSON object");
    return -EINVAL;
  }
  if (req->metadata && tg__json_too_deep(req->metadata)) {
    tg__errf(err, TG_ERRMSG, "metadata are nested deeper than %d levels",
             TG_JSON_MAX_DEPTH);
    return -EINVAL;
  }
  if (req->id && find_call(ch, req->id)) {
    tg__errf(err, TG_ERRMSG, "a call with id '%s' is already running", req->id);
    return -EEXIST;
  }
  if (!ch->gen || ch->core->freeing) {
    tg__errf(err, TG_ERRMSG, "the runtime is shutting down");
    return -ESHUTDOWN;
  }
  return 0;
}

tg_call *tg__call_new(tg_chain *ch, const tg_call_request *req,
                      cJSON *args, const char *id, const char *bad_args) {
  tg_call *c = calloc(1, sizeof *c);
  if (!c) {
    cJSON_Delete(args);
    return NULL;
  }
  c->ch = ch;
  c->core = ch->core;
  c->args = args;
  c->call_ref = LUA_NOREF;
  c->closer.closed = timer_closed;
  /* The common case allocates nothing for the id and the session: an id
   * of ours, or a caller's short one ("mcp-12"), is kept in idbuf. */
  const char *want = req->id ? req->id : id;
  size_t idlen = strnlen(want, sizeof c->idbuf);
  if (idlen < sizeof c->idbuf) {
    memcpy(c->idbuf, want, idlen);
    c->idbuf[idlen] = '\0';
    c->id = c->idbuf;
  } else {
    c->id = tg__strdup(want);
  }
  c->tool_name = tg__strdup(req->tool);
  c->session = req->session ? tg__strdup(req->session)
                            : (char *)ch->core->cfg.session;
  /* a call of a turn carries it (core/turns.h) */
  c->turn = req->turn ? req->turn : tg__turn_of(ch->core, c->session);
  c->metadata = req->metadata ? cJSON_Duplicate(req->metadata, 1) : NULL;
  c->project = tg__strdup(req->project);
  c->bad_args = tg__strdup(bad_args);
  c->listen = (tg_listener){req->on_event, req->on_progress, req->events_ud};
  c->gen = ch->gen;
  tg__generation_ref(c->gen);
  if (!c->id || !c->tool_name || !c->session ||
      (req->metadata && !c->metadata) || (bad_args && !c->bad_args) ||
      (req->project && !c->project)) {
    tg__call_free_fields(c);
    free(c);
    return NULL;
  }
  c->tool = tg__chain_find_tool(ch, c->gen, c->tool_name);
  return c;
}

/* approver: the call's own (NULL: the runtime's, if any). */
static int start_call(tg_chain *ch, const tg_call_request *req, int depth,
                      tg_call_strategy *how, tg_approver_cb approver,
                      void *approver_ud, tg_done_cb done, void *ud,
                      char err[TG_ERRMSG]) {
  int rc = check_request(ch, req, err);
  if (rc < 0) return rc;
  /* Args text that does not parse (duplicate keys, 1e400, bad UTF-8, too
   * deep, too big) is the agent's mistake: the call ends with VALIDATE
   * INVALID_ARGS, on empty args that nothing ever sees. A tree the host
   * built itself is the host's mistake: refused here. */
  char why[TG_ERRMSG] = "";
  cJSON *args = tg__call_parse_args(ch, req, why);
  if (!args && req->args) {
    tg__errf(err, TG_ERRMSG, "%s", why);
    return -EINVAL;
  }
  int bad = !args;
  if (bad) args = cJSON_CreateObject();
  char id[32] = "";
  if (!req->id) call_id(id, ch->next_call_no++);
  tg_call *c = args ? tg__call_new(ch, req, args, id, bad ? why : NULL) : NULL;
  if (!c) {
    tg__errf(err, TG_ERRMSG, "out of memory");
    return -ENOMEM;
  }
  c->start_ms = tg__now_ms();
  if (ch->core->sink.audit) c->start_wall_ms = tg__wall_ms();
  c->done = done;
  c->done_ud = ud;
  c->depth = depth;
  c->approver = approver;
  c->approver_ud = approver_ud;
  tg__call_set_strategy(c, how);
  c->next = ch->calls;
  if (ch->calls) ch->calls->prev = c;
  ch->calls = c;
  tg__call_advance(c);
  return 0;
}

int tg__chain_call_start(tg_chain *ch, const tg_call_request *req, tg_done_cb done,
                  void *ud, char err[TG_ERRMSG]) {
  return start_call(ch, req, 0, NULL, NULL, NULL, done, ud, err);
}

int tg__chain_call_start_approved(tg_chain *ch, const tg_call_request *req,
                                  tg_approver_cb approver, void *approver_ud,
                                  tg_done_cb done, void *ud,
                                  char err[TG_ERRMSG]) {
  return start_call(ch, req, 0, NULL, approver, approver_ud, done, ud, err);
}

int tg__chain_call_with(tg_chain *ch, const tg_call_request *req,
                        tg_call_strategy *how, tg_done_cb done, void *ud,
                        char err[TG_ERRMSG]) {
  return start_call(ch, req, 0, how, NULL, NULL, done, ud, err);
}

void tg__call_set_strategy(tg_call *c, tg_call_strategy *how) {
  c->how = how;
  if (how && how->own_tool) { /* an agent's own tool: judged, never run */
    c->own_tool.name = (char *)how->own_tool;
    c->own_tool.read_only = how->own_tool_read_only;
    c->own_tool.group = (char *)how->own_tool_server;
    c->own_tool.where = (char *)"agent";
    c->own_tool.retry.attempts = 1;
    c->own_tool.run_ref = c->own_tool.retryable_ref = LUA_NOREF;
  }
  if (!c->tool) c->tool = tg__call_find_tool(c, c->tool_name);
}

const tg_tool *tg__call_find_tool(tg_call *c, const char *name) {
  const tg_tool *t = tg__chain_find_tool(c->ch, c->gen, name);
  if (!t && c->own_tool.name && strcmp(c->own_tool.name, name) == 0)
    t = &c->own_tool;
  return t;
}

int tg__call_start_nested(tg_chain *ch, const tg_call_request *req,
                          int parent_depth, tg_done_cb done, void *ud,
                          char err[TG_ERRMSG]) {
  if (parent_depth + 1 > TG_MAX_CALL_DEPTH) {
    tg__errf(err, TG_ERRMSG, "calls nested deeper than %d (a tool calling "
             "itself?)", TG_MAX_CALL_DEPTH);
    return -ELOOP;
  }
  return start_call(ch, req, parent_depth + 1, NULL, NULL, NULL, done, ud,
                    err);
}

int tg__chain_cancel(tg_chain *ch, const char *call_id) {
  tg_call *c = call_id ? find_call(ch, call_id) : NULL;
  if (!c || c->stage >= TG_STAGE_LIMIT) return -ENOENT;
  c->cancel_requested = 1;
  tg__call_advance(c);
  return 0;
}

const tg_tool *tg__chain_find_tool(tg_chain *ch, tg_generation *gen,
                                   const char *name) {
  const tg_tool *t = tg__core_find_ctool(ch->core, name);
  return t ? t : tg__generation_find_tool(gen, name);
}

cJSON *tg__call_event_data_slow(tg_call *c) {
  return tg__event_data_to(c->core, c->gen, &c->listen);
}

void tg__call_emit_slow(tg_call *c, const char *type, cJSON *data) {
  tg__emit_to(c->core, c->gen, type, c->id, data, &c->listen);
}
