/*
 * hook_record.c — what an agent's hooks tell of besides tool calls:
 *
 *   UserPromptSubmit   the session's turn goes up by one (tool calls
 *                      after it carry it: call.turn, the audit), the chat
 *                      layers see the prompt, and it is kept as the
 *                      session's user message
 *   Stop, SubagentStop the model and tokens the agent wrote to its
 *                      transcript since the last stop go to the usage
 *                      ledger (tg_record_usage), so budgets see real spend
 *   SessionStart/End   the session begun, ended
 *
 * With a database, the session, its turn and how far its transcript was
 * read live there (store/agent_sessions.c): each hook event may be its own
 * process, and a resident instance and an in-process answer share them.
 * Without one, this runtime's memory keeps them (a resident instance).
 * Usage goes through tg_record_usage either way: budgets count it, and
 * with a database it lands in the ledger.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hook.h"
#include "runtime.h"
#include "base/util.h"
#include "core/turns.h"
#include "store/store.h"

/* the transcript read per stop, at most (the rest waits for the next) */
#define TRANSCRIPT_MAX_READ (64u << 20)

static const char *str(const cJSON *o, const char *k) {
  return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k));
}

int64_t tg__hook_turn(tg_runtime *rt, const char *session) {
  char err[TG_ERRMSG];
  int64_t turn = 0;
  if (!session) return 0;
  if (rt->store && tg__agent_read(rt->store, session, &turn, NULL, err) == 0)
    return turn;
  return tg_turn_current(rt, session);
}

/* ---- the transcript mark, as JSON text ------------------------------------ */

static double num(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsNumber(v) && v->valuedouble >= 0 ? v->valuedouble : 0;
}

static void mark_parse(const char *text, tg_hook_mark *m) {
  memset(m, 0, sizeof *m);
  cJSON *j = text ? tg_json_parse(text, strlen(text), NULL, NULL, 0) : NULL;
  m->offset = (uint64_t)num(j, "offset");
  m->dev = (uint64_t)num(j, "dev");
  m->ino = (uint64_t)num(j, "ino");
  m->last_total = num(j, "last_total");
  snprintf(m->last_id, sizeof m->last_id, "%s",
           str(j, "last_id") ? str(j, "last_id") : "");
  cJSON_Delete(j);
}

static char *mark_print(const tg_hook_mark *m) {
  cJSON *j = cJSON_CreateObject();
  cJSON_AddNumberToObject(j, "offset", (double)m->offset);
  cJSON_AddNumberToObject(j, "dev", (double)m->dev);
  cJSON_AddNumberToObject(j, "ino", (double)m->ino);
  cJSON_AddNumberToObject(j, "last_total", m->last_total);
  cJSON_AddStringToObject(j, "last_id", m->last_id);
  char *out = tg_json_print(j, 0); /* NULL when any of it failed */
  cJSON_Delete(j);
  return out;
}

/* ---- stops -------------------------------------------------------------------- */

/* The mark as it is kept now (malloc'd; NULL: none). */
static int mark_get(tg_runtime *rt, const char *session, char **old,
                    char *err) {
  *old = NULL;
  if (rt->store) return tg__agent_read(rt->store, session, NULL, old, err);
  tg_session_state *s = tg__session_state(&rt->core, session, 0);
  if (s && s->agent_mark && !(*old = tg__strdup(s->agent_mark))) return -ENOMEM;
  return 0;
}

/* Keeps the new mark if nobody read further since old: 1, else 0 (that
 * reader counted the usage). */
static int mark_put(tg_runtime *rt, const char *agent, const char *session,
                    const char *project, const char *old, const char *neu,
                    char *err) {
  if (rt->store)
    return tg__agent_mark_swap(rt->store, session, agent, project, old, neu,
                               err);
  tg_session_state *s = tg__session_state(&rt->core, session, 1);
  char *copy = tg__strdup(neu);
  if (!s || !copy) {
    free(copy);
    snprintf(err, TG_ERRMSG, "out of memory");
    return -ENOMEM;
  }
  free(s->agent_mark);
  s->agent_mark = copy;
  return 1;
}

