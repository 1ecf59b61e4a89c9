/*
 * install.c — `toolgate hook install|uninstall AGENT`: the hook entries in
 * the agent's own settings file, merged in, never clobbering. Where the
 * file is, its shape, the events and the form a failing hook takes are
 * the agent's dialect's (agent/dialect.h: install); for Claude Code,
 * ~/.claude/settings.json (--user), .claude/settings.json (--project, the
 * default), .claude/settings.local.json (--local); for Codex,
 * $CODEX_HOME/hooks.json (--user; ~/.codex/hooks.json without CODEX_HOME),
 * .codex/hooks.json (--project).
 *
 * Grouped files keep {"hooks": {EVENT: [{"matcher"?, "hooks": [{"type":
 * "command", "command", "timeout"}]}]}}; flat ones {"hooks": {EVENT:
 * [{"type": "command", COMMAND_KEY, TIMEOUT_KEY}]}}. An install adds one
 * entry per event toolgate answers, after removing the entries an earlier
 * install made (a command that runs `toolgate ... hook AGENT`); every
 * other key, event and hook stays as it was. The file is read with the
 * strict parser: one that is not a JSON object, or whose hooks are not
 * shaped as above, is refused and left untouched. A changed file is
 * written whole to a temporary file and renamed over the old one
 * (through a symlink, to its target), with its mode kept, after a copy of
 * the old one is kept beside it (FILE.bak-YYYYMMDD-HHMMSS). --dry-run
 * prints the change instead.
 *
 * The command written is a line that fails closed (kit/hook_line.c): this
 * binary by its absolute path, inside a /bin/sh script that blocks the
 * call, in the agent's own blocking form, when toolgate cannot answer;
 * the install runs it once and says what came back. A --policies folder
 * that is missing gets the starter policies first (kit/starter.h), so the
 * agent is guarded from its first call.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cjson/cJSON.h>
#include "hook.h"
#include "kit/starter.h"

#define SETTINGS_MAX (16u << 20)
#define HOOK_TIMEOUT_S 30 /* the agent's timeout; toolgate answers in 10 s */
#define WATCH_MARGIN_S 5  /* the line kills a stuck hook this much earlier */

typedef struct {
  const char *agent;            /* the dialect's name */
  const tg_dialect *d;
  int uninstall, dry_run, user, project, local, start_daemon;
  const char *policies, *command, *on_error, *settings, *deadline;
  char file[PATH_MAX];
  char prog[PATH_MAX * 4 + 64]; /* how toolgate is run: a sh word */
  char args[PATH_MAX * 3];      /* its words after that */
  unsigned timeout_s;
} install_run;

/* ---- where, and what to run ---------------------------------------------- */

static int settings_file(install_run *r) {
  const tg_dialect_place *pl = r->d->install.places, *at = NULL;
  if (r->settings) {
    snprintf(r->file, sizeof r->file, "%s", r->settings);
    return 0;
  }
  if (r->user + r->project + r->local > 1) {
    cli_error("hook install: --user, --project and --local are one place each");
    return -1;
  }
  const char *flag = r->user ? "--user" : r->local ? "--local" : "--project";
  for (; pl && pl->flag && !at; pl++)
    if (!strcmp(pl->flag, flag)) at = pl;
  if (!at && r->local) {
    cli_error("hook install: %s has no local settings (--user or --project)",
              r->agent);
    return -1;
  }
  if (!at) {
    cli_error("hook install: %s has no %s settings (--settings FILE)",
              r->agent, flag);
    return -1;
  }
  if (tg__dialect_place_path(&r->d->install, at, r->file, sizeof r->file) < 0) {
    const char *var = r->d->install.home_var;
    if (var && getenv(var) && *getenv(var))
      cli_error("hook install: %s is not an absolute path, so where %s reads "
                "its user hooks is not known here (set it to one)", var,
                r->d->title);
    else
      cli_error("hook install: --user needs HOME");
    return -1;
  }
  return 0;
}

