/*
 * doctor_cmd.c — `toolgate doctor`: looks at a project's set-up the way
 * the agents will meet it, and says in plain words what is wrong and the
 * command that fixes it. A guard that is silently off is the failure this
 * is for: a hook line naming a binary that moved (the agent then lets
 * every call through), a line that does not answer, policies that do not
 * load, a resident instance serving another folder, a database the hooks
 * cannot write.
 *
 * What it reads is the user's own project, but a settings file may come
 * from a cloned repository: a hook line is run only when it is exactly the
 * shape an install writes (kit/hook_line.h) and names an existing
 * executable by absolute path, so doctor runs nothing the agent would not.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cjson/cJSON.h>
#include "toolgate.h"
#include "commands.h"
#include "kit/declared_tools.h"
#include "kit/hook_line.h"
#include "kit/hook_plugin.h"
#include "kit/kit.h"
#include "kit/options.h"
#include "kit/output.h"

const char cmd_doctor_usage[] =
    "usage: toolgate doctor [--policies DIR] [--db PATH] [--json]\n"
    "\n"
    "Checks this project's set-up and says what is wrong, one line per\n"
    "fault: \"what is wrong — run: COMMAND\". It looks at:\n"
    "  - the toolgate hook lines in each agent's settings (Claude Code:\n"
    "    .claude/settings.json, .claude/settings.local.json,\n"
    "    ~/.claude/settings.json; Codex: .codex/hooks.json,\n"
    "    $CODEX_HOME/hooks.json or ~/.codex/hooks.json; Gemini CLI:\n"
    "    .gemini/settings.json, ~/.gemini/settings.json (under\n"
    "    $GEMINI_CLI_HOME when set); Copilot CLI: .github/hooks/toolgate.json,\n"
    "    ~/.copilot/hooks/toolgate.json; Cursor: .cursor/hooks.json,\n"
    "    ~/.cursor/hooks.json; OpenCode: the line in toolgate's plugin,\n"
    "    .opencode/plugins/toolgate.js, ~/.config/opencode/plugins/\n"
    "    toolgate.js): each must be the fail-closed line\n"
    "    an install writes and name an existing toolgate by absolute path,\n"
    "    and the pre-tool line must answer when run once on a harmless event;\n"
    "  - hooks the agent will not run: left under HOME while CODEX_HOME,\n"
    "    GEMINI_CLI_HOME or COPILOT_HOME sends the agent elsewhere; Gemini\n"
    "    CLI's in a folder it does not trust (trustedFolders.json), or\n"
    "    whose trust cannot be told;\n"
    "  - whether the policies in DIR load (as 'toolgate check'), and\n"
    "    ./toolgate.lua when there is one (the MCP tools it marks as\n"
    "    reaching the network: a sensitive session's calls of them are\n"
    "    refused while it does not load);\n"
    "  - whether a resident instance ('toolgate daemon', 'watch', 'serve')\n"
    "    answers on DIR's control socket, and serves DIR itself;\n"
    "  - whether the database can be written;\n"
    "  - which agents are installed (claude, codex, gemini, copilot,\n"
    "    cursor-agent, opencode in PATH).\n"
    "\n"
    "options:\n"
    "  --policies DIR      the policies folder (default ./policies)\n"
    DB_PATH_USAGE
    "  --json              one JSON object: {ok, faults: [{what, run}],\n"
    "                      notes: [...]}\n"
    "\n"
    "exit status: 0 all is well; 1 a fault was found; 2 usage error.\n";

#define SETTINGS_MAX (16u << 20)

typedef struct {
  const char *dir, *db;
  char qdir[PATH_MAX * 4 + 8]; /* dir as one sh word, for the fixes */
  int json;
  cJSON *faults, *notes;
  int hooks_found;
  int lines_elsewhere;     /* lines naming another policies folder */
} doctor_run;

/* ---- saying it ------------------------------------------------------------ */

/* A check that passed ("ok: ...") or a fact worth knowing ("note: ..."). */
static void say_line(doctor_run *d, const char *tag, const char *fmt,
                     va_list ap) {
  char buf[PATH_MAX * 2 + 512];
  vsnprintf(buf, sizeof buf, fmt, ap);
  cJSON_AddItemToArray(d->notes, cJSON_CreateString(buf));
  if (!d->json) printf("%s: %s\n", tag, buf);
}

