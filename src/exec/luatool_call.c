/*
 * luatool_call.c — ctx.call(tool, args): a Lua tool calls another tool
 * through the whole chain (rules, hooks, approval, retry…) and waits for
 * its outcome without blocking the loop.
 *
 * The nested call is started from a loop callback, not from inside the
 * running coroutine, so policy code of the nested call never runs while
 * the parent's coroutine is on the C stack. Its id is "<parent>.<n>" and
 * its metadata carries parent_call. Cancelling the parent cancels it.
 *
 * Ownership: the tg_nested belongs to the attempt while the nested call
 * runs; the attempt is not freed before the nested call's done callback
 * (tg__exec_maybe_free checks ex->nested).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "exec.h"
#include "lua/luajson.h"
#include "lua/luaraw.h"
#include "lua/luaoutcome.h"

typedef struct tg_nested {
  char *id;      /* "<parent id>.<n>", never cut short: ids must not clash */
  char *tool;
  cJSON *args;
  int started;   /* tg_call_start accepted it: its done callback will come */
  int as_exec;   /* ctx.exec: answer with the result, or nil, message */
} tg_nested;

static void nested_free(tg_exec *ex) {
  tg_nested *n = ex->nested;
  ex->nested = NULL;
  free(n->id);
  free(n->tool);
  cJSON_Delete(n->args);
  free(n);
}

/* ctx.exec's answer: exec's result table when the command ran (whatever
 * its exit code), else nil and why it did not. */
static int push_exec_answer(lua_State *co, const tg_outcome *o) {
  if (o->status == TG_STATUS_OK && o->result && tg__json_push(co, o->result) == 0)
    return 1;
  lua_pushnil(co);
  lua_pushfstring(co, "ctx.exec: the command did not run (%s): %s",
                  tg_status_name(o->status),
                  o->error.message ? o->error.message : "no result");
  return 2;
}

static void nested_done_cb(tg_runtime *rt, const tg_outcome *o, void *ud) {
  tg_exec *ex = ud;
  int as_exec = ex->nested->as_exec;
  nested_free(ex);
  if (ex->cancelled || ex->finished || !ex->co) { /* nobody waits now */
    tg__exec_maybe_free(ex);
    return;
  }
  ex->waiting = 0;
  if (as_exec) {
    tg__luatool_resume(ex, push_exec_answer(ex->co, o));
    return;
  }
  tg__push_outcome(ex->co, o);
  tg__luatool_resume(ex, 1);
}

/* Loop callback: starts the nested call, or resumes with nil, err. */
static void nested_start_cb(uv_timer_t *t) {
  tg_exec *ex = t->data;
  tg_nested *n = ex->nested;
  if (!n || ex->finished || !ex->owner) return;
  char err[TG_ERRMSG] = "";
  n->started = 1;
  int rc = ex->ops->call(ex, n->id, n->tool, n->args, nested_done_cb, ex, err);
  if (rc == 0) return; /* done_cb resumes us, maybe already has */
  nested_free(ex);
  ex->waiting = 0;
  lua_pushnil(ex->co);
  lua_pushfstring(ex->co, "ctx.call: %s", err);
  tg__luatool_resume(ex, 2);
}

int tg__ctx_call_tool(lua_State *L, tg_exec *ex, const char *tool,
                      cJSON *args, int as_exec) {
  tg_nested *n = calloc(1, sizeof *n);
  char *name = tg__strdup(tool);
  size_t idlen = strlen(ex->call_id) + 16;
  char *id = malloc(idlen);
  if (!n || !name || !id) {
    free(n);
    free(name);
    free(id);
    cJSON_Delete(args);
    return luaL_error(L, "ctx.call: out of memory");
  }
  snprintf(id, idlen, "%s.%d", ex->call_id, ++ex->nested_count);
  n->id = id;
  n->tool = name;
  n->args = args;
  n->as_exec = as_exec;
  ex->nested = n;
  tg__luatool_wait(ex, 0, nested_start_cb);
  return lua_yield(L, 0);
}

/* ctx.call(tool, args?) -> outcome | nil, message */
int tg__ctx_call(lua_State *L) {
  tg_exec *ex = tg__luatool_ctx(L, "call");
  luaL_checkstring(L, 1);
  const char *tool = tg__checknonul(L, 1, "ctx.call", "the tool name");
  if (!lua_isnoneornil(L, 2)) luaL_checktype(L, 2, LUA_TTABLE);
  if (L != ex->co || !ex->owner)
    return luaL_error(L, "ctx.call: call it from the tool's run function "
                         "itself, not from a nested coroutine or a hook");
  if (ex->nested) return luaL_error(L, "ctx.call: a call is already waiting");
  char msg[256];
  cJSON *args = lua_isnoneornil(L, 2) ? cJSON_CreateObject()
                                      : tg__json_from_lua(L, 2, msg, sizeof msg);
  if (!args) return luaL_error(L, "ctx.call: the args are not JSON: %s", msg);
  if (!cJSON_IsObject(args)) {
    cJSON_Delete(args);
    return luaL_error(L, "ctx.call: the args must be a table with keys");
  }
  return tg__ctx_call_tool(L, ex, tool, args, 0);
}

void tg__nested_abandon(tg_exec *ex) {
  tg_nested *n = ex->nested;
  if (!n) return;
  if (!n->started) {
    nested_free(ex);
    return;
  }
  /* The nested call ends (now or once its tool stops) through
   * nested_done_cb, which frees n and, if released, the attempt. */
  ex->ops->cancel(ex, n->id);
}
