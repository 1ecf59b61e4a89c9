/*
 * tool.h — a tool as the chain sees it, whether written in C (registered
 * with tg_tool_register) or in Lua (registered by a policy generation).
 */
#ifndef TG_TOOL_H
#define TG_TOOL_H

#include <stdint.h>
#include <stddef.h>
#include <cjson/cJSON.h>
#include "toolgate.h"

typedef struct {
  int attempts;             /* total attempts; 1 = no retry */
  uint64_t initial_ms, max_ms;
  double multiplier, jitter; /* jitter: fraction, delay * [1-j, 1+j] */
} tg_retry;

typedef enum { TG_TOOL_C, TG_TOOL_LUA } tg_tool_kind;

typedef struct tg_tool {
  char *name;
  char *description;
  cJSON *schema;            /* NULL: no validation */
  tg_schema *validator;     /* schema compiled (borrows it); with schema */
  int read_only;
  uint64_t timeout_ms;      /* 0: runtime default */
  size_t max_result_bytes;  /* 0: no limit */
  tg_retry retry;
  tg_tool_kind kind;
  char *where;              /* "policies/x.lua:12" or "C" */
  char *group;              /* tg_tool_def.group (call.server); NULL: none */
  /* C tools */
  tg_tool_start_fn start;
  tg_tool_cancel_fn cancel;
  void *ud;
  /* Lua tools (refs in the generation's registry) */
  int run_ref;
  int retryable_ref;        /* LUA_NOREF: default classification */
} tg_tool;

/* A C tool made from def (copied), or NULL with a message in err. */
tg_tool *tg__tool_new(const tg_tool_def *def, char err[TG_ERRMSG]);
/* Frees a C tool. A generation's Lua tools are freed with it. */
void tg__tool_free(tg_tool *t);
/* {name, description?, read_only, timeout_ms?, retry_attempts?,
 * max_result_bytes?, schema?, group?, where}: one tool in
 * tg_runtime_describe. */
cJSON *tg__tool_describe(const tg_tool *t);

#endif
