/*
 * explain_cmd.c — `toolgate explain TOOL JSON`: the dry run of tg_explain
 * for policy authors, for people (default) or machines (--json); and
 * `toolgate explain --event FILE|-`: what toolgate makes of a coding
 * agent's hook event (tg_hook_explain: the mapped call, the rules'
 * answers, the pre-hooks' rewrite, the answer the agent would get). The
 * human rendering reads the same JSON that --json prints.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cjson/cJSON.h>
#include "toolgate.h"
#include "kit/kit.h"
#include "args_json.h"
#include "table.h"
#include "commands.h"
#include "kit/options.h"
#include "kit/output.h"

const char cmd_explain_usage[] =
    "usage: toolgate explain TOOL JSON [options]\n"
    "       toolgate explain --event FILE|- [--agent AGENT] [options]\n"
    "\n"
    "Shows what the chain would decide for a call of TOOL with the args JSON,\n"
    "without running it: every rule in evaluation order and what it answered\n"
    "(allow, deny, ask, no answer, error), the rules skipped or not reached,\n"
    "the verdict and the rule that made it (or the default, and why), what\n"
    "an ask would lead to, the schema check, and the pre-hooks and\n"
    "post-hooks that would run, in run order. TOOL may be a coding agent's\n"
    "(Bash, Edit, Read, mcp__SERVER__TOOL, ...) with the agent's input as\n"
    "JSON: it is explained as the agent's hook judges it.\n"
    "\n"
    "The rules are evaluated for real: they are judges and should have no\n"
    "side effects (a rule can tell a dry run by call.dry_run). Hooks and the\n"
    "tool do not run.\n"
    "\n"
    "With --event, the call is a coding agent's, read from its hook event\n"
    "(the JSON Claude Code or Codex sends `toolgate hook` on stdin; - reads\n"
    "stdin): the agent's tool call as toolgate maps it (tool, args, the\n"
    "agent's names, the paths it touches), every rule's answer, then what\n"
    "`toolgate hook` would answer, from the same code: the pre-hooks run\n"
    "(their rewrite is shown, and the agent's updatedInput), the tools a\n"
    "policy asks to run for the model's context are listed, not run, and\n"
    "the exact output and exit code the agent would get. The session's\n"
    "taint and the remembered approvals are read from the database the\n"
    "hook would keep them in (--db, else the default; not with --no-db),\n"
    "as the hook sees them, and the approval that allows the call is\n"
    "named; nothing is recorded (no audit, no new taint, no approval).\n"
    "\n"
    "options:\n"
    "  --event FILE|-      explain the agent's hook event in FILE (-: stdin)\n"
    "  --agent AGENT       whose event: claude (claude-code), codex, ...\n"
    "                      as `toolgate hook AGENT` (default: detected, an\n"
    "                      event with turn_id is Codex's, else Claude Code's)\n"
    "  --event-name NAME   the event's name, for an agent whose payload\n"
    "                      does not say it (as `toolgate hook --event`)\n"
    "  --on-error ANSWER   as `toolgate hook --on-error`: deny (default),\n"
    "                      ask or allow when nothing can judge\n"
    "  --toolgate-defaults as `toolgate hook --toolgate-defaults`\n"
    "  --policies DIR      policy files (default ./policies, if it exists)\n"
    "  --json              print the explanation as one JSON object\n"
    "  --session S         the session id (default \"default\")\n"
    "  --approve=MODE      how an ask would be answered: ask (default),\n"
    "                      deny or allow\n"
    SANDBOX_OPT_USAGE
    DB_OPT_USAGE
    "                      (the database holds the remembered approvals;\n"
    "                      with --event, the session's taint, read only)\n"
    "\n"
    "exit status: 0 explained (whatever the verdict); 2 usage or\n"
    "configuration error: bad JSON, unknown tool, a policy that does not\n"
    "load.\n";

typedef struct {
  const char *tool, *args_json, *policies, *session, *approve;
  const char *event, *agent, *on_error, *event_name;
  int json, toolgate_defaults;
  sandbox_options sandbox;
  db_options db;
} explain_options;

static const char *default_policies(const char *given) {
  struct stat st;
  if (given) return given;
  return stat("policies", &st) < 0 && errno == ENOENT ? NULL : "policies";
}

/* Returns -1 to go on, else the exit code. */
static int parse_explain_options(explain_options *o, int argc, char **argv) {
  static const char *const names[] = {"TOOL", "JSON"};
  const char *pos[2];
  const opt_spec specs[] = {
      {"--policies", OPT_VALUE, NULL, &o->policies},
      {"--json", OPT_FLAG, &o->json, NULL},
      {"--session", OPT_VALUE, NULL, &o->session},
      {"--approve", OPT_VALUE, NULL, &o->approve},
      {"--event", OPT_VALUE, NULL, &o->event},
      {"--agent", OPT_VALUE, NULL, &o->agent},
      {"--event-name", OPT_VALUE, NULL, &o->event_name},
      {"--on-error", OPT_VALUE, NULL, &o->on_error},
      {"--toolgate-defaults", OPT_FLAG, &o->toolgate_defaults, NULL},
      SANDBOX_OPT_SPECS(&o->sandbox),
      DB_OPT_SPECS(&o->db),
  };
  const opt_parser p = {"explain", specs, sizeof specs / sizeof *specs, pos,
                        0, 2, names, "explain TOOL JSON [options]"};
  int npos;
  int rc = opt_parse(&p, argc, argv, &npos);
  if (rc == OPT_PARSE_HELP) {
    fputs(cmd_explain_usage, stdout);
    return CLI_EXIT_OK;
  }
  if (rc != OPT_PARSE_OK) return CLI_EXIT_USAGE;
  if (o->approve && strcmp(o->approve, "ask") && strcmp(o->approve, "deny") &&
      strcmp(o->approve, "allow")) {
    cli_error("explain: option '--approve' takes ask, deny or allow, not '%s'",
              o->approve);
    return CLI_EXIT_USAGE;
  }
  if (o->event ? npos != 0 : npos != 2) {
    cli_error(o->event ? "explain: --event explains the agent's call: no TOOL "
                         "or JSON with it"
                       : "explain: TOOL and JSON are required (or --event "
                         "FILE)");
    return CLI_EXIT_USAGE;
  }
  if (!o->event && (o->agent || o->on_error || o->toolgate_defaults ||
                    o->event_name)) {
    cli_error("explain: --agent, --event-name, --on-error and "
              "--toolgate-defaults go with --event");
    return CLI_EXIT_USAGE;
  }
  if (o->agent && !strcmp(o->agent, "claude")) o->agent = "claude-code";
  if (o->agent && !tg_hook_agent_known(o->agent)) {
    /* "claude-code, codex, ..." read with Claude Code as "claude" */
    const char *known = tg__dialect_names(), *cc = "claude-code, ";
    if (!strncmp(known, cc, strlen(cc))) known += strlen(cc);
    cli_error("explain: --agent takes claude or %s, not '%s'", known,
              o->agent);
    return CLI_EXIT_USAGE;
  }
  if (o->on_error && !tg_hook_on_error_known(o->on_error)) {
    cli_error("explain: --on-error takes deny, ask or allow, not '%s'",
              o->on_error);
    return CLI_EXIT_USAGE;
  }
  o->tool = pos[0];
  o->args_json = pos[1];
  o->policies = default_policies(o->policies);
  return -1;
}

