/*
 * policy_test.c — tg_policy_test, the runner behind `toolgate test`: every
 * case of the policies folder's test files (policy/policy_tests.c) runs
 * through the real chain of the current generation with the case's fixture
 * given in place of the tool (chain/strategy.c) — rules, pre-hooks, rules again after a
 * rewrite, validation, post-hooks — and is compared with what it expects.
 * No tool runs; an ask is approved without asking.
 *
 * A case may be an agent's call: its tool and args are the agent's
 * (Bash {command}, Edit {file_path, old_string, new_string},
 * mcp__github__create_issue {...}), named with agent = "claude-code" or
 * "codex", or without it when a mapping table knows the name. It is
 * mapped as a hook event is (agent_map.c) and judged as the hook judges
 * it. A case may also be the agent's own event (event = the JSON it
 * sends: Gemini CLI's BeforeTool, Copilot CLI's payload with event_name
 * saying which event, ...): the agent protocol, a layer above, reads it
 * into the canonical event through the reader it installed
 * (tg__policy_test_reader), which also checks a case's agent name. A
 * case may also name a tool nobody registers (an upstream MCP
 * server's, github__create_issue) as a stand-in (stand_in = true,
 * read_only = ...): judged by its name, as an agent's own tool is;
 * network = true marks its tool as reaching the network (call.network).
 * A case's tg.taint is kept in this run's memory, never in a database,
 * and listed with the case ("taints").
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "runtime.h"
#include "base/util.h"
#include "policy/policy_tests.h"
#include "base/json.h"
#include "core/network.h"
#include "runtime/front_api.h"
#include "hook_services.h"

typedef struct {
  int done;
  cJSON *outcome;                 /* tg_outcome_to_json of the call */
} case_run;

static void case_done(tg_runtime *rt, const tg_outcome *o, void *ud) {
  (void)rt;
  case_run *r = ud;
  r->done = 1;
  r->outcome = tg_outcome_to_json(o);
}

static const char *str(const cJSON *o, const char *k) {
  return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k));
}

