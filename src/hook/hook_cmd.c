/*
 * hook_cmd.c — `toolgate hook AGENT` (claude-code, codex, gemini,
 * copilot, cursor, opencode: agent/dialects.c): the hook command of a
 * coding agent. One event on stdin, the agent's answer on stdout, its
 * exit code; the same answer whichever way it was reached:
 *
 *   1. a resident instance (toolgate watch / daemon / serve, listening on
 *      the policies folder's control socket) answers: this process only
 *      connects, sends, reads and prints — no Lua, no policies loaded;
 *   2. with none running, the policies are loaded here and the same
 *      tg_hook_answer answers (slower, still correct);
 *   3. when neither can (a malformed event, no policies folder, a policy
 *      error, the deadline), the answer --on-error names (deny by default).
 *
 * A tool event (PreToolUse, PermissionRequest, PostToolUse,
 * PostToolUseFailure) is judged; a prompt, a stop or a session's start
 * and end are recorded (record.c); anything else is passed over (the
 * protocols grow). Never a crash, never a hang past --deadline-ms.
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
#include "hook.h"

#define DEFAULT_DEADLINE_MS 10000
/* a daemon started by --start-daemon goes after this long without a hook */
#define ON_DEMAND_IDLE_MS 1800000
/* Kept back from the deadline to finish the answer once the work for it
 * is cut (tools run for context cancelled, their output gathered, the
 * answer written): a tenth of the deadline, from 50 ms to 1 s. A fixed
 * 50 ms was too little on a loaded machine, where the deadline's
 * fail-safe answer then came first. */
#define DEADLINE_MARGIN_MIN_MS 50.0
#define DEADLINE_MARGIN_MAX_MS 1000.0
#define TEXT_(x) #x
#define TEXT(x) TEXT_(x)

const char cmd_hook_usage[] =
    "usage: toolgate hook AGENT [options]   (the agent runs it)\n"
    "       toolgate hook install claude-code [--project | --user | --local]\n"
    "                              [--dry-run] [--policies DIR] ...\n"
    "       toolgate hook install codex|gemini|copilot|cursor|opencode\n"
    "                              [--project | --user] ...\n"
    "       toolgate hook uninstall AGENT [same places]\n"
    "AGENT: claude-code (claude), codex, gemini (gemini-cli), copilot\n"
    "(copilot-cli), cursor, opencode (its plugin runs the hook)\n"
    "\n"
    "Reads one hook event (JSON) on stdin, as the agent writes it before and\n"
    "after each of its tool calls, and writes the answer in the agent's\n"
    "format on stdout: the agent's tool call (Bash, Edit, Read, mcp__s__t,\n"
    "...) is judged as toolgate's (exec, apply_patch, read_file, s__t, ...)\n"
    "by the policies — rules and pre-hooks before the tool, post-hooks after\n"
    "it. A running 'toolgate watch' or 'toolgate daemon' for the same\n"
    "policies answers (fast); with none, the policies load here. Prompts,\n"
    "stops (the model's token usage, from the transcript) and sessions are\n"
    "recorded. See docs/agent-hooks.md.\n"
    "\n"
    "options:\n"
    "  --policies DIR      the policies folder (default ./policies)\n"
    "  --socket PATH       the resident instance's control socket\n"
    "  --on-error ANSWER   deny (default), ask or allow: the answer when the\n"
    "                      event is malformed, a policy fails, the policies\n"
    "                      do not load or the deadline passes\n"
    "  --deadline-ms N     answer within N ms, whatever happens (default "
    TEXT(DEFAULT_DEADLINE_MS) ")\n"
    "  --event NAME        the event's name, for an agent whose payload\n"
    "                      does not carry it (the installed line passes it)\n"
    "  --toolgate-defaults say toolgate's default verdict (ask, or allow\n"
    "                      for read-only tools) when no rule decides; by\n"
    "                      default the agent's own permissions decide then\n"
    "  --no-resident       do not ask a resident instance; load the policies\n"
    "  --start-daemon      with no resident instance, start 'toolgate daemon'\n"
    "                      for the next events (this one is answered here);\n"
    "                      it exits after 30 minutes without a hook\n"
    "  --db PATH           the database judged calls, turns, usage and\n"
    "                      sessions are recorded in (default\n"
    "                      $XDG_STATE_HOME/toolgate/toolgate.db)\n"
    "  --no-db             record nothing (a resident instance keeps turns\n"
    "                      and usage in memory)\n"
    "  --trusted-policies, --policy-time-limit MS, --policy-memory-cap BYTES\n"
    "                      the policy sandbox, as for 'toolgate call'\n"
    "\n"
    "install and uninstall options:\n"
    "  --project           the project's settings (default): .claude/settings.json,\n"
    "                      .codex/hooks.json, .gemini/settings.json,\n"
    "                      .github/hooks/toolgate.json (copilot),\n"
    "                      .cursor/hooks.json, .opencode/plugins/toolgate.js\n"
    "  --local             Claude Code's .claude/settings.local.json\n"
    "  --user              ~/.claude/settings.json, ~/.codex/hooks.json,\n"
    "                      ~/.gemini/settings.json, ~/.copilot/hooks/toolgate.json,\n"
    "                      ~/.cursor/hooks.json,\n"
    "                      ~/.config/opencode/plugins/toolgate.js\n"
    "  --settings FILE     another settings file\n"
    "  --dry-run           print the change and the new file; write nothing\n"
    "  --policies DIR      the policies the hook uses (default ./policies;\n"
    "                      when missing, the starter policies are written\n"
    "                      there first, as 'toolgate init' does)\n"
    "  --command CMD       how the hook runs toolgate (default: this\n"
    "                      binary's absolute path: the one it was run by,\n"
    "                      a symlink kept, unless that is in a versioned\n"
    "                      folder (Cellar/toolgate/0.1.0); else resolved)\n"
    "  --on-error, --deadline-ms, --start-daemon  put into the hook command\n"
    "\n"
    "exit status: 0 with the answer on stdout (or none: the agent's own\n"
    "flow goes on); 2 when the event could not be read and on-error is\n"
    "deny (the reason on stderr blocks the tool), or a usage error.\n"
    "install: 0 written and checked (the line was run once on a harmless\n"
    "event and answered); 1 the file could not be written, or the written\n"
    "line does not answer (it blocks until fixed); 2 usage error, or a\n"
    "settings file that is not JSON of the expected shape (left untouched).\n"
    "The installed line fails closed: a missing binary, a crash or a hang\n"
    "past the agent's timeout blocks the tool call, in the agent's own\n"
    "blocking form (exit 2; for copilot a deny on stdout; for cursor also\n"
    "\"failClosed\": true; opencode's plugin blocks on any exit but 0).\n";

