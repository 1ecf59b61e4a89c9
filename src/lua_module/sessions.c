/*
 * sessions.c — sessions, their messages and memories from the host:
 * rt:session, rt:end_session, rt:message, rt:sessions, rt:search,
 * rt:remember, rt:recall. Storage like store.c (same options, same
 * failures); its own file because it is the conversation's record, not
 * the gate's.
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

static const char *const session_opt_names[] = {"id", "project", "title",
                                                "started", NULL};

/* rt:session{id, project, title, started} -> id | nil, err, code: begins
 * a session (a fresh id when none is given) or resumes one */
static int l_session(lua_State *L) {
  lrt *r = tg__lm_check_rt(L, 1);
  const char *fn = "rt:session";
  int o = tg__lm_copy_opts(L, 2, fn, session_opt_names);
  tg_session_spec s = {tg__lm_opt_string(L, o, fn, "id"),
                       tg__lm_opt_string(L, o, fn, "project"),
                       tg__lm_opt_string(L, o, fn, "title"),
                       tg__lm_sopt_time(L, o, fn, "started", -1)};
  tg_store *st = tg__lm_store_of(L, r);
  if (!st) return 3;
  char err[TG_ERRMSG] = "", id[TG_SESSION_ID_MAX], code[32];
  int rc = tg_session_begin(st, &s, id, err);
  if (rc < 0)
    return tg__lm_fail(L, err, tg__lm_errno_name(rc, code, sizeof code));
  lua_pushstring(L, id);
  return 1;
}

/* rt:end_session(id) -> true | nil, err, code */
static int l_end_session(lua_State *L) {
  lrt *r = tg__lm_check_rt(L, 1);
  luaL_checktype(L, 2, LUA_TSTRING);
  const char *id = tg__checknonul(L, 2, "rt:end_session", "the id");
  tg_store *st = tg__lm_store_of(L, r);
  if (!st) return 3;
  char err[TG_ERRMSG] = "", code[32];
  int rc = tg_session_end(st, id, err);
  if (rc < 0)
    return tg__lm_fail(L, err, tg__lm_errno_name(rc, code, sizeof code));
  lua_pushboolean(L, 1);
  return 1;
}

static const char *const message_opt_names[] = {
    "session", "role", "content", "tool_calls", "ts", NULL};

/* rt:message{session, role, content, tool_calls, ts} -> id | nil, err,
 * code */
static int l_message(lua_State *L) {
  lrt *r = tg__lm_check_rt(L, 1);
  const char *fn = "rt:message";
  luaL_checktype(L, 2, LUA_TTABLE);
  int o = tg__lm_copy_opts(L, 2, fn, message_opt_names);
  tg_message m = {tg__lm_opt_string(L, o, fn, "session"),
                  tg__lm_opt_string(L, o, fn, "role"),
                  tg__lm_opt_string(L, o, fn, "content"), NULL,
                  tg__lm_sopt_time(L, o, fn, "ts", -1)};
  char err[TG_ERRMSG] = "", why[TG_ERRMSG - 32], code[32];
  json_box *box = tg__lm_new_box(L);
  if (tg__lm_get_opt(L, o, "tool_calls") != LUA_TNIL) {
    if (!lua_istable(L, -1))
      return luaL_error(L, "%s: 'tool_calls' must be a table", fn);
    box->j[0] = tg__json_from_lua_max(L, lua_gettop(L), TG_MESSAGE_MAX, why,
                                      sizeof why);
    if (!box->j[0]) return luaL_error(L, "%s: 'tool_calls': %s", fn, why);
  }
  m.tool_calls = box->j[0];
  tg_store *st = tg__lm_store_of(L, r);
  if (!st) return 3;
  int64_t id = tg_message_record(st, &m, err);
  tg__lm_box_clear(box);
  if (id < 0)
    return tg__lm_fail(L, err, tg__lm_errno_name((int)id, code, sizeof code));
  lua_pushinteger(L, (lua_Integer)id);
  return 1;
}

/* rt:sessions{limit} -> list | nil, err */
static int l_sessions(lua_State *L) {
  lrt *r = tg__lm_check_rt(L, 1);
  static const char *const names[] = {"limit", NULL};
  int o = tg__lm_copy_opts(L, 2, "rt:sessions", names);
  size_t limit = (size_t)tg__lm_sopt_int(L, o, "rt:sessions", "limit", 0);
  tg_store *st = tg__lm_store_of(L, r);
  if (!st) return 3;
  char err[TG_ERRMSG] = "";
  return tg__lm_push_json_result(L, tg_store_sessions(st, limit, err), err);
}

/* rt:search(query, {session, limit}) -> hits | nil, err, code ("EINVAL":
 * a query FTS5 cannot parse) */
