/*
 * approvals.c — the host's approver (a function toolgate.new's `approve`
 * or rt:set_approver gives, or "allow" / "deny"), answering approvals
 * (rt:answer) and reading an answer's options (what an always covers),
 * which rt:grant reads too. A failed approver rejects, at once.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lua_module.h"
#include "lua/luaraw.h"
#include "lua/luajson.h"
#include "lua/luaarg.h" /* after lauxlib: argument errors name the method */

static int parse_answer(lua_State *L, int idx, tg_answer *a) {
  if (tg__lm_is_str(L, idx, "approve") || tg__lm_is_str(L, idx, "allow"))
    *a = TG_ANSWER_APPROVE;
  else if (tg__lm_is_str(L, idx, "always"))
    *a = TG_ANSWER_ALWAYS;
  else if (tg__lm_is_str(L, idx, "reject") || tg__lm_is_str(L, idx, "deny"))
    *a = TG_ANSWER_REJECT;
  else
    return -1;
  return 0;
}

static const char *const answer_opt_names[] = {
    "scope", "guidance", "arg", "glob", "where", "until", NULL};

/* A string field of the copied options at o (NULL when absent); -1 when
 * it is there and not a string without NUL bytes. */
static int answer_str(lua_State *L, int o, const char *k, const char **out) {
  int ty = tg__lm_get_opt(L, o, k);
  int bad = ty != LUA_TNIL && (ty != LUA_TSTRING || tg__has_nul(L, -1));
  *out = ty == LUA_TSTRING && !bad ? lua_tostring(L, -1) : NULL;
  lua_pop(L, 1); /* the copied table keeps it */
  return bad ? -1 : 0;
}

/* until = ms since the epoch, or a time tg_time_parse takes ("2h",
 * "2025-07-01"). */
static int answer_until(lua_State *L, int o, int64_t *until, char *err) {
  int ty = tg__lm_get_opt(L, o, "until"), rc = 0;
  if (ty == LUA_TNUMBER) {
    lua_Number n = lua_tonumber(L, -1);
    if (!(n >= 0 && n <= 9e15)) rc = -1; /* NaN too */
    else *until = (int64_t)n;
  } else if (ty == LUA_TSTRING) {
    rc = tg__has_nul(L, -1) ||
                 tg_time_parse(lua_tostring(L, -1), 0, 1, until, err) < 0
             ? -1 : 0;
  } else if (ty != LUA_TNIL) {
    rc = -1;
  }
  lua_pop(L, 1);
  return rc;
}

/* The fields of an options table (copied at o) into a. */
int tg__lm_answer_fields(lua_State *L, int o, lanswer *a, char *err) {
  const char *scope, *where;
  if (answer_str(L, o, "scope", &scope) < 0 ||
      answer_str(L, o, "where", &where) < 0 ||
      answer_str(L, o, "arg", &a->spec.arg) < 0 ||
      answer_str(L, o, "glob", &a->spec.glob) < 0 ||
      answer_str(L, o, "guidance", &a->guidance) < 0 ||
      answer_until(L, o, &a->spec.until_ms, err) < 0)
    return -1;
  int sc = !scope || !strcmp(scope, "tool") ? TG_SCOPE_TOOL
           : !strcmp(scope, "args")           ? TG_SCOPE_ARGS
           : !strcmp(scope, "pattern")        ? TG_SCOPE_PATTERN : -1;
  int wh = !where || !strcmp(where, "session") ? TG_WHERE_SESSION
           : !strcmp(where, "project")          ? TG_WHERE_PROJECT : -1;
  if (sc < 0 || wh < 0) return -1;
  a->spec.scope = (tg_always_scope)sc;
  a->spec.where = (tg_always_where)wh;
  a->full = sc == TG_SCOPE_PATTERN || wh == TG_WHERE_PROJECT ||
            a->spec.until_ms || a->spec.arg || a->spec.glob;
  return 0;
}

/* Reads {scope = "tool"|"args"|"pattern", arg, glob, where =
 * "session"|"project", until, guidance} or a guidance string at idx into
 * a. Pushes one value that keeps the strings alive. -1 for anything else,
 * a misspelt field included: a typo must not turn "these args" into "the
 * whole tool". */
static int answer_opts(lua_State *L, int idx, lanswer *a, const char *fn,
                       char *err) {
  idx = lua_absindex(L, idx);
  memset(a, 0, sizeof *a);
  if (lua_isnoneornil(L, idx)) {
    lua_pushnil(L);
    return 0;
  }
  if (lua_type(L, idx) == LUA_TSTRING) {
    lua_pushvalue(L, idx);
    if (tg__has_nul(L, -1)) return -1;
    a->guidance = lua_tostring(L, -1);
    return 0;
  }
  if (!lua_istable(L, idx)) {
    lua_pushnil(L);
    return -1;
  }
  /* the copy stays: the anchor */
  int o = tg__lm_copy_opts(L, idx, fn, answer_opt_names);
  return tg__lm_answer_fields(L, o, a, err);
}

/* Answers approval id as the host said. -ENOENT etc. with err. */
static int give_answer(lrt *r, uint64_t id, tg_answer ans, const lanswer *a,
                       char *err) {
  if (ans == TG_ANSWER_ALWAYS && a->full)
    return tg_approval_answer_always(r->rt, id, &a->spec, err);
  int rc = tg_approval_answer(r->rt, id, ans, a->spec.scope, a->guidance);
  if (rc < 0)
    snprintf(err, TG_ERRMSG, "no pending approval %lld (answered, timed out "
             "or cancelled)", (long long)id);
  return rc;
}

const char *const tg__lm_answer_usage =
    "answer must be \"approve\", \"always\" or \"reject\", optionally "
    "followed by {scope = \"tool\"|\"args\"|\"pattern\", arg = \"name\", "
    "glob = \"...\", where = \"session\"|\"project\", until = time, "
    "guidance = \"...\"}";