static void note(doctor_run *d, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  say_line(d, "ok", fmt, ap);
  va_end(ap);
}

static void info(doctor_run *d, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  say_line(d, "note", fmt, ap);
  va_end(ap);
}

static void fault(doctor_run *d, const char *run, const char *fmt, ...) {
  char buf[PATH_MAX * 2 + 4096];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  cJSON *f = cJSON_CreateObject();
  cJSON_AddStringToObject(f, "what", buf);
  cJSON_AddStringToObject(f, "run", run);
  cJSON_AddItemToArray(d->faults, f);
  if (!d->json) printf("%s — run: %s\n", buf, run);
}

/* The first line of s, at most max bytes, for a one-line message; what
 * a terminal would take as a control (the text may come from a settings
 * file or a program's stderr) becomes '?'. one_line: at most 300. */
static void line_of(char *out, size_t len, const char *s, size_t max) {
  size_t n = s ? strcspn(s, "\r\n") : 0;
  if (n > max) n = max;
  if (n >= len) n = len - 1;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    out[i] = c < 0x20 || c == 0x7f ? '?' : (char)c;
  }
  out[n] = '\0';
}

static void one_line(char *out, size_t len, const char *s) {
  line_of(out, len, s, 300);
}

/* ---- which agents are installed ----------------------------------------- */

static int in_path(const char *name, char *out, size_t len) {
  const char *path = getenv("PATH");
  while (path && *path) {
    size_t n = strcspn(path, ":");
    if (n && path[0] == '/' &&
        snprintf(out, len, "%.*s/%s", (int)n, path, name) < (int)len &&
        access(out, X_OK) == 0)
      return 1;
    path += n + (path[n] == ':');
  }
  return 0;
}

static void agents(doctor_run *d) {
  const tg_dialect *a;
  for (size_t i = 0; (a = tg__dialect_at(i)); i++) {
    char where[PATH_MAX];
    if (!a->program) continue;
    if (in_path(a->program, where, sizeof where))
      info(d, "%s is installed: %s", a->name, where);
    else
      info(d, "%s is not in PATH ('%s' not found)", a->name, a->program);
  }
}

/* ---- the hook lines ----------------------------------------------------- */

typedef struct {
  const char *agent, *place; /* place: the install flag for this file */
  const tg_dialect *d;
  char file[PATH_MAX];
} settings_place;

/* The file's JSON (NULL: no file, or *bad set with why). */
static cJSON *read_json(const char *file, char *bad, size_t len) {
  bad[0] = '\0';
  /* O_NONBLOCK: a FIFO opens without a writer, and is refused below */
  int fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  struct stat st;
  if (fd < 0) {
    if (errno != ENOENT) snprintf(bad, len, "%s", strerror(errno));
    else if (lstat(file, &st) == 0) /* the agent reads nothing there */
      snprintf(bad, len, "a symbolic link to nothing");
    return NULL;
  }
  if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > SETTINGS_MAX) {
    if (fstat(fd, &st) < 0)
      snprintf(bad, len, "%s", strerror(errno));
    else if (S_ISDIR(st.st_mode))
      snprintf(bad, len, "a folder, not a file");
    else if (!S_ISREG(st.st_mode))
      snprintf(bad, len, "not a regular file (%s)",
               S_ISFIFO(st.st_mode) ? "a FIFO" : S_ISSOCK(st.st_mode)
               ? "a socket" : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)
               ? "a device" : "a special file");
    else
      snprintf(bad, len, "%lld bytes, more than the %u MiB a settings "
               "file may hold", (long long)st.st_size, SETTINGS_MAX >> 20);
    close(fd);
    return NULL;
  }
  char *b = malloc((size_t)st.st_size + 1);
  ssize_t n = b ? read(fd, b, (size_t)st.st_size) : -1;
  close(fd);
  if (n < 0 || n != st.st_size) {
    snprintf(bad, len, "cannot read it");
    free(b);
    return NULL;
  }
  if (strspn(b, " \t\r\n") == (size_t)n) {
    free(b);
    return NULL; /* empty: no hooks */
  }
  char why[300] = "";
  cJSON *j = tg_json_parse(b, (size_t)n, NULL, why, sizeof why);
  free(b);
  if (!cJSON_IsObject(j)) {
    snprintf(bad, len, "not a JSON object (%s)", j ? "another value" : why);
    cJSON_Delete(j);
    return NULL;
  }
  return j;
}

