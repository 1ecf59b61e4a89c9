/*
 * init_cmd.c — `toolgate init [DIR]`: a starter policies folder, so that
 * a new user (or agent) is guarded from the first minute: a commented
 * baseline with its own tests, read in two minutes and extended in place
 * (kit/starter.h says what is in it and where it comes from).
 */
#include <stdio.h>
#include <string.h>
#include "toolgate.h"
#include "commands.h"
#include "kit/options.h"
#include "kit/output.h"
#include "kit/starter.h"

const char cmd_init_usage[] =
    "usage: toolgate init [DIR] [--force] [--dry-run]\n"
    "\n"
    "Writes the starter policies into DIR (default ./policies; made when\n"
    "missing): a commented baseline that guards a coding agent — destructive\n"
    "shell commands, secrets and credential files through every tool, the\n"
    "agent's own settings and the policies themselves, code run from the\n"
    "network, force pushes and history rewrites — each file with its tests\n"
    "(*_test.lua) and a README.md. Then: 'toolgate test DIR', and\n"
    "'toolgate hook install claude-code' (or codex). See docs/cli.md.\n"
    "\n"
    "options:\n"
    "  --force             write over files of the same name in DIR\n"
    "                      (without it, nothing is written when one is there)\n"
    "  --dry-run           list the files; write nothing\n"
    "\n"
    "exit status: 0 written; 1 a file could not be written, or one is\n"
    "there already (without --force); 2 usage error, or the starter is not\n"
    "installed.\n";

int cmd_init(int argc, char **argv) {
  static const char *const names[] = {"DIR"};
  const char *pos[1] = {NULL};
  starter_opts o;
  memset(&o, 0, sizeof o);
  const opt_spec specs[] = {
      {"--force", OPT_FLAG, &o.force, NULL},
      {"--dry-run", OPT_FLAG, &o.dry_run, NULL},
  };
  const opt_parser p = {"init", specs, sizeof specs / sizeof *specs, pos, 0,
                        1, names, "init [DIR] [options]"};
  int npos, rc = opt_parse(&p, argc, argv, &npos);
  if (rc == OPT_PARSE_HELP) {
    fputs(cmd_init_usage, stdout);
    return CLI_EXIT_OK;
  }
  if (rc != OPT_PARSE_OK) return CLI_EXIT_USAGE;
  const char *dir = npos ? pos[0] : "policies";
  char a[4096], b[4096];
  if (starter_sources(a, b, sizeof a) < 0) {
    starter_write(dir, &o); /* says where it looked */
    return CLI_EXIT_USAGE;
  }
  printf("%s the starter policies %s %s:\n", o.dry_run ? "would write" : "writing",
         o.dry_run ? "into" : "into", dir);
  int n = starter_write(dir, &o);
  if (n < 0) return CLI_EXIT_FAILED;
  if (!o.dry_run)
    printf("%d files. Next: read %s/README.md, run 'toolgate test %s', then\n"
           "'toolgate hook install claude-code --policies %s' (or codex).\n",
           n, dir, dir, dir);
  return CLI_EXIT_OK;
}
