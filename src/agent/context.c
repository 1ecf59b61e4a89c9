/*
 * context.c — tools a policy asked to run for the model's context
 * (agent.context_from(call, tool, args, label) in a hook): after the
 * event's own hooks, each runs through the chain as a call of its own —
 * judged by the rules like any call; an ask is refused, nobody being there
 * to answer — and what it gave becomes text the agent passes to the model
 * (additionalContext): the test run after an edit. They run side by side
 * and are cut at the answer's deadline (cancelled, partial output kept),
 * so an answer never waits past it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>
#include "protocol.h"

#define MAX_CALLS 4           /* per event */
#define MAX_SHOWN 8000        /* bytes of one call's output: its end */

typedef struct ctx_run ctx_run;

typedef struct {
  ctx_run *run;
  char id[64];
  char *label;
  char *text;                 /* what it gave, once ended */
} ctx_call;

struct ctx_run {
  tg_runtime *rt;
  ctx_call calls[MAX_CALLS];
  int n, pending;
  uv_timer_t timer;
  tg_closer closer;
  void (*done)(void *ud, char *text);
  void *ud;
};

static void run_closed(tg_closer *cl) {
  ctx_run *r = tg__owner_of(cl, ctx_run, closer);
  for (int i = 0; i < r->n; i++) {
    free(r->calls[i].label);
    free(r->calls[i].text);
  }
  free(r);
}

/* The texts, in the order asked, as one. */
static char *joined(ctx_run *r) {
  size_t len = 1;
  for (int i = 0; i < r->n; i++)
    len += strlen(r->calls[i].label) + strlen(r->calls[i].text ? r->calls[i].text : "") + 8;
  char *s = malloc(len), *p = s;
  if (!s) return NULL;
  *p = '\0';
  for (int i = 0; i < r->n; i++)
    p += sprintf(p, "%s%s:\n%s", i ? "\n\n" : "", r->calls[i].label,
                 r->calls[i].text ? r->calls[i].text : "(no output)");
  return s;
}

static void all_ended(ctx_run *r) {
  uv_timer_stop(&r->timer);
  r->done(r->ud, joined(r));
  tg__close(&r->closer, (uv_handle_t *)&r->timer, 0); /* frees r */
}

/* The end of s, at most MAX_SHOWN bytes, on a line start when it can. */
static const char *tail(const char *s, int *cut) {
  size_t n = strlen(s);
  *cut = n > MAX_SHOWN;
  if (!*cut) return s;
  const char *t = s + n - MAX_SHOWN, *nl = strchr(t, '\n');
  return nl && nl - t < 200 ? nl + 1 : t;
}

/* An exec result ({exit_code, stdout, stderr}) as a terminal shows it;
 * anything else as JSON. */
static char *text_of(const cJSON *res) {
  const cJSON *out = cJSON_GetObjectItemCaseSensitive(res, "stdout");
  const cJSON *err = cJSON_GetObjectItemCaseSensitive(res, "stderr");
  const cJSON *code = cJSON_GetObjectItemCaseSensitive(res, "exit_code");
  char *all;
  if (cJSON_IsString(out) || cJSON_IsString(err)) {
    const char *o = cJSON_IsString(out) ? out->valuestring : "";
    const char *e = cJSON_IsString(err) ? err->valuestring : "";
    size_t n = strlen(o) + strlen(e) + 2;
    all = malloc(n);
    if (all) snprintf(all, n, "%s%s", o, e);
  } else if (cJSON_IsString(res)) {
    all = tg__strdup(res->valuestring);
  } else {
    all = res ? tg_json_print(res, 0) : tg__strdup("");
  }
  if (!all) return NULL;
  int cut;
  const char *t = tail(all, &cut);
  size_t n = strlen(t) + 96; /* the cut note and "(exit code N)" */
  char *s = malloc(n);
  if (s) {
    snprintf(s, n, "%s%s", cut ? "[... the start is cut]\n" : "", t);
    char num[TG_JSON_NUMBER_MAX]; /* as the number it is: no int of it */
    if (cJSON_IsNumber(code))
      snprintf(s + strlen(s), n - strlen(s), "%s(exit code %s)",
               *t && t[strlen(t) - 1] != '\n' ? "\n" : "",
               tg_json_number_text(code->valuedouble, num));
  }
  free(all);
  return s;
}

