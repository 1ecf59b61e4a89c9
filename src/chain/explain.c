/*
 * explain.c — the dry run behind `toolgate explain` and rt:explain: what
 * the chain would decide for a call, without running it.
 *
 * The rules are evaluated for real, in the chain's order and with the
 * chain's stopping rule (the first answer decides), against a call record
 * that is never started: it is not in ch->calls, emits no event, and its
 * call table says dry_run = true. Rules are judges, so this is safe for
 * rules written as the policy API asks; a rule with side effects will have
 * them. Hooks and the tool are only listed, never run: a pre-hook may
 * rewrite the call, which the real chain would then judge again — the
 * explanation says so rather than guessing. A rule's tg.taint is listed
 * in the explanation ("taints") and kept nowhere.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "call.h"
#include "base/schema.h"
#include "lua/luajson.h"
#include "policy/sandbox.h"

/* ---- the request ------------------------------------------------------ */

/* Appends name to list (", "-separated) while it fits. */
static void add_name(char *list, size_t cap, size_t *n, const char *name) {
  if (*n >= cap - 1) return;
  int w = snprintf(list + *n, cap - *n, "%s%s", *n ? ", " : "", name);
  if (w > 0) *n = *n + (size_t)w < cap ? *n + (size_t)w : cap - 1;
}

static void unknown_tool(tg_chain *ch, const char *name, char *err) {
  char list[400] = "";
  size_t n = 0;
  for (size_t i = 0; i < ch->core->nctools; i++)
    add_name(list, sizeof list, &n, ch->core->ctools[i]->name);
  for (size_t i = 0; ch->gen && i < ch->gen->ntools; i++)
    add_name(list, sizeof list, &n, ch->gen->tools[i]->name);
  tg__errf(err, TG_ERRMSG, "unknown tool '%s' (registered: %s)", name,
           n ? list : "none");
}

/* A call record that is judged but never started. */
static tg_call *dry_call(tg_chain *ch, const tg_call_request *req,
                         cJSON *args, tg_call_strategy *how) {
  tg_call *c = tg__call_new(ch, req, args, "explain", NULL);
  if (!c) return NULL;
  c->dry_run = 1;
  if (how) tg__call_set_strategy(c, how);
  tg__call_push_table(c); /* made once; every rule sees this table */
  lua_pop(c->gen->L, 1);
  return c;
}

static void dry_call_free(tg_call *c) {
  tg__call_free_fields(c);
  free(c);
}

/* ---- the rules -------------------------------------------------------- */

typedef struct {
  tg_verdict verdict;
  const tg_rule *rule;      /* NULL: the default */
  char *reason;             /* the rule's reason / prompt (owned) */
  int failed;               /* the call would fail (POLICY), not be denied */
} decision;

static void add_str(cJSON *o, const char *k, const char *v) {
  if (v) cJSON_AddStringToObject(o, k, v);
}

static void skipped(cJSON *o, const tg_rule *r) {
  char why[300] = "applies to:";
  size_t n = strlen(why);
  for (size_t i = 0; i < r->ntools && n < sizeof why - 1; i++) {
    int w = snprintf(why + n, sizeof why - n, "%s %s", i ? "," : "",
                     r->tools[i]);
    n = w < 0 ? n : n + (size_t)w;
  }
  cJSON_AddStringToObject(o, "status", "skipped");
  cJSON_AddStringToObject(o, "why", why);
}

/* Runs one rule as authorize.c does; describes what it did in o.
 * Returns 1 when it decided (d filled), else 0. */
