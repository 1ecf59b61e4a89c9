/*
 * hook_line.c — the command line `toolgate hook install` writes into an
 * agent's settings, made to fail closed, the check that runs it once, and
 * the reader that takes such a line apart again (`toolgate doctor`). In
 * the kit because two fronts need it: the hook front writes the line, the
 * command line's doctor reads and checks it.
 *
 * Both agents take a hook's exit code 2 as "blocked" (the reason read from
 * stderr) and every other failure — the program not found (127), killed
 * by a signal, past the agent's own timeout — as a non-blocking error:
 * the tool call goes on and every guard is off, silently. Claude Code:
 * https://code.claude.com/docs/en/hooks ("Exit code 2 ... blocking
 * error"; "other exit codes ... non-blocking error"; "a timed-out command
 * hook doesn't block"). Codex reads the same hooks.json shape and exit
 * codes: https://developers.openai.com/codex/hooks (PreToolUse, "exit 2
 * with the reason on stderr" blocks the call).
 *
 * So the line is not toolgate itself but a short POSIX sh script around
 * it, run by /bin/sh whatever the agent's own shell is (fish, zsh, bash
 * all read `/bin/sh -c '...' ARGS`):
 *
 *   /bin/sh -c 'SCRIPT' toolgate-hook PROG hook AGENT --policies DIR ...
 *
 * SCRIPT runs PROG with the rest of the words, in the background with the
 * agent's stdin (fd 3: a background job's stdin is otherwise /dev/null),
 * and a watcher that kills it WATCH seconds on — before the agent's own
 * timeout, which would let the call through. toolgate's own answers exit
 * 0 or 2 (0 only, for an agent that does not read 2 as a block) and pass
 * through unchanged; any other exit (a missing program, a crash, the
 * watcher's kill) becomes the agent's fail form (its dialect's) with a
 * line on stderr: the one that blocks (exit 2; or a deny on stdout) for
 * the tool events and a prompt, the one that reports (exit 1) for a stop
 * or a session's start or end, where a block would keep the agent from
 * ever stopping. A shell script rather than a wrapper program: the wrapper has
 * to work when toolgate itself is missing, and /bin/sh is always there.
 * PROG is a shell word (the absolute path of this binary, quoted, or
 * --command's text), so it goes through eval.
 *
 * Which path of this binary: a package manager installs into a folder
 * named by the version (/opt/homebrew/Cellar/toolgate/0.1.0/bin/toolgate)
 * and links a stable name to it (/opt/homebrew/bin/toolgate); an upgrade
 * removes the old folder, and a line naming it then blocks every call.
 * So when toolgate was run by a path (argv[0] with a slash) or found in
 * PATH, and that path is this very binary and names no versioned folder,
 * the line names it — absolute, the last symlink not followed; else the
 * path /proc/self/exe gives.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <cjson/cJSON.h>
#include "hook_line.h"

/* One line, no single quote: it is put in single quotes whole. The exits
 * it lets through and what it does for any other are the agent's
 * (dialect.h: exit_2_blocks, fail_block, fail_report). */
static const char script_fmt[] =
    "c=$1; shift; exec 3<&0; eval \"$c \\\"\\$@\\\" <&3 3<&- &\"; p=$!; "
    "(trap \"kill \\$s 2>/dev/null; exit\" TERM; sleep %u & s=$!; wait $s; "
    "kill -9 $p) >/dev/null 2>&1 <&- 3<&- & w=$!; wait $p; rc=$?; "
    "kill $w 2>/dev/null; %s || { echo "
    "\"toolgate: the hook did not answer (exit $rc: 127 is a missing "
    "program, over 128 a crash or the time limit of %u s), so this is "
    "%s; run toolgate hook install again\" >&2; %s; }; exit $rc";

/* The wrapper script for an agent's hook that blocks or reports. */
static int script_of(char *out, size_t len, const tg_dialect_install *in,
                     int blocks, unsigned watch_s) {
  const char *fail = blocks ? in->fail_block : in->fail_report;
  if (!fail || strchr(fail, '\'')) return -1;
  int n = snprintf(out, len, script_fmt, watch_s,
                   in->exit_2_blocks ? "[ $rc -eq 0 ] || [ $rc -eq 2 ]"
                                     : "[ $rc -eq 0 ]",
                   watch_s, blocks ? "blocked" : "reported", fail);
  return n > 0 && (size_t)n < len ? 0 : -1;
}

