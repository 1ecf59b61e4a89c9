/*
 * generation.c — loading the policies folder (*.lua files) in name order, into a fresh
 * lua_State: each file runs once, as text only, in its own environment
 * whose reads fall back to the standard globals. The files register rules,
 * hooks, tools and event handlers through the `toolgate` module (api.c).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "generation.h"
#include "lua/luajson.h"
#include "sandbox.h"
#include "base/regular_file.h"
#include "base/util.h"

#define TG_POLICY_MAX_BYTES (4u << 20)

static int name_cmp(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static int is_lua_file(const char *n) {
  size_t len = strlen(n);
  return n[0] != '.' && len > 4 && strcmp(n + len - 4, ".lua") == 0;
}

/* Adds dir/name to g->files. */
static int add_file(tg_generation *g, size_t *cap, const char *dir,
                    const char *name) {
  if (g->nfiles == *cap) {
    size_t want = *cap ? *cap * 2 : 16;
    char **f = realloc(g->files, want * sizeof *f);
    if (!f) return -1;
    g->files = f;
    *cap = want;
  }
  size_t n = strlen(dir) + strlen(name) + 2;
  char *p = malloc(n);
  if (!p) return -1;
  snprintf(p, n, "%s/%s", dir, name);
  g->files[g->nfiles++] = p;
  return 0;
}

/* Lists the .lua files of dir, sorted by name into g->files (full paths).
 * A file left out would be a policy silently not loaded: any failure fails
 * the listing. */
static int list_files(tg_generation *g, const char *dir, char *err,
                      size_t errlen) {
  DIR *d = opendir(dir);
  if (!d) {
    tg__errf(err, errlen, "cannot read policy directory '%s': %s", dir,
             strerror(errno));
    return -1;
  }
  struct dirent *e;
  size_t cap = 0;
  int rc = 0;
  errno = 0;
  while (rc == 0 && (e = readdir(d)))
    if (is_lua_file(e->d_name) && add_file(g, &cap, dir, e->d_name) < 0) {
      tg__errf(err, errlen, "cannot list policy directory '%s': out of "
               "memory", dir);
      rc = -1;
    }
  if (rc == 0 && errno) {
    tg__errf(err, errlen, "cannot list policy directory '%s': %s", dir,
             strerror(errno));
    rc = -1;
  }
  closedir(d);
  if (rc == 0 && g->nfiles > 1) qsort(g->files, g->nfiles, sizeof *g->files, name_cmp);
  return rc;
}

static char *read_file(const char *path, size_t *len, char *err,
                       size_t errlen) {
  /* a FIFO named x.lua in the folder must not hang every reload */
  const char *kind = NULL;
  int fd = tg__open_regular(path, &kind);
  if (fd == TG_NOT_REGULAR) {
    tg__errf(err, errlen, "%s: is %s, not a regular file; a policy file "
             "must be one", path, kind);
    return NULL;
  }
  FILE *f = fd >= 0 ? fdopen(fd, "rb") : NULL;
  if (!f) {
    tg__errf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
    if (fd >= 0) close(fd);
    return NULL;
  }
  struct stat st;
  if (fstat(fileno(f), &st) < 0 ||
      (size_t)st.st_size > TG_POLICY_MAX_BYTES) {
    tg__errf(err, errlen, "%s: not a regular file under %u bytes", path,
             TG_POLICY_MAX_BYTES);
    fclose(f);
    return NULL;
  }
  char *buf = malloc((size_t)st.st_size + 1);
  size_t n = buf ? fread(buf, 1, (size_t)st.st_size, f) : 0;
  fclose(f);
  if (!buf || n != (size_t)st.st_size) {
    free(buf);
    tg__errf(err, errlen, "%s: read failed", path);
    return NULL;
  }
  *len = n;
  return buf;
}

/* Runs one policy file in a fresh environment. */
static int load_one(tg_generation *g, const char *path, char *err,
                    size_t errlen) {
  lua_State *L = g->L;
  size_t len = 0;
  char *src = read_file(path, &len, err, errlen);
  if (!src) return -1;
  size_t nlen = strlen(path) + 2;
  char *name = malloc(nlen); /* not a Lua string: nothing here may raise */
  if (!name) {
    free(src);
    tg__errf(err, errlen, "%s: out of memory", path);
    return -1;
  }
  snprintf(name, nlen, "@%s", path);
  int rc = luaL_loadbufferx(L, src, len, name, "t"); /* protected */
  free(src);
  free(name);
  if (rc == LUA_OK) {
    tg__sandbox_set_env(L);               /* its own globals */
    rc = tg__sandbox_pcall(g->sb, L, 0, 0); /* under the time limit too */
  }
  if (rc != LUA_OK) {
    const char *m = lua_tostring(L, -1);
    if (!tg__sandbox_describe_stop(g->sb, path, err, errlen))
      tg__errf(err, errlen, "%s", m ? m : "(error object is not a string)");
    lua_pop(L, 1);
    return -1;
  }
  return 0;
}

