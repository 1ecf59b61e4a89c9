/*
 * hook_services.c — the runtime's side of hook_services.h: what the
 * agent hooks front asks of the runtime, wired to the layers that do it —
 * the chain (a call run with a strategy), the policy sandbox (the agent
 * mapping, in the current generation's own state), the store or this
 * runtime's memory (turns, transcript marks, usage, sessions: each hook
 * event may be its own process, so with a database they live there and a
 * resident instance and an in-process answer share them).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hook_services.h"
#include "runtime.h"
#include "base/project.h"
#include "base/util.h"
#include "core/turns.h"
#include "policy/sandbox.h"
#include "store/store.h"

/* ---- calls ------------------------------------------------------------------ */

int tg__hooksvc_call(tg_runtime *rt, const tg_call_request *req,
                     tg_call_strategy *how, tg_done_cb done, void *ud,
                     char err[TG_ERRMSG]) {
  return tg__chain_call_with(&rt->chain, req, how, done, ud, err);
}

cJSON *tg__hooksvc_explain(tg_runtime *rt, const tg_call_request *req,
                           tg_call_strategy *how, char err[TG_ERRMSG]) {
  return tg__chain_explain_with(&rt->chain, req, how, err);
}

/* ---- the policy sandbox --------------------------------------------------------- */

lua_State *tg__hooksvc_policy_state(tg_runtime *rt, size_t *max_json) {
  tg_generation *g = rt->chain.gen;
  if (max_json) *max_json = rt->core.cfg.max_args_bytes;
  return g ? g->L : NULL;
}

int tg__hooksvc_policy_pcall(tg_runtime *rt, int nargs, int nres,
                             const char *what, char *err, size_t errlen) {
  tg_generation *g = rt->chain.gen;
  if (!g) {
    snprintf(err, errlen, "%s: no policies are loaded", what);
    return -1;
  }
  lua_State *L = g->L;
  if (tg__sandbox_pcall(g->sb, L, nargs, nres) == LUA_OK) return 0;
  if (!tg__sandbox_describe_stop(g->sb, what, err, errlen))
    snprintf(err, errlen, "%s failed: %s", what,
             lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1)
                                            : "an error that is not a string");
  lua_pop(L, 1);
  return -1;
}

/* ---- what is recorded ----------------------------------------------------------- */

int tg__hooksvc_session_check(const char *id, char err[TG_ERRMSG]) {
  return tg__session_id_check(id, err);
}

char *tg__hooksvc_project(const char *cwd) {
  char err[TG_ERRMSG];
  /* a relative or missing cwd is no project (never the runtime's own) */
  return cwd && *cwd == '/' ? tg__project_dir(cwd, err) : NULL;
}

int64_t tg__hooksvc_turn(tg_runtime *rt, const char *session) {
  char err[TG_ERRMSG];
  int64_t turn = 0;
  if (!session) return 0;
  if (rt->store && tg__agent_read(rt->store, session, &turn, NULL, err) == 0)
    return turn;
  return tg_turn_current(rt, session);
}

int tg__hooksvc_prompt_counted(tg_runtime *rt, const char *session,
                               const char *agent, const char *project,
                               char err[TG_ERRMSG]) {
  int64_t turn = 0;
  if (rt->store) {
    turn = tg__agent_session(rt->store, session, agent, project,
                             TG_AGENT_TURN, err);
    if (turn < 0) return -1;
  }
  if (tg__turn_set(rt, session, turn) < 0) {
    snprintf(err, TG_ERRMSG, "out of memory");
    return -1;
  }
  return 0;
}

int tg__hooksvc_prompt_kept(tg_runtime *rt, const char *session,
                            const char *prompt, char err[TG_ERRMSG]) {
  if (!rt->store || !prompt) return 0;
  tg_message m = {session, "user", prompt, NULL, 0};
  return tg_message_record(rt->store, &m, err) < 0 ? -1 : 0;
}

int tg__hooksvc_session_noted(tg_runtime *rt, const char *session,
                              const char *agent, const char *project,
                              int start, char err[TG_ERRMSG]) {
  if (!rt->store) return 0; /* a session is a database's record */
  return tg__agent_session(rt->store, session, agent, project,
                           start ? TG_AGENT_START : TG_AGENT_END, err) < 0
             ? -1 : 0;
}

int tg__hooksvc_mark_get(tg_runtime *rt, const char *session, char **mark,
                         int64_t *turn, char err[TG_ERRMSG]) {
  *mark = NULL;
  if (rt->store) return tg__agent_read(rt->store, session, turn, mark, err);
  *turn = tg_turn_current(rt, session);
  tg_session_state *s = tg__session_state(&rt->core, session, 0);
  if (s && s->agent_mark && !(*mark = tg__strdup(s->agent_mark))) {
    snprintf(err, TG_ERRMSG, "out of memory");
    return -ENOMEM;
  }
  return 0;
}

typedef struct {
  tg_runtime *rt;
  const char *session, *agent, *project;
  const char *old, *neu;
  tg_usage_rec *recs;
  size_t n;
  char *err;
} stop_commit;

/* Moves the mark from old to neu and writes the usage, together: in the
 * database, or in memory without one. 1, or 0 when another reader moved
 * it first (that reader counts the usage). */
static int move_mark(stop_commit *c) {
  if (c->rt->store) {
    tg_usage u[TG_HOOKSVC_MAX_SPEND];
    size_t n = c->n;
    for (size_t i = 0; i < n; i++)
      u[i] = (tg_usage){c->recs[i].session, c->recs[i].turn, c->recs[i].model,
                        c->recs[i].input_tokens, c->recs[i].output_tokens,
                        c->recs[i].cost, c->recs[i].ts_ms};
    return tg__agent_stop(c->rt->store, c->session, c->agent, c->project,
                          c->old, c->neu, u, n, c->err);
  }
  tg_session_state *s = tg__session_state(&c->rt->core, c->session, 1);
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
  const tg_usage_ledger *l = &c->rt->core.usage;
  int rc = move_mark(c);
  for (size_t i = 0; rc > 0 && l->stored && i < c->n; i++)
    l->stored(l->ud, &c->recs[i]);
  return rc;
}

int tg__hooksvc_stop_commit(tg_runtime *rt, const char *session,
                            const char *agent, const char *project,
                            int64_t turn, const char *old, const char *neu,
                            const tg_hook_spend *spend, size_t n,
                            char err[TG_ERRMSG]) {
  tg_usage_rec recs[TG_HOOKSVC_MAX_SPEND];
  if (n > TG_HOOKSVC_MAX_SPEND) n = TG_HOOKSVC_MAX_SPEND;
  for (size_t i = 0; i < n; i++)
    recs[i] = (tg_usage_rec){session, project, spend[i].model, turn,
                             spend[i].input_tokens, spend[i].output_tokens,
                             0, 0};
  stop_commit c = {rt, session, agent, project, old, neu, recs, n, err};
  int rc = tg__runtime_usage_commit(rt, recs, n, commit_stop, &c);
  return rc < 0 ? rc : 0;
}
