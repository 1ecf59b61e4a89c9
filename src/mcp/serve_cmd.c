/*
 * serve_cmd.c — `toolgate serve`: the MCP server on stdio (src/mcp/), and
 * the long-running instance of a project: it reloads its policies on
 * every save, on SIGHUP and on `toolgate reload` (kit/instance.h), and runs
 * until the client closes stdin or a SIGINT/SIGTERM comes. Then the calls
 * in flight are cancelled, the upstream servers stopped, and it exits 0.
 *
 * The run: read toolgate.lua (--config, or ./toolgate.lua if there is
 * one), let the options override it, make the runtime, start the instance
 * and the server, turn the loop until it stops, wind down.
 *
 * An MCP client starts a server per window, session or agent, from a
 * folder and with an environment of its choosing (often without
 * XDG_STATE_HOME): so a server run from a config keeps its database and
 * its project beside the config unless told otherwise, and any number of
 * servers may run on one policies folder (each has a control socket of
 * its own; they share the database, where approvals, budgets and the
 * audit trail meet).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <uv.h>
#include <cjson/cJSON.h>
#include "toolgate.h"
#include "kit/kit.h"
#include "kit/instance.h"
#include "kit/options.h"
#include "kit/output.h"
#include "commands.h"
#include "config.h"
#include "server.h"

#define DEFAULT_CONFIG "toolgate.lua"
#define DEFAULT_POLICIES "policies"
#define DEFAULT_DB "toolgate.db" /* beside the config */
#define WIND_DOWN_MS 5000 /* how long calls and upstreams get to end */

const char cmd_serve_usage[] =
    "usage: toolgate serve [--config FILE] [options]\n"
    "\n"
    "Serves MCP on stdin/stdout (JSON-RPC 2.0, one message per line) for an\n"
    "MCP client: toolgate's tools and those of the upstream MCP servers in\n"
    "the config, every call through the policies. Logs go to stderr (or\n"
    "--log FILE), never to stdout. Reloads the policies when one is saved,\n"
    "on SIGHUP and on 'toolgate reload'. Stops when the client closes stdin\n"
    "(calls in flight are cancelled, upstream servers stopped) or on\n"
    "SIGINT/SIGTERM. Any number of servers may run on one policies folder\n"
    "(one per client window or agent); without a policies folder it runs\n"
    "with the built-in defaults (no rules) and says so.\n"
    "\n"
    "options:\n"
    "  --config FILE       toolgate.lua (default: ./toolgate.lua if there is\n"
    "                      one); the options below override it\n"
    "  --policies DIR      the policies folder (default: the config's, else\n"
    "                      ./policies if it exists)\n"
    "  --workspace DIR     the root the file tools are confined to\n"
    "  --socket PATH       the control socket (default: one that 'toolgate\n"
    "                      reload --policies DIR' finds; none without a\n"
    "                      policies folder)\n"
    "  --db PATH           the database: audit trail, approvals, usage\n"
    "                      (default: the config's db, else toolgate.db beside\n"
    "                      the config, else ${XDG_STATE_HOME:-~/.local/state}/\n"
    "                      toolgate/toolgate.db)\n"
    "  --no-db             no database: no audit trail, approve-always\n"
    "                      remembered for this run only\n"
    "  --project DIR       the project approvals are remembered for (default:\n"
    "                      the config's project, else the config's folder,\n"
    "                      else the current folder)\n"
    "  --log FILE          append the log to FILE instead of stderr\n"
    "  --log-level LEVEL   debug, info (default), notice, warning, error\n"
    "  --ask-fallback MODE when the client cannot be asked (no elicitation):\n"
    "                      reject (default) or allow\n"
    "  --max-message-bytes N\n"
    "                      the longest message taken (default 4M; K, M, G)\n"
    "  --timeout-ms N      the default per-attempt timeout (default 60000)\n"
    "  --approval-timeout-ms N\n"
    "                      how long an ask waits for the user (default 5 min)\n"
    "  --request-state-ttl-ms N\n"
    "                      how long a 2026-07-28 requestState is good\n"
    "                      (default 600000)\n"
    "  --startup-wait-ms N how long requests wait for the upstream servers'\n"
    "                      first start (default 5000); 0: answer at once,\n"
    "                      their tools come with a list_changed\n"
    "  --print-config      print the config as read (paths resolved) as JSON\n"
    "                      and exit, starting nothing\n"
    SANDBOX_OPT_USAGE
    "\n"
    "exit status: 0 the client closed stdin, or SIGINT/SIGTERM; 2 usage or\n"
    "configuration error (the config or the policies do not load).\n";

