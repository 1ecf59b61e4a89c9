/*
 * approvals_cmd.c — `toolgate approvals`: the remembered approve-always
 * answers in the database. list shows them, revoke ends one (the calls it
 * covered are asked again, in every process on the database), grant makes
 * one ahead of time; clear-taint lets a sensitive session use the network
 * again.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>
#include "toolgate.h"
#include "kit/kit.h"
#include "args_json.h"
#include "commands.h"
#include "kit/options.h"
#include "kit/output.h"
#include "table.h"

const char cmd_approvals_usage[] =
    "usage: toolgate approvals list [--all] [--json] [--db PATH]\n"
    "       toolgate approvals revoke ID [--db PATH]\n"
    "       toolgate approvals grant TOOL [--args JSON | --pattern ARG=GLOB]\n"
    "                [--project DIR | --session ID] [--until TIME]\n"
    "                [--json] [--db PATH]\n"
    "       toolgate approvals clear-taint SESSION [--db PATH]\n"
    "\n"
    "Remembered approvals turn a rule's ask into an allow without asking:\n"
    "for the whole tool, for exact args (--args), or for calls whose\n"
    "argument ARG matches GLOB (--pattern command='npm test*'; '*' stops at\n"
    "'/', '**' does not); in one session or in one project (a folder:\n"
    "every session of runtimes started there, or given it as project);\n"
    "until a time or forever. A rule that denies still denies.\n"
    "\n"
    "  list      the approvals in force (--all: revoked and expired too)\n"
    "  revoke    ends approval ID: its calls are asked again\n"
    "  grant     remembers one ahead of time (default: the whole tool, for\n"
    "            the project in the current folder, forever)\n"
    "  clear-taint  makes SESSION clean again: a session that read a secret\n"
    "            is sensitive (its network calls are refused) until a\n"
    "            person clears it\n"
    "\n"
    "options:\n"
    DB_PATH_USAGE
    "  --until TIME        until then: 90s, 10m, 2h, 3d, 1w from now, or a\n"
    "                      date (2025-06-01, 2025-06-01T14:30, Z for UTC)\n"
    "\n"
    "exit status: 0 done; 2 usage error, no such approval, or the database\n"
    "cannot be used.\n";

typedef struct {
  const char *db, *args, *pattern, *project, *session, *until;
  int all, json;
  const char *pos[2];
  int npos;
} approvals_options;

static int parse(approvals_options *o, int argc, char **argv,
                 const char *usage) {
  static const char *const names[] = {"list, revoke, grant or clear-taint",
                                      "ID, TOOL or SESSION"};
  const opt_spec specs[] = {
      {"--db", OPT_VALUE, NULL, &o->db},
      {"--all", OPT_FLAG, &o->all, NULL},
      {"--json", OPT_FLAG, &o->json, NULL},
      {"--args", OPT_VALUE, NULL, &o->args},
      {"--pattern", OPT_VALUE, NULL, &o->pattern},
      {"--project", OPT_VALUE, NULL, &o->project},
      {"--session", OPT_VALUE, NULL, &o->session},
      {"--until", OPT_VALUE, NULL, &o->until},
  };
  const opt_parser p = {"approvals", specs, sizeof specs / sizeof *specs,
                        o->pos, 1, 2, names, usage};
  int rc = opt_parse(&p, argc, argv, &o->npos);
  if (rc == OPT_PARSE_HELP) {
    fputs(cmd_approvals_usage, stdout);
    return CLI_EXIT_OK;
  }
  return rc == OPT_PARSE_OK && db_path_check("approvals", o->db) == 0
             ? -1 : CLI_EXIT_USAGE;
}

/* The options only `grant` takes, given to another subcommand. */
static int grant_only(const approvals_options *o, const char *cmd) {
  const char *given = o->args ? "--args" : o->pattern ? "--pattern"
                      : o->project ? "--project" : o->session ? "--session"
                      : o->until ? "--until" : NULL;
  if (given) cli_error("approvals %s: option '%s' is for grant", cmd, given);
  return given != NULL;
}

static tg_store *open_store(const approvals_options *o, int create) {
  char err[TG_ERRMSG] = "";
  tg_store *st = tg_store_open(o->db, create, err);
  if (!st) cli_error("approvals: %s", err);
  return st;
}

/* ---- list ----------------------------------------------------------- */

/* What it covers, for people: "all calls", "args {...}", "command =
 * npm test*". */
