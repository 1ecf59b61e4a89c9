/*
 * config.c — loads toolgate.lua (config.h): runs it in a state of its own,
 * sandboxed (no library but a few pure functions and os.getenv, a count
 * hook as the instruction budget, an allocator with a cap), then reads the
 * table it returned, raw, checking every key and type. Paths are made
 * absolute against the file's folder, so the server works from any cwd.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cjson/cJSON.h>
#include "kit/kit.h"
#include "config.h"
#include "log.h"
#include "lua/luacall.h"
#include "lua/luaraw.h"
#include "kit/nearest.h"
#if !TG_LUA54
#include <luajit.h>
#endif

#define MAX_FILE (1u << 20)
#define MEMORY_CAP (32u << 20)
#define INSTRUCTIONS 10000000
#define HOOK_EVERY 10000

/* ---- running the file ---------------------------------------------------------- */

typedef struct {
  lua_Alloc orig;
  void *orig_ud;
  size_t used;
} cap_alloc;

static void *capped(void *ud, void *ptr, size_t osize, size_t nsize) {
  cap_alloc *a = ud;
  size_t old = ptr ? osize : 0;
  if (old > a->used) old = a->used; /* blocks made before we counted */
  if (nsize > old && a->used - old + nsize > MEMORY_CAP) return NULL;
  void *p = a->orig(a->orig_ud, ptr, osize, nsize);
  if (p || nsize == 0) a->used = a->used - old + nsize;
  return p;
}

static void count_hook(lua_State *L, lua_Debug *ar) {
  (void)ar;
  luaL_error(L, "it runs too long (more than %d instructions): a config "
             "file only returns a table", INSTRUCTIONS);
}

static void copy_global(lua_State *L, int env, const char *name) {
  lua_getglobal(L, name);
  tg__rawsetfield(L, env, name);
}

/* The only names the file sees. */
static void make_env(lua_State *L) {
  lua_newtable(L);
  int env = lua_gettop(L);
  luaopen_base(L);
  lua_settop(L, env);
  static const char *const names[] = {"pairs", "ipairs", "type", "tostring",
                                      "tonumber", "error", NULL};
  for (int i = 0; names[i]; i++) copy_global(L, env, names[i]);
  lua_newtable(L);                  /* env.os = { getenv = os.getenv } */
  lua_pushcfunction(L, luaopen_os);
  lua_pushstring(L, "os");
  lua_call(L, 1, 1);                /* the os library's table */
  lua_getfield(L, -1, "getenv");
  tg__rawsetfield(L, -3, "getenv");
  lua_pop(L, 1);
  tg__rawsetfield(L, env, "os");
}

/* Opens path for reading if it is a regular file: a FIFO or a device
 * given as the config would block or never end. */
static FILE *open_regular(const char *path, char *err, size_t errlen) {
  struct stat st;
  const char *why = NULL;
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0 || fstat(fd, &st) < 0) why = strerror(errno);
  else if (!S_ISREG(st.st_mode)) why = "not a regular file";
  FILE *f = why ? NULL : fdopen(fd, "rb");
  if (!f) {
    snprintf(err, errlen, "%s: cannot read it: %s", path,
             why ? why : strerror(errno));
    if (fd >= 0) close(fd);
  }
  return f;
}

static char *read_file(const char *path, size_t *n, char *err, size_t errlen) {
  FILE *f = open_regular(path, err, errlen);
  if (!f) return NULL;
  char *buf = malloc(MAX_FILE + 1);
  *n = buf ? fread(buf, 1, MAX_FILE + 1, f) : 0;
  int bad = ferror(f);
  fclose(f);
  if (!buf || bad || *n > MAX_FILE) {
    snprintf(err, errlen, "%s: %s", path, !buf ? "out of memory"
             : bad ? "cannot read it" : "larger than 1 MiB");
    free(buf);
    return NULL;
  }
  return buf;
}