/* Never called: explain starts no call. Its presence is what makes an ask
 * explain as "the approver would be asked", as `toolgate call` on a
 * terminal would. */
static void no_approver(tg_runtime *rt, const tg_approval_request *q,
                        void *ud) {}

static tg_runtime *make_runtime(const explain_options *o) {
  tg_config cfg;
  char err[TG_ERRMSG] = "";
  tg_config_init(&cfg);
  cfg.policies_dir = o->policies;
  cfg.session = o->session;
  cfg.builtin_tools = 1;
  if (o->approve && !strcmp(o->approve, "deny")) cfg.approve_mode = TG_APPROVE_DENY;
  if (o->approve && !strcmp(o->approve, "allow")) cfg.approve_mode = TG_APPROVE_ALLOW;
  if (sandbox_options_apply("explain", &o->sandbox, &cfg) < 0 ||
      db_options_apply("explain", &o->db, &cfg) < 0)
    return NULL;
  if (o->event) cfg.db_off = 1; /* the answer is given, never recorded */
  tg_runtime *rt = tg_runtime_new(&cfg, NULL, err);
  if (!rt) cli_error("%s", err);
  else tg_runtime_set_approver(rt, no_approver, NULL);
  return rt;
}

/* ---- for people -------------------------------------------------------- */

