/*
 * call_cmd.c — `toolgate call TOOL JSON`: one call through the whole chain,
 * its outcome for people or (--json) for machines.
 *
 * The run: check the args, open the events file, make the runtime (loading
 * the policies), install the approver and the Ctrl-C watcher, start the
 * call, turn the loop until the call is done, close our handles, report.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <uv.h>
#include <cjson/cJSON.h>
#include "toolgate.h"
#include "approver_tty.h"
#include "args_json.h"
#include "commands.h"
#include "events_file.h"
#include "notices.h"
#include "interrupt.h"
#include "spinner.h"
#include "kit/options.h"
#include "kit/output.h"

#define DEFAULT_POLICIES "policies"

const char cmd_call_usage[] =
    "usage: toolgate call TOOL JSON [options]\n"
    "\n"
    "Runs one call of TOOL with the args JSON (an object) through the chain:\n"
    "rules, hooks, validation, approval, execution.\n"
    "\n"
    "options:\n"
    "  --policies DIR      policy files (default ./policies, if it exists)\n"
    "  --json              print the outcome as one JSON object\n"
    "  --approve=MODE      ask (default: on a terminal), deny or allow;\n"
    "                      without a terminal, ask means deny\n"
    "  --events FILE       append every event as a JSON line ('-': stderr)\n"
    "  --session S         the session id (default \"default\")\n"
    "  --timeout-ms N      the default per-attempt timeout\n"
    "  --approval-timeout-ms N\n"
    "                      how long an ask waits for its answer (default\n"
    "                      5 minutes); no answer rejects the call\n"
    "  --exec-output-cap N bytes of stdout and of stderr that exec keeps\n"
    "                      (head and tail; default 1M; K, M, G suffixes)\n"
    "  --kill-grace-ms N   from SIGTERM to SIGKILL when exec is stopped\n"
    "                      (default 2000)\n"
    "  --workspace DIR     the root the file tools are confined to\n"
    "                      (default: the current directory)\n"
    SANDBOX_OPT_USAGE
    DB_OPT_USAGE
    "\n"
    "The call is recorded in the audit trail (toolgate log) before its\n"
    "outcome is printed.\n"
    "\n"
    "exit status: 0 ok; 1 the call failed, was denied, rejected, cancelled\n"
    "or timed out; 2 usage or configuration error. Ctrl-C cancels the call;\n"
    "a second Ctrl-C quits at once.\n";

typedef struct {
  const char *tool, *args_json;
  cJSON *args;               /* args_json parsed */
  const char *policies;      /* NULL: run with no policies */
  const char *events_path;   /* NULL: no events file */
  const char *session;
  int json;
  tg_approve_mode mode;
  int ask_on_tty;            /* mode "ask" and there is a terminal */
  int no_terminal;           /* mode "ask" but no terminal: asks denied */
  uint64_t timeout_ms;       /* 0: the runtime default */
  uint64_t approval_timeout_ms; /* 0: the runtime default */
  uint64_t exec_output_cap;  /* 0: the runtime default */
  uint64_t kill_grace_ms;    /* 0: the runtime default */
  const char *workspace[2];  /* --workspace DIR, NULL-terminated; NULL: cwd */
  sandbox_options sandbox;   /* the policy sandbox's limits */
  db_options db;             /* --db, --no-db */
} call_options;

/* Everything one run holds; the callbacks get it through their ud. */
typedef struct {
  call_options opt;
  tg_runtime *rt;
  events_file *events;
  cli_notices notices;       /* notifications on stderr (notices.h) */
  int subscription;
  tty_approver *approver;
  cli_interrupt *interrupt;
  cli_spinner *spinner;      /* NULL: no terminal, --json or events on stderr */
  char *call_id;             /* learned from its first event, for Ctrl-C */
  cJSON *outcome;            /* tg_outcome_to_json of the finished call */
  int done;
  int unknown_tool;
} call_run;

/* ---- options -------------------------------------------------------- */

