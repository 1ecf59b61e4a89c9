/*
 * box.c — the JSON box: a userdata holding the cJSON values a method
 * builds before C takes them, so that a raise on the way (a bad option,
 * out of memory) frees them through the box's __gc instead of leaking
 * them. Every method that converts JSON goes through it.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lua_module.h"
#include "lua/luaraw.h"
#include "lua/luajson.h"

void tg__lm_box_clear(json_box *b) {
  for (size_t i = 0; i < sizeof b->j / sizeof *b->j; i++) {
    cJSON_Delete(b->j[i]);
    b->j[i] = NULL;
  }
}

static int box_gc(lua_State *L) {
  tg__lm_box_clear(luaL_checkudata(L, 1, BOX_MT));
  return 0;
}

/* A new empty box, left on the stack. */
json_box *tg__lm_new_box(lua_State *L) {
  json_box *b = lua_newuserdatauv(L, sizeof *b, 0);
  memset(b, 0, sizeof *b);
  luaL_setmetatable(L, BOX_MT);
  return b;
}

/* The box's metatable: its __gc frees what a raise left in it. */
void tg__lm_box_open(lua_State *L) {
  luaL_newmetatable(L, BOX_MT);
  lua_pushcfunction(L, box_gc);
  lua_setfield(L, -2, "__gc");
  lua_pop(L, 1);
}

cJSON **tg__lm_box(lua_State *L) { return &tg__lm_new_box(L)->j[0]; }

/* The box's job for one value: pushes v (NULL: nil) and frees it; raises
 * "fn: out of memory" when it cannot. */
static void push_json(lua_State *L, cJSON *v, const char *fn) {
  json_box *b = tg__lm_new_box(L);
  b->j[0] = v;
  if (!v) {
    lua_pop(L, 1);
    lua_pushnil(L);
    return;
  }
  if (tg__json_push(L, v) < 0) luaL_error(L, "%s: out of memory", fn);
  tg__lm_box_clear(b);
  lua_remove(L, -2); /* the box */
}

/* Pushes the value a box's slot holds (nil: none) and empties the slot. */
int tg__lm_push_slot(lua_State *L, cJSON **slot, const char *fn) {
  cJSON *v = *slot;
  *slot = NULL; /* push_json takes it */
  if (!v) return luaL_error(L, "%s: out of memory", fn);
  push_json(L, v, fn);
  return 1;
}
