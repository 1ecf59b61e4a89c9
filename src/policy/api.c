/*
 * api.c — the policy side of `require "toolgate"`: tg.rule, tg.before_tool,
 * tg.after_tool, tg.tool, tg.on_event and the verdict helpers. Registration
 * functions only work while the generation loads. Every argument is read
 * and checked first (luaL_error longjmps past cleanup); then the
 * registration commits, taking only memory, all of which the generation
 * owns at once (register.c). Spec tables are read raw, like every value
 * policy code hands to C, and strictly: a key not in the function's list
 * below is an error (tg__check_keys), never ignored.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "api_changes.h"
#include "chat_side.h"
#include "api_memory.h"
#include "api_redact.h"
#include "api_paths.h"
#include "api_taint.h"
#include "sandbox_lib.h"
#include "generation.h"
#include "lua/luajson.h"
#include "lua/luaraw.h"
#include "base/schema.h"
#include "base/jsonnum.h"
#include "base/util.h"
#include "core/changes.h"
#include "base/glob.h"

#define TG_DEFAULT_PRIORITY 1000

/* The keys each spec table takes: one list per function. */
static const char *const rule_keys[] = {"name", "priority", "tools", "check",
                                        "fail", NULL};
static const char *const tool_keys[] = {
    "name", "description", "read_only", "schema", "run", "timeout_ms",
    "max_result_bytes", "retry", NULL};
static const char *const retry_keys[] = {"attempts", "initial_ms", "max_ms",
                                         "multiplier", "jitter", "retryable",
                                         NULL};

static tg_generation *gen_of(lua_State *L) {
  return (tg_generation *)lua_touserdata(L, lua_upvalueindex(1));
}

static tg_generation *loading_gen(lua_State *L, const char *fn) {
  tg_generation *g = gen_of(L);
  if (!g->loading)
    luaL_error(L, "tg.%s: registration is only possible while the policy "
                  "file loads (call it at the top level of the file)", fn);
  tg__reg_check(L, g); /* after a failed commit, nothing more registers */
  return g;
}

/* "file:line" where the function at idx was defined, in the generation's
 * memory; NULL when refused. */
static char *where_of(tg_generation *g, lua_State *L, int idx) {
  lua_Debug ar;
  lua_pushvalue(L, idx);
  lua_getinfo(L, ">S", &ar);
  char buf[300];
  snprintf(buf, sizeof buf, "%s:%d", ar.short_src, ar.linedefined);
  return tg__reg_strdup(g, buf);
}

static int field_type(lua_State *L, int t, const char *k, int type,
                      const char *fn, const char *what) {
  tg__rawgetfield(L, t, k);
  int ty = lua_type(L, -1);
  if (ty != LUA_TNIL && ty != type)
    luaL_error(L, "tg.%s: '%s' must be %s (got %s)", fn, k, what,
               luaL_typename(L, -1));
  return ty != LUA_TNIL;
}

/* Raises unless every key of the list at idx is one of 1..n: a name
 * under a key (tools = {exec = true}) would be ignored. */
static void check_list_keys(lua_State *L, int idx, size_t n, const char *fn) {
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    lua_pop(L, 1);
    int ty = lua_type(L, -1);
    lua_Number k = ty == LUA_TNUMBER ? lua_tonumber(L, -1) : 0;
    if (k >= 1 && k <= (lua_Number)n && k == (lua_Number)(size_t)k) continue;
    if (ty == LUA_TSTRING)
      luaL_error(L, "tg.%s: 'tools' must be a list of names (it has the key "
                    "'%s')", fn, lua_tostring(L, -1));
    luaL_error(L, "tg.%s: 'tools' must be a list of names (it has a %s key%s)",
               fn, luaL_typename(L, -1), ty == LUA_TNUMBER ? " past its end"
                                                           : "");
  }
}

/* A name with glob characters must be a well-formed glob: a broken one
 * would match nothing, in silence. */
static void check_glob_name(lua_State *L, int idx, const char *fn) {
  char why[TG_ERRMSG];
  const char *name = lua_tostring(L, idx);
  if (tg__tool_name_is_glob(name) && tg_glob_check(name, why, sizeof why) < 0)
    luaL_error(L, "tg.%s: %s", fn, why);
}

