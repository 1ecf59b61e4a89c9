/*
 * new_options.c — toolgate.new's options read into a tg_config: every one
 * checked, with a message that names it, before anything is taken (a
 * raise then leaks nothing). Its own file: the option list is long and
 * grows with the runtime.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lua_module.h"
#include "lua/luaraw.h"
#include "lua/luaarg.h" /* after lauxlib: argument errors name the method */

const char *const tg__lm_new_opt_names[] = {
    "policies", "session", "default_verdict", "timeout_ms",
    "approval_timeout_ms", "progress_interval_ms", "seed", "max_args_bytes",
    "approve", "watch", "workspace", "file_max_bytes", "builtin_tools",
    "exec_output_cap", "kill_grace_ms", "trusted_policies",
    "policy_time_limit_ms", "policy_memory_cap",
    "db", "audit_args_max", "audit_result_max", "project",
    "models", /* the chat side: chat.c */
    NULL};

static uint64_t opt_u64(lua_State *L, int o, const char *k, uint64_t dflt) {
  uint64_t v = dflt;
  if (tg__lm_get_opt(L, o, k) != LUA_TNIL) {
    int ok = 0;
    lua_Number n = lua_tonumberx(L, -1, &ok);
    if (!ok || !(n >= 0 && n <= 9e15)) /* so: NaN too, before the cast */
      luaL_error(L, "toolgate.new: '%s' must be a number >= 0", k);
    v = (uint64_t)n;
  }
  lua_pop(L, 1);
  return v;
}

static int opt_bool(lua_State *L, int o, const char *k, int dflt) {
  int ty = tg__lm_get_opt(L, o, k), v = dflt;
  if (ty != LUA_TNIL && ty != LUA_TBOOLEAN)
    luaL_error(L, "toolgate.new: '%s' must be a boolean (got %s)", k,
               luaL_typename(L, -1));
  if (ty == LUA_TBOOLEAN) v = lua_toboolean(L, -1);
  lua_pop(L, 1);
  return v;
}

static tg_verdict opt_verdict(lua_State *L, int o) {
  tg__lm_get_opt(L, o, "default_verdict");
  tg_verdict v = TG_VERDICT_ASK;
  if (tg__lm_is_str(L, -1, "allow")) v = TG_VERDICT_ALLOW;
  else if (tg__lm_is_str(L, -1, "deny")) v = TG_VERDICT_DENY;
  else if (!lua_isnil(L, -1) && !tg__lm_is_str(L, -1, "ask"))
    luaL_error(L, "toolgate.new: 'default_verdict' must be \"ask\", "
                  "\"allow\" or \"deny\" (got %s)",
               lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1)
                                              : luaL_typename(L, -1));
  lua_pop(L, 1);
  return v;
}

/* workspace = "dir" or {"dir", ...} -> a NULL-terminated array in a
 * userdata left on the stack, over a table of the strings, also left
 * there: ours, so they stay alive however the host's table changes (the
 * runtime copies the roots). NULL when absent. */
static const char *const *opt_roots(lua_State *L, int o) {
  int ty = tg__lm_get_opt(L, o, "workspace"), v = lua_gettop(L);
  if (ty == LUA_TNIL) {
    lua_pop(L, 1);
    return NULL;
  }
  if (ty != LUA_TSTRING && ty != LUA_TTABLE)
    luaL_error(L, "toolgate.new: 'workspace' must be a directory or a list "
                  "of directories (got %s)", luaL_typename(L, -1));
  size_t n = ty == LUA_TSTRING ? 1 : lua_rawlen(L, v);
  if (n > 4096) luaL_error(L, "toolgate.new: 'workspace' lists more than "
                              "4096 directories");
  lua_createtable(L, (int)n, 0);
  int keep = lua_gettop(L);
  const char **roots = lua_newuserdatauv(L, (n + 1) * sizeof *roots, 0);
  for (size_t i = 0; i < n; i++) {
    if (ty == LUA_TTABLE) lua_rawgeti(L, v, (int)i + 1);
    else lua_pushvalue(L, v);
    if (lua_type(L, -1) != LUA_TSTRING)
      luaL_error(L, "toolgate.new: workspace[%d] must be a string", (int)i + 1);
    roots[i] = tg__checknonul(L, -1, "toolgate.new", "a workspace directory");
    lua_rawseti(L, keep, (int)i + 1);
  }
  roots[n] = NULL;
  lua_remove(L, v); /* leaves the strings and the array */
  return roots;
}

