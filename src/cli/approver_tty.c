/*
 * approver_tty.c — the interactive approver of `toolgate call`.
 *
 * One ask at a time (the CLI runs one call). The answer is a small dialogue,
 * one line per step:
 *   approve? [y]es / [A]lways / [n]o      y, a: approve; A, always: always;
 *                                         n, r: reject
 *   always for: the whole [t]ool, these exact [a]rgs, or a [p]attern?
 *   pattern, as ARG=GLOB:                 after p: command=npm test*
 *   remember for this [s]ession or this [p]roject?
 *   until (10m, 2h, 2025-07-01; empty: forever):
 *   reason (optional):                    passed to the agent as guidance
 * The terminal stays in its normal (line) mode: the kernel does the line
 * editing, and Ctrl-C still raises SIGINT.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "approver_tty.h"
#include "kit/output.h"
#include "kit/kit.h"

typedef enum {
  ASK_IDLE,    /* nothing asked, not reading */
  ASK_ANSWER,  /* waiting for y / A / n */
  ASK_SCOPE,   /* after "always": tool, args or pattern */
  ASK_PATTERN, /* after "pattern": ARG=GLOB */
  ASK_WHERE,   /* session or project */
  ASK_UNTIL,   /* a time, or forever */
  ASK_REASON   /* after "no": the guidance line */
} ask_state;

struct tty_approver {
  uv_tty_t tty;        /* tty.data points back here */
  int tty_open;
  int tty_gone;        /* EOF or a read error: nobody to ask any more */
  tg_runtime *rt;
  ask_state state;
  uint64_t approval_id;
  int color;
  char rbuf[256];      /* libuv reads into this */
  char line[1024];     /* the line being typed; longer lines are cut */
  size_t len;
  tg_always_spec always; /* what an "always" covers, as it is answered */
  char arg[128], glob[896]; /* its pattern (always.arg, always.glob) */
};

int tty_approver_possible(void) {
  return isatty(STDIN_FILENO) && isatty(STDERR_FILENO);
}

int tty_approver_pending(const tty_approver *a) {
  return a && a->state != ASK_IDLE;
}

/* ---- prompts -------------------------------------------------------- */

static void prompt(tty_approver *a, const char *text) {
  cli_sgr(stderr, a->color, "1");
  fputs(text, stderr);
  cli_sgr(stderr, a->color, "0");
  fflush(stderr);
}

static void print_field(tty_approver *a, const char *name, const char *value) {
  if (!value) return;
  cli_sgr(stderr, a->color, "2");
  fprintf(stderr, "  %-7s", name);
  cli_sgr(stderr, a->color, "0");
  fprintf(stderr, "%s\n", value);
}

static void print_request(tty_approver *a, const tg_approval_request *req) {
  char *args = req->args ? tg_json_print(req->args, 0) : NULL;
  cli_sgr(stderr, a->color, "1;33");
  fputs("toolgate: approval needed", stderr);
  cli_sgr(stderr, a->color, "0");
  fputc('\n', stderr);
  print_field(a, "tool", req->tool);
  print_field(a, "args", args ? args : "{}");
  print_field(a, "rule", req->rule ? req->rule : "(default: ask)");
  print_field(a, "asks", req->prompt);
  free(args);
}

/* ---- answering ------------------------------------------------------ */

static int start_reading(tty_approver *a);

static void answer(tty_approver *a, tg_answer ans, tg_always_scope scope,
                   const char *guidance) {
  uint64_t id = a->approval_id;
  a->state = ASK_IDLE;
  a->approval_id = 0;
  if (a->tty_open) uv_read_stop((uv_stream_t *)&a->tty);
  /* The call may run (and end) inside this. */
  int rc = tg_approval_answer(a->rt, id, ans, scope, guidance);
  if (rc == -ENOENT)
    cli_error("too late: the approval timed out (or the call ended) before "
              "the answer; the call was not approved");
  else if (rc < 0)
    cli_error("the answer was refused: %s", strerror(-rc));
}

static int is_one_of(const char *s, const char *a, const char *b) {
  return strcmp(s, a) == 0 || strcmp(s, b) == 0;
}

static const char scope_prompt[] =
    "always for: the whole [t]ool, these exact [a]rgs, or a [p]attern on "
    "one argument? [t/a/p] ";