static int rule_cmp(const void *a, const void *b) {
  const tg_rule *x = a, *y = b;
  if (x->priority != y->priority) return x->priority < y->priority ? -1 : 1;
  return x->order < y->order ? -1 : (x->order > y->order);
}

/* The tg module and JSON marks, made inside a protected call: an
 * out-of-memory there fails the load instead of aborting the process. */
static int open_api(lua_State *L) {
  tg_generation *g = lua_touserdata(L, 1);
  tg__json_open(L);
  tg__policy_api_open(g);
  return 0;
}

static int open_api_protected(tg_generation *g, char *err, size_t errlen) {
#if TG_LUA54
  lua_pushcfunction(g->L, open_api); /* a light C function: no allocation */
  lua_pushlightuserdata(g->L, g);
  int rc = lua_pcall(g->L, 1, 0, 0);
#else
  int rc = lua_cpcall(g->L, open_api, g);
#endif
  if (rc == LUA_OK) return 0;
  tg__errf(err, errlen, "cannot set up the policy API: %s",
           lua_type(g->L, -1) == LUA_TSTRING ? lua_tostring(g->L, -1)
                                             : "out of memory");
  lua_pop(g->L, 1);
  return -1;
}

/* Runs the files in order. A registration whose commit failed breaks the
 * generation even when the policy caught its error (register.c). */
static int load_files(tg_generation *g, char *err, size_t errlen) {
  int rc = 0;
  g->loading = 1;
  for (size_t i = 0; i < g->nfiles && rc == 0; i++) {
    rc = load_one(g, g->files[i], err, errlen);
    if (tg__reg_broken(g)) {
      tg__errf(err, errlen, "%s", g->broken);
      rc = -1;
    }
  }
  g->loading = 0;
  return rc;
}

tg_generation *tg__generation_load(tg_core *core, const char *dir,
                                   uint64_t number, char *err, size_t errlen) {
  tg_generation *g = calloc(1, sizeof *g);
  if (!g) {
    tg__errf(err, errlen, "cannot load the policies: out of memory");
    return NULL;
  }
  g->core = core;
  g->number = number;
  g->refs = 1;
  g->L = tg__sandbox_new(&core->cfg, dir, &g->sb, err, errlen);
  if (!g->L) {
    free(g);
    return NULL;
  }
  if (open_api_protected(g, err, errlen) < 0) goto fail;
  if (dir && list_files(g, dir, err, errlen) < 0) goto fail;
  if (load_files(g, err, errlen) < 0) goto fail;
  if (g->nrules) qsort(g->rules, g->nrules, sizeof *g->rules, rule_cmp);
  return g;
fail:
  g->refs = 0;
  tg__generation_unref(g); /* refs 0 -> -1: frees */
  return NULL;
}

void tg__generation_ref(tg_generation *g) { g->refs++; }

void tg__generation_unref(tg_generation *g) {
  if (--g->refs > 0) return;
  if (g->L) tg__reg_free_all(g); /* through L's allocator: before it closes */
  for (size_t i = 0; i < g->nfiles; i++) free(g->files[i]);
  free(g->files);
  if (g->L) tg__sandbox_close(g->L, g->sb);
  free(g);
}

int tg__rule_covers(const tg_rule *r, const char *tool) {
  if (!r->tools) return 1;
  for (size_t i = 0; i < r->ntools; i++)
    if (strcmp(r->tools[i], "*") == 0 || strcmp(r->tools[i], tool) == 0)
      return 1;
  return 0;
}

void tg__hook_walk_start(tg_hook_walk *w, const tg_generation *g, int after,
                         const char *tool) {
  *w = (tg_hook_walk){after ? g->after : g->before,
                      after ? g->nafter : g->nbefore, 0, tool, after, 0};
}

/* Two passes over the list: "*" hooks, then the tool's own (post-hooks:
 * the other way round, each pass backwards). */
