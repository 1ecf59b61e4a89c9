/*
 * test_cmd.c — `toolgate test [DIR]`: the policy unit tests of a policies
 * folder (tg_policy_test), with a PASS/FAIL line per case and why each
 * failure failed, or the report as JSON (--json). The text is made from
 * the same JSON --json prints.
 *
 * --watch keeps going, as `opa test --watch` does: the runtime's folder
 * watch (the one `toolgate watch` reloads by) reloads the policies on
 * every save of a policy file, and each reload that loads runs the cases
 * again. Test files are not policies, so that watch passes them by: the
 * saves of *_test.lua in DIR and of *.lua in DIR/tests/ are watched here
 * (debounced the same way) and run the cases against the generation
 * loaded — unless the last save of a policy did not load: then the cases
 * wait for one that does, rather than judge by the policies before it. The cases run outside the event's callback (they turn the loop
 * themselves): a callback only stops the loop, and the command's own loop
 * runs them.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <uv.h>
#include <cjson/cJSON.h>
#include "toolgate.h"
#include "kit/kit.h"
#include "commands.h"
#include "kit/options.h"
#include "kit/output.h"
#include "kit/declared_tools.h"
#include "kit/instance.h"

const char cmd_test_usage[] =
    "usage: toolgate test [DIR | --policies DIR] [--run PATTERN] [--json]\n"
    "                     [--config FILE] [--watch]\n"
    "\n"
    "Runs the policy unit tests of DIR (default ./policies): the cases that\n"
    "the *_test.lua files beside the policies, or in DIR/tests/, return.\n"
    "Each case is a call (tool, args, session) run through the chain of\n"
    "the policies in DIR — rules, pre-hooks, schema, post-hooks — with the\n"
    "tool replaced by the case's result or error, so no tool runs; it\n"
    "checks what the case expects: the verdict (expect), the rule that\n"
    "decided (rule), its reason (reason_match, a Lua pattern), the args and\n"
    "tool the pre-hooks leave (expect_args, expect_tool), the result after\n"
    "the post-hooks (expect_result) or the error (expect_error_code).\n"
    "\n"
    "A case may be an agent's call: tool and args as the agent sends them\n"
    "(Bash {command}, Edit {file_path, old_string, new_string},\n"
    "mcp__SERVER__TOOL {...}), mapped as its hook maps them; agent =\n"
    "\"claude-code\" or \"codex\" says whose (default: the agent whose\n"
    "tool has that name), cwd where its paths start (default: here); or\n"
    "event = the agent's hook event itself, instead of tool and args. A\n"
    "tool nobody registers (an upstream MCP server's) is judged by its name\n"
    "with stand_in = true (read_only = true if it only reads), or when\n"
    "toolgate.lua's server declares it (servers.x.tools). network = true\n"
    "marks a case's tool as reaching the network (call.network), as\n"
    "toolgate.lua's servers.x.network does. A case's taints (tg.taint, a\n"
    "redaction match) are kept in this run's memory, never in a database,\n"
    "and listed under the case.\n"
    "\n"
    "options:\n"
    "  --run PATTERN       only the cases whose name matches the Lua pattern\n"
    "  --json              print the report as one JSON object\n"
    "  --watch             keep running: run the cases again whenever a\n"
    "                      .lua file in DIR or DIR/tests/ is saved (a\n"
    "                      policy that does not load is shown, and the\n"
    "                      cases wait until one loads); Ctrl-C stops\n"
    "  --config FILE       toolgate.lua, for its servers' declared tools and\n"
    "                      network tools\n"
    "                      (default: ./toolgate.lua if there is one)\n"
    SANDBOX_OPT_USAGE
    "\n"
    "exit status: 0 every case passed; 1 a case failed; 2 usage error, a\n"
    "policy or test file that does not load (file:line), no test file, or\n"
    "no case matching --run. With --watch: 0 when stopped with Ctrl-C or\n"
    "SIGTERM, 2 when the policies do not load at the start.\n";

typedef struct {
  const char *dir, *run, *config;
  int json, watch;
  sandbox_options sandbox;
} test_options;

/* Returns -1 to go on, else the exit code. */
static int parse_test_options(test_options *o, int argc, char **argv) {
  static const char *const names[] = {"DIR"};
  const opt_spec specs[] = {{"--json", OPT_FLAG, &o->json, NULL},
                            {"--watch", OPT_FLAG, &o->watch, NULL},
                            {"--run", OPT_VALUE, NULL, &o->run},
                            {"--policies", OPT_VALUE, NULL, &o->dir},
                            {"--config", OPT_VALUE, NULL, &o->config},
                            SANDBOX_OPT_SPECS(&o->sandbox)};
  const opt_parser p = {"test", specs, sizeof specs / sizeof *specs, &o->dir,
                        0, 1, names, "test [DIR] [--run PATTERN] [--json]"};
  int npos;
  int rc = opt_parse(&p, argc, argv, &npos);
  if (rc == OPT_PARSE_HELP) {
    fputs(cmd_test_usage, stdout);
    return CLI_EXIT_OK;
  }
  return rc == OPT_PARSE_OK ? -1 : CLI_EXIT_USAGE;
}