/* Checks a tools field: nil, a string, or a list of strings (read raw, so
 * no code runs between this check and copy_tools). Returns the count (0
 * for nil). */
static size_t check_tools(lua_State *L, int idx, const char *fn) {
  int ty = lua_type(L, idx);
  if (ty == LUA_TNIL) return 0;
  if (ty == LUA_TSTRING) {
    if (tg__has_nul(L, idx))
      luaL_error(L, "tg.%s: 'tools' must not contain a NUL byte", fn);
    check_glob_name(L, idx, fn);
    return 1;
  }
  if (ty != LUA_TTABLE)
    luaL_error(L, "tg.%s: 'tools' must be a tool name or a list of names "
                  "(got %s)", fn, luaL_typename(L, idx));
  size_t n = lua_rawlen(L, idx);
  check_list_keys(L, idx, n, fn);
  for (size_t i = 1; i <= n; i++) {
    lua_rawgeti(L, idx, (int)i);
    if (lua_type(L, -1) != LUA_TSTRING)
      luaL_error(L, "tg.%s: tools[%d] must be a string", fn, (int)i);
    if (tg__has_nul(L, -1))
      luaL_error(L, "tg.%s: tools[%d] must not contain a NUL byte", fn, (int)i);
    check_glob_name(L, -1, fn);
    lua_pop(L, 1);
  }
  if (n == 0) luaL_error(L, "tg.%s: 'tools' is an empty list", fn);
  return n;
}

/* Tool name i (0-based) of the tools value at idx checked by check_tools. */
static const char *tool_name_at(lua_State *L, int idx, size_t i) {
  if (lua_type(L, idx) == LUA_TSTRING) return lua_tostring(L, idx);
  lua_rawgeti(L, idx, (int)i + 1);
  const char *s = lua_tostring(L, -1); /* the list keeps it alive */
  lua_pop(L, 1);
  return s;
}

/* Copies the n names into a list the rule owns as it fills (entries not
 * yet copied are NULL). Returns -1 when memory is refused. */
static int copy_tools(tg_generation *g, lua_State *L, int idx, tg_rule *r,
                      size_t n) {
  r->tools = tg__reg_alloc(g, n * sizeof *r->tools);
  if (!r->tools) return -1;
  r->ntools = n;
  for (size_t i = 0; i < n; i++)
    if (!(r->tools[i] = tg__reg_strdup(g, tool_name_at(L, idx, i)))) return -1;
  return 0;
}

static int l_rule(lua_State *L) {
  tg_generation *g = loading_gen(L, "rule");
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_settop(L, 1);
  tg__check_keys(L, 1, "tg.rule", rule_keys);
  tg__rawgetfield(L, 1, "name");                                /* 2 */
  tg__rawgetfield(L, 1, "check");                               /* 3 */
  tg__rawgetfield(L, 1, "priority");                            /* 4 */
  tg__rawgetfield(L, 1, "tools");                               /* 5 */
  tg__rawgetfield(L, 1, "fail");                                /* 6 */
  if (lua_type(L, 2) != LUA_TSTRING || !*lua_tostring(L, 2))
    return luaL_error(L, "tg.rule: 'name' must be a non-empty string");
  tg__checknonul(L, 2, "tg.rule", "'name'");
  const char *name = lua_tostring(L, 2);
  if (!lua_isfunction(L, 3))
    return luaL_error(L, "tg.rule '%s': 'check' must be a function (got %s)",
                      name, luaL_typename(L, 3));
  int prio = TG_DEFAULT_PRIORITY;
  if (!lua_isnil(L, 4)) {
    int isnum = 0;
    lua_Number p = lua_tonumberx(L, 4, &isnum);
    int64_t v = 0;
    if (!isnum || tg__int_of_double((double)p, -2147483647, 2147483647, &v) < 0)
      return luaL_error(L, "tg.rule '%s': 'priority' must be an integer", name);
    prio = (int)v;
  }
  size_t ntools = check_tools(L, 5, "rule");
  const char *fail = lua_type(L, 6) == LUA_TNIL ? "closed"
                     : lua_type(L, 6) == LUA_TSTRING ? lua_tostring(L, 6) : "";
  if (strcmp(fail, "closed") && strcmp(fail, "open"))
    return luaL_error(L, "tg.rule '%s': 'fail' must be \"closed\" or \"open\"",
                      name);
  for (size_t i = 0; i < g->nrules; i++)
    if (strcmp(g->rules[i].name, name) == 0)
      return luaL_error(L, "tg.rule: a rule named '%s' already exists (%s)",
                        name, g->rules[i].where);
  tg__reg_commit_begin(L, g, "rule");
  if (tg__reg_reserve(g, (void **)&g->rules, &g->caprules, g->nrules,
                      sizeof *g->rules) < 0)
    return tg__reg_commit_fail(L, g);
  tg_rule *r = &g->rules[g->nrules];
  memset(r, 0, sizeof *r);
  r->order = g->nrules++; /* owned by g from here on */
  r->fn_ref = LUA_NOREF;
  r->priority = prio;
  r->fail_open = strcmp(fail, "open") == 0;
  if (!(r->name = tg__reg_strdup(g, name)) || !(r->where = where_of(g, L, 3)) ||
      (ntools && copy_tools(g, L, 5, r, ntools) < 0))
    return tg__reg_commit_fail(L, g);
  lua_pushvalue(L, 3);
  r->fn_ref = luaL_ref(L, LUA_REGISTRYINDEX); /* last: it may raise */
  tg__reg_commit_end(g);
  return 0;
}