static const char *str(const cJSON *o, const char *k) {
  return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k));
}

static const char *verdict_color(const char *v) {
  if (!v) return "0";
  return !strcmp(v, "allow") ? "32" : !strcmp(v, "deny") ? "31" : "33";
}

static void print_rule(FILE *f, const cJSON *r, int *n, int color,
                       const char *decider) {
  const char *status = str(r, "status");
  int ran = strcmp(status, "skipped") && strcmp(status, "not reached");
  if (ran) fprintf(f, "  %-3d", ++*n);
  else fputs("  -  ", f);
  /* numbers are printed as the doubles they are: a cast of a NaN (a
   * missing key) or of a value past INT_MAX would be undefined */
  fprintf(f, "%-24s %5.0f  %-28s ", str(r, "name"),
          cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(r, "priority")),
          str(r, "where"));
  const char *answer = str(r, "answer");
  if (answer) {
    cli_sgr(f, color, verdict_color(answer));
    fputs(answer, f);
    cli_sgr(f, color, "0");
    if (str(r, "reason")) fprintf(f, ": %s", str(r, "reason"));
  } else if (!strcmp(status, "error")) {
    fprintf(f, "error (fail %s): %s", str(r, "fail") ? str(r, "fail") : "closed",
            str(r, "error"));
  } else if (!strcmp(status, "skipped")) {
    fprintf(f, "skipped (%s)", str(r, "why"));
  } else {
    fputs(status, f);
  }
  if (decider && ran && !strcmp(decider, str(r, "name"))) fputs("   <- decides", f);
  fputc('\n', f);
}

static void print_hooks(FILE *f, const char *title, const cJSON *hooks) {
  fprintf(f, "%s\n", title);
  int n = 0;
  const cJSON *h;
  cJSON_ArrayForEach(h, hooks)
    fprintf(f, "  %-3d%s (%s)\n", ++n, str(h, "where"), str(h, "tool"));
  if (!n) fputs("  none\n", f);
}

static void print_decision(FILE *f, const cJSON *j, int color) {
  const cJSON *d = cJSON_GetObjectItemCaseSensitive(j, "decision");
  int failed = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(d, "policy_error"));
  const char *v = failed ? "error" : str(d, "verdict");
  fputs("verdict   ", f);
  cli_sgr(f, color, verdict_color(failed ? "deny" : v));
  cli_sgr(f, color, "1");
  fputs(v, f);
  cli_sgr(f, color, "0");
  if (failed)
    fprintf(f, ", rule '%s' (%s) failed closed", str(d, "rule"),
            str(d, "where"));
  else if (str(d, "rule"))
    fprintf(f, ", by rule '%s' (%s)", str(d, "rule"), str(d, "where"));
  else
    fputs(", by default", f);
  if (str(d, "reason")) fprintf(f, ": %s", str(d, "reason"));
  fprintf(f, "\nwhy       %s\n", str(d, "why"));
  if (str(j, "approval")) fprintf(f, "approval  %s\n", str(j, "approval"));
  const cJSON *val = cJSON_GetObjectItemCaseSensitive(j, "validation");
  if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(val, "ok")))
    fprintf(f, "schema    %s\n", str(val, "note") ? str(val, "note")
                                                   : "the args match");
  else
    fprintf(f, "schema    the args do not match: %s\n", str(val, "error"));
}

/* call.paths: each as written -> where it leads (or why it cannot be
 * told); call.commands: each simple command, its wrappers and why the
 * analysis could not see through it. */
/* s with control characters as spaces: a policy's text is its own. */
static void put_plain(FILE *f, const char *s) {
  for (; s && *s; s++) fputc((unsigned char)*s < 0x20 || *s == 0x7f ? ' ' : *s, f);
}

