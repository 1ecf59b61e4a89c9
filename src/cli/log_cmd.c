/*
 * log_cmd.c — `toolgate log`: the audit trail, most recent calls last, as
 * a table for people or JSON lines for machines; --follow keeps printing
 * the calls any process records (it polls the database every 200 ms for
 * rows after the last one shown: WAL lets it read while runtimes write).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cjson/cJSON.h>
#include "toolgate.h"
#include "kit/kit.h"
#include "commands.h"
#include "kit/options.h"
#include "kit/output.h"
#include "table.h"

#define FOLLOW_POLL_MS 200

const char cmd_log_usage[] =
    "usage: toolgate log [options]\n"
    "\n"
    "Shows the calls in the audit trail, oldest first: when, session, tool,\n"
    "the agent and its hook event (for a coding agent's call), the verdict\n"
    "and who decided it (a rule by name, toolgate's default, or left to the\n"
    "agent), how it ended and how long it took. An agent's call judged\n"
    "before it runs ends as \"judged\" (the agent runs it, not toolgate), or\n"
    "as the agent's PostToolUse told: \"ran: ok\", \"ran: failed\".\n"
    "\n"
    "options:\n"
    DB_PATH_USAGE
    "  --session S         only the calls of session S, and whether (and\n"
    "                      why, since when) S is sensitive: a call of it\n"
    "                      read a secret\n"
    "  --tool T            only the calls of tool T\n"
    "  --status S          only the calls that ended S: ok, error, denied,\n"
    "                      rejected, cancelled or timeout\n"
    "  --since TIME        only the calls since TIME: 90s, 10m, 2h, 3d ago,\n"
    "                      or a date (2025-06-01, 2025-06-01T14:30, Z for\n"
    "                      UTC)\n"
    "  --limit N           the last N calls (default 20)\n"
    "  --follow, -f        then print calls as they are recorded, by any\n"
    "                      process, until Ctrl-C\n"
    "  --json              one JSON object per call and line: the whole\n"
    "                      record (args, hooks, error, result, ...)\n"
    "\n"
    "exit status: 0 shown; 2 usage error, or the database cannot be read.\n";

typedef struct {
  const char *db, *since, *limit;
  tg_audit_filter f;
  int follow, json, color;
  int64_t last_id;           /* the last row shown (--follow) */
} log_run;

/* ---- options -------------------------------------------------------- */

static int known_status(const char *s) {
#define TG_STATUS_IS(name, str) || strcmp(s, str) == 0
  return 0 TG_STATUS_MAP(TG_STATUS_IS);
#undef TG_STATUS_IS
}

static int parse_limit(const char *text, size_t *out) {
  char *end = NULL;
  errno = 0;
  unsigned long long v = strtoull(text, &end, 10);
  if (text[0] < '0' || text[0] > '9' || *end || errno || v == 0 ||
      v > 1000000) {
    cli_error("log: option '--limit' needs a whole number from 1 to "
              "1000000, not '%s'", text);
    return -1;
  }
  *out = (size_t)v;
  return 0;
}

static int check_options(log_run *r) {
  char err[TG_ERRMSG];
  if (db_path_check("log", r->db) < 0) return -1;
  if (r->f.status && !known_status(r->f.status)) {
    cli_error("log: option '--status' takes ok, error, denied, rejected, "
              "cancelled or timeout, not '%s'", r->f.status);
    return -1;
  }
  if (r->since && tg_time_parse(r->since, 0, -1, &r->f.since_ms, err) < 0) {
    cli_error("log: option '--since': %s", err);
    return -1;
  }
  r->f.limit = 20;
  return r->limit ? parse_limit(r->limit, &r->f.limit) : 0;
}

/* Returns -1 to go on, else the exit code. */
static int parse_log_options(log_run *r, int argc, char **argv) {
  const opt_spec specs[] = {
      {"--db", OPT_VALUE, NULL, &r->db},
      {"--session", OPT_VALUE, NULL, &r->f.session},
      {"--tool", OPT_VALUE, NULL, &r->f.tool},
      {"--status", OPT_VALUE, NULL, &r->f.status},
      {"--since", OPT_VALUE, NULL, &r->since},
      {"--limit", OPT_VALUE, NULL, &r->limit},
      {"--follow", OPT_FLAG, &r->follow, NULL},
      {"-f", OPT_FLAG, &r->follow, NULL},
      {"--json", OPT_FLAG, &r->json, NULL},
  };
  const opt_parser p = {"log", specs, sizeof specs / sizeof *specs, NULL,
                        0, 0, NULL, "log [options]"};
  int npos;
  int rc = opt_parse(&p, argc, argv, &npos);
  if (rc == OPT_PARSE_HELP) {
    fputs(cmd_log_usage, stdout);
    return CLI_EXIT_OK;
  }
  if (rc != OPT_PARSE_OK || check_options(r) < 0) return CLI_EXIT_USAGE;
  return -1;
}