typedef struct {
  const char *config, *policies, *workspace, *socket, *log, *log_level;
  const char *fallback, *max_bytes, *timeout, *approval_timeout, *state_ttl;
  const char *startup_wait;
  const char *project;
  int print_config;
  sandbox_options sandbox;
  db_options db;
} serve_options;

typedef struct {
  serve_options opt;
  mcp_config conf;
  mcp_log *log;
  tg_runtime *rt;
  cli_instance inst;
  mcp_server *server;
  const char *roots[2];
  uv_timer_t wind_down;      /* bounds the wait for calls and upstreams */
  int late;                  /* it fired */
  int skipped_parent;        /* ./toolgate.lua was the starting gateway's */
} serve_run;

/* ---- options over the config ----------------------------------------------- */

static int parse_serve_options(serve_options *o, int argc, char **argv) {
  const opt_spec specs[] = {
      {"--config", OPT_VALUE, NULL, &o->config},
      {"--policies", OPT_VALUE, NULL, &o->policies},
      {"--workspace", OPT_VALUE, NULL, &o->workspace},
      {"--socket", OPT_VALUE, NULL, &o->socket},
      {"--log", OPT_VALUE, NULL, &o->log},
      {"--log-level", OPT_VALUE, NULL, &o->log_level},
      {"--ask-fallback", OPT_VALUE, NULL, &o->fallback},
      {"--max-message-bytes", OPT_VALUE, NULL, &o->max_bytes},
      {"--timeout-ms", OPT_VALUE, NULL, &o->timeout},
      {"--approval-timeout-ms", OPT_VALUE, NULL, &o->approval_timeout},
      {"--request-state-ttl-ms", OPT_VALUE, NULL, &o->state_ttl},
      {"--startup-wait-ms", OPT_VALUE, NULL, &o->startup_wait},
      {"--print-config", OPT_FLAG, &o->print_config, NULL},
      {"--project", OPT_VALUE, NULL, &o->project},
      SANDBOX_OPT_SPECS(&o->sandbox),
      DB_OPT_SPECS(&o->db),
  };
  const opt_parser p = {"serve", specs, sizeof specs / sizeof *specs, NULL,
                        0, 0, NULL, "serve [--config FILE] [options]"};
  int npos;
  int rc = opt_parse(&p, argc, argv, &npos);
  if (rc == OPT_PARSE_HELP) {
    fputs(cmd_serve_usage, stdout);
    return CLI_EXIT_OK;
  }
  return rc == OPT_PARSE_OK ? -1 : CLI_EXIT_USAGE;
}

static int exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

/* toolgate serve as a server of a toolgate gateway (chaining) runs where
 * the gateway starts it — by default in the gateway's own folder, often
 * its config's, so it would find ./toolgate.lua, the gateway's, and start
 * its servers: the same toolgate again, without end (a process per
 * second until a limit of the machine stops them all). So a gateway tells its servers which
 * configs started them (GATEWAY_CONFIGS: their real paths, one a line),
 * and a serve never runs one of those: ./toolgate.lua found so is passed
 * over (said in the log), one named with --config is an error. */
#define GATEWAY_CONFIGS "TOOLGATE_GATEWAY_CONFIGS"
#define GATEWAY_DEPTH_MAX 8

/* Is the config at path (a real path) one of the gateways' above this
 * one? -1 with the error said when they are nested too deep. */
static int started_by(const char *real, const char *chain) {
  int depth = 0;
  for (const char *p = chain; p && *p;) {
    size_t n = strcspn(p, "\n");
    if (n == strlen(real) && !strncmp(p, real, n)) return 1;
    depth++;
    p += n + (p[n] == '\n');
  }
  if (depth >= GATEWAY_DEPTH_MAX) {
    cli_error("serve: toolgate gateways are nested %d deep here (each a "
              "server of the one above): that many is taken for a loop "
              "of configs; give each its own toolgate.lua", depth);
    return -1;
  }
  return 0;
}

