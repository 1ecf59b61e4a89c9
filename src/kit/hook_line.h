/*
 * hook_line.h — the command line `toolgate hook install` writes into an
 * agent's settings (a /bin/sh script around this binary that fails
 * closed), the check that runs it once on a harmless event, and the
 * reader that takes a written line apart again. The hook front writes and
 * checks it after an install; `toolgate doctor` (the command line) reads
 * and checks what is installed: two fronts, so it is the kit's.
 */
#ifndef TOOLGATE_KIT_HOOK_LINE_H
#define TOOLGATE_KIT_HOOK_LINE_H

#include <limits.h>
#include <stddef.h>
#include "agent/dialect.h"

/* s as one sh word: bare when it is safe, else in single quotes. */
void hook_quote(char *out, size_t len, const char *s);
/* This binary's absolute path as a sh word: the path it was run by
 * (argv[0], or found in PATH), symlink kept, when that is this binary and
 * names no versioned folder; else the resolved one (/proc/self/exe). -1
 * when it cannot be known (then no line is written: a bare name may not
 * be found). */
int hook_line_program(char *out, size_t len);
/* main.c: how this process was run (argv[0]), for hook_line_program. */
void kit_set_argv0(const char *argv0);
/* path names a folder a package manager versions (a folder named like
 * 0.1.0 or toolgate-0.1.0, Homebrew's Cellar, /nix/store): an upgrade
 * removes it. */
int hook_path_versioned(const char *path);
/* The first toolgate in PATH, into out, when its path is not versioned:
 * 1; else 0. */
int hook_stable_on_path(char *out, size_t len);
/* The line an agent runs: prog (a sh word) with args (sh text), inside
 * the script that turns any exit but toolgate's own answers (0, and 2
 * where the agent reads it as a block) into the agent's fail form (in:
 * the form that blocks when blocks, else the one that reports) and
 * kills prog after watch_s seconds. */
int hook_line(char *out, size_t len, const char *prog, const char *args,
              const tg_dialect_install *in, int blocks, unsigned watch_s);

typedef struct {
  int code;        /* the line's exit code (128+N: killed by signal N) */
  char *out, *err; /* what it wrote (cut at 4 KiB) */
} hook_line_result;
/* Runs line once as agent d would (sh, its project variable = cwd) on
 * its pre-tool event of the shell command `true` (judged, never run),
 * with --no-resident --no-db added: nothing recorded, nothing started. */
int hook_line_check(const char *line, const char *cwd, const tg_dialect *d,
                    hook_line_result *res);
void hook_line_result_free(hook_line_result *res);

/* A line read back. */
typedef struct {
  char prog[PATH_MAX];     /* the program it runs, one word, unquoted */
  char agent[32];          /* the word after "hook" */
  char policies[PATH_MAX]; /* --policies' word, unquoted ("" if none);
                              "$CLAUDE_PROJECT_DIR" left as written */
} hook_line_parts;
/* Takes line apart. 0 when it is exactly the shape an install writes —
 * the wrapper script, then one program word, then plain words (quoted
 * text, and "$CLAUDE_PROJECT_DIR" alone in double quotes) — so that
 * running it runs only that program; -1 with why otherwise (a line
 * written by hand, an older install's bare command, or anything a shell
 * would read as more than words). The program is not looked at. */
int hook_line_parse(const char *line, hook_line_parts *p, char *why,
                    size_t len);

#endif