static void on_answer_line(tty_approver *a, const char *s) {
  if (is_one_of(s, "y", "a") || is_one_of(s, "Y", "yes")) {
    answer(a, TG_ANSWER_APPROVE, TG_SCOPE_TOOL, NULL);
  } else if (is_one_of(s, "A", "always")) {
    memset(&a->always, 0, sizeof a->always);
    a->state = ASK_SCOPE;
    prompt(a, scope_prompt);
  } else if (is_one_of(s, "n", "r") || is_one_of(s, "N", "no")) {
    a->state = ASK_REASON;
    prompt(a, "reason (optional): ");
  } else {
    prompt(a, "please answer y (approve), A (always) or n (reject): ");
  }
}

static void ask_where(tty_approver *a) {
  a->state = ASK_WHERE;
  prompt(a, "remember for this [s]ession or this [p]roject (every session "
            "started in this folder)? [s/p] ");
}

static void on_scope_line(tty_approver *a, const char *s) {
  if (is_one_of(s, "a", "args")) {
    a->always.scope = TG_SCOPE_ARGS;
    ask_where(a);
  } else if (is_one_of(s, "t", "tool")) {
    a->always.scope = TG_SCOPE_TOOL;
    ask_where(a);
  } else if (is_one_of(s, "p", "pattern")) {
    a->state = ASK_PATTERN;
    prompt(a, "pattern, as ARG=GLOB ('*' stops at '/', '**' does not; like "
              "command=npm test*): ");
  } else {
    prompt(a, scope_prompt);
  }
}

/* ARG=GLOB: a glob on the string value of the call's argument ARG. */
static void on_pattern_line(tty_approver *a, const char *s) {
  const char *eq = strchr(s, '=');
  char err[TG_ERRMSG];
  size_t n = eq ? (size_t)(eq - s) : 0;
  if (!eq || !n || n >= sizeof a->arg || strlen(eq + 1) >= sizeof a->glob) {
    prompt(a, "please write ARG=GLOB, like command=npm test*: ");
    return;
  }
  if (tg_glob_check(eq + 1, err, sizeof err) < 0) {
    fprintf(stderr, "toolgate: that glob is not valid: %s\n", err);
    prompt(a, "pattern, as ARG=GLOB: ");
    return;
  }
  memcpy(a->arg, s, n);
  a->arg[n] = '\0';
  strcpy(a->glob, eq + 1);
  a->always.scope = TG_SCOPE_PATTERN;
  a->always.arg = a->arg;
  a->always.glob = a->glob;
  ask_where(a);
}

static void on_where_line(tty_approver *a, const char *s) {
  if (is_one_of(s, "s", "session")) {
    a->always.where = TG_WHERE_SESSION;
  } else if (is_one_of(s, "p", "project")) {
    a->always.where = TG_WHERE_PROJECT;
  } else {
    prompt(a, "s (this session) or p (this project)? [s/p] ");
    return;
  }
  a->state = ASK_UNTIL;
  prompt(a, "until (10m, 2h, 3d, 2025-07-01; empty: forever): ");
}

static void on_until_line(tty_approver *a, const char *s) {
  char err[TG_ERRMSG];
  a->always.until_ms = 0;
  int64_t now = 0;
  tg_time_parse("now", 0, 0, &now, err);
  if (*s && tg_time_parse(s, 0, 1, &a->always.until_ms, err) < 0) {
    fprintf(stderr, "toolgate: %s\n", err);
    prompt(a, "until (empty: forever): ");
    return;
  }
  if (a->always.until_ms && a->always.until_ms <= now) {
    prompt(a, "that time is past; until (empty: forever): ");
    return;
  }
  uint64_t id = a->approval_id;
  a->state = ASK_IDLE;
  a->approval_id = 0;
  if (a->tty_open) uv_read_stop((uv_stream_t *)&a->tty);
  /* The call may run (and end) inside this. */
  int rc = tg_approval_answer_always(a->rt, id, &a->always, err);
  if (rc == -ENOENT) {
    cli_error("too late: the approval timed out (or the call ended) before "
              "the answer; the call was not approved");
  } else if (rc < 0) {
    /* refused (a pattern holding a credential): the call still waits for
     * an answer; ask again rather than leave it to time out */
    cli_error("the answer was refused: %s", err);
    if (start_reading(a) < 0) {
      tg_approval_answer(a->rt, id, TG_ANSWER_REJECT, TG_SCOPE_TOOL, NULL);
      return;
    }
    a->approval_id = id;
    a->state = ASK_ANSWER;
    a->len = 0;
    prompt(a, "approve? [y]es / [A]lways / [n]o: ");
  }
}

