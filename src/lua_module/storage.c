/*
 * store.c — the runtime's database from the host: the audit trail
 * (rt:audit), remembered approvals (rt:approvals, rt:grant, rt:revoke),
 * the usage ledger (rt:record_usage, rt:usage) and rt:db, with the option
 * readers the storage methods share (sessions.c).
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

/* ---- storage (lua/README.md, "Storage") --------------------------------------
 * The runtime's database: its audit trail, remembered approvals and usage
 * ledger. Each of these reads or writes on the host's thread, after what
 * the runtime queued is written (tg_store_*): the host reads its own
 * writes. With storage off (db = false) they return nil, "storage is off",
 * "ENOTSUP"; a failure of the database nil, message, "EIO".
 * Options are checked before anything is done; a wrong type raises. */

/* The runtime's store, or pushes nil, "storage is off" (returns NULL). */
tg_store *tg__lm_store_of(lua_State *L, lrt *r) {
  tg_store *st = tg_runtime_store(r->rt);
  if (!st) {
    lua_pushnil(L);
    lua_pushliteral(L, "storage is off (toolgate.new{db = false})");
    lua_pushliteral(L, "ENOTSUP");
  }
  return st;
}

/* A whole number >= 0 (dflt when absent). */
int64_t tg__lm_sopt_int(lua_State *L, int o, const char *fn, const char *k,
                        int64_t dflt) {
  int64_t v = dflt;
  if (tg__lm_get_opt(L, o, k) != LUA_TNIL) {
    int ok = 0;
    lua_Number n = lua_tonumberx(L, -1, &ok);
    if (!ok || !(n >= 0 && n <= 9e15) || n != floor(n))
      luaL_error(L, "%s: '%s' must be a whole number >= 0", fn, k);
    v = (int64_t)n;
  }
  lua_pop(L, 1);
  return v;
}

/* A time: ms since the epoch, or a string tg_time_parse takes (dir as
 * there: -1 "since", +1 "until"). 0 when absent. */
int64_t tg__lm_sopt_time(lua_State *L, int o, const char *fn, const char *k,
                         int dir) {
  int64_t v = 0;
  char err[TG_ERRMSG];
  if (tg__lm_get_opt(L, o, k) == LUA_TSTRING) {
    if (tg__has_nul(L, -1) || tg_time_parse(lua_tostring(L, -1), 0, dir, &v,
                                            err) < 0)
      luaL_error(L, "%s: '%s': %s", fn, k,
                 tg__has_nul(L, -1) ? "contains a NUL byte" : err);
    lua_pop(L, 1);
    return v;
  }
  lua_pop(L, 1);
  return tg__lm_sopt_int(L, o, fn, k, 0);
}

/* Pushes the JSON j (freed) or raises. */
int tg__lm_push_json_result(lua_State *L, cJSON *j, const char *err) {
  if (!j) return tg__lm_fail(L, err, "EIO");
  json_box *b = tg__lm_new_box(L);
  b->j[0] = j;
  if (tg__json_push(L, j) < 0)
    return luaL_error(L, "toolgate: the records are nested too deeply");
  tg__lm_box_clear(b);
  return 1;
}

static const char *const audit_opt_names[] = {
    "session", "tool", "status", "call_id", "since", "after", "limit", NULL};

/* rt:audit{session, tool, status, call_id, since, after, limit} -> records */
static int l_audit(lua_State *L) {
  lrt *r = tg__lm_check_rt(L, 1);
  const char *fn = "rt:audit";
  int o = tg__lm_copy_opts(L, 2, fn, audit_opt_names);
  tg_audit_filter f = {tg__lm_opt_string(L, o, fn, "session"),
                       tg__lm_opt_string(L, o, fn, "tool"),
                       tg__lm_opt_string(L, o, fn, "call_id"),
                       tg__lm_opt_string(L, o, fn, "status"),
                       tg__lm_sopt_time(L, o, fn, "since", -1),
                       tg__lm_sopt_int(L, o, fn, "after", 0),
                       (size_t)tg__lm_sopt_int(L, o, fn, "limit", 0)};
  tg_store *st = tg__lm_store_of(L, r);
  if (!st) return 3;
  char err[TG_ERRMSG] = "";
  return tg__lm_push_json_result(L, tg_store_audit(st, &f, err), err);
}