typedef struct {
  const char *agent, *policies, *socket, *on_error, *deadline;
  const char *event_arg;      /* --event NAME: the agent's payload lacks it */
  int no_resident, toolgate_defaults, start_daemon;
  hook_sandbox sandbox;
  double deadline_at;         /* hook_now_ms's clock */
  double margin_ms;           /* kept back from it: deadline_margin */
} hook_run;

static const char *str(const cJSON *o, const char *k) {
  return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k));
}

/* The fail-safe answer for event (NULL: unread), printed; its exit code. */
static int fail_safe(hook_run *h, const char *event, const char *why) {
  tg_hook_result r;
  if (tg_hook_fallback(h->agent, event, h->on_error, why, &r) < 0) {
    cli_error("hook: %s", why);
    return 2;
  }
  int code = hook_emit(&r);
  tg_hook_result_free(&r);
  return code;
}

static void set_watchdog(hook_run *h, const char *event, uint64_t ms) {
  char why[200];
  tg_hook_result r;
  snprintf(why, sizeof why, "no answer within the hook's deadline of %llu ms "
           "(--deadline-ms)", (unsigned long long)ms);
  if (tg_hook_fallback(h->agent, event, h->on_error, why, &r) == 0) {
    watchdog_set(&r);
    tg_hook_result_free(&r);
  }
}

static double deadline_margin(uint64_t deadline_ms) {
  double m = (double)deadline_ms / 10;
  return m < DEADLINE_MARGIN_MIN_MS ? DEADLINE_MARGIN_MIN_MS
         : m > DEADLINE_MARGIN_MAX_MS ? DEADLINE_MARGIN_MAX_MS : m;
}

static double left_ms(const hook_run *h) {
  return h->deadline_at - h->margin_ms - hook_now_ms();
}

/* ---- the tool events --------------------------------------------------- */

typedef struct {
  int done;
  int code;
} in_process;

static void answered(tg_runtime *rt, const tg_hook_result *r, void *ud) {
  (void)rt;
  in_process *p = ud;
  p->done = 1;
  p->code = hook_emit(r);
}

/* `toolgate daemon` for the policies folder, detached: the next events
 * find it. Its own errors (another started first) stay its own. */
