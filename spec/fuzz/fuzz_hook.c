/*
 * fuzz_hook.c — one coding agent's hook event, answered (tg_hook_answer,
 * src/agent/answer.c: the event read by the strict parser and made
 * canonical by the agent's dialect, its tool call mapped through
 * toolgate.agent in the policies' Lua state, judged by the chain with a
 * fixture for the tool, the answer put in the agent's words) on a runtime
 * with the policies of spec/fuzz/policies and no database; then the same
 * agent's fail-safe answer (tg_hook_fallback) for the event's name, the
 * agent detected from the bytes (tg_hook_detect_agent) and, when asked,
 * `toolgate explain --event` of it (tg_hook_explain).
 *
 * Input: one byte, then the event's bytes. The byte: the agent is the
 * registry's (src/agent/dialects.c) number (bit 0) | (bits 4-5) << 1,
 * modulo their count (so 0 is claude-code and 1 codex, as before every
 * agent was fuzzed: the older seeds keep their meaning); on_error (bits
 * 1-2), toolgate_defaults (bit 3); bit 6: the event starts with a line
 * that is the --event NAME the installed line passes (Copilot CLI's
 * payloads do not name their event); bit 7: explain it too, the agent
 * left to detection.
 *
 * Proves: no crash, leak or undefined behaviour; the answer comes exactly
 * once, exit 0 or 2 (2 with a message, and never for an agent that does
 * not read exit 2 as a block), its stdout empty or one JSON object on one
 * line (never empty with exit 0 for an agent that reads silence as a
 * failure); a fail-safe deny of a tool call is said (stdout or exit 2).
 * No tool runs (a fixture stands for it; the policies ask no context
 * tools) and nothing is written.
 */
#include <string.h>
#include <uv.h>
#include "fuzz.h"
#include "toolgate.h"
#include "agent/dialect.h"
#include "base/json.h"

static tg_runtime *rt;
static size_t n_agents;

typedef struct {
  const tg_dialect *d;
  int n;
} got;

/* The properties of every answer an agent is given. */
static void check_answer(const tg_dialect *d, const tg_hook_result *res) {
  FUZZ_ASSERT(res->exit_code == 0 || res->exit_code == 2, "exit code %d",
              res->exit_code);
  FUZZ_ASSERT(res->output != NULL, "no output");
  if (res->exit_code == 2) {
    FUZZ_ASSERT(res->message && *res->message, "exit 2 without a message");
    FUZZ_ASSERT(d->install.exit_2_blocks,
                "exit 2 to %s, which does not read it as a block", d->name);
  }
  size_t n = strlen(res->output);
  if (n) {
    FUZZ_ASSERT(res->output[n - 1] == '\n' &&
                memchr(res->output, '\n', n) == res->output + n - 1,
                "the output is not one line: %s", res->output);
    char err[256];
    cJSON *j = tg_json_parse(res->output, n - 1, NULL, err, sizeof err);
    FUZZ_ASSERT(cJSON_IsObject(j), "the output is not a JSON object (%s): %s",
                err, res->output);
    cJSON_Delete(j);
  } else if (res->exit_code == 0) {
    FUZZ_ASSERT(!d->answer_always, "%s is told nothing", d->name);
  }
}

static void done(tg_runtime *r, const tg_hook_result *res, void *ud) {
  (void)r;
  got *g = ud;
  g->n++;
  check_answer(g->d, res);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  rt = fuzz_runtime("fuzz_hook", NULL);
  while (tg__dialect_at(n_agents)) n_agents++;
  return 0;
}

/* The fail-safe answer of agent d for the event named name (NULL: the
 * event could not be read). */
static void fallback(const tg_dialect *d, const char *name,
                     const char *on_error) {
  tg_hook_result res;
  FUZZ_ASSERT(tg_hook_fallback(d->name, name, on_error, "fuzzing", &res) == 0,
              "tg_hook_fallback failed");
  check_answer(d, &res);
  tg_hook_event kind = tg__dialect_kind(d, name);
  if (kind == TG_HOOK_EV_OTHER) kind = tg__hook_event_kind(name);
  if (kind == TG_HOOK_EV_PRE && (!on_error || !strcmp(on_error, "deny")))
    FUZZ_ASSERT(*res.output || res.exit_code == 2,
                "a fail-safe deny of %s's %s is not said", d->name, name);
  tg_hook_result_free(&res);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  static const char *const on_error[] = {"deny", "ask", "allow", NULL};
  uint8_t how = data[0];
  const char *event = (const char *)data + 1;
  size_t len = size - 1;
  char name[256], *name_at = NULL;
  if (how & 0x40) { /* the --event NAME line */
    const char *nl = memchr(event, '\n', len);
    size_t n = nl ? (size_t)(nl - event) : len;
    if (n >= sizeof name || memchr(event, '\0', n)) return 0;
    memcpy(name, event, n);
    name[n] = '\0';
    name_at = name;
    event += nl ? n + 1 : n;
    len -= nl ? n + 1 : n;
  }
  const tg_dialect *d =
      tg__dialect_at(((size_t)(how & 1) | (size_t)((how >> 4) & 3) << 1) %
                     n_agents);
  tg_hook_request req;
  memset(&req, 0, sizeof req);
  req.agent = d->name;
  req.on_error = on_error[(how >> 1) & 3];
  req.toolgate_defaults = (how >> 3) & 1;
  req.event = event;
  req.event_len = len;
  req.event_name = name_at;
  req.deadline_ms = 1000;
  got g = {d, 0};
  char err[TG_ERRMSG] = "";
  int rc = tg_hook_answer(rt, &req, done, &g, err);
  FUZZ_ASSERT(rc == 0, "tg_hook_answer: %s", err);
  while (g.n == 0 && uv_run(tg_runtime_loop(rt), UV_RUN_ONCE)) {
  }
  FUZZ_ASSERT(g.n == 1, "answered %d times", g.n);
  /* what the call left on the loop (closing handles) ends before the next */
  uv_run(tg_runtime_loop(rt), UV_RUN_NOWAIT);
  fallback(d, name_at, req.on_error);
  const char *who = tg_hook_detect_agent(event, len);
  FUZZ_ASSERT(!who || tg_hook_agent_known(who), "detected '%s'", who);
  if (how & 0x80) {
    req.agent = NULL;
    cJSON *x = tg_hook_explain(rt, &req, err);
    cJSON_Delete(x);
    uv_run(tg_runtime_loop(rt), UV_RUN_NOWAIT);
  }
  return 0;
}
