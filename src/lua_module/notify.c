/*
 * notify.c — notifications (rt:notify, rt:dismiss, rt:notifications,
 * rt:on_notification) and the progress manager (rt:progress_*,
 * rt:on_progress_change): the host's subscribers and a progress item's
 * on_cancel are callbacks like on_event.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "chat.h"
#include "lua/luaraw.h"
#include "lua/luajson.h"
#include "lua/luaarg.h" /* after lauxlib: argument errors name the method */

static const char *const notify_opt_names[] = {"duration_ms", "action", NULL};
static const char *const action_opt_names[] = {"label", "command", NULL};

static int level_arg(lua_State *L, int idx) {
  static const char *const names[] = {"info", "success", "warning", "error",
                                      NULL};
  return luaL_checkoption(L, idx, NULL, names);
}

/* rt:notify(level, title [, message [, {duration_ms, action}]]) -> id |
 * nil, err */
static int l_notify(lua_State *L) {
  lrt *r = tg__lm_check_rt(L, 1);
  tg_notification n = {0};
  n.level = (tg_notify_level)level_arg(L, 2);
  luaL_checkstring(L, 3);
  n.title = tg__checknonul(L, 3, "rt:notify", "the title");
  n.message = tg__lm_opt_str_arg(L, 4, "rt:notify", "the message");
  int o = tg__lm_copy_opts(L, 5, "rt:notify", notify_opt_names);
  if (o) {
    lua_getfield(L, o, "duration_ms");
    lua_Number d = lua_isnil(L, -1) ? 0 : luaL_checknumber(L, -1);
    if (!(d >= 0 && d <= 9e15 && d == floor(d)))
      return luaL_error(L, "rt:notify: 'duration_ms' must be a whole number "
                           ">= 0");
    n.duration_ms = (uint64_t)d;
    lua_getfield(L, o, "action");
    int a = tg__lm_copy_opts(L, -1, "rt:notify action", action_opt_names);
    if (a) {
      n.action_label = tg__lm_opt_string(L, a, "rt:notify action", "label");
      n.action_command = tg__lm_opt_string(L, a, "rt:notify action", "command");
      if (!n.action_label)
        return luaL_error(L, "rt:notify action: 'label' is required");
    }
  }
  char err[TG_ERRMSG] = "";
  lua_State *prev = tg__lm_enter(r, L);
  int64_t id = tg_notify(tg__lm_runtime(r), &n, err);
  tg__lm_leave(r, L, prev);
  if (id < 0) return tg__lm_fail(L, err, "EINVAL");
  lua_pushinteger(L, (lua_Integer)id);
  return 1;
}

/* rt:dismiss(id) -> true | nil, err, "ENOENT" */
static int l_dismiss(lua_State *L) {
  lrt *r = tg__lm_check_rt(L, 1);
  lua_Integer id = luaL_checkinteger(L, 2);
  lua_State *prev = tg__lm_enter(r, L);
  int rc = tg_notify_dismiss(tg__lm_runtime(r), (int64_t)id);
  tg__lm_leave(r, L, prev);
  return tg__lm_ok_or_fail(L, rc, "no notification has that id (dismissed, "
                           "expired or dropped?)");
}

static int l_notifications(lua_State *L) {
  lrt *r = tg__lm_check_rt(L, 1);
  cJSON **list = tg__lm_box(L);
  lua_State *prev = tg__lm_enter(r, L); /* expiry tells subscribers */
  *list = tg_notifications(tg__lm_runtime(r));
  tg__lm_leave(r, L, prev);
  return tg__lm_push_slot(L, list, "rt:notifications");
}

/* A subscriber's call: handlers[1..last](change, one, list). */
typedef struct {
  lrt *r;
  const char *field, *change, *what;
  const cJSON *one, *list;
  int last;
} sub_arg;

static int sub_body(lua_State *L) {
  sub_arg *a = lua_touserdata(L, 1);
  tg__lm_push_state(L, a->r, a->field);
  int t = lua_gettop(L);
  for (int id = 1; id <= a->last; id++) {
    lua_rawgeti(L, t, id);
    if (!lua_isfunction(L, -1)) {
      lua_pop(L, 1);
      continue;
    }
    lua_pushstring(L, a->change);
    if (tg__json_push(L, a->one) < 0) lua_pushnil(L);
    if (tg__json_push(L, a->list) < 0) lua_newtable(L);
    tg__lm_callback(a->r, L, 3, 0, a->what);
  }
  return 0;
}