const tg_hook *tg__hook_walk_next(tg_hook_walk *w) {
  for (; w->pass < 2; w->pass++, w->k = 0) {
    int want_any = (w->pass == 0) != w->after;
    while (w->k < w->n) {
      size_t i = w->k++;
      const tg_hook *h = &w->hooks[w->after ? w->n - 1 - i : i];
      if (h->any != want_any) continue;
      if (h->any || !w->tool || strcmp(h->tool, w->tool) == 0) return h;
    }
  }
  return NULL;
}

/* The hooks of one list in run order, as {tool, where} (tool NULL: all). */
cJSON *tg__hooks_describe(const tg_generation *g, int after, const char *tool) {
  cJSON *a = cJSON_CreateArray();
  tg_hook_walk w;
  tg__hook_walk_start(&w, g, after, tool);
  for (const tg_hook *h; (h = tg__hook_walk_next(&w));) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "tool", h->tool);
    cJSON_AddStringToObject(o, "where", h->where);
    cJSON_AddItemToArray(a, o);
  }
  return a;
}

static cJSON *describe_rules(const tg_generation *g, cJSON *warnings) {
  cJSON *a = cJSON_CreateArray();
  for (size_t i = 0; i < g->nrules; i++) {
    const tg_rule *r = &g->rules[i];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", r->name);
    cJSON_AddNumberToObject(o, "priority", r->priority);
    cJSON *tools = cJSON_AddArrayToObject(o, "tools");
    if (!r->tools) cJSON_AddItemToArray(tools, cJSON_CreateString("*"));
    for (size_t k = 0; k < r->ntools; k++)
      cJSON_AddItemToArray(tools, cJSON_CreateString(r->tools[k]));
    cJSON_AddStringToObject(o, "fail", r->fail_open ? "open" : "closed");
    cJSON_AddStringToObject(o, "where", r->where);
    cJSON_AddItemToArray(a, o);
    if (i > 0 && g->rules[i - 1].priority == r->priority) {
      char w[512];
      snprintf(w, sizeof w,
               "rules '%s' and '%s' share priority %d: the one registered "
               "first runs first",
               g->rules[i - 1].name, r->name, r->priority);
      cJSON_AddItemToArray(warnings, cJSON_CreateString(w));
    }
  }
  return a;
}

cJSON *tg__generation_describe(const tg_generation *g) {
  cJSON *d = cJSON_CreateObject();
  cJSON *warnings = cJSON_CreateArray();
  cJSON_AddNumberToObject(d, "generation", g ? (double)g->number : 0);
  cJSON *files = cJSON_AddArrayToObject(d, "files");
  cJSON *tools = cJSON_CreateArray();
  if (g) {
    for (size_t i = 0; i < g->nfiles; i++)
      cJSON_AddItemToArray(files, cJSON_CreateString(g->files[i]));
    cJSON_AddItemToObject(d, "rules", describe_rules(g, warnings));
    cJSON *hooks = cJSON_AddObjectToObject(d, "hooks");
    cJSON_AddItemToObject(hooks, "before", tg__hooks_describe(g, 0, NULL));
    cJSON_AddItemToObject(hooks, "after", tg__hooks_describe(g, 1, NULL));
    for (size_t i = 0; i < g->ntools; i++)
      cJSON_AddItemToArray(tools, tg__tool_describe(g->tools[i]));
    cJSON *lt = cJSON_AddArrayToObject(d, "list_tools");
    for (size_t i = 0; i < g->nlisters; i++) {
      cJSON *o = cJSON_CreateObject();
      cJSON_AddStringToObject(o, "where", g->listers[i].where);
      cJSON_AddItemToArray(lt, o);
    }
    cJSON *h = cJSON_AddArrayToObject(d, "event_handlers");
    for (size_t i = 0; i < g->nhandlers; i++) {
      cJSON *o = cJSON_CreateObject();
      cJSON_AddStringToObject(o, "type", g->handlers[i].type ? g->handlers[i].type : "*");
      cJSON_AddStringToObject(o, "where", g->handlers[i].where);
      cJSON_AddItemToArray(h, o);
    }
  }
  cJSON_AddItemToObject(d, "tools", tools);
  cJSON_AddItemToObject(d, "warnings", warnings);
  return d;
}

const tg_tool *tg__generation_find_tool(const tg_generation *g,
                                        const char *name) {
  for (size_t i = 0; g && i < g->ntools; i++)
    if (strcmp(g->tools[i]->name, name) == 0) return g->tools[i];
  return NULL;
}