static int add_hook(lua_State *L, int after) {
  const char *fn = after ? "after_tool" : "before_tool";
  tg_generation *g = loading_gen(L, fn);
  int nt = lua_type(L, 1);
  if (nt != LUA_TSTRING && nt != LUA_TTABLE)
    return luaL_error(L, "tg.%s: first argument must be a tool name, \"*\" "
                         "or a list of names", fn);
  size_t n = check_tools(L, 1, fn);
  luaL_checktype(L, 2, LUA_TFUNCTION);
  tg_hook **list = after ? &g->after : &g->before;
  size_t *cnt = after ? &g->nafter : &g->nbefore;
  size_t *cap = after ? &g->capafter : &g->capbefore;
  tg__reg_commit_begin(L, g, fn);
  size_t first = *cnt;
  for (size_t i = 0; i < n; i++) {
    if (tg__reg_reserve(g, (void **)list, cap, *cnt, sizeof **list) < 0)
      return tg__reg_commit_fail(L, g);
    tg_hook *h = &(*list)[(*cnt)++]; /* owned by g from here on */
    memset(h, 0, sizeof *h);
    h->fn_ref = LUA_NOREF;
    if (!(h->tool = tg__reg_strdup(g, tool_name_at(L, 1, i))) ||
        !(h->where = where_of(g, L, 2)))
      return tg__reg_commit_fail(L, g);
    h->kind = strcmp(h->tool, "*") == 0 ? TG_HOOK_ANY
              : tg__tool_name_is_glob(h->tool) ? TG_HOOK_GLOB : TG_HOOK_EXACT;
  }
  lua_pushvalue(L, 2);
  int ref = luaL_ref(L, LUA_REGISTRYINDEX); /* last: it may raise */
  for (size_t i = first; i < *cnt; i++) (*list)[i].fn_ref = ref;
  tg__reg_commit_end(g);
  return 0;
}

static int l_before_tool(lua_State *L) { return add_hook(L, 0); }
static int l_after_tool(lua_State *L) { return add_hook(L, 1); }

static uint64_t opt_ms(lua_State *L, int t, const char *k, const char *fn,
                       uint64_t dflt) {
  tg__rawgetfield(L, t, k);
  uint64_t v = dflt;
  if (!lua_isnil(L, -1)) {
    int isnum = 0;
    lua_Number n = lua_tonumberx(L, -1, &isnum);
    int64_t ms = 0;
    if (!isnum || tg__int_of_double((double)n, 0, TG_JSON_INT_MAX, &ms) < 0)
      luaL_error(L, "tg.%s: '%s' must be a whole number of milliseconds "
                    ">= 0", fn, k);
    v = (uint64_t)ms;
  }
  lua_pop(L, 1);
  return v;
}

