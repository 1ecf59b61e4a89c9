/*
 * config.h — toolgate.lua, the configuration of `toolgate serve`: a Lua
 * file that returns one table (see docs/mcp.md):
 *
 *   return {
 *     policies = "policies",               -- folder, relative to this file
 *     db = "toolgate.db",                  -- or false: none; default: this
 *                                          -- name beside this file
 *     project = ".",                       -- default: this file's folder
 *     workspace = { "." },                 -- roots of the file tools
 *     session = "default",
 *     defaults = { verdict = "ask", timeout_ms = 60000,
 *                  approval_timeout_ms = 300000, progress_interval_ms = 1000 },
 *     mcp = { separator = "__", max_message_bytes = 4194304,
 *             ask_fallback = "reject", log = "toolgate.log",
 *             log_level = "info", tools_ttl_ms = 60000,
 *             request_state_ttl_ms = 600000, max_calls = 256,
 *             startup_wait_ms = 5000 },
 *     expose = { "*", "!everything__get-env" },
 *     servers = {
 *       everything = { command = "npx", args = { "-y", "..." },
 *                      env = { KEY = "value" }, cwd = ".",
 *                      read_only = { "echo", "get-*" }, timeout_ms = 0,
 *                      tools = { "echo", "get-env" }, prefix = true,
 *                      network = { "fetch*" } },  -- or true: every tool
 *     },
 *   }
 *
 * The file runs in an empty sandbox (only os.getenv, pairs, ipairs, type,
 * tostring, tonumber), with an instruction budget and a memory cap; its
 * table is read raw, and every key is checked: a misspelt one is an error
 * that names it.
 */
#ifndef TOOLGATE_MCP_CONFIG_H
#define TOOLGATE_MCP_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include <cjson/cJSON.h>
#include "toolgate.h"
#include "server.h"

struct mcp_upstream_conf {
  char *name;
  char *command;
  char **args;         /* NULL-terminated */
  char **env;          /* "KEY=value", NULL-terminated: added to ours */
  char *cwd;           /* absolute; NULL: the config file's folder */
  char **read_only;    /* globs of the upstream's tool names (its own
                          names, not namespaced) the rules treat as
                          read-only; NULL: none (hints are not trusted) */
  uint64_t timeout_ms; /* per attempt of its tools; 0: the default */
  char **tools;        /* its tool names (its own), declared for `toolgate
                          check` and `toolgate test`, which do not start
                          it; NULL: none declared */
  int bare;            /* prefix = false: its tools, prompts, resources keep
                          their own names, no "<name><separator>" first */
  int network_all;     /* network = true: every tool of it reaches the
                          network (a sensitive session's policies may
                          refuse them: call.network) */
  char **network;      /* network = { globs }: those of its tools (its
                          own names); NULL: none */
};

typedef struct {
  char *path;          /* the file loaded; NULL: no file, the defaults */
  char *dir;           /* its folder (relative paths start there) */
  char *policies;      /* NULL: none given */
  char *db;            /* the database (absolute); NULL: none given */
  int db_off;          /* db = false: no database */
  char *project;       /* the project folder (absolute); NULL: none given */
  char **workspace;    /* NULL-terminated; NULL: none given */
  char *session;
  tg_verdict verdict;  /* TG_VERDICT_NONE: not given */
  uint64_t timeout_ms, approval_timeout_ms, progress_interval_ms;
  char *separator;
  uint64_t max_message_bytes;
  int ask_fallback;    /* -1: not given, else an mcp_fallback */
  char *log;
  int log_level;       /* -1: not given */
  uint64_t tools_ttl_ms, request_state_ttl_ms, max_calls;
  int64_t startup_wait_ms; /* -1: not given; 0: no wait */
  char **expose;
  mcp_upstream_conf *servers;
  size_t nservers;
} mcp_config;

/* Loads path into c (zeroed first). -1 with "toolgate.lua: servers.x.args:
 * ..." in err when the file cannot be read, fails to run, or holds
 * something wrong. */
int mcp_config_load(const char *path, mcp_config *c, char *err, size_t errlen);
/* The config as JSON (what was given; paths resolved), for `toolgate
 * serve --print-config`. Caller frees with cJSON_Delete. */
struct cJSON *mcp_config_to_json(const mcp_config *c);
/* The globs of the tool names its servers mark as reaching the network
 * (servers.x.network), for call.network (declared.c; commands.h's
 * mcp_network_tools). NULL: out of memory. Caller frees. */
struct cJSON *mcp_network_globs(const mcp_config *c);
/* The config with nothing given (no file). */
void mcp_config_empty(mcp_config *c);
void mcp_config_free(mcp_config *c);

#endif
