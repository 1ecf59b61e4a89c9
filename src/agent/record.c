/*
 * record.c — what an agent's hooks tell of besides tool calls:
 *
 *   UserPromptSubmit   the session's turn goes up by one (tool calls
 *                      after it carry it: call.turn, the audit), the chat
 *                      layers see the prompt, and it is kept as the
 *                      session's user message
 *   Stop, SubagentStop the model and tokens the agent wrote to its
 *                      transcript since the last stop go to the usage
 *                      ledger, so budgets see real spend
 *   SessionStart/End   the session begun, ended
 *
 * With a database, the session, its turn and how far its transcript was
 * read live there: each hook event may be its own process, and a
 * resident instance and an in-process answer share them. Without one,
 * the runtime's memory keeps them (a resident instance). Where they are
 * kept is the runtime's to know (runtime/hook_services.h); usage reaches the
 * budgets either way, and with a database it is written in one
 * transaction with the transcript mark.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "protocol.h"

/* the transcript read per stop, at most (the rest waits for the next): a
 * resident instance reads it on its loop, so this bounds the pause */
#define TRANSCRIPT_MAX_READ (8u << 20)

static const char *str(const cJSON *o, const char *k) {
  return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k));
}

/* ---- the transcript mark, as JSON text ------------------------------------ */

/* Whole numbers as decimal strings: an inode number can pass 2^53, where
 * a JSON number (a double) would lose it — and then never match again. */
static uint64_t big(const cJSON *o, const char *k) {
  const char *v = str(o, k);
  return v ? strtoull(v, NULL, 10) : 0;
}

static void mark_parse(const char *text, tg_hook_mark *m) {
  memset(m, 0, sizeof *m);
  cJSON *j = text ? tg_json_parse(text, strlen(text), NULL, NULL, 0) : NULL;
  const cJSON *t = cJSON_GetObjectItemCaseSensitive(j, "last_total");
  m->offset = big(j, "offset");
  m->dev = big(j, "dev");
  m->ino = big(j, "ino");
  m->last_total = cJSON_IsNumber(t) ? t->valuedouble : 0;
  snprintf(m->last_id, sizeof m->last_id, "%s",
           str(j, "last_id") ? str(j, "last_id") : "");
  cJSON_Delete(j);
}

static char *mark_print(const tg_hook_mark *m) {
  char n[3][24];
  snprintf(n[0], sizeof n[0], "%llu", (unsigned long long)m->offset);
  snprintf(n[1], sizeof n[1], "%llu", (unsigned long long)m->dev);
  snprintf(n[2], sizeof n[2], "%llu", (unsigned long long)m->ino);
  cJSON *j = cJSON_CreateObject();
  cJSON_AddStringToObject(j, "offset", n[0]);
  cJSON_AddStringToObject(j, "dev", n[1]);
  cJSON_AddStringToObject(j, "ino", n[2]);
  cJSON_AddNumberToObject(j, "last_total", m->last_total);
  cJSON_AddStringToObject(j, "last_id", m->last_id);
  char *out = tg_json_print(j, 0); /* NULL when any of it failed */
  cJSON_Delete(j);
  return out;
}

/* ---- stops -------------------------------------------------------------------- */

/* What one event is recorded under. */
typedef struct {
  tg_runtime *rt;
  const char *agent, *session;
  const char *project;       /* the session's folder (real path), or NULL */
  const cJSON *ev;
} recording;

