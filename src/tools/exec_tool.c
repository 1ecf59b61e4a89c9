/*
 * exec_tool.c — the built-in `exec` tool: {command, cwd?, env?, timeout_ms?,
 * stdin?} runs `/bin/sh -c command` in its own process group (process.c).
 *
 * The result: {exit_code, signal, stdout, stderr, stdout_truncated,
 * stderr_truncated, duration_ms, timed_out, cancelled}.
 *
 * A command that exits non-zero (or dies of a signal it raised) is still a
 * tool that ran to its end: the call is ok and the agent reads exit_code —
 * a failing `grep` or test run is information, not a broken tool, and
 * retry must not re-run it. Only a command that could not be started (bad
 * cwd, no /bin/sh, out of file descriptors) is an EXECUTE error. A timeout
 * or cancel kills the group (SIGTERM, grace, SIGKILL) and ends the call
 * TIMEOUT / CANCEL with the output produced so far as the partial result.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "exec_tool.h"
#include "exec/exec.h"
#include "base/jsonnum.h"
#include "base/util.h"
#include "proc/command.h"


static const char EXEC_SCHEMA[] =
    "{\"type\":\"object\",\"required\":[\"command\"],"
    "\"additionalProperties\":false,\"properties\":{"
    "\"command\":{\"type\":\"string\",\"minLength\":1,"
    "\"description\":\"a shell command line, run with /bin/sh -c\"},"
    "\"cwd\":{\"type\":\"string\",\"minLength\":1,"
    "\"description\":\"working directory (default: the runtime's)\"},"
    "\"env\":{\"type\":\"object\",\"additionalProperties\":{\"type\":\"string\"},"
    "\"description\":\"variables set over the runtime's environment\"},"
    "\"timeout_ms\":{\"type\":\"integer\",\"minimum\":1,"
    "\"maximum\":" TG_NUM_TEXT(TG_COMMAND_MAX_TIMEOUT_MS) ","
    "\"description\":\"this call's timeout (default: the tool's)\"},"
    "\"stdin\":{\"type\":\"string\","
    "\"description\":\"text written to the command's standard input\"}}}";

/* ---- the tool ------------------------------------------------------------- */

static void exec_exited(tg_proc *p, void *ud) {
  tg_exec *ex = ud;
  cJSON *result = tg__proc_result(p);
  ex->proc = NULL;
  tg__proc_release(p);
  if (ex->cancelled) /* the chain names it TIMEOUT or CANCEL */
    tg_exec_finish_error(ex, result, NULL, NULL, 0);
  else
    tg_exec_finish_ok(ex, result);
}

static void exec_start(tg_exec *ex, const cJSON *args, void *ud) {
  char err[TG_ERRMSG];
  tg_command a;
  if (tg__command_parse(&ex->core->cfg, args, &a, err, sizeof err) < 0) {
    tg__exec_fail(ex, NULL, TG_E_BAD_ARGS, err, 0);
    return;
  }
  if (a.timeout_ms) ex->timeout_ms = a.timeout_ms; /* the chain's deadline */
  ex->progress_output = 1;
  tg_exec_progress(ex, 0, -1, "");
  int rc = tg__proc_spawn(ex->core, &a.proc, tg__exec_output_progress,
                          exec_exited, ex, &ex->proc,
                          err, sizeof err);
  tg__command_free(&a);
  if (rc < 0) tg__exec_fail(ex, NULL, TG_E_SPAWN_FAILED, err, 0);
}

static void exec_cancel(tg_exec *ex, void *ud) {
  if (!ex->proc) return;
  tg__proc_stop(ex->proc, ex->timed_out ? TG_PROC_TIMEOUT : TG_PROC_CANCEL,
                ex->core->freeing); /* freeing: SIGKILL, no grace */
}

int tg__exec_tool_register(tg_core *core, char err[TG_ERRMSG]) {
  cJSON *schema = cJSON_Parse(EXEC_SCHEMA);
  if (!schema) {
    tg__errf(err, TG_ERRMSG, "exec: out of memory");
    return -1;
  }
  tg_tool_def def = {
      .name = "exec",
      .description = "Runs a shell command (/bin/sh -c) in its own process "
                     "group and returns its exit code, stdout and stderr. A "
                     "non-zero exit code is returned, not raised.",
      .schema = schema,
      .read_only = 0,
      .start = exec_start,
      .cancel = exec_cancel,
  };
  int rc = tg__core_add_tool(core, &def, err);
  cJSON_Delete(schema);
  return rc;
}