static double opt_num(lua_State *L, int t, const char *k, const char *fn,
                      double dflt, double lo, double hi) {
  tg__rawgetfield(L, t, k);
  double v = dflt;
  if (!lua_isnil(L, -1)) {
    int isnum = 0;
    v = (double)lua_tonumberx(L, -1, &isnum);
    if (!isnum || !(v >= lo && v <= hi)) /* NaN fails both */
      luaL_error(L, "tg.%s: '%s' must be a number from %f to %f", fn, k,
                 (lua_Number)lo, (lua_Number)hi); /* %f: lua_pushfstring has no %g */
  }
  lua_pop(L, 1);
  return v;
}

/* Reads retry = {attempts, initial_ms, max_ms, multiplier, jitter,
 * retryable}. Leaves retryable (function or nil) on the stack. */
static void read_retry(lua_State *L, int t, tg_retry *r) {
  r->attempts = 1;
  r->initial_ms = 200;
  r->max_ms = 10000;
  r->multiplier = 2.0;
  r->jitter = 0.0;
  tg__rawgetfield(L, t, "retry");
  int rt = lua_gettop(L);
  if (lua_isnil(L, rt)) {
    lua_pushnil(L);
    lua_remove(L, rt);
    return;
  }
  if (!lua_istable(L, rt))
    luaL_error(L, "tg.tool: 'retry' must be a table {attempts=, initial_ms=, "
                  "max_ms=, multiplier=, jitter=, retryable=}");
  tg__check_keys(L, rt, "tg.tool retry", retry_keys);
  double attempts = opt_num(L, rt, "attempts", "tool retry", 1, 1, 100);
  if (attempts != (double)(int)attempts)
    luaL_error(L, "tg.tool retry: 'attempts' must be a whole number");
  r->attempts = (int)attempts;
  r->initial_ms = opt_ms(L, rt, "initial_ms", "tool retry", 200);
  r->max_ms = opt_ms(L, rt, "max_ms", "tool retry", 10000);
  r->multiplier = opt_num(L, rt, "multiplier", "tool retry", 2, 1, 100);
  r->jitter = opt_num(L, rt, "jitter", "tool retry", 0, 0, 1);
  field_type(L, rt, "retryable", LUA_TFUNCTION, "tool retry", "a function");
  lua_remove(L, rt);
}

/* Converts and compiles the schema at idx (*compiled borrows the JSON
 * returned); raises with the schema's problem. */
static cJSON *read_schema(lua_State *L, int idx, const char *tool,
                          tg_schema **compiled) {
  *compiled = NULL;
  if (lua_isnil(L, idx)) return NULL;
  if (!lua_istable(L, idx))
    luaL_error(L, "tg.tool '%s': 'schema' must be a table (a JSON Schema)", tool);
  char msg[TG_ERRMSG];
  cJSON *s = tg__json_from_lua(L, idx, msg, sizeof msg);
  if (!s) luaL_error(L, "tg.tool '%s': schema %s", tool, msg);
  if (!(*compiled = tg__schema_compile(s, 0, NULL, msg, sizeof msg))) {
    cJSON_Delete(s);
    luaL_error(L, "tg.tool '%s': %s", tool, msg);
  }
  return s;
}