static void print_covers(const cJSON *a) {
  const char *scope = table_str(a, "scope");
  char what[512];
  if (scope && !strcmp(scope, "pattern")) {
    snprintf(what, sizeof what, "%s = %s", table_str(a, "arg"),
             table_str(a, "glob"));
  } else if (scope && !strcmp(scope, "args")) {
    char *args = tg_json_print(cJSON_GetObjectItemCaseSensitive(a, "args"), 0);
    snprintf(what, sizeof what, "args %s", args ? args : "?");
    free(args);
  } else {
    snprintf(what, sizeof what, "all calls");
  }
  table_cell(stdout, what, 30);
}

static void print_approval(const cJSON *a, int64_t now) {
  char when[20], where[600];
  printf("%-5lld ", (long long)table_num(a, "id", 0));
  table_cell(stdout, table_str(a, "tool"), 16);
  fputc(' ', stdout);
  print_covers(a);
  const char *w = table_str(a, "where");
  snprintf(where, sizeof where, "%s %s", w ? w : "?",
           table_str(a, w && !strcmp(w, "project") ? "project" : "session"));
  fputc(' ', stdout);
  table_cell(stdout, where, 32);
  double until = table_num(a, "until", 0), revoked = table_num(a, "revoked", 0);
  fputc(' ', stdout);
  if (revoked) printf("revoked %s", table_time((int64_t)revoked, when));
  else if (until && until <= (double)now) printf("expired %s", table_time((int64_t)until, when));
  else if (until) table_cell(stdout, table_time((int64_t)until, when), 0);
  else fputs("forever", stdout);
  fputc('\n', stdout);
}

static int list(const approvals_options *o) {
  if (o->npos > 1) {
    cli_error("approvals list: unexpected argument '%s'", o->pos[1]);
    return CLI_EXIT_USAGE;
  }
  if (grant_only(o, "list")) return CLI_EXIT_USAGE;
  tg_store *st = open_store(o, 0);
  if (!st) return CLI_EXIT_USAGE;
  char err[TG_ERRMSG] = "";
  cJSON *all = tg_store_approvals(st, o->all, err);
  if (!all) cli_error("approvals: %s", err);
  int64_t now = 0;
  tg_time_parse("now", 0, 0, &now, err);
  const cJSON *a;
  if (all && !o->json && cJSON_GetArraySize(all))
    printf("%-5s %-16s %-30s %-32s %s\n", "ID", "TOOL", "COVERS", "WHERE",
           "UNTIL");
  if (all && !o->json && !cJSON_GetArraySize(all))
    cli_error("approvals: none %sin %s", o->all ? "" : "in force ",
              tg_store_path(st));
  cJSON_ArrayForEach(a, all) {
    if (o->json) cli_print_json_line(stdout, a);
    else print_approval(a, now);
  }
  cJSON_Delete(all);
  tg_store_close(st);
  return all ? CLI_EXIT_OK : CLI_EXIT_USAGE;
}

/* ---- revoke --------------------------------------------------------- */

static int revoke(const approvals_options *o) {
  if (o->npos < 2) {
    cli_error("approvals revoke: which one? (toolgate approvals revoke ID; "
              "'toolgate approvals list' shows the ids)");
    return CLI_EXIT_USAGE;
  }
  char *end = NULL;
  errno = 0;
  long long id = strtoll(o->pos[1], &end, 10);
  if (o->pos[1][0] < '1' || o->pos[1][0] > '9' || *end || errno || id <= 0) {
    cli_error("approvals revoke: an approval id is a whole number, not '%s'",
              o->pos[1]);
    return CLI_EXIT_USAGE;
  }
  if (o->all || o->json || grant_only(o, "revoke")) {
    if (o->all || o->json)
      cli_error("approvals revoke: options '--all' and '--json' are for list");
    return CLI_EXIT_USAGE;
  }
  tg_store *st = open_store(o, 0);
  if (!st) return CLI_EXIT_USAGE;
  char err[TG_ERRMSG] = "";
  int rc = tg_store_revoke(st, id, err);
  if (rc < 0) cli_error("approvals revoke: %s", err);
  else printf("revoked approval %lld\n", id);
  tg_store_close(st);
  return rc < 0 ? CLI_EXIT_USAGE : CLI_EXIT_OK;
}

/* ---- clear-taint ----------------------------------------------------- */

