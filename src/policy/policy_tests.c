/*
 * policy_tests.c — loading the test files of a policies folder
 * (policy_tests.h). Each file runs in the tests' own sandboxed lua_State;
 * the list it returns is read raw and strictly, inside a protected call
 * (luaL_error reports a malformed case), into JSON the runner works on.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "policy_tests.h"
#include "generation.h"
#include "sandbox.h"
#include "lua/luacall.h"
#include "lua/luajson.h"
#include "lua/luaraw.h"
#include "base/util.h"

struct tg_policy_tests {
  lua_State *L;
  tg_sandbox *sb;
  cJSON *cases;
  cJSON *files;
};

/* The keys of a case and of its error fixture: one list each. */
static const char *const case_keys[] = {
    "name", "tool", "args", "session", "metadata", "expect", "rule",
    "reason_match", "expect_args", "expect_tool", "result", "error",
    "expect_result", "expect_error_code", "agent", "cwd", "stand_in",
    "read_only", "event", "event_name", "network", NULL};
static const char *const error_keys[] = {"code", "message", "retryable", NULL};
/* A case must check at least one of these. */
static const char *const expectations[] = {
    "expect", "rule", "reason_match", "expect_args", "expect_tool",
    "expect_result", "expect_error_code", NULL};

/* What read_cases works on, passed as a light userdata. */
typedef struct {
  cJSON *cases;         /* appended to as they are read */
  const char *file;
  const char *src;      /* the file's text, to find each case's line */
  size_t from;          /* where the last case's name was found */
} reading;

/* The line of the first "name" or 'name' literal at or after r->from
 * (then from the start); 0 when the name is not written out (made in a
 * loop, say). */
static int case_line(reading *r, const char *name) {
  size_t n = strlen(name);
  for (int pass = 0; pass < 2; pass++) {
    for (const char *p = r->src + (pass ? 0 : r->from); *p; p++) {
      if ((*p != '"' && *p != '\'') || strncmp(p + 1, name, n) ||
          p[1 + n] != *p)
        continue;
      int line = 1;
      for (const char *q = r->src; q < p; q++) line += *q == '\n';
      r->from = (size_t)(p - r->src) + n + 2;
      return line;
    }
  }
  return 0;
}

/* A string field of the case at idx (raw); NULL when absent. */
static const char *opt_string(lua_State *L, int idx, const char *k,
                              const char *what) {
  int ty = tg__rawgetfield(L, idx, k);
  lua_pop(L, 1);
  if (ty == LUA_TNIL) return NULL;
  if (ty != LUA_TSTRING)
    luaL_error(L, "%s: '%s' must be a string (got %s)", what, k,
               lua_typename(L, ty));
  tg__rawgetfield(L, idx, k);
  tg__checknonul(L, -1, what, k);
  const char *s = lua_tostring(L, -1); /* the case table keeps it */
  lua_pop(L, 1);
  return s;
}

/* Converts field k (any Lua value that is JSON) into o[k]; an object
 * when must_object. Absent fields are left out. */
static void put_json(lua_State *L, int idx, const char *k, cJSON *o,
                     int must_object, const char *what) {
  if (tg__rawgetfield(L, idx, k) == LUA_TNIL) {
    lua_pop(L, 1);
    return;
  }
  char msg[300];
  cJSON *j = tg__json_from_lua(L, -1, msg, sizeof msg);
  lua_pop(L, 1);
  if (!j) luaL_error(L, "%s: '%s' is not JSON: %s", what, k, msg);
  cJSON_AddItemToObject(o, k, j); /* o owns it before anything may raise */
  if (must_object && !cJSON_IsObject(j))
    luaL_error(L, "%s: '%s' must be a table with keys (a JSON object)", what,
               k);
}

static void put_string(cJSON *o, const char *k, const char *v) {
  if (v) cJSON_AddStringToObject(o, k, v);
}

static void check_expect(lua_State *L, const char *expect, const char *what) {
  if (expect && strcmp(expect, "allow") && strcmp(expect, "deny") &&
      strcmp(expect, "ask"))
    luaL_error(L, "%s: 'expect' must be \"allow\", \"deny\" or \"ask\" (got "
                  "\"%s\")", what, expect);
}