/* Runs the file; leaves its table on top. -1 with err. */
static int run_file(lua_State *L, const char *path, char *err, size_t errlen) {
  size_t n;
  char *src = read_file(path, &n, err, errlen);
  if (!src) return -1;
  char chunk[PATH_MAX + 2];
  snprintf(chunk, sizeof chunk, "@%s", path);
  make_env(L);                      /* env */
  int rc = luaL_loadbufferx(L, src, n, chunk, "t"); /* env chunk */
  free(src);
  if (rc == LUA_OK) {
    tg__setenv(L, -2);              /* the chunk sees only env */
    lua_remove(L, -2);              /* chunk */
    lua_sethook(L, count_hook, LUA_MASKCOUNT, INSTRUCTIONS);
    rc = lua_pcall(L, 0, 1, 0);
    lua_sethook(L, NULL, 0, 0);
  }
  if (rc != LUA_OK) {
    snprintf(err, errlen, "%s",
             tg__lua_error_text(L, -1, "it failed (a non-string error)"));
    return -1;
  }
  if (!lua_istable(L, -1)) {
    snprintf(err, errlen, "%s: must return a table (return { ... }), not %s",
             path, luaL_typename(L, -1));
    return -1;
  }
  return 0;
}

/* ---- reading the table ------------------------------------------------------------ */

typedef struct {
  lua_State *L;
  const char *file;
  const char *dir;
  char *err;
  size_t errlen;
} reader;

static int fail(reader *r, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(reader *r, const char *path, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  snprintf(r->err, r->errlen, "%s: %s: %s", r->file, path, msg);
  return -1;
}

/* Every key of the table at idx is a string in allowed. */
static int check_keys(reader *r, int idx, const char *path,
                      const char *const *allowed) {
  lua_State *L = r->L;
  idx = lua_absindex(L, idx);
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    lua_pop(L, 1);
    if (lua_type(L, -1) != LUA_TSTRING) {
      lua_pop(L, 1);
      return fail(r, path, "keys must be names, not %s", luaL_typename(L, -1));
    }
    const char *k = lua_tostring(L, -1);
    int ok = 0;
    for (int i = 0; allowed[i] && !ok; i++) ok = !strcmp(allowed[i], k);
    if (!ok) {
      char key[128];
      snprintf(key, sizeof key, "%s", k);
      lua_pop(L, 1);
      const char *near = kit_nearest_name(key, allowed);
      if (near)
        return fail(r, path, "unknown key '%s' (did you mean '%s'?)", key,
                    near);
      return fail(r, path, "unknown key '%s'", key);
    }
  }
  return 0;
}

static const char *type_of(lua_State *L, int idx) { return luaL_typename(L, idx); }

/* t[k] of the table at idx as a string copy (NULL when absent). */
static int get_string(reader *r, int idx, const char *k, const char *path,
                      char **out) {
  lua_State *L = r->L;
  int t = tg__rawgetfield(L, idx, k);
  int rc = 0;
  if (t == LUA_TSTRING && !tg__has_nul(L, -1)) {
    free(*out);
    *out = strdup(lua_tostring(L, -1));
  } else if (t != LUA_TNIL) {
    rc = fail(r, path, "%s must be a string%s, not %s", k,
              t == LUA_TSTRING ? " without NUL bytes" : "", type_of(L, -1));
  }
  lua_pop(L, 1);
  return rc;
}

static int get_count(reader *r, int idx, const char *k, const char *path,
                     uint64_t *out) {
  lua_State *L = r->L;
  int t = tg__rawgetfield(L, idx, k);
  int rc = 0;
  if (t == LUA_TNUMBER) {
    double d = lua_tonumber(L, -1);
    if (!(d >= 0 && d <= 9007199254740991.0) || d != (double)(uint64_t)d)
      rc = fail(r, path, "%s must be a whole number >= 0", k);
    else *out = (uint64_t)d;
  } else if (t != LUA_TNIL) {
    rc = fail(r, path, "%s must be a number, not %s", k, type_of(L, -1));
  }
  lua_pop(L, 1);
  return rc;
}

