/*
 * options.c — long options for the `toolgate` commands: --name, --name=V,
 * --name V, "--" to end options. A lone "-" is a positional (it means
 * stdin/stderr to the commands that take a file).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "options.h"
#include "output.h"

static const opt_spec *find_spec(const opt_parser *p, const char *arg,
                                 size_t namelen) {
  for (size_t i = 0; i < p->nspecs; i++)
    if (strlen(p->specs[i].name) == namelen &&
        strncmp(p->specs[i].name, arg, namelen) == 0)
      return &p->specs[i];
  return NULL;
}

/* Handles the option at argv[*i]; may consume argv[*i + 1] as its value. */
static int take_option(const opt_parser *p, int argc, char **argv, int *i) {
  const char *arg = argv[*i];
  const char *eq = strchr(arg, '=');
  size_t namelen = eq ? (size_t)(eq - arg) : strlen(arg);
  const opt_spec *s = find_spec(p, arg, namelen);
  if (!s) {
    cli_error("%s: unknown option '%.*s' (see 'toolgate %s --help')",
              p->command, (int)namelen, arg, p->command);
    return OPT_PARSE_ERROR;
  }
  if (s->kind == OPT_FLAG) {
    if (eq) {
      cli_error("%s: option '%s' takes no value", p->command, s->name);
      return OPT_PARSE_ERROR;
    }
    *s->flag = 1;
    return OPT_PARSE_OK;
  }
  if (eq) {
    *s->value = eq + 1;
  } else if (*i + 1 < argc) {
    *s->value = argv[++*i];
  } else {
    cli_error("%s: option '%s' needs a value", p->command, s->name);
    return OPT_PARSE_ERROR;
  }
  return OPT_PARSE_OK;
}

static int take_positional(const opt_parser *p, const char *arg, int *npos) {
  if (*npos >= p->max_positional) {
    cli_error("%s: unexpected argument '%s' (usage: toolgate %s)",
              p->command, arg, p->usage);
    return OPT_PARSE_ERROR;
  }
  p->positional[(*npos)++] = arg;
  return OPT_PARSE_OK;
}

int opt_parse(const opt_parser *p, int argc, char **argv, int *npos) {
  int options_done = 0;
  *npos = 0;
  for (int i = 0; i < argc; i++) {
    const char *arg = argv[i];
    int rc;
    if (options_done || arg[0] != '-' || arg[1] == '\0') {
      rc = take_positional(p, arg, npos);
    } else if (strcmp(arg, "--") == 0) {
      options_done = 1;
      rc = OPT_PARSE_OK;
    } else if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
      return OPT_PARSE_HELP;
    } else {
      rc = take_option(p, argc, argv, &i);
    }
    if (rc != OPT_PARSE_OK) return rc;
  }
  if (*npos < p->min_positional) {
    cli_error("%s: missing %s (usage: toolgate %s)", p->command,
              p->positional_names[*npos], p->usage);
    return OPT_PARSE_ERROR;
  }
  return OPT_PARSE_OK;
}

int opt_millis(const char *command, const char *name, const char *text,
               uint64_t *out) {
  char *end = NULL;
  errno = 0;
  unsigned long long v = strtoull(text, &end, 10);
  /* strtoull accepts "-1" (as a huge number) and leading blanks: refuse */
  if (text[0] < '0' || text[0] > '9' || *end || errno == ERANGE || v == 0) {
    cli_error("%s: option '%s' needs a positive whole number of "
              "milliseconds, not '%s'", command, name, text);
    return -1;
  }
  *out = (uint64_t)v;
  return 0;
}

int opt_bytes(const char *command, const char *name, const char *text,
              uint64_t *out) {
  char *end = NULL;
  errno = 0;
  unsigned long long v = strtoull(text, &end, 10);
  unsigned shift = 0;
  if (end && *end && !end[1]) {
    const char *units = "KMG", *u = strchr(units, *end);
    if (u) {
      shift = 10 * (unsigned)(u - units + 1);
      end++;
    }
  }
  if (text[0] < '0' || text[0] > '9' || *end || errno == ERANGE || v == 0 ||
      v > (UINT64_MAX >> shift)) {
    cli_error("%s: option '%s' needs a positive number of bytes (like 65536, "
              "64K or 1M), not '%s'", command, name, text);
    return -1;
  }
  *out = (uint64_t)v << shift;
  return 0;
}

static int opt_count(const char *command, const char *name, const char *text,
                     uint64_t *out) {
  char *end = NULL;
  errno = 0;
  unsigned long long v = strtoull(text, &end, 10);
  if (text[0] < '0' || text[0] > '9' || *end || errno == ERANGE || v == 0) {
    cli_error("%s: option '%s' needs a positive whole number, not '%s'",
              command, name, text);
    return -1;
  }
  *out = (uint64_t)v;
  return 0;
}

int sandbox_options_apply(const char *command, const sandbox_options *o,
                          tg_config *cfg) {
  uint64_t limit = 0, cap = 0;
  if ((o->time_limit && opt_count(command, "--policy-time-limit",
                                  o->time_limit, &limit) < 0) ||
      (o->memory_cap && opt_bytes(command, "--policy-memory-cap",
                                  o->memory_cap, &cap) < 0))
    return -1;
  cfg->trusted_policies = o->trusted;
  if (limit > UINT32_MAX) {
    cli_error("%s: option '--policy-time-limit' is in milliseconds, at most "
              "%u, not '%s'", command, (unsigned)UINT32_MAX, o->time_limit);
    return -1;
  }
  if (limit) cfg->policy_time_limit_ms = (uint32_t)limit;
  if (cap) cfg->policy_memory_cap = (size_t)cap;
  return 0;
}

int db_path_check(const char *command, const char *db) {
  if (db && !*db) {
    cli_error("%s: option '--db' needs a file name, not ''", command);
    return -1;
  }
  return 0;
}

int db_options_apply(const char *command, const db_options *o,
                     tg_config *cfg) {
  if (o->db && o->no_db) {
    cli_error("%s: --db and --no-db contradict each other: give one",
              command);
    return -1;
  }
  if (db_path_check(command, o->db) < 0) return -1;
  cfg->db = o->db;
  cfg->db_off = o->no_db;
  return 0;
}
