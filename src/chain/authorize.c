/*
 * authorize.c — the rules, lowest priority number first; the first rule
 * that answers decides. With no answer: allow for read-only tools, the
 * configured default (ask) for the rest. A rule that raises fails the call
 * closed unless it says fail = "open".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "call.h"

static const char *const kinds[] = {"allow", "deny", "ask", "abort", "args",
                                    "result"};

/* Verdicts are read raw (luaraw.h): a verdict's metatable never runs. */
const char *tg__verdict_kind(lua_State *L, int idx) {
  if (lua_isnoneornil(L, idx)) return NULL;
  if (!lua_istable(L, idx)) return "";
  const char *k = tg__rawgetstring(L, idx, "tg");
  for (size_t i = 0; k && i < sizeof kinds / sizeof *kinds; i++)
    if (strcmp(k, kinds[i]) == 0) return kinds[i]; /* static: outlives k */
  return "";
}

/* r NULL: the default decided. */
static void set_decision(tg_call *c, tg_verdict v, const tg_rule *r,
                         const char *reason) {
  c->verdict = v;
  free(c->rule);
  free(c->reason);
  c->rule = tg__strdup(r ? r->name : NULL);
  c->rule_where = r ? r->where : NULL; /* the call holds the generation */
  c->reason = tg__strdup(reason);
}

static void emit_decision(tg_call *c, int by_default) {
  cJSON *d = tg__call_event_data(c); /* NULL: nobody listens */
  if (d) {
    cJSON_AddStringToObject(d, "verdict", tg_verdict_name(c->verdict));
    if (c->rule) cJSON_AddStringToObject(d, "rule", c->rule);
    else cJSON_AddNullToObject(d, "rule");
    if (c->reason) cJSON_AddStringToObject(d, "reason", c->reason);
    if (by_default) cJSON_AddTrueToObject(d, "default");
    if (c->remembered) cJSON_AddTrueToObject(d, "remembered");
    if (c->rejudged) cJSON_AddTrueToObject(d, "rejudged");
  }
  tg__call_emit(c, "decision", d);
}

static void emit_rule_error(tg_call *c, const tg_rule *r, const char *msg) {
  cJSON *d = cJSON_CreateObject();
  cJSON_AddStringToObject(d, "rule", r->name);
  cJSON_AddStringToObject(d, "error", msg);
  cJSON_AddStringToObject(d, "fail", "open");
  tg__call_emit(c, "rule_error", d);
}

void tg__rule_judge(tg_call *c, const tg_rule *r, tg_rule_answer *a) {
  lua_State *L = c->gen->L;
  char msg[1024];
  memset(a, 0, sizeof *a);
  lua_rawgeti(L, LUA_REGISTRYINDEX, r->fn_ref);
  tg__call_push_table(c);
  if (tg__policy_pcall(c, 1, 1, "rule", r->name, r->where, msg,
                       sizeof msg) < 0) {
    a->kind = TG_RULE_RAISED;
    a->text = tg__strdup(msg);
    return;
  }
  const char *k = tg__verdict_kind(L, -1);
  if (!k) {
    a->kind = TG_RULE_SILENT;
  } else if (!strcmp(k, "allow") || !strcmp(k, "deny") || !strcmp(k, "ask")) {
    a->kind = TG_RULE_ANSWERED;
    a->verdict = k[0] == 'd' ? TG_VERDICT_DENY
                 : k[1] == 'l' ? TG_VERDICT_ALLOW : TG_VERDICT_ASK;
    a->text = tg__strdup(tg__rawgetstring(
        L, -1, a->verdict == TG_VERDICT_ASK ? "prompt" : "reason"));
  } else {
    snprintf(msg, sizeof msg, "rule '%s' (%s) returned %s; a rule returns "
             "tg.allow(), tg.deny(reason), tg.ask(prompt) or nothing",
             r->name, r->where, *k ? k : luaL_typename(L, -1));
    a->kind = TG_RULE_BAD;
    a->text = tg__strdup(msg);
  }
  lua_pop(L, 1);
}

