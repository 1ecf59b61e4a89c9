/*
 * hook.h — the `toolgate hook` front (issue 14): the hook command coding
 * agents run before and after their tool calls. A front: it sees only the
 * public header (include/toolgate.h). Its parts:
 *
 *   hook_cmd.c   `toolgate hook AGENT`: read the event, answer it (from a
 *                resident instance, else in-process), print, exit
 *   hook_opts.c  its options (the CLI's own parser is another front's)
 *   hook_io.c    stdin read with a bound and a deadline; writing out
 *   watchdog.c   the deadline: the fail-safe answer, whatever is running
 *   record.c     the one seam to storage: turns, usage, sessions
 *   transcript.c the model and tokens an agent wrote to its transcript
 *   install.c    `toolgate hook install|uninstall`: the agents' settings
 *   daemon_cmd.c `toolgate daemon`: a resident instance for hooks
 */
#ifndef TOOLGATE_HOOK_H
#define TOOLGATE_HOOK_H

#include <stddef.h>
#include <stdint.h>
#include "toolgate.h"

/* The commands (main.c's table names them too, in cli/commands.h). */
int cmd_hook(int argc, char **argv);
int cmd_daemon(int argc, char **argv);
extern const char cmd_hook_usage[];
extern const char cmd_daemon_usage[];

enum { HOOK_EXIT_OK = 0, HOOK_EXIT_FAILED = 1, HOOK_EXIT_USAGE = 2 };

/* "toolgate: <message>\n" on stderr. */
void hook_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- options (hook_opts.c) ------------------------------------------- */

typedef struct {
  const char *name;   /* "--policies" */
  int *flag;          /* a flag: set to 1; or */
  const char **value; /* an option with a value */
} hook_opt;

/* Parses argv into opts and up to max positionals; prints an error and
 * returns -1, 1 for --help, else 0 with *npos set. */
int hook_opts_parse(const char *cmd, const hook_opt *opts, size_t nopts,
                    int argc, char **argv, const char **pos, int max,
                    int *npos);
/* A positive whole number (ms, bytes with K/M/G when bytes); -1 with a
 * message otherwise. */
int hook_opt_number(const char *cmd, const char *name, const char *text,
                    int bytes, uint64_t *out);

/* The policy sandbox options, as every command that loads policies has. */
typedef struct {
  int trusted;
  const char *time_limit, *memory_cap;
} hook_sandbox;
#define HOOK_SANDBOX_OPTS(s)                          \
  {"--trusted-policies", &(s)->trusted, NULL},        \
  {"--policy-time-limit", NULL, &(s)->time_limit},    \
  {"--policy-memory-cap", NULL, &(s)->memory_cap}
int hook_sandbox_apply(const char *cmd, const hook_sandbox *s, tg_config *cfg);

/* The runtime both the in-process answer and `toolgate daemon` judge
 * with: the same configuration, so both give the same answer. NULL with
 * err. */
tg_runtime *hook_runtime_new(const char *policies, const hook_sandbox *s,
                             char err[TG_ERRMSG]);

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

/* ---- the seam to storage (record.c) ------------------------------------ */

/* Where the front keeps what it records until storage has landed: a
 * folder of JSON-lines files and one small state file per session.
 * Today's implementation is that folder; at merge, the lead wires each
 * of these to storage (sessions, tg_record_usage, the turn counter). */
typedef struct {
  char dir[4096];    /* $TOOLGATE_STATE_DIR, $XDG_STATE_HOME/toolgate/hooks,
                        or ~/.local/state/toolgate/hooks */
} hook_record;

int hook_record_open(hook_record *r, const char *dir, char err[TG_ERRMSG]);
/* A user prompt: the session's turn goes up by one; returns the new one. */
int64_t hook_record_turn(hook_record *r, const char *agent,
                         const char *session, char err[TG_ERRMSG]);
/* The session's turn now (0 before its first prompt). */
int64_t hook_record_current_turn(hook_record *r, const char *session);
/* One model's usage since the last Stop, into the usage ledger. */
typedef struct {
  char model[128];
  int64_t input_tokens, output_tokens;
  int64_t cache_creation_input_tokens, cache_read_input_tokens;
  int64_t messages;
} hook_usage;
int hook_record_usage(hook_record *r, const char *agent, const char *session,
                      const hook_usage *u, char err[TG_ERRMSG]);
int hook_session_start(hook_record *r, const char *agent, const char *session,
                       const char *source, const char *cwd,
                       char err[TG_ERRMSG]);
int hook_session_end(hook_record *r, const char *agent, const char *session,
                     const char *reason, char err[TG_ERRMSG]);

/* The transcript offset kept per session (the state file), under the
 * session's lock. */
typedef struct {
  uint64_t offset;       /* bytes read up to (a line's end) */
  uint64_t dev, ino;     /* the file they were read from */
  double last_total;     /* Codex: the total_tokens counted last */
  char last_id[128];     /* Claude Code: the last message id counted */
} hook_transcript_mark;

/* ---- transcripts (transcript.c) ----------------------------------------- */

#define HOOK_MAX_USAGE_MODELS 8
/* Reads what the agent appended to its transcript since *mark (updated):
 * usage per model into u (at most HOOK_MAX_USAGE_MODELS), *n of them. At
 * most max bytes are read per call (the rest waits for the next Stop); a
 * truncated or replaced file is read from its start; a partial last line
 * waits; lines that are not JSON, or not the agent's usage, are skipped. */
int hook_transcript_usage(const char *agent, const char *path,
                          const char *event_model, hook_transcript_mark *mark,
                          size_t max, hook_usage *u, int *n,
                          char err[TG_ERRMSG]);
/* Runs fn with the session's transcript mark read and written back under
 * the session's lock. */
int hook_record_with_mark(hook_record *r, const char *session,
                          int (*fn)(hook_transcript_mark *m, void *ud),
                          void *ud, char err[TG_ERRMSG]);

/* ---- install (install.c) ------------------------------------------------- */

int hook_install(int argc, char **argv, int uninstall);

#endif