static const char *str(const cJSON *o, const char *k) {
  return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k));
}

static int num(const cJSON *o, const char *k) {
  return (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, k));
}

/* s with control characters as spaces: a policy's reason is its own text. */
static void put_plain(FILE *f, const char *s) {
  for (; s && *s; s++) fputc((unsigned char)*s < 0x20 || *s == 0x7f ? ' ' : *s, f);
}

/* What the case's tg.taint did (in this run's memory only). */
static void print_taints(FILE *f, const cJSON *c) {
  const cJSON *t;
  cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(c, "taints")) {
    fputs("      tainted session ", f);
    put_plain(f, str(t, "session"));
    fprintf(f, " (level %d): ", num(t, "level"));
    put_plain(f, str(t, "reason"));
    fputc('\n', f);
  }
}

static void print_case(FILE *f, const cJSON *c, int color) {
  int ok = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "passed"));
  cli_sgr(f, color, ok ? "32" : "1;31");
  fputs(ok ? "PASS" : "FAIL", f);
  cli_sgr(f, color, "0");
  fprintf(f, "  %s  %s\n", str(c, "where"), str(c, "name"));
  print_taints(f, c);
  const cJSON *why;
  cJSON_ArrayForEach(why, cJSON_GetObjectItemCaseSensitive(c, "failures"))
    fprintf(f, "      %s\n", cJSON_IsString(why) ? why->valuestring : "?");
}

static void print_report(FILE *f, const cJSON *r, int color) {
  const cJSON *c;
  cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(r, "cases")) print_case(f, c, color);
  int failed = num(r, "failed"), filtered = num(r, "filtered");
  fputc('\n', f);
  cli_sgr(f, color, failed ? "1;31" : "1;32");
  fprintf(f, "%d passed, %d failed", num(r, "passed"), failed);
  cli_sgr(f, color, "0");
  if (filtered) fprintf(f, " (%d not matching --run)", filtered);
  fprintf(f, " — %s, generation %d\n", str(r, "dir"), num(r, "generation"));
}

/* One run of the cases against rt's current generation; the exit code. */
static int run_cases(const test_options *o, tg_runtime *rt) {
  char err[TG_ERRMSG] = "";
  int code;
  tg__hook_install_case_reader(rt); /* cases as agents' own events */
  cJSON *r = tg_policy_test(rt, o->dir, o->run, err);
  if (!r) {
    cli_error("test: %s", err);
    code = CLI_EXIT_USAGE;
  } else {
    if (o->json) cli_print_json_line(stdout, r);
    else print_report(stdout, r, cli_color_wanted(stdout));
    code = num(r, "failed") ? CLI_EXIT_FAILED : CLI_EXIT_OK;
  }
  cJSON_Delete(r);
  fflush(stdout);
  return code;
}

/* ---- --watch ------------------------------------------------------------- */

typedef struct {
  const test_options *o;
  tg_runtime *rt;
  cli_instance inst;
  int again;               /* a save since the cases last ran */
  char broken[TG_ERRMSG];  /* the policies' last load error, "" when they
                              loaded: the cases wait for them */
  uv_fs_event_t files[2];  /* DIR's test files, DIR/tests/ */
  int nfiles;
  uv_timer_t quiet;        /* a burst of saves there is one run */
} test_watch;

/* The cases would run on the generation before the broken save: they
 * wait for a save that loads. */
static void print_broken(const test_watch *w) {
  printf("\npolicy error: %s\n(the cases run again once the policies "
         "load)\n", w->broken);
}

static void on_event(tg_runtime *rt, const tg_event *ev, void *ud) {
  test_watch *w = ud;
  if (!strcmp(ev->type, "policy_loaded")) {
    w->broken[0] = '\0';
    w->again = 1;
    uv_stop(tg_runtime_loop(rt)); /* the cases turn the loop: not in here */
  } else if (!strcmp(ev->type, "policy_error")) {
    const char *e = str(ev->data, "error");
    snprintf(w->broken, sizeof w->broken, "%s", e ? e : "?");
    if (w->o->json) cli_print_json_line(stdout, ev->data);
    else print_broken(w);
    fflush(stdout);
  }
}

static void on_quiet(uv_timer_t *t) {
  test_watch *w = t->data;
  w->again = 1;
  uv_stop(tg_runtime_loop(w->rt));
}