/* t[k]: a list of strings (an array table), as a NULL-terminated copy. */
static int get_list(reader *r, int idx, const char *k, const char *path,
                    char ***out) {
  lua_State *L = r->L;
  int t = tg__rawgetfield(L, idx, k);
  if (t == LUA_TNIL) {
    lua_pop(L, 1);
    return 0;
  }
  if (t != LUA_TTABLE) {
    lua_pop(L, 1);
    return fail(r, path, "%s must be a list of strings, not %s", k,
                type_of(L, -1));
  }
  size_t n = (size_t)lua_rawlen(L, -1);
  char **v = calloc(n + 1, sizeof *v);
  int rc = v ? 0 : fail(r, path, "out of memory");
  for (size_t i = 1; rc == 0 && i <= n; i++) {
    lua_rawgeti(L, -1, (lua_Integer)i);
    if (lua_type(L, -1) != LUA_TSTRING || tg__has_nul(L, -1))
      rc = fail(r, path, "%s[%zu] must be a string, not %s", k, i,
                type_of(L, -1));
    else
      v[i - 1] = strdup(lua_tostring(L, -1));
    lua_pop(L, 1);
  }
  lua_pushnil(L); /* nothing but 1..n: a hole or a name is a mistake */
  while (rc == 0 && lua_next(L, -2)) {
    lua_pop(L, 1);
    if (!tg__isinteger(L, -1) && !(lua_type(L, -1) == LUA_TNUMBER &&
                                   lua_tonumber(L, -1) >= 1 &&
                                   lua_tonumber(L, -1) <= (double)n))
      rc = fail(r, path, "%s must be a list (1, 2, 3, ...), it has other keys",
                k);
    if (rc) lua_pop(L, 1);
  }
  lua_pop(L, 1);
  if (rc) {
    for (size_t i = 0; v && v[i]; i++) free(v[i]);
    free(v);
    return rc;
  }
  *out = v;
  return 0;
}

/* A path from the file, made absolute against its folder. */
static char *resolve(const reader *r, const char *p) {
  if (p[0] == '/') return strdup(p);
  size_t n = strlen(r->dir) + strlen(p) + 2;
  char *full = malloc(n);
  if (full) snprintf(full, n, "%s/%s", r->dir, p);
  return full;
}

static int resolve_in_place(const reader *r, char **p) {
  if (!*p) return 0;
  char *full = resolve(r, *p);
  free(*p);
  *p = full;
  return full ? 0 : -1;
}

/* ---- sections ---------------------------------------------------------------------- */

/* t[k] as a table on top (nil pushed when absent); -1: not a table. */
static int section(reader *r, int idx, const char *k, const char *path) {
  int t = tg__rawgetfield(r->L, idx, k);
  if (t == LUA_TNIL || t == LUA_TTABLE) return t == LUA_TTABLE;
  lua_pop(r->L, 1);
  return fail(r, path, "%s must be a table, not %s", k, type_of(r->L, -1));
}

static int read_defaults(reader *r, int idx, mcp_config *c) {
  static const char *const keys[] = {"verdict", "timeout_ms",
                                     "approval_timeout_ms",
                                     "progress_interval_ms", NULL};
  char *verdict = NULL;
  int rc = check_keys(r, idx, "defaults", keys);
  if (!rc) rc = get_string(r, idx, "verdict", "defaults", &verdict);
  if (!rc) rc = get_count(r, idx, "timeout_ms", "defaults", &c->timeout_ms);
  if (!rc) rc = get_count(r, idx, "approval_timeout_ms", "defaults",
                          &c->approval_timeout_ms);
  if (!rc) rc = get_count(r, idx, "progress_interval_ms", "defaults",
                          &c->progress_interval_ms);
  if (!rc && verdict) {
    if (!strcmp(verdict, "allow")) c->verdict = TG_VERDICT_ALLOW;
    else if (!strcmp(verdict, "deny")) c->verdict = TG_VERDICT_DENY;
    else if (!strcmp(verdict, "ask")) c->verdict = TG_VERDICT_ASK;
    else rc = fail(r, "defaults", "verdict must be \"allow\", \"deny\" or "
                   "\"ask\", not \"%s\"", verdict);
  }
  free(verdict);
  return rc;
}

