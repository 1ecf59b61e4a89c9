/*
 * hook_record.c — what an agent's hooks tell of besides tool calls:
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
 * read live there (store/agent_sessions.c): each hook event may be its own
 * process, and a resident instance and an in-process answer share them.
 * Without one, this runtime's memory keeps them (a resident instance).
 * Usage reaches the budgets either way (tg__runtime_usage_commit); with a
 * database it is written in one transaction with the transcript mark.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hook.h"
#include "runtime.h"
#include "base/project.h"
#include "base/util.h"
#include "core/turns.h"
#include "store/store.h"
#include "base/json.h"

/* the transcript read per stop, at most (the rest waits for the next): a
 * resident instance reads it on its loop, so this bounds the pause */
#define TRANSCRIPT_MAX_READ (8u << 20)

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

/* The mark as it is kept now (malloc'd; NULL: none) and the session's
 * turn: one read of the session's row. */
static int mark_get(const recording *r, char **old, int64_t *turn,
                    char *err) {
  *old = NULL;
  if (r->rt->store)
    return tg__agent_read(r->rt->store, r->session, turn, old, err);
  *turn = tg_turn_current(r->rt, r->session);
  tg_session_state *s = tg__session_state(&r->rt->core, r->session, 0);
  if (s && s->agent_mark && !(*old = tg__strdup(s->agent_mark))) return -ENOMEM;
  return 0;
}

typedef struct {
  const recording *r;
  const char *old, *neu;
  tg_usage_rec *recs;
  size_t n;
  char *err;
} stop_commit;

/* Moves the mark from old to neu and writes the usage, together: in the
 * database, or in memory without one. 1, or 0 when another reader moved
 * it first (that reader counts the usage). */
static int move_mark(stop_commit *c) {
  const recording *r = c->r;
  if (r->rt->store) {
    tg_usage u[TG_HOOK_MAX_USAGE_MODELS];
    for (size_t i = 0; i < c->n; i++)
      u[i] = (tg_usage){c->recs[i].session, c->recs[i].turn, c->recs[i].model,
                        c->recs[i].input_tokens, c->recs[i].output_tokens,
                        c->recs[i].cost, c->recs[i].ts_ms};
    return tg__agent_stop(r->rt->store, r->session, r->agent, r->project,
                          c->old, c->neu, u, c->n, c->err);
  }
  tg_session_state *s = tg__session_state(&r->rt->core, r->session, 1);
  char *copy = tg__strdup(c->neu);
  if (!s || !copy) {
    free(copy);
    snprintf(c->err, TG_ERRMSG, "out of memory");
    return -ENOMEM;
  }
  free(s->agent_mark);
  s->agent_mark = copy;
  return 1;
}

/* tg__runtime_usage_commit's commit: the mark and the usage, then the
 * ledger told of what is written (it keeps its own copies). */
static int commit_stop(void *ud) {
  stop_commit *c = ud;
  const tg_usage_ledger *l = &c->r->rt->core.usage;
  int rc = move_mark(c);
  for (size_t i = 0; rc > 0 && l->stored && i < c->n; i++)
    l->stored(l->ud, &c->recs[i]);
  return rc;
}

static int record_stop(const recording *r, char *err) {
  const char *path = str(r->ev, "transcript_path");
  if (!path || !*path) return 0; /* nothing to read */
  char *old = NULL, *neu = NULL;
  tg_hook_mark mark;
  tg_hook_usage u[TG_HOOK_MAX_USAGE_MODELS];
  int n = 0;
  int64_t turn = 0;
  int rc = mark_get(r, &old, &turn, err);
  if (rc == 0) {
    mark_parse(old, &mark);
    rc = tg__hook_transcript_usage(r->agent, path, str(r->ev, "model"), &mark,
                                   TRANSCRIPT_MAX_READ, u, &n, err);
  }
  if (rc == 0 && !(neu = mark_print(&mark))) {
    snprintf(err, TG_ERRMSG, "out of memory");
    rc = -ENOMEM;
  }
  tg_usage_rec recs[TG_HOOK_MAX_USAGE_MODELS];
  for (int i = 0; rc == 0 && i < n; i++)
    /* the ledger's input is all the model read: fresh, written to the
     * cache, read from it */
    recs[i] = (tg_usage_rec){r->session, r->project, u[i].model, turn,
                             u[i].input_tokens + u[i].cache_creation_input_tokens +
                                 u[i].cache_read_input_tokens,
                             u[i].output_tokens, 0, 0};
  stop_commit c = {r, old, neu, recs, (size_t)n, err};
  if (rc == 0) rc = tg__runtime_usage_commit(r->rt, recs, (size_t)n,
                                             commit_stop, &c);
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
  int64_t turn = 0;
  if (r->rt->store) {
    turn = tg__agent_session(r->rt->store, r->session, r->agent, r->project,
                             TG_AGENT_TURN, err);
    if (turn < 0) return -1;
  }
  if (tg__turn_set(r->rt, r->session, turn) < 0) {
    snprintf(err, TG_ERRMSG, "out of memory");
    return -1;
  }
  if (prompt_layers(r, err) < 0) return -1;
  const char *prompt = str(r->ev, "prompt");
  if (!r->rt->store || !prompt) return 0;
  tg_message m = {r->session, "user", prompt, NULL, 0};
  return tg_message_record(r->rt->store, &m, err) < 0 ? -1 : 0;
}

static int record_session(const recording *r, int start, char *err) {
  if (!r->rt->store) return 0; /* a session is a database's record */
  return tg__agent_session(r->rt->store, r->session, r->agent, r->project,
                           start ? TG_AGENT_START : TG_AGENT_END, err) < 0
             ? -1 : 0;
}

char *tg__hook_project(const cJSON *ev) {
  const char *cwd = str(ev, "cwd");
  char err[TG_ERRMSG];
  /* a relative or missing cwd is no project (never the runtime's own) */
  return cwd && *cwd == '/' ? tg__project_dir(cwd, err) : NULL;
}

int tg__hook_record(tg_runtime *rt, const char *agent, tg_hook_event kind,
                    const char *name, const cJSON *ev, char *err,
                    size_t errlen) {
  char why[TG_ERRMSG] = "";
  const char *session = str(ev, "session_id");
  int rc = 0;
  if (kind < TG_HOOK_EV_PROMPT || !session || !*session)
    return 0; /* nothing to record, or nothing to keep it under */
  if (tg__session_id_check(session, why) < 0) {
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