static void print_facts(FILE *f, const cJSON *j) {
  const cJSON *e, *paths = cJSON_GetObjectItemCaseSensitive(j, "paths");
  const char *label = "paths     ";
  cJSON_ArrayForEach(e, paths) {
    if (str(e, "error"))
      fprintf(f, "%s%s: cannot tell where it leads: %s\n", label,
              str(e, "written"), str(e, "error"));
    else
      fprintf(f, "%s%s -> %s\n", label, str(e, "written"), str(e, "resolved"));
    label = "          ";
  }
  label = "commands  ";
  cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(j, "commands")) {
    fputs(label, f);
    const cJSON *w;
    int n = 0;
    cJSON_ArrayForEach(w, cJSON_GetObjectItemCaseSensitive(e, "argv"))
      if (cJSON_IsString(w)) fprintf(f, "%s%s", n++ ? " " : "", w->valuestring);
    if (!n) fputs("(no command)", f);
    n = 0;
    cJSON_ArrayForEach(w, cJSON_GetObjectItemCaseSensitive(e, "wrappers"))
      if (cJSON_IsString(w))
        fprintf(f, "%s%s", n++ ? " > " : "   (inside ", w->valuestring);
    if (n) fputc(')', f);
    if (str(e, "opaque")) fprintf(f, "   OPAQUE: %s", str(e, "opaque"));
    fputc('\n', f);
    label = "          ";
  }
  if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "network")))
    fputs("network   toolgate.lua marks the tool as reaching the network\n", f);
  const cJSON *t;
  cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(j, "taints")) {
    fputs("taint     would mark session ", f);
    put_plain(f, str(t, "session"));
    fprintf(f, " sensitive (level %.0f): ",
            cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(t, "level")));
    put_plain(f, str(t, "reason"));
    fputs(" — not kept: explain changes nothing\n", f);
  }
  if (str(j, "facts_error"))
    fprintf(f, "facts     could not be read: %s\n", str(j, "facts_error"));
}

static void print_explanation(FILE *f, const cJSON *j, int color) {
  char *args = tg_json_print(cJSON_GetObjectItemCaseSensitive(j, "args"), 0);
  const cJSON *ti = cJSON_GetObjectItemCaseSensitive(j, "tool_info");
  fprintf(f, "explain   %s %s  (generation %.0f, session %s)\n", str(j, "tool"),
          args ? args : "{}",
          cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(j, "generation")),
          str(j, "session"));
  cJSON_free(args);
  if (str(j, "agent"))
    fprintf(f, "agent     %s is %s's tool, with its input: judged as %s\n",
            str(j, "agent_tool"), str(j, "agent"), str(j, "tool"));
  fprintf(f, "tool      %s, %s\n\n", str(ti, "where"),
          cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ti, "read_only")) ? "read-only"
                                                             : "not read-only");
  fputs("rules, in evaluation order:\n", f);
  int n = 0;
  const cJSON *r;
  const char *decider = str(cJSON_GetObjectItemCaseSensitive(j, "decision"), "rule");
  cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(j, "rules"))
    print_rule(f, r, &n, color, decider);
  if (!cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "rules"))) fputs("  none\n", f);
  fputc('\n', f);
  print_decision(f, j, color);
  print_facts(f, j);
  fputc('\n', f);
  int run = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "hooks_run"));
  print_hooks(f, run ? "pre-hooks, in run order:"
                     : "pre-hooks (would not run: the call ends at the rules):",
              cJSON_GetObjectItemCaseSensitive(j, "pre_hooks"));
  print_hooks(f, run ? "post-hooks, in run order:"
                     : "post-hooks (would not run: the call ends at the rules):",
              cJSON_GetObjectItemCaseSensitive(j, "post_hooks"));
  const cJSON *note;
  fputc('\n', f);
  cJSON_ArrayForEach(note, cJSON_GetObjectItemCaseSensitive(j, "notes"))
    fprintf(f, "note: %s\n", note->valuestring);
}

/* ---- an agent's event ----------------------------------------------------- */

/* The event text from path ("-": stdin), at most TG_HOOK_MAX_EVENT + 1
 * bytes (the answer then says it is too big); NULL with a message. */
static char *read_event(const char *path, size_t *len) {
  int fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : 0;
  if (fd < 0) {
    cli_error("explain: %s: %s", path, strerror(errno));
    return NULL;
  }
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap + 1);
  while (buf && n <= TG_HOOK_MAX_EVENT) {
    if (n == cap) {
      char *p = realloc(buf, cap * 2 + 1);
      if (!p) break;
      buf = p;
      cap *= 2;
    }
    ssize_t r = read(fd, buf + n, cap - n);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      cli_error("explain: %s: %s", path, strerror(errno));
      free(buf);
      buf = NULL;
      break;
    }
    if (r == 0) break;
    n += (size_t)r;
  }
  if (fd > 0) close(fd);
  if (!buf) return NULL;
  buf[n] = '\0';
  *len = n;
  return buf;
}