static int command_of(install_run *r) {
  char dir[PATH_MAX] = "", pol[PATH_MAX * 2];
  if (r->command) {
    snprintf(r->prog, sizeof r->prog, "%s", r->command);
  } else if (hook_line_program(r->prog, sizeof r->prog) < 0) {
    /* a bare `toolgate` would be looked up in the agent's PATH, and a
     * hook not found lets every call through */
    cli_error("hook install: cannot tell this program's own path "
              "(/proc/self/exe); say how to run it with --command PATH");
    return -1;
  }
  struct stat st;
  if (stat(r->policies, &st) < 0 && errno == ENOENT && !r->dry_run) {
    /* guarded from the first call: the starter, not an error */
    starter_opts so = {0, 0, 1};
    int n = starter_write(r->policies, &so);
    if (n < 0) return -1;
    printf("no policies folder: wrote the starter policies into %s (%d "
           "files; read %s/README.md, extend them, 'toolgate test %s')\n",
           r->policies, n, r->policies, r->policies);
  } else if (stat(r->policies, &st) < 0 && errno == ENOENT) {
    printf("no policies folder: would write the starter policies into %s\n",
           r->policies);
    char cwd[PATH_MAX];
    if (r->policies[0] == '/' || !getcwd(cwd, sizeof cwd))
      snprintf(dir, sizeof dir, "%s", r->policies);
    else if (snprintf(dir, sizeof dir, "%s/%s", cwd, r->policies) >=
             (int)sizeof dir)
      return -1;
  }
  if (!dir[0] && !realpath(r->policies, dir)) {
    cli_error("hook install: the policies folder '%s' cannot be read: %s "
              "(--policies DIR)", r->policies, strerror(errno));
    return -1;
  }
  /* a project's shared settings name its policies from the project */
  char cwd[PATH_MAX];
  size_t cl = getcwd(cwd, sizeof cwd) ? strlen(cwd) : 0;
  const char *var = r->d->install.project_var;
  if (var && !r->user && !r->settings && cl &&
      !strncmp(dir, cwd, cl) && (dir[cl] == '/' || !dir[cl])) {
    char rest[PATH_MAX];
    hook_quote(rest, sizeof rest, dir[cl] ? dir + cl + 1 : ".");
    snprintf(pol, sizeof pol, "\"$%s\"/%s", var, rest);
  } else {
    hook_quote(pol, sizeof pol, dir);
  }
  int n = snprintf(r->args, sizeof r->args, "hook %s --policies %s%s%s%s%s%s",
                   r->agent, pol, r->on_error ? " --on-error " : "",
                   r->on_error ? r->on_error : "",
                   r->deadline ? " --deadline-ms " : "",
                   r->deadline ? r->deadline : "",
                   r->start_daemon ? " --start-daemon" : "");
  if (n <= 0 || (size_t)n >= sizeof r->args) return -1;
  /* the agent's timeout leaves toolgate's own deadline room, and the
   * line's watcher kills a stuck hook 5 s before the agent gives up */
  uint64_t ms = 0;
  if (r->deadline) opt_millis("hook install", "--deadline-ms", r->deadline, &ms);
  r->timeout_s = HOOK_TIMEOUT_S;
  if (ms / 1000 + 10 > r->timeout_s) r->timeout_s = (unsigned)(ms / 1000 + 10);
  return 0;
}

/* ---- the file --------------------------------------------------------------- */

/* The settings (a new {} when there is no file or it is empty), or NULL
 * with the reason printed: the file is then left as it is. */
static cJSON *read_settings(const char *file, int *exists) {
  *exists = 0;
  int fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0 && errno == ENOENT) return cJSON_CreateObject();
  struct stat st;
  if (fd < 0 || fstat(fd, &st) < 0) {
    cli_error("hook install: cannot read '%s': %s", file, strerror(errno));
    if (fd >= 0) close(fd);
    return NULL;
  }
  if (!S_ISREG(st.st_mode) || st.st_size > SETTINGS_MAX) {
    cli_error("hook install: '%s' is not a settings file (%s); left as it is",
               file, S_ISREG(st.st_mode) ? "too big" : "not a regular file");
    close(fd);
    return NULL;
  }
  *exists = 1;
  char *b = malloc((size_t)st.st_size + 1);
  ssize_t n = b ? read(fd, b, (size_t)st.st_size) : -1;
  close(fd);
  if (n < 0 || n != st.st_size) {
    cli_error("hook install: cannot read '%s'", file);
    free(b);
    return NULL;
  }
  size_t sp = strspn(b, " \t\r\n");
  if (sp == (size_t)n) {
    free(b);
    return cJSON_CreateObject();
  }
  char why[300];
  cJSON *j = tg_json_parse(b, (size_t)n, NULL, why, sizeof why);
  free(b);
  if (!j || !cJSON_IsObject(j)) {
    cli_error("hook install: '%s' is not a JSON object (%s); it is left as "
               "it is: fix it, then install again", file,
               j ? "another JSON value" : why);
    cJSON_Delete(j);
    return NULL;
  }
  return j;
}