/* Adds this serve's config to the chain its servers inherit. */
static int pass_chain_on(const char *real, const char *chain) {
  size_t n = (chain ? strlen(chain) + 1 : 0) + strlen(real) + 1;
  char *v = malloc(n);
  if (!v) return -1;
  snprintf(v, n, "%s%s%s", chain ? chain : "", chain ? "\n" : "", real);
  int rc = setenv(GATEWAY_CONFIGS, v, 1);
  free(v);
  return rc;
}

static int load_config(serve_run *r) {
  char err[1024];
  const char *path = r->opt.config;
  const char *chain = getenv(GATEWAY_CONFIGS);
  if (!path && exists(DEFAULT_CONFIG)) path = DEFAULT_CONFIG;
  char *real = path ? realpath(path, NULL) : NULL;
  int loop = real ? started_by(real, chain) : 0;
  if (loop < 0) {
    free(real);
    return -1;
  }
  if (loop && !r->opt.config) {
    r->skipped_parent = 1; /* said once the log is open */
    free(real);
    real = NULL;
    path = NULL;
  } else if (loop) {
    cli_error("serve: %s is the config of a toolgate gateway that started "
              "this one as its server: its servers would start this toolgate "
              "again, without end; give this server a toolgate.lua of its "
              "own, or none (--policies DIR)", path);
    free(real);
    return -1;
  }
  if (!path) {
    mcp_config_empty(&r->conf);
    return 0;
  }
  if (mcp_config_load(path, &r->conf, err, sizeof err) < 0) {
    cli_error("serve: %s", err);
    free(real);
    return -1;
  }
  if (real && r->conf.nservers && pass_chain_on(real, chain) < 0) {
    cli_error("serve: out of memory");
    free(real);
    return -1;
  }
  free(real);
  return 0;
}

/* The options that override the config's values. */
static int apply_overrides(serve_run *r) {
  const serve_options *o = &r->opt;
  mcp_config *c = &r->conf;
  uint64_t v;
  if (o->fallback) {
    if (strcmp(o->fallback, "reject") && strcmp(o->fallback, "allow")) {
      cli_error("serve: option '--ask-fallback' takes reject or allow, not "
                "'%s'", o->fallback);
      return -1;
    }
    c->ask_fallback = strcmp(o->fallback, "allow") ? MCP_FALLBACK_REJECT
                                                   : MCP_FALLBACK_ALLOW;
  }
  if (o->log_level && (c->log_level = mcp_log_level_of(o->log_level)) < 0) {
    cli_error("serve: option '--log-level' takes debug, info, notice, "
              "warning or error, not '%s'", o->log_level);
    return -1;
  }
  if (o->max_bytes) {
    if (opt_bytes("serve", "--max-message-bytes", o->max_bytes, &v) < 0) return -1;
    c->max_message_bytes = v;
  }
  if (o->timeout && opt_millis("serve", "--timeout-ms", o->timeout, &c->timeout_ms) < 0)
    return -1;
  if (o->approval_timeout &&
      opt_millis("serve", "--approval-timeout-ms", o->approval_timeout,
                 &c->approval_timeout_ms) < 0)
    return -1;
  if (o->state_ttl &&
      opt_millis("serve", "--request-state-ttl-ms", o->state_ttl,
                 &c->request_state_ttl_ms) < 0)
    return -1;
  if (o->startup_wait) { /* 0 is a value here: no wait */
    if (strcmp(o->startup_wait, "0") &&
        opt_millis("serve", "--startup-wait-ms", o->startup_wait, &v) < 0)
      return -1;
    c->startup_wait_ms = strcmp(o->startup_wait, "0") ? (int64_t)v : 0;
  }
  return 0;
}

static const char *policies_dir(serve_run *r) {
  if (r->opt.policies) return r->opt.policies;
  if (r->conf.policies) return r->conf.policies;
  return exists(DEFAULT_POLICIES) ? DEFAULT_POLICIES : NULL;
}

/* Where the database and the project are: the options, else the config's
 * keys, else beside the config (an MCP client's environment and folder say
 * nothing about where the project's data belongs), else the defaults of
 * every command (NULL). Set into c, so --print-config shows them. */