void hook_quote(char *out, size_t len, const char *s) {
  if (*s && s[strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                        "0123456789/._-+:,=@")] == '\0') {
    snprintf(out, len, "%s", s);
    return;
  }
  size_t n = 0;
  if (len < 3) {
    if (len) out[0] = '\0';
    return;
  }
  out[n++] = '\'';
  for (; *s && n + 6 < len; s++) {
    if (*s == '\'') {
      memcpy(out + n, "'\\''", 4);
      n += 4;
    } else {
      out[n++] = *s;
    }
  }
  out[n++] = '\'';
  out[n] = '\0';
}

static const char *argv0; /* how this process was run (main.c) */

void kit_set_argv0(const char *a) { argv0 = a; }

/* A version-like folder name: a digit then digits, dots, letters
 * ("0.1.0", "1.2.3_1"), or NAME-VERSION ("toolgate-0.1.0"). */
static int versioned_name(const char *s, size_t n) {
  size_t i = 0;
  for (size_t k = 0; k + 1 < n; k++) /* NAME-VERSION: after the last dash */
    if (s[k] == '-' && s[k + 1] >= '0' && s[k + 1] <= '9') i = k + 1;
  if (i >= n || s[i] < '0' || s[i] > '9') return 0;
  int dot = 0;
  for (size_t k = i; k < n; k++) dot |= s[k] == '.';
  return dot;
}

int hook_path_versioned(const char *path) {
  if (strstr(path, "/Cellar/") || !strncmp(path, "/nix/store/", 11))
    return 1;
  const char *end = strrchr(path, '/'); /* the folders, not the name */
  for (const char *p = path; end && p < end;) {
    while (*p == '/') p++;
    size_t n = strcspn(p, "/");
    if (p + n <= end && n && versioned_name(p, n)) return 1;
    p += n;
  }
  return 0;
}

/* name's first executable in PATH, absolute (a relative PATH entry
 * joined to cwd), into out: 1, or 0 when none. */
static int find_in_path(const char *name, char *out, size_t len) {
  const char *path = getenv("PATH");
  char cwd[PATH_MAX];
  while (path && *path) {
    size_t n = strcspn(path, ":");
    int rel = path[0] != '/';
    if (rel && !getcwd(cwd, sizeof cwd)) return 0;
    int w = snprintf(out, len, "%s%s%.*s/%s", rel ? cwd : "", rel ? "/" : "",
                     (int)n, path, name);
    if (n && w > 0 && (size_t)w < len && access(out, X_OK) == 0) return 1;
    path += n + (path[n] == ':');
  }
  return 0;
}

int hook_stable_on_path(char *out, size_t len) {
  return find_in_path("toolgate", out, len) && !hook_path_versioned(out);
}

/* The path this process was run by, when it is self (the same file) and
 * names no versioned folder: absolute, its last symlink kept. */
static int stable_self(const char *self, char *out, size_t len) {
  char cwd[PATH_MAX];
  if (!argv0 || !*argv0) return 0;
  if (strchr(argv0, '/')) {
    const char *a = argv0;
    while (a[0] == '.' && a[1] == '/') a += 2;
    if (a[0] == '/') snprintf(out, len, "%s", a);
    else if (!getcwd(cwd, sizeof cwd) ||
             snprintf(out, len, "%s/%s", cwd, a) >= (int)len)
      return 0;
  } else if (!find_in_path(argv0, out, len)) {
    return 0;
  }
  struct stat a, b;
  if (stat(out, &a) < 0 || stat(self, &b) < 0 || a.st_dev != b.st_dev ||
      a.st_ino != b.st_ino)
    return 0; /* not this binary */
  return !hook_path_versioned(out);
}

