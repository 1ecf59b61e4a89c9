/*
 * fuzz_mcp.c — what an MCP client writes to `toolgate serve`, through the
 * server's real reading and dispatch (the stdio transport: src/mcp/
 * framing.c's line reader and strict parse; session.c; server.c's
 * classification, method table and protocol eras, tools.c's tools/list and tools/call, approval.c's asks,
 * reqstate.c's requestState): a fresh server per input, on one runtime
 * with the policies of spec/fuzz/policies (Lua tools only: no process,
 * no file written; no database), the input as its client's whole stdin
 * (usually one line; more lines reach the session's state, e.g.
 * initialize then tools/call). The client then hangs up: calls in flight
 * are cancelled and the server is freed. Proves: no crash, leak or
 * undefined behaviour; every line the server writes is one JSON-RPC 2.0
 * object.
 */
#define _GNU_SOURCE
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <uv.h>
#include "fuzz.h"
#include "toolgate.h"
#include "base/json.h"
#include "mcp/server.h"

static tg_runtime *rt;

static void on_end(mcp_server *s, void *ud) {
  (void)s;
  *(int *)ud = 1;
}

/* No built-in tools (exec would run), and calls and approvals that end
 * within an input's time. */
static void mcp_config(tg_config *cfg) {
  cfg->builtin_tools = 0;
  cfg->timeout_ms = 2000;
  cfg->approval_timeout_ms = 2000;
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  rt = fuzz_runtime("fuzz_mcp", mcp_config);
  return 0;
}

/* Each line written is one JSON-RPC 2.0 object. */
static void check_output(int fd) {
  off_t n = lseek(fd, 0, SEEK_END);
  if (n <= 0) return;
  char *buf = malloc((size_t)n + 1);
  FUZZ_ASSERT(buf != NULL, "out of memory");
  FUZZ_ASSERT(pread(fd, buf, (size_t)n, 0) == n, "cannot read the output");
  buf[n] = '\0';
  FUZZ_ASSERT(buf[n - 1] == '\n', "the output ends inside a line");
  for (char *line = buf, *nl; (nl = strchr(line, '\n')); line = nl + 1) {
    char err[256] = "";
    cJSON *j = tg_json_parse(line, (size_t)(nl - line), NULL, err, sizeof err);
    FUZZ_ASSERT(cJSON_IsObject(j), "a line that is no JSON object (%s): %.*s",
                err, (int)(nl - line), line);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, "jsonrpc");
    FUZZ_ASSERT(cJSON_IsString(v) && !strcmp(v->valuestring, "2.0"),
                "a line without \"jsonrpc\":\"2.0\": %.*s", (int)(nl - line),
                line);
    cJSON_Delete(j);
  }
  free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  int in = memfd_create("fuzz-mcp-in", MFD_CLOEXEC);
  int out = memfd_create("fuzz-mcp-out", MFD_CLOEXEC);
  FUZZ_ASSERT(in >= 0 && out >= 0, "memfd_create");
  FUZZ_ASSERT(size == 0 || write(in, data, size) == (ssize_t)size, "write");
  lseek(in, 0, SEEK_SET);
  int ended = 0;
  mcp_options o;
  memset(&o, 0, sizeof o);
  o.ask_fallback = MCP_FALLBACK_REJECT;
  o.max_message_bytes = 1 << 20;
  o.on_end = on_end;
  o.ud = &ended;
  char err[TG_ERRMSG] = "";
  mcp_server *s = mcp_server_new(rt, &o, err);
  FUZZ_ASSERT(s != NULL, "mcp_server_new: %s", err);
  FUZZ_ASSERT(mcp_server_start(s, in, out, err) == 0, "mcp_server_start: %s",
              err);
  uv_loop_t *loop = tg_runtime_loop(rt);
  while (!ended && uv_run(loop, UV_RUN_ONCE)) {
  }
  mcp_server_stop(s);
  while (mcp_server_busy(s) && uv_run(loop, UV_RUN_ONCE)) {
  }
  mcp_server_free(s);
  for (int i = 0; i < 8 && uv_run(loop, UV_RUN_NOWAIT); i++) {
  }
  check_output(out); /* the descriptors are ours: files, not pipes */
  close(in);
  close(out);
  return 0;
}
