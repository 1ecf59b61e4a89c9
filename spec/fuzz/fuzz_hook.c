/*
 * fuzz_hook.c — one coding agent's hook event, answered (tg_hook_answer,
 * src/agent/answer.c: the event read by the strict parser, its tool call
 * mapped through toolgate.agent in the policies' Lua state, judged by the
 * chain with a fixture for the tool, the answer put in the agent's
 * words) on a runtime with the policies of spec/fuzz/policies and no
 * database. Input: one byte choosing the agent (bit 0: claude-code or
 * codex), on_error (bits 1-2) and toolgate_defaults (bit 3), then the
 * event's bytes. Proves: no crash, leak or undefined behaviour; the
 * answer comes exactly once, exit 0 or 2 (2 with a message), its stdout
 * empty or one JSON object on one line. No tool runs (a fixture stands
 * for it; the policies ask no context tools) and nothing is written.
 */
#include <string.h>
#include <uv.h>
#include "fuzz.h"
#include "toolgate.h"
#include "base/json.h"

static tg_runtime *rt;

typedef struct {
  int n;
} got;

static void done(tg_runtime *r, const tg_hook_result *res, void *ud) {
  (void)r;
  got *g = ud;
  g->n++;
  FUZZ_ASSERT(res->exit_code == 0 || res->exit_code == 2, "exit code %d",
              res->exit_code);
  FUZZ_ASSERT(res->output != NULL, "no output");
  if (res->exit_code == 2)
    FUZZ_ASSERT(res->message && *res->message, "exit 2 without a message");
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
  }
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  rt = fuzz_runtime("fuzz_hook", NULL);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  static const char *const on_error[] = {"deny", "ask", "allow", NULL};
  tg_hook_request req;
  memset(&req, 0, sizeof req);
  req.agent = data[0] & 1 ? "codex" : "claude-code";
  req.on_error = on_error[(data[0] >> 1) & 3];
  req.toolgate_defaults = (data[0] >> 3) & 1;
  req.event = (const char *)data + 1;
  req.event_len = size - 1;
  req.deadline_ms = 1000;
  got g = {0};
  char err[TG_ERRMSG] = "";
  int rc = tg_hook_answer(rt, &req, done, &g, err);
  FUZZ_ASSERT(rc == 0, "tg_hook_answer: %s", err);
  while (g.n == 0 && uv_run(tg_runtime_loop(rt), UV_RUN_ONCE)) {
  }
  FUZZ_ASSERT(g.n == 1, "answered %d times", g.n);
  /* what the call left on the loop (closing handles) ends before the next */
  uv_run(tg_runtime_loop(rt), UV_RUN_NOWAIT);
  return 0;
}