/* Runs one rule. Returns 1 when it answered (decision set), 0 when not,
 * -1 when it failed closed (call failed). */
static int run_rule(tg_call *c, const tg_rule *r) {
  tg_rule_answer a;
  tg__rule_judge(c, r, &a);
  /* a failure's text was lost only to an out-of-memory: still fail closed */
  const char *why = a.text ? a.text : "(out of memory describing it)";
  int answered = 1;
  switch (a.kind) {
    case TG_RULE_SILENT:
      answered = 0;
      break;
    case TG_RULE_ANSWERED:
      set_decision(c, a.verdict, r, a.text);
      break;
    case TG_RULE_RAISED:
      if (r->fail_open) {
        emit_rule_error(c, r, why);
        answered = 0;
        break;
      }
      set_decision(c, TG_VERDICT_DENY, r, a.text);
      tg__call_fail(c, TG_STATUS_ERROR, TG_PHASE_POLICY, TG_E_RULE_ERROR, 0,
                    "the tool did not run: %s", why);
      answered = -1;
      break;
    case TG_RULE_BAD:
      set_decision(c, TG_VERDICT_DENY, r, NULL);
      tg__call_fail(c, TG_STATUS_ERROR, TG_PHASE_POLICY, TG_E_BAD_VERDICT, 0,
                    "%s", why);
      answered = -1;
      break;
  }
  free(a.text);
  return answered;
}

static void fail_denied(tg_call *c) {
  char by[600];
  if (c->rule) snprintf(by, sizeof by, "rule '%s'", c->rule);
  else snprintf(by, sizeof by, "default (no rule allowed it)");
  tg__call_fail(c, TG_STATUS_DENIED, TG_PHASE_AUTHORIZE, TG_E_DENIED, 0,
                "the tool did not run; do not assume it succeeded. Denied by "
                "%s%s%s",
                by, c->reason ? ": " : "", c->reason ? c->reason : "");
  free(c->error.suggestion);
  c->error.suggestion = tg__strdup(
      "do not retry the same call; change the request or ask the user");
}

void tg__rules_changed_call(const tg_rule *last, char *msg, size_t len) {
  snprintf(msg, len, "the call was changed while the rules judged it (the "
           "last rule that ran is '%s' at %s); rules are judges: they return "
           "a verdict and leave call.args, call.tool and the rest as they are",
           last->name, last->where);
}

tg_step tg__stage_authorize(tg_call *c) {
  tg_generation *g = c->gen;
  int answered = 0;
  const tg_rule *last = NULL;
  c->remembered = 0;
  c->approval_how = NULL;
  c->approval_ref = 0;
  for (size_t i = 0; i < g->nrules && !answered; i++) {
    if (!tg__rule_covers(&g->rules[i], c->tool_name,
                         tg__call_also_names(c)))
      continue;
    last = &g->rules[i];
    answered = run_rule(c, last);
    if (answered < 0) {
      emit_decision(c, 0);
      return TG_END;
    }
  }
  if (last && !tg__call_facts_intact(c)) { /* fail closed */
    char msg[700];
    tg__rules_changed_call(last, msg, sizeof msg);
    set_decision(c, TG_VERDICT_DENY, last, NULL);
    tg__call_fail(c, TG_STATUS_ERROR, TG_PHASE_POLICY, TG_E_RULE_ERROR, 0,
                  "the tool did not run: %s", msg);
    emit_decision(c, 0);
    return TG_END;
  }
  if (!answered) {
    tg_verdict v = c->tool && c->tool->read_only ? TG_VERDICT_ALLOW
                                                 : c->core->cfg.default_verdict;
    set_decision(c, v, NULL, NULL);
  }
  if (c->verdict == TG_VERDICT_ASK && tg__always_covers(c)) {
    c->verdict = TG_VERDICT_ALLOW;
    c->remembered = 1;
    c->approval_how = "remembered";
  }
  emit_decision(c, !answered);
  if (c->verdict == TG_VERDICT_DENY) {
    fail_denied(c);
    return TG_END;
  }
  return TG_NEXT;
}
