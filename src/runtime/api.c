/*
 * api.c — the public API's entry points that belong to one layer: each
 * hands the layer its own part of the runtime (the chain, the core), so
 * the layers below never see the runtime object.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "runtime.h"
#include "core/changes.h"
#include "core/network.h"
#include "proc/process.h"
#include "store/store.h"
#include "runtime/front_api.h"
#include "hook_services.h"

int tg_call_start(tg_runtime *rt, const tg_call_request *req, tg_done_cb done,
                  void *ud, char err[TG_ERRMSG]) {
  return tg__chain_call_start(&rt->chain, req, done, ud, err);
}

int tg_call_cancel(tg_runtime *rt, const char *call_id) {
  return tg__chain_cancel(&rt->chain, call_id);
}

int tg_approval_answer(tg_runtime *rt, uint64_t approval_id, tg_answer answer,
                       tg_always_scope scope, const char *guidance) {
  return tg__chain_answer(&rt->chain, approval_id, answer, scope, guidance);
}

void tg_runtime_set_approver(tg_runtime *rt, tg_approver_cb cb, void *ud) {
  tg__chain_set_approver(&rt->chain, cb, ud);
}

void tg_runtime_set_approve_mode(tg_runtime *rt, tg_approve_mode mode) {
  tg__chain_set_approve_mode(&rt->chain, mode);
}

/* tg_explain of a call in an agent's terms (Bash {command}): mapped as
 * the agent's hook maps it, explained with the agent's strategy, and
 * said so (agent, agent_tool, a note). */
static cJSON *explain_agent_call(tg_runtime *rt, const char *agent,
                                 const tg_call_request *req,
                                 char err[TG_ERRMSG]) {
  cJSON *input = tg__call_parse_args(&rt->chain, req, err);
  if (!input) return NULL;
  cJSON *ev = tg__agent_event(req->tool, input, NULL, NULL, req->session);
  cJSON_Delete(input);
  tg_agent_call m;
  int raised = 0;
  cJSON *j = NULL;
  if (tg__agent_map(rt, agent, ev, &m, &raised, err, TG_ERRMSG) < 0) {
    cJSON_Delete(ev);
    return NULL;
  }
  tg_call_strategy how;
  memset(&how, 0, sizeof how);
  tg__agent_strategy(&how, &m);
  how.tool = TG_TOOL_ELSEWHERE;
  how.ask = TG_ASK_LEFT;
  tg_call_request r = *req;
  r.tool = m.tool;
  r.args = m.args;
  r.args_json = NULL;
  cJSON *md = tg__agent_metadata(agent, ev, &m);
  r.metadata = md;
  j = tg__chain_explain_with(&rt->chain, &r, &how, err);
  if (j) {
    char note[300];
    cJSON_AddStringToObject(j, "agent", agent);
    cJSON_AddStringToObject(j, "agent_tool", req->tool);
    snprintf(note, sizeof note, "%s is %s's tool: explained as its hook "
             "judges it, the call %s (toolgate explain --event gives the "
             "agent's answer)", req->tool, agent, m.tool);
    cJSON *notes = cJSON_GetObjectItemCaseSensitive(j, "notes");
    if (notes) cJSON_InsertItemInArray(notes, 0, cJSON_CreateString(note));
  }
  cJSON_Delete(md);
  cJSON_Delete(ev);
  tg__agent_call_clear(&m);
  return j;
}

cJSON *tg_explain(tg_runtime *rt, const tg_call_request *req,
                  char err[TG_ERRMSG]) {
  char agent[64] = "", why[TG_ERRMSG];
  /* a tool no one registers that an agent's table knows (Bash, Edit) */
  if (req && req->tool && *req->tool && rt->chain.gen &&
      !tg__chain_find_tool(&rt->chain, rt->chain.gen, req->tool) &&
      tg__agent_which(rt, req->tool, agent, sizeof agent, why,
                      sizeof why) == 0 && agent[0])
    return explain_agent_call(rt, agent, req, err);
  return tg__chain_explain(&rt->chain, req, err);
}

int tg_events_subscribe(tg_runtime *rt, tg_event_cb cb, void *ud) {
  return tg__events_subscribe(&rt->core, cb, ud, 1);
}