static void start_daemon(hook_run *h) {
  char self[PATH_MAX], dir[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0 || !realpath(h->policies, dir)) return;
  self[n] = '\0';
  pid_t pid = fork();
  if (pid < 0) return;
  if (pid > 0) {
    waitpid(pid, NULL, 0);
    return;
  }
  if (setsid() < 0 || fork() != 0) _exit(0);
  int null = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null >= 0) {
    dup2(null, 0);
    dup2(null, 1);
    dup2(null, 2);
  }
  /* the same sandbox as the in-process answer: the same answers */
  const char *argv[16] = {self, "daemon", "--policies", dir, "--idle-exit",
                          TEXT(ON_DEMAND_IDLE_MS)};
  int k = 6;
  if (h->sandbox.sb.trusted) argv[k++] = "--trusted-policies";
  if (h->sandbox.sb.time_limit) {
    argv[k++] = "--policy-time-limit";
    argv[k++] = h->sandbox.sb.time_limit;
  }
  if (h->sandbox.sb.memory_cap) {
    argv[k++] = "--policy-memory-cap";
    argv[k++] = h->sandbox.sb.memory_cap;
  }
  if (h->sandbox.db.no_db) argv[k++] = "--no-db";
  if (h->sandbox.db.db) {
    argv[k++] = "--db";
    argv[k++] = h->sandbox.db.db;
  }
  argv[k] = NULL;
  execv(self, (char *const *)argv);
  _exit(127);
}

/* Answers in-process the event read (*ev, taken: not parsed again). */
static int answer_here(hook_run *h, const tg_hook_request *req,
                       const char *event, cJSON **ev) {
  struct stat st;
  char err[TG_ERRMSG] = "", why[TG_ERRMSG + 100];
  if (stat(h->policies, &st) < 0 || !S_ISDIR(st.st_mode)) {
    snprintf(why, sizeof why, "the policies folder '%s' does not exist "
             "(--policies)", h->policies);
    return fail_safe(h, event, why);
  }
  char note[TG_ERRMSG + 4200];
  tg_runtime *rt = hook_runtime_here(h->policies, &h->sandbox, err, note,
                                     sizeof note);
  if (!rt) {
    snprintf(why, sizeof why, "the policies do not load: %s", err);
    return fail_safe(h, event, why);
  }
  if (note[0]) cli_error("hook: %s", note);
  in_process p = {0, 0};
  tg_hook_request here = *req;
  double left = left_ms(h);
  here.deadline_ms = left > 1 ? (uint64_t)left : 1;
  /* the answer takes the tree (event names a string in it): the name
   * is kept for a fail-safe answer after it */
  char *name = strdup(event);
  cJSON *tree = *ev;
  *ev = NULL;
  int code = p.code;
  if (tg__hook_answer_read(rt, &here, tree, answered, &p, err) < 0) {
    tg_runtime_free(rt);
    code = fail_safe(h, name, err);
  } else {
    /* a policy's context call may still run: the loop finishes it */
    while (!p.done && tg_runtime_run(rt, TG_RUN_ONCE)) {}
    tg_runtime_free(rt);
    code = p.done ? p.code : fail_safe(h, name, "the answer never came");
  }
  free(name);
  return code;
}

static int answer_event(hook_run *h, const char *text, size_t len,
                        const char *event, cJSON **ev) {
  tg_hook_request req;
  memset(&req, 0, sizeof req);
  req.agent = h->agent;
  req.event = text;
  req.event_len = len;
  req.on_error = h->on_error;
  req.toolgate_defaults = h->toolgate_defaults;
  req.event_name = h->event_arg;
  if (!h->no_resident) {
    char path[PATH_MAX], err[TG_ERRMSG] = "";
    const char *sock = h->socket;
    if (!sock && tg_control_path(h->policies, path, sizeof path, err) == 0)
      sock = path;
    /* half the time left: an instance that is stuck leaves the rest for
     * answering here */
    double left = left_ms(h) / 2;
    if (sock && left >= 1) {
      tg_hook_result r;
      /* the instance's own tools for context stop before we give up */
      req.deadline_ms = left > 2 * h->margin_ms
                            ? (uint64_t)(left - h->margin_ms) : 1;
      int rc = tg_hook_remote(sock, &req, &r, (uint64_t)left, err);
      if (rc == 0) {
        int code = hook_emit(&r);
        tg_hook_result_free(&r);
        /* when a hook was last answered, for the daemon's --idle-exit and
         * `toolgate daemon status` (daemon_cmd.c) */
        utimensat(AT_FDCWD, sock, NULL, 0);
        return code;
      }
      if (rc == -ENOENT || rc == -ECONNREFUSED) {
        if (h->start_daemon) start_daemon(h);
      } else {
        /* stuck or confused: still correct, slower */
        cli_error("hook: the resident instance did not answer (%s); "
                   "answering here", err);
      }
    }
  }
  return answer_here(h, &req, event, ev);
}