/* A failure line, printf-style, into the case's list. */
static void failure(cJSON *fails, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void failure(cJSON *fails, const char *fmt, ...) {
  char buf[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  cJSON_AddItemToArray(fails, cJSON_CreateString(buf));
}

/* JSON text of v for a message, cut to a readable length. */
static void json_text(const cJSON *v, char *buf, size_t len) {
  char *s = v ? tg_json_print(v, 0) : NULL;
  snprintf(buf, len, "%s", s ? s : "nothing");
  if (s && strlen(s) >= len && len > 4) memcpy(buf + len - 4, "...", 4);
  free(s);
}

/* "allow by rule 'r' (file:line): reason", "allow by default", or that
 * the call never reached the rules. */
static void decision_text(const cJSON *out, const tg_call_seen *f, char *buf,
                          size_t len) {
  const cJSON *d = cJSON_GetObjectItemCaseSensitive(out, "decision");
  const char *v = str(d, "verdict"), *rule = str(d, "rule");
  const char *word = tg_decision_word(v, str(cJSON_GetObjectItemCaseSensitive(out, "error"),
                                             "code"));
  if (rule && !strcmp(word, "error"))
    snprintf(buf, len, "error: rule '%s' (%s) failed closed%s%s", rule,
             f->rule_where ? f->rule_where : "?", f->reason ? ": " : "",
             f->reason ? f->reason : "");
  else if (rule)
    snprintf(buf, len, "%s by rule '%s' (%s)%s%s", v, rule,
             f->rule_where ? f->rule_where : "?", f->reason ? ": " : "",
             f->reason ? f->reason : "");
  else if (!v || !strcmp(v, tg_verdict_name(TG_VERDICT_NONE)))
    snprintf(buf, len, "no decision (the call ended before the rules)");
  else
    snprintf(buf, len, "%s by default (no rule answered)", v);
}

/* ---- the checks ---------------------------------------------------------- */

typedef struct {
  tg_policy_tests *t;
  const cJSON *cs;                /* the case */
  const cJSON *out;               /* the outcome */
  const tg_call_seen *f;
  cJSON *fails;
} checking;

/* The verdict and the rule that made it, in one line when either is not
 * what the case expects: "expected allow by rule 'x', got deny by ...". */
static void check_decision(checking *k) {
  const cJSON *d = cJSON_GetObjectItemCaseSensitive(k->out, "decision");
  const char *want = str(k->cs, "expect"), *rule = str(k->cs, "rule");
  const char *got_v = str(d, "verdict"), *got_r = str(d, "rule");
  int by_default = cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(k->cs, "rule"));
  int bad = (want && strcmp(want, got_v ? got_v : "")) ||
            (rule && (!got_r || strcmp(rule, got_r))) ||
            (by_default && got_r);
  if (!bad) return;
  char got[1200], exp[300];
  decision_text(k->out, k->f, got, sizeof got);
  snprintf(exp, sizeof exp, "%s%s%s%s%s", want ? want : "a decision",
           rule ? " by rule '" : by_default ? " by default" : "",
           rule ? rule : "", rule ? "'" : "",
           by_default ? " (no rule answering)" : "");
  failure(k->fails, "expected %s, got %s", exp, got);
}

static void check_reason(checking *k) {
  const char *pat = str(k->cs, "reason_match");
  if (!pat) return;
  if (!k->f->reason) {
    failure(k->fails, "expected a reason matching '%s', but the decision "
            "has none", pat);
    return;
  }
  char err[TG_ERRMSG];
  int hit = tg__policy_tests_find(k->t, k->f->reason, pat, err, sizeof err);
  if (hit < 0) failure(k->fails, "reason_match: %s", err);
  else if (!hit)
    failure(k->fails, "the reason \"%s\" does not match '%s'", k->f->reason,
            pat);
}

/* What the pre-hooks left: the tool and the args. */
static void check_rewrite(checking *k) {
  const char *tool = str(k->cs, "expect_tool");
  const cJSON *args = cJSON_GetObjectItemCaseSensitive(k->cs, "expect_args");
  if (tool && (!k->f->tool || strcmp(tool, k->f->tool)))
    failure(k->fails, "expected the pre-hooks to leave tool '%s', got '%s'",
            tool, k->f->tool ? k->f->tool : "?");
  if (args && !tg_json_equal(args, k->f->args)) {
    char want[700], got[700];
    json_text(args, want, sizeof want);
    json_text(k->f->args, got, sizeof got);
    failure(k->fails, "expected args after the pre-hooks %s, got %s", want,
            got);
  }
}

static void check_result(checking *k) {
  const cJSON *want = cJSON_GetObjectItemCaseSensitive(k->cs, "expect_result");
  const cJSON *got = cJSON_GetObjectItemCaseSensitive(k->out, "result");
  if (want && !tg_json_equal(want, got)) {
    char w[700], g[700];
    json_text(want, w, sizeof w);
    json_text(cJSON_IsNull(got) && !cJSON_IsNull(want) ? NULL : got, g,
              sizeof g);
    failure(k->fails, "expected result %s, got %s", w, g);
  }
}

/* The error code: the one expected, or none that the case did not
 * foresee. A deny is the verdict's to check; the fixture's own error may
 * pass through; anything else (a rule or hook that failed, an abort,
 * args the schema refuses) fails the case unless expect_error_code names
 * it. */
static void check_error(checking *k) {
  const char *want = str(k->cs, "expect_error_code");
  const cJSON *e = cJSON_GetObjectItemCaseSensitive(k->out, "error");
  const char *code = str(e, "code"), *msg = str(e, "message");
  const char *own = str(cJSON_GetObjectItemCaseSensitive(k->cs, "error"), "code");
  if (want && !code)
    failure(k->fails, "expected error %s, but the call ends %s", want,
            str(k->out, "status"));
  else if (want && strcmp(want, code))
    failure(k->fails, "expected error %s, got %s: %s", want, code, msg);
  else if (!want && code && strcmp(code, "DENIED") &&
           !(cJSON_GetObjectItemCaseSensitive(k->cs, "error") &&
             !strcmp(code, own ? own : "TOOL_ERROR")))
    failure(k->fails, "the call ends %s with %s %s: %s%s", str(k->out, "status"),
            str(e, "phase"), code, msg, strcmp(code, "UNKNOWN_TOOL") ? ""
            : " (a tool of an agent: agent = \"claude-code\", \"codex\", "
              "\"gemini\", \"copilot\", \"cursor\" or \"opencode\"; "
              "of an MCP server toolgate serves: stand_in = true)");
}

/* ---- one case -------------------------------------------------------------- */

static void fill_request(tg_call_request *req, const cJSON *cs) {
  memset(req, 0, sizeof *req);
  req->tool = str(cs, "tool");
  req->args = cJSON_GetObjectItemCaseSensitive(cs, "args"); /* NULL: {} */
  req->session = str(cs, "session");
  req->metadata = cJSON_GetObjectItemCaseSensitive(cs, "metadata");
}

/* A case that is an agent's call: the event it stands for, its mapping
 * and metadata (kept until the call ends). */
typedef struct {
  cJSON *event;
  tg_agent_call m;
  cJSON *metadata;
} agent_case;

static void agent_case_clear(agent_case *a) {
  cJSON_Delete(a->event);
  tg__agent_call_clear(&a->m);
  cJSON_Delete(a->metadata);
  memset(a, 0, sizeof *a);
}

/* The hook event the case stands for: the agent's PreToolUse (with a
 * result, PostToolUse) of its tool and args, in its cwd (the case's, or
 * the runner's). */
static cJSON *case_event(const cJSON *cs) {
  return tg__agent_event(str(cs, "tool"), cJSON_GetObjectItemCaseSensitive(cs, "args"),
                         cJSON_GetObjectItemCaseSensitive(cs, "result"), str(cs, "cwd"),
                         str(cs, "session"));
}

/* network = true: the case's tool reaches the network (call.network), as
 * toolgate.lua's servers.x.network would say, from then on in this run;
 * an agent's MCP tool (mcp__x__y) is judged as x__y, marked too. */
static void mark_network(tg_runtime *rt, const char *tool) {
  tg__network_mark(&rt->core, tool);
  if (!strncmp(tool, "mcp__", 5) && tool[5])
    tg__network_mark(&rt->core, tool + 5);
}

/* Sets the call up as an agent's (mapped) or a stand-in's when the case
 * is one: 1 when it is, 0 when it is an ordinary call, -1 with why. */
static int agent_or_stand_in(tg_runtime *rt, const cJSON *cs,
                             tg_call_strategy *how, tg_call_request *req,
                             agent_case *a, char err[TG_ERRMSG]) {
  memset(a, 0, sizeof *a);
  const char *tool = str(cs, "tool"), *agent = str(cs, "agent");
  if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(cs, "stand_in"))) {
    how->own_tool = tool;
    how->own_tool_read_only = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(cs, "read_only"));
    return 1;
  }
  const cJSON *d;
  cJSON_ArrayForEach(d, rt->core.declared_tools) /* toolgate.lua declares it */
    if (!agent && !cJSON_GetObjectItemCaseSensitive(cs, "event") &&
        !strcmp(tool, str(d, "name") ? str(d, "name") : "") &&
        !tg__chain_find_tool(&rt->chain, rt->chain.gen, tool)) {
      how->own_tool = tool;
      how->own_tool_read_only = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(d, "read_only"));
      return 1;
    }
  char which[64] = "";
  const cJSON *given = cJSON_GetObjectItemCaseSensitive(cs, "event");
  cJSON *canon = NULL;
  if (rt->case_reader && (given || agent)) {
    /* the agent's name checked, its native event made canonical */
    const char *named = NULL;
    if (rt->case_reader(agent, str(cs, "event_name"), given, &named, &canon,
                        err, TG_ERRMSG) < 0)
      return -1;
    agent = named;
  } else if (given && !agent) { /* Codex's events carry the turn (turn_id) */
    agent = cJSON_GetObjectItemCaseSensitive(given, "turn_id") ? "codex" : "claude-code";
  }
  if (!agent) {
    if (tg__chain_find_tool(&rt->chain, rt->chain.gen, tool)) return 0;
    if (tg__agent_which(rt, tool, which, sizeof which, err, TG_ERRMSG) < 0)
      return -1;
    if (!which[0]) return 0; /* the chain says the tool is unknown */
    agent = which;
  }
  int raised = 0;
  a->event = canon ? canon : given ? cJSON_Duplicate(given, 1) : case_event(cs);
  if (given && !canon && !cJSON_GetObjectItemCaseSensitive(a->event, "hook_event_name"))
    cJSON_AddStringToObject(a->event, "hook_event_name", "PreToolUse");
  if (tg__agent_map(rt, agent, a->event, &a->m, &raised, err, TG_ERRMSG) < 0) {
    char why[TG_ERRMSG];
    snprintf(why, sizeof why, "%s", err);
    tg__errf(err, TG_ERRMSG, "%s's %s cannot be judged: %s", agent, tool, why);
    return -1;
  }
  tg__agent_strategy(how, &a->m);
  a->metadata = tg__agent_metadata(agent, a->event, &a->m);
  const cJSON *own = cJSON_GetObjectItemCaseSensitive(cs, "metadata"), *kv;
  cJSON_ArrayForEach(kv, own) { /* the case's own metadata as well */
    cJSON_DeleteItemFromObjectCaseSensitive(a->metadata, kv->string);
    cJSON_AddItemToObject(a->metadata, kv->string, cJSON_Duplicate(kv, 1));
  }
  req->tool = a->m.tool;
  req->args = a->m.args;
  req->metadata = a->metadata;
  if (given && !req->session) req->session = str(a->event, "session_id");
  if (how->has_result || (given && a->m.result)) { /* a PostToolUse's */
    how->result = a->m.result;
    how->has_result = 1;
  }
  return 1;
}