static void check_expects_something(lua_State *L, int idx, const char *what) {
  for (size_t i = 0; expectations[i]; i++) {
    int ty = tg__rawgetfield(L, idx, expectations[i]);
    lua_pop(L, 1);
    if (ty != LUA_TNIL) return;
  }
  luaL_error(L, "%s: the case checks nothing; give expect, rule, "
                "reason_match, expect_args, expect_tool, expect_result or "
                "expect_error_code", what);
}

/* rule: the name of the rule that must decide, or false: none may (the
 * default decides). */
static void put_rule(lua_State *L, int idx, cJSON *o, const char *what) {
  int ty = tg__rawgetfield(L, idx, "rule");
  int no_rule = ty == LUA_TBOOLEAN && !lua_toboolean(L, -1);
  lua_pop(L, 1);
  if (no_rule) cJSON_AddFalseToObject(o, "rule");
  else if (ty != LUA_TNIL && ty != LUA_TSTRING)
    luaL_error(L, "%s: 'rule' must be a rule's name, or false for the "
                  "default (got %s)", what, lua_typename(L, ty));
  else put_string(o, "rule", opt_string(L, idx, "rule", what));
}

/* The error fixture {code, message?, retryable?}. */
static void put_error(lua_State *L, int idx, cJSON *o, const char *what) {
  if (tg__rawgetfield(L, idx, "error") == LUA_TNIL) {
    lua_pop(L, 1);
    return;
  }
  int e = lua_gettop(L);
  char w[420]; /* what (< 400) and ": error" */
  snprintf(w, sizeof w, "%s: error", what);
  if (!lua_istable(L, e))
    luaL_error(L, "%s must be a table {code = ..., message = ..., "
                  "retryable = ...}", w);
  tg__check_keys(L, e, w, error_keys);
  cJSON *j = cJSON_AddObjectToObject(o, "error");
  put_string(j, "code", opt_string(L, e, "code", w));
  put_string(j, "message", opt_string(L, e, "message", w));
  int ty = tg__rawgetfield(L, e, "retryable");
  if (ty != LUA_TNIL && ty != LUA_TBOOLEAN)
    luaL_error(L, "%s: 'retryable' must be a boolean", w);
  if (ty == LUA_TBOOLEAN) cJSON_AddBoolToObject(j, "retryable", lua_toboolean(L, -1));
  lua_pop(L, 2);
}