/* rt:approvals{all = bool} -> list */
static int l_approvals(lua_State *L) {
  lrt *r = tg__lm_check_rt(L, 1);
  static const char *const names[] = {"all", NULL};
  int o = tg__lm_copy_opts(L, 2, "rt:approvals", names);
  int ty = tg__lm_get_opt(L, o, "all");
  if (ty != LUA_TNIL && ty != LUA_TBOOLEAN)
    return luaL_error(L, "rt:approvals: 'all' must be a boolean");
  int all = lua_toboolean(L, -1);
  tg_store *st = tg__lm_store_of(L, r);
  if (!st) return 3;
  char err[TG_ERRMSG] = "";
  return tg__lm_push_json_result(L, tg_store_approvals(st, all, err), err);
}

static const char *const grant_opt_names[] = {
    "tool", "scope", "args", "arg", "glob", "where", "session", "project",
    "until", NULL};

/* rt:grant{tool, scope, args, arg, glob, where, session, project, until}
 * -> id | nil, err */
static int l_grant(lua_State *L) {
  lrt *r = tg__lm_check_rt(L, 1);
  const char *fn = "rt:grant";
  int o = tg__lm_copy_opts(L, 2, fn, grant_opt_names);
  lanswer a;
  char err[TG_ERRMSG] = "";
  memset(&a, 0, sizeof a);
  if (!o || tg__lm_answer_fields(L, o, &a, err) < 0)
    return luaL_error(L, "%s: %s", fn, err[0] ? err :
                      "takes {tool = name, scope = \"tool\"|\"args\"|"
                      "\"pattern\", args, arg, glob, where = \"session\"|"
                      "\"project\", session, project, until}");
  a.spec.tool = tg__lm_opt_string(L, o, fn, "tool");
  a.spec.session = tg__lm_opt_string(L, o, fn, "session");
  a.spec.project = tg__lm_opt_string(L, o, fn, "project");
  json_box *box = tg__lm_new_box(L);
  if (tg__lm_get_opt(L, o, "args") != LUA_TNIL &&
      !(box->j[0] = tg__lm_object_of(L, lua_gettop(L), r->max_args_bytes,
                                     "'args'", err)))
    return luaL_error(L, "%s: %s", fn, err);
  a.spec.args = box->j[0];
  tg_store *st = tg__lm_store_of(L, r);
  if (!st) return 3;
  int64_t id = tg_store_grant(st, &a.spec, err);
  tg__lm_box_clear(box);
  if (id < 0) return tg__lm_fail(L, err, "EIO");
  lua_pushinteger(L, (lua_Integer)id);
  return 1;
}

/* rt:revoke(id) -> true | nil, err */
static int l_revoke(lua_State *L) {
  lrt *r = tg__lm_check_rt(L, 1);
  lua_Integer id = luaL_checkinteger(L, 2);
  tg_store *st = tg__lm_store_of(L, r);
  if (!st) return 3;
  char err[TG_ERRMSG] = "";
  int rc = tg_store_revoke(st, (int64_t)id, err);
  char code[32];
  if (rc < 0)
    return tg__lm_fail(L, err, tg__lm_errno_name(rc, code, sizeof code));
  lua_pushboolean(L, 1);
  return 1;
}

static const char *const usage_opt_names[] = {
    "session", "turn", "model", "input_tokens", "output_tokens", "cost", "ts",
    NULL};

/* rt:record_usage{model, input_tokens, output_tokens, cost, session, turn,
 * ts} -> true | nil, err */