/* An agent that runs a plugin (OpenCode): its file read as the flat
 * settings it stands for, {"hooks": {EVENT: [{COMMAND_KEY: line}]}}, the
 * line being the one the plugin runs (NULL: no file, or *bad set). */
static cJSON *read_plugin(const char *file, const tg_dialect_install *in,
                          char *bad, size_t len) {
  bad[0] = '\0';
  int fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    if (errno != ENOENT) snprintf(bad, len, "%s", strerror(errno));
    return NULL;
  }
  struct stat st;
  char *b = NULL;
  ssize_t n = -1;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size <= SETTINGS_MAX &&
      (b = malloc((size_t)st.st_size + 1)))
    n = read(fd, b, (size_t)st.st_size);
  close(fd);
  if (n < 0 || n != st.st_size) {
    snprintf(bad, len, "not a regular file of at most 16 MiB");
    free(b);
    return NULL;
  }
  b[n] = '\0';
  char *line = hook_plugin_command(b);
  free(b);
  if (!line) {
    snprintf(bad, len, "it is not toolgate's plugin, or it names no hook line");
    return NULL;
  }
  cJSON *j = cJSON_CreateObject();
  cJSON *h = cJSON_CreateObject();
  cJSON_AddStringToObject(h, in->command_key, line);
  cJSON_AddItemToArray(cJSON_AddArrayToObject(cJSON_AddObjectToObject(j, "hooks"),
                                              in->check_event_name), h);
  free(line);
  return j;
}

/* A command an install of agent wrote (as install.c tells its own). */
static int ours(const char *c, const char *agent) {
  char mark[64];
  snprintf(mark, sizeof mark, " hook %s", agent);
  return c && strstr(c, "toolgate") && strstr(c, mark);
}

/* The folder a line names, as a path from here (the agent's project
 * variable, $CLAUDE_PROJECT_DIR, is the project: here); -1 when it names
 * none. */
static int line_policies(const hook_line_parts *p, char *out, size_t len) {
  const tg_dialect *a = tg__dialect(p->agent);
  char var[64];
  snprintf(var, sizeof var, "$%s", a && a->install.project_var
                                       ? a->install.project_var : "");
  char cwd[PATH_MAX];
  if (!p->policies[0] || !getcwd(cwd, sizeof cwd)) return -1;
  if (var[1] && !strncmp(p->policies, var, strlen(var)))
    snprintf(out, len, "%s%s", cwd, p->policies + strlen(var));
  else
    snprintf(out, len, "%s", p->policies);
  return 0;
}

/* Says which folder a line judges with, when it is not DIR (a user's
 * settings may well name another: a fact, not a fault). */
static void policies_named(doctor_run *d, const settings_place *s,
                           const hook_line_parts *p) {
  char line_dir[PATH_MAX * 2], a[PATH_MAX], b[PATH_MAX];
  if (line_policies(p, line_dir, sizeof line_dir) < 0) return;
  if (realpath(line_dir, a) && realpath(d->dir, b) && !strcmp(a, b)) return;
  char shown[320];
  one_line(shown, sizeof shown, line_dir);
  if (d->lines_elsewhere++ == 0)
    info(d, "the %s hook in %s judges with %s, not %s", s->agent, s->file,
         shown, d->dir);
}

