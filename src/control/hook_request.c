/*
 * hook_request.c — hook events over the control socket (the protocol is
 * in control.h): the resident instance's side, which answers with the
 * same tg_hook_answer as `toolgate hook` in-process, and the client's,
 * tg_hook_remote, which is all a hook process does when an instance runs:
 * connect, send, read, print — no Lua, no policies.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "control.h"

/* The answer with its stdout and stderr: room for an event's rewrite. */
#define HOOK_MAX_REPLY ((size_t)TG_HOOK_MAX_EVENT * 4 + 4096)

static void answered(tg_runtime *rt, const tg_hook_result *res, void *ud) {
  (void)rt;
  tg__control_answer_hook(ud, res);
}

void tg__control_hook(tg_runtime *rt, tg_conn *c, const cJSON *head,
                      const char *body, size_t len) {
  tg_hook_request req;
  memset(&req, 0, sizeof req);
  req.agent = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(head, "agent"));
  req.on_error = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(head, "on_error"));
  req.toolgate_defaults =
      cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(head, "toolgate_defaults"));
  const cJSON *dl = cJSON_GetObjectItemCaseSensitive(head, "deadline_ms");
  if (cJSON_IsNumber(dl) && dl->valuedouble >= 1 && dl->valuedouble < 864e5)
    req.deadline_ms = (uint64_t)dl->valuedouble;
  const cJSON *turn = cJSON_GetObjectItemCaseSensitive(head, "turn");
  if (cJSON_IsNumber(turn) && turn->valuedouble >= 0 &&
      turn->valuedouble < 9e15)
    req.turn = (int64_t)turn->valuedouble;
  req.event_name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(head, "event"));
  req.event = body;
  req.event_len = len;
  char err[TG_ERRMSG] = "";
  if (tg_hook_answer(rt, &req, answered, c, err) < 0)
    tg__control_answer_error(c, err);
}

/* ---- the client --------------------------------------------------------- */

static int reply_error(const char *path, const char *why, char *err) {
  tg__errf(err, TG_ERRMSG, "the instance on '%s' sent a reply that is not "
           "understood: %s", path, why);
  return -EPROTO;
}

static int read_reply(const char *path, const char *r, size_t n,
                      tg_hook_result *out, char *err) {
  const char *nl = memchr(r, '\n', n);
  if (!nl) return reply_error(path, "no header line", err);
  char msg[300];
  cJSON *h = tg_json_parse(r, (size_t)(nl - r), NULL, msg, sizeof msg);
  if (!h) return reply_error(path, msg, err);
  if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(h, "ok"))) {
    const char *e = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(h, "error"));
    tg__errf(err, TG_ERRMSG, "the instance on '%s' refused the event: %s",
             path, e ? e : "(no reason given)");
    cJSON_Delete(h);
    return -EPROTO;
  }
  double code = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(h, "exit_code"));
  double no = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(h, "stdout_bytes"));
  double ne = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(h, "stderr_bytes"));
  cJSON_Delete(h);
  size_t rest = n - (size_t)(nl + 1 - r);
  if (!(code == 0 || code == 2) || !(no >= 0 && ne >= 0) ||
      no + ne != (double)rest)
    return reply_error(path, "the answer's sizes do not add up", err);
  const char *p = nl + 1;
  out->exit_code = (int)code;
  out->output = strndup(p, (size_t)no);
  out->message = ne > 0 ? strndup(p + (size_t)no, (size_t)ne) : NULL;
  if (!out->output || (ne > 0 && !out->message)) {
    tg_hook_result_free(out);
    tg__errf(err, TG_ERRMSG, "out of memory");
    return -ENOMEM;
  }
  return 0;
}

/* An event name put in the request's header as it is: a word. */
static int plain_word(const char *s) {
  size_t n = s ? strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTU"
                           "VWXYZ0123456789_-") : 0;
  return s && n && n <= 64 && !s[n];
}

int tg_hook_remote(const char *socket_path, const tg_hook_request *req,
                   tg_hook_result *out, uint64_t timeout_ms,
                   char err[TG_ERRMSG]) {
  memset(out, 0, sizeof *out);
  if (!socket_path || !req || !tg_hook_agent_known(req->agent) ||
      !tg_hook_on_error_known(req->on_error) || !req->event ||
      req->event_len > TG_HOOK_MAX_EVENT ||
      (req->event_name && !plain_word(req->event_name))) {
    tg__errf(err, TG_ERRMSG, "a hook request needs a socket, a known agent, "
             "on_error deny|ask|allow, an event of at most %u bytes and an "
             "event name of letters, digits, _ and - (or none)",
             TG_HOOK_MAX_EVENT);
    return -EINVAL;
  }
  char head[384], ename[96] = "";
  if (req->event_name)
    snprintf(ename, sizeof ename, "\"event\":\"%s\",", req->event_name);
  int hn = snprintf(head, sizeof head,
                    "{\"cmd\":\"hook\",\"agent\":\"%s\",%s\"on_error\":\"%s\","
                    "\"toolgate_defaults\":%s,\"turn\":%lld,"
                    "\"deadline_ms\":%llu,\"bytes\":%zu}\n",
                    req->agent, ename, req->on_error ? req->on_error : "deny",
                    req->toolgate_defaults ? "true" : "false",
                    (long long)(req->turn > 0 ? req->turn : 0),
                    (unsigned long long)(req->deadline_ms ? req->deadline_ms
                                                          : 10000),
                    req->event_len);
  char *msg = malloc((size_t)hn + req->event_len);
  if (!msg) {
    tg__errf(err, TG_ERRMSG, "out of memory");
    return -ENOMEM;
  }
  memcpy(msg, head, (size_t)hn);
  memcpy(msg + hn, req->event, req->event_len);
  char *r = NULL;
  size_t rn = 0;
  int rc = tg__control_exchange(socket_path, msg, (size_t)hn + req->event_len,
                                &r, &rn, HOOK_MAX_REPLY,
                                timeout_ms ? timeout_ms : 10000, err);
  free(msg);
  if (rc == 0) rc = read_reply(socket_path, r, rn, out, err);
  free(r);
  return rc;
}