static int parse_approve(call_options *o, const char *mode) {
  if (!mode || strcmp(mode, "ask") == 0) {
    o->ask_on_tty = tty_approver_possible();
    o->no_terminal = !o->ask_on_tty;
    o->mode = o->ask_on_tty ? TG_APPROVE_CALLBACK : TG_APPROVE_DENY;
  } else if (strcmp(mode, "deny") == 0) {
    o->mode = TG_APPROVE_DENY;
  } else if (strcmp(mode, "allow") == 0) {
    o->mode = TG_APPROVE_ALLOW;
  } else {
    cli_error("call: option '--approve' takes ask, deny or allow, not '%s'",
              mode);
    return -1;
  }
  return 0;
}

/* The default directory is optional; one named with --policies is not.
 * Running without policies is said out loud: no shell rule then. */
static const char *policies_dir(const char *given) {
  struct stat st;
  if (given) return given;
  if (stat(DEFAULT_POLICIES, &st) < 0 && errno == ENOENT) {
    cli_error("note: no ./" DEFAULT_POLICIES " folder here, so no policies "
              "(no rules, no policy tools); use --policies DIR");
    return NULL;
  }
  return DEFAULT_POLICIES;
}

/* Returns -1 to go on, else the exit code. */
static int parse_call_options(call_options *o, int argc, char **argv) {
  static const char *const names[] = {"TOOL", "JSON"};
  const char *pos[2], *approve = NULL, *policies = NULL;
  const char *timeout = NULL, *approval_timeout = NULL;
  const char *output_cap = NULL, *grace = NULL;
  const opt_spec specs[] = {
      {"--policies", OPT_VALUE, NULL, &policies},
      {"--json", OPT_FLAG, &o->json, NULL},
      {"--approve", OPT_VALUE, NULL, &approve},
      {"--events", OPT_VALUE, NULL, &o->events_path},
      {"--session", OPT_VALUE, NULL, &o->session},
      {"--timeout-ms", OPT_VALUE, NULL, &timeout},
      {"--approval-timeout-ms", OPT_VALUE, NULL, &approval_timeout},
      {"--exec-output-cap", OPT_VALUE, NULL, &output_cap},
      {"--kill-grace-ms", OPT_VALUE, NULL, &grace},
      {"--workspace", OPT_VALUE, NULL, &o->workspace[0]},
      SANDBOX_OPT_SPECS(&o->sandbox),
      DB_OPT_SPECS(&o->db),
  };
  const opt_parser p = {"call", specs, sizeof specs / sizeof *specs, pos,
                        2, 2, names, "call TOOL JSON [options]"};
  int npos;
  int rc = opt_parse(&p, argc, argv, &npos);
  if (rc == OPT_PARSE_HELP) {
    fputs(cmd_call_usage, stdout);
    return CLI_EXIT_OK;
  }
  if (rc != OPT_PARSE_OK || parse_approve(o, approve) < 0 ||
      (timeout && opt_millis("call", "--timeout-ms", timeout,
                             &o->timeout_ms) < 0) ||
      (approval_timeout &&
       opt_millis("call", "--approval-timeout-ms", approval_timeout,
                  &o->approval_timeout_ms) < 0) ||
      (output_cap && opt_bytes("call", "--exec-output-cap", output_cap,
                               &o->exec_output_cap) < 0) ||
      (grace && opt_millis("call", "--kill-grace-ms", grace,
                           &o->kill_grace_ms) < 0))
    return CLI_EXIT_USAGE;
  o->tool = pos[0];
  o->args_json = pos[1];
  o->policies = policies_dir(policies);
  return -1;
}

/* ---- callbacks from the runtime ------------------------------------- */

/* The spinner follows the tool: it starts with the first attempt (after
 * any approval prompt) and shows the last line progress events carry. */
static void show_activity(call_run *r, const tg_event *ev) {
  if (strcmp(ev->type, "attempt") == 0) {
    cli_spinner_start(r->spinner);
  }
}

/* The spinner's line is the call's item of the progress manager
 * (toolgate.h): "42%  message", "step 2/5  label" or the last line. */
static void on_progress_item(tg_runtime *rt, const char *change,
                             const cJSON *item, const cJSON *list, void *ud) {
  call_run *r = ud;
  const char *id = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(item, "call_id"));
  if (!r->call_id || !id || strcmp(id, r->call_id)) return;
  const char *msg = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(item, "message"));
  const cJSON *pct = cJSON_GetObjectItemCaseSensitive(item, "percent");
  char line[600];
  if (cJSON_IsNumber(pct))
    snprintf(line, sizeof line, "%.0f%%  %s", pct->valuedouble, msg ? msg : "");
  else
    snprintf(line, sizeof line, "%s", msg ? msg : "");
  cli_spinner_set_line(r->spinner, line);
}

