/*
 * hook_audit.c — what the audit keeps of an agent's calls beyond what the
 * chain records: a call nothing could judge because its mapping failed
 * (no call ran through the chain, so the chain wrote nothing; the record
 * is written here, through the same sink and redactor), and the link of a
 * permission request, which carries no tool_use_id of its own, to the
 * pre-tool record it follows (read back through the store's audit API:
 * no column of its own).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hook_services.h"
#include "runtime.h"
#include "base/json.h"
#include "base/sha256.h"
#include "base/util.h"
#include "core/redact.h"
#include "store/store.h"

/* ---- a call nothing could judge ---------------------------------------- */

typedef struct {
  tg_audit_rec rec;            /* first: the committed callback's */
  tg_err error;
  char *call_id, *session, *tool, *agent, *event, *tool_use_id, *answer;
  char *decided_by;
  cJSON *input;
  void (*done)(void *ud);
  void *ud;
} unjudged;

static void unjudged_free(unjudged *u) {
  free(u->call_id);
  free(u->session);
  free(u->tool);
  free(u->agent);
  free(u->event);
  free(u->tool_use_id);
  free(u->answer);
  free(u->decided_by);
  free(u->error.message);
  cJSON_Delete(u->input);
  free(u);
}

static void unjudged_committed(tg_audit_rec *rec, int ok) {
  (void)ok; /* not written: the store has said why (store_error) */
  unjudged *u = (unjudged *)rec;
  void (*done)(void *) = u->done;
  void *ud = u->ud;
  unjudged_free(u);
  done(ud);
}

static char *dup_or_null(const char *s) { return s ? tg__strdup(s) : NULL; }

int tg__hooksvc_record_unjudged(tg_runtime *rt, const tg_hooksvc_unjudged *w,
                                void (*done)(void *ud), void *ud) {
  const tg_sink *sink = &rt->core.sink;
  if (!sink->audit || !done) return 0; /* no database: nothing to keep */
  unjudged *u = calloc(1, sizeof *u);
  if (!u) return 0;
  tg_redactor *r = &rt->core.redact;
  char by[600];
  static const char said[] = "the agent's tool call cannot be mapped: ";
  const char *because = w->why ? w->why : "";
  if (!strncmp(because, said, sizeof said - 1)) because += sizeof said - 1;
  char *why = tg__redact_str(r, because);
  snprintf(by, sizeof by, "fail-safe: mapping failed: %s",
           why ? why : because);
  free(why);
  u->call_id = dup_or_null(w->call_id);
  u->session = tg__strdup(w->session ? w->session : rt->core.cfg.session);
  u->tool = tg__strdup(w->tool && *w->tool ? w->tool : "?");
  u->agent = dup_or_null(w->agent);
  u->event = dup_or_null(w->event);
  u->tool_use_id = dup_or_null(w->tool_use_id);
  u->answer = dup_or_null(w->answer);
  u->decided_by = tg__strdup(by);
  u->input = tg__redact_copy(r, w->input);
  if (!u->input && w->input) u->input = cJSON_Duplicate(w->input, 1);
  u->error.phase = w->raised ? TG_PHASE_POLICY : TG_PHASE_VALIDATE;
  u->error.code = (char *)tg_error_code_name(w->raised ? TG_E_HOOK_ERROR
                                                       : TG_E_INVALID_ARGS);
  u->error.message = tg__strdup(u->decided_by + strlen("fail-safe: "));
  if (!u->call_id || !u->session || !u->tool || !u->decided_by ||
      !u->agent || !u->error.message) {
    unjudged_free(u);
    return 0;
  }
  u->done = done;
  u->ud = ud;
  u->rec = (tg_audit_rec){
      .call_id = u->call_id, .session = u->session, .tool = u->tool,
      .turn = w->turn, .args = NULL, .verdict = w->verdict,
      .no_verdict = w->no_verdict, .reason = u->error.message,
      .decided_by = u->decided_by, .status = TG_STATUS_ERROR,
      .error = &u->error, .ts_ms = (int64_t)tg__wall_ms(),
      .generation = rt->chain.gen ? rt->chain.gen->number : 0,
      .committed = unjudged_committed};
  u->rec.agent = (tg_audit_agent){.name = u->agent, .event = u->event,
                                  .tool = u->tool, .input = u->input,
                                  .tool_use_id = u->tool_use_id,
                                  .answer = u->answer};
  sink->audit(sink->ud, &u->rec);
  return 1;
}

/* ---- a permission request's link --------------------------------------- */

/* The digest of input as the audit keeps it (redacted, keys in order). */
static int input_digest(tg_runtime *rt, const cJSON *input,
                        uint8_t out[32]) {
  cJSON *red = tg__redact_copy(&rt->core.redact, input);
  int rc = tg_json_digest(red ? red : input, out);
  cJSON_Delete(red);
  return rc;
}

/* How many of the session's latest records are looked through for the
 * pre-tool record (a permission request follows its own at once; what
 * the agent did between is a prompt at most). */
#define LINK_WINDOW 16

char *tg__hooksvc_permission_link(tg_runtime *rt, const char *session,
                                  const char *agent, const char *tool,
                                  const cJSON *input) {
  if (!rt->store || !session || !agent || !tool || !input) return NULL;
  tg_audit_filter f = {.session = session, .limit = LINK_WINDOW};
  char err[TG_ERRMSG];
  cJSON *recs = tg_store_audit(rt->store, &f, err);
  if (!recs) return NULL;
  uint8_t want[32], got[32];
  char *id = NULL;
  int have_want = input_digest(rt, input, want) == 0;
  /* oldest first: the most recent judged pre-tool record is the last */
  for (int i = cJSON_GetArraySize(recs) - 1; i >= 0 && have_want; i--) {
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(recs, i), "agent");
    const char *ev = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(a, "event"));
    if (!ev || strcmp(ev, "PreToolUse")) continue;
    /* the most recent judged pre-tool record: linked when it is of the
     * same agent, tool and input, else nothing is */
    const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(a, "name"));
    const char *t = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(a, "tool"));
    const char *use = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(a, "tool_use_id"));
    const cJSON *in = cJSON_GetObjectItemCaseSensitive(a, "input");
    if (name && !strcmp(name, agent) && t && !strcmp(t, tool) && use &&
        in && input_digest(rt, in, got) == 0 &&
        tg_digest_equal(want, got, sizeof want))
      id = tg__strdup(use);
    break;
  }
  cJSON_Delete(recs);
  return id;
}