static int clear_taint(const approvals_options *o) {
  if (o->npos < 2) {
    cli_error("approvals clear-taint: which session? (toolgate approvals "
              "clear-taint SESSION)");
    return CLI_EXIT_USAGE;
  }
  if (o->all || o->json || grant_only(o, "clear-taint")) {
    if (o->all || o->json)
      cli_error("approvals clear-taint: options '--all' and '--json' are "
                "for list");
    return CLI_EXIT_USAGE;
  }
  tg_store *st = open_store(o, 0);
  if (!st) return CLI_EXIT_USAGE;
  char err[TG_ERRMSG] = "";
  int rc = tg_store_taint_clear(st, o->pos[1], err);
  if (rc < 0) cli_error("approvals clear-taint: %s", err);
  else printf("session %s is no longer sensitive\n", o->pos[1]);
  tg_store_close(st);
  return rc < 0 ? CLI_EXIT_USAGE : CLI_EXIT_OK;
}

/* ---- grant ---------------------------------------------------------- */

/* --pattern ARG=GLOB into spec (arg copied into argbuf). */
static int take_pattern(const char *text, tg_always_spec *s, char *argbuf,
                        size_t len) {
  const char *eq = strchr(text, '=');
  char err[TG_ERRMSG];
  if (!eq || eq == text || (size_t)(eq - text) >= len) {
    cli_error("approvals grant: option '--pattern' takes ARG=GLOB, like "
              "command='npm test*', not '%s'", text);
    return -1;
  }
  memcpy(argbuf, text, (size_t)(eq - text));
  argbuf[eq - text] = '\0';
  if (tg_glob_check(eq + 1, err, sizeof err) < 0) {
    cli_error("approvals grant: the glob '%s' is not valid: %s", eq + 1, err);
    return -1;
  }
  s->scope = TG_SCOPE_PATTERN;
  s->arg = argbuf;
  s->glob = eq + 1;
  return 0;
}

static int grant_spec(const approvals_options *o, tg_always_spec *s,
                      cJSON **args, char *argbuf, size_t len) {
  char err[TG_ERRMSG];
  s->tool = o->pos[1];
  if (o->args && o->pattern) {
    cli_error("approvals grant: --args (exact args) and --pattern (a glob "
              "on one argument) are two scopes: give one");
    return -1;
  }
  if (o->project && o->session) {
    cli_error("approvals grant: --project and --session are two places: "
              "give one");
    return -1;
  }
  if (o->args && !(*args = args_json_parse("approvals grant", o->args)))
    return -1;
  if (o->args) {
    s->scope = TG_SCOPE_ARGS;
    s->args = *args;
  }
  if (o->pattern && take_pattern(o->pattern, s, argbuf, len) < 0) return -1;
  s->where = o->session ? TG_WHERE_SESSION : TG_WHERE_PROJECT;
  s->session = o->session;
  s->project = o->project;
  if (o->until && tg_time_parse(o->until, 0, 1, &s->until_ms, err) < 0) {
    cli_error("approvals grant: option '--until': %s", err);
    return -1;
  }
  return 0;
}

static int grant(const approvals_options *o) {
  if (o->npos < 2) {
    cli_error("approvals grant: which tool? (toolgate approvals grant TOOL)");
    return CLI_EXIT_USAGE;
  }
  if (o->all) {
    cli_error("approvals grant: option '--all' is for list");
    return CLI_EXIT_USAGE;
  }
  tg_always_spec s;
  memset(&s, 0, sizeof s);
  cJSON *args = NULL;
  char argbuf[256], err[TG_ERRMSG] = "";
  if (grant_spec(o, &s, &args, argbuf, sizeof argbuf) < 0) {
    cJSON_Delete(args);
    return CLI_EXIT_USAGE;
  }
  tg_store *st = open_store(o, 1);
  int64_t id = st ? tg_store_grant(st, &s, err) : -1;
  if (st && id < 0) cli_error("approvals grant: %s", err);
  if (id > 0 && o->json) printf("{\"id\":%lld}\n", (long long)id);
  else if (id > 0) printf("granted approval %lld\n", (long long)id);
  tg_store_close(st);
  cJSON_Delete(args);
  return id > 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
}

int cmd_approvals(int argc, char **argv) {
  approvals_options o;
  memset(&o, 0, sizeof o);
  int code = parse(&o, argc, argv, "approvals list|revoke ID|grant TOOL|"
                                   "clear-taint SESSION [options]");
  if (code >= 0) return code;
  const char *sub = o.pos[0];
  if (!strcmp(sub, "list")) return list(&o);
  if (!strcmp(sub, "revoke")) return revoke(&o);
  if (!strcmp(sub, "grant")) return grant(&o);
  if (!strcmp(sub, "clear-taint")) return clear_taint(&o);
  cli_error("approvals: unknown subcommand '%s' (list, revoke, grant or "
            "clear-taint)", sub);
  return CLI_EXIT_USAGE;
}