static void clear_spinner(void *ud) { cli_spinner_clear(((call_run *)ud)->spinner); }

/* Every event of the runtime, for --events FILE. */
static void on_any_event(tg_runtime *rt, const tg_event *ev, void *ud) {
  call_run *r = ud;
  events_file_write(r->events, ev);
}

/* Our call's own events (tg_call_request.on_event): the first names its
 * id, which Ctrl-C needs. */
static void on_call_event(tg_runtime *rt, const tg_event *ev, void *ud) {
  call_run *r = ud;
  if (!r->call_id && ev->call_id) r->call_id = strdup(ev->call_id);
  if (r->spinner) show_activity(r, ev);
}

static void on_done(tg_runtime *rt, const tg_outcome *out, void *ud) {
  call_run *r = ud;
  cli_spinner_stop(r->spinner); /* before anything prints */
  r->outcome = tg_outcome_to_json(out);
  r->done = 1;
  /* The tool named on the command line does not exist (a pre-hook
   * rerouting to an unknown tool fails in PRE_HOOK: a call failure). */
  r->unknown_tool = out->error.phase == TG_PHASE_VALIDATE &&
                    tg_error_code_of(out->error.code) == TG_E_UNKNOWN_TOOL;
}

static int cancel_running(void *ud) {
  call_run *r = ud;
  if (r->done || !r->call_id) return -ENOENT;
  return tg_call_cancel(r->rt, r->call_id);
}

/* The second Ctrl-C exits at once: no command of ours may outlive us. */
static void kill_running(void *ud) {
  call_run *r = ud;
  tg_runtime_kill_processes(r->rt);
}

/* ---- setting up and tearing down ------------------------------------ */

static int make_runtime(call_run *r) {
  tg_config cfg;
  char err[TG_ERRMSG] = "";
  tg_config_init(&cfg);
  cfg.policies_dir = r->opt.policies;
  cfg.session = r->opt.session;
  cfg.approve_mode = r->opt.mode;
  if (r->opt.timeout_ms) cfg.timeout_ms = r->opt.timeout_ms;
  if (r->opt.approval_timeout_ms)
    cfg.approval_timeout_ms = r->opt.approval_timeout_ms;
  cfg.exec_output_cap = (size_t)r->opt.exec_output_cap;
  cfg.kill_grace_ms = r->opt.kill_grace_ms;
  if (r->opt.workspace[0]) cfg.workspace_roots = r->opt.workspace;
  if (sandbox_options_apply("call", &r->opt.sandbox, &cfg) < 0 ||
      db_options_apply("call", &r->opt.db, &cfg) < 0)
    return -1;
  r->rt = tg_runtime_new(&cfg, NULL, err);
  if (!r->rt) cli_error("%s", err);
  return r->rt ? 0 : -1;
}

/* Returns 0 or the exit code. */
static int set_up(call_run *r) {
  if (r->opt.events_path && !(r->events = events_file_open(r->opt.events_path)))
    return CLI_EXIT_USAGE;
  if (make_runtime(r) < 0) return CLI_EXIT_USAGE;
  if (r->events) { /* --events: every event, not only our call's */
    r->subscription = tg_events_subscribe(r->rt, on_any_event, r);
    if (r->subscription < 0) {
      cli_error("cannot subscribe to events: %s", strerror(-r->subscription));
      return CLI_EXIT_FAILED;
    }
  }
  if (r->opt.ask_on_tty && !(r->approver = tty_approver_new(r->rt))) {
    cli_error("out of memory");
    return CLI_EXIT_FAILED;
  }
  r->interrupt = cli_interrupt_start(tg_runtime_loop(r->rt), cancel_running,
                                      kill_running, r);
  int events_on_stderr = r->opt.events_path && !strcmp(r->opt.events_path, "-");
  if (!r->opt.json && !events_on_stderr)
    r->spinner = cli_spinner_new(tg_runtime_loop(r->rt), r->opt.tool);
  if (r->spinner) tg_progress_subscribe(r->rt, on_progress_item, r);
  r->notices = (cli_notices){clear_spinner, r};
  cli_notices_to_stderr(r->rt, &r->notices);
  return r->interrupt ? 0 : CLI_EXIT_FAILED;
}