static int read_enum(reader *r, int idx, const char *k, const char *path,
                     const char *const *names, int *out) {
  char *v = NULL;
  int rc = get_string(r, idx, k, path, &v);
  if (!rc && v) {
    int found = -1;
    for (int i = 0; names[i]; i++)
      if (!strcmp(names[i], v)) found = i;
    if (found < 0) rc = fail(r, path, "%s: \"%s\" is not one of the values "
                             "it takes", k, v);
    else *out = found;
  }
  free(v);
  return rc;
}

static int read_mcp(reader *r, int idx, mcp_config *c) {
  static const char *const keys[] = {
      "separator", "max_message_bytes", "ask_fallback", "log", "log_level",
      "tools_ttl_ms", "request_state_ttl_ms", "max_calls", "startup_wait_ms",
      NULL};
  static const char *const fallbacks[] = {"reject", "allow", NULL};
  static const char *const levels[] = {"debug", "info", "notice", "warning",
                                       "error", "critical", "alert",
                                       "emergency", NULL};
  int rc = check_keys(r, idx, "mcp", keys);
  if (!rc) rc = get_string(r, idx, "separator", "mcp", &c->separator);
  if (!rc) rc = get_count(r, idx, "max_message_bytes", "mcp", &c->max_message_bytes);
  if (!rc) rc = read_enum(r, idx, "ask_fallback", "mcp", fallbacks, &c->ask_fallback);
  if (!rc) rc = get_string(r, idx, "log", "mcp", &c->log);
  if (!rc) rc = read_enum(r, idx, "log_level", "mcp", levels, &c->log_level);
  if (!rc) rc = get_count(r, idx, "tools_ttl_ms", "mcp", &c->tools_ttl_ms);
  if (!rc) rc = get_count(r, idx, "request_state_ttl_ms", "mcp",
                          &c->request_state_ttl_ms);
  if (!rc) rc = get_count(r, idx, "max_calls", "mcp", &c->max_calls);
  uint64_t wait = UINT64_MAX;
  if (!rc) rc = get_count(r, idx, "startup_wait_ms", "mcp", &wait);
  if (!rc && wait != UINT64_MAX) c->startup_wait_ms = (int64_t)wait;
  if (!rc && c->separator && !c->separator[0])
    rc = fail(r, "mcp", "separator must not be empty");
  if (!rc) rc = resolve_in_place(r, &c->log);
  return rc;
}

/* env = { KEY = "value" } as "KEY=value" strings. */
static int read_env(reader *r, int idx, const char *path, char ***out) {
  lua_State *L = r->L;
  int t = section(r, idx, "env", path);
  if (t <= 0) {
    if (t == 0) lua_pop(L, 1);
    return t;
  }
  size_t n = 0, cap = 8;
  char **v = calloc(cap + 1, sizeof *v);
  int rc = v ? 0 : fail(r, path, "out of memory");
  lua_pushnil(L);
  while (rc == 0 && lua_next(L, -2)) {
    const char *k = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : NULL;
    if (!k || !*k || strchr(k, '=') || tg__has_nul(L, -2))
      rc = fail(r, path, "env keys must be variable names (no '=')");
    else if (lua_type(L, -1) != LUA_TSTRING || tg__has_nul(L, -1))
      rc = fail(r, path, "env.%s must be a string, not %s", k, type_of(L, -1));
    if (!rc && n == cap) {
      char **g = realloc(v, (cap * 2 + 1) * sizeof *g);
      if (!g) rc = fail(r, path, "out of memory");
      else v = g, cap *= 2;
    }
    if (!rc) {
      size_t len = strlen(k) + lua_rawlen(L, -1) + 2;
      v[n] = malloc(len);
      if (v[n]) snprintf(v[n], len, "%s=%s", k, lua_tostring(L, -1));
      v[++n] = NULL;
    }
    lua_pop(L, rc ? 2 : 1);
  }
  lua_pop(L, 1);
  if (rc) {
    for (size_t i = 0; v && i < n; i++) free(v[i]);
    free(v);
    return rc;
  }
  *out = v;
  return 0;
}