static int ends_with(const char *s, const char *tail) {
  size_t n = strlen(s), t = strlen(tail);
  return n >= t && !strcmp(s + n - t, tail);
}

/* A save in DIR (a *_test.lua: the policies are the runtime's) or in
 * DIR/tests/ (any .lua); dot files are editors' temporaries. */
static void on_test_saved(uv_fs_event_t *h, const char *name, int events,
                          int status) {
  (void)events;
  test_watch *w = h->data;
  const char *tail = h == &w->files[0] ? "_test.lua" : ".lua";
  if (status < 0 || !name || name[0] == '.' || !ends_with(name, tail)) return;
  uv_timer_start(&w->quiet, on_quiet, 75, 0);
}

static void watch_test_files(test_watch *w) {
  char sub[PATH_MAX];
  struct stat st;
  uv_loop_t *loop = tg_runtime_loop(w->rt);
  uv_timer_init(loop, &w->quiet);
  w->quiet.data = w;
  snprintf(sub, sizeof sub, "%s/tests", w->o->dir);
  const char *dirs[2] = {w->o->dir, sub};
  for (int i = 0; i < 2; i++) {
    uv_fs_event_init(loop, &w->files[i]);
    w->files[i].data = w;
    w->nfiles++;
    if (stat(dirs[i], &st) == 0 && S_ISDIR(st.st_mode))
      uv_fs_event_start(&w->files[i], on_test_saved, dirs[i], 0);
  }
}

static int watch_cases(const test_options *o, tg_runtime *rt) {
  test_watch w;
  memset(&w, 0, sizeof w);
  w.o = o;
  w.rt = rt;
  char err[TG_ERRMSG] = "";
  if (tg_runtime_watch(rt, 1, err) < 0) {
    cli_error("test: %s", err);
    return CLI_EXIT_USAGE;
  }
  int sub = -1;
  if (cli_instance_start(&w.inst, rt, NULL, 1, "test") < 0 ||
      (sub = tg_events_subscribe_runtime(rt, on_event, &w)) < 0) {
    cli_instance_close(&w.inst);
    return CLI_EXIT_USAGE;
  }
  watch_test_files(&w);
  run_cases(o, rt);
  if (!o->json)
    printf("watching %s: the cases run again on every save; Ctrl-C stops\n",
           o->dir);
  fflush(stdout);
  while (!w.inst.stopping) {
    tg_runtime_run(rt, TG_RUN_DEFAULT);
    if (w.again && !w.inst.stopping) {
      w.again = 0;
      if (w.broken[0]) {
        if (!o->json) print_broken(&w);
        fflush(stdout);
        continue;
      }
      if (!o->json) fputc('\n', stdout);
      run_cases(o, rt);
    }
  }
  tg_events_unsubscribe(rt, sub);
  for (int i = 0; i < w.nfiles; i++)
    uv_close((uv_handle_t *)&w.files[i], NULL);
  uv_close((uv_handle_t *)&w.quiet, NULL);
  cli_instance_close(&w.inst);
  tg_runtime_run(rt, TG_RUN_NOWAIT); /* the closes, while w is here */
  return CLI_EXIT_OK;
}

int cmd_test(int argc, char **argv) {
  test_options o;
  memset(&o, 0, sizeof o);
  o.dir = "policies";
  int code = parse_test_options(&o, argc, argv);
  if (code >= 0) return code;
  tg_config cfg;
  char err[TG_ERRMSG] = "";
  tg_config_init(&cfg);
  /* unit tests judge the cases alone: no user's database read (usage a
   * budget sums, approvals remembered) nor written */
  cfg.db_off = 1;
  cfg.policies_dir = o.dir;
  if (sandbox_options_apply("test", &o.sandbox, &cfg) < 0) return CLI_EXIT_USAGE;
  tg_runtime *rt = tg_runtime_new(&cfg, NULL, err);
  if (!rt) {
    cli_error("test: %s", err);
    return CLI_EXIT_USAGE;
  }
  cJSON *decl = NULL;
  if (kit_declared_tools(o.config, &decl, err, sizeof err) < 0) {
    cli_error("test: %s", err);
    tg_runtime_free(rt);
    return CLI_EXIT_USAGE;
  }
  tg_runtime_declare_tools(rt, decl);
  cJSON_Delete(decl);
  if (kit_network_tools(o.config, &decl, err, sizeof err) < 0) {
    cli_error("test: %s", err);
    tg_runtime_free(rt);
    return CLI_EXIT_USAGE;
  }
  tg_runtime_declare_network(rt, decl); /* call.network */
  cJSON_Delete(decl);
  code = o.watch ? watch_cases(&o, rt) : run_cases(&o, rt);
  tg_runtime_free(rt);
  return code;
}