/* Closes our handles while the runtime still runs the loop, so their close
 * callbacks run and uv_run can return. */
static void close_handles(call_run *r) {
  tty_approver_close(r->approver);
  r->approver = NULL;
  cli_interrupt_close(r->interrupt);
  r->interrupt = NULL;
  cli_spinner_close(r->spinner);
  r->spinner = NULL;
  if (r->rt) tg_runtime_run(r->rt, TG_RUN_NOWAIT);
}

static int tear_down(call_run *r, int code) {
  close_handles(r);
  if (r->rt && r->subscription > 0)
    tg_events_unsubscribe(r->rt, r->subscription);
  tg_runtime_free(r->rt);
  if (events_file_close(r->events) < 0 && code == CLI_EXIT_OK)
    code = CLI_EXIT_FAILED;
  free(r->call_id);
  cJSON_Delete(r->outcome);
  cJSON_Delete(r->opt.args);
  return code;
}

/* ---- running and reporting ------------------------------------------ */

static int wait_until_done(call_run *r) {
  while (!r->done) {
    if (tg_runtime_run(r->rt, TG_RUN_ONCE) == 0 && !r->done) {
      cli_error("internal error: nothing left to wait for, but the call has "
                "not ended");
      return -1;
    }
  }
  return 0;
}

static void report_unknown_tool(call_run *r) {
  cJSON *d = tg_runtime_describe(r->rt);
  const cJSON *t;
  cli_error("unknown tool '%s'", r->opt.tool);
  fputs("toolgate: registered tools:", stderr);
  int n = 0;
  cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(d, "tools")) {
    const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(t, "name"));
    fprintf(stderr, "%s %s", n++ ? "," : "", name ? name : "?");
  }
  if (!n)
    fprintf(stderr, " none (%s)", r->opt.policies
                                      ? "the policies register no tools"
                                      : "no ./policies directory");
  fputc('\n', stderr);
  cJSON_Delete(d);
}

static const char *outcome_status(const call_run *r) {
  const cJSON *status = cJSON_GetObjectItemCaseSensitive(r->outcome, "status");
  const char *s = cJSON_GetStringValue(status);
  return s ? s : "";
}

static int report(call_run *r, int was_asking) {
  if (r->unknown_tool) {
    report_unknown_tool(r);
    return CLI_EXIT_USAGE;
  }
  int rejected = strcmp(outcome_status(r), "rejected") == 0;
  if (was_asking && rejected) {
    fputc('\n', stderr); /* the prompt line is still open */
    cli_error("no answer in time: the approval timed out, so the call was "
              "rejected");
  }
  if (r->opt.no_terminal && rejected)
    cli_error("the call needed approval and there is no terminal to ask on, "
              "so it was rejected (use --approve=allow to let it run)");
  if (r->opt.json)
    cli_print_json_line(stdout, r->outcome);
  else
    cli_print_outcome(stdout, r->outcome, cli_color_wanted(stdout));
  fflush(stdout);
  return strcmp(outcome_status(r), "ok") == 0 ? CLI_EXIT_OK : CLI_EXIT_FAILED;
}

static int run_call(call_run *r) {
  tg_call_request req;
  char err[TG_ERRMSG] = "";
  memset(&req, 0, sizeof req);
  req.tool = r->opt.tool;
  req.args = r->opt.args; /* parsed once, by args_json_parse */
  req.on_event = on_call_event;
  req.events_ud = r;
  if (tg_call_start(r->rt, &req, on_done, r, err) < 0) {
    cli_error("call: %s", err);
    return CLI_EXIT_USAGE;
  }
  if (wait_until_done(r) < 0) return CLI_EXIT_FAILED;
  int was_asking = tty_approver_pending(r->approver);
  close_handles(r);
  return report(r, was_asking);
}

int cmd_call(int argc, char **argv) {
  call_run r;
  memset(&r, 0, sizeof r);
  int code = parse_call_options(&r.opt, argc, argv);
  if (code >= 0) return code;
  r.opt.args = args_json_parse("call", r.opt.args_json);
  if (!r.opt.args) return CLI_EXIT_USAGE;
  code = set_up(&r);
  if (code == 0) code = run_call(&r);
  return tear_down(&r, code);
}