static int valid_name(const char *name) {
  if (!*name || strlen(name) > 64) return 0;
  for (const char *p = name; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
          (*p >= '0' && *p <= '9') || *p == '-' || *p == '_'))
      return 0;
  return 1;
}

/* prefix = false: the server's tools, prompts and resources keep their names
 * (no "<server><separator>" before them), for a client that must see an
 * upstream's names as they are. Default true. */
static int get_prefix(reader *r, int idx, const char *path,
                      mcp_upstream_conf *u) {
  int t = tg__rawgetfield(r->L, idx, "prefix");
  int rc = 0;
  if (t == LUA_TBOOLEAN) u->bare = !lua_toboolean(r->L, -1);
  else if (t != LUA_TNIL)
    rc = fail(r, path, "prefix must be a boolean, not %s", type_of(r->L, -1));
  lua_pop(r->L, 1);
  return rc;
}

/* network = true (every tool of the server reaches the network), false,
 * or a list of globs of its tools' own names, each 1 to 128 bytes. A
 * server whose tools keep their names (prefix = false) needs them named:
 * true would cover every tool of every server. */
static int get_network(reader *r, int idx, const char *path,
                       mcp_upstream_conf *u) {
  int t = tg__rawgetfield(r->L, idx, "network");
  int rc = 0;
  if (t == LUA_TBOOLEAN) u->network_all = lua_toboolean(r->L, -1);
  else if (t != LUA_TNIL && t != LUA_TTABLE)
    rc = fail(r, path, "network must be true, false or a list of tool "
              "names (globs), not %s", type_of(r->L, -1));
  lua_pop(r->L, 1);
  if (!rc && t == LUA_TTABLE) rc = get_list(r, idx, "network", path, &u->network);
  for (size_t i = 0; !rc && u->network && u->network[i]; i++) {
    char why[200];
    if (!u->network[i][0] || strlen(u->network[i]) > 128)
      rc = fail(r, path, "network[%zu] must be a tool name or glob (1 to "
                "128 bytes)", i + 1);
    else if (tg_glob_check(u->network[i], why, sizeof why) < 0)
      rc = fail(r, path, "network[%zu]: %s", i + 1, why);
  }
  if (!rc && u->network_all && u->bare)
    rc = fail(r, path, "network = true with prefix = false would mark "
              "every tool of that name, toolgate's own among them: list "
              "the server's network tools, network = { \"fetch\", ... }");
  return rc;
}

static int read_server(reader *r, int idx, const char *name,
                       mcp_upstream_conf *u) {
  static const char *const keys[] = {"command", "args", "env", "cwd",
                                     "read_only", "timeout_ms", "tools",
                                     "prefix", "network", NULL};
  char path[128];
  snprintf(path, sizeof path, "servers.%s", name);
  if (!valid_name(name))
    return fail(r, "servers", "'%s' is not a server name (letters, digits, "
                "'-' and '_', at most 64)", name);
  u->name = strdup(name);
  int rc = check_keys(r, idx, path, keys);
  if (!rc) rc = get_string(r, idx, "command", path, &u->command);
  if (!rc && (!u->command || !*u->command))
    rc = fail(r, path, "command is missing (the program to start)");
  if (!rc) rc = get_list(r, idx, "args", path, &u->args);
  if (!rc) rc = read_env(r, idx, path, &u->env);
  if (!rc) rc = get_string(r, idx, "cwd", path, &u->cwd);
  if (!rc) rc = get_list(r, idx, "read_only", path, &u->read_only);
  if (!rc) rc = get_count(r, idx, "timeout_ms", path, &u->timeout_ms);
  if (!rc) rc = get_list(r, idx, "tools", path, &u->tools);
  if (!rc) rc = get_prefix(r, idx, path, u);
  if (!rc) rc = get_network(r, idx, path, u);
  for (size_t i = 0; !rc && u->tools && u->tools[i]; i++)
    if (!u->tools[i][0] || strlen(u->tools[i]) > 128)
      rc = fail(r, path, "tools[%zu] must be a tool name (1 to 128 bytes)",
                i + 1);
  if (!rc) rc = resolve_in_place(r, &u->cwd);
  for (size_t i = 0; !rc && u->read_only && u->read_only[i]; i++) {
    char why[200];
    if (tg_glob_check(u->read_only[i], why, sizeof why) < 0)
      rc = fail(r, path, "read_only[%zu]: %s", i + 1, why);
  }
  return rc;
}