static int run_rule(tg_call *c, const tg_rule *r, cJSON *o, decision *d) {
  tg_rule_answer a;
  tg__rule_judge(c, r, &a);
  switch (a.kind) {
    case TG_RULE_SILENT:
      cJSON_AddStringToObject(o, "status", "no answer");
      return 0;
    case TG_RULE_ANSWERED:
      cJSON_AddStringToObject(o, "status", "answered");
      cJSON_AddStringToObject(o, "answer", tg_verdict_name(a.verdict));
      add_str(o, "reason", a.text);
      *d = (decision){a.verdict, r, a.text, 0}; /* d owns the text now */
      return 1;
    case TG_RULE_RAISED:
      cJSON_AddStringToObject(o, "status", "error");
      cJSON_AddStringToObject(o, "error", a.text);
      cJSON_AddStringToObject(o, "fail", r->fail_open ? "open" : "closed");
      if (r->fail_open) { /* the next rule is asked */
        free(a.text);
        return 0;
      }
      *d = (decision){TG_VERDICT_DENY, r, a.text, 1};
      return 1;
    case TG_RULE_BAD:
      cJSON_AddStringToObject(o, "status", "error");
      cJSON_AddStringToObject(o, "error", a.text);
      *d = (decision){TG_VERDICT_DENY, r, a.text, 1};
      return 1;
  }
  free(a.text);
  return 0;
}

static cJSON *explain_rules(tg_call *c, decision *d) {
  cJSON *a = cJSON_CreateArray();
  const tg_generation *g = c->gen;
  int decided = 0;
  const tg_rule *last = NULL;
  for (size_t i = 0; i < g->nrules; i++) {
    const tg_rule *r = &g->rules[i];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", r->name);
    cJSON_AddNumberToObject(o, "priority", r->priority);
    cJSON_AddStringToObject(o, "where", r->where);
    if (!tg__rule_covers(r, c->tool_name, tg__call_also_names(c))) {
      skipped(o, r);
    } else if (decided) {
      cJSON_AddStringToObject(o, "status", "not reached");
    } else {
      last = r;
      decided = run_rule(c, r, o, d);
    }
    cJSON_AddItemToArray(a, o);
  }
  if (last && !d->failed && !tg__call_facts_intact(c)) { /* as authorize.c */
    char msg[700];
    tg__rules_changed_call(last, msg, sizeof msg);
    free(d->reason);
    *d = (decision){TG_VERDICT_DENY, last, tg__strdup(msg), 1};
  }
  return a;
}

/* ---- the verdict ------------------------------------------------------ */

static void default_decision(tg_call *c, decision *d, char *why, size_t len) {
  int ro = c->tool->read_only;
  d->verdict = ro ? TG_VERDICT_ALLOW : c->core->cfg.default_verdict;
  snprintf(why, len, "no rule answered, so the default applies: %s",
           ro ? "the tool is read-only, so it is allowed"
              : "the tool is not read-only, so the runtime's "
                "default_verdict decides");
}

/* What an ask leads to, as approve.c would handle it. */
static const char *approval_outcome(tg_chain *ch, const tg_call *c,
                                    int remembered) {
  if (c->how && c->how->ask == TG_ASK_LEFT && !remembered)
    return "left to the agent: it asks its user, or its own permission "
           "flow decides when the verdict is toolgate's default";
  if (remembered)
    return "approved by a remembered approve-always answer; nobody is "
           "asked";
  switch (ch->core->cfg.approve_mode) {
    case TG_APPROVE_ALLOW:
      return "approved without asking (approve mode allow)";
    case TG_APPROVE_DENY:
      return "rejected without asking (approve mode deny)";
    default:
      return ch->approver ? "the approver would be asked"
                          : "rejected: no approver is configured";
  }
}

static cJSON *explain_decision(tg_call *c, const decision *d, int remembered,
                               const char *default_why) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "verdict", tg_verdict_name(d->verdict));
  if (d->rule) {
    cJSON_AddStringToObject(o, "rule", d->rule->name);
    cJSON_AddStringToObject(o, "where", d->rule->where);
  } else {
    cJSON_AddNullToObject(o, "rule");
  }
  add_str(o, "reason", d->reason);
  cJSON_AddBoolToObject(o, "by_default", d->rule == NULL);
  char why[600];
  if (!d->rule)
    snprintf(why, sizeof why, "%s", default_why);
  else if (d->failed)
    snprintf(why, sizeof why, "rule '%s' failed closed: the call would end "
             "with a POLICY error and the tool would not run", d->rule->name);
  else
    snprintf(why, sizeof why, "rule '%s' answered first", d->rule->name);
  cJSON_AddStringToObject(o, "why", why);
  if (d->failed) cJSON_AddTrueToObject(o, "policy_error");
  if (remembered) cJSON_AddTrueToObject(o, "remembered");
  return o;
}