/* A command an install of this agent wrote. */
static int ours(const install_run *r, const cJSON *h) {
  const char *c = cJSON_GetStringValue(
      cJSON_GetObjectItemCaseSensitive(h, r->d->install.command_key));
  char mark[64];
  snprintf(mark, sizeof mark, " hook %s", r->agent);
  return c && strstr(c, "toolgate") && strstr(c, mark);
}

/* The hooks' shape, checked before anything changes: {EVENT: [{hooks:
 * [...]}...]}, or {EVENT: [{...}...]} for a flat file. */
static int shape_ok(const install_run *r, const cJSON *hooks,
                    const char *file) {
  if (!hooks) return 1;
  if (!cJSON_IsObject(hooks)) {
    cli_error("hook install: \"hooks\" in '%s' is not an object; left as it is",
               file);
    return 0;
  }
  const cJSON *ev;
  cJSON_ArrayForEach(ev, hooks) {
    if (!cJSON_IsArray(ev)) {
      cli_error("hook install: hooks.%s in '%s' is not a list; left as it is",
                 ev->string, file);
      return 0;
    }
    const cJSON *group;
    cJSON_ArrayForEach(group, ev) {
      const cJSON *hs = cJSON_GetObjectItemCaseSensitive(group, "hooks");
      if (r->d->install.flat && !cJSON_IsObject(group)) {
        cli_error("hook install: an entry of hooks.%s in '%s' is not an "
                  "object; left as it is", ev->string, file);
        return 0;
      }
      if (!r->d->install.flat &&
          (!cJSON_IsObject(group) || (hs && !cJSON_IsArray(hs)))) {
        cli_error("hook install: an entry of hooks.%s in '%s' is not "
                   "{\"matcher\", \"hooks\": [...]}; left as it is",
                   ev->string, file);
        return 0;
      }
    }
  }
  return 1;
}

/* Takes ours out of the list hs (an event's, or a group's); how many. */
static int remove_from(const install_run *r, const char *event, cJSON *hs,
                       cJSON *removed) {
  int here = 0;
  cJSON *h = hs ? hs->child : NULL;
  while (h) {
    cJSON *nh = h->next;
    if (ours(r, h)) {
      cJSON *c = cJSON_DetachItemViaPointer(hs, h);
      char line[PATH_MAX * 3 + 64];
      snprintf(line, sizeof line, "%s: %s", event, cJSON_GetStringValue(
          cJSON_GetObjectItemCaseSensitive(c, r->d->install.command_key)));
      cJSON_AddItemToArray(removed, cJSON_CreateString(line));
      cJSON_Delete(c);
      here++;
    }
    h = nh;
  }
  return here;
}

/* Takes out what an install of agent added; returns how many hooks. An
 * entry left with no hook goes, and an event left with no entry. */
static int remove_ours(const install_run *r, cJSON *hooks, cJSON *removed) {
  int n = 0;
  cJSON *ev = hooks ? hooks->child : NULL;
  while (ev) {
    cJSON *next_ev = ev->next;
    int had = cJSON_GetArraySize(ev), took = 0;
    if (r->d->install.flat) {
      took = remove_from(r, ev->string, ev, removed);
      n += took;
    } else {
      cJSON *group = ev->child;
      while (group) {
        cJSON *next = group->next;
        cJSON *hs = cJSON_GetObjectItemCaseSensitive(group, "hooks");
        int here = remove_from(r, ev->string, hs, removed);
        if (here && cJSON_GetArraySize(hs) == 0) {
          cJSON_Delete(cJSON_DetachItemViaPointer(ev, group));
          took++;
        }
        n += here;
        group = next;
      }
    }
    if (took == had && had) cJSON_Delete(cJSON_DetachItemViaPointer(hooks, ev));
    ev = next_ev;
  }
  return n;
}

