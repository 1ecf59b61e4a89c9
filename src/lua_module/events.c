/*
 * events.c — the host's event handlers (rt:on_event, rt:off_event) and
 * file-change handlers (rt:on_file_change, rt:off_file_change,
 * rt:recent_changes): one C subscription per runtime, the handlers in the
 * runtime's state table, run in registration order as callbacks.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lua_module.h"
#include "lua/luajson.h"
#include "lua/luaraw.h"
#include "lua/luaarg.h" /* after lauxlib: argument errors name the method */

typedef struct {
  lrt *r;
  const tg_event *ev;
} event_arg;

/* Handlers run in registration order, by id, up to the last id there was
 * when the event came: one a handler adds waits for the next event, one
 * it removes does not run. Indexing, not lua_next: lua_next over a table
 * changed meanwhile may raise. */
static int event_body(lua_State *L) {
  event_arg *a = lua_touserdata(L, 1);
  lrt *r = a->r;
  const tg_event *ev = a->ev;
  tg__lm_state(L, r, "handlers");
  int t = lua_gettop(L), last = r->next_handler;
  for (int id = 1; id <= last; id++) {
    lua_rawgeti(L, t, id); /* {fn, type} or nil */
    if (lua_istable(L, -1)) {
      lua_rawgeti(L, -1, 2);
      const char *want = lua_tostring(L, -1);
      int match = !want || strcmp(want, ev->type) == 0;
      lua_pop(L, 1);
      if (match) {
        lua_rawgeti(L, -1, 1);
        tg__json_push(L, ev->data);
        tg__lm_callback(r, L, 1, 0, "on_event");
      }
    }
    lua_pop(L, 1);
  }
  return 0;
}

static void event_cb(tg_runtime *rt, const tg_event *ev, void *ud) {
  lrt *r = ud;
  if (!r->cur_L) return; /* events during close: nobody is listening */
  event_arg a = {r, ev};
  tg__lm_protect(r, r->cur_L, event_body, &a);
}

static void ensure_subscribed(lrt *r) {
  if (!r->sub_id) r->sub_id = tg_events_subscribe(r->rt, event_cb, r);
}

/* Adds {fn, filter} (filter: an event type or a glob; 0: none) to the
 * state's list `list` under a new id, and returns the id. */
static int add_handler(lua_State *L, lrt *r, const char *list, int fn,
                       int filter, int *counter) {
  tg__lm_state(L, r, list);
  lua_createtable(L, 2, 0);
  lua_pushvalue(L, fn);
  lua_rawseti(L, -2, 1);
  if (filter) {
    lua_pushvalue(L, filter);
    lua_rawseti(L, -2, 2);
  }
  lua_rawseti(L, -2, *counter + 1); /* may raise: count only once in */
  int id = ++*counter;
  lua_pushinteger(L, id);
  return 1;
}

/* rt:off_x(id): drops the handler from the state's list `list`. An id
 * that was never given out is ignored (not cut to some other id). */
static int remove_handler(lua_State *L, const char *list, int counter) {
  lrt *r = tg__lm_check_rt(L, 1);
  lua_Integer id = luaL_checkinteger(L, 2);
  if (id < 1 || id > counter) return 0;
  tg__lm_state(L, r, list);
  lua_pushnil(L);
  lua_rawseti(L, -2, (int)id);
  return 0;
}

/* rt:on_event([type,] fn) -> id */
static int l_on_event(lua_State *L) {
  lrt *r = tg__lm_check_rt(L, 1);
  int fi = lua_isfunction(L, 2) ? 2 : 3;
  if (fi == 3) {
    luaL_checkstring(L, 2);
    const char *type = tg__checknonul(L, 2, "rt:on_event", "the event type");
    if (!tg_event_type_known(type))
      return luaL_error(L, "rt:on_event: unknown event type '%s' (the types "
                           "are: %s)", type, tg_event_types());
  }
  luaL_checktype(L, fi, LUA_TFUNCTION);
  ensure_subscribed(r);
  return add_handler(L, r, "handlers", fi, fi == 3 ? 2 : 0,
                     &r->next_handler);
}