/* ---- hooks, validation ------------------------------------------------ */

static cJSON *explain_validation(const tg_call *c) {
  cJSON *o = cJSON_CreateObject();
  if (!c->tool->validator) {
    cJSON_AddTrueToObject(o, "ok");
    cJSON_AddStringToObject(o, "note", "the tool has no schema");
    return o;
  }
  char msg[1024];
  int ok = tg_schema_validate(c->tool->validator, c->args, msg, sizeof msg) == 0;
  cJSON_AddBoolToObject(o, "ok", ok);
  if (!ok) cJSON_AddStringToObject(o, "error", msg);
  return o;
}

static cJSON *tool_info(const tg_tool *t) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "where", t->where ? t->where : "C");
  cJSON_AddBoolToObject(o, "read_only", t->read_only);
  return o;
}

static void add_notes(cJSON *j, int hooks_run, int has_pre) {
  cJSON *n = cJSON_AddArrayToObject(j, "notes");
  cJSON_AddItemToArray(n, cJSON_CreateString(
      "rules were evaluated for real (call.dry_run is true); hooks and the "
      "tool did not run"));
  if (hooks_run && has_pre)
    cJSON_AddItemToArray(n, cJSON_CreateString(
        "a pre-hook may rewrite the call or answer it; a rewritten call is "
        "judged by the rules again"));
}

/* ---- what the call touches and runs ----------------------------------- */

/* [call] -> {paths = call.paths, commands = call.commands,
 *           network = call.network} */
static int read_facts(lua_State *L) {
  lua_createtable(L, 0, 3);
  lua_getfield(L, 1, "network");
  lua_setfield(L, -2, "network");
  lua_getfield(L, 1, "paths");
  lua_setfield(L, -2, "paths");
  lua_getfield(L, 1, "commands");
  lua_setfield(L, -2, "commands");
  return 1;
}

/* call.paths and call.commands as the rules read them (call_facts.h):
 * each path written and resolved, each command with its wrappers and
 * why it is opaque. Read after the rules, so a rule that read them has
 * them computed once; computed here (in the rules' limits) otherwise. */
static void add_facts(tg_call *c, cJSON *j) {
  lua_State *L = c->gen->L;
  int top = lua_gettop(L);
  lua_pushcfunction(L, read_facts);
  tg__call_push_table(c);
  char why[300] = "";
  if (tg__sandbox_pcall(c->gen->sb, L, 1, 1) != LUA_OK) {
    if (!tg__sandbox_describe_stop(c->gen->sb, "call.paths / call.commands / call.network",
                                   why, sizeof why))
      snprintf(why, sizeof why, "%s", lua_type(L, -1) == LUA_TSTRING
                                          ? lua_tostring(L, -1)
                                          : "an error that is not a string");
    cJSON_AddStringToObject(j, "facts_error", why);
  } else {
    cJSON *f = tg__json_from_lua(L, -1, why, sizeof why);
    if (!f) cJSON_AddStringToObject(j, "facts_error", why);
    cJSON *p = f ? cJSON_DetachItemFromObjectCaseSensitive(f, "paths") : NULL;
    cJSON *k = f ? cJSON_DetachItemFromObjectCaseSensitive(f, "commands") : NULL;
    cJSON *net = f ? cJSON_DetachItemFromObjectCaseSensitive(f, "network") : NULL;
    if (p) cJSON_AddItemToObject(j, "paths", p);
    if (k) cJSON_AddItemToObject(j, "commands", k);
    if (net) cJSON_AddItemToObject(j, "network", net);
    cJSON_Delete(f);
  }
  lua_settop(L, top);
}

/* ---- putting it together ---------------------------------------------- */