static int name_order(const void *a, const void *b) {
  return strcmp(((const mcp_upstream_conf *)a)->name,
                ((const mcp_upstream_conf *)b)->name);
}

/* Fails unless no server's name and separator start another's: "s" and
 * "s__a" (or "a" and "a_", with "__") would give two tools one name — s's
 * a__x and s__a's x are both s__a__x — and which server ran it, which one
 * described it to the client and where prompts/get went would depend on
 * which one listed first. */
static int names_apart(reader *r, const mcp_config *c) {
  const char *sep = c->separator ? c->separator : "__";
  for (size_t i = 0; i < c->nservers; i++)
    for (size_t j = 0; j < c->nservers; j++) {
      const char *a = c->servers[i].name, *b = c->servers[j].name;
      size_t an = strlen(a), bn = strlen(b), sn = strlen(sep);
      if (i == j || an >= bn || strncmp(a, b, an)) continue;
      /* a + sep a prefix of b + sep: sep's start is b's rest, then sep */
      size_t rest = bn - an, k = 0;
      while (k < sn && (k < rest ? b[an + k] : sep[k - rest]) == sep[k]) k++;
      if (k == sn)
        return fail(r, "servers", "'%s' and '%s' run into each other with "
                    "the separator \"%s\": their tools' names could be the "
                    "same; rename one, or choose another mcp.separator", a, b,
                    sep);
    }
  return 0;
}

static int read_servers(reader *r, int idx, mcp_config *c) {
  lua_State *L = r->L;
  size_t cap = 0;
  int rc = 0;
  lua_pushnil(L);
  while (rc == 0 && lua_next(L, idx)) {
    if (lua_type(L, -2) != LUA_TSTRING || !lua_istable(L, -1)) {
      rc = fail(r, "servers", "each entry is name = { command = ..., ... }");
      lua_pop(L, 2);
      break;
    }
    if (c->nservers == cap) {
      cap = cap ? cap * 2 : 4;
      mcp_upstream_conf *g = realloc(c->servers, cap * sizeof *g);
      if (!g) {
        lua_pop(L, 2);
        return fail(r, "servers", "out of memory");
      }
      c->servers = g;
    }
    mcp_upstream_conf *u = &c->servers[c->nservers++];
    memset(u, 0, sizeof *u);
    rc = read_server(r, lua_gettop(L), lua_tostring(L, -2), u);
    lua_pop(L, rc ? 2 : 1);
  }
  if (!rc && c->nservers) /* start and list them in a stable order */
    qsort(c->servers, c->nservers, sizeof *c->servers, name_order);
  return rc ? rc : names_apart(r, c);
}

/* db = "path" (relative to the file), or false: no database. */
static int read_db(reader *r, int idx, mcp_config *c) {
  int t = tg__rawgetfield(r->L, idx, "db");
  int off = t == LUA_TBOOLEAN && !lua_toboolean(r->L, -1);
  lua_pop(r->L, 1);
  if (off) {
    c->db_off = 1;
    return 0;
  }
  if (t == LUA_TBOOLEAN)
    return fail(r, "the table", "db must be a file name or false, not true");
  int rc = get_string(r, idx, "db", "the table", &c->db);
  if (!rc && c->db && !*c->db)
    rc = fail(r, "the table", "db must be a file name, not \"\"");
  return rc ? rc : resolve_in_place(r, &c->db);
}