/* Checks one line; 0 when it is sound (the program exists). */
static int check_line(doctor_run *d, const settings_place *s,
                      const char *event, const char *line, const char *fix) {
  hook_line_parts p;
  char why[256];
  if (hook_line_parse(line, &p, why, sizeof why) < 0) {
    fault(d, fix, "the %s hook in %s (%s) is not the fail-closed line an "
          "install writes: %s", s->agent, s->file, event, why);
    return -1;
  }
  struct stat st;
  char shown[320];
  one_line(shown, sizeof shown, p.prog);
  if (p.prog[0] != '/') {
    fault(d, fix, "the %s hook in %s (%s) runs '%s', not toolgate by its "
          "absolute path", s->agent, s->file, event, shown);
    return -1;
  }
  int unseen = stat(p.prog, &st) < 0, gone = unseen && errno == ENOENT;
  if (unseen || !S_ISREG(st.st_mode) || access(p.prog, X_OK) < 0) {
    fault(d, fix, "the %s hook in %s (%s) runs %s, which %s: every call "
          "is blocked", s->agent, s->file, event, shown,
          gone ? "does not exist" : "is not an executable file");
    return -1;
  }
  /* a line naming a versioned folder (Homebrew's Cellar/toolgate/0.1.0)
   * blocks every call once an upgrade removes that folder: said once per
   * file, when a toolgate on PATH has a path that stays */
  static char warned[PATH_MAX];
  char stable[PATH_MAX];
  if (strcmp(warned, s->file) && hook_path_versioned(p.prog) &&
      hook_stable_on_path(stable, sizeof stable)) {
    snprintf(warned, sizeof warned, "%s", s->file);
    info(d, "the %s hook in %s runs %s, in a versioned folder that an "
         "upgrade removes (then every call is blocked); %s on PATH stays "
         "where it is: run %s to name it", s->agent, s->file, shown, stable,
         fix);
  }
  policies_named(d, s, &p);
  return 0;
}

/* An agent that runs hooks only in a folder the user trusts (Gemini
 * CLI): in a folder it does not trust, toolgate's hooks never run, from
 * the project's settings or the user's, and the agent says nothing of it.
 * What cannot be told is a fault too. Said once per agent. */
static void folder_trust(doctor_run *d, const settings_place *s) {
  static const tg_dialect *said;
  char cwd[PATH_MAX], why[sizeof ((tg_folder_trust_said *)0)->why],
      edit[PATH_MAX * 4 + 32], q[PATH_MAX * 4 + 8];
  tg_folder_trust_said t;
  if (said == s->d) return;
  said = s->d;
  if (!getcwd(cwd, sizeof cwd)) {
    fault(d, "cd .", "the folder this runs in cannot be told (%s), so whether "
          "%s runs hooks here cannot either", strerror(errno), s->d->title);
    return;
  }
  s->d->install.folder_trust(cwd, &t);
  line_of(why, sizeof why, t.why, sizeof why); /* paths from files, env */
  switch (t.trust) {
  case TG_FOLDER_TRUSTED:
    note(d, "%s trusts this folder, so it runs the hooks in %s: %s",
         s->d->title, s->file, why);
    break;
  case TG_FOLDER_TRUSTED_BY_ENV:
    info(d, "%s trusts this folder only in sessions started with this "
         "environment: %s", s->d->title, why);
    break;
  case TG_FOLDER_UNTRUSTED:
    fault(d, s->d->program, "%s does not trust this folder, so it runs no "
          "hook here and toolgate's hooks in %s never run: %s (trust the "
          "folder: run %s here and choose \"Trust folder\", or /permissions "
          "in it; hooks in the user's settings do not run here either)",
          s->d->title, s->file, why, s->d->program);
    break;
  case TG_FOLDER_UNKNOWN:
  default:
    hook_quote(q, sizeof q, t.file);
    snprintf(edit, sizeof edit, "${EDITOR:-vi} %s", q);
    fault(d, t.file[0] ? edit : s->d->program, "%s may not trust this "
          "folder, and then toolgate's hooks in %s never run: %s",
          s->d->title, s->file, why);
    break;
  }
}

