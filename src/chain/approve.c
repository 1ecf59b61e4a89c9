/*
 * approve.c — the human in the loop. After an ask, the approver answers
 * approve, approve-always or reject with guidance; no answer within
 * approval_timeout_ms counts as a reject. The answer may come at once or
 * much later; other calls go on meanwhile. The approver is the call's own
 * when it was started with one (tg__chain_call_start_approved), else the
 * runtime's.
 *
 * Approve-always is remembered at the grain a person chose: these
 * exact args, a glob on one argument, or the whole tool; for the session or the project;
 * until a time or forever (core/approval.h has the rule). With storage on
 * the store keeps it (core->sink) and every runtime on the database
 * honours it; until the store has it, and always with storage off, it is
 * kept here in memory.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "call.h"
#include "base/json.h"

/* A remembered approval kept in memory: the strings are its own. */
struct tg_always {
  tg_approval a;
  tg_chain *ch;
  tg_always *next;
};

static void always_free(tg_always *e) {
  free((char *)e->a.tool);
  free((char *)e->a.args_key);
  free((char *)e->a.arg);
  free((char *)e->a.glob);
  free((char *)e->a.session);
  free((char *)e->a.project);
  free(e);
}

int tg__always_covers(tg_call *c) {
  tg_approval_query q = {.tool = c->tool_name, .session = c->session,
                         .project = tg__call_project(c), .args = c->args,
                         .now_ms = (int64_t)tg__wall_ms()};
  const tg_sink *sink = &c->core->sink;
  int hit = 0;
  int64_t id = 0;
  for (tg_always *e = c->ch->always; e && !hit; e = e->next)
    hit = tg__approval_covers(&e->a, &q);
  if (!hit && sink->approval_find) hit = sink->approval_find(sink->ud, &q, &id);
  tg__approval_query_done(&q);
  c->approval_ref = id;
  return hit;
}

/* The store has it (id > 0): the database answers from now on, so that
 * a revoke there takes effect here too. id 0: it could not be stored (a
 * store_error event said why); it stays in memory. */
static void stored(void *arg, int64_t id) {
  tg_always *e = arg;
  if (!id) return;
  for (tg_always **p = &e->ch->always; *p; p = &(*p)->next)
    if (*p == e) {
      *p = e->next;
      always_free(e);
      return;
    }
}

/* An in-memory approval of what s says, for call c. NULL when out of
 * memory (then nothing is remembered: the next call asks again). */
static tg_always *always_new(tg_call *c, const tg_always_spec *s) {
  tg_always *e = calloc(1, sizeof *e);
  if (!e) return NULL;
  int pat = s->scope == TG_SCOPE_PATTERN, proj = s->where == TG_WHERE_PROJECT;
  e->ch = c->ch;
  e->a = (tg_approval){
      .scope = s->scope,
      .tool = tg__strdup(c->tool_name),
      .args_key = s->scope == TG_SCOPE_ARGS ? tg_json_print_sorted(c->args)
                                            : NULL,
      .arg = pat ? tg__strdup(s->arg) : NULL,
      .glob = pat ? tg__strdup(s->glob) : NULL,
      .where = s->where,
      .session = proj ? NULL : tg__strdup(c->session),
      .project = proj ? tg__strdup(tg__call_project(c)) : NULL,
      .until_ms = s->until_ms};
  /* an entry missing its args or glob would cover more than was said */
  if (!e->a.tool || (s->scope == TG_SCOPE_ARGS && !e->a.args_key) ||
      (pat && (!e->a.arg || !e->a.glob)) || (!proj && !e->a.session) ||
      (proj && !e->a.project)) {
    always_free(e);
    return NULL;
  }
  return e;
}

static void remember(tg_call *c, const tg_always_spec *s) {
  tg_always *e = always_new(c, s);
  if (!e) return;
  e->next = c->ch->always;
  c->ch->always = e;
  const tg_sink *sink = &c->core->sink;
  if (sink->approval_add)
    sink->approval_add(sink->ud, &e->a, c->id, stored, e);
}

void tg__always_free(tg_chain *ch) {
  while (ch->always) {
    tg_always *e = ch->always;
    ch->always = e->next;
    always_free(e);
  }
}

static const char *answer_name(int a) {
  return a == TG_ANSWER_APPROVE ? "approve"
         : a == TG_ANSWER_ALWAYS ? "always" : "reject";
}

