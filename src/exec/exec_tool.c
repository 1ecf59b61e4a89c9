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
#include "exec.h"
#include "../base/jsonnum.h"

#define DEFAULT_CAP ((size_t)1 << 20)
#define DEFAULT_GRACE_MS 2000
#define MAX_TIMEOUT_MS 86400000 /* one day: a bound a user controls */

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
    "\"maximum\":" TG_NUM_TEXT(MAX_TIMEOUT_MS) ","
    "\"description\":\"this call's timeout (default: the tool's)\"},"
    "\"stdin\":{\"type\":\"string\","
    "\"description\":\"text written to the command's standard input\"}}}";

/* ---- args --------------------------------------------------------------- */

static int bad(char *err, size_t n, const char *what) {
  snprintf(err, n, "exec: %s", what);
  return -1;
}

static char *env_entry(const char *name, const char *value) {
  size_t kn = strlen(name), vn = strlen(value);
  char *e = malloc(kn + vn + 2);
  if (!e) return NULL;
  memcpy(e, name, kn);
  e[kn] = '=';
  memcpy(e + kn + 1, value, vn + 1);
  return e;
}

static int parse_env(const cJSON *env, tg_exec_args *a, char *err, size_t n) {
  if (!cJSON_IsObject(env))
    return bad(err, n, "'env' must be an object of strings");
  size_t count = (size_t)cJSON_GetArraySize(env), k = 0;
  a->env = calloc(count + 1, sizeof *a->env);
  if (!a->env) return bad(err, n, "out of memory");
  const cJSON *v;
  cJSON_ArrayForEach(v, env) {
    char msg[160];
    if (!*v->string || strchr(v->string, '=')) {
      snprintf(msg, sizeof msg, "env name '%.60s' is not usable (empty or "
               "contains '=')", v->string);
      return bad(err, n, msg);
    }
    if (!cJSON_IsString(v)) {
      snprintf(msg, sizeof msg, "env '%.60s' must be a string", v->string);
      return bad(err, n, msg);
    }
    if (!(a->env[k++] = env_entry(v->string, v->valuestring)))
      return bad(err, n, "out of memory");
  }
  return 0;
}

static int opt_string(const cJSON *args, const char *key, const char **out,
                      char *err, size_t n) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(args, key);
  if (!v || cJSON_IsNull(v)) return 0;
  if (!cJSON_IsString(v)) {
    char msg[80];
    snprintf(msg, sizeof msg, "'%s' must be a string", key);
    return bad(err, n, msg);
  }
  *out = v->valuestring;
  return 0;
}

static int parse_fields(const cJSON *args, tg_exec_args *a, char *err,
                        size_t n) {
  tg_proc_opts *o = &a->proc;
  if (!cJSON_IsObject(args)) return bad(err, n, "the args must be an object");
  if (opt_string(args, "command", &o->command, err, n) < 0 ||
      opt_string(args, "cwd", &o->cwd, err, n) < 0 ||
      opt_string(args, "stdin", &o->input, err, n) < 0)
    return -1;
  if (!o->command || !*o->command)
    return bad(err, n, "'command' is required: the shell command to run");
  if (o->input) o->input_len = strlen(o->input);
  int64_t ms;
  if (tg__json_int_arg(args, "exec", "timeout_ms", 1, MAX_TIMEOUT_MS, 0, &ms,
                       err, n) < 0)
    return -1;
  a->timeout_ms = (uint64_t)ms; /* 0: not given */
  const cJSON *env = cJSON_GetObjectItemCaseSensitive(args, "env");
  if (env && !cJSON_IsNull(env) && parse_env(env, a, err, n) < 0) return -1;
  return 0;
}

int tg__exec_args_parse(tg_runtime *rt, const cJSON *args, tg_exec_args *a,
                        char *err, size_t errlen) {
  memset(a, 0, sizeof *a);
  if (parse_fields(args, a, err, errlen) < 0) {
    tg__exec_args_free(a);
    return -1;
  }
  a->proc.env = a->env;
  a->proc.cap = rt->cfg.exec_output_cap ? rt->cfg.exec_output_cap : DEFAULT_CAP;
  a->proc.kill_grace_ms =
      rt->cfg.kill_grace_ms ? rt->cfg.kill_grace_ms : DEFAULT_GRACE_MS;
  return 0;
}

void tg__exec_args_free(tg_exec_args *a) {
  for (size_t i = 0; a->env && a->env[i]; i++) free(a->env[i]);
  free(a->env);
  a->env = NULL;
}

/* ---- the tool ------------------------------------------------------------- */

void tg__exec_output_progress(tg_proc *p, void *ud) {
  tg_exec *ex = ud;
  tg_exec_progress(ex, (double)tg__proc_bytes(p), -1, tg__proc_last_line(p));
}

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
  tg_exec_args a;
  if (tg__exec_args_parse(ex->rt, args, &a, err, sizeof err) < 0) {
    tg__exec_fail(ex, NULL, TG_E_BAD_ARGS, err, 0);
    return;
  }
  if (a.timeout_ms) ex->timeout_ms = a.timeout_ms; /* the chain's deadline */
  ex->progress_output = 1;
  tg_exec_progress(ex, 0, -1, "");
  int rc = tg__proc_spawn(ex->rt, &a.proc, tg__exec_output_progress,
                          exec_exited, ex, &ex->proc,
                          err, sizeof err);
  tg__exec_args_free(&a);
  if (rc < 0) tg__exec_fail(ex, NULL, TG_E_SPAWN_FAILED, err, 0);
}

static void exec_cancel(tg_exec *ex, void *ud) {
  if (!ex->proc) return;
  tg__proc_stop(ex->proc, ex->timed_out ? TG_PROC_TIMEOUT : TG_PROC_CANCEL,
                ex->rt->freeing); /* freeing: SIGKILL, no grace */
}

int tg__exec_tool_register(tg_runtime *rt, char err[TG_ERRMSG]) {
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
  int rc = tg_tool_register(rt, &def, err);
  cJSON_Delete(schema);
  return rc;
}