/* ---- printing ------------------------------------------------------- */

static void print_header(log_run *r) {
  cli_sgr(stdout, r->color, "1");
  printf("%-19s  %-12s %-18s %-21s %-8s %-20s %-11s %9s\n", "TIME",
         "SESSION", "TOOL", "AGENT", "VERDICT", "DECIDED BY", "STATUS", "MS");
  cli_sgr(stdout, r->color, "0");
}

static const char *status_sgr(const char *s) {
  if (!s || !strcmp(s, "ok") || !strcmp(s, "ran: ok") || !strcmp(s, "judged"))
    return "32";
  return !strcmp(s, "error") || !strcmp(s, "denied") ||
                 !strcmp(s, "ran: failed") ? "31" : "33";
}

/* An agent's hook event, short. */
static const char *event_short(const char *ev) {
  static const char *const names[][2] = {
      {"PreToolUse", "pre"}, {"PermissionRequest", "permission"},
      {"PostToolUse", "post"}, {"PostToolUseFailure", "post-fail"}};
  for (size_t i = 0; ev && i < sizeof names / sizeof *names; i++)
    if (!strcmp(ev, names[i][0])) return names[i][1];
  return ev ? ev : "?";
}

/* Who decided, as people read it. */
static const char *decider(const cJSON *d, char buf[64]) {
  const char *by = table_str(d, "by"), *rule = table_str(d, "rule");
  if (!by || !strcmp(by, "-")) return "-";
  if (!strcmp(by, "rule")) {
    snprintf(buf, 64, "rule %s", rule ? rule : "?");
    return buf;
  }
  if (!strcmp(by, "default")) return "toolgate's default";
  if (!strcmp(by, "agent")) return "left to the agent";
  return by;
}

/* How an agent's call judged before it runs ended: it is the agent's to
 * run, so "judged", or what its PostToolUse told. */
static const char *agent_status(const cJSON *a, const char *status) {
  const char *ev = table_str(a, "event");
  int judged = ev && (!strcmp(ev, "PreToolUse") ||
                      !strcmp(ev, "PermissionRequest"));
  if (!judged || !status || strcmp(status, "ok")) return status;
  const cJSON *ran = cJSON_GetObjectItemCaseSensitive(a, "ran");
  if (!ran) return "judged";
  const char *ended = table_str(ran, "ended");
  return ended && !strcmp(ended, "ok") ? "ran: ok" : "ran: failed";
}

static void print_row(log_run *r, const cJSON *rec) {
  const cJSON *d = cJSON_GetObjectItemCaseSensitive(rec, "decision");
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(rec, "agent");
  const char *status = table_str(rec, "status");
  const char *verdict = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(d, "verdict"));
  char when[20], tool[160], agent[96], by[64];
  table_cell(stdout, table_time((int64_t)table_num(rec, "ts", 0), when), 19);
  fputs("  ", stdout);
  table_cell(stdout, table_str(rec, "session"), 12);
  fputc(' ', stdout);
  /* an agent's call: its tool by the agent's name, then toolgate's */
  if (a && table_str(a, "tool"))
    snprintf(tool, sizeof tool, "%.60s (%.60s)", table_str(a, "tool"),
             table_str(rec, "tool") ? table_str(rec, "tool") : "?");
  else
    snprintf(tool, sizeof tool, "%.120s",
             table_str(rec, "tool") ? table_str(rec, "tool") : "-");
  table_cell(stdout, tool, 18);
  fputc(' ', stdout);
  if (a)
    snprintf(agent, sizeof agent, "%.40s %s",
             table_str(a, "name") ? table_str(a, "name") : "?",
             event_short(table_str(a, "event")));
  table_cell(stdout, a ? agent : "-", 21);
  fputc(' ', stdout);
  /* a rule that failed is named as call, explain and test name it; no
   * verdict (left to the agent, or seen after the agent ran it): none; an
   * agent told otherwise (Codex cannot ask: a deny): both */
  const char *word = verdict ? tg_decision_word(verdict, cJSON_GetStringValue(
                                   cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(
                                       rec, "error"), "code")))
                             : "-";
  const char *told = table_str(a, "answer");
  char both[40];
  if (verdict && told && strcmp(told, word) && strcmp(told, "context")) {
    snprintf(both, sizeof both, "%s/%s", word, told);
    word = both;
  }
  table_cell(stdout, word, 8);
  fputc(' ', stdout);
  table_cell(stdout, decider(d, by), 20);
  fputc(' ', stdout);
  if (a) status = agent_status(a, status);
  cli_sgr(stdout, r->color, status_sgr(status));
  table_cell(stdout, status, 11);
  cli_sgr(stdout, r->color, "0");
  printf(" %9.1f\n", table_num(rec, "duration_ms", 0));
}

