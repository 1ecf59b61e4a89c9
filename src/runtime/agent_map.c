/*
 * agent_map.c — an agent's tool call as toolgate's, and a rewrite back:
 * the Lua library's toolgate.agent (map, unmap), run in the current
 * generation's own state, so that a policy file can extend the mapping
 * tables (they are that generation's modules) and the mapping runs under
 * the policies' time limit and memory cap like any policy code. In the
 * runtime, not the hook front, because an agent's call is read this one
 * way wherever it comes from: a hook event (src/agent/answer.c), a
 * `toolgate explain --event`, a `toolgate test` case that names an
 * agent's tool (policy_test.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "hook_services.h"
#include "base/util.h"
#include "lua/luajson.h"
#include "lua/luaraw.h"

/* fn, args... -> require("toolgate.agent")[fn](args...), two results. */
static int l_agent_call(lua_State *L) {
  int n = lua_gettop(L);
  lua_getglobal(L, "require");
  lua_pushliteral(L, "toolgate.agent");
  lua_call(L, 1, 1);
  if (!lua_istable(L, -1))
    return luaL_error(L, "require \"toolgate.agent\" did not give a table");
  lua_pushvalue(L, 1);
  lua_rawget(L, -2);
  if (!lua_isfunction(L, -1))
    return luaL_error(L, "toolgate.agent.%s is not a function",
                      lua_tostring(L, 1));
  for (int i = 2; i <= n; i++) lua_pushvalue(L, i);
  lua_call(L, n - 1, 2);
  return 2;
}

/* Calls agent[fn] with nargs values already pushed above the function
 * and its name (pushed by the caller through push_call), in the policy
 * sandbox. Leaves two results on success (0); -1 with the error in err
 * (*raised set). */
static int run(tg_runtime *rt, int nargs, int *raised, char *err,
               size_t errlen) {
  if (tg__hooksvc_policy_pcall(rt, nargs + 1, 2,
                               "the agent mapping (toolgate.agent)", err,
                               errlen) == 0)
    return 0;
  *raised = 1;
  return -1;
}

/* The current generation's state, and how big a JSON value read from it
 * may be. */
typedef struct {
  lua_State *L;
  size_t max_json;
} policy_state;

static void push_call(lua_State *L, const char *fn, const char *agent) {
  lua_pushcfunction(L, l_agent_call);
  lua_pushstring(L, fn);
  lua_pushstring(L, agent);
}

/* The `nil, why` answer at -2/-1 into err. */
static void refused(lua_State *L, const char *what, char *err, size_t errlen) {
  const char *why = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
  snprintf(err, errlen, "%s: %s", what, why ? why : "no reason given");
}

static cJSON *json_at(const policy_state *g, int idx, char *err,
                      size_t errlen) {
  char why[300];
  cJSON *j = tg__json_from_lua_max(g->L, idx, g->max_json, why, sizeof why);
  if (!j) snprintf(err, errlen, "%s", why);
  return j;
}

/* m->names from the list of strings at idx (others are left out; at
 * most 16). -1: out of memory. */
static int read_names(lua_State *L, int idx, tg_agent_call *m) {
  enum { MAX_NAMES = 16 };
  m->names = calloc(MAX_NAMES + 1, sizeof *m->names);
  if (!m->names) return -1;
  size_t n = 0;
  for (lua_Integer i = 1; i <= MAX_NAMES; i++) {
    lua_rawgeti(L, idx, i);
    if (lua_type(L, -1) == LUA_TSTRING) {
      size_t len;
      const char *s = lua_tolstring(L, -1, &len);
      if (len && strlen(s) == len && !(m->names[n++] = tg__strdup(s))) {
        lua_pop(L, 1);
        return -1;
      }
    }
    lua_pop(L, 1);
  }
  return 0;
}