static void set_str(lua_State *L, const char *k, const char *v) {
  if (!v) return;
  lua_pushstring(L, v);
  lua_setfield(L, -2, k);
}

void tg__lm_push_request(lua_State *L, const tg_approval_request *q) {
  lua_createtable(L, 0, 7);
  lua_pushinteger(L, (lua_Integer)q->approval_id);
  lua_setfield(L, -2, "approval_id");
  set_str(L, "call_id", q->call_id);
  set_str(L, "tool", q->tool);
  set_str(L, "session", q->session);
  set_str(L, "prompt", q->prompt);
  set_str(L, "rule", q->rule);
  if (tg__json_push(L, q->args) == 0) lua_setfield(L, -2, "args");
}

/* Asks the host's approver and answers when it returned an answer. Nil:
 * it answers later with rt:answer. */
static int approver_body(lua_State *L) {
  approver_arg *a = lua_touserdata(L, 1);
  lrt *r = a->r;
  tg__lm_state(L, r, "approver");
  tg__lm_push_request(L, a->q);
  a->failed = 1; /* until we know better: a raise below is a failure */
  if (tg__lm_callback(r, L, 1, 2, "approver") < 0) return 0; /* 2, 3 */
  a->failed = 0;
  if (lua_isnil(L, 2)) return 0;
  tg_answer ans;
  lanswer la;
  char err[TG_ERRMSG] = "";
  if (parse_answer(L, 2, &ans) < 0 ||
      answer_opts(L, 3, &la, "the approver's answer", err) < 0 ||
      give_answer(r, a->q->approval_id, ans, &la, err) == -EINVAL) {
    lua_pushfstring(L, "toolgate: the approver returned a bad answer; %s",
                    err[0] ? err : tg__lm_answer_usage);
    tg__lm_keep_error(r, L);
    a->failed = 1;
    return 0;
  }
  a->answered = 1;
  return 0;
}

static void approver_cb(tg_runtime *rt, const tg_approval_request *q,
                        void *ud) {
  lrt *r = ud;
  if (!r->cur_L) {
    tg_approval_answer(rt, q->approval_id, TG_ANSWER_REJECT, TG_SCOPE_TOOL,
                       "the runtime is closing");
    return;
  }
  approver_arg a = {r, q, 0, 0};
  lua_CFunction body =
      r->deferring ? tg__lm_defer_approver_body : approver_body;
  if (tg__lm_protect(r, r->cur_L, body, &a) < 0) a.failed = 1;
  if (a.failed && !a.answered) /* a failed approver rejects, now */
    tg_approval_answer(rt, q->approval_id, TG_ANSWER_REJECT, TG_SCOPE_TOOL,
                       "the approver failed");
}

/* "allow" / "deny" as an approve mode; -1 for anything else. */
int tg__lm_approve_mode(lua_State *L, int idx) {
  if (tg__lm_is_str(L, idx, "allow")) return TG_APPROVE_ALLOW;
  if (tg__lm_is_str(L, idx, "deny")) return TG_APPROVE_DENY;
  return -1;
}

void tg__lm_raise_bad_approver(lua_State *L, const char *fn, int idx) {
  luaL_error(L, "%s: approve must be a function(request), \"allow\" or "
                "\"deny\" (got %s)", fn,
             lua_type(L, idx) == LUA_TSTRING ? lua_tostring(L, idx)
                                             : luaL_typename(L, idx));
}

void tg__lm_set_approver(lua_State *L, lrt *r, int idx, const char *fn) {
  if (lua_isfunction(L, idx)) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, r->state_ref);
    lua_pushvalue(L, idx);
    lua_setfield(L, -2, "approver"); /* first: it is what may raise */
    lua_pop(L, 1);
    tg_runtime_set_approve_mode(r->rt, TG_APPROVE_CALLBACK);
    tg_runtime_set_approver(r->rt, approver_cb, r);
    return;
  }
  int mode = tg__lm_approve_mode(L, idx);
  if (mode < 0) tg__lm_raise_bad_approver(L, fn, idx);
  tg_runtime_set_approve_mode(r->rt, (tg_approve_mode)mode);
}

static int l_set_approver(lua_State *L) {
  lrt *r = tg__lm_check_rt(L, 1);
  luaL_checkany(L, 2);
  tg__lm_set_approver(L, r, 2, "rt:set_approver");
  return 0;
}

/* rt:answer(approval_id, "approve"|"always"|"reject", opts) -> true | nil, err */
static int l_answer(lua_State *L) {
  lrt *r = tg__lm_check_rt(L, 1);
  lua_Integer id = luaL_checkinteger(L, 2);
  tg_answer a;
  lanswer la;
  char err[TG_ERRMSG] = "";
  if (parse_answer(L, 3, &a) < 0 || answer_opts(L, 4, &la, "rt:answer", err) < 0)
    return luaL_error(L, "toolgate: rt:answer: %s",
                      err[0] ? err : tg__lm_answer_usage);
  lua_State *prev = tg__lm_enter(r, L);
  int rc = give_answer(r, (uint64_t)id, a, &la, err);
  tg__lm_leave(r, L, prev);
  if (rc == -EINVAL) return luaL_error(L, "toolgate: rt:answer: %s", err);
  if (rc < 0) {
    lua_pushnil(L);
    lua_pushstring(L, err);
    lua_pushliteral(L, "ENOENT");
    return 3;
  }
  lua_pushboolean(L, 1);
  return 1;
}

const luaL_Reg tg__lm_approval_methods[] = {
    {"set_approver", l_set_approver},
    {"answer", l_answer},
    {NULL, NULL}};
