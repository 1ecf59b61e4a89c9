/*
 * hook.h — the `toolgate hook` front (issue 14): the hook command coding
 * agents run before and after their tool calls. A front: it sees the
 * public header (include/toolgate.h) and the front kit (src/kit/: the
 * option parser, the error line and exit codes every command shares). Its
 * parts:
 *
 *   hook_cmd.c   `toolgate hook AGENT`: read the event, answer it (from a
 *                resident instance, else in-process), print, exit
 *   hook_opts.c  the runtime both the in-process answer and the daemon use
 *   hook_io.c    stdin read with a bound and a deadline; writing out
 *   watchdog.c   the deadline: the fail-safe answer, whatever is running
 *   install.c    `toolgate hook install|uninstall`: the agents' settings
 *   (kit/hook_line.c: the command line install writes, which fails
 *   closed, and its check; `toolgate doctor` reads it too)
 *   daemon_cmd.c `toolgate daemon`: a resident instance for hooks
 *
 * The protocol these commands speak (the event read, mapped, judged and
 * answered in the agent's words) is this front's library half, built
 * into libtoolgate behind tg_hook_answer: protocol.h.
 */
#ifndef TOOLGATE_HOOK_H
#define TOOLGATE_HOOK_H

#include <stddef.h>
#include <stdint.h>
#include "toolgate.h"
#include "kit/options.h" /* the fronts' one option parser */
#include "kit/output.h"
#include "kit/kit.h" /* JSON text, the database, ... */
#include "kit/hook_line.h" /* the line install writes */

#include "commands.h" /* cmd_hook, cmd_daemon: src/main.c's table names them */

/* The policy sandbox and database options, as every command that loads
 * policies has (kit/options.h). */
typedef struct {
  sandbox_options sb;
  db_options db;
} hook_sandbox;
#define HOOK_SANDBOX_OPTS(s) SANDBOX_OPT_SPECS(&(s)->sb), DB_OPT_SPECS(&(s)->db)

/* The runtime both the in-process answer and `toolgate daemon` judge
 * with: the same configuration, so both give the same answer. NULL with
 * err. */
tg_runtime *hook_runtime_new(const char *policies, const hook_sandbox *s,
                             char err[TG_ERRMSG]);
/* The same for an answer in-process, which has no generation of its own
 * to keep: when the folder does not load (a load error, not a missing
 * database), the last policies of it that loaded answer, and note says
 * so ("answered by the policies as of TIME ..., because ERR"; "" when the
 * folder itself answers). NULL with err when neither loads. */
tg_runtime *hook_runtime_here(const char *policies, const hook_sandbox *s,
                              char err[TG_ERRMSG], char *note, size_t len);
/* After a resident instance reloaded: the folder as it is now becomes its
 * last good copy when that copy loads (best effort, quiet). */
void hook_keep_last_good(const char *policies, const hook_sandbox *s);

/* ---- I/O (hook_io.c) ---------------------------------------------------- */

/* Reads fd until EOF, or until what was read is one whole JSON object
 * (an agent that keeps stdin open), at most max bytes (more: -EFBIG),
 * until the monotonic deadline (ms, hook_now_ms's clock; -ETIMEDOUT).
 * *out is malloc'd and NUL-terminated. */
int hook_read_all(int fd, size_t max, double deadline_ms, char **out,
                  size_t *len);
double hook_now_ms(void);
/* Writes the answer (stdout, then stderr) and gives its exit code. */
int hook_emit(const tg_hook_result *r);

/* ---- the deadline (watchdog.c) --------------------------------------- */

/* Arms the watchdog for ms milliseconds from now: when it fires, the
 * answer last set with watchdog_set is written and the process exits. */
int watchdog_start(uint64_t ms);
/* The answer the watchdog gives from now on (copied; cut to fit). */
void watchdog_set(const tg_hook_result *r);
/* Keeps the watchdog from firing while the real answer is written. */
void watchdog_hold(void);

/* ---- install (install.c) ------------------------------------------------- */

int hook_install(int argc, char **argv, int uninstall);
/* Writes text over file: a copy of the old one beside it (its name in
 * backup, "" when there was none), a temporary file renamed over it
 * (through a symlink, to its target), its mode kept. 0 or -errno. */
int hook_write_settings(const char *file, const char *text, int exists,
                        char *backup, size_t blen);

/* ---- a plugin file (plugin.c) -------------------------------------------- */

/* An install or uninstall of an agent that runs a plugin (the dialect's
 * install.plugin): the file, and the line it is to run. */
typedef struct {
  const tg_dialect *d;
  const char *file;        /* where the plugin goes */
  const char *prog, *args; /* toolgate as a sh word, and its words */
  unsigned timeout_s;      /* the plugin's own time limit */
  unsigned watch_s;        /* the line's watcher, earlier */
  int uninstall, dry_run;
} hook_plugin_job;
int hook_install_plugin(const hook_plugin_job *j);

/* The installed command line (quoting, the fail-closed wrapper, its
 * check) is the kit's: kit/hook_line.h, since `toolgate doctor` reads and
 * runs it too. */

#endif