static int read_top(reader *r, mcp_config *c) {
  static const char *const keys[] = {"policies", "workspace", "session",
                                     "defaults", "mcp", "expose", "servers",
                                     "db", "project", NULL};
  int top = lua_gettop(r->L);
  int rc = check_keys(r, top, "the table", keys);
  if (!rc) rc = get_string(r, top, "policies", "the table", &c->policies);
  if (!rc) rc = read_db(r, top, c);
  if (!rc) rc = get_string(r, top, "project", "the table", &c->project);
  if (!rc && c->project && !*c->project)
    rc = fail(r, "the table", "project must be a folder, not \"\"");
  if (!rc) rc = resolve_in_place(r, &c->project);
  if (!rc) rc = get_list(r, top, "workspace", "the table", &c->workspace);
  if (!rc) rc = get_string(r, top, "session", "the table", &c->session);
  if (!rc) rc = get_list(r, top, "expose", "the table", &c->expose);
  if (!rc) rc = resolve_in_place(r, &c->policies);
  for (size_t i = 0; !rc && c->workspace && c->workspace[i]; i++)
    rc = resolve_in_place(r, &c->workspace[i]);
  for (size_t i = 0; !rc && c->expose && c->expose[i]; i++) {
    char why[200];
    const char *g = c->expose[i][0] == '!' ? c->expose[i] + 1 : c->expose[i];
    if (tg_glob_check(g, why, sizeof why) < 0)
      rc = fail(r, "expose", "[%zu]: %s", i + 1, why);
  }
  static const char *const names[] = {"defaults", "mcp", "servers"};
  static int (*const readers[])(reader *, int, mcp_config *) = {
      read_defaults, read_mcp, read_servers};
  for (int i = 0; !rc && i < 3; i++) {
    int t = section(r, top, names[i], "the table");
    if (t < 0) return -1;
    if (t) rc = readers[i](r, lua_gettop(r->L), c);
    lua_settop(r->L, top);
  }
  return rc;
}

/* ---- the entry points ----------------------------------------------------------------- */

void mcp_config_empty(mcp_config *c) {
  memset(c, 0, sizeof *c);
  c->ask_fallback = -1;
  c->log_level = -1;
  c->startup_wait_ms = -1;
}

static char *folder_of(const char *path) {
  char *abs = realpath(path, NULL);
  if (!abs) return NULL;
  char *slash = strrchr(abs, '/');
  if (slash == abs) slash[1] = 0;
  else if (slash) *slash = 0;
  return abs;
}

int mcp_config_load(const char *path, mcp_config *c, char *err, size_t errlen) {
  mcp_config_empty(c);
  cap_alloc a = {0};
  lua_State *L = luaL_newstate();
  if (!L) {
    snprintf(err, errlen, "%s: cannot create a Lua state", path);
    return -1;
  }
  a.orig = lua_getallocf(L, &a.orig_ud);
  a.used = (size_t)lua_gc(L, LUA_GCCOUNT, 0) * 1024;
  lua_setallocf(L, capped, &a);
#if !TG_LUA54
  /* compiled traces skip the count hook: the budget needs the interpreter */
  luaJIT_setmode(L, 0, LUAJIT_MODE_ENGINE | LUAJIT_MODE_OFF);
#endif
  c->path = strdup(path);
  c->dir = folder_of(path);
  reader r = {L, path, c->dir ? c->dir : ".", err, errlen};
  int rc = c->dir ? 0 : -1;
  if (rc < 0) snprintf(err, errlen, "%s: %s", path, strerror(errno));
  if (!rc) rc = run_file(L, path, err, errlen);
  if (!rc) rc = read_top(&r, c);
  lua_close(L);
  if (rc) mcp_config_free(c);
  return rc;
}

static void free_list(char **v) {
  for (size_t i = 0; v && v[i]; i++) free(v[i]);
  free(v);
}

