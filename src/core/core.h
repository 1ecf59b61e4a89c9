/*
 * core.h — what every layer of one runtime shares: the loop, the
 * configuration, the event bus, the C tools, the random source. The
 * runtime object (src/runtime/) embeds one and hands the layers below it
 * a pointer; nothing here knows those layers. The slots at the end hold
 * the state of one layer each — core only carries them, never reads them —
 * so two runtimes in one process share nothing.
 */
#ifndef TG_CORE_H
#define TG_CORE_H

#include <stdint.h>
#include <stddef.h>
#include <uv.h>
#include <cjson/cJSON.h>
#include "toolgate.h"
#include "core/events.h"
#include "core/tool.h"
#include "core/sink.h"
#include "core/usage.h"
#include "core/redact.h"

typedef struct tg_core {
  tg_runtime *rt;            /* the public handle (opaque here): callbacks
                                and tg_exec_runtime hand it out */
  uv_loop_t *loop;
  tg_config cfg;             /* strings are the runtime's own copies */
  tg_bus bus;
  uint64_t rng;              /* xorshift64* state for jitter */
  int freeing;               /* the runtime is coming apart */
  tg_tool **ctools;          /* tools registered from C (owned) */
  size_t nctools;
  cJSON *declared_tools;     /* [{name, read_only}]: tools a configuration
                                declares that nobody registers here (an
                                upstream MCP server's), known by name to
                                check and test (owned; NULL: none) */
  cJSON *network_tools;      /* globs of the tools that reach the network
                                (core/network.c; owned; NULL: none) */
  cJSON *network_marked;     /* names marked one by one (toolgate test) */
  int network_declared;      /* network_tools given by a front: not read */
  int network_read;          /* network_tools read, at network_stamp */
  uint64_t network_stamp;
  /* taints raised while a dry run or a policy test runs (core/taint.c) */
  cJSON *taint_seen;         /* each raise is added here when set */
  int taint_dry;             /* explain: nothing is kept, only seen */
  int taint_memory;          /* test: kept in memory, never in the store */
  /* slots: one layer's state each */
  struct tg_changes *changes; /* file changes: core/changes.c */
  struct tg_proc *procs;     /* processes still supervised: proc/process.c */
  struct tg_fs *fs;          /* workspace roots of the file tools:
                                tools/fs_confine.c */
  tg_sink sink;              /* storage, as the chain reaches it (the
                                runtime fills it in; all NULL: off) */
  /* the chat side (issue 13) */
  tg_clock_fn clock;         /* NULL: the system clock (tg__clock_ms) */
  void *clock_ud;
  struct tg_turns *turns;    /* sessions' turns, open chats: core/turns.c */
  struct tg_layers *layers;  /* layers added from C: core/layers.c */
  tg_usage_ledger usage;     /* the usage ledger budgets derive from:
                                core/usage.h (the runtime installs one) */
  struct tg_notices *notices;   /* notifications: core/notify.c */
  struct tg_progress *progress; /* the progress manager: core/progress.c */
  /* Cancels a call by id (the runtime plugs the chain in), for the
   * progress items of calls: core cannot reach the chain itself. */
  int (*cancel_call)(struct tg_core *core, const char *call_id);
  tg_redactor redact;        /* what leaves the runtime is masked by */
} tg_core;

/* The runtime's wall clock (tg_runtime_set_clock), ms since the epoch. */
int64_t tg__clock_ms(const tg_core *core);

/* Adds a C tool made from def (checked by the caller: name, start,
 * schema). -EEXIST when a C tool has the name. */
int tg__core_add_tool(tg_core *core, const tg_tool_def *def,
                      char err[TG_ERRMSG]);
/* The C tool named `name`, or NULL. */
const tg_tool *tg__core_find_ctool(const tg_core *core, const char *name);

#endif