static int l_tool(lua_State *L) {
  tg_generation *g = loading_gen(L, "tool");
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_settop(L, 1);
  tg__check_keys(L, 1, "tg.tool", tool_keys);
  tg__rawgetfield(L, 1, "name");                                /* 2 */
  const char *name = lua_tostring(L, 2);
  if (lua_type(L, 2) != LUA_TSTRING || !*name)
    return luaL_error(L, "tg.tool: 'name' must be a non-empty string");
  tg__checknonul(L, 2, "tg.tool", "'name'");
  tg__rawgetfield(L, 1, "run");                                 /* 3 */
  if (!lua_isfunction(L, 3))
    return luaL_error(L, "tg.tool '%s': 'run' must be a function (got %s)",
                      name, luaL_typename(L, 3));
  field_type(L, 1, "description", LUA_TSTRING, "tool", "a string"); /* 4 */
  field_type(L, 1, "read_only", LUA_TBOOLEAN, "tool", "a boolean"); /* 5 */
  tg__rawgetfield(L, 1, "schema");                              /* 6 */
  tg_tool t = {0};
  t.timeout_ms = opt_ms(L, 1, "timeout_ms", "tool", 0);
  t.max_result_bytes = (size_t)opt_ms(L, 1, "max_result_bytes", "tool", 0);
  read_retry(L, 1, &t.retry);                                   /* 7 */
  tg_schema *validator;
  cJSON *schema = read_schema(L, 6, name, &validator); /* last: allocates */
  /* no code of the policy runs from here on: the name stays unique */
  if (tg__core_find_ctool(g->core, name) || tg__generation_find_tool(g, name)) {
    tg_schema_free(validator);
    cJSON_Delete(schema);
    return luaL_error(L, "tg.tool: a tool named '%s' already exists", name);
  }
  tg__reg_commit_begin(L, g, "tool");
  tg_tool *tp = NULL;
  if (tg__reg_reserve(g, (void **)&g->tools, &g->captools, g->ntools,
                      sizeof *g->tools) < 0 ||
      !(tp = tg__reg_alloc(g, sizeof *tp))) {
    tg_schema_free(validator);
    cJSON_Delete(schema);
    return tg__reg_commit_fail(L, g);
  }
  *tp = t;
  tp->schema = schema;
  tp->validator = validator;
  tp->kind = TG_TOOL_LUA;
  tp->read_only = lua_toboolean(L, 5);
  tp->run_ref = tp->retryable_ref = LUA_NOREF;
  g->tools[g->ntools++] = tp; /* owned by g from here on */
  if (!(tp->name = tg__reg_strdup(g, name)) || !(tp->where = where_of(g, L, 3)) ||
      (lua_type(L, 4) == LUA_TSTRING &&
       !(tp->description = tg__reg_strdup(g, lua_tostring(L, 4)))))
    return tg__reg_commit_fail(L, g);
  lua_pushvalue(L, 3);
  tp->run_ref = luaL_ref(L, LUA_REGISTRYINDEX); /* last: they may raise */
  if (!lua_isnil(L, 7)) {
    lua_pushvalue(L, 7);
    tp->retryable_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  }
  tg__reg_commit_end(g);
  return 0;
}

static int l_on_event(lua_State *L) {
  tg_generation *g = loading_gen(L, "on_event");
  int fi = lua_isfunction(L, 1) ? 1 : 2;
  if (fi == 2 && lua_type(L, 1) != LUA_TSTRING)
    return luaL_error(L, "tg.on_event: use tg.on_event(fn) or "
                         "tg.on_event(\"call_end\", fn)");
  luaL_checktype(L, fi, LUA_TFUNCTION);
  if (fi == 2) tg__checknonul(L, 1, "tg.on_event", "the event type");
  if (fi == 2 && !tg_event_type_known(lua_tostring(L, 1)))
    return luaL_error(L, "tg.on_event: unknown event type '%s' (the types "
                         "are: %s)", lua_tostring(L, 1), tg_event_types());
  tg__reg_commit_begin(L, g, "on_event");
  if (tg__reg_reserve(g, (void **)&g->handlers, &g->caphandlers,
                      g->nhandlers, sizeof *g->handlers) < 0)
    return tg__reg_commit_fail(L, g);
  tg_handler *h = &g->handlers[g->nhandlers++]; /* owned by g from here on */
  memset(h, 0, sizeof *h);
  h->fn_ref = LUA_NOREF;
  if ((fi == 2 && !(h->type = tg__reg_strdup(g, lua_tostring(L, 1)))) ||
      !(h->where = where_of(g, L, fi)))
    return tg__reg_commit_fail(L, g);
  lua_pushvalue(L, fi);
  h->fn_ref = luaL_ref(L, LUA_REGISTRYINDEX); /* last: it may raise */
  tg__reg_commit_end(g);
  return 0;
}

/* tg.list_tools(fn): a hook over the tool list a front shows
 * (list_tools.c runs them). */
static int l_list_tools(lua_State *L) {
  tg_generation *g = loading_gen(L, "list_tools");
  luaL_checktype(L, 1, LUA_TFUNCTION);
  tg__reg_commit_begin(L, g, "list_tools");
  if (tg__reg_reserve(g, (void **)&g->listers, &g->caplisters, g->nlisters,
                      sizeof *g->listers) < 0)
    return tg__reg_commit_fail(L, g);
  tg_handler *h = &g->listers[g->nlisters++]; /* owned by g from here on */
  memset(h, 0, sizeof *h);
  h->fn_ref = LUA_NOREF;
  if (!(h->where = where_of(g, L, 1))) return tg__reg_commit_fail(L, g);
  lua_pushvalue(L, 1);
  h->fn_ref = luaL_ref(L, LUA_REGISTRYINDEX); /* last: it may raise */
  tg__reg_commit_end(g);
  return 0;
}

