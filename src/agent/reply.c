/*
 * reply.c — what toolgate says to a coding agent, in the agent's words:
 * the answer (a tg_hook_say) rendered by the agent's dialect (dialect.h:
 * the JSON its hook protocol reads on stdout and the exit code), for the
 * answers of the chain and for the fail-safe ones the front gives when
 * nothing could judge (tg_hook_fallback): the same shapes whatever path
 * the answer took.
 *
 * Exit codes: 0 with the JSON on stdout (or nothing: the agent goes on
 * as it would without the hook); 2 only for a fail-safe deny of an event
 * that could not be read (its name unknown), with the reason on stderr,
 * which an agent whose dialect says so treats as blocking a tool call
 * (the others get a deny in their own form). Never another code: an
 * agent takes any other for "the hook failed, carry on".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "protocol.h"

const char *tg__hook_told(const tg_hook_say *s, int more_context) {
  const tg_dialect *d = s->agent;
  int ctx = more_context || (s->context && *s->context);
  tg_hook_verdict v = tg__hook_said_verdict(s);
  if (s->event == TG_HOOK_EV_PRE) {
    if (!d->pre_context) ctx = 0;
  } else if (s->event == TG_HOOK_EV_PERMISSION) {
    if (v == TG_HOOK_ASK) v = TG_HOOK_NONE; /* the agent's prompt shows */
    ctx = 0;
  } else if (s->event == TG_HOOK_EV_POST ||
             s->event == TG_HOOK_EV_POST_FAILURE) {
    int can = s->event == TG_HOOK_EV_POST ? d->post_context
                                           : d->failure_context;
    return s->block && d->post_block ? "block"
           : s->updated_mcp_output ? "output"
           : ctx && can ? "context" : NULL;
  } else {
    return NULL;
  }
  if (v != TG_HOOK_NONE) return tg__hook_verdict_word(v);
  return ctx ? "context" : NULL;
}

static char *line_of(const char *s) {
  size_t n = strlen(s);
  char *l = malloc(n + 2);
  if (!l) return NULL;
  memcpy(l, s, n);
  l[n] = '\n';
  l[n + 1] = '\0';
  return l;
}

int tg__hook_render(const tg_hook_say *s, tg_hook_result *res) {
  memset(res, 0, sizeof *res);
  cJSON *out = cJSON_CreateObject();
  if (!out) return -ENOMEM;
  int code = s->exit_code;
  s->agent->render(s, out, &code);
  char *text = out->child ? tg_json_print(out, 0) : tg__strdup("");
  cJSON_Delete(out);
  res->output = text && *text ? line_of(text) : tg__strdup("");
  free(text);
  res->message = s->message && *s->message ? line_of(s->message) : NULL;
  res->exit_code = code;
  if (!res->output || (s->message && *s->message && !res->message)) {
    tg_hook_result_free(res);
    return -ENOMEM;
  }
  return 0;
}

void tg_hook_result_free(tg_hook_result *r) {
  if (!r) return;
  free(r->output);
  free(r->message);
  r->output = r->message = NULL;
}

/* ---- fail safe ---------------------------------------------------------- */

static tg_hook_verdict on_error_verdict(const char *on_error) {
  if (on_error && !strcmp(on_error, "allow")) return TG_HOOK_ALLOW;
  if (on_error && !strcmp(on_error, "ask")) return TG_HOOK_ASK;
  return TG_HOOK_DENY;
}

int tg_hook_on_error_known(const char *on_error) {
  return !on_error || !strcmp(on_error, "deny") || !strcmp(on_error, "ask") ||
         !strcmp(on_error, "allow");
}

int tg_hook_fallback(const char *agent, const char *event,
                     const char *on_error, const char *why,
                     tg_hook_result *out) {
  tg_hook_say s;
  char reason[2048], msg[2048];
  memset(&s, 0, sizeof s);
  memset(out, 0, sizeof *out);
  s.agent = tg__dialect(agent);
  if (!s.agent) return -EINVAL;
  why = tg__hook_some(why, "an unknown error");
  tg_hook_verdict v = on_error_verdict(on_error);
  snprintf(msg, sizeof msg, "toolgate hook: %s (on_error: %s)", why,
           tg__hook_verdict_word(v));
  s.message = msg;
  /* the agent's name of the event, or toolgate's */
  tg_hook_event kind = tg__dialect_kind(s.agent, event);
  if (kind == TG_HOOK_EV_OTHER) kind = tg__hook_event_kind(event);
  /* an event of nothing to judge (a prompt, a stop, a session, one
   * unknown): toolgate's failure never stops the agent there */
  if (!tg__hook_judged(kind) && event) return tg__hook_render(&s, out);
  if (!tg__hook_judged(kind)) { /* the event could not be read at all */
    if (v == TG_HOOK_ALLOW) return tg__hook_render(&s, out);
    if (v == TG_HOOK_DENY) {
      snprintf(msg, sizeof msg, "toolgate could not read the hook event, so "
               "the tool is blocked (on_error = deny): %s", why);
      s.exit_code = 2; /* blocks a tool call, the reason read from stderr */
      return tg__hook_render(&s, out);
    }
    kind = TG_HOOK_EV_PRE; /* ask: the only event an ask fits */
  }
  s.event = kind;
  if (kind == TG_HOOK_EV_POST || kind == TG_HOOK_EV_POST_FAILURE) {
    s.block = v == TG_HOOK_DENY;
    snprintf(reason, sizeof reason, "toolgate could not check this tool's "
             "result (on_error = %s): %s", tg__hook_verdict_word(v), why);
    if (s.block) s.reason = reason;
    else s.system_message = reason;
    return tg__hook_render(&s, out);
  }
  s.verdict = v;
  if (v == TG_HOOK_DENY)
    snprintf(reason, sizeof reason, "toolgate could not judge this call, so "
             "it is denied (on_error = deny); the tool did not run: %s", why);
  else if (v == TG_HOOK_ASK)
    snprintf(reason, sizeof reason, "toolgate could not judge this call "
             "(on_error = ask): %s. Approve only if you can judge it "
             "yourself.", why);
  else
    snprintf(reason, sizeof reason, "toolgate could not judge this call; "
             "allowed (on_error = allow): %s", why);
  s.reason = reason;
  return tg__hook_render(&s, out);
}