static int l_search(lua_State *L) {
  lrt *r = tg__lm_check_rt(L, 1);
  const char *fn = "rt:search";
  static const char *const names[] = {"session", "limit", NULL};
  luaL_checktype(L, 2, LUA_TSTRING);
  tg_search_filter f = {tg__checknonul(L, 2, fn, "the query"), NULL, 0};
  int o = tg__lm_copy_opts(L, 3, fn, names);
  f.session = tg__lm_opt_string(L, o, fn, "session");
  f.limit = (size_t)tg__lm_sopt_int(L, o, fn, "limit", 0);
  tg_store *st = tg__lm_store_of(L, r);
  if (!st) return 3;
  char err[TG_ERRMSG] = "", code[32];
  cJSON *hits = NULL;
  int rc = tg_store_search(st, &f, &hits, err);
  if (rc < 0)
    return tg__lm_fail(L, err, tg__lm_errno_name(rc, code, sizeof code));
  return tg__lm_push_json_result(L, hits, err);
}

static const char *const remember_opt_names[] = {
    "kind", "content", "metadata", "scope", "session", "project", NULL};

/* rt:remember{kind, content, metadata, scope, session, project} -> id |
 * nil, err, code */
static int l_remember(lua_State *L) {
  lrt *r = tg__lm_check_rt(L, 1);
  const char *fn = "rt:remember";
  luaL_checktype(L, 2, LUA_TTABLE);
  int o = tg__lm_copy_opts(L, 2, fn, remember_opt_names);
  tg_memory m = {tg__lm_opt_string(L, o, fn, "kind"),
                 tg__lm_opt_string(L, o, fn, "content"),
                 NULL,
                 tg__lm_opt_string(L, o, fn, "scope"),
                 tg__lm_opt_string(L, o, fn, "session"),
                 tg__lm_opt_string(L, o, fn, "project")};
  char err[TG_ERRMSG] = "", why[TG_ERRMSG - 32], code[32];
  json_box *box = tg__lm_new_box(L);
  if (tg__lm_get_opt(L, o, "metadata") != LUA_TNIL) {
    box->j[0] = tg__json_from_lua_max(L, lua_gettop(L), TG_MESSAGE_MAX, why,
                                      sizeof why);
    if (!box->j[0]) return luaL_error(L, "%s: 'metadata': %s", fn, why);
  }
  m.metadata = box->j[0];
  int64_t id = tg_runtime_remember(r->rt, &m, err);
  tg__lm_box_clear(box);
  if (id < 0)
    return tg__lm_fail(L, err, tg__lm_errno_name((int)id, code, sizeof code));
  lua_pushinteger(L, (lua_Integer)id);
  return 1;
}

/* rt:recall(query, {scope, session, project, limit, min_score,
 * max_tokens}) -> memories | nil, err, code */
static int l_recall(lua_State *L) {
  lrt *r = tg__lm_check_rt(L, 1);
  const char *fn = "rt:recall";
  static const char *const names[] = {"scope", "session", "project", "limit",
                                      "min_score", "max_tokens", NULL};
  luaL_checktype(L, 2, LUA_TSTRING);
  tg_recall_filter f = {tg__checknonul(L, 2, fn, "the query"), NULL, NULL,
                        NULL, 0, 0, 0};
  int o = tg__lm_copy_opts(L, 3, fn, names);
  f.scope = tg__lm_opt_string(L, o, fn, "scope");
  f.session = tg__lm_opt_string(L, o, fn, "session");
  f.project = tg__lm_opt_string(L, o, fn, "project");
  f.limit = (size_t)tg__lm_sopt_int(L, o, fn, "limit", 0);
  if (tg__lm_get_opt(L, o, "min_score") != LUA_TNIL) {
    int ok = 0;
    f.min_score = lua_tonumberx(L, -1, &ok);
    if (!ok || !(f.min_score >= 0 && f.min_score < HUGE_VAL))
      return luaL_error(L, "%s: 'min_score' must be a number >= 0", fn);
  }
  lua_pop(L, 1);
  f.max_tokens = (size_t)tg__lm_sopt_int(L, o, fn, "max_tokens", 0);
  if (!tg_runtime_store(r->rt)) return tg__lm_store_of(L, r), 3;
  char err[TG_ERRMSG] = "";
  cJSON *hits = tg_runtime_recall(r->rt, &f, err);
  if (!hits) return tg__lm_fail(L, err, "EINVAL");
  return tg__lm_push_json_result(L, hits, err);
}

const luaL_Reg tg__lm_session_methods[] = {
    {"session", l_session},
    {"end_session", l_end_session},
    {"message", l_message},
    {"sessions", l_sessions},
    {"search", l_search},
    {"remember", l_remember},
    {"recall", l_recall},
    {NULL, NULL}};