/* Verdicts are small tables {tg = kind, ...}: plain data a policy author
 * can print and compare. */
static int verdict(lua_State *L, const char *kind, const char *field,
                   int required) {
  if (required && lua_type(L, 1) != LUA_TSTRING)
    return luaL_error(L, "tg.%s: give the %s as a string", kind, field);
  if (!lua_isnoneornil(L, 1) && lua_type(L, 1) != LUA_TSTRING)
    return luaL_error(L, "tg.%s: the %s must be a string", kind, field);
  lua_createtable(L, 0, 2);
  lua_pushstring(L, kind);
  lua_setfield(L, -2, "tg");
  if (!lua_isnoneornil(L, 1)) {
    lua_pushvalue(L, 1);
    lua_setfield(L, -2, field);
  }
  return 1;
}

static int l_allow(lua_State *L) { return verdict(L, "allow", "reason", 0); }
static int l_deny(lua_State *L) { return verdict(L, "deny", "reason", 1); }
static int l_ask(lua_State *L) { return verdict(L, "ask", "prompt", 0); }
static int l_abort(lua_State *L) { return verdict(L, "abort", "reason", 1); }

static int l_args(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  if (!lua_isnoneornil(L, 2)) luaL_checkstring(L, 2);
  lua_createtable(L, 0, 3);
  lua_pushstring(L, "args");
  lua_setfield(L, -2, "tg");
  lua_pushvalue(L, 1);
  lua_setfield(L, -2, "args");
  if (!lua_isnoneornil(L, 2)) {
    lua_pushvalue(L, 2);
    lua_setfield(L, -2, "tool");
  }
  return 1;
}

static int l_result(lua_State *L) {
  lua_createtable(L, 0, 2);
  lua_pushstring(L, "result");
  lua_setfield(L, -2, "tg");
  lua_pushvalue(L, 1);
  lua_setfield(L, -2, "result");
  return 1;
}

static int l_array(lua_State *L) {
  if (lua_isnoneornil(L, 1)) lua_newtable(L);
  luaL_checktype(L, 1, LUA_TTABLE);
  tg__json_mark_array(L, 1);
  lua_settop(L, 1);
  return 1;
}

static int l_object(lua_State *L) {
  if (lua_isnoneornil(L, 1)) lua_newtable(L);
  luaL_checktype(L, 1, LUA_TTABLE);
  tg__json_mark_object(L, 1);
  lua_settop(L, 1);
  return 1;
}

static int l_json_encode(lua_State *L) {
  luaL_checkany(L, 1);
  return tg__json_encode_lua(L, 1); /* luajson.c: frees what it built, then raises */
}

static int l_json_decode(lua_State *L) {
  size_t len;
  const char *s = luaL_checklstring(L, 1, &len);
  return tg__json_decode_lua(L, s, len); /* the one parser (base/json.c) */
}

/* The data helpers alone, for test files (policy_tests.c): JSON shapes
 * and null, but nothing that registers. */
static const luaL_Reg data_api[] = {
    {"array", l_array},   {"object", l_object},
    {"json_encode", l_json_encode}, {"json_decode", l_json_decode},
    {"patch_files", tg__l_patch_files}, {"resolve_path", tg__l_resolve_path},
    {NULL, NULL}};

void tg__policy_data_api_open(lua_State *L) {
  lua_newtable(L);
  luaL_setfuncs(L, data_api, 0);
  tg__json_push_null(L);
  lua_setfield(L, -2, "null");
  lua_pushstring(L, TG_VERSION);
  lua_setfield(L, -2, "version");
  lua_getglobal(L, "package");
  lua_getfield(L, -1, "loaded");
  lua_pushvalue(L, -3);
  lua_setfield(L, -2, "toolgate");               /* loaded.toolgate = it */
  lua_pop(L, 3);
}

