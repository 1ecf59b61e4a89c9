/*
 * approve.c — the human in the loop. After an ask, the approver answers
 * approve, approve-always (remembered for the session: the whole tool or
 * these exact args) or reject with guidance; no answer within
 * approval_timeout_ms counts as a reject. The answer may come at once or
 * much later; other calls go on meanwhile.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "call.h"
#include "base/json.h"

struct tg_always {
  char *session;
  char *tool;
  char *args;               /* canonical JSON text; NULL: the whole tool */
  tg_always *next;
};

static int key_cmp(const void *a, const void *b) {
  const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;
  return strcmp(x->string ? x->string : "", y->string ? y->string : "");
}

/* Sorts every object's members by key, in place, so that the same args
 * written in another key order give the same text. */
static void sort_keys(cJSON *j) {
  size_t n = 0;
  for (cJSON *c = j->child; c; c = c->next) {
    sort_keys(c);
    n++;
  }
  if (!cJSON_IsObject(j) || n < 2) return;
  cJSON **v = malloc(n * sizeof *v);
  if (!v) return;
  n = 0;
  for (cJSON *c = j->child; c; c = c->next) v[n++] = c;
  qsort(v, n, sizeof *v, key_cmp);
  for (size_t i = 0; i < n; i++) { /* relink; cJSON's head->prev is the tail */
    v[i]->next = i + 1 < n ? v[i + 1] : NULL;
    v[i]->prev = i > 0 ? v[i - 1] : v[n - 1];
  }
  j->child = v[0];
  free(v);
}

/* The args as canonical JSON text (keys sorted): the key of an
 * approve-always that covers "these exact args". */
static char *args_key(const cJSON *args) {
  cJSON *copy = cJSON_Duplicate(args, 1);
  if (!copy) return NULL;
  sort_keys(copy);
  char *s = tg_json_print(copy, 0);
  cJSON_Delete(copy);
  return s;
}

int tg__always_covers(tg_call *c) {
  char *key = NULL;
  int hit = 0;
  for (tg_always *a = c->ch->always; a && !hit; a = a->next) {
    if (strcmp(a->session, c->session) || strcmp(a->tool, c->tool_name)) continue;
    if (!a->args) {
      hit = 1;
      break;
    }
    if (!key) key = args_key(c->args);
    hit = key && strcmp(key, a->args) == 0;
  }
  free(key);
  return hit;
}

/* Out of memory, nothing is remembered (the next call asks again): an
 * entry without its args would cover the whole tool. */
static void remember(tg_call *c, tg_always_scope scope) {
  tg_always *a = calloc(1, sizeof *a);
  if (!a) return;
  a->session = tg__strdup(c->session);
  a->tool = tg__strdup(c->tool_name);
  a->args = scope == TG_SCOPE_ARGS ? args_key(c->args) : NULL;
  if (!a->session || !a->tool || (scope == TG_SCOPE_ARGS && !a->args)) {
    free(a->session);
    free(a->tool);
    free(a->args);
    free(a);
    return;
  }
  a->next = c->ch->always;
  c->ch->always = a;
}

void tg__always_free(tg_chain *ch) {
  while (ch->always) {
    tg_always *a = ch->always;
    ch->always = a->next;
    free(a->session);
    free(a->tool);
    free(a->args);
    free(a);
  }
}

static const char *answer_name(int a) {
  return a == TG_ANSWER_APPROVE ? "approve"
         : a == TG_ANSWER_ALWAYS ? "always" : "reject";
}

static void emit_answer(tg_call *c, int answer, const char *by,
                        const char *guidance) {
  cJSON *d = tg__call_event_data(c); /* NULL: nobody listens */
  if (d) {
    cJSON_AddStringToObject(d, "answer", answer_name(answer));
    cJSON_AddStringToObject(d, "by", by);
    if (guidance) cJSON_AddStringToObject(d, "guidance", guidance);
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
                                const char *guidance) {
  int was = c->advancing;
  c->advancing = 1;
  emit_answer(c, answer, by, guidance);
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
  emit_answer_guarded(c, TG_ANSWER_REJECT, "timeout", NULL);
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
  ch->approver(ch->core->rt, &req, ch->approver_ud);
}

tg_step tg__stage_approve(tg_call *c) {
  if (c->verdict != TG_VERDICT_ASK) return TG_NEXT;
  /* an agent's hook: the agent asks its user itself */
  if (c->fixture && c->fixture->mode == TG_FIXTURE_JUDGE) return TG_NEXT;
  if (!c->approve_answer && !c->approval_id) {
    tg_approve_mode m = c->core->cfg.approve_mode;
    if (c->fixture) { /* toolgate test: nobody to ask, the case goes on */
      c->approve_answer = TG_ANSWER_APPROVE;
      emit_answer(c, TG_ANSWER_APPROVE, "test", NULL);
    } else if (m == TG_APPROVE_ALLOW) {
      c->approve_answer = TG_ANSWER_APPROVE;
      emit_answer(c, TG_ANSWER_APPROVE, "mode", NULL);
    } else if (m == TG_APPROVE_DENY || !c->ch->approver) {
      c->approve_answer = TG_ANSWER_REJECT;
      reject(c, m == TG_APPROVE_DENY
                    ? "approval needed, and the approver is set to deny "
                      "(non-interactive mode)"
                    : "approval needed, and no approver is configured",
             NULL);
      emit_answer(c, TG_ANSWER_REJECT, "mode", NULL);
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

int tg__chain_answer(tg_chain *ch, uint64_t approval_id, tg_answer answer,
                       tg_always_scope scope, const char *guidance) {
  tg_call *c = approval_id ? call_by_approval(ch, approval_id) : NULL;
  if (!c) return -ENOENT;
  if (answer < TG_ANSWER_APPROVE || answer > TG_ANSWER_REJECT) return -EINVAL;
  c->approval_id = 0;
  if (c->wait_timer) uv_timer_stop(c->wait_timer);
  c->approve_answer = (int)answer;
  if (answer == TG_ANSWER_ALWAYS) remember(c, scope);
  if (answer == TG_ANSWER_REJECT) reject(c, "the user rejected the call", guidance);
  emit_answer_guarded(c, (int)answer, "approver", guidance);
  tg__call_advance(c); /* no-op when answered from inside the ask */
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