/* What an always covers, in the approval event. */
static void add_always(cJSON *d, const tg_always_spec *s) {
  cJSON_AddStringToObject(d, "scope", tg__scope_name(s->scope));
  if (s->scope == TG_SCOPE_PATTERN) {
    cJSON_AddStringToObject(d, "arg", s->arg);
    cJSON_AddStringToObject(d, "glob", s->glob);
  }
  cJSON_AddStringToObject(d, "where", tg__where_name(s->where));
  if (s->until_ms) cJSON_AddNumberToObject(d, "until", (double)s->until_ms);
}

static void emit_answer(tg_call *c, int answer, const char *by,
                        const char *guidance, const tg_always_spec *s) {
  /* for the audit: the approver's answer, "timeout", "mode-approve" or
   * "mode-reject" (static strings) */
  c->approval_how = !strcmp(by, "mode")
                        ? (answer == TG_ANSWER_REJECT ? "mode-reject"
                                                      : "mode-approve")
                    : !strcmp(by, "approver") ? answer_name(answer) : by;
  cJSON *d = tg__call_event_data(c); /* NULL: nobody listens */
  if (d) {
    cJSON_AddStringToObject(d, "answer", answer_name(answer));
    cJSON_AddStringToObject(d, "by", by);
    if (guidance) cJSON_AddStringToObject(d, "guidance", guidance);
    if (s) add_always(d, s);
  }
  tg__call_emit(c, "approval", d);
}

static void reject(tg_call *c, const char *why, const char *guidance) {
  int has = guidance && *guidance;
  tg__call_fail(c, TG_STATUS_REJECTED, TG_PHASE_APPROVE, TG_E_REJECTED, 0,
                "the tool did not run: %s. Do not assume it succeeded; "
                "request updated guidance or offer alternatives.%s%s",
                why, has ? " User guidance: " : "", has ? guidance : "");
}

/* Emits the answer event with the driver's guard held: a handler that
 * cancels the call then only marks it, and the tg__call_advance after
 * this handles the cancel — instead of ending (and freeing) the call
 * under our feet. */
static void emit_answer_guarded(tg_call *c, int answer, const char *by,
                                const char *guidance,
                                const tg_always_spec *s) {
  int was = c->advancing;
  c->advancing = 1;
  emit_answer(c, answer, by, guidance, s);
  c->advancing = was;
}

static void approval_timeout_cb(uv_timer_t *t) {
  tg_call *c = t->data;
  if (!c->approval_id) return;
  c->approval_id = 0;
  c->approve_answer = TG_ANSWER_REJECT;
  char why[128];
  snprintf(why, sizeof why, "no answer within %llu ms (approval timed out)",
           (unsigned long long)c->core->cfg.approval_timeout_ms);
  reject(c, why, NULL);
  emit_answer_guarded(c, TG_ANSWER_REJECT, "timeout", NULL, NULL);
  tg__call_advance(c);
}

static void emit_request(tg_call *c) {
  cJSON *d = tg__call_event_data(c); /* NULL: nobody listens */
  if (d) {
    cJSON_AddNumberToObject(d, "approval_id", (double)c->approval_id);
    cJSON_AddStringToObject(d, "tool", c->tool_name);
    cJSON_AddItemToObject(d, "args", cJSON_Duplicate(c->args, 1));
    if (c->reason) cJSON_AddStringToObject(d, "prompt", c->reason);
    if (c->rule) cJSON_AddStringToObject(d, "rule", c->rule);
  }
  tg__call_emit(c, "approval_request", d);
}

/* Asks the approver; it may answer before this returns. */
static void ask(tg_call *c) {
  tg_chain *ch = c->ch;
  c->approval_id = ch->next_approval_id++;
  emit_request(c);
  if (!c->approval_id) return; /* an event handler answered already */
  uv_timer_t *t = tg__call_wait_timer(c);
  uv_update_time(ch->core->loop); /* the loop's clock may be stale (policy load) */
  if (t) uv_timer_start(t, approval_timeout_cb, ch->core->cfg.approval_timeout_ms, 0);
  tg_approval_request req = {c->approval_id, c->id, c->tool_name, c->args,
                             c->session, c->reason, c->rule};
  if (c->approver) c->approver(ch->core->rt, &req, c->approver_ud);
  else ch->approver(ch->core->rt, &req, ch->approver_ud);
}

