/*
 * generation.h — one loaded policy set: its own lua_State, the rules,
 * hooks, Lua tools and event handlers its files registered, and a number.
 * A call holds a reference to the generation it started with until it ends;
 * the generation is closed when it is no longer current and unreferenced.
 */
#ifndef TG_GENERATION_H
#define TG_GENERATION_H

#include <stdint.h>
#include <stddef.h>
#include <cjson/cJSON.h>
#include "../base/luacompat.h"
#include "toolgate.h"

typedef struct {
  int attempts;             /* total attempts; 1 = no retry */
  uint64_t initial_ms, max_ms;
  double multiplier, jitter; /* jitter: fraction, delay * [1-j, 1+j] */
} tg_retry;

typedef enum { TG_TOOL_C, TG_TOOL_LUA } tg_tool_kind;

/* A tool as the chain sees it, whether written in C or Lua. */
typedef struct tg_tool {
  char *name;
  char *description;
  cJSON *schema;            /* NULL: no validation */
  int read_only;
  uint64_t timeout_ms;      /* 0: runtime default */
  size_t max_result_bytes;  /* 0: no limit */
  tg_retry retry;
  tg_tool_kind kind;
  char *where;              /* "policies/x.lua:12" or "C" */
  /* C tools */
  tg_tool_start_fn start;
  tg_tool_cancel_fn cancel;
  void *ud;
  /* Lua tools (refs in the generation's registry) */
  int run_ref;
  int retryable_ref;        /* LUA_NOREF: default classification */
} tg_tool;

typedef struct {
  char *name;
  int priority;
  char **tools;             /* NULL: every tool */
  size_t ntools;
  int fn_ref;
  int fail_open;
  char *where;
  size_t order;             /* registration order, breaks priority ties */
} tg_rule;

typedef struct {
  char *tool;               /* "*" or a tool name */
  int any;                  /* tool is "*" */
  int fn_ref;
  char *where;
} tg_hook;

typedef struct {
  char *type;               /* NULL: every event */
  int fn_ref;
  char *where;
} tg_handler;

typedef struct tg_generation {
  uint64_t number;
  int refs;
  lua_State *L;
  struct tg_sandbox *sb;    /* L's limits (sandbox.h) */
  struct tg_runtime *rt;
  int loading;              /* tg.rule & co. only work while loading */
  tg_rule *rules;   size_t nrules;   /* sorted: priority, then order */
  tg_hook *before;  size_t nbefore;  /* registration order */
  tg_hook *after;   size_t nafter;
  tg_tool **tools;  size_t ntools;
  tg_handler *handlers; size_t nhandlers;
  char **files;     size_t nfiles;
  int in_handler;           /* delivering an event to on_event handlers */
} tg_generation;

/* Builds a generation from the .lua files of dir, in name order. dir may be NULL (an
 * empty generation). Returns NULL with "file:line: message" in err. */
tg_generation *tg__generation_load(struct tg_runtime *rt, const char *dir,
                                   uint64_t number, char *err, size_t errlen);

void tg__generation_ref(tg_generation *g);
void tg__generation_unref(tg_generation *g);

/* Registers the policy-side `toolgate` module (tg.*) in g->L. */
void tg__policy_api_open(tg_generation *g);

/* Walks the hooks that run for a call of `tool`, in run order: pre-hooks
 * ("before") "*" ones first, then the tool's own, each in registration
 * order; post-hooks ("after") that list backwards. tool NULL walks every
 * hook of the list in the same order (toolgate check). The chain, explain
 * and check all walk this one order; it copies nothing, so no number of
 * hooks is too many. */
typedef struct {
  const tg_hook *hooks;
  size_t n, k;
  const char *tool;
  int after, pass;
} tg_hook_walk;

void tg__hook_walk_start(tg_hook_walk *w, const tg_generation *g, int after,
                         const char *tool);
/* The next hook in run order, or NULL when there is none left. */
const tg_hook *tg__hook_walk_next(tg_hook_walk *w);
/* The same order as JSON [{tool, where}] (check and explain list it). */
cJSON *tg__hooks_describe(const tg_generation *g, int after, const char *tool);

/* Does a rule's tools list / a hook's tool cover `tool`? */
int tg__rule_covers(const tg_rule *r, const char *tool);

/* Frees a tool made by either side. */
void tg__tool_free(tg_tool *t);

/* Describes what is registered (for `toolgate check`). */
cJSON *tg__generation_describe(const tg_generation *g);

#endif