static void check_settings(doctor_run *d, const settings_place *s) {
  char bad[400], fix[PATH_MAX * 4 + 160];
  snprintf(fix, sizeof fix, "toolgate hook install %s %s --policies %s",
           s->agent, s->place, d->qdir);
  cJSON *j = s->d->install.plugin
                 ? read_plugin(s->file, &s->d->install, bad, sizeof bad)
                 : read_json(s->file, bad, sizeof bad);
  if (!j) {
    if (bad[0]) {
      char edit[PATH_MAX + 32];
      snprintf(edit, sizeof edit, "${EDITOR:-vi} %s", s->file);
      /* a plugin that is not toolgate's: an install puts toolgate's there */
      fault(d, s->d->install.plugin ? fix : edit, "the %s %s %s cannot be "
            "read: %s", s->agent, s->d->install.plugin ? "plugin" : "settings",
            s->file, bad);
    }
    return;
  }
  const cJSON *hooks = cJSON_GetObjectItemCaseSensitive(j, "hooks"), *ev;
  const tg_dialect_install *in = &s->d->install;
  /* hooks switched off here are off wherever toolgate's lines are */
  if (in->off_switch &&
      cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, in->off_switch))) {
    char edit[PATH_MAX + 32];
    snprintf(edit, sizeof edit, "${EDITOR:-vi} %s", s->file);
    fault(d, edit, "%s sets \"%s\": true: %s runs no hook, toolgate's "
          "included, so its tool calls are not judged (remove the key)",
          s->file, in->off_switch, s->d->title);
  }
  const char *pre = NULL;
  int found = 0, sound = 1;
  cJSON_ArrayForEach(ev, (cJSON_IsObject(hooks) ? hooks : NULL)) {
    const cJSON *g;
    cJSON_ArrayForEach(g, (cJSON_IsArray(ev) ? ev : NULL)) {
      const cJSON *h;
      /* a flat file lists the hooks themselves */
      const cJSON *hs = in->flat ? ev : cJSON_GetObjectItemCaseSensitive(g, "hooks");
      cJSON_ArrayForEach(h, hs) {
        const char *c = cJSON_GetStringValue(
            cJSON_GetObjectItemCaseSensitive(h, in->command_key));
        if (!ours(c, s->agent)) continue;
        found++;
        if (sound && check_line(d, s, ev->string, c, fix) < 0) sound = 0;
        if (!pre && !strcmp(ev->string, in->check_event_name)) pre = c;
      }
      if (in->flat) break; /* the event's hooks are done */
    }
  }
  if (!found) {
    cJSON_Delete(j);
    return;
  }
  d->hooks_found++;
  if (in->folder_trust) folder_trust(d, s);
  if (sound && !pre) {
    fault(d, fix, "the %s hooks in %s have no %s line: tool calls "
          "are not judged before they run", s->agent, s->file,
          in->check_event_name);
  } else if (sound) {
    char cwd[PATH_MAX];
    hook_line_result res;
    int rc = getcwd(cwd, sizeof cwd) ? hook_line_check(pre, cwd, s->d, &res)
                                     : -errno;
    if (rc < 0) {
      fault(d, fix, "the %s hook in %s could not be run to check it: %s",
            s->agent, s->file, strerror(-rc));
    } else {
      char err[320], out[320];
      one_line(err, sizeof err, res.err);
      one_line(out, sizeof out, res.out);
      if ((res.code == 0 || (res.code == 2 && in->exit_2_blocks)) && !err[0])
        note(d, "the %s hook in %s answers (%d line%s; %s of "
             "`true`: exit %d)", s->agent, s->file, found,
             found == 1 ? "" : "s", in->check_event_name, res.code);
      else if (strstr(err, "policies do not load")) {
        hook_line_parts p;
        char dir[PATH_MAX * 2], shown[320], qd[sizeof shown * 4 + 8],
            check[sizeof qd + 32];
        if (hook_line_parse(pre, &p, NULL, 0) < 0 ||
            line_policies(&p, dir, sizeof dir) < 0)
          snprintf(dir, sizeof dir, "%s", d->dir);
        one_line(shown, sizeof shown, dir);
        hook_quote(qd, sizeof qd, shown);
        snprintf(check, sizeof check, "toolgate check %s", qd);
        fault(d, check, "the %s hook in %s blocks every call: %s", s->agent,
              s->file, err);
      } else
        fault(d, fix, "the %s hook in %s does not answer (exit %d: %s)",
              s->agent, s->file, res.code,
              err[0] ? err : out[0] ? out : "nothing said");
      hook_line_result_free(&res);
    }
  }
  cJSON_Delete(j);
}

/* The file under HOME an agent reads no more when its own home variable
 * is set (CODEX_HOME, GEMINI_CLI_HOME, COPILOT_HOME): toolgate's hooks
 * there never run. */