static int record_stop(tg_runtime *rt, const char *agent, const char *session,
                       const cJSON *ev, char *err) {
  const char *path = str(ev, "transcript_path");
  if (!path || !*path) return 0; /* nothing to read */
  char *old = NULL, *neu = NULL;
  tg_hook_mark mark;
  tg_hook_usage u[TG_HOOK_MAX_USAGE_MODELS];
  int n = 0;
  int rc = mark_get(rt, session, &old, err);
  if (rc == 0) {
    mark_parse(old, &mark);
    rc = tg__hook_transcript_usage(agent, path, str(ev, "model"), &mark,
                                   TRANSCRIPT_MAX_READ, u, &n, err);
  }
  if (rc == 0 && !(neu = mark_print(&mark))) {
    snprintf(err, TG_ERRMSG, "out of memory");
    rc = -ENOMEM;
  }
  if (rc == 0)
    rc = mark_put(rt, agent, session, str(ev, "cwd"), old, neu, err);
  int64_t turn = rc > 0 ? tg__hook_turn(rt, session) : 0;
  for (int i = 0; rc > 0 && i < n; i++) {
    /* the ledger's input is all the model read: fresh, written to the
     * cache, read from it */
    tg_usage r = {session, turn, u[i].model,
                  u[i].input_tokens + u[i].cache_creation_input_tokens +
                      u[i].cache_read_input_tokens,
                  u[i].output_tokens, 0, 0};
    if (tg_record_usage(rt, &r, err) < 0) rc = -1;
  }
  /* queued for the writer: in the database before the agent hears back,
   * as a judged call's audit record is */
  if (rc > 0 && n && rt->store && tg__store_flushed(rt->store, err) < 0)
    rc = -1;
  free(old);
  free(neu);
  return rc < 0 ? -1 : 0;
}

/* ---- prompts and sessions ----------------------------------------------------- */

/* The chat layers see each prompt: a chat begun and ended around it
 * (before_chat, then after_chat, with ctx.request = {agent, prompt, cwd}).
 * A hook sees the prompt, not the model's answer, and each hook may be
 * its own process, so both run here, the same in every process. A chat
 * the host itself has open for the session is left alone. */
static int prompt_layers(tg_runtime *rt, const char *agent,
                         const char *session, const cJSON *ev, char *err) {
  static const char *const fields[] = {"prompt", "cwd", "permission_mode",
                                       NULL};
  cJSON *req = cJSON_CreateObject();
  cJSON_AddStringToObject(req, "agent", agent);
  for (int i = 0; fields[i]; i++)
    if (str(ev, fields[i])) cJSON_AddStringToObject(req, fields[i],
                                                     str(ev, fields[i]));
  tg_chat_request cr = {session, str(ev, "model"), str(ev, "cwd"), req};
  int rc = tg_chat_begin(rt, &cr, err);
  cJSON_Delete(req);
  if (rc == -EBUSY) return 0;
  if (rc < 0) return -1;
  tg_chat_result res = {session, 1, NULL, NULL};
  return tg_chat_end(rt, &res, err) < 0 ? -1 : 0;
}

static int record_prompt(tg_runtime *rt, const char *agent,
                         const char *session, const cJSON *ev, char *err) {
  int64_t turn = 0;
  if (rt->store) {
    turn = tg__agent_session(rt->store, session, agent, str(ev, "cwd"),
                             TG_AGENT_TURN, err);
    if (turn < 0) return -1;
  }
  if (tg__turn_set(rt, session, turn) < 0) {
    snprintf(err, TG_ERRMSG, "out of memory");
    return -1;
  }
  if (prompt_layers(rt, agent, session, ev, err) < 0) return -1;
  const char *prompt = str(ev, "prompt");
  if (!rt->store || !prompt) return 0;
  tg_message m = {session, "user", prompt, NULL, 0};
  return tg_message_record(rt->store, &m, err) < 0 ? -1 : 0;
}

static int record_session(tg_runtime *rt, const char *agent,
                          const char *session, const cJSON *ev, int start,
                          char *err) {
  if (!rt->store) return 0; /* a session is a database's record */
  return tg__agent_session(rt->store, session, agent, str(ev, "cwd"),
                           start ? TG_AGENT_START : TG_AGENT_END, err) < 0
             ? -1 : 0;
}

int tg__hook_record(tg_runtime *rt, const char *agent, const char *name,
                    const cJSON *ev, char *err, size_t errlen) {
  char why[TG_ERRMSG] = "";
  const char *session = str(ev, "session_id");
  int rc = 0;
  if (!session || !*session) return 0; /* nothing to keep it under */
  if (!strcmp(name, "UserPromptSubmit"))
    rc = record_prompt(rt, agent, session, ev, why);
  else if (!strcmp(name, "Stop") || !strcmp(name, "SubagentStop"))
    rc = record_stop(rt, agent, session, ev, why);
  else if (!strcmp(name, "SessionStart") || !strcmp(name, "SessionEnd"))
    rc = record_session(rt, agent, session, ev,
                        !strcmp(name, "SessionStart"), why);
  if (rc < 0) snprintf(err, errlen, "%s not recorded: %s", name, why);
  return rc < 0 ? -1 : 0;
}