void mcp_config_free(mcp_config *c) {
  free(c->path);
  free(c->dir);
  free(c->policies);
  free(c->db);
  free(c->project);
  free_list(c->workspace);
  free(c->session);
  free(c->separator);
  free(c->log);
  free_list(c->expose);
  for (size_t i = 0; i < c->nservers; i++) {
    mcp_upstream_conf *u = &c->servers[i];
    free(u->name);
    free(u->command);
    free_list(u->args);
    free_list(u->env);
    free(u->cwd);
    free_list(u->read_only);
    free_list(u->tools);
    free_list(u->network);
  }
  free(c->servers);
  mcp_config_empty(c);
}

/* ---- as JSON ---------------------------------------------------------------------------- */

static void add_list(cJSON *o, const char *k, char **v) {
  if (!v) return;
  cJSON *a = cJSON_AddArrayToObject(o, k);
  for (size_t i = 0; v[i]; i++) cJSON_AddItemToArray(a, cJSON_CreateString(v[i]));
}

static void add_str(cJSON *o, const char *k, const char *v) {
  if (v) cJSON_AddStringToObject(o, k, v);
}

static void add_num(cJSON *o, const char *k, uint64_t v) {
  if (v) cJSON_AddNumberToObject(o, k, (double)v);
}

static cJSON *server_json(const mcp_upstream_conf *u) {
  cJSON *o = cJSON_CreateObject();
  add_str(o, "command", u->command);
  add_list(o, "args", u->args);
  add_list(o, "env", u->env);
  add_str(o, "cwd", u->cwd);
  add_list(o, "read_only", u->read_only);
  add_num(o, "timeout_ms", u->timeout_ms);
  add_list(o, "tools", u->tools);
  if (u->bare) cJSON_AddFalseToObject(o, "prefix");
  if (u->network_all) cJSON_AddTrueToObject(o, "network");
  else add_list(o, "network", u->network);
  return o;
}

cJSON *mcp_config_to_json(const mcp_config *c) {
  static const char *const verdicts[] = {NULL, "allow", "deny", "ask"};
  static const char *const fallbacks[] = {"reject", "allow"};
  cJSON *o = cJSON_CreateObject();
  add_str(o, "file", c->path);
  add_str(o, "policies", c->policies);
  if (c->db_off) cJSON_AddFalseToObject(o, "db");
  else add_str(o, "db", c->db);
  add_str(o, "project", c->project);
  add_list(o, "workspace", c->workspace);
  add_str(o, "session", c->session);
  cJSON *d = cJSON_AddObjectToObject(o, "defaults");
  if (c->verdict > TG_VERDICT_NONE && c->verdict <= TG_VERDICT_ASK)
    add_str(d, "verdict", verdicts[c->verdict]);
  add_num(d, "timeout_ms", c->timeout_ms);
  add_num(d, "approval_timeout_ms", c->approval_timeout_ms);
  add_num(d, "progress_interval_ms", c->progress_interval_ms);
  cJSON *m = cJSON_AddObjectToObject(o, "mcp");
  add_str(m, "separator", c->separator);
  add_num(m, "max_message_bytes", c->max_message_bytes);
  if (c->ask_fallback >= 0) add_str(m, "ask_fallback", fallbacks[c->ask_fallback]);
  add_str(m, "log", c->log);
  if (c->log_level >= 0) add_str(m, "log_level", mcp_log_level_name(c->log_level));
  add_num(m, "tools_ttl_ms", c->tools_ttl_ms);
  add_num(m, "request_state_ttl_ms", c->request_state_ttl_ms);
  add_num(m, "max_calls", c->max_calls);
  if (c->startup_wait_ms >= 0)
    cJSON_AddNumberToObject(m, "startup_wait_ms", (double)c->startup_wait_ms);
  add_list(o, "expose", c->expose);
  cJSON *sv = cJSON_AddObjectToObject(o, "servers");
  for (size_t i = 0; i < c->nservers; i++)
    cJSON_AddItemToObject(sv, c->servers[i].name, server_json(&c->servers[i]));
  return o;
}