/* What the case saw, for the report. */
static void describe_run(cJSON *o, const cJSON *out, const tg_call_seen *f) {
  const cJSON *d = cJSON_GetObjectItemCaseSensitive(out, "decision");
  cJSON *dec = cJSON_AddObjectToObject(o, "decision");
  cJSON_AddStringToObject(dec, "verdict", str(d, "verdict"));
  if (str(d, "rule")) cJSON_AddStringToObject(dec, "rule", str(d, "rule"));
  else cJSON_AddNullToObject(dec, "rule");
  if (f->rule_where) cJSON_AddStringToObject(dec, "where", f->rule_where);
  if (!strcmp(tg_decision_word(str(d, "verdict"),
                               str(cJSON_GetObjectItemCaseSensitive(out, "error"), "code")),
              "error"))
    cJSON_AddBoolToObject(dec, "policy_error", 1); /* as explain says it */
  if (f->reason) cJSON_AddStringToObject(dec, "reason", f->reason);
  cJSON_AddStringToObject(o, "status", str(out, "status"));
  cJSON_AddItemToObject(o, "error", cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(out, "error"), 1));
  if (f->tool) cJSON_AddStringToObject(o, "tool_run", f->tool);
  if (f->args) cJSON_AddItemToObject(o, "args_run", cJSON_Duplicate(f->args, 1));
  cJSON_AddItemToObject(o, "result", cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(out, "result"), 1));
}