static int add_ours(install_run *r, cJSON *settings, cJSON *added) {
  const tg_dialect_install *in = &r->d->install;
  if (in->top && !cJSON_GetObjectItemCaseSensitive(settings, "hooks")) {
    /* the keys the agent's file must hold, first, when it holds none */
    cJSON *top = cJSON_Parse(in->top), *k;
    cJSON_ArrayForEach(k, top)
      if (!cJSON_GetObjectItemCaseSensitive(settings, k->string))
        cJSON_AddItemToObject(settings, k->string, cJSON_Duplicate(k, 1));
    cJSON_Delete(top);
  }
  cJSON *hooks = cJSON_GetObjectItemCaseSensitive(settings, "hooks");
  if (!hooks) hooks = cJSON_AddObjectToObject(settings, "hooks");
  for (const tg_dialect_hook *e = in->hooks; e->event; e++) {
    char cmd[sizeof r->prog + sizeof r->args + 4096];
    char args[sizeof r->args + 128];
    snprintf(args, sizeof args, "%s%s%s", r->args,
             e->event_arg ? " --event " : "", e->event_arg ? e->event : "");
    if (hook_line(cmd, sizeof cmd, r->prog, args, in, e->blocks,
                  r->timeout_s - WATCH_MARGIN_S) < 0) {
      cli_error("hook install: the hook command is too long");
      return -1;
    }
    cJSON *list = cJSON_GetObjectItemCaseSensitive(hooks, e->event);
    if (!list) list = cJSON_AddArrayToObject(hooks, e->event);
    cJSON *h = cJSON_CreateObject();
    cJSON_AddStringToObject(h, "type", "command");
    cJSON_AddStringToObject(h, in->command_key, cmd);
    cJSON_AddNumberToObject(h, in->timeout_key,
                            (double)r->timeout_s * in->timeout_scale);
    if (in->fail_closed_key && e->blocks) /* the agent blocks on a failure too */
      cJSON_AddTrueToObject(h, in->fail_closed_key);
    if (in->flat) {
      if (e->matcher) cJSON_AddStringToObject(h, "matcher", e->matcher);
      cJSON_AddItemToArray(list, h);
    } else {
      cJSON *group = cJSON_CreateObject();
      if (e->matcher) cJSON_AddStringToObject(group, "matcher", e->matcher);
      cJSON_AddItemToArray(cJSON_AddArrayToObject(group, "hooks"), h);
      cJSON_AddItemToArray(list, group);
    }
    char line[sizeof r->prog + sizeof args + 64];
    snprintf(line, sizeof line, "%s: toolgate %s", e->event, args);
    cJSON_AddItemToArray(added, cJSON_CreateString(line));
  }
  return 0;
}

static int mkdir_for(const char *file) {
  char d[PATH_MAX];
  snprintf(d, sizeof d, "%s", file);
  char *slash = strrchr(d, '/');
  if (!slash || slash == d) return 0;
  *slash = '\0';
  for (char *p = d + 1; *p; p++) {
    if (*p != '/') continue;
    *p = '\0';
    if (mkdir(d, 0755) < 0 && errno != EEXIST) return -1;
    *p = '/';
  }
  return mkdir(d, 0755) < 0 && errno != EEXIST ? -1 : 0;
}

static int copy_file(const char *from, const char *to) {
  int in = open(from, O_RDONLY | O_CLOEXEC);
  int out = in < 0 ? -1 : open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  char buf[65536];
  ssize_t n = 0;
  int rc = in >= 0 && out >= 0 ? 0 : -1;
  while (rc == 0 && (n = read(in, buf, sizeof buf)) > 0)
    if (write(out, buf, (size_t)n) != n) rc = -1;
  if (n < 0) rc = -1;
  if (in >= 0) close(in);
  if (out >= 0 && close(out) < 0) rc = -1;
  return rc;
}

/* Writes text over file: backup, temporary file, rename. */
int hook_write_settings(const char *file, const char *text, int exists,
                        char *backup, size_t blen) {
  char real[PATH_MAX], tmp[PATH_MAX + 32];
  const char *target = file;
  backup[0] = '\0';
  if (exists && realpath(file, real)) target = real; /* through a symlink */
  if (!exists && mkdir_for(target) < 0) return -errno;
  struct stat st;
  mode_t mode = exists && stat(target, &st) == 0 ? st.st_mode & 07777 : 0644;
  if (exists) {
    time_t now = time(NULL);
    struct tm tm;
    char stamp[32];
    localtime_r(&now, &tm);
    strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    snprintf(backup, blen, "%s.bak-%s", target, stamp);
    for (int i = 1; access(backup, F_OK) == 0 && i < 100; i++)
      snprintf(backup, blen, "%s.bak-%s-%d", target, stamp, i);
    if (copy_file(target, backup) < 0) return -errno ? -errno : -EIO;
  }
  snprintf(tmp, sizeof tmp, "%s.toolgate-XXXXXX", target);
  int fd = mkstemp(tmp);
  if (fd < 0) return -errno;
  size_t n = strlen(text);
  int rc = write(fd, text, n) == (ssize_t)n && fchmod(fd, mode) == 0 &&
                   fsync(fd) == 0 ? 0 : -errno;
  if (close(fd) < 0 && rc == 0) rc = -errno;
  if (rc == 0 && rename(tmp, target) < 0) rc = -errno;
  if (rc < 0) unlink(tmp);
  return rc;
}

