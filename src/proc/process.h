/*
 * process.h — one shell command (`/bin/sh -c command`) in its own process
 * group, supervised on the runtime's loop without blocking it.
 *
 * Spawning is posix_spawn (CLONE_VFORK in glibc: no copy of the parent's
 * page tables, so it costs the same with a 1 GiB heap as with a small one);
 * stdout and stderr are pipes read as the output comes; the exit is learned
 * from a pidfd watched on the loop, then reaped with waitpid(WNOHANG).
 *
 * Kill semantics ("no process outlives its call"):
 *   - stop (timeout, cancel): SIGTERM to the whole group, SIGKILL to the
 *     group kill_grace_ms later if the shell has not exited by then;
 *   - when the shell exits, whatever it left running in its group
 *     (`sleep 100 &`) gets SIGKILL: the command's answer is known, and a
 *     leftover would be an orphan holding the output pipes. A command that
 *     means to outlive the call must leave the group itself (setsid).
 *
 * Ownership: the runtime lists every live process (core->procs) and kills
 * them all in tg_runtime_free. The owner (the exec tool, ctx.exec) is told
 * of output and of the end through callbacks until it calls
 * tg__proc_release; after that the process finishes dying on its own and
 * frees itself once its handles are closed.
 */
#ifndef TG_PROCESS_H
#define TG_PROCESS_H

#include <stddef.h>
#include <stdint.h>
#include <cjson/cJSON.h>
#include "toolgate.h"
#include "core/core.h"

typedef struct tg_proc tg_proc;

typedef struct {
  const char *command;        /* run as /bin/sh -c command */
  const char *cwd;            /* NULL: the current directory */
  char *const *env;           /* "NAME=value" merged over environ, or NULL
                                 (NULL-terminated) */
  const char *input;          /* written to stdin, then closed; NULL: stdin
                                 is /dev/null */
  size_t input_len;
  size_t cap;                 /* bytes kept per stream, head + tail */
  uint64_t kill_grace_ms;     /* SIGTERM to SIGKILL */
  uint64_t timeout_ms;        /* 0: none (for exec the chain keeps time) */
} tg_proc_opts;

typedef enum {
  TG_PROC_NOT_STOPPED = 0,
  TG_PROC_TIMEOUT,
  TG_PROC_CANCEL
} tg_proc_stop_reason;

/* Output arrived: tg__proc_bytes / tg__proc_last_line say what is known. */
typedef void (*tg_proc_output_fn)(tg_proc *p, void *ud);
/* The shell has exited (or was killed) and both streams are drained.
 * Called once; the result is ready (tg__proc_result). */
typedef void (*tg_proc_exit_fn)(tg_proc *p, void *ud);

/* Starts the command. 0 with *out set, or a negative errno with a message
 * in err (the cwd does not exist, out of file descriptors, ...); then no
 * callback is called. */
int tg__proc_spawn(tg_core *core, const tg_proc_opts *o,
                   tg_proc_output_fn on_output, tg_proc_exit_fn on_exit,
                   void *ud, tg_proc **out, char *err, size_t errlen);

/* Bytes read so far from stdout and stderr together. */
size_t tg__proc_bytes(const tg_proc *p);
/* The last line of output (of either stream; a line still being written
 * counts), at most ~200 bytes; "" before any. Valid until the next read. */
const char *tg__proc_last_line(tg_proc *p);

/* Stops the process group: SIGTERM now and SIGKILL after the grace, or
 * SIGKILL at once. The first reason given is the one reported. */
void tg__proc_stop(tg_proc *p, tg_proc_stop_reason why, int at_once);

/* The result object: {exit_code, signal, stdout, stderr, stdout_truncated,
 * stderr_truncated, duration_ms, timed_out, cancelled}. Partial while the
 * process runs. The caller owns it. */
cJSON *tg__proc_result(const tg_proc *p);

/* The owner is done with p: no more callbacks. A process still running is
 * stopped (cancel, SIGTERM then SIGKILL) and frees itself when it is gone. */
void tg__proc_release(tg_proc *p);

/* tg_runtime_free: SIGKILL every process of rt and turn the loop until
 * all of them are reaped and their handles closed. */
void tg__procs_shutdown(tg_core *core);
/* tg_runtime_kill_processes: SIGKILL every process group now. */
void tg__procs_kill(tg_core *core);

#endif