static int l_off_event(lua_State *L) {
  return remove_handler(L, "handlers", tg__lm_check_rt(L, 1)->next_handler);
}

/* ---- file changes ------------------------------------------------------------ */

typedef struct {
  lrt *r;
  const tg_file_change *ch;
} change_arg;

/* Each handler's glob is matched here, handlers in registration order
 * (indexing, as for events). */
static int change_body(lua_State *L) {
  change_arg *a = lua_touserdata(L, 1);
  lrt *r = a->r;
  tg__lm_state(L, r, "file_handlers");
  int t = lua_gettop(L), last = r->next_file_handler;
  for (int id = 1; id <= last; id++) {
    lua_rawgeti(L, t, id); /* {fn, glob} or nil */
    if (lua_istable(L, -1)) {
      lua_rawgeti(L, -1, 2);
      int match = tg_glob_match(lua_tostring(L, -1), a->ch->path);
      lua_pop(L, 1);
      if (match) {
        lua_rawgeti(L, -1, 1);
        tg__json_push(L, a->ch->json);
        tg__lm_callback(r, L, 1, 0, "on_file_change");
      }
    }
    lua_pop(L, 1);
  }
  return 0;
}

/* One C subscription for every path. */
static void change_cb(tg_runtime *rt, const tg_file_change *ch, void *ud) {
  lrt *r = ud;
  if (!r->cur_L) return; /* closing */
  change_arg a = {r, ch};
  tg__lm_protect(r, r->cur_L, change_body, &a);
}

/* rt:on_file_change(glob, fn) -> id */
static int l_on_file_change(lua_State *L) {
  lrt *r = tg__lm_check_rt(L, 1);
  luaL_checkstring(L, 2);
  const char *glob = tg__checknonul(L, 2, "rt:on_file_change", "the glob");
  luaL_checktype(L, 3, LUA_TFUNCTION);
  char why[TG_ERRMSG];
  if (tg_glob_check(glob, why, sizeof why) < 0)
    return luaL_error(L, "rt:on_file_change: %s", why);
  if (!r->change_sub) r->change_sub = tg_changes_subscribe(r->rt, "**", change_cb, r);
  if (r->change_sub < 0) {
    r->change_sub = 0;
    return luaL_error(L, "rt:on_file_change: out of memory");
  }
  return add_handler(L, r, "file_handlers", 3, 2, &r->next_file_handler);
}

static int l_off_file_change(lua_State *L) {
  return remove_handler(L, "file_handlers",
                        tg__lm_check_rt(L, 1)->next_file_handler);
}

/* rt:recent_changes([n]) -> list of changes, oldest first */
static int l_recent_changes(lua_State *L) {
  lrt *r = tg__lm_check_rt(L, 1);
  lua_Number n = luaL_optnumber(L, 2, 0);
  /* checked as a double first: casting NaN or 1e300 is undefined */
  if (!(n >= 0 && n == floor(n)))
    return luaL_argerror(L, 2, "a whole number >= 0 expected");
  size_t want = n > 1e9 ? (size_t)1e9 : (size_t)n; /* more than are kept */
  json_box *b = tg__lm_new_box(L);
  b->j[0] = tg_changes_recent(r->rt, want);
  if (!b->j[0] || tg__json_push(L, b->j[0]) < 0)
    return luaL_error(L, "rt:recent_changes: out of memory");
  tg__lm_box_clear(b);
  return 1;
}

const luaL_Reg tg__lm_event_methods[] = {
    {"on_event", l_on_event},
    {"off_event", l_off_event},
    {"on_file_change", l_on_file_change},
    {"off_file_change", l_off_file_change},
    {"recent_changes", l_recent_changes},
    {NULL, NULL}};
