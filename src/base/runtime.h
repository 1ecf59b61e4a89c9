/*
 * runtime.h — the runtime object's insides, shared by the core modules.
 * Everything mutable lives here or below it: two runtimes in one process
 * share nothing.
 */
#ifndef TG_RUNTIME_H
#define TG_RUNTIME_H

#include <stdint.h>
#include <stddef.h>
#include <uv.h>
#include "toolgate.h"
#include "../chain/events.h"

typedef struct tg_generation tg_generation;
typedef struct tg_call tg_call;
typedef struct tg_tool tg_tool;
typedef struct tg_always tg_always;
typedef struct tg_watch tg_watch;
typedef struct tg_control tg_control;

struct tg_runtime {
  uv_loop_t *loop;
  uv_loop_t own_loop;        /* used when the host gave no loop */
  int owns_loop;
  tg_config cfg;             /* strings below are our own copies */
  char *session;
  char *policies_dir;
  tg_generation *gen;        /* current generation (holds one reference) */
  uint64_t gen_counter;      /* number of the last generation built */
  tg_bus bus;
  tg_tool **ctools;          /* tools registered from C (owned) */
  size_t nctools;
  tg_call *calls;            /* calls in flight (doubly linked) */
  uint64_t next_call_no;
  uint64_t next_approval_id;
  uint64_t rng;              /* xorshift64* state for jitter */
  tg_approver_cb approver;
  void *approver_ud;
  tg_always *always;         /* remembered approve-always answers */
  int freeing;
  struct tg_fs *fs;          /* workspace roots of the file tools (exec/fs_confine.c) */
  struct tg_changes *changes; /* file changes: queue, ring, subscribers (base/changes.c) */
  struct tg_proc *procs;     /* processes still supervised (exec/process.c) */
  /* Reload triggers (src/policy/watch.c, src/base/control.c); NULL: off.
   * Their handles are unref'd: they never keep a host's loop alive. */
  tg_watch *watch;           /* the policies folder watch + debounce */
  uv_signal_t *reload_signal; /* SIGHUP, only when asked for */
  tg_control *control;       /* the control socket server */
};

/* What a successful reload made. */
typedef struct {
  uint64_t generation;
  size_t files;
  double duration_ms;        /* building and swapping the generation */
} tg_reload_info;

/* The one reload path every trigger takes (tg_runtime_load_policies, the
 * folder watch, the reload signal, the control socket): builds a new
 * generation from dir (NULL: the folder loaded last) beside the current
 * one and swaps it in only if every file loaded. Emits policy_loaded
 * {generation, files, duration_ms, trigger} or policy_error {error, file?,
 * line?, generation (the one that stays), trigger}. info may be NULL. */
int tg__reload(tg_runtime *rt, const char *dir, const char *trigger,
               tg_reload_info *info, char err[TG_ERRMSG]);

/* Milliseconds from the monotonic clock (uv_hrtime based). */
double tg__now_ms(void);
/* Uniform double in [0, 1) from the runtime's generator. */
double tg__random(tg_runtime *rt);
/* strdup that accepts NULL. Returns NULL only for NULL. Aborts never:
 * on allocation failure returns NULL and callers treat it as OOM. */
char *tg__strdup(const char *s);
/* snprintf into err when err is not NULL. */
void tg__errf(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The tool named `name`: C tools first, then the generation's Lua tools. */
const tg_tool *tg__find_tool(tg_runtime *rt, tg_generation *gen,
                             const char *name);

#endif