static void print_json_value(FILE *f, const char *label, const cJSON *v) {
  char *t = tg_json_print(v, 0);
  fprintf(f, "%s%s\n", label, t ? t : "?");
  cJSON_free(t);
}

/* The session's taint as the hook would find it in its database: the
 * cause of a deny the rules give below, or why it was not looked up. */
static void print_stored_taint(FILE *f, const cJSON *s) {
  if (!s) return;
  const cJSON *t = cJSON_GetObjectItemCaseSensitive(s, "taint");
  fputs("taint     ", f);
  if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(s, "consulted"))) {
    fputs("the session's stored taint was not consulted: ", f);
    put_plain(f, str(s, "why"));
    fputc('\n', f);
    return;
  }
  fputs("session ", f);
  put_plain(f, str(s, "session"));
  if (!cJSON_IsObject(t)) {
    fprintf(f, " is not tainted (database %s)\n", str(s, "database"));
    return;
  }
  char when[20];
  fprintf(f, " is sensitive (level %.0f) since %s",
          cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(t, "level")),
          table_time((int64_t)cJSON_GetNumberValue(
                         cJSON_GetObjectItemCaseSensitive(t, "at")), when));
  if (str(t, "call") || str(t, "tool")) {
    fputs(", by ", f);
    if (str(t, "call")) {
      fputs("call ", f);
      put_plain(f, str(t, "call"));
    }
    if (str(t, "tool")) {
      fputs(str(t, "call") ? " (" : "", f);
      put_plain(f, str(t, "tool"));
      fputs(str(t, "call") ? ")" : "", f);
    }
  }
  fputs(": ", f);
  put_plain(f, str(t, "reason"));
  fprintf(f, "\n          (as the hook finds it in %s; the rules below see "
          "it; `toolgate approvals clear-taint` clears it)\n",
          str(s, "database"));
}

/* The remembered approvals as the hook would look the call up in them:
 * the one that allowed it (scope, tool, when granted, id), none, or why
 * they were not consulted. */
static void print_approvals(FILE *f, const cJSON *s) {
  if (!s) return;
  fputs("approvals ", f);
  if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(s, "consulted"))) {
    fputs("remembered approvals were not consulted: ", f);
    put_plain(f, str(s, "why"));
    fputc('\n', f);
    return;
  }
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(s, "answered_by");
  if (!cJSON_IsObject(a)) {
    fprintf(f, "none in %s covers the call\n", str(s, "database"));
    return;
  }
  char when[20];
  const cJSON *created = cJSON_GetObjectItemCaseSensitive(a, "created");
  fprintf(f, "the call is allowed by remembered approval %.0f",
          cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(a, "id")));
  if (str(a, "tool")) {
    const char *scope = str(a, "scope") ? str(a, "scope") : "";
    fputs(!strcmp(scope, "tool") ? ": all calls of " : ": calls of ", f);
    put_plain(f, str(a, "tool"));
    if (!strcmp(scope, "pattern")) {
      fputs(" where ", f);
      put_plain(f, str(a, "arg") ? str(a, "arg") : "?");
      fputs(" matches ", f);
      put_plain(f, str(a, "glob") ? str(a, "glob") : "?");
    } else if (!strcmp(scope, "args")) {
      char *t = tg_json_print(cJSON_GetObjectItemCaseSensitive(a, "args"), 0);
      fputs(" with the args ", f);
      put_plain(f, t ? t : "(masked)");
      cJSON_free(t);
    }
    fputs(", for ", f);
    put_plain(f, str(a, "where") ? str(a, "where") : "?");
    fputc(' ', f);
    put_plain(f, str(a, "session") ? str(a, "session")
                 : str(a, "project") ? str(a, "project") : "?");
  }
  if (cJSON_IsNumber(created))
    fprintf(f, ", granted %s",
            table_time((int64_t)cJSON_GetNumberValue(created), when));
  if (str(a, "by")) {
    fputs(" by ", f);
    put_plain(f, str(a, "by"));
  }
  fprintf(f, "\n          (as the hook finds it in %s; `toolgate approvals "
          "revoke ID` ends it)\n", str(s, "database"));
}

/* The agent's event explained, for people: the mapped call, the rules
 * (print_explanation), what answering it did, the answer. */