static int record_stop(const recording *r, char *err) {
  const char *path = str(r->ev, "transcript_path");
  const tg_dialect *d = tg__dialect(r->agent);
  if (!path || !*path) return 0; /* nothing to read */
  if (!d || !d->transcript_usage) return 0; /* a transcript not read */
  char *old = NULL, *neu = NULL;
  tg_hook_mark mark;
  tg_hook_usage u[TG_HOOK_MAX_USAGE_MODELS];
  int n = 0;
  int64_t turn = 0;
  int rc = tg__hooksvc_mark_get(r->rt, r->session, &old, &turn, err);
  if (rc == 0) {
    mark_parse(old, &mark);
    rc = tg__hook_transcript_usage(r->agent, path, str(r->ev, "model"), &mark,
                                   TRANSCRIPT_MAX_READ, u, &n, err);
  }
  if (rc == 0 && !(neu = mark_print(&mark))) {
    snprintf(err, TG_ERRMSG, "out of memory");
    rc = -ENOMEM;
  }
  tg_hook_spend spend[TG_HOOK_MAX_USAGE_MODELS];
  for (int i = 0; rc == 0 && i < n; i++)
    /* the ledger's input is all the model read: fresh, written to the
     * cache, read from it */
    spend[i] = (tg_hook_spend){u[i].model,
                               u[i].input_tokens + u[i].cache_creation_input_tokens +
                                   u[i].cache_read_input_tokens,
                               u[i].output_tokens};
  if (rc == 0)
    rc = tg__hooksvc_stop_commit(r->rt, r->session, r->agent, r->project,
                                 turn, old, neu, spend, (size_t)n, err);
  free(old);
  free(neu);
  return rc < 0 ? -1 : 0;
}

/* ---- prompts and sessions ----------------------------------------------------- */

/* The chat layers see each prompt: a chat begun and ended around it
 * (before_chat, then after_chat, with ctx.request = {agent, prompt, cwd,
 * permission_mode}). A hook sees the prompt, not the model's answer, and
 * each hook may be its own process, so both run here, the same in every
 * process. A chat the host itself has open for the session is left
 * alone. */
static int prompt_layers(const recording *r, char *err) {
  static const char *const fields[] = {"prompt", "cwd", "permission_mode",
                                       NULL};
  cJSON *req = cJSON_CreateObject();
  cJSON_AddStringToObject(req, "agent", r->agent);
  for (int i = 0; fields[i]; i++)
    if (str(r->ev, fields[i]))
      cJSON_AddStringToObject(req, fields[i], str(r->ev, fields[i]));
  tg_chat_request cr = {r->session, str(r->ev, "model"), r->project, req};
  int rc = tg_chat_begin(r->rt, &cr, err);
  cJSON_Delete(req);
  if (rc == -EBUSY) return 0;
  if (rc < 0) return -1;
  tg_chat_result res = {r->session, 1, NULL, NULL};
  return tg_chat_end(r->rt, &res, err) < 0 ? -1 : 0;
}

static int record_prompt(const recording *r, char *err) {
  if (tg__hooksvc_prompt_counted(r->rt, r->session, r->agent, r->project,
                                 err) < 0 ||
      prompt_layers(r, err) < 0)
    return -1;
  return tg__hooksvc_prompt_kept(r->rt, r->session, str(r->ev, "prompt"),
                                 err);
}

static int record_session(const recording *r, int start, char *err) {
  return tg__hooksvc_session_noted(r->rt, r->session, r->agent, r->project,
                                   start, err);
}

char *tg__hook_project(const cJSON *ev) {
  return tg__hooksvc_project(str(ev, "cwd"));
}

int tg__hook_record(tg_runtime *rt, const char *agent, tg_hook_event kind,
                    const char *name, const cJSON *ev, char *err,
                    size_t errlen) {
  char why[TG_ERRMSG] = "";
  const char *session = str(ev, "session_id");
  int rc = 0;
  if (kind < TG_HOOK_EV_PROMPT || !session || !*session)
    return 0; /* nothing to record, or nothing to keep it under */
  if (tg__hooksvc_session_check(session, why) < 0) {
    snprintf(err, errlen, "%s not recorded: %s", name, why);
    return -1;
  }
  char *project = tg__hook_project(ev);
  recording r = {rt, agent, session, project, ev};
  rc = kind == TG_HOOK_EV_PROMPT ? record_prompt(&r, why)
       : kind == TG_HOOK_EV_STOP ? record_stop(&r, why)
       : record_session(&r, kind == TG_HOOK_EV_SESSION_START, why);
  free(project);
  if (rc < 0) snprintf(err, errlen, "%s not recorded: %s", name, why);
  return rc < 0 ? -1 : 0;
}