static int storage_and_project(serve_run *r) {
  const serve_options *o = &r->opt;
  mcp_config *c = &r->conf;
  tg_config checked; /* the checks every command makes of --db/--no-db */
  tg_config_init(&checked);
  if (db_options_apply("serve", &o->db, &checked) < 0) return -1;
  if (o->project && !*o->project) {
    cli_error("serve: option '--project' needs a folder, not ''");
    return -1;
  }
  if (o->db.db || o->db.no_db) { /* the options override the config */
    free(c->db);
    c->db = o->db.db ? strdup(o->db.db) : NULL;
    c->db_off = o->db.no_db;
  } else if (!c->db && !c->db_off && c->dir) {
    size_t n = strlen(c->dir) + sizeof DEFAULT_DB + 1;
    if ((c->db = malloc(n))) snprintf(c->db, n, "%s/%s", c->dir, DEFAULT_DB);
  }
  if (o->project) {
    free(c->project);
    c->project = strdup(o->project);
  } else if (!c->project && c->dir) {
    c->project = strdup(c->dir);
  }
  return 0;
}

static int make_runtime(serve_run *r) {
  tg_config cfg;
  char err[TG_ERRMSG] = "";
  const mcp_config *c = &r->conf;
  tg_config_init(&cfg);
  cfg.policies_dir = policies_dir(r);
  cfg.watch_policies = cfg.policies_dir != NULL;
  cfg.session = c->session;
  if (c->verdict != TG_VERDICT_NONE) cfg.default_verdict = c->verdict;
  if (c->timeout_ms) cfg.timeout_ms = c->timeout_ms;
  if (c->approval_timeout_ms) cfg.approval_timeout_ms = c->approval_timeout_ms;
  if (c->progress_interval_ms) cfg.progress_interval_ms = c->progress_interval_ms;
  r->roots[0] = r->opt.workspace;
  if (r->opt.workspace) cfg.workspace_roots = r->roots;
  else if (c->workspace) cfg.workspace_roots = (const char *const *)c->workspace;
  if (sandbox_options_apply("serve", &r->opt.sandbox, &cfg) < 0) return -1;
  cfg.db = c->db;
  cfg.db_off = c->db_off;
  cfg.project = c->project;
  if (r->skipped_parent)
    mcp_logf(r->log, MCP_LOG_NOTICE, "./%s is the config of the toolgate "
             "gateway that started this one as its server: not read (its "
             "servers would start this toolgate again)", DEFAULT_CONFIG);
  if (!cfg.policies_dir)
    mcp_logf(r->log, MCP_LOG_NOTICE, "no policies folder: running with the "
             "built-in defaults (no rules, no policy tools%s; a call no rule "
             "answers: %s unless read-only); use --policies DIR or "
             "policies = ... in %s",
             r->opt.socket ? "" : ", no control socket",
             tg_verdict_name(c->verdict != TG_VERDICT_NONE ? c->verdict
                                                           : TG_VERDICT_ASK),
             DEFAULT_CONFIG);
  r->rt = tg_runtime_new(&cfg, NULL, err);
  if (!r->rt) cli_error("serve: %s", err);
  cJSON *net = r->rt ? mcp_network_globs(c) : NULL; /* call.network */
  if (net) tg_runtime_declare_network(r->rt, net);
  cJSON_Delete(net);
  return r->rt ? 0 : -1;
}

/* ---- running ------------------------------------------------------------------- */

static void client_gone(mcp_server *s, void *ud) {
  serve_run *r = ud;
  cli_instance_stop(&r->inst);
}

static int start_server(serve_run *r) {
  const mcp_config *c = &r->conf;
  mcp_options o;
  memset(&o, 0, sizeof o);
  o.max_message_bytes = c->max_message_bytes;
  o.ask_fallback = c->ask_fallback < 0 ? MCP_FALLBACK_REJECT : c->ask_fallback;
  o.tools_ttl_ms = c->tools_ttl_ms;
  o.state_ttl_ms = c->request_state_ttl_ms;
  o.max_calls = c->max_calls;
  /* not given: the server's default; 0 given: no wait (-1 to the server) */
  o.startup_wait_ms = c->startup_wait_ms < 0 ? 0
                      : c->startup_wait_ms == 0 ? -1 : c->startup_wait_ms;
  o.expose = (const char *const *)c->expose;
  o.upstreams = c->servers;
  o.nupstreams = c->nservers;
  o.separator = c->separator;
  o.log = r->log;
  o.on_end = client_gone;
  o.ud = r;
  char err[TG_ERRMSG] = "";
  r->server = mcp_server_new(r->rt, &o, err);
  if (!r->server || mcp_server_start(r->server, 0, 1, err) < 0) {
    cli_error("serve: %s", err);
    return -1;
  }
  return 0;
}