/* Runs case cs; returns its report {name, file, line, where, tool, passed,
 * failures, decision, status, error, tool_run, args_run, result}. */
static cJSON *run_case(tg_runtime *rt, tg_policy_tests *t, const cJSON *cs) {
  cJSON *o = cJSON_CreateObject();
  char where[600];
  double line = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(cs, "line"));
  if (line > 0) snprintf(where, sizeof where, "%s:%.0f", str(cs, "file"), line);
  else snprintf(where, sizeof where, "%s", str(cs, "file"));
  cJSON_AddStringToObject(o, "name", str(cs, "name"));
  cJSON_AddStringToObject(o, "file", str(cs, "file"));
  cJSON_AddNumberToObject(o, "line", line);
  cJSON_AddStringToObject(o, "where", where);
  cJSON_AddStringToObject(o, "tool", str(cs, "tool"));
  cJSON *fails = cJSON_CreateArray();
  tg_call_strategy how; /* the case's fixture given; an ask approved */
  memset(&how, 0, sizeof how);
  how.tool = TG_TOOL_GIVEN;
  how.ask = TG_ASK_APPROVED;
  how.result = cJSON_GetObjectItemCaseSensitive(cs, "result");
  how.has_result = how.result != NULL;
  how.error = cJSON_GetObjectItemCaseSensitive(cs, "error");
  const tg_call_seen *f = &how.seen;
  tg_call_request req;
  fill_request(&req, cs);
  case_run r = {0, NULL};
  char err[TG_ERRMSG] = "";
  agent_case ac;
  if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(cs, "network")))
    mark_network(rt, str(cs, "tool"));
  cJSON *taints = cJSON_CreateArray(); /* what the case's tg.taint did */
  rt->core.taint_seen = taints;
  int ready = agent_or_stand_in(rt, cs, &how, &req, &ac, err);
  if (ready < 0)
    failure(fails, "%s", err);
  else if (tg__chain_call_with(&rt->chain, &req, &how, case_done, &r, err) < 0)
    failure(fails, "the call could not start: %s", err);
  /* a fixture call never waits; the loop turns only if that ever changes */
  while (!r.done && !err[0])
    if (uv_run(rt->core.loop, UV_RUN_ONCE) == 0 && !r.done) {
      failure(fails, "the call did not end");
      break;
    }
  if (r.outcome) {
    checking k = {t, cs, r.outcome, f, fails};
    check_decision(&k);
    check_reason(&k);
    check_rewrite(&k);
    check_result(&k);
    check_error(&k);
    describe_run(o, r.outcome, f);
  }
  rt->core.taint_seen = NULL;
  if (cJSON_GetArraySize(taints) > 0) cJSON_AddItemToObject(o, "taints", taints);
  else cJSON_Delete(taints);
  cJSON_AddBoolToObject(o, "passed", cJSON_GetArraySize(fails) == 0);
  cJSON_AddItemToObject(o, "failures", fails);
  cJSON_Delete(r.outcome);
  tg__call_seen_clear(&how.seen);
  agent_case_clear(&ac);
  return o;
}

