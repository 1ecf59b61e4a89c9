/*
 * hook_opts.c — options of the hook front's commands: --name, --name=V,
 * --name V, "--" ends them. (The CLI's parser is cli/'s: a front does not
 * reach into another front.) Also the runtime both the in-process answer
 * and `toolgate daemon` use, so that the two judge alike.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hook.h"

void hook_error(const char *fmt, ...) {
  va_list ap;
  fputs("toolgate: ", stderr);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
}

static const hook_opt *find(const hook_opt *o, size_t n, const char *a,
                            size_t len) {
  for (size_t i = 0; i < n; i++)
    if (strlen(o[i].name) == len && !strncmp(o[i].name, a, len)) return &o[i];
  return NULL;
}

int hook_opts_parse(const char *cmd, const hook_opt *opts, size_t nopts,
                    int argc, char **argv, const char **pos, int max,
                    int *npos) {
  int done = 0;
  *npos = 0;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    if (done || a[0] != '-' || !a[1]) {
      if (*npos >= max) {
        hook_error("%s: unexpected argument '%s' (see 'toolgate %s --help')",
                   cmd, a, cmd);
        return -1;
      }
      pos[(*npos)++] = a;
      continue;
    }
    if (!strcmp(a, "--")) {
      done = 1;
      continue;
    }
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) return 1;
    const char *eq = strchr(a, '=');
    size_t len = eq ? (size_t)(eq - a) : strlen(a);
    const hook_opt *o = find(opts, nopts, a, len);
    if (!o) {
      hook_error("%s: unknown option '%.*s' (see 'toolgate %s --help')", cmd,
                 (int)len, a, cmd);
      return -1;
    }
    if (o->flag) {
      if (eq) {
        hook_error("%s: option '%s' takes no value", cmd, o->name);
        return -1;
      }
      *o->flag = 1;
    } else if (eq) {
      *o->value = eq + 1;
    } else if (i + 1 < argc) {
      *o->value = argv[++i];
    } else {
      hook_error("%s: option '%s' needs a value", cmd, o->name);
      return -1;
    }
  }
  return 0;
}

int hook_opt_number(const char *cmd, const char *name, const char *text,
                    int bytes, uint64_t *out) {
  char *end = NULL;
  errno = 0;
  unsigned long long v = strtoull(text, &end, 10);
  unsigned shift = 0;
  if (bytes && end && *end && !end[1] && strchr("KMG", *end)) {
    shift = *end == 'K' ? 10 : *end == 'M' ? 20 : 30;
    end++;
  }
  if (text[0] < '0' || text[0] > '9' || *end || errno == ERANGE || v == 0 ||
      v > (UINT64_MAX >> shift)) {
    hook_error("%s: option '%s' needs a positive whole number%s, not '%s'",
               cmd, name, bytes ? " of bytes (like 65536 or 64M)" : "", text);
    return -1;
  }
  *out = (uint64_t)v << shift;
  return 0;
}

int hook_sandbox_apply(const char *cmd, const hook_sandbox *s, tg_config *cfg) {
  uint64_t limit = 0, cap = 0;
  if ((s->time_limit && hook_opt_number(cmd, "--policy-time-limit",
                                        s->time_limit, 0, &limit) < 0) ||
      (s->memory_cap && hook_opt_number(cmd, "--policy-memory-cap",
                                        s->memory_cap, 1, &cap) < 0))
    return -1;
  if (limit > UINT32_MAX) {
    hook_error("%s: option '--policy-time-limit' is at most %u ms", cmd,
               (unsigned)UINT32_MAX);
    return -1;
  }
  if (s->db && (!*s->db || s->no_db)) {
    hook_error("%s: %s", cmd, *s->db ? "--db and --no-db contradict each "
               "other: give one" : "option '--db' needs a file name, not ''");
    return -1;
  }
  cfg->db = s->db;
  cfg->db_off = s->no_db;
  cfg->trusted_policies = s->trusted;
  if (limit) cfg->policy_time_limit_ms = (uint32_t)limit;
  if (cap) cfg->policy_memory_cap = (size_t)cap;
  return 0;
}

tg_runtime *hook_runtime_new(const char *policies, const hook_sandbox *s,
                             char err[TG_ERRMSG]) {
  tg_config cfg;
  tg_config_init(&cfg);
  cfg.policies_dir = policies;
  /* nobody to ask at a resident instance: a tool a policy runs for
   * context (agent.context_from) that needs approval is refused */
  cfg.approve_mode = TG_APPROVE_DENY;
  if (s && hook_sandbox_apply("hook", s, &cfg) < 0) {
    snprintf(err, TG_ERRMSG, "bad policy sandbox options");
    return NULL;
  }
  return tg_runtime_new(&cfg, NULL, err);
}