static void home_elsewhere(doctor_run *d, const tg_dialect *a,
                           const tg_dialect_place *pl) {
  const char *var = a->install.home_var;
  const char *v = var ? getenv(var) : NULL, *home = getenv("HOME");
  if (!v || !*v || !home || home[0] != '/' || a->install.plugin) return;
  char file[PATH_MAX], bad[400], shown[320], qf[PATH_MAX * 4 + 8],
      fix[PATH_MAX * 8 + 128];
  snprintf(file, sizeof file, "%s/%s", home, pl->file);
  one_line(shown, sizeof shown, v);
  if (v[0] != '/') {
    snprintf(fix, sizeof fix, "export %s=\"$PWD/%s\"", var, shown);
    fault(d, fix, "%s is %s, not an absolute path: where %s reads its "
          "user's hooks is not known here", var, shown, a->title);
    return;
  }
  char mine[PATH_MAX] = "";
  if (tg__dialect_place_path(&a->install, pl, mine, sizeof mine) == 0) {
    char r1[PATH_MAX], r2[PATH_MAX];
    if (realpath(mine, r1) && realpath(file, r2) && !strcmp(r1, r2))
      return; /* the same file by another path */
  }
  cJSON *j = read_json(file, bad, sizeof bad);
  const cJSON *hooks = cJSON_GetObjectItemCaseSensitive(j, "hooks"), *ev, *g,
              *h;
  int ours_here = 0;
  cJSON_ArrayForEach(ev, (cJSON_IsObject(hooks) ? hooks : NULL)) {
    cJSON_ArrayForEach(g, (cJSON_IsArray(ev) ? ev : NULL)) {
      const cJSON *hs = a->install.flat ? ev
                            : cJSON_GetObjectItemCaseSensitive(g, "hooks");
      cJSON_ArrayForEach(h, hs) ours_here |= ours(cJSON_GetStringValue(
          cJSON_GetObjectItemCaseSensitive(h, a->install.command_key)),
          a->name);
      if (a->install.flat) break;
    }
  }
  cJSON_Delete(j);
  if (!ours_here) return;
  hook_quote(qf, sizeof qf, file);
  snprintf(fix, sizeof fix, "toolgate hook uninstall %s --settings %s && "
           "toolgate hook install %s --user --policies %s", a->name, qf,
           a->name, d->qdir);
  fault(d, fix, "the %s hooks in %s never run: %s is set (%s), so %s reads "
        "its user's hooks from %s", a->name, file, var, shown, a->title,
        mine);
}

static void hooks(doctor_run *d) {
  const tg_dialect *a;
  /* every place each agent's install may write, in the registry's order */
  for (size_t i = 0; (a = tg__dialect_at(i)); i++) {
    for (const tg_dialect_place *pl = a->install.places; pl && pl->flag;
         pl++) {
      settings_place place = {a->name, pl->flag, a, ""};
      if (pl->in_home) home_elsewhere(d, a, pl);
      if (tg__dialect_place_path(&a->install, pl, place.file,
                                 sizeof place.file) < 0)
        continue; /* under a HOME that is not set (said above) */
      check_settings(d, &place);
    }
  }
  if (!d->hooks_found) {
    char fix[PATH_MAX * 4 + 96];
    snprintf(fix, sizeof fix, "toolgate hook install claude-code --policies %s",
             d->qdir);
    fault(d, fix, "no agent's settings run toolgate's hook here: the agents' "
          "tool calls are not judged");
  }
}

/* ---- the policies ----------------------------------------------------------- */