static cJSON *explain(tg_call *c) {
  cJSON *j = cJSON_CreateObject();
  tg_generation *g = c->gen;
  cJSON_AddStringToObject(j, "tool", c->tool_name);
  cJSON_AddItemToObject(j, "args", cJSON_Duplicate(c->args, 1));
  cJSON_AddStringToObject(j, "session", c->session);
  cJSON_AddNumberToObject(j, "generation", (double)g->number);
  cJSON_AddItemToObject(j, "tool_info", tool_info(c->tool));
  decision d = {TG_VERDICT_NONE, NULL, NULL, 0};
  /* a rule's tg.taint is listed, not kept: the call never runs */
  tg_core *core = c->ch->core;
  cJSON *was_seen = core->taint_seen, *taints = cJSON_CreateArray();
  int was_dry = core->taint_dry;
  core->taint_seen = taints;
  core->taint_dry = 1;
  cJSON_AddItemToObject(j, "rules", explain_rules(c, &d));
  char default_why[300] = "";
  if (d.verdict == TG_VERDICT_NONE)
    default_decision(c, &d, default_why, sizeof default_why);
  int remembered = 0;
  if (d.verdict == TG_VERDICT_ASK) remembered = tg__always_covers(c);
  cJSON_AddItemToObject(j, "decision",
                        explain_decision(c, &d, remembered, default_why));
  if (d.verdict == TG_VERDICT_ASK)
    cJSON_AddStringToObject(j, "approval",
                            approval_outcome(c->ch, c, remembered));
  cJSON_AddItemToObject(j, "validation", explain_validation(c));
  add_facts(c, j);
  core->taint_seen = was_seen;
  core->taint_dry = was_dry;
  if (cJSON_GetArraySize(taints) > 0) cJSON_AddItemToObject(j, "taints", taints);
  else cJSON_Delete(taints);
  const char *const *also = tg__call_also_names(c);
  cJSON *pre = tg__hooks_describe(g, 0, c->tool_name, also); /* the chain's order */
  cJSON_AddItemToObject(j, "pre_hooks", pre);
  cJSON_AddItemToObject(j, "post_hooks",
                        tg__hooks_describe(g, 1, c->tool_name, also));
  /* a deny (or a rule failing) ends the call before any hook runs */
  int hooks_run = d.verdict != TG_VERDICT_DENY;
  cJSON_AddBoolToObject(j, "hooks_run", hooks_run);
  add_notes(j, hooks_run, cJSON_GetArraySize(pre) > 0);
  free(d.reason);
  return j;
}

cJSON *tg__chain_explain(tg_chain *ch, const tg_call_request *req,
                  char err[TG_ERRMSG]) {
  return tg__chain_explain_with(ch, req, NULL, err);
}

cJSON *tg__chain_explain_with(tg_chain *ch, const tg_call_request *req,
                              tg_call_strategy *how, char err[TG_ERRMSG]) {
  if (!req || !req->tool || !*req->tool) {
    tg__errf(err, TG_ERRMSG, "explain needs a tool name");
    return NULL;
  }
  if (!ch->gen || ch->core->freeing) {
    tg__errf(err, TG_ERRMSG, "the runtime is shutting down");
    return NULL;
  }
  if (req->metadata && !cJSON_IsObject(req->metadata)) {
    tg__errf(err, TG_ERRMSG, "metadata must be a JSON object");
    return NULL;
  }
  /* the tool first, as a call checks it first */
  const tg_tool *tool = tg__chain_find_tool(ch, ch->gen, req->tool);
  if (!tool && !(how && how->own_tool && !strcmp(how->own_tool, req->tool))) {
    unknown_tool(ch, req->tool, err);
    return NULL;
  }
  cJSON *args = tg__call_parse_args(ch, req, err);
  if (!args) return NULL;
  tg_call *c = dry_call(ch, req, args, how);
  if (!c) {
    tg__errf(err, TG_ERRMSG, "out of memory");
    return NULL;
  }
  cJSON *j = explain(c);
  dry_call_free(c);
  return j;
}