/* Case i of the list at idx into r->cases. */
static void read_case(lua_State *L, reading *r, int idx, int i) {
  lua_rawgeti(L, idx, i);
  int c = lua_gettop(L);
  char what[400];
  snprintf(what, sizeof what, "%s: case %d", r->file, i);
  if (!lua_istable(L, c))
    luaL_error(L, "%s is %s, not a table {name = ..., tool = ..., ...}", what,
               luaL_typename(L, c));
  const char *name = opt_string(L, c, "name", what);
  if (!name || !*name) luaL_error(L, "%s: 'name' must be a non-empty string", what);
  int line = case_line(r, name);
  snprintf(what, sizeof what, "%s:%d: case '%s'", r->file, line, name);
  if (!line) snprintf(what, sizeof what, "%s: case %d ('%s')", r->file, i, name);
  tg__check_keys(L, c, what, case_keys);
  cJSON *o = cJSON_CreateObject();
  cJSON_AddItemToArray(r->cases, o); /* owned from here: luaL_error is safe */
  cJSON_AddStringToObject(o, "name", name);
  cJSON_AddStringToObject(o, "file", r->file);
  cJSON_AddNumberToObject(o, "line", line);
  put_json(L, c, "args", o, 1, what);
  put_json(L, c, "event", o, 1, what);
  const cJSON *ev = cJSON_GetObjectItemCaseSensitive(o, "event");
  const char *tool = opt_string(L, c, "tool", what);
  if (ev) { /* the agent's hook event: its tool's name is the case's tool
             * (tool_name and tool_input; Copilot CLI's toolName, toolArgs) */
    const char *t = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ev, "tool_name"));
    const cJSON *in = cJSON_GetObjectItemCaseSensitive(ev, "tool_input");
    if (!t) {
      t = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ev, "toolName"));
      in = cJSON_GetObjectItemCaseSensitive(ev, "toolArgs");
    }
    if (!t || !*t || !(cJSON_IsObject(in) || cJSON_IsString(in)))
      luaL_error(L, "%s: 'event' must be an agent's hook event with a "
                    "tool_name and a tool_input", what);
    if (tool || cJSON_GetObjectItemCaseSensitive(o, "args"))
      luaL_error(L, "%s: a case is an event or a tool and args, not both",
                 what);
    tool = t;
  }
  if (!tool || !*tool) luaL_error(L, "%s: 'tool' must be a tool name", what);
  cJSON_AddStringToObject(o, "tool", tool);
  static const char *const strings[] = {"session", "expect",
                                        "reason_match", "expect_tool",
                                        "expect_error_code", "agent", "cwd",
                                        "event_name", NULL};
  for (size_t k = 0; strings[k]; k++)
    put_string(o, strings[k], opt_string(L, c, strings[k], what));
  static const char *const flags[] = {"stand_in", "read_only", "network",
                                      NULL};
  for (size_t k = 0; flags[k]; k++) {
    int ty = tg__rawgetfield(L, c, flags[k]);
    if (ty != LUA_TNIL && ty != LUA_TBOOLEAN)
      luaL_error(L, "%s: '%s' must be a boolean", what, flags[k]);
    if (ty == LUA_TBOOLEAN)
      cJSON_AddBoolToObject(o, flags[k], lua_toboolean(L, -1));
    lua_pop(L, 1);
  }
  if (cJSON_GetObjectItemCaseSensitive(o, "stand_in") &&
      (cJSON_GetObjectItemCaseSensitive(o, "agent") || cJSON_GetObjectItemCaseSensitive(o, "event")))
    luaL_error(L, "%s: a case is an agent's call (agent) or a stand-in "
                  "(stand_in), not both", what);
  check_expect(L, cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "expect")), what);
  put_rule(L, c, o, what);
  put_json(L, c, "metadata", o, 1, what);
  put_json(L, c, "expect_args", o, 1, what);
  put_json(L, c, "result", o, 0, what);
  put_json(L, c, "expect_result", o, 0, what);
  put_error(L, c, o, what);
  check_expects_something(L, c, what);
  for (const cJSON *q = r->cases->child; q && q != o; q = q->next) {
    const char *qf = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(q, "file"));
    const char *qn = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(q, "name"));
    if (qf && qn && !strcmp(qf, r->file) && !strcmp(qn, name))
      luaL_error(L, "%s: another case of this file has the same name", what);
  }
  lua_settop(L, c - 1);
}

/* Every case of the list at idx into r->cases, or a raised error. */
static void read_cases(lua_State *L, reading *r, int idx) {
  if (!lua_istable(L, idx))
    luaL_error(L, "%s: a test file returns a list of cases { {name = ..., "
                  "tool = ..., expect = ...}, ... } (it returned %s)", r->file,
               luaL_typename(L, idx));
  size_t n = lua_rawlen(L, idx);
  lua_pushnil(L);
  while (lua_next(L, idx)) { /* a list: keys 1..n only */
    lua_pop(L, 1);
    lua_Number k = lua_type(L, -1) == LUA_TNUMBER ? lua_tonumber(L, -1) : 0;
    if (!(k >= 1 && k <= (lua_Number)n && k == (lua_Number)(size_t)k))
      luaL_error(L, "%s: the list of cases has a key that is not a position "
                    "(%s); put each case in the list", r->file,
                 lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1)
                                                : luaL_typename(L, -1));
  }
  for (size_t i = 1; i <= n; i++) read_case(L, r, idx, (int)i);
}

/* One file being loaded: run, then read, in one protected call (every
 * allocation of the Lua state may raise). */
typedef struct {
  tg_policy_tests *t;
  reading r;
  char *src;               /* the file's text (freed by the caller) */
  char err[TG_ERRMSG];
} loading;

