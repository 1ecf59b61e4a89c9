/*
 * luatool_exec.c — ctx.exec(command | {command=, cwd=, env=, timeout_ms=,
 * stdin=}) for Lua tools: runs a shell command like the `exec` tool does
 * (process.c) and yields the coroutine until it has exited; other calls go
 * on meanwhile. Returns the same result table as `exec`, or nil, message
 * when the command could not be started. timeout_ms here is the command's
 * own: on expiry the group is killed and the table says timed_out = true.
 *
 * Unless cfg.trusted_policies, the command does not run here: it becomes
 * a nested call of the `exec` tool (luatool_call.c), judged by the rules
 * and hooks like any call, so a policy's own tool cannot get round the
 * shell policy; the answer is the same (the result, or nil, message).
 *
 * Cancelling (or timing out) the Lua tool kills the process group too;
 * the command's output so far becomes the partial result unless the tool
 * left one with ctx.partial.
 *
 * Ownership: the process belongs to the attempt (ex->proc) until it exits
 * or the attempt is stopped; then tg__proc_release hands it to process.c,
 * which finishes killing it and frees it.
 */
#include <stdio.h>
#include <stdlib.h>
#include "exec.h"
#include "proc/command.h"
#include "lua/luajson.h"
#include "lua/luaraw.h"

static void exec_exited(tg_proc *p, void *ud) {
  tg_exec *ex = ud;
  cJSON *result = tg__proc_result(p);
  ex->proc = NULL;
  ex->progress_output = 0;
  tg__proc_release(p);
  ex->waiting = 0;
  if (tg__json_push(ex->co, result) < 0) lua_pushnil(ex->co); /* cannot be */
  cJSON_Delete(result);
  tg__luatool_resume(ex, 1);
}

/* The options as exec's args JSON: a string is the command. */
static cJSON *opts_json(lua_State *L, char *msg, size_t n) {
  if (lua_type(L, 1) == LUA_TSTRING) {
    if (tg__has_nul(L, 1)) {
      snprintf(msg, n, "exec: the command contains a NUL byte; a command "
               "is plain text");
      return NULL;
    }
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "command", lua_tostring(L, 1));
    return o;
  }
  if (lua_type(L, 1) != LUA_TTABLE) {
    snprintf(msg, n, "exec: expects a command string or an options table "
             "(got %s)",
             luaL_typename(L, 1));
    return NULL;
  }
  char why[200];
  cJSON *o = tg__json_from_lua(L, 1, why, sizeof why);
  if (!o) snprintf(msg, n, "exec: the options are not JSON: %s", why);
  return o;
}

/* ctx.exec(cmd | opts) -> result | nil, message */
int tg__ctx_exec(lua_State *L) {
  tg_exec *ex = tg__luatool_ctx(L, "exec");
  if (L != ex->co)
    return luaL_error(L, "ctx.exec: call it from the tool's run function "
                         "itself, not from a nested coroutine or a hook");
  char err[TG_ERRMSG];
  tg_command a;
  cJSON *args = opts_json(L, err, sizeof err);
  if (args && !ex->core->cfg.trusted_policies) {
    /* Untrusted policy code runs no command the rules have not judged:
     * the command goes through the chain as a call of `exec`. */
    if (!ex->owner || ex->nested) {
      cJSON_Delete(args);
      return luaL_error(L, "ctx.exec: a call is already waiting");
    }
    return tg__ctx_call_tool(L, ex, "exec", args, 1);
  }
  int rc = args ? tg__command_parse(&ex->core->cfg, args, &a, err, sizeof err) : -1;
  if (rc < 0) {
    cJSON_Delete(args); /* before raising: luaL_error does not return */
    return luaL_error(L, "ctx.%s", err); /* err starts "exec: " */
  }
  a.proc.timeout_ms = a.timeout_ms; /* the command's own deadline */
  rc = tg__proc_spawn(ex->core, &a.proc, tg__exec_output_progress, exec_exited, ex,
                      &ex->proc, err, sizeof err);
  tg__command_free(&a);
  cJSON_Delete(args);
  if (rc < 0) {
    lua_pushnil(L);
    lua_pushstring(L, err);
    return 2;
  }
  ex->progress_output = 1;
  tg_exec_progress(ex, 0, -1, "");
  ex->waiting = 1; /* exec_exited resumes the coroutine */
  return lua_yield(L, 0);
}

void tg__ctx_exec_abandon(tg_exec *ex) {
  tg_proc *p = ex->proc;
  if (!p) return;
  ex->proc = NULL;
  tg__proc_stop(p, ex->timed_out ? TG_PROC_TIMEOUT : TG_PROC_CANCEL,
                ex->core->freeing); /* SIGTERM, grace, SIGKILL */
  if (!ex->result && ex->cancelled) ex->result = tg__proc_result(p);
  tg__proc_release(p); /* process.c finishes the killing */
}