static void tell(lchat *c, const char *field, int last, const char *what,
                 const char *change, const cJSON *one, const cJSON *list) {
  lua_State *L = tg__lm_thread(c->r);
  if (!L) return; /* closing */
  sub_arg a = {c->r, field, change, what, one, list, last};
  tg__lm_protect(c->r, L, sub_body, &a);
}

static void notify_cb(tg_runtime *rt, const char *change, const cJSON *one,
                      const cJSON *list, void *ud) {
  lchat *c = ud;
  tell(c, NOTIFY_FIELD, c->next_notify, "on_notification", change, one, list);
}

static void progress_cb(tg_runtime *rt, const char *change, const cJSON *one,
                        const cJSON *list, void *ud) {
  lchat *c = ud;
  tell(c, PROGRESS_FIELD, c->next_progress, "on_progress_change", change, one,
       list);
}

/* Adds fn (at 2) to handlers `field` under the next id. */
static int add_sub(lua_State *L, const char *field, int *next) {
  lrt *r = tg__lm_check_rt(L, 1);
  luaL_checktype(L, 2, LUA_TFUNCTION);
  tg__lm_push_state(L, r, field);
  lua_pushvalue(L, 2);
  lua_rawseti(L, -2, *next + 1); /* may raise: count only once in */
  lua_pushinteger(L, ++*next);
  return 1;
}

static int l_on_notification(lua_State *L) {
  lrt *r = tg__lm_check_rt(L, 1);
  lchat *c = tg__lm_chat_of(L, r);
  if (!c->notify_sub) {
    int id = tg_notify_subscribe(tg__lm_runtime(r), notify_cb, c);
    if (id < 0) return luaL_error(L, "rt:on_notification: out of memory");
    c->notify_sub = id;
  }
  return add_sub(L, NOTIFY_FIELD, &c->next_notify);
}

static int remove_sub(lua_State *L, const char *field) {
  lrt *r = tg__lm_check_rt(L, 1);
  lua_Integer id = luaL_checkinteger(L, 2);
  if (id < 1 || id > INT32_MAX) return 0;
  tg__lm_push_state(L, r, field);
  lua_pushnil(L);
  lua_rawseti(L, -2, (int)id);
  return 0;
}

static int l_off_notification(lua_State *L) {
  return remove_sub(L, NOTIFY_FIELD);
}

/* ---- the progress manager ---------------------------------------------------- */

typedef struct {
  lrt *r;
  const char *id;
} cancel_arg;

static int cancel_body(lua_State *L) {
  cancel_arg *a = lua_touserdata(L, 1);
  tg__lm_push_state(L, a->r, CANCEL_FIELD);
  lua_getfield(L, -1, a->id);
  if (!lua_isfunction(L, -1)) return 0;
  lua_pushstring(L, a->id);
  tg__lm_callback(a->r, L, 1, 0, "on_cancel");
  return 0;
}

static void on_cancel(tg_runtime *rt, const char *id, void *ud) {
  lchat *c = ud;
  lua_State *L = tg__lm_thread(c->r);
  if (!L) return;
  cancel_arg a = {c->r, id};
  tg__lm_protect(c->r, L, cancel_body, &a);
}

static const char *const progress_opt_names[] = {"id", "label", "kind",
                                                 "total", "on_cancel", NULL};

/* rt:progress_start{id, label?, kind?, total?, on_cancel?} -> true |
 * nil, err, code */
static int l_progress_start(lua_State *L) {
  static const char *const kinds[] = {"indeterminate", "determinate", "steps",
                                      NULL};
  lrt *r = tg__lm_check_rt(L, 1);
  int o = tg__lm_copy_opts(L, 2, "rt:progress_start", progress_opt_names);
  if (!o) return luaL_error(L, "rt:progress_start: give {id = ..., ...}");
  tg_progress_spec s = {0};
  s.id = tg__lm_opt_string(L, o, "rt:progress_start", "id");
  s.label = tg__lm_opt_string(L, o, "rt:progress_start", "label");
  lua_getfield(L, o, "kind");
  s.kind = (tg_progress_kind)luaL_checkoption(L, -1, "indeterminate", kinds);
  lua_getfield(L, o, "total");
  s.total = lua_isnil(L, -1) ? 0 : (double)luaL_checknumber(L, -1);
  lua_getfield(L, o, "on_cancel");
  if (!lua_isnil(L, -1) && !lua_isfunction(L, -1))
    return luaL_error(L, "rt:progress_start: 'on_cancel' must be a function");
  int cancellable = lua_isfunction(L, -1);
  lchat *c = tg__lm_chat_of(L, r);
  if (cancellable) {
    s.cancel = on_cancel;
    s.ud = c;
  }
  char err[TG_ERRMSG] = "";
  lua_State *prev = tg__lm_enter(r, L);
  int rc = tg_progress_start(tg__lm_runtime(r), &s, err);
  tg__lm_leave(r, L, prev);
  if (rc == 0 && cancellable) {
    tg__lm_push_state(L, r, CANCEL_FIELD);
    lua_getfield(L, o, "on_cancel");
    lua_setfield(L, -2, s.id);
  }
  return tg__lm_ok_or_fail(L, rc, err);
}