/* Prints the records; remembers the last id. */
static void print_records(log_run *r, const cJSON *recs) {
  const cJSON *rec;
  cJSON_ArrayForEach(rec, recs) {
    if (r->json) cli_print_json_line(stdout, rec);
    else print_row(r, rec);
    int64_t id = (int64_t)table_num(rec, "id", 0);
    if (id > r->last_id) r->last_id = id;
  }
  fflush(stdout);
}

/* With --session: when and why the session became sensitive (its taint),
 * as a line after its calls. */
static int print_taint(log_run *r, tg_store *st) {
  char err[TG_ERRMSG] = "", when[20];
  if (!r->f.session || r->json) return 0;
  cJSON *t = tg_store_taint(st, r->f.session, err);
  if (!t) {
    cli_error("log: %s", err);
    return -1;
  }
  if (cJSON_IsObject(t)) {
    const char *call = table_str(t, "call"), *tool = table_str(t, "tool");
    cli_sgr(stdout, r->color, "31");
    printf("session %s is sensitive since %s: %s", r->f.session,
           table_time((int64_t)table_num(t, "at", 0), when),
           table_str(t, "reason"));
    if (call) printf(" (call %s%s%s)", call, tool ? ", " : "", tool ? tool : "");
    cli_sgr(stdout, r->color, "0");
    printf("; its network calls are refused until `toolgate approvals "
           "clear-taint %s`\n", r->f.session);
  }
  cJSON_Delete(t);
  return 0;
}

/* ---- running -------------------------------------------------------- */

/* The id of the last call recorded, matching or not: --follow starts
 * after it. */
static int newest_id(tg_store *st, int64_t *id, char err[TG_ERRMSG]) {
  tg_audit_filter any = {.limit = 1};
  cJSON *last = tg_store_audit(st, &any, err);
  if (!last) return -1;
  *id = (int64_t)table_num(cJSON_GetArrayItem(last, 0), "id", 0);
  cJSON_Delete(last);
  return 0;
}

static int follow(log_run *r, tg_store *st) {
  char err[TG_ERRMSG];
  int64_t newest = 0;
  if (newest_id(st, &newest, err) < 0) goto fail;
  if (newest > r->last_id) r->last_id = newest;
  struct timespec nap = {0, FOLLOW_POLL_MS * 1000000L};
  for (;;) { /* until Ctrl-C, or the reader of our output goes away */
    nanosleep(&nap, NULL);
    r->f.after_id = r->last_id;
    r->f.limit = 1000;
    cJSON *recs = tg_store_audit(st, &r->f, err);
    if (!recs) goto fail;
    print_records(r, recs);
    cJSON_Delete(recs);
    if (ferror(stdout)) return CLI_EXIT_FAILED;
  }
fail:
  cli_error("log: %s", err);
  return CLI_EXIT_USAGE;
}

int cmd_log(int argc, char **argv) {
  log_run r;
  memset(&r, 0, sizeof r);
  int code = parse_log_options(&r, argc, argv);
  if (code >= 0) return code;
  r.color = !r.json && cli_color_wanted(stdout);
  char err[TG_ERRMSG] = "";
  /* --follow may start before anything was recorded: it makes the file */
  tg_store *st = tg_store_open(r.db, r.follow, err);
  if (!st) {
    cli_error("log: %s", err);
    return CLI_EXIT_USAGE;
  }
  cJSON *recs = tg_store_audit(st, &r.f, err);
  if (!recs) {
    cli_error("log: %s", err);
    tg_store_close(st);
    return CLI_EXIT_USAGE;
  }
  if (!r.json && (cJSON_GetArraySize(recs) || r.follow)) print_header(&r);
  if (!r.json && !cJSON_GetArraySize(recs) && !r.follow)
    cli_error("log: no calls recorded%s in %s",
              r.f.session || r.f.tool || r.f.status || r.since ? " that match"
                                                             : "",
              tg_store_path(st));
  print_records(&r, recs);
  cJSON_Delete(recs);
  if (print_taint(&r, st) < 0) {
    tg_store_close(st);
    return CLI_EXIT_USAGE;
  }
  code = r.follow ? follow(&r, st) : CLI_EXIT_OK;
  tg_store_close(st);
  return code;
}