static int policies(doctor_run *d) {
  struct stat st;
  char fix[PATH_MAX * 4 + 64];
  if (stat(d->dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
    snprintf(fix, sizeof fix, "toolgate init %s", d->qdir);
    fault(d, fix, "there is no policies folder %s", d->dir);
    return -1;
  }
  tg_config cfg;
  char err[TG_ERRMSG] = "";
  tg_config_init(&cfg);
  cfg.policies_dir = d->dir;
  cfg.db_off = 1;
  tg_runtime *rt = tg_runtime_new(&cfg, NULL, err);
  if (!rt) {
    char msg[320];
    one_line(msg, sizeof msg, err);
    snprintf(fix, sizeof fix, "toolgate check %s", d->qdir);
    fault(d, fix, "the policies in %s do not load: %s", d->dir, msg);
    return -1;
  }
  note(d, "the policies in %s load (generation %llu)", d->dir,
       (unsigned long long)tg_runtime_generation(rt));
  tg_runtime_free(rt);
  return 0;
}

/* ./toolgate.lua, when there is one: the hook reads the MCP tools it marks
 * as reaching the network from it (call.network), and a file that does
 * not load refuses a sensitive session's calls of MCP tools. */
static void network_marks(doctor_run *d) {
  struct stat st;
  if (lstat("toolgate.lua", &st) < 0 && errno == ENOENT) return;
  cJSON *globs = NULL;
  char err[TG_ERRMSG] = "", msg[320];
  if (kit_network_tools(NULL, &globs, err, sizeof err) < 0) {
    one_line(msg, sizeof msg, err);
    fault(d, "${EDITOR:-vi} toolgate.lua", "toolgate.lua does not load, so "
          "which MCP tools reach the network is not known (a sensitive "
          "session's calls of them are refused): %s", msg);
    return;
  }
  char list[1024] = "";
  size_t used = 0;
  const cJSON *g;
  cJSON_ArrayForEach(g, globs) {
    int w = snprintf(list + used, sizeof list - used, "%s%s", used ? ", " : "",
                     cJSON_GetStringValue(g) ? cJSON_GetStringValue(g) : "");
    if (w < 0 || (size_t)w >= sizeof list - used) break;
    used += (size_t)w;
  }
  one_line(msg, sizeof msg, list);
  if (used)
    note(d, "toolgate.lua marks these MCP tools as reaching the network: %s",
         msg);
  else
    note(d, "toolgate.lua loads, and marks no MCP tool as reaching the "
         "network");
  cJSON_Delete(globs);
}

/* ---- a resident instance --------------------------------------------------- */

/* The instance's folder as a full path: a relative one is from its cwd. */
static int instance_dir(const char *dir, long pid, char *out, size_t len) {
  char full[PATH_MAX * 2];
  if (dir[0] == '/') {
    snprintf(full, sizeof full, "%s", dir);
  } else {
    char link[64], cwd[PATH_MAX];
    snprintf(link, sizeof link, "/proc/%ld/cwd", pid);
    ssize_t n = readlink(link, cwd, sizeof cwd - 1);
    if (n <= 0) return -1;
    cwd[n] = '\0';
    snprintf(full, sizeof full, "%s/%s", cwd, dir);
  }
  return realpath(full, out) && strlen(out) < len ? 0 : -1;
}

static void instance(doctor_run *d) {
  char sock[PATH_MAX], err[TG_ERRMSG], *reply = NULL, fix[PATH_MAX * 4 + 96];
  if (tg_control_path(d->dir, sock, sizeof sock, err) < 0) {
    info(d, "no resident instance checked (%s)", err);
    return;
  }
  int rc = tg_control_request(sock, "{\"cmd\":\"status\"}", &reply, 10000, err);
  if (rc == -ENOENT || rc == -ECONNREFUSED) {
    info(d, "no resident instance serves %s (socket %s): hooks answer "
         "in-process", d->dir, sock);
    return;
  }
  snprintf(fix, sizeof fix, "toolgate daemon status --policies %s", d->qdir);
  if (rc < 0) {
    fault(d, fix, "the instance on %s does not answer: %s", sock, err);
    return;
  }
  cJSON *j = tg_json_parse(reply, strlen(reply), NULL, NULL, 0);
  free(reply);
  const char *pol = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "policies"));
  double pidn = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(j, "pid"));
  long pid = pidn >= 2 && pidn < 1e9 ? (long)pidn : 0;
  char mine[PATH_MAX], theirs[PATH_MAX];
  if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "ok")) || !pol || !pid) {
    fault(d, fix, "the instance on %s gave no status", sock);
  } else if (!realpath(d->dir, mine) ||
             instance_dir(pol, pid, theirs, sizeof theirs) < 0 ||
             strcmp(mine, theirs)) {
    char what[320];
    one_line(what, sizeof what, pol);
    snprintf(fix, sizeof fix, "kill %ld", pid);
    fault(d, fix, "the resident instance on the socket of %s (pid %ld) "
          "serves %s, not %s: hooks would be judged by other policies",
          d->dir, pid, what, d->dir);
  } else {
    note(d, "a resident instance (pid %ld) serves %s, generation %.0f", pid,
         d->dir, cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(j, "generation")));
  }
  cJSON_Delete(j);
}

