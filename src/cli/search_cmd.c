/*
 * search_cmd.c — `toolgate search QUERY`: full-text search (SQLite FTS5)
 * over the recorded messages and the audit's calls (tool, args, result),
 * best first by bm25, each hit with a snippet around what matched. The
 * stored text is anyone's: control characters are shown as spaces, so a
 * message cannot move the cursor or recolour the terminal.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>
#include "toolgate.h"
#include "kit/kit.h"
#include "commands.h"
#include "kit/options.h"
#include "kit/output.h"
#include "table.h"

const char cmd_search_usage[] =
    "usage: toolgate search QUERY [options]\n"
    "\n"
    "Searches the recorded messages and the calls in the audit trail (the\n"
    "tool, its args and its result), best match first, and shows where\n"
    "each hit is with a snippet, the matches [in brackets].\n"
    "\n"
    "QUERY is SQLite FTS5 syntax: words (all must match), \"a phrase\",\n"
    "OR, NOT, prefix*, and column filters (content: tool_calls: for\n"
    "messages; tool: args: result: for calls).\n"
    "\n"
    "options:\n"
    DB_PATH_USAGE
    "  --session ID        only in session ID\n"
    "  --limit N           at most N hits (default 20)\n"
    "  --json              one JSON object per hit and line: kind, id,\n"
    "                      session, role or tool and call_id, snippet,\n"
    "                      score (bm25: lower is better), ts\n"
    "\n"
    "exit status: 0 found; 1 nothing found; 2 usage error, a query FTS5\n"
    "cannot parse, or the database cannot be read.\n";

typedef struct {
  const char *db, *limit, *pos[1];
  tg_search_filter f;
  int json, color, npos;
} search_run;

static int parse(search_run *r, int argc, char **argv) {
  static const char *const names[] = {"QUERY"};
  const opt_spec specs[] = {
      {"--db", OPT_VALUE, NULL, &r->db},
      {"--session", OPT_VALUE, NULL, &r->f.session},
      {"--limit", OPT_VALUE, NULL, &r->limit},
      {"--json", OPT_FLAG, &r->json, NULL},
  };
  const opt_parser p = {"search", specs, sizeof specs / sizeof *specs,
                        r->pos, 1, 1, names, "search QUERY [options]"};
  int rc = opt_parse(&p, argc, argv, &r->npos);
  if (rc == OPT_PARSE_HELP) {
    fputs(cmd_search_usage, stdout);
    return CLI_EXIT_OK;
  }
  if (rc != OPT_PARSE_OK || db_path_check("search", r->db) < 0)
    return CLI_EXIT_USAGE;
  r->f.query = r->pos[0];
  r->f.limit = 20;
  if (r->limit) {
    char *end = NULL;
    errno = 0;
    unsigned long v = strtoul(r->limit, &end, 10);
    if (r->limit[0] < '0' || r->limit[0] > '9' || *end || errno || v == 0 ||
        v > 10000) {
      cli_error("search: option '--limit' needs a whole number from 1 to "
                "10000, not '%s'", r->limit);
      return CLI_EXIT_USAGE;
    }
    r->f.limit = v;
  }
  return -1;
}

/* s with control characters as spaces; [ and ] bold when colour is on. */
static void print_snippet(const search_run *r, const char *s) {
  for (; s && *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '[' && r->color) fputs("\033[1m[", stdout);
    else if (c == ']' && r->color) fputs("]\033[0m", stdout);
    else fputc(c < 0x20 || c == 0x7f ? ' ' : c, stdout);
  }
}

static void print_hit(const search_run *r, const cJSON *h) {
  char when[20];
  const char *kind = table_str(h, "kind");
  int call = kind && !strcmp(kind, "call");
  cli_sgr(stdout, r->color, "36");
  printf("%-7s ", kind ? kind : "?");
  cli_sgr(stdout, r->color, "0");
  table_cell(stdout, table_time((int64_t)table_num(h, "ts", 0), when), 19);
  fputs("  ", stdout);
  table_cell(stdout, table_str(h, "session"), 16);
  fputc(' ', stdout);
  table_cell(stdout, call ? table_str(h, "tool") : table_str(h, "role"), 16);
  if (call) {
    fputc(' ', stdout);
    table_cell(stdout, table_str(h, "call_id"), 16);
  }
  printf("  %.2f\n    ", table_num(h, "score", 0));
  print_snippet(r, table_str(h, "snippet"));
  fputc('\n', stdout);
}

int cmd_search(int argc, char **argv) {
  search_run r;
  memset(&r, 0, sizeof r);
  int code = parse(&r, argc, argv);
  if (code >= 0) return code;
  r.color = !r.json && cli_color_wanted(stdout);
  char err[TG_ERRMSG] = "";
  tg_store *st = tg_store_open(r.db, 0, err);
  if (!st) {
    cli_error("search: %s", err);
    return CLI_EXIT_USAGE;
  }
  cJSON *hits = NULL;
  if (tg_store_search(st, &r.f, &hits, err) < 0) {
    cli_error("search: %s", err);
    tg_store_close(st);
    return CLI_EXIT_USAGE;
  }
  const cJSON *h;
  cJSON_ArrayForEach(h, hits) {
    if (r.json) cli_print_json_line(stdout, h);
    else print_hit(&r, h);
  }
  int n = cJSON_GetArraySize(hits);
  if (!n && !r.json)
    cli_error("search: nothing matches '%s' in %s", r.f.query,
              tg_store_path(st));
  cJSON_Delete(hits);
  tg_store_close(st);
  fflush(stdout);
  return n ? CLI_EXIT_OK : CLI_EXIT_FAILED;
}