static const char *id_arg(lua_State *L, const char *fn) {
  luaL_checkstring(L, 2);
  return tg__checknonul(L, 2, fn, "the id");
}

static int progress_end(lua_State *L, int ok) {
  lrt *r = tg__lm_check_rt(L, 1);
  const char *fn = ok ? "rt:progress_done" : "rt:progress_fail";
  const char *id = id_arg(L, fn);
  const char *msg = ok ? NULL : tg__lm_opt_str_arg(L, 3, fn, "the message");
  lua_State *prev = tg__lm_enter(r, L);
  int rc = ok ? tg_progress_done(tg__lm_runtime(r), id)
              : tg_progress_fail(tg__lm_runtime(r), id, msg);
  tg__lm_leave(r, L, prev);
  if (rc == 0) { /* its on_cancel goes with it */
    tg__lm_push_state(L, r, CANCEL_FIELD);
    lua_pushnil(L);
    lua_setfield(L, -2, id);
    lua_pop(L, 1);
  }
  return tg__lm_ok_or_fail(L, rc, "no progress item has that id");
}

static int l_progress_done(lua_State *L) { return progress_end(L, 1); }
static int l_progress_fail(lua_State *L) { return progress_end(L, 0); }

/* rt:progress_update(id, current [, message]) -> true | nil, err */
static int l_progress_update(lua_State *L) {
  lrt *r = tg__lm_check_rt(L, 1);
  const char *id = id_arg(L, "rt:progress_update");
  double cur = (double)luaL_checknumber(L, 3);
  const char *msg =
      tg__lm_opt_str_arg(L, 4, "rt:progress_update", "the message");
  lua_State *prev = tg__lm_enter(r, L);
  int rc = tg_progress_update(tg__lm_runtime(r), id, cur, msg);
  tg__lm_leave(r, L, prev);
  return tg__lm_ok_or_fail(L, rc,
                           rc == -EINVAL ? "current must be a number >= 0"
                                         : "no progress item has that id");
}

/* rt:progress_cancel(id) -> true | nil, err, "ENOENT" | "ENOTSUP" */
static int l_progress_cancel(lua_State *L) {
  lrt *r = tg__lm_check_rt(L, 1);
  const char *id = id_arg(L, "rt:progress_cancel");
  lua_State *prev = tg__lm_enter(r, L);
  int rc = tg_progress_cancel(tg__lm_runtime(r), id);
  tg__lm_leave(r, L, prev);
  return tg__lm_ok_or_fail(L, rc, rc == -ENOTSUP ? "the item is not cancellable"
                                          : "no progress item has that id");
}

static int l_progress(lua_State *L) {
  lrt *r = tg__lm_check_rt(L, 1);
  cJSON **list = tg__lm_box(L);
  *list = tg_progress_list(tg__lm_runtime(r));
  return tg__lm_push_slot(L, list, "rt:progress");
}

static int l_on_progress_change(lua_State *L) {
  lrt *r = tg__lm_check_rt(L, 1);
  lchat *c = tg__lm_chat_of(L, r);
  if (!c->progress_sub) {
    int id = tg_progress_subscribe(tg__lm_runtime(r), progress_cb, c);
    if (id < 0) return luaL_error(L, "rt:on_progress_change: out of memory");
    c->progress_sub = id;
  }
  return add_sub(L, PROGRESS_FIELD, &c->next_progress);
}

static int l_off_progress_change(lua_State *L) {
  return remove_sub(L, PROGRESS_FIELD);
}

const luaL_Reg tg__lm_notify_methods[] = {
    {"notify", l_notify},
    {"dismiss", l_dismiss},
    {"notifications", l_notifications},
    {"on_notification", l_on_notification},
    {"off_notification", l_off_notification},
    {"progress_start", l_progress_start},
    {"progress_update", l_progress_update},
    {"progress_done", l_progress_done},
    {"progress_fail", l_progress_fail},
    {"progress_cancel", l_progress_cancel},
    {"progress", l_progress},
    {"on_progress_change", l_on_progress_change},
    {"off_progress_change", l_off_progress_change},
    {NULL, NULL}};