static int l_record_usage(lua_State *L) {
  lrt *r = tg__lm_check_rt(L, 1);
  const char *fn = "rt:record_usage";
  luaL_checktype(L, 2, LUA_TTABLE);
  int o = tg__lm_copy_opts(L, 2, fn, usage_opt_names);
  tg_usage u = {tg__lm_opt_string(L, o, fn, "session"),
                tg__lm_sopt_int(L, o, fn, "turn", 0),
                tg__lm_opt_string(L, o, fn, "model"),
                tg__lm_sopt_int(L, o, fn, "input_tokens", 0),
                tg__lm_sopt_int(L, o, fn, "output_tokens", 0),
                0,
                tg__lm_sopt_time(L, o, fn, "ts", -1)};
  if (tg__lm_get_opt(L, o, "cost") != LUA_TNIL) {
    int ok = 0;
    u.cost = lua_tonumberx(L, -1, &ok);
    if (!ok || !(u.cost >= 0 && u.cost < HUGE_VAL))
      return luaL_error(L, "%s: 'cost' must be a number >= 0", fn);
  }
  if (!u.model) return luaL_error(L, "%s: 'model' is required", fn);
  char err[TG_ERRMSG] = "";
  /* budget alerts and notifications tell */
  lua_State *prev = tg__lm_enter(r, L);
  int rc = tg_record_usage(r->rt, &u, err);
  tg__lm_leave(r, L, prev);
  char code[32];
  if (rc < 0)
    return tg__lm_fail(L, err, tg__lm_errno_name(rc, code, sizeof code));
  lua_pushboolean(L, 1);
  return 1;
}

static const char *const sum_opt_names[] = {"session", "model", "period",
                                            "since", "until", NULL};

/* rt:usage{session, model, period | since, until} -> {records,
 * input_tokens, output_tokens, cost, since} | nil, err */
static int l_usage(lua_State *L) {
  lrt *r = tg__lm_check_rt(L, 1);
  const char *fn = "rt:usage";
  int o = tg__lm_copy_opts(L, 2, fn, sum_opt_names);
  tg_usage_filter f = {tg__lm_opt_string(L, o, fn, "session"),
                       tg__lm_opt_string(L, o, fn, "model"),
                       tg__lm_opt_string(L, o, fn, "period"),
                       tg__lm_sopt_time(L, o, fn, "since", -1),
                       tg__lm_sopt_time(L, o, fn, "until", 1)};
  tg_store *st = tg__lm_store_of(L, r);
  if (!st) return 3;
  tg_usage_total t;
  char err[TG_ERRMSG] = "";
  if (tg_store_usage(st, &f, &t, err) < 0) return tg__lm_fail(L, err, "EIO");
  lua_createtable(L, 0, 5);
  lua_pushinteger(L, (lua_Integer)t.records);
  lua_setfield(L, -2, "records");
  lua_pushinteger(L, (lua_Integer)t.input_tokens);
  lua_setfield(L, -2, "input_tokens");
  lua_pushinteger(L, (lua_Integer)t.output_tokens);
  lua_setfield(L, -2, "output_tokens");
  lua_pushnumber(L, t.cost);
  lua_setfield(L, -2, "cost");
  lua_pushinteger(L, (lua_Integer)t.since_ms);
  lua_setfield(L, -2, "since");
  return 1;
}

/* rt:db() -> the database's path, or nil when storage is off */
static int l_db(lua_State *L) {
  lrt *r = tg__lm_check_rt(L, 1);
  tg_store *st = tg_runtime_store(r->rt);
  if (st) lua_pushstring(L, tg_store_path(st));
  else lua_pushnil(L);
  return 1;
}

const luaL_Reg tg__lm_store_methods[] = {
    {"audit", l_audit},
    {"approvals", l_approvals},
    {"grant", l_grant},
    {"revoke", l_revoke},
    {"record_usage", l_record_usage},
    {"usage", l_usage},
    {"db", l_db},
    {NULL, NULL}};