/* ---- the database ------------------------------------------------------------ */

static void database(doctor_run *d) {
  char path[PATH_MAX], err[TG_ERRMSG], fix[PATH_MAX * 8 + 64], q[PATH_MAX * 4 + 8];
  if (d->db) {
    snprintf(path, sizeof path, "%s", d->db);
  } else if (tg_db_default_path(path, sizeof path, err) < 0) {
    fault(d, "toolgate doctor --db PATH", "%s", err);
    return;
  }
  struct stat st;
  if (stat(path, &st) == 0) {
    tg_store *s = tg_store_open(path, 0, err);
    if (!s) {
      char msg[320];
      one_line(msg, sizeof msg, err);
      hook_quote(q, sizeof q, path);
      snprintf(fix, sizeof fix, "chmod u+rw %s", q);
      fault(d, fix, "the database %s cannot be used: %s", path, msg);
      return;
    }
    tg_store_close(s);
    if (access(path, W_OK) < 0) {
      hook_quote(q, sizeof q, path);
      snprintf(fix, sizeof fix, "chmod u+rw %s", q);
      fault(d, fix, "the database %s is not writable", path);
      return;
    }
    note(d, "the database %s opens for writing", path);
    return;
  }
  /* not there yet: the nearest folder above must take it */
  char up[PATH_MAX];
  snprintf(up, sizeof up, "%s", path);
  for (;;) {
    char *slash = strrchr(up, '/');
    if (!slash) snprintf(up, sizeof up, ".");
    else if (slash == up) up[1] = '\0';
    else *slash = '\0';
    if (stat(up, &st) == 0) break;
    if (errno != ENOENT) break;
  }
  if (stat(up, &st) == 0 && !S_ISDIR(st.st_mode)) {
    hook_quote(q, sizeof q, up);
    snprintf(fix, sizeof fix, "mv %s %s.old", q, q);
    fault(d, fix, "the database %s cannot be made: %s is not a folder", path,
          up);
  } else if (access(up, W_OK) < 0) {
    hook_quote(q, sizeof q, up);
    snprintf(fix, sizeof fix, "chmod u+w %s", q);
    fault(d, fix, "the database %s cannot be made: %s is not writable (%s)",
          path, up, strerror(errno));
  } else {
    note(d, "the database %s will be made on the first recorded call", path);
  }
}

/* ---- the command --------------------------------------------------------------- */

int cmd_doctor(int argc, char **argv) {
  doctor_run d;
  memset(&d, 0, sizeof d);
  d.dir = "policies";
  const opt_spec specs[] = {{"--policies", OPT_VALUE, NULL, &d.dir},
                            {"--db", OPT_VALUE, NULL, &d.db},
                            {"--json", OPT_FLAG, &d.json, NULL}};
  const opt_parser p = {"doctor", specs, sizeof specs / sizeof *specs, NULL,
                        0, 0, NULL, "doctor [--policies DIR] [--json]"};
  int npos, rc = opt_parse(&p, argc, argv, &npos);
  if (rc == OPT_PARSE_HELP) {
    fputs(cmd_doctor_usage, stdout);
    return CLI_EXIT_OK;
  }
  if (rc != OPT_PARSE_OK || (d.db && db_path_check("doctor", d.db) < 0))
    return CLI_EXIT_USAGE;
  hook_quote(d.qdir, sizeof d.qdir, d.dir);
  d.faults = cJSON_CreateArray();
  d.notes = cJSON_CreateArray();
  agents(&d);
  hooks(&d);
  policies(&d);
  network_marks(&d);
  instance(&d);
  database(&d);
  int n = cJSON_GetArraySize(d.faults);
  if (d.json) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddBoolToObject(j, "ok", n == 0);
    cJSON_AddItemToObject(j, "faults", d.faults);
    cJSON_AddItemToObject(j, "notes", d.notes);
    cli_print_json_line(stdout, j);
    cJSON_Delete(j);
  } else {
    if (n) printf("%d fault%s found\n", n, n == 1 ? "" : "s");
    else printf("all is well\n");
    cJSON_Delete(d.faults);
    cJSON_Delete(d.notes);
  }
  fflush(stdout);
  return n ? CLI_EXIT_FAILED : CLI_EXIT_OK;
}