int hook_line_program(char *out, size_t len) {
  char self[PATH_MAX], stable[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return -1;
  self[n] = '\0';
  /* a binary replaced while running reads "PATH (deleted)" */
  if (access(self, X_OK) < 0) return -1;
  hook_quote(out, len, stable_self(self, stable, sizeof stable) ? stable : self);
  return 0;
}

int hook_line(char *out, size_t len, const char *prog, const char *args,
              const tg_dialect_install *in, int blocks, unsigned watch_s) {
  char script[2048], qscript[4096], qprog[PATH_MAX * 4 + 64];
  if (script_of(script, sizeof script, in, blocks, watch_s) < 0) return -1;
  int n;
  hook_quote(qscript, sizeof qscript, script);
  hook_quote(qprog, sizeof qprog, prog);
  n = snprintf(out, len, "/bin/sh -c %s toolgate-hook %s %s", qscript, qprog,
               args);
  return n > 0 && (size_t)n < len ? 0 : -1;
}

/* The file's text (at most cap bytes), malloc'd. */
static char *slurp(int fd, size_t cap) {
  char *b = malloc(cap + 1);
  size_t n = 0;
  ssize_t r;
  if (!b) return NULL;
  lseek(fd, 0, SEEK_SET);
  while (n < cap && (r = read(fd, b + n, cap - n)) > 0) n += (size_t)r;
  b[n] = '\0';
  while (n && (b[n - 1] == '\n' || b[n - 1] == '\r')) b[--n] = '\0';
  return b;
}

int hook_line_check(const char *line, const char *cwd, const tg_dialect *d,
                    hook_line_result *res) {
  memset(res, 0, sizeof res[0]);
  res->code = -1;
  char event[PATH_MAX * 2 + 256];
  /* a shell command that never runs: the hook only judges it */
  cJSON *ev = d->install.check_event(cwd);
  char *text = ev ? cJSON_PrintUnformatted(ev) : NULL;
  cJSON_Delete(ev);
  if (!text) return -ENOMEM;
  snprintf(event, sizeof event, "%s", text);
  free(text);
  /* the line as written, told to record nothing and start nothing */
  size_t cl = strlen(line) + 64;
  char *cmd = malloc(cl);
  if (!cmd) return -ENOMEM;
  snprintf(cmd, cl, "%s --no-resident --no-db", line);
  char op[] = "/tmp/toolgate-check-XXXXXX", ep[] = "/tmp/toolgate-check-XXXXXX";
  int out = mkstemp(op), err = out < 0 ? -1 : mkstemp(ep), in[2] = {-1, -1};
  if (out >= 0) unlink(op);
  if (err >= 0) unlink(ep);
  if (out < 0 || err < 0 || pipe(in) < 0) {
    int e = errno;
    if (out >= 0) close(out);
    if (err >= 0) close(err);
    free(cmd);
    return -e;
  }
  pid_t pid = fork();
  if (pid == 0) {
    dup2(in[0], 0);
    dup2(out, 1);
    dup2(err, 2);
    close(in[0]);
    close(in[1]);
    if (d->install.project_var) setenv(d->install.project_var, cwd, 1);
    execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
    _exit(127);
  }
  close(in[0]);
  free(cmd);
  if (pid > 0) {
    size_t el = strlen(event);
    if (write(in[1], event, el) != (ssize_t)el) { /* it answers anyway */ }
  }
  close(in[1]);
  int st = 0, rc = 0;
  if (pid < 0) rc = -errno;
  else while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
  if (rc == 0) {
    res->code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    res->out = slurp(out, 4096);
    res->err = slurp(err, 4096);
  }
  close(out);
  close(err);
  return rc;
}

void hook_line_result_free(hook_line_result *res) {
  free(res->out);
  free(res->err);
  res->out = res->err = NULL;
}

/* ---- reading a line back ------------------------------------------------ */

#define SAFE_BARE "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ" \
                  "0123456789/._-+:,=@"
#define MAX_WORDS 32

/* The length of "$VAR" at p, VAR an agent's project variable
 * ($CLAUDE_PROJECT_DIR, $CURSOR_PROJECT_DIR, ...), quoted as an install
 * writes it; 0 when p holds none. */
static size_t project_var_at(const char *p) {
  const tg_dialect *d;
  for (size_t i = 0; (d = tg__dialect_at(i)); i++) {
    const char *v = d->install.project_var;
    size_t n = v ? strlen(v) : 0;
    if (n && !strncmp(p, "\"$", 2) && !strncmp(p + 2, v, n) && p[2 + n] == '"')
      return n + 3;
  }
  return 0;
}

/* The next sh word of *s into out: bare safe characters, 'single quoted'
 * text, a backslash before one character, and an agent's project variable
 * ("$CLAUDE_PROJECT_DIR", kept as written without its quotes) — nothing a
 * shell would expand, redirect or run. 1 with a word, 0 at the end, -1 on
 * anything else. */
static int next_word(const char **s, char *out, size_t len) {
  const char *p = *s;
  size_t n = 0;
  while (*p == ' ') p++;
  if (!*p) return 0;
  while (*p && *p != ' ') {
    if (*p == '\'') {
      const char *q = strchr(p + 1, '\'');
      if (!q || n + (size_t)(q - p - 1) >= len) return -1;
      memcpy(out + n, p + 1, (size_t)(q - p - 1));
      n += (size_t)(q - p - 1);
      p = q + 1;
    } else if (*p == '\\' && p[1] && p[1] != '\n') {
      if (n + 1 >= len) return -1;
      out[n++] = p[1];
      p += 2;
    } else if (project_var_at(p)) {
      size_t v = project_var_at(p) - 2; /* "$VAR" less its quotes */
      if (n + v >= len) return -1;
      memcpy(out + n, p + 1, v);
      n += v;
      p += v + 2;
    } else if (strchr(SAFE_BARE, *p)) {
      if (n + 1 >= len) return -1;
      out[n++] = *p++;
    } else {
      return -1;
    }
  }
  out[n] = '\0';
  *s = p;
  return 1;
}

static void say(char *why, size_t len, const char *text) {
  if (len) snprintf(why, len, "%s", text);
}

int hook_line_parse(const char *line, hook_line_parts *p, char *why,
                    size_t len) {
  memset(p, 0, sizeof *p);
  char (*words)[4096] = malloc(MAX_WORDS * sizeof *words);
  int n = 0, r = 0, rc = -1;
  if (!words) {
    say(why, len, "out of memory");
    return -1;
  }
  const char *s = line;
  while (n < MAX_WORDS && (r = next_word(&s, words[n], sizeof words[n])) == 1)
    n++;
  if (n == MAX_WORDS || r < 0) {
    say(why, len, "it holds shell text other than plain words");
    goto out;
  }
  if (n < 7 || strcmp(words[0], "/bin/sh") || strcmp(words[1], "-c") ||
      strcmp(words[3], "toolgate-hook") || strcmp(words[5], "hook")) {
    say(why, len, "it is not the line an install writes (the fail-closed "
        "wrapper around toolgate)");
    goto out;
  }
  /* the wrapper itself, byte for byte, for its time limit and exit: one
   * the agent named after "hook" is given */
  const tg_dialect *d = tg__dialect(words[6]);
  const char *sl = strstr(words[2], "sleep ");
  unsigned w = sl ? (unsigned)strtoul(sl + 6, NULL, 10) : 0;
  int same = 0;
  for (int blocks = 0; d && blocks <= 1 && !same; blocks++) {
    char script[2048];
    same = script_of(script, sizeof script, &d->install, blocks, w) == 0 &&
           !strcmp(script, words[2]);
  }
  if (!same) {
    say(why, len, "its wrapper script is not one an install writes");
    goto out;
  }
  /* the program word is read once more by the wrapper's eval */
  const char *pw = words[4];
  char prog[PATH_MAX], rest[8];
  if (next_word(&pw, prog, sizeof prog) != 1 ||
      next_word(&pw, rest, sizeof rest) != 0) {
    say(why, len, "it runs more than one program word (--command?)");
    goto out;
  }
  snprintf(p->prog, sizeof p->prog, "%s", prog);
  snprintf(p->agent, sizeof p->agent, "%.31s", words[6]);
  for (int i = 7; i + 1 < n; i++)
    if (!strcmp(words[i], "--policies"))
      snprintf(p->policies, sizeof p->policies, "%.*s", PATH_MAX - 1,
               words[i + 1]);
  rc = 0;
out:
  free(words);
  return rc;
}