static int print_config(serve_run *r) {
  cJSON *j = mcp_config_to_json(&r->conf);
  char *text = j ? tg_json_print(j, 1) : NULL;
  if (text) puts(text);
  free(text);
  cJSON_Delete(j);
  return text ? CLI_EXIT_OK : CLI_EXIT_USAGE;
}

static int set_up(serve_run *r) {
  char err[512];
  const char *log = r->opt.log ? r->opt.log : r->conf.log;
  int level = r->conf.log_level < 0 ? MCP_LOG_INFO : r->conf.log_level;
  r->log = mcp_log_open(log, (mcp_log_level)level, err, sizeof err);
  if (!r->log) {
    cli_error("serve: %s", err);
    return -1;
  }
  if (make_runtime(r) < 0) return -1;
  /* no folder: no path to derive a socket from, and nothing to reload */
  int no_socket = !r->opt.socket && !policies_dir(r);
  if (cli_instance_start(&r->inst, r->rt, r->opt.socket, no_socket,
                         "serve") < 0)
    return -1;
  mcp_logf(r->log, MCP_LOG_INFO, "serving MCP on stdio: policies %s, "
           "generation %llu, socket %s, database %s, project %s",
           policies_dir(r) ? policies_dir(r) : "(none)",
           (unsigned long long)tg_runtime_generation(r->rt),
           tg_runtime_control_path(r->rt) ? tg_runtime_control_path(r->rt) : "-",
           r->conf.db_off ? "(none)" : r->conf.db ? r->conf.db : "(default)",
           r->conf.project ? r->conf.project : "(the current folder)");
  return start_server(r);
}

static void wind_down_timeout(uv_timer_t *t) {
  serve_run *r = t->data;
  r->late = 1;
}

/* Cancels what runs and lets it end — calls, upstream servers — for a
 * while; then kills the commands still running (no command outlives us:
 * tg_runtime_free waits for the calls to end, and that ends them). */
static void wind_down(serve_run *r) {
  if (!r->server) return;
  mcp_server_stop(r->server);
  uv_loop_t *loop = tg_runtime_loop(r->rt);
  uv_timer_init(loop, &r->wind_down);
  r->wind_down.data = r;
  uv_update_time(loop);
  uv_timer_start(&r->wind_down, wind_down_timeout, WIND_DOWN_MS, 0);
  while (mcp_server_busy(r->server) && !r->late) uv_run(loop, UV_RUN_ONCE);
  uv_close((uv_handle_t *)&r->wind_down, NULL); /* r outlives the loop */
  tg_runtime_kill_processes(r->rt);
}

int cmd_serve(int argc, char **argv) {
  serve_run r;
  memset(&r, 0, sizeof r);
  mcp_config_empty(&r.conf);
  int code = parse_serve_options(&r.opt, argc, argv);
  if (code >= 0) return code;
  signal(SIGPIPE, SIG_IGN); /* a closed pipe is an error to handle, not death */
  code = CLI_EXIT_USAGE;
  r.inst.ud = &r;
  if (load_config(&r) < 0 || apply_overrides(&r) < 0 ||
      storage_and_project(&r) < 0) {
    mcp_config_free(&r.conf);
    return CLI_EXIT_USAGE;
  }
  if (r.opt.print_config) {
    code = print_config(&r);
    mcp_config_free(&r.conf);
    return code;
  }
  if (set_up(&r) == 0) {
    while (!r.inst.stopping) tg_runtime_run(r.rt, TG_RUN_DEFAULT);
    code = CLI_EXIT_OK;
  }
  wind_down(&r);
  cli_instance_close(&r.inst);
  mcp_server_free(r.server);
  tg_runtime_free(r.rt);
  if (code == CLI_EXIT_OK) mcp_logf(r.log, MCP_LOG_INFO, "stopped");
  mcp_log_close(r.log);
  mcp_config_free(&r.conf);
  return code;
}