static int load_protected(lua_State *L) {
  loading *ld = lua_touserdata(L, 1);
  lua_settop(L, 0);
  if (tg__run_file(L, ld->t->sb, ld->r.file, 1, &ld->src, ld->err,
                   sizeof ld->err) < 0) {
    lua_pushstring(L, ld->err);
    return lua_error(L);
  }
  ld->r.src = ld->src;
  read_cases(L, &ld->r, 1);
  return 0;
}


static int load_file(tg_policy_tests *t, const char *path, char *err,
                     size_t errlen) {
  loading ld = {t, {t->cases, path, "", 0}, NULL, ""};
  int rc = tg__lua_protect(t->L, load_protected, &ld, err, errlen,
                           "out of memory");
  free(ld.src);
  return rc;
}

/* The data helpers as `require "toolgate"`, in a protected call. */
static int open_data_api(lua_State *L) {
  tg__json_open(L);
  tg__policy_data_api_open(L);
  return 0;
}

static int list_test_files(const char *dir, char ***files, size_t *n,
                           char *err, size_t errlen) {
  size_t len = strlen(dir) + sizeof "/tests";
  char *sub = malloc(len);
  if (!sub) {
    tg__errf(err, errlen, "out of memory");
    return -1;
  }
  snprintf(sub, len, "%s/tests", dir);
  int rc = tg__list_files(dir, tg__is_test_file, 0, files, n, err, errlen);
  if (rc == 0)
    rc = tg__list_files(sub, tg__is_test_file, 1, files, n, err, errlen);
  free(sub);
  if (rc == 0 && *n == 0) {
    tg__errf(err, errlen, "no test files in '%s': toolgate test runs the "
             "*_test.lua files beside the policies and in %s/tests/", dir,
             dir);
    rc = -1;
  }
  return rc;
}

tg_policy_tests *tg__policy_tests_load(const tg_config *cfg, const char *dir,
                                       char *err, size_t errlen) {
  tg_policy_tests *t = calloc(1, sizeof *t);
  char **files = NULL;
  size_t n = 0;
  if (!t || !(t->cases = cJSON_CreateArray()) ||
      !(t->files = cJSON_CreateArray())) {
    tg__errf(err, errlen, "out of memory");
    goto fail;
  }
  if (list_test_files(dir, &files, &n, err, errlen) < 0) goto fail;
  if (!(t->L = tg__sandbox_new(cfg, dir, &t->sb, err, errlen))) goto fail;
  if (tg__lua_protect(t->L, open_data_api, NULL, err, errlen,
                      "out of memory") < 0)
    goto fail;
  for (size_t i = 0; i < n; i++) {
    cJSON_AddItemToArray(t->files, cJSON_CreateString(files[i]));
    if (load_file(t, files[i], err, errlen) < 0) goto fail;
  }
  for (size_t i = 0; i < n; i++) free(files[i]);
  free(files);
  return t;
fail:
  for (size_t i = 0; i < n; i++) free(files[i]);
  free(files);
  tg__policy_tests_free(t);
  return NULL;
}

void tg__policy_tests_free(tg_policy_tests *t) {
  if (!t) return;
  if (t->L) tg__sandbox_close(t->L, t->sb);
  cJSON_Delete(t->cases);
  cJSON_Delete(t->files);
  free(t);
}

const cJSON *tg__policy_tests_cases(const tg_policy_tests *t) {
  return t->cases;
}

const cJSON *tg__policy_tests_files(const tg_policy_tests *t) {
  return t->files;
}

int tg__policy_tests_find(tg_policy_tests *t, const char *subject,
                          const char *pattern, char *err, size_t errlen) {
  lua_State *L = t->L;
  lua_getglobal(L, "string");
  lua_getfield(L, -1, "find"); /* the sandbox's bounded find */
  lua_remove(L, -2);
  lua_pushstring(L, subject);
  lua_pushstring(L, pattern);
  if (tg__sandbox_pcall(t->sb, L, 2, 1) != LUA_OK) {
    const char *m = lua_tostring(L, -1);
    if (!tg__sandbox_describe_stop(t->sb, "the pattern", err, errlen))
      tg__errf(err, errlen, "bad pattern '%s': %s", pattern, m ? m : "?");
    lua_pop(L, 1);
    return -1;
  }
  int hit = !lua_isnil(L, -1);
  lua_pop(L, 1);
  return hit;
}
