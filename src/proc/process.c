/*
 * process.c — a shell command in its own process group (see process.h for
 * the kill semantics and who owns what).
 *
 * Why not uv_spawn: libuv 1.44 forks, and fork copies the page tables of
 * the whole process — 24 ms with a 1 GiB heap, against under 1 ms for
 * posix_spawn, which glibc implements with CLONE_VM | CLONE_VFORK.
 * Why a pidfd: it tells of the exit on the loop without a SIGCHLD handler
 * (which would be process-wide state, and a host may have its own).
 *
 * The life of a process: spawned → output read as it comes (capture.c
 * keeps the head and tail of each stream) → the shell exits (pidfd
 * readable: leftovers in the group get SIGKILL, then the shell is reaped)
 * → both pipes reach EOF (or the drain timer gives up on them) →
 * finished: the owner's exit callback → released: handles closed → freed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "capture.h"
#include "process.h"
#include "base/closer.h"
#include "core/core.h"
#include "base/util.h"

#define READ_CHUNK 65536
#define REAP_POLL_MS 10      /* only without pidfd (kernels before 5.3) */

typedef struct {
  uv_pipe_t pipe;
  int open;                  /* still reading */
  tg_capture kept;           /* what is kept of it (capture.c) */
} stream;

struct tg_proc {
  tg_core *core;
  tg_proc *prev, *next;      /* core->procs */
  pid_t pid;                 /* also the process group id */
  int pidfd;                 /* -1: reap_timer polls instead */
  uv_poll_t exit_watch;      /* pidfd readable: the shell exited */
  uv_timer_t reap_timer;
  int in_fd;                 /* our end of stdin, -1 once closed */
  uv_poll_t in_watch;
  char *input;
  size_t input_len, input_off;
  stream out[2];             /* stdout, stderr */
  int last_stream;           /* which one wrote last */
  uv_timer_t deadline;       /* opts.timeout_ms */
  uv_timer_t killer;         /* SIGKILL after the grace; drain after exit */
  uint64_t grace_ms;
  double start_ms, end_ms;
  int reaped, status_known, status;
  tg_proc_stop_reason stop;
  int term_sent;
  int finished, released, closing;
  tg_closer closer;          /* freed when closing and all have closed */
  tg_proc_output_fn on_output;
  tg_proc_exit_fn on_exit;
  void *ud;
  char line_view[TG_CAPTURE_LINE_VIEW]; /* tg__proc_last_line's text */
  char readbuf[READ_CHUNK];
};

static void maybe_finish(tg_proc *p);

/* ---- handles ------------------------------------------------------------ */

static void proc_free(tg_proc *p) {
  if (p->prev) p->prev->next = p->next;
  else p->core->procs = p->next;
  if (p->next) p->next->prev = p->prev;
  for (int i = 0; i < 2; i++) tg__capture_free(&p->out[i].kept);
  free(p->input);
  free(p);
}

/* A handle closed early (the input pipe once written) must not free the
 * process: only the closes of close_all, which always has some, do. */
static void handles_closed(tg_closer *c) {
  tg_proc *p = tg__owner_of(c, tg_proc, closer);
  if (p->closing) proc_free(p);
}

/* Closes h if it was initialized and is not closing already. */
static void close_handle(tg_proc *p, uv_handle_t *h) {
  tg__close(&p->closer, h, 0);
}

static void handle_opened(tg_proc *p, uv_handle_t *h) { h->data = p; }

static void close_all(tg_proc *p) {
  p->closing = 1;
  for (int i = 0; i < 2; i++) close_handle(p, (uv_handle_t *)&p->out[i].pipe);
  close_handle(p, (uv_handle_t *)&p->exit_watch);
  close_handle(p, (uv_handle_t *)&p->reap_timer);
  close_handle(p, (uv_handle_t *)&p->in_watch);
  close_handle(p, (uv_handle_t *)&p->deadline);
  close_handle(p, (uv_handle_t *)&p->killer);
}

