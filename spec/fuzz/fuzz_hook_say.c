/*
 * fuzz_hook_say.c — every agent's answer rendering (the dialect's render,
 * through tg__hook_render in src/agent/reply.c) of any answer toolgate
 * could say: the event's kind, the verdict, a post-hook's block, the
 * exit code, the texts (reason, context, system message, stderr message),
 * the rewritten input, the replaced output and the agent's own event, in
 * whatever shape. No runtime: the answer as the chain or the fail-safe
 * leaves it, put in each agent's words.
 *
 * Input: byte 0: the agent (the registry's number, modulo their count:
 * bits 0-2) and the event's kind (bits 3-6, modulo the kinds); byte 1:
 * the verdict (bits 0-1), block (bit 2), exit 2 (bit 3), and which of
 * reason, context, system message and message are given (bits 4-7);
 * byte 2: which of the rewritten input, the replaced output and the
 * agent's own event are given (bits 0-2). Then the fields in that order,
 * each ended by a NUL byte; the three JSON ones read by the strict parser
 * (one that is not JSON is not given).
 *
 * Proves: no crash, leak or undefined behaviour; render succeeds with
 * exit 0 or 2 (never 2 for an agent that does not read it as a block),
 * stdout empty or one JSON object on one line (never empty with exit 0
 * for an agent that reads silence as a failure), stderr the message; a
 * deny before the tool (after the agent's limits) and a post-hook's block
 * for an agent that can block after the tool are never silent.
 */
#include <string.h>
#include "fuzz.h"
#include "agent/protocol.h"

static size_t n_agents;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  while (tg__dialect_at(n_agents)) n_agents++;
  return 0;
}

/* The next NUL-ended field of *p (n left); NULL past the end. */
static const char *field(const uint8_t **p, size_t *n) {
  if (!*n) return NULL;
  const uint8_t *end = memchr(*p, '\0', *n);
  if (!end) return NULL;
  const char *f = (const char *)*p;
  *n -= (size_t)(end - *p) + 1;
  *p = end + 1;
  return f;
}

static cJSON *json_field(const uint8_t **p, size_t *n) {
  const char *f = field(p, n);
  char err[128];
  return f ? tg_json_parse(f, strlen(f), NULL, err, sizeof err) : NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 3) return 0;
  tg_hook_say s;
  memset(&s, 0, sizeof s);
  s.agent = tg__dialect_at((data[0] & 7) % n_agents);
  s.event = (tg_hook_event)(((data[0] >> 3) & 15) %
                            (TG_HOOK_EV_SESSION_END + 1));
  s.verdict = (tg_hook_verdict)(data[1] & 3);
  s.block = (data[1] >> 2) & 1;
  s.exit_code = (data[1] >> 3) & 1 ? 2 : 0;
  uint8_t given = data[2];
  const uint8_t *p = data + 3;
  size_t n = size - 3;
  s.reason = data[1] & 0x10 ? field(&p, &n) : NULL;
  s.context = data[1] & 0x20 ? field(&p, &n) : NULL;
  s.system_message = data[1] & 0x40 ? field(&p, &n) : NULL;
  s.message = data[1] & 0x80 ? field(&p, &n) : NULL;
  cJSON *input = given & 1 ? json_field(&p, &n) : NULL;
  cJSON *output = given & 2 ? json_field(&p, &n) : NULL;
  cJSON *native = given & 4 ? json_field(&p, &n) : NULL;
  s.updated_input = input;
  s.updated_mcp_output = output;
  s.native = native;

  tg_hook_result res;
  FUZZ_ASSERT(tg__hook_render(&s, &res) == 0, "render failed");
  const tg_dialect *d = s.agent;
  FUZZ_ASSERT(res.exit_code == 0 || res.exit_code == 2, "exit code %d",
              res.exit_code);
  if (res.exit_code == 2)
    FUZZ_ASSERT(d->install.exit_2_blocks,
                "exit 2 to %s, which does not read it as a block", d->name);
  FUZZ_ASSERT(res.output != NULL, "no output");
  size_t len = strlen(res.output);
  if (len) {
    FUZZ_ASSERT(res.output[len - 1] == '\n' &&
                memchr(res.output, '\n', len) == res.output + len - 1,
                "the output is not one line: %s", res.output);
    char err[256];
    cJSON *j = tg_json_parse(res.output, len - 1, NULL, err, sizeof err);
    FUZZ_ASSERT(cJSON_IsObject(j), "the output is not a JSON object (%s): %s",
                err, res.output);
    cJSON_Delete(j);
  } else if (res.exit_code == 0) {
    FUZZ_ASSERT(!d->answer_always, "%s is told nothing", d->name);
  }
  if (s.message && *s.message)
    FUZZ_ASSERT(res.message && !strncmp(res.message, s.message,
                                        strlen(s.message)),
                "the message is lost");
  if (s.event == TG_HOOK_EV_PRE && tg__hook_said_verdict(&s) == TG_HOOK_DENY)
    FUZZ_ASSERT(len || res.exit_code == 2, "%s's deny is not said", d->name);
  if (s.event == TG_HOOK_EV_POST && s.block && d->post_block)
    FUZZ_ASSERT(len || res.exit_code == 2, "%s's block is not said", d->name);
  tg_hook_result_free(&res);
  cJSON_Delete(input);
  cJSON_Delete(output);
  cJSON_Delete(native);
  return 0;
}