/* Trims blanks both ends, in place. */
static char *trim(char *s) {
  while (isspace((unsigned char)*s)) s++;
  size_t n = strlen(s);
  while (n && isspace((unsigned char)s[n - 1])) s[--n] = '\0';
  return s;
}

static void on_line(tty_approver *a, char *raw) {
  char *s = trim(raw);
  switch (a->state) {
    case ASK_ANSWER: on_answer_line(a, s); break;
    case ASK_SCOPE: on_scope_line(a, s); break;
    case ASK_PATTERN: on_pattern_line(a, s); break;
    case ASK_WHERE: on_where_line(a, s); break;
    case ASK_UNTIL: on_until_line(a, s); break;
    case ASK_REASON:
      answer(a, TG_ANSWER_REJECT, TG_SCOPE_TOOL, *s ? s : NULL);
      break;
    case ASK_IDLE: break; /* typed ahead: not an answer to anything */
  }
}

/* ---- reading the terminal ------------------------------------------ */

static void on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf) {
  tty_approver *a = h->data;
  *buf = uv_buf_init(a->rbuf, sizeof a->rbuf);
}

static void feed(tty_approver *a, const char *p, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (p[i] != '\n') {
      if (a->len < sizeof a->line - 1) a->line[a->len++] = p[i];
      continue;
    }
    a->line[a->len] = '\0';
    a->len = 0;
    on_line(a, a->line);
  }
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf) {
  tty_approver *a = s->data;
  if (nread > 0) {
    feed(a, buf->base, (size_t)nread);
    return;
  }
  if (nread == 0) return; /* EAGAIN */
  /* Ctrl-D or a read error: nobody is left to answer; reject. */
  a->tty_gone = 1;
  uv_read_stop(s);
  if (a->state != ASK_IDLE) {
    fputc('\n', stderr);
    cli_error("no answer (%s): the call is rejected",
              nread == UV_EOF ? "end of input" : uv_strerror((int)nread));
    answer(a, TG_ANSWER_REJECT, TG_SCOPE_TOOL, NULL);
  }
}

static int open_tty(tty_approver *a) {
  uv_loop_t *loop = tg_runtime_loop(a->rt);
  int rc = uv_tty_init(loop, &a->tty, STDIN_FILENO, 1);
  if (rc < 0) return rc;
  a->tty.data = a;
  a->tty_open = 1;
  return uv_tty_set_mode(&a->tty, UV_TTY_MODE_NORMAL);
}

static int start_reading(tty_approver *a) {
  if (a->tty_gone) return UV_EOF;
  int rc = a->tty_open ? 0 : open_tty(a);
  if (rc == 0) rc = uv_read_start((uv_stream_t *)&a->tty, on_alloc, on_read);
  return rc;
}

static void on_ask(tg_runtime *rt, const tg_approval_request *req, void *ud) {
  tty_approver *a = ud;
  if (a->state != ASK_IDLE) {
    /* not expected with one call; never leave an ask unanswered */
    tg_approval_answer(rt, req->approval_id, TG_ANSWER_REJECT, TG_SCOPE_TOOL,
                       "another approval was already waiting");
    return;
  }
  int rc = start_reading(a);
  if (rc < 0) {
    cli_error("cannot read the answer from the terminal (%s): rejected",
              uv_strerror(rc));
    tg_approval_answer(rt, req->approval_id, TG_ANSWER_REJECT, TG_SCOPE_TOOL,
                       NULL);
    return;
  }
  a->approval_id = req->approval_id;
  a->state = ASK_ANSWER;
  a->len = 0;
  print_request(a, req);
  prompt(a, "approve? [y]es / [A]lways / [n]o: ");
}

/* ---- life cycle ----------------------------------------------------- */

tty_approver *tty_approver_new(tg_runtime *rt) {
  tty_approver *a = calloc(1, sizeof *a);
  if (!a) return NULL;
  a->rt = rt;
  a->color = cli_color_wanted(stderr);
  tg_runtime_set_approver(rt, on_ask, a);
  return a;
}

static void on_closed(uv_handle_t *h) { free(h->data); }

void tty_approver_close(tty_approver *a) {
  if (!a) return;
  tg_runtime_set_approver(a->rt, NULL, NULL);
  if (!a->tty_open) {
    free(a);
    return;
  }
  uv_tty_set_mode(&a->tty, UV_TTY_MODE_NORMAL);
  uv_close((uv_handle_t *)&a->tty, on_closed);
}