/* db = "path" | ":memory:" | false (no storage) | nil (the default file);
 * audit_args_max, audit_result_max; project = "dir". */
static void read_storage_config(lua_State *L, int o, tg_config *cfg) {
  int ty = tg__lm_get_opt(L, o, "db");
  if (ty == LUA_TBOOLEAN && !lua_toboolean(L, -1)) {
    cfg->db_off = 1;
  } else if (ty != LUA_TNIL && ty != LUA_TSTRING) {
    luaL_error(L, "toolgate.new: 'db' must be a file name, \":memory:\" "
                  "or false (got %s)", lua_type(L, -1) == LUA_TBOOLEAN
                                           ? "true" : luaL_typename(L, -1));
  }
  lua_pop(L, 1);
  if (!cfg->db_off) cfg->db = tg__lm_opt_string(L, o, "toolgate.new", "db");
  cfg->audit_args_max = (size_t)opt_u64(L, o, "audit_args_max", 0);
  cfg->audit_result_max = (size_t)opt_u64(L, o, "audit_result_max", 0);
  cfg->project = tg__lm_opt_string(L, o, "toolgate.new", "project");
}

/* Reads every option before anything is taken: luaL_error longjmps. */
void tg__lm_read_config(lua_State *L, int o, tg_config *cfg) {
  tg_config_init(cfg);
  if (!o) return;
  cfg->policies_dir = tg__lm_opt_string(L, o, "toolgate.new", "policies");
  cfg->session = tg__lm_opt_string(L, o, "toolgate.new", "session");
  cfg->default_verdict = opt_verdict(L, o);
  cfg->timeout_ms = opt_u64(L, o, "timeout_ms", cfg->timeout_ms);
  cfg->approval_timeout_ms =
      opt_u64(L, o, "approval_timeout_ms", cfg->approval_timeout_ms);
  cfg->progress_interval_ms =
      opt_u64(L, o, "progress_interval_ms", cfg->progress_interval_ms);
  cfg->seed = opt_u64(L, o, "seed", 0);
  cfg->max_args_bytes = (size_t)opt_u64(L, o, "max_args_bytes", cfg->max_args_bytes);
  cfg->exec_output_cap =
      (size_t)opt_u64(L, o, "exec_output_cap", cfg->exec_output_cap);
  cfg->kill_grace_ms = opt_u64(L, o, "kill_grace_ms", cfg->kill_grace_ms);
  cfg->file_max_bytes = (size_t)opt_u64(L, o, "file_max_bytes", 0);
  cfg->workspace_roots = opt_roots(L, o);
  cfg->builtin_tools = opt_bool(L, o, "builtin_tools", 1);
  cfg->watch_policies = opt_bool(L, o, "watch", 0);
  cfg->trusted_policies = opt_bool(L, o, "trusted_policies", 0);
  uint64_t limit = opt_u64(L, o, "policy_time_limit_ms", 0);
  if (limit > UINT32_MAX)
    luaL_error(L, "toolgate.new: 'policy_time_limit_ms' is at most %u",
               (unsigned)UINT32_MAX);
  cfg->policy_time_limit_ms = (uint32_t)limit;
  cfg->policy_memory_cap = (size_t)opt_u64(L, o, "policy_memory_cap", 0);
  read_storage_config(L, o, cfg);
  if (tg__lm_get_opt(L, o, "approve") != LUA_TNIL && !lua_isfunction(L, -1) &&
      tg__lm_approve_mode(L, -1) < 0)
    tg__lm_raise_bad_approver(L, "toolgate.new", lua_gettop(L));
  lua_pop(L, 1);
}