static void print_event(FILE *f, const cJSON *j, int color) {
  fprintf(f, "agent     %s%s, %s", str(j, "agent"),
          cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "agent_detected")) ? " (detected)" : "",
          str(j, "event") ? str(j, "event") : "(an event that cannot be read)");
  if (str(j, "agent_tool")) fprintf(f, " of %s", str(j, "agent_tool"));
  fputc('\n', f);
  if (str(j, "event_error")) fprintf(f, "event     %s\n", str(j, "event_error"));
  print_stored_taint(f, cJSON_GetObjectItemCaseSensitive(j, "stored_taint"));
  print_approvals(f, cJSON_GetObjectItemCaseSensitive(j, "approvals"));
  if (str(j, "mapping_error"))
    fprintf(f, "mapping   cannot be mapped: %s\n", str(j, "mapping_error"));
  const cJSON *call = cJSON_GetObjectItemCaseSensitive(j, "call"), *e;
  if (call) {
    fprintf(f, "mapped    %s (%s)", str(call, "tool"),
            cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(call, "read_only")) ? "read-only"
                                                                 : "not read-only");
    const char *sep = "; rules may also name it ";
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(call, "names")) {
      if (!cJSON_IsString(e) || !strcmp(e->valuestring, str(call, "tool")))
        continue;
      fprintf(f, "%s%s", sep, e->valuestring);
      sep = ", ";
    }
    fputc('\n', f);
    print_json_value(f, "args      ", cJSON_GetObjectItemCaseSensitive(call, "args"));
    const char *label = "paths     ";
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(call, "paths")) {
      if (str(e, "error"))
        fprintf(f, "%s%s: cannot tell where it leads: %s\n", label,
                str(e, "written"), str(e, "error"));
      else
        fprintf(f, "%s%s -> %s\n", label, str(e, "written"), str(e, "resolved"));
      label = "          ";
    }
  }
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(j, "explain");
  if (x) {
    fputc('\n', f);
    print_explanation(f, x, color);
  } else if (str(j, "explain_error")) {
    fprintf(f, "rules     cannot be explained: %s\n", str(j, "explain_error"));
  }
  const cJSON *t = cJSON_GetObjectItemCaseSensitive(j, "judged");
  fputs("\nanswering it (as `toolgate hook` does):\n", f);
  if (str(t, "fail_safe"))
    fprintf(f, "  nothing could judge it: %s\n", str(t, "fail_safe"));
  if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(t, "rewritten"))) {
    fprintf(f, "  the pre-hooks rewrote it to %s ", str(t, "tool"));
    print_json_value(f, "", cJSON_GetObjectItemCaseSensitive(t, "args"));
  } else if (t && !str(t, "fail_safe")) {
    const cJSON *oc = cJSON_GetObjectItemCaseSensitive(t, "outcome");
    const cJSON *oe = cJSON_GetObjectItemCaseSensitive(oc, "error");
    if (str(oe, "phase") && strcmp(str(oe, "phase"), "PRE_HOOK"))
      fprintf(f, "  ended %s at %s: %s\n", str(oc, "status"), str(oe, "phase"),
              str(oe, "message") ? str(oe, "message") : "");
    else
      fputs("  the pre-hooks left it as it is\n", f);
  }
  if (cJSON_GetObjectItemCaseSensitive(t, "short_result"))
    print_json_value(f, "  a pre-hook answered for the tool: ",
                     cJSON_GetObjectItemCaseSensitive(t, "short_result"));
  cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(t, "context_calls"))
    print_json_value(f, "  would run for the model's context (not run): ", e);
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(j, "answer");
  const cJSON *out = cJSON_GetObjectItemCaseSensitive(a, "output");
  fprintf(f, "\nthe agent gets: exit code %.0f, ",
          cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(a, "exit_code")));
  if (cJSON_IsNull(out) || !out) fputs("no output (its own permission flow)\n", f);
  else print_json_value(f, "output ", out);
  const cJSON *upd = cJSON_GetObjectItemCaseSensitive(
      cJSON_GetObjectItemCaseSensitive(out, "hookSpecificOutput"), "updatedInput");
  if (upd) print_json_value(f, "updatedInput ", upd);
  if (str(a, "message")) fprintf(f, "stderr: %s", str(a, "message"));
}