static void print_list(const char *sign, const cJSON *list) {
  const cJSON *l;
  cJSON_ArrayForEach(l, list) printf("  %s %s\n", sign, l->valuestring);
}

/* Runs the PreToolUse line just written once, as the agent will, and
 * says what came of it: an answer (exit 0 or 2, with nothing on stderr)
 * is a working install; anything else is printed and fails the install
 * (the line is written, and blocks until it is fixed). */
static int check_installed(install_run *r, const cJSON *settings) {
  /* ours is the last entry of the pre-tool event (add_ours appends) */
  const tg_dialect_install *in = &r->d->install;
  const cJSON *groups = cJSON_GetObjectItemCaseSensitive(
      cJSON_GetObjectItemCaseSensitive(settings, "hooks"), in->check_event_name);
  const cJSON *last = NULL, *g;
  cJSON_ArrayForEach(g, groups) last = g;
  const cJSON *h = in->flat ? last : cJSON_GetArrayItem(
      cJSON_GetObjectItemCaseSensitive(last, "hooks"), 0);
  const char *line = cJSON_GetStringValue(
      cJSON_GetObjectItemCaseSensitive(h, in->command_key));
  char cwd[PATH_MAX];
  if (!line || !getcwd(cwd, sizeof cwd)) return CLI_EXIT_OK;
  hook_line_result res;
  int rc = hook_line_check(line, cwd, r->d, &res);
  if (rc < 0) {
    cli_error("hook install: could not run the hook to check it: %s",
              strerror(-rc));
    return CLI_EXIT_FAILED;
  }
  int ok = (res.code == 0 || (res.code == 2 && in->exit_2_blocks)) &&
           !res.err[0];
  if (ok) {
    printf("checked: the hook answers (a %s of `true`: exit %d%s%s)\n",
           in->check_event_name, res.code,
           res.out[0] && strcmp(res.out, "{}") ? ", " : ", no verdict: the "
           "agent's own permissions decide",
           res.out[0] && strcmp(res.out, "{}") ? res.out : "");
  } else {
    cli_error("hook install: the hook line is written but does not answer "
              "as it should (exit %d): %s%s%s", res.code,
              res.err[0] ? res.err : "(nothing on stderr)",
              res.out[0] ? "; stdout: " : "", res.out);
    cli_error("hook install: until that is fixed, every tool call of %s "
              "is blocked", r->agent);
  }
  hook_line_result_free(&res);
  return ok ? CLI_EXIT_OK : CLI_EXIT_FAILED;
}

/* ---- the command -------------------------------------------------------------- */

static int parse(install_run *r, int argc, char **argv) {
  static const char *const names[] = {"AGENT"};
  const char *pos[1] = {NULL};
  const opt_spec specs[] = {
      {"--user", OPT_FLAG, &r->user, NULL},
      {"--project", OPT_FLAG, &r->project, NULL},
      {"--local", OPT_FLAG, &r->local, NULL},
      {"--dry-run", OPT_FLAG, &r->dry_run, NULL},
      {"--start-daemon", OPT_FLAG, &r->start_daemon, NULL},
      {"--policies", OPT_VALUE, NULL, &r->policies},
      {"--command", OPT_VALUE, NULL, &r->command},
      {"--on-error", OPT_VALUE, NULL, &r->on_error},
      {"--deadline-ms", OPT_VALUE, NULL, &r->deadline},
      {"--settings", OPT_VALUE, NULL, &r->settings},
  };
  const char *cmd = r->uninstall ? "hook uninstall" : "hook install";
  const opt_parser p = {cmd, specs, sizeof specs / sizeof *specs, pos, 0, 1,
                        names, r->uninstall ? "hook uninstall AGENT [options]"
                                            : "hook install AGENT [options]"};
  int npos, rc = opt_parse(&p, argc, argv, &npos);
  if (rc == OPT_PARSE_HELP) {
    fputs(cmd_hook_usage, stdout);
    return CLI_EXIT_OK;
  }
  if (rc != OPT_PARSE_OK) return CLI_EXIT_USAGE;
  if (!npos || !tg_hook_agent_known(pos[0])) {
    cli_error("%s: which agent? %s", cmd, tg__dialect_names());
    return CLI_EXIT_USAGE;
  }
  r->d = tg__dialect(pos[0]);
  r->agent = r->d->name;
  uint64_t ms;
  if (!tg_hook_on_error_known(r->on_error) ||
      (r->deadline && opt_millis(cmd, "--deadline-ms", r->deadline, &ms) < 0)) {
    if (!tg_hook_on_error_known(r->on_error))
      cli_error("%s: --on-error is deny, ask or allow", cmd);
    return CLI_EXIT_USAGE;
  }
  if (r->on_error && !strcmp(r->on_error, "deny")) r->on_error = NULL;
  return settings_file(r) < 0 ? CLI_EXIT_USAGE : -1;
}