static const luaL_Reg api[] = {
    {"rule", l_rule},       {"before_tool", l_before_tool},
    {"after_tool", l_after_tool}, {"tool", l_tool},
    {"on_event", l_on_event}, {"allow", l_allow},
    {"list_tools", l_list_tools},
    {"deny", l_deny},       {"ask", l_ask},
    {"abort", l_abort},     {"args", l_args},
    {"result", l_result},   {"array", l_array},
    {"object", l_object},   {"json_encode", l_json_encode},
    {"json_decode", l_json_decode},
    {"on_file_change", tg__l_on_file_change}, /* api_changes.c */
    {"recent_changes", tg__l_recent_changes},
    /* the chat side (chat_api.c) */
    {"before_chat", tg__l_before_chat}, {"after_chat", tg__l_after_chat},
    {"route_model", tg__l_route_model}, {"budget", tg__l_budget},
    {"budget_status", tg__l_budget_status}, {"notify", tg__l_notify},
    {"redact", tg__l_redact},                   /* api_redact.c */
    {"patch_files", tg__l_patch_files},         /* api_paths.c */
    {"resolve_path", tg__l_resolve_path},
    {"taint", tg__l_taint},                     /* api_taint.c */
    {"session_taint", tg__l_session_taint},
    {NULL, NULL}};

void tg__policy_api_open(tg_generation *g) {
  lua_State *L = g->L;
  lua_pushlightuserdata(L, g);
  lua_setfield(L, LUA_REGISTRYINDEX, TG_GENERATION_KEY);
  lua_newtable(L);                               /* tg */
  lua_pushlightuserdata(L, g);
  luaL_setfuncs(L, api, 1);
  tg__json_push_null(L);
  lua_setfield(L, -2, "null");
  lua_pushnumber(L, (lua_Number)g->number);
  lua_setfield(L, -2, "generation");
  tg__policy_memory_open(L, g);                  /* api_memory.c */
  lua_setfield(L, -2, "memory");
  lua_pushstring(L, TG_VERSION);
  lua_setfield(L, -2, "version");
  /* policy code sees a read-only view: one file cannot replace what
   * another calls (tg.session_taint saying "clean" to every rule) */
  tg__sandbox_readonly(L, -1);
  lua_pushvalue(L, -1);
  lua_setfield(L, LUA_REGISTRYINDEX, TG_SANDBOX_MODULE);
  lua_getglobal(L, "package");
  lua_getfield(L, -1, "loaded");
  lua_pushvalue(L, -3);
  lua_setfield(L, -2, "toolgate");               /* loaded.toolgate = tg */
  lua_pop(L, 4);
}

/* ---- for the other files of the tg.* API (generation.h) ----------------- */

const char *tg__api_nearest(const char *name) {
  const char *best = NULL;
  size_t best_d = 3;
  for (const luaL_Reg *r = api; r->name; r++) {
    if (!strcasecmp(r->name, name)) return r->name;
    size_t d = tg__name_distance(name, r->name);
    if (d < best_d) best_d = d, best = r->name;
  }
  return best;
}

/* The field name of "attempt to call a nil value (field 'x')" (Lua 5.4)
 * or "attempt to call field 'x' (a nil value)" (LuaJIT) into name. */
static int called_nil_field(const char *err, char *name, size_t len) {
  static const char *const forms[][2] = {
      {"attempt to call a nil value (field '", "')"},
      {"attempt to call field '", "' (a nil value)"}};
  for (size_t i = 0; i < 2; i++) {
    const char *p = strstr(err, forms[i][0]);
    if (!p) continue;
    p += strlen(forms[i][0]);
    const char *q = strstr(p, forms[i][1]);
    if (!q || (size_t)(q - p) >= len) continue;
    memcpy(name, p, (size_t)(q - p));
    name[q - p] = '\0';
    return 1;
  }
  return 0;
}

void tg__api_suggest(char *err, size_t errlen) {
  char name[64];
  if (!called_nil_field(err, name, sizeof name)) return;
  const char *best = tg__api_nearest(name);
  size_t n = strlen(err);
  if (best && strcmp(best, name) && n < errlen)
    snprintf(err + n, errlen - n, " (toolgate has no tg.%s: did you mean "
             "tg.%s?)", name, best);
}

tg_generation *tg__api_loading(lua_State *L, const char *fn) {
  return loading_gen(L, fn);
}

char *tg__api_where(tg_generation *g, lua_State *L, int idx) {
  return where_of(g, L, idx);
}