static void call_done(tg_runtime *rt, const tg_outcome *o, void *ud) {
  (void)rt;
  ctx_call *c = ud;
  ctx_run *r = c->run;
  char *t = o->status == TG_STATUS_OK || o->result ? text_of(o->result) : NULL;
  if (o->status != TG_STATUS_OK) {
    char head[700];
    /* whoever answers (an instance with an approver or without, the hook
     * in-process) says the same */
    if (o->status == TG_STATUS_REJECTED)
      snprintf(head, sizeof head, "(rejected: it needs approval, and nobody "
               "is there to give it: allow it with a rule)");
    else
      snprintf(head, sizeof head, "(%s: %s)", tg_status_name(o->status),
               o->error.message ? o->error.message : "no reason given");
    size_t n = strlen(head) + (t ? strlen(t) : 0) + 2;
    char *both = malloc(n);
    if (both) snprintf(both, n, "%s%s%s", t ? t : "", t ? "\n" : "", head);
    free(t);
    t = both;
  }
  c->text = t;
  if (--r->pending == 0) all_ended(r);
}

static void deadline_cb(uv_timer_t *t) {
  ctx_run *r = t->data;
  for (int i = 0; i < r->n; i++) tg_call_cancel(r->rt, r->calls[i].id);
}

/* "$ make test" for an exec call, else "tool {args}", unless labelled. */
static char *label_of(const char *tool, const cJSON *args, const char *label) {
  char buf[600];
  const char *cmd = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(args, "command"));
  if (label) snprintf(buf, sizeof buf, "%s", label);
  else if (!strcmp(tool, "exec") && cmd) snprintf(buf, sizeof buf, "$ %s", cmd);
  else {
    char *a = tg_json_print(args, 0);
    snprintf(buf, sizeof buf, "%s %s", tool, a ? a : "{}");
    free(a);
  }
  return tg__strdup(buf);
}

int tg__hook_context_start(tg_runtime *rt, const cJSON *meta,
                           const cJSON *event, uint64_t deadline_ms,
                           void (*done)(void *ud, char *text), void *ud) {
  const cJSON *asked = cJSON_GetObjectItemCaseSensitive(meta, "agent_context_calls");
  if (!cJSON_IsArray(asked) || !cJSON_GetArraySize(asked)) return 0;
  ctx_run *r = calloc(1, sizeof *r);
  if (!r) return 0;
  r->rt = rt;
  r->done = done;
  r->ud = ud;
  r->closer.closed = run_closed;
  uv_timer_init(tg_runtime_loop(rt), &r->timer);
  r->timer.data = r;
  /* the event's own keys, as its call read them: the agent may send the
   * same name in another case too */
  const char *session = cJSON_GetStringValue(
      cJSON_GetObjectItemCaseSensitive(event, "session_id"));
  const char *cwd = cJSON_GetStringValue(
      cJSON_GetObjectItemCaseSensitive(event, "cwd"));
  r->pending = 1; /* this function's own: no call ending at once ends all */
  const cJSON *a;
  cJSON_ArrayForEach(a, asked) {
    const char *tool = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(a, "tool"));
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(a, "args");
    if (r->n == MAX_CALLS || !tool || (args && !cJSON_IsObject(args))) continue;
    ctx_call *c = &r->calls[r->n++];
    c->run = r;
    snprintf(c->id, sizeof c->id, "hook-context-%p-%d", (void *)r, r->n);
    cJSON *copy = args ? cJSON_Duplicate(args, 1) : cJSON_CreateObject();
    /* a command runs where the agent works, unless told otherwise */
    if (copy && !strcmp(tool, "exec") && cwd && *cwd == '/' &&
        !cJSON_GetObjectItemCaseSensitive(copy, "cwd"))
      cJSON_AddStringToObject(copy, "cwd", cwd);
    c->label = label_of(tool, copy,
                        cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(a, "label")));
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "agent", cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(meta, "agent")));
    cJSON_AddStringToObject(m, "agent_context_for",
                            cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(meta, "agent_tool")));
    tg_call_request req;
    memset(&req, 0, sizeof req);
    req.id = c->id;
    req.tool = tool;
    req.args = copy;
    req.session = session;
    req.metadata = m;
    const char *proj = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(meta, "agent_project"));
    req.project = proj ? proj : ""; /* none: not the runtime's either */
    char err[TG_ERRMSG];
    r->pending++;
    if (!copy || !c->label ||
        tg_call_start(rt, &req, call_done, c, err) < 0) {
      r->pending--;
      char msg[TG_ERRMSG + 40];
      snprintf(msg, sizeof msg, "(did not start: %s)", copy ? err : "out of memory");
      c->text = tg__strdup(msg);
      if (!c->label) c->label = tg__strdup(tool);
    }
    cJSON_Delete(copy);
    cJSON_Delete(m);
  }
  if (--r->pending == 0) { /* nothing runs still: refused, or not started */
    all_ended(r);
    return 1;
  }
  uv_update_time(tg_runtime_loop(rt));
  uv_timer_start(&r->timer, deadline_cb, deadline_ms ? deadline_ms : 10000, 0);
  return 1;
}