int hook_install(int argc, char **argv, int uninstall) {
  install_run r;
  memset(&r, 0, sizeof r);
  r.uninstall = uninstall;
  r.policies = "policies";
  int code = parse(&r, argc, argv);
  if (code >= 0) return code;
  if (!uninstall && command_of(&r) < 0) return CLI_EXIT_USAGE;
  if (r.d->install.plugin) { /* a plugin file, not settings (plugin.c) */
    hook_plugin_job pj = {r.d, r.file, r.prog, r.args, r.timeout_s,
                          uninstall ? 0 : r.timeout_s - WATCH_MARGIN_S,
                          uninstall, r.dry_run};
    return hook_install_plugin(&pj);
  }
  int exists;
  cJSON *settings = read_settings(r.file, &exists);
  if (!settings) return CLI_EXIT_USAGE;
  cJSON *hooks = cJSON_GetObjectItemCaseSensitive(settings, "hooks");
  if (!shape_ok(&r, hooks, r.file)) {
    cJSON_Delete(settings);
    return CLI_EXIT_USAGE;
  }
  cJSON *removed = cJSON_CreateArray(), *added = cJSON_CreateArray();
  int n = remove_ours(&r, hooks, removed);
  if (uninstall && hooks && !hooks->child && n)
    cJSON_DeleteItemFromObjectCaseSensitive(settings, "hooks"); /* we left it empty */
  if (!uninstall && add_ours(&r, settings, added) < 0) {
    cJSON_Delete(removed);
    cJSON_Delete(added);
    cJSON_Delete(settings);
    return CLI_EXIT_USAGE;
  }
  code = CLI_EXIT_OK;
  if (uninstall && !n) {
    printf("no toolgate hook for %s in %s: nothing to do\n", r.agent, r.file);
  } else {
    char *text = tg_json_print(settings, 1);
    size_t tl = text ? strlen(text) : 0;
      char *withnl = text ? realloc(text, tl + 2) : NULL;
    if (withnl) memcpy(withnl + tl, "\n", 2);
    char backup[PATH_MAX + 64];
    int rc = withnl ? 0 : -ENOMEM;
    if (r.dry_run) {
      printf("would write %s (%s):\n", r.file, exists ? "a backup of it first"
                                                      : "a new file");
    } else if (rc == 0) {
      rc = hook_write_settings(r.file, withnl, exists, backup, sizeof backup);
    }
    if (rc < 0) {
      cli_error("%s: cannot write '%s': %s", uninstall ? "hook uninstall"
                 : "hook install", r.file, strerror(-rc));
      code = CLI_EXIT_FAILED;
    } else {
      if (!r.dry_run && backup[0])
        printf("%s the %s hooks in %s (the old file is kept as %s)\n",
               uninstall ? "removed" : "installed", r.agent, r.file, backup);
      else if (!r.dry_run)
        printf("%s the %s hooks in %s (a new file)\n",
               uninstall ? "removed" : "installed", r.agent, r.file);
      print_list("-", removed);
      print_list("+", added);
      if (!uninstall)
        printf("toolgate is %s; each line blocks the tool call when it "
               "cannot answer (a missing binary, a crash, a hang)\n", r.prog);
      if (r.dry_run) fputs(withnl, stdout);
      else if (!uninstall) code = check_installed(&r, settings);
    }
    free(withnl);
  }
  cJSON_Delete(removed);
  cJSON_Delete(added);
  cJSON_Delete(settings);
  return code;
}
