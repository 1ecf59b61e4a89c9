/*
 * plugin.c — `toolgate hook install|uninstall AGENT` for an agent that
 * runs a plugin file instead of hook commands (OpenCode: the dialect's
 * install.plugin). The file is toolgate's own plugin (kit/hook_plugin.h),
 * written whole with the fail-closed line in it — the line an install
 * writes into the other agents' settings — and its time limit; the
 * install then runs that line once, as the other installs do, and says
 * what came back. A file at the place that is not toolgate's plugin is
 * refused and left as it is; an earlier toolgate plugin is replaced (a
 * copy kept beside it), and an uninstall removes it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "hook.h"
#include "kit/hook_plugin.h"

#define PLUGIN_MAX (1u << 20)

/* The file's text (NULL with *exists 0: no file); -1 when it cannot be
 * read as a plugin file (said). */
static int read_plugin(const char *file, char **text, int *exists) {
  *text = NULL;
  *exists = 0;
  int fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0 && errno == ENOENT) return 0;
  struct stat st;
  if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
      st.st_size > PLUGIN_MAX) {
    cli_error("hook install: '%s' cannot be read as a plugin file; left as "
              "it is", file);
    if (fd >= 0) close(fd);
    return -1;
  }
  char *b = malloc((size_t)st.st_size + 1);
  ssize_t n = b ? read(fd, b, (size_t)st.st_size) : -1;
  close(fd);
  if (n < 0 || n != st.st_size) {
    cli_error("hook install: cannot read '%s'", file);
    free(b);
    return -1;
  }
  b[n] = '\0';
  *text = b;
  *exists = 1;
  return 0;
}

/* Runs the line once on the agent's harmless event: 0 when it answers. */
static int check(const hook_plugin_job *j, const char *line) {
  char cwd[PATH_MAX];
  if (!getcwd(cwd, sizeof cwd)) return CLI_EXIT_OK;
  hook_line_result res;
  int rc = hook_line_check(line, cwd, j->d, &res);
  if (rc < 0) {
    cli_error("hook install: could not run the hook to check it: %s",
              strerror(-rc));
    return CLI_EXIT_FAILED;
  }
  int ok = (res.code == 0 || (res.code == 2 && j->d->install.exit_2_blocks)) &&
           !res.err[0];
  if (ok)
    printf("checked: the hook answers (a %s of `true`: exit %d%s%s)\n",
           j->d->install.check_event_name, res.code,
           res.out[0] ? ", " : ", no verdict: the agent's own permissions "
           "decide", res.out);
  else {
    cli_error("hook install: the plugin is written but its hook does not "
              "answer as it should (exit %d): %s%s%s", res.code,
              res.err[0] ? res.err : "(nothing on stderr)",
              res.out[0] ? "; stdout: " : "", res.out);
    cli_error("hook install: until that is fixed, every tool call of %s is "
              "blocked", j->d->name);
  }
  hook_line_result_free(&res);
  return ok ? CLI_EXIT_OK : CLI_EXIT_FAILED;
}

static int uninstall(const hook_plugin_job *j, char *old) {
  char *cmd = old ? hook_plugin_command(old) : NULL;
  int ours = cmd != NULL;
  free(cmd);
  if (!old || !ours) {
    printf("no toolgate plugin for %s at %s: nothing to do\n", j->d->name,
           j->file);
    return CLI_EXIT_OK;
  }
  if (j->dry_run) {
    printf("would remove %s\n", j->file);
    return CLI_EXIT_OK;
  }
  if (unlink(j->file) < 0) {
    cli_error("hook uninstall: cannot remove '%s': %s", j->file,
              strerror(errno));
    return CLI_EXIT_FAILED;
  }
  printf("removed the %s plugin %s\n", j->d->name, j->file);
  return CLI_EXIT_OK;
}

int hook_install_plugin(const hook_plugin_job *j) {
  char *old = NULL;
  int exists;
  if (read_plugin(j->file, &old, &exists) < 0) return CLI_EXIT_USAGE;
  char *was = old ? hook_plugin_command(old) : NULL;
  if (old && !was && strspn(old, " \t\r\n") != strlen(old)) {
    cli_error("hook %s: '%s' is not toolgate's plugin; it is left as it is "
              "(move it, then %s again)", j->uninstall ? "uninstall" : "install",
              j->file, j->uninstall ? "uninstall" : "install");
    free(old);
    return CLI_EXIT_USAGE;
  }
  if (j->uninstall) {
    int code = uninstall(j, was ? old : NULL);
    free(was);
    free(old);
    return code;
  }
  char line[PATH_MAX * 8 + 4096];
  if (hook_line(line, sizeof line, j->prog, j->args, &j->d->install, 1,
                j->watch_s) < 0) {
    cli_error("hook install: the hook command is too long");
    free(was);
    free(old);
    return CLI_EXIT_USAGE;
  }
  char *text = hook_plugin_text(line, j->timeout_s * 1000u);
  if (!text) {
    cli_error("hook install: out of memory");
    free(was);
    free(old);
    return CLI_EXIT_FAILED;
  }
  int code = CLI_EXIT_OK;
  char backup[PATH_MAX + 64] = "";
  if (j->dry_run) {
    printf("would write %s (%s):\n%s", j->file,
           exists ? "a backup of it first" : "a new file", text);
  } else {
    int rc = hook_write_settings(j->file, text, exists, backup, sizeof backup);
    if (rc < 0) {
      cli_error("hook install: cannot write '%s': %s", j->file,
                strerror(-rc));
      code = CLI_EXIT_FAILED;
    } else {
      if (backup[0])
        printf("installed the %s plugin in %s (the old file is kept as %s)\n",
               j->d->name, j->file, backup);
      else
        printf("installed the %s plugin in %s (a new file)\n", j->d->name,
               j->file);
      if (was) printf("  - toolgate %s\n", strstr(was, " hook ") ? strstr(was, " hook ") + 1 : was);
      printf("  + toolgate %s\n", j->args);
      printf("toolgate is %s; the plugin blocks the tool call when it cannot "
             "answer (a missing binary, a crash, a hang)\n", j->prog);
      code = check(j, line);
    }
  }
  free(text);
  free(was);
  free(old);
  return code;
}