void tg__policy_test_reader(tg_runtime *rt, tg_case_event_reader reader) {
  if (rt) rt->case_reader = reader;
}

/* ---- the run ------------------------------------------------------------ */

static int run_all(tg_runtime *rt, tg_policy_tests *t, const char *run,
                   cJSON *report, char *err) {
  cJSON *cases = cJSON_AddArrayToObject(report, "cases");
  int passed = 0, failed = 0, filtered = 0;
  const cJSON *cs;
  cJSON_ArrayForEach(cs, tg__policy_tests_cases(t)) {
    int hit = run ? tg__policy_tests_find(t, str(cs, "name"), run, err,
                                          TG_ERRMSG) : 1;
    if (hit < 0) return -1;
    if (!hit) {
      filtered++;
      continue;
    }
    cJSON *o = run_case(rt, t, cs);
    cJSON_AddItemToArray(cases, o);
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "passed"))) passed++;
    else failed++;
  }
  if (passed + failed == 0 && run) {
    tg__errf(err, TG_ERRMSG, "no case name matches --run '%s' (of %d cases)",
             run, filtered);
    return -1;
  }
  if (passed + failed == 0) {
    tg__errf(err, TG_ERRMSG, "the test files hold no case (each returns a "
             "list of cases: return { { name = ..., tool = ..., args = ... } })");
    return -1;
  }
  cJSON_AddNumberToObject(report, "passed", passed);
  cJSON_AddNumberToObject(report, "failed", failed);
  cJSON_AddNumberToObject(report, "filtered", filtered);
  return 0;
}

cJSON *tg_policy_test(tg_runtime *rt, const char *dir, const char *run,
                      char err[TG_ERRMSG]) {
  if (!dir) dir = rt->policies_dir;
  if (!dir) {
    tg__errf(err, TG_ERRMSG, "no policies folder to test");
    return NULL;
  }
  if (!rt->chain.gen || rt->core.freeing) {
    tg__errf(err, TG_ERRMSG, "the runtime is shutting down");
    return NULL;
  }
  tg_policy_tests *t = tg__policy_tests_load(&rt->core.cfg, dir, err, TG_ERRMSG);
  if (!t) return NULL;
  cJSON *report = cJSON_CreateObject();
  cJSON_AddStringToObject(report, "dir", dir);
  cJSON_AddNumberToObject(report, "generation", (double)rt->chain.gen->number);
  cJSON_AddItemToObject(report, "files",
                        cJSON_Duplicate(tg__policy_tests_files(t), 1));
  /* the cases' taints are the run's own: kept in memory, never written
   * to the user's database, and listed with each case */
  int was_memory = rt->core.taint_memory;
  rt->core.taint_memory = 1;
  int ran = run_all(rt, t, run, report, err);
  rt->core.taint_memory = was_memory;
  if (ran < 0) {
    cJSON_Delete(report);
    report = NULL;
  }
  tg__policy_tests_free(t);
  return report;
}