/* ---- the result ------------------------------------------------------------ */

static void add_status(cJSON *r, const tg_proc *p) {
  if (p->status_known && WIFEXITED(p->status)) {
    cJSON_AddNumberToObject(r, "exit_code", WEXITSTATUS(p->status));
    cJSON_AddNullToObject(r, "signal");
  } else if (p->status_known && WIFSIGNALED(p->status)) {
    char name[32];
    const char *abbrev = sigabbrev_np(WTERMSIG(p->status));
    if (abbrev) snprintf(name, sizeof name, "SIG%s", abbrev);
    else snprintf(name, sizeof name, "SIG%d", WTERMSIG(p->status));
    cJSON_AddNullToObject(r, "exit_code");
    cJSON_AddStringToObject(r, "signal", name);
  } else { /* still running, or reaped by someone else (SIGCHLD ignored) */
    cJSON_AddNullToObject(r, "exit_code");
    cJSON_AddNullToObject(r, "signal");
  }
}

cJSON *tg__proc_result(const tg_proc *p) {
  cJSON *r = cJSON_CreateObject();
  add_status(r, p);
  cJSON_AddItemToObject(r, "stdout", tg__capture_text(&p->out[0].kept));
  cJSON_AddItemToObject(r, "stderr", tg__capture_text(&p->out[1].kept));
  cJSON_AddBoolToObject(r, "stdout_truncated",
                        tg__capture_truncated(&p->out[0].kept));
  cJSON_AddBoolToObject(r, "stderr_truncated",
                        tg__capture_truncated(&p->out[1].kept));
  double end = p->reaped ? p->end_ms : tg__now_ms();
  cJSON_AddNumberToObject(r, "duration_ms", end - p->start_ms);
  cJSON_AddBoolToObject(r, "timed_out", p->stop == TG_PROC_TIMEOUT);
  cJSON_AddBoolToObject(r, "cancelled", p->stop == TG_PROC_CANCEL);
  return r;
}

size_t tg__proc_bytes(const tg_proc *p) {
  return p->out[0].kept.total + p->out[1].kept.total;
}

const char *tg__proc_last_line(tg_proc *p) {
  return tg__capture_last_line(&p->out[p->last_stream].kept, p->line_view);
}

/* ---- reading -------------------------------------------------------------- */

static void alloc_cb(uv_handle_t *h, size_t hint, uv_buf_t *buf) {
  tg_proc *p = h->data;
  /* One buffer serves both streams: libuv calls read_cb right after the
   * read it allocated for, before any other alloc. */
  *buf = uv_buf_init(p->readbuf, sizeof p->readbuf);
}

static void stream_done(tg_proc *p, stream *s) {
  if (!s->open) return;
  s->open = 0;
  uv_read_stop((uv_stream_t *)&s->pipe);
  close_handle(p, (uv_handle_t *)&s->pipe);
}

static void read_cb(uv_stream_t *st, ssize_t n, const uv_buf_t *buf) {
  tg_proc *p = st->data;
  int i = (uv_pipe_t *)st == &p->out[0].pipe ? 0 : 1;
  stream *s = &p->out[i];
  if (n > 0) {
    tg__capture_add(&s->kept, buf->base, (size_t)n);
    p->last_stream = i;
    if (p->on_output) p->on_output(p, p->ud);
  } else if (n < 0) { /* EOF, or an error: either way nothing more comes */
    stream_done(p, s);
    maybe_finish(p);
  }
}

/* ---- stdin ------------------------------------------------------------------ */

/* write() without SIGPIPE when the child has closed its stdin: SIGPIPE is
 * blocked for the write (this thread only) and a SIGPIPE it raised is
 * taken back, so a host's own disposition is left alone. */