static int read_mapped(const policy_state *g, int t, tg_agent_call *m, char *err,
                       size_t errlen) {
  lua_State *L = g->L;
  const char *tool = tg__rawgetstring(L, t, "tool");
  if (!tool || !*tool) {
    snprintf(err, errlen, "the agent mapping gave no tool name");
    return -1;
  }
  m->tool = tg__strdup(tool);
  const char *server = tg__rawgetstring(L, t, "server");
  if (server && *server) m->server = tg__strdup(server);
  tg__rawgetfield(L, t, "read_only");
  m->read_only = lua_toboolean(L, -1);
  lua_pop(L, 1);
  tg__rawgetfield(L, t, "mapped");
  m->mapped = lua_toboolean(L, -1);
  lua_pop(L, 1);
  tg__rawgetfield(L, t, "args");
  m->args = lua_istable(L, -1) ? json_at(g, lua_gettop(L), err, errlen) : NULL;
  lua_pop(L, 1);
  if (!m->args || !cJSON_IsObject(m->args)) {
    if (m->args) snprintf(err, errlen, "the agent mapping's args are not a "
                          "JSON object");
    else if (!*err) snprintf(err, errlen, "the agent mapping gave no args");
    return -1;
  }
  tg__rawgetfield(L, t, "names");
  if (lua_istable(L, -1) && read_names(L, lua_gettop(L), m) < 0) {
    lua_pop(L, 1);
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  lua_pop(L, 1);
  tg__rawgetfield(L, t, "paths");
  if (lua_istable(L, -1)) {
    m->paths = json_at(g, lua_gettop(L), err, errlen);
    if (m->paths && !cJSON_IsArray(m->paths)) { /* {} is no list of paths */
      cJSON_Delete(m->paths);
      m->paths = NULL;
    }
  }
  lua_pop(L, 1);
  if (tg__rawgetfield(L, t, "result") != LUA_TNIL) {
    m->result = json_at(g, lua_gettop(L), err, errlen);
    if (!m->result) {
      lua_pop(L, 1);
      return -1;
    }
  }
  lua_pop(L, 1);
  return m->tool ? 0 : -1;
}

int tg__agent_map(tg_runtime *rt, const char *agent, const cJSON *event,
                 tg_agent_call *out, int *raised, char *err, size_t errlen) {
  policy_state ps, *g = &ps;
  memset(out, 0, sizeof *out);
  *raised = 0;
  err[0] = '\0';
  if (!(ps.L = tg__hooksvc_policy_state(rt, &ps.max_json))) {
    snprintf(err, errlen, "no policies are loaded");
    return -1;
  }
  lua_State *L = ps.L;
  int top = lua_gettop(L);
  push_call(L, "map", agent);
  if (tg__json_push(L, event) < 0) {
    lua_settop(L, top);
    snprintf(err, errlen, "the event does not fit in the policies' memory");
    return -1;
  }
  if (run(rt, 2, raised, err, errlen) < 0) {
    lua_settop(L, top);
    return -1;
  }
  int rc = -1;
  if (!lua_istable(L, -2))
    refused(L, "the agent's tool call cannot be mapped", err, errlen);
  else
    rc = read_mapped(g, lua_gettop(L) - 1, out, err, errlen);
  lua_settop(L, top);
  if (rc < 0) tg__agent_call_clear(out);
  return rc;
}

cJSON *tg__agent_unmap(tg_runtime *rt, const char *agent,
                      const cJSON *event, const char *tool,
                      const cJSON *args, char *err, size_t errlen) {
  policy_state ps, *g = &ps;
  err[0] = '\0';
  if (!(ps.L = tg__hooksvc_policy_state(rt, &ps.max_json))) {
    snprintf(err, errlen, "no policies are loaded");
    return NULL;
  }
  lua_State *L = ps.L;
  int top = lua_gettop(L), raised = 0;
  push_call(L, "unmap", agent);
  int pushed = tg__json_push(L, event);
  if (pushed == 0) {
    lua_pushstring(L, tool);
    pushed = tg__json_push(L, args);
  }
  if (pushed < 0) {
    lua_settop(L, top);
    snprintf(err, errlen, "the call does not fit in the policies' memory");
    return NULL;
  }
  if (run(rt, 4, &raised, err, errlen) < 0) {
    lua_settop(L, top);
    return NULL;
  }
  cJSON *in = NULL;
  if (!lua_istable(L, -2)) {
    refused(L, "the rewritten call cannot be given back to the agent", err,
            errlen);
  } else {
    in = json_at(g, lua_gettop(L) - 1, err, errlen);
    if (in && !cJSON_IsObject(in)) {
      cJSON_Delete(in);
      in = NULL;
      snprintf(err, errlen, "the agent mapping's input is not a JSON object");
    }
  }
  lua_settop(L, top);
  return in;
}

int tg__agent_which(tg_runtime *rt, const char *tool, char *agent,
                    size_t len, char *err, size_t errlen) {
  lua_State *L = tg__hooksvc_policy_state(rt, NULL);
  agent[0] = '\0';
  err[0] = '\0';
  if (!L) {
    snprintf(err, errlen, "no policies are loaded");
    return -1;
  }
  int top = lua_gettop(L), raised = 0;
  lua_pushcfunction(L, l_agent_call);
  lua_pushliteral(L, "which");
  lua_pushstring(L, tool);
  if (run(rt, 1, &raised, err, errlen) < 0) {
    lua_settop(L, top);
    return -1;
  }
  if (lua_type(L, -2) == LUA_TSTRING)
    snprintf(agent, len, "%s", lua_tostring(L, -2));
  lua_settop(L, top);
  return 0;
}

void tg__agent_call_clear(tg_agent_call *m) {
  free(m->tool);
  free(m->server);
  for (size_t i = 0; m->names && m->names[i]; i++) free(m->names[i]);
  free(m->names);
  cJSON_Delete(m->args);
  cJSON_Delete(m->paths);
  cJSON_Delete(m->result);
  memset(m, 0, sizeof *m);
}

cJSON *tg__agent_metadata(const char *agent, const cJSON *event,
                          const tg_agent_call *m) {
  static const char *const fields[] = {"cwd", "permission_mode", "tool_use_id",
                                       "model", "turn_id", "session_id", NULL};
  const char *ev_name = cJSON_GetStringValue(
      cJSON_GetObjectItemCaseSensitive(event, "hook_event_name"));
  const char *tool = cJSON_GetStringValue(
      cJSON_GetObjectItemCaseSensitive(event, "tool_name"));
  cJSON *md = cJSON_CreateObject();
  cJSON_AddStringToObject(md, "agent", agent);
  if (ev_name) cJSON_AddStringToObject(md, "agent_event", ev_name);
  if (tool) cJSON_AddStringToObject(md, "agent_tool", tool);
  cJSON_AddItemToObject(md, "agent_input",
                        cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(event, "tool_input"), 1));
  if (m->paths) cJSON_AddItemToObject(md, "agent_paths", cJSON_Duplicate(m->paths, 1));
  /* the project its approvals are remembered for: the session's folder,
   * by its real path (as `toolgate approvals grant` names it) */
  char *project = tg__hooksvc_project(cJSON_GetStringValue(
      cJSON_GetObjectItemCaseSensitive(event, "cwd")));
  if (project) cJSON_AddStringToObject(md, "agent_project", project);
  free(project);
  for (int i = 0; fields[i]; i++) {
    const char *v = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(event, fields[i]));
    if (!v) continue;
    char k[64];
    snprintf(k, sizeof k, "agent_%s", fields[i]);
    cJSON_AddStringToObject(md, k, v);
  }
  return md;
}

void tg__agent_strategy(tg_call_strategy *how, const tg_agent_call *m) {
  how->own_tool = m->tool;
  how->own_tool_read_only = m->read_only;
  how->own_tool_server = m->server;
  how->agent_names = (const char *const *)m->names;
  how->keep_metadata = 1;
}

cJSON *tg__agent_event(const char *tool, const cJSON *input,
                       const cJSON *response, const char *cwd,
                       const char *session) {
  cJSON *ev = cJSON_CreateObject();
  cJSON_AddStringToObject(ev, "hook_event_name",
                          response ? "PostToolUse" : "PreToolUse");
  cJSON_AddStringToObject(ev, "tool_name", tool);
  cJSON_AddItemToObject(ev, "tool_input", input ? cJSON_Duplicate(input, 1)
                                                : cJSON_CreateObject());
  if (response)
    cJSON_AddItemToObject(ev, "tool_response", cJSON_Duplicate(response, 1));
  char here[4096];
  if (!cwd && getcwd(here, sizeof here)) cwd = here;
  if (cwd) cJSON_AddStringToObject(ev, "cwd", cwd);
  if (session) cJSON_AddStringToObject(ev, "session_id", session);
  return ev;
}