/* ---- the command ---------------------------------------------------------- */

static int parse(hook_run *h, int argc, char **argv) {
  static const char *const names[] = {"AGENT"};
  const char *pos[1] = {NULL};
  const opt_spec specs[] = {
      {"--policies", OPT_VALUE, NULL, &h->policies},
      {"--socket", OPT_VALUE, NULL, &h->socket},
      {"--on-error", OPT_VALUE, NULL, &h->on_error},
      {"--deadline-ms", OPT_VALUE, NULL, &h->deadline},
      {"--event", OPT_VALUE, NULL, &h->event_arg},
      {"--no-resident", OPT_FLAG, &h->no_resident, NULL},
      {"--toolgate-defaults", OPT_FLAG, &h->toolgate_defaults, NULL},
      {"--start-daemon", OPT_FLAG, &h->start_daemon, NULL},
      HOOK_SANDBOX_OPTS(&h->sandbox),
  };
  const opt_parser p = {"hook", specs, sizeof specs / sizeof *specs, pos, 0,
                        1, names, "hook AGENT [options]"};
  int npos, rc = opt_parse(&p, argc, argv, &npos);
  if (rc == OPT_PARSE_HELP) {
    fputs(cmd_hook_usage, stdout);
    return CLI_EXIT_OK;
  }
  if (rc != OPT_PARSE_OK) return CLI_EXIT_USAGE;
  if (!npos || !tg_hook_agent_known(pos[0])) {
    cli_error("hook: %s (known: %s; or install, uninstall)",
              npos ? "unknown agent" : "which agent? ", tg__dialect_names());
    return CLI_EXIT_USAGE;
  }
  h->agent = pos[0];
  if (!tg_hook_on_error_known(h->on_error)) {
    cli_error("hook: --on-error is deny, ask or allow, not '%s'", h->on_error);
    return CLI_EXIT_USAGE;
  }
  return -1;
}

int cmd_hook(int argc, char **argv) {
  if (argc >= 1 && (!strcmp(argv[0], "install") || !strcmp(argv[0], "uninstall")))
    return hook_install(argc - 1, argv + 1, !strcmp(argv[0], "uninstall"));
  hook_run h;
  memset(&h, 0, sizeof h);
  h.policies = "policies";
  int code = parse(&h, argc, argv);
  if (code >= 0) return code;
  uint64_t deadline = DEFAULT_DEADLINE_MS;
  if (h.deadline &&
      opt_millis("hook", "--deadline-ms", h.deadline, &deadline) < 0)
    return CLI_EXIT_USAGE;
  h.deadline_at = hook_now_ms() + (double)deadline;
  h.margin_ms = deadline_margin(deadline);
  /* before the event is read, its name is --event's, if given */
  set_watchdog(&h, h.event_arg, deadline);
  if (watchdog_start(deadline) < 0)
    cli_error("hook: cannot arm the deadline: %s", strerror(errno));
  char why[TG_ERRMSG + 64];
  char *text = NULL;
  size_t len = 0;
  int rc = hook_read_all(0, TG_HOOK_MAX_EVENT, h.deadline_at - h.margin_ms,
                         &text, &len);
  if (rc < 0) {
    snprintf(why, sizeof why, rc == -EFBIG ? "the hook event is over %u bytes"
             : rc == -ETIMEDOUT ? "stdin did not close, nor hold one whole "
                                  "JSON object, before the deadline"
             : "stdin cannot be read", TG_HOOK_MAX_EVENT);
    return fail_safe(&h, h.event_arg, why);
  }
  /* read once: the in-process answer takes the tree, not the text */
  cJSON *ev = tg__hook_read_event(tg__dialect(h.agent), text, len,
                                  h.event_arg, why, sizeof why);
  const char *event = str(ev, "hook_event_name");
  if (!ev) {
    code = fail_safe(&h, h.event_arg, why);
  } else {
    set_watchdog(&h, event, deadline);
    /* the events toolgate neither answers nor records are passed over
     * without loading anything (the protocols grow) */
    int known = tg_hook_event_known(event);
    code = known ? answer_event(&h, text, len, event, &ev) : 0;
    /* an agent that takes silence for a failure gets an empty answer */
    if (!known && tg__dialect(h.agent)->answer_always) fputs("{}\n", stdout);
  }
  watchdog_hold(); /* answered: the deadline no longer applies */
  cJSON_Delete(ev);
  free(text);
  return code;
}