int tg_events_subscribe_runtime(tg_runtime *rt, tg_event_cb cb, void *ud) {
  return tg__events_subscribe(&rt->core, cb, ud, 0);
}

void tg_events_unsubscribe(tg_runtime *rt, int id) {
  tg__events_unsubscribe(&rt->core, id);
}

int tg_changes_subscribe(tg_runtime *rt, const char *glob, tg_change_cb cb,
                         void *ud) {
  return tg__changes_subscribe(&rt->core, glob, cb, ud);
}

void tg_changes_unsubscribe(tg_runtime *rt, int id) {
  tg__changes_unsubscribe(&rt->core, id);
}

cJSON *tg_changes_recent(tg_runtime *rt, size_t limit) {
  return tg__changes_recent(&rt->core, limit);
}

void tg_runtime_kill_processes(tg_runtime *rt) { tg__procs_kill(&rt->core); }

/* ---- host tools and the version (issue 10) --------------------------- */

const char *tg_version(void) { return TG_VERSION; }

int tg_tool_exists(tg_runtime *rt, const char *name) {
  return name && tg__chain_find_tool(&rt->chain, rt->chain.gen, name) != NULL;
}

/* ---- storage ------------------------------------------------------------ */

int tg_approval_answer_always(tg_runtime *rt, uint64_t approval_id,
                              const tg_always_spec *spec,
                              char err[TG_ERRMSG]) {
  return tg__chain_answer_always(&rt->chain, approval_id, spec, err);
}

/* Through the budgets (they count it) into the ledger: the database's
 * with storage on, else this runtime's memory. */
int tg_record_usage(tg_runtime *rt, const tg_usage *u, char err[TG_ERRMSG]) {
  int rc = tg__usage_check(u, err); /* storage's rules, on or off */
  if (rc < 0) return rc;
  tg_usage_rec rec = {u->session, rt->core.cfg.project, u->model, u->turn,
                      u->input_tokens, u->output_tokens, u->cost, u->ts_ms};
  rc = tg__runtime_record_usage(rt, &rec);
  if (rc < 0) tg__errf(err, TG_ERRMSG, "out of memory: usage not recorded");
  return rc;
}

tg_store *tg_runtime_store(tg_runtime *rt) { return rt->store; }

void tg_runtime_set_redactor(tg_runtime *rt, tg_redactor_fn fn, void *ud) {
  rt->core.redact.c_fn = fn;
  rt->core.redact.c_ud = fn ? ud : NULL;
}

/* Memory with the runtime's session and project as defaults: the path a
 * policy's tg.memory takes (core->sink). */
int64_t tg_runtime_remember(tg_runtime *rt, const tg_memory *m,
                            char err[TG_ERRMSG]) {
  const tg_sink *s = &rt->core.sink;
  if (!s->memory_record) {
    tg__errf(err, TG_ERRMSG, "storage is off: nothing is remembered");
    return -ENOTSUP;
  }
  return s->memory_record(s->ud, m, err);
}

struct cJSON *tg_runtime_recall(tg_runtime *rt, const tg_recall_filter *f,
                                char err[TG_ERRMSG]) {
  const tg_sink *s = &rt->core.sink;
  if (!s->memory_recall) {
    tg__errf(err, TG_ERRMSG, "storage is off: nothing is remembered");
    return NULL;
  }
  return s->memory_recall(s->ud, f, err);
}

const char *tg_decision_word(const char *verdict, const char *error_code) {
  if (error_code && (!strcmp(error_code, "RULE_ERROR") ||
                     !strcmp(error_code, "BAD_VERDICT")))
    return "error";
  return verdict ? verdict : "none";
}

void tg_runtime_declare_tools(tg_runtime *rt, const cJSON *decl) {
  cJSON_Delete(rt->core.declared_tools);
  rt->core.declared_tools = decl ? cJSON_Duplicate(decl, 1) : NULL;
}

void tg_runtime_declare_network(tg_runtime *rt, const cJSON *globs) {
  tg__network_declare(&rt->core, globs);
}

void tg_runtime_set_network_reader(tg_runtime_network_reader fn,
                                   uint64_t (*stamp)(void)) {
  tg__network_set_reader(fn, stamp);
}