/* The database `toolgate hook` with the same --db / --no-db would keep the
 * session's taint and the remembered approvals in (--db PATH, else the
 * default one), opened read-only, for them only: explain's runtime has
 * none and records nothing. src->store NULL with src->not_read when it is not consulted;
 * -1 with a message when it is there and cannot be read (locked,
 * corrupt): then nothing can tell what the hook would answer. */
static int open_stored_source(const explain_options *o,
                             tg_hook_stored *src, char *path,
                             size_t len, char *why, size_t wlen) {
  char err[TG_ERRMSG] = "";
  struct stat st;
  memset(src, 0, sizeof src[0]);
  src->not_read = why;
  if (o->db.no_db) {
    snprintf(why, wlen, "--no-db (the hook so run keeps no taint from "
             "one call to the next and remembers no approval)");
    return 0;
  }
  if (o->db.db) snprintf(path, len, "%s", o->db.db);
  else if (tg_db_default_path(path, len, err) < 0) {
    snprintf(why, wlen, "no database: %s", err);
    return 0;
  }
  src->path = path;
  if (!strcmp(path, ":memory:")) {
    snprintf(why, wlen, "the database is private to each run (:memory:): "
             "it starts with no taint and no approval");
    return 0;
  }
  if (stat(path, &st) < 0 && errno == ENOENT) {
    snprintf(why, wlen, "no database at %s: the hook would start one, with "
             "no session tainted and no approval remembered", path);
    return 0;
  }
  src->store = tg_store_open_read(path, err);
  if (!src->store) {
    cli_error("explain: %s (the session's stored taint and the remembered "
              "approvals cannot be read, so what the hook would answer "
              "cannot be told)", err);
    return -1;
  }
  return 0;
}

static int explain_event(tg_runtime *rt, const explain_options *o) {
  size_t len = 0;
  char path[4096], why[4096 + TG_ERRMSG];
  tg_hook_stored src;
  if (open_stored_source(o, &src, path, sizeof path, why, sizeof why) < 0)
    return CLI_EXIT_USAGE;
  char *text = read_event(o->event, &len), err[TG_ERRMSG] = "";
  if (!text) {
    tg_store_close(src.store);
    return CLI_EXIT_USAGE;
  }
  tg_hook_request req;
  memset(&req, 0, sizeof req);
  req.agent = o->agent;
  req.event_name = o->event_name;
  req.event = text;
  req.event_len = len;
  req.on_error = o->on_error;
  req.toolgate_defaults = o->toolgate_defaults;
  cJSON *j = tg__hook_explain_stored(rt, &req, &src, err);
  tg_store_close(src.store);
  int code = CLI_EXIT_OK;
  if (!j) {
    cli_error("explain: %s", err);
    code = CLI_EXIT_USAGE;
  } else if (o->json) {
    cli_print_json_line(stdout, j);
  } else {
    print_event(stdout, j, cli_color_wanted(stdout));
  }
  cJSON_Delete(j);
  free(text);
  return code;
}

int cmd_explain(int argc, char **argv) {
  explain_options o;
  memset(&o, 0, sizeof o);
  int code = parse_explain_options(&o, argc, argv);
  if (code >= 0) return code;
  if (o.event) {
    tg_runtime *rt = make_runtime(&o);
    if (!rt) return CLI_EXIT_USAGE;
    code = explain_event(rt, &o);
    tg_runtime_free(rt);
    return code;
  }
  cJSON *args = args_json_parse("explain", o.args_json);
  if (!args) return CLI_EXIT_USAGE;
  tg_runtime *rt = make_runtime(&o);
  if (!rt) {
    cJSON_Delete(args);
    return CLI_EXIT_USAGE;
  }
  tg_call_request req;
  memset(&req, 0, sizeof req);
  req.tool = o.tool;
  req.args = args;
  char err[TG_ERRMSG] = "";
  cJSON *j = tg_explain(rt, &req, err);
  if (!j) {
    cli_error("explain: %s", err);
    code = CLI_EXIT_USAGE;
  } else if (o.json) {
    cli_print_json_line(stdout, j);
    code = CLI_EXIT_OK;
  } else {
    print_explanation(stdout, j, cli_color_wanted(stdout));
    code = CLI_EXIT_OK;
  }
  cJSON_Delete(j);
  cJSON_Delete(args);
  tg_runtime_free(rt);
  return code;
}