static ssize_t write_quiet(int fd, const char *d, size_t n) {
  sigset_t pipe_set, old, pending;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  sigpending(&pending);
  int was_pending = sigismember(&pending, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
  ssize_t w = write(fd, d, n);
  int e = errno;
  if (w < 0 && e == EPIPE && !was_pending) {
    struct timespec zero = {0, 0};
    while (sigtimedwait(&pipe_set, NULL, &zero) < 0 && errno == EINTR) {}
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  errno = e;
  return w;
}

static void close_input(tg_proc *p) {
  if (p->in_fd < 0) return;
  close_handle(p, (uv_handle_t *)&p->in_watch); /* drops the fd from epoll */
  close(p->in_fd);
  p->in_fd = -1;
  free(p->input);
  p->input = NULL;
}

static void in_writable_cb(uv_poll_t *w, int status, int events);

/* Writes what the pipe takes; waits for room on the loop for the rest. */
static void write_input(tg_proc *p) {
  while (p->input_off < p->input_len) {
    ssize_t n = write_quiet(p->in_fd, p->input + p->input_off,
                            p->input_len - p->input_off);
    if (n > 0) {
      p->input_off += (size_t)n;
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      uv_poll_start(&p->in_watch, UV_WRITABLE, in_writable_cb);
      return;
    } else {
      break; /* EPIPE: the command stopped reading; its choice */
    }
  }
  close_input(p);
}

static void in_writable_cb(uv_poll_t *w, int status, int events) {
  write_input(w->data);
}

/* ---- exit and stopping -------------------------------------------------------- */

/* Kills the group; a group already gone is not an error. */
static void kill_group(tg_proc *p, int sig) {
  if (kill(-p->pid, sig) < 0 && errno != ESRCH) kill(p->pid, sig);
}

static void drain_cb(uv_timer_t *t) {
  tg_proc *p = t->data;
  /* The shell is gone but a pipe stays open: a process that left the
   * group (setsid) holds it. Stop waiting for it. */
  for (int i = 0; i < 2; i++) stream_done(p, &p->out[i]);
  maybe_finish(p);
}

static void finish(tg_proc *p) {
  p->finished = 1;
  uv_timer_stop(&p->deadline);
  uv_timer_stop(&p->killer);
  close_input(p);
  if (p->on_exit) p->on_exit(p, p->ud);
  if (p->released) close_all(p);
}

static void maybe_finish(tg_proc *p) {
  if (p->finished || !p->reaped || p->out[0].open || p->out[1].open) return;
  finish(p);
}

static void reaped(tg_proc *p) {
  p->reaped = 1;
  p->end_ms = tg__now_ms();
  close_handle(p, (uv_handle_t *)&p->exit_watch);
  if (p->pidfd >= 0) close(p->pidfd);
  p->pidfd = -1;
  close_handle(p, (uv_handle_t *)&p->reap_timer);
  uv_timer_stop(&p->deadline);
  if (p->out[0].open || p->out[1].open) { /* let the pipes drain */
    uv_timer_stop(&p->killer);
    uv_timer_start(&p->killer, drain_cb, p->grace_ms, 0);
  }
  maybe_finish(p);
}

/* Peeks (WNOWAIT) first: leftovers in the group are killed while the
 * zombie shell still holds the group id, so the id cannot have been
 * reused by then. */
static void try_reap(tg_proc *p) {
  siginfo_t si;
  memset(&si, 0, sizeof si);
  int rc = waitid(P_PID, (id_t)p->pid, &si, WEXITED | WNOHANG | WNOWAIT);
  if (rc == 0 && si.si_pid == 0) return; /* still running */
  if (rc < 0 && errno != ECHILD) return;  /* try again on the next turn */
  /* ECHILD: someone else reaped the shell (a host ignoring SIGCHLD), so
   * its id may already belong to another process group: kill nothing. */
  if (rc == 0) {
    kill_group(p, SIGKILL);
    int st = 0;
    pid_t r;
    while ((r = waitpid(p->pid, &st, 0)) < 0 && errno == EINTR) {}
    if (r == p->pid) {
      p->status = st;
      p->status_known = 1;
    }
  }
  reaped(p); /* ECHILD: reaped by someone else; the status is unknown */
}

static void exit_watch_cb(uv_poll_t *w, int status, int events) {
  try_reap(w->data);
}

static void reap_timer_cb(uv_timer_t *t) { try_reap(t->data); }

static void kill_cb(uv_timer_t *t) {
  tg_proc *p = t->data;
  if (!p->reaped) kill_group(p, SIGKILL);
}

void tg__proc_stop(tg_proc *p, tg_proc_stop_reason why, int at_once) {
  if (p->finished) return;
  if (!p->stop) p->stop = why;
  if (p->reaped) { /* only the pipes are left: stop waiting for them */
    drain_cb(&p->killer);
    return;
  }
  if (at_once) {
    kill_group(p, SIGKILL);
    return;
  }
  if (p->term_sent) return; /* SIGKILL follows when the grace is over */
  p->term_sent = 1;
  kill_group(p, SIGTERM);
  kill_group(p, SIGCONT); /* a stopped process must run to see SIGTERM */
  uv_timer_start(&p->killer, kill_cb, p->grace_ms, 0);
}

static void deadline_cb(uv_timer_t *t) {
  tg__proc_stop(t->data, TG_PROC_TIMEOUT, 0);
}

void tg__proc_release(tg_proc *p) {
  p->released = 1;
  p->on_output = NULL;
  p->on_exit = NULL;
  if (p->finished) close_all(p);
  else tg__proc_stop(p, TG_PROC_CANCEL, p->core->freeing);
}

void tg__procs_kill(tg_core *core) {
  for (tg_proc *p = core->procs; p; p = p->next)
    if (!p->finished) kill_group(p, SIGKILL);
}

void tg__procs_shutdown(tg_core *core) {
  for (tg_proc *p = core->procs; p; p = p->next)
    tg__proc_stop(p, TG_PROC_CANCEL, 1); /* SIGKILL, or stop draining */
  while (core->procs) uv_run(core->loop, UV_RUN_ONCE);
}

/* ---- spawning ------------------------------------------------------------------ */

/* environ with the "NAME=value" overrides in env replacing or adding
 * entries. The strings are borrowed; free only the array. */
static char **merged_env(char *const *env) {
  size_t n = 0, m = 0;
  while (environ[n]) n++;
  while (env[m]) m++;
  char **out = malloc((n + m + 1) * sizeof *out);
  if (!out) return NULL;
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    const char *eq = strchr(environ[i], '=');
    size_t klen = eq ? (size_t)(eq - environ[i]) : strlen(environ[i]);
    int overridden = 0;
    for (size_t j = 0; j < m && !overridden; j++)
      overridden = strncmp(env[j], environ[i], klen) == 0 && env[j][klen] == '=';
    if (!overridden) out[k++] = environ[i];
  }
  for (size_t j = 0; j < m; j++) out[k++] = env[j];
  out[k] = NULL;
  return out;
}

/* A pipe whose two fds are above 0-2 (a host may have closed its stdio:
 * dup2 onto the child's 0-2 must not clobber one of ours). */
static int make_pipe(int fds[2]) {
  if (pipe2(fds, O_CLOEXEC) < 0) return -errno;
  for (int i = 0; i < 2; i++) {
    if (fds[i] > 2) continue;
    int hi = fcntl(fds[i], F_DUPFD_CLOEXEC, 3);
    if (hi < 0) {
      int e = errno;
      close(fds[0]);
      close(fds[1]);
      return -e;
    }
    close(fds[i]);
    fds[i] = hi;
  }
  return 0;
}

static void close_fd(int *fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

/* The signals a host may have ignored or caught that the command must
 * get with their default action. */
static void default_signals(sigset_t *s) {
  static const int sigs[] = {SIGPIPE, SIGINT,  SIGQUIT, SIGTERM, SIGHUP,
                             SIGCHLD, SIGTSTP, SIGTTIN, SIGTTOU, SIGALRM,
                             SIGUSR1, SIGUSR2, SIGWINCH};
  sigemptyset(s);
  for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) sigaddset(s, sigs[i]);
}

/* posix_spawn of /bin/sh -c command in a new group. Returns 0 or an errno. */
static int spawn_shell(const tg_proc_opts *o, int in_fd, int out_fd, int err_fd,
                       pid_t *pid) {
  char **envp = o->env ? merged_env(o->env) : NULL;
  if (o->env && !envp) return ENOMEM;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_t fa;
  sigset_t none, dfl;
  sigemptyset(&none);
  default_signals(&dfl);
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP |
                                      POSIX_SPAWN_SETSIGMASK |
                                      POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(&attr, 0); /* its own group: pgid = pid */
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &dfl);
  posix_spawn_file_actions_init(&fa);
  if (in_fd >= 0) posix_spawn_file_actions_adddup2(&fa, in_fd, 0);
  else posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
  posix_spawn_file_actions_adddup2(&fa, err_fd, 2);
  posix_spawn_file_actions_addclosefrom_np(&fa, 3); /* a host's fds stay its own */
  if (o->cwd) posix_spawn_file_actions_addchdir_np(&fa, o->cwd);
  char *argv[] = {"sh", "-c", (char *)o->command, NULL};
  int rc = posix_spawn(pid, "/bin/sh", &fa, &attr, argv, envp ? envp : environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  free(envp);
  return rc;
}

static void spawn_error(const tg_proc_opts *o, int e, char *err, size_t n) {
  struct stat st;
  if (o->cwd && stat(o->cwd, &st) < 0)
    snprintf(err, n, "cannot run the command: the working directory '%s' "
             "does not exist or cannot be reached (%s); pass an existing "
             "directory as cwd", o->cwd, strerror(errno));
  else if (o->cwd && !S_ISDIR(st.st_mode))
    snprintf(err, n, "cannot run the command: cwd '%s' is not a directory",
             o->cwd);
  else if (o->cwd && e == EACCES)
    snprintf(err, n, "cannot run the command: no permission to enter the "
             "working directory '%s'", o->cwd);
  else
    snprintf(err, n, "cannot run /bin/sh for the command: %s", strerror(e));
}

/* Wraps the parent's pipe ends and the pidfd into loop handles. */
static int watch(tg_proc *p, int out_fd, int err_fd, int in_fd) {
  uv_loop_t *loop = p->core->loop;
  int fds[2] = {out_fd, err_fd};
  uv_timer_init(loop, &p->deadline);
  handle_opened(p, (uv_handle_t *)&p->deadline);
  uv_timer_init(loop, &p->killer);
  handle_opened(p, (uv_handle_t *)&p->killer);
  for (int i = 0; i < 2; i++) {
    stream *s = &p->out[i];
    uv_pipe_init(loop, &s->pipe, 0);
    handle_opened(p, (uv_handle_t *)&s->pipe);
    int rc = uv_pipe_open(&s->pipe, fds[i]);
    if (rc < 0) { /* the fds not adopted by a handle are still ours */
      for (int j = i; j < 2; j++) close(fds[j]);
      return rc;
    }
    s->open = 1;
    uv_read_start((uv_stream_t *)&s->pipe, alloc_cb, read_cb);
  }
  if (in_fd >= 0) {
    int rc = uv_poll_init(loop, &p->in_watch, in_fd);
    if (rc < 0) return rc;
    handle_opened(p, (uv_handle_t *)&p->in_watch);
  }
  p->pidfd = (int)syscall(SYS_pidfd_open, p->pid, 0);
  if (p->pidfd >= 0 && uv_poll_init(loop, &p->exit_watch, p->pidfd) == 0) {
    handle_opened(p, (uv_handle_t *)&p->exit_watch);
    return uv_poll_start(&p->exit_watch, UV_READABLE, exit_watch_cb);
  }
  close_fd(&p->pidfd); /* no pidfd: poll waitid on a timer */
  uv_timer_init(loop, &p->reap_timer);
  handle_opened(p, (uv_handle_t *)&p->reap_timer);
  return uv_timer_start(&p->reap_timer, reap_timer_cb, REAP_POLL_MS,
                        REAP_POLL_MS);
}

/* The command cannot be supervised on the loop, so it must not run: kill
 * the group and reap the shell here (SIGKILL is not delayed: this waits
 * for the kernel only), then let the handles close. */
static void abandon(tg_proc *p) {
  kill_group(p, SIGKILL);
  while (waitpid(p->pid, NULL, 0) < 0 && errno == EINTR) {}
  for (int i = 0; i < 2; i++) stream_done(p, &p->out[i]);
  close_input(p);
  p->reaped = p->finished = p->released = 1;
  close_all(p);
  close_fd(&p->pidfd); /* after its poll handle let go of it */
}

static tg_proc *proc_new(tg_core *core, const tg_proc_opts *o) {
  tg_proc *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  if (o->input) {
    p->input = malloc(o->input_len ? o->input_len : 1);
    if (!p->input) {
      free(p);
      return NULL;
    }
    memcpy(p->input, o->input, o->input_len);
    p->input_len = o->input_len;
  }
  p->core = core;
  p->pidfd = p->in_fd = -1;
  p->closer.closed = handles_closed;
  for (int i = 0; i < 2; i++) tg__capture_init(&p->out[i].kept, o->cap);
  p->grace_ms = o->kill_grace_ms;
  p->next = core->procs;
  if (core->procs) core->procs->prev = p;
  core->procs = p;
  return p;
}

/* posix_spawn reports a failed chdir too, but a C library (or valgrind)
 * that runs the child as a plain fork cannot: the child would just exit
 * 127. One stat up front gives the clear error everywhere. */
static int cwd_usable(const tg_proc_opts *o, char *err, size_t errlen) {
  struct stat st;
  if (!o->cwd || (stat(o->cwd, &st) == 0 && S_ISDIR(st.st_mode))) return 0;
  spawn_error(o, ENOENT, err, errlen);
  return -ENOENT;
}

int tg__proc_spawn(tg_core *core, const tg_proc_opts *o,
                   tg_proc_output_fn on_output, tg_proc_exit_fn on_exit,
                   void *ud, tg_proc **out, char *err, size_t errlen) {
  int outp[2] = {-1, -1}, errp[2] = {-1, -1}, inp[2] = {-1, -1};
  if (cwd_usable(o, err, errlen) < 0) return -ENOENT;
  int rc = make_pipe(outp);
  if (rc == 0) rc = make_pipe(errp);
  if (rc == 0 && o->input) rc = make_pipe(inp);
  tg_proc *p = rc == 0 ? proc_new(core, o) : NULL;
  if (rc == 0 && !p) rc = -ENOMEM;
  if (rc < 0) {
    snprintf(err, errlen, "cannot run the command: %s", strerror(-rc));
  } else if ((rc = spawn_shell(o, inp[0], outp[1], errp[1], &p->pid)) != 0) {
    spawn_error(o, rc, err, errlen);
    rc = -rc;
  }
  close_fd(&outp[1]); /* the child's ends: it has its own copies */
  close_fd(&errp[1]);
  close_fd(&inp[0]);
  if (rc < 0) {
    close_fd(&outp[0]);
    close_fd(&errp[0]);
    close_fd(&inp[1]);
    if (p) proc_free(p);
    return rc;
  }
  p->start_ms = tg__now_ms();
  p->on_output = on_output;
  p->on_exit = on_exit;
  p->ud = ud;
  p->in_fd = inp[1];
  rc = watch(p, outp[0], errp[0], inp[1]);
  if (rc < 0) {
    snprintf(err, errlen, "cannot watch the command: %s", uv_strerror(rc));
    abandon(p);
    return rc;
  }
  if (p->in_fd >= 0) write_input(p);
  if (o->timeout_ms) uv_timer_start(&p->deadline, deadline_cb, o->timeout_ms, 0);
  *out = p;
  return 0;
}