tg_step tg__stage_approve(tg_call *c) {
  if (c->verdict != TG_VERDICT_ASK) return TG_NEXT;
  tg_ask_how asking = c->how ? c->how->ask : TG_ASK_APPROVER;
  /* an agent's hook: the agent asks its user itself */
  if (asking == TG_ASK_LEFT) return TG_NEXT;
  if (!c->approve_answer && !c->approval_id) {
    tg_approve_mode m = c->core->cfg.approve_mode;
    if (asking == TG_ASK_APPROVED) { /* toolgate test: the case goes on */
      c->approve_answer = TG_ANSWER_APPROVE;
      emit_answer(c, TG_ANSWER_APPROVE, "test", NULL, NULL);
    } else if (m == TG_APPROVE_ALLOW) {
      c->approve_answer = TG_ANSWER_APPROVE;
      emit_answer(c, TG_ANSWER_APPROVE, "mode", NULL, NULL);
    } else if (m == TG_APPROVE_DENY || (!c->approver && !c->ch->approver)) {
      c->approve_answer = TG_ANSWER_REJECT;
      reject(c, m == TG_APPROVE_DENY
                    ? "approval needed, and the approver is set to deny "
                      "(non-interactive mode)"
                    : "approval needed, and no approver is configured",
             NULL);
      emit_answer(c, TG_ANSWER_REJECT, "mode", NULL, NULL);
    } else {
      ask(c);
    }
  }
  if (!c->approve_answer) return TG_WAIT;
  return c->approve_answer == TG_ANSWER_REJECT ? TG_END : TG_NEXT;
}

static tg_call *call_by_approval(tg_chain *ch, uint64_t id) {
  for (tg_call *c = ch->calls; c; c = c->next)
    if (c->approval_id == id) return c;
  return NULL;
}

/* Applies an answer (checked) to c: s is what an always covers. */
static void apply_answer(tg_call *c, tg_answer answer,
                         const tg_always_spec *s, const char *guidance) {
  c->approval_id = 0;
  if (c->wait_timer) uv_timer_stop(c->wait_timer);
  if (answer == TG_ANSWER_UNAVAILABLE) { /* a reject that says why */
    char why[1024];
    snprintf(why, sizeof why, "approval needed, but approval was not "
             "possible here%s%s", guidance && *guidance ? ": " : "",
             guidance ? guidance : "");
    answer = TG_ANSWER_REJECT;
    reject(c, why, NULL);
  } else if (answer == TG_ANSWER_REJECT) {
    reject(c, "the user rejected the call", guidance);
  }
  c->approve_answer = (int)answer;
  if (answer == TG_ANSWER_ALWAYS) remember(c, s);
  emit_answer_guarded(c, (int)answer, "approver", guidance,
                      answer == TG_ANSWER_ALWAYS ? s : NULL);
  tg__call_advance(c); /* no-op when answered from inside the ask */
}

int tg__chain_answer(tg_chain *ch, uint64_t approval_id, tg_answer answer,
                     tg_always_scope scope, const char *guidance) {
  tg_call *c = approval_id ? call_by_approval(ch, approval_id) : NULL;
  if (!c) return -ENOENT;
  if (answer < TG_ANSWER_APPROVE || answer > TG_ANSWER_UNAVAILABLE)
    return -EINVAL;
  /* the session, forever; a pattern needs the spec (answer_always) */
  tg_always_spec s = {.scope = scope, .where = TG_WHERE_SESSION};
  if (answer == TG_ANSWER_ALWAYS &&
      (scope != TG_SCOPE_TOOL && scope != TG_SCOPE_ARGS))
    return -EINVAL;
  apply_answer(c, answer, &s, guidance);
  return 0;
}

int tg__chain_answer_always(tg_chain *ch, uint64_t approval_id,
                            const tg_always_spec *spec, char err[TG_ERRMSG]) {
  tg_call *c = approval_id ? call_by_approval(ch, approval_id) : NULL;
  if (!c) {
    tg__errf(err, TG_ERRMSG, "no pending approval %llu (answered, timed out "
             "or cancelled)", (unsigned long long)approval_id);
    return -ENOENT;
  }
  int rc = tg__always_spec_check(spec, &c->core->redact,
                                  (int64_t)tg__wall_ms(), err);
  if (rc < 0) return rc;
  const char *project = tg__call_project(c);
  if (spec->where == TG_WHERE_PROJECT && (!project || !*project)) {
    tg__errf(err, TG_ERRMSG, "approve-always for the project: the call has "
             "no project (tg_call_request.project, tg_config.project, or a "
             "current directory)");
    return -EINVAL;
  }
  apply_answer(c, TG_ANSWER_ALWAYS, spec, NULL);
  return 0;
}

void tg__approve_withdraw(tg_call *c) {
  if (!c->approval_id) return;
  c->approval_id = 0;
  if (c->wait_timer) uv_timer_stop(c->wait_timer);
}

void tg__chain_set_approver(tg_chain *ch, tg_approver_cb cb, void *ud) {
  ch->approver = cb;
  ch->approver_ud = ud;
}

void tg__chain_set_approve_mode(tg_chain *ch, tg_approve_mode mode) {
  ch->core->cfg.approve_mode = mode;
}
