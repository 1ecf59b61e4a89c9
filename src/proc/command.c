/*
 * command.c — a shell command's args as JSON ({command, cwd?, env?,
 * timeout_ms?, stdin?}: the exec tool's and ctx.exec's) parsed into the
 * options of a process, with the runtime's defaults.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "command.h"
#include "base/jsonnum.h"

#define DEFAULT_CAP ((size_t)1 << 20)
#define DEFAULT_GRACE_MS 2000

/* ---- args --------------------------------------------------------------- */

static int bad(char *err, size_t n, const char *what) {
  snprintf(err, n, "exec: %s", what);
  return -1;
}

static char *env_entry(const char *name, const char *value) {
  size_t kn = strlen(name), vn = strlen(value);
  char *e = malloc(kn + vn + 2);
  if (!e) return NULL;
  memcpy(e, name, kn);
  e[kn] = '=';
  memcpy(e + kn + 1, value, vn + 1);
  return e;
}

static int parse_env(const cJSON *env, tg_command *a, char *err, size_t n) {
  if (!cJSON_IsObject(env))
    return bad(err, n, "'env' must be an object of strings");
  size_t count = (size_t)cJSON_GetArraySize(env), k = 0;
  a->env = calloc(count + 1, sizeof *a->env);
  if (!a->env) return bad(err, n, "out of memory");
  const cJSON *v;
  cJSON_ArrayForEach(v, env) {
    char msg[160];
    if (!*v->string || strchr(v->string, '=')) {
      snprintf(msg, sizeof msg, "env name '%.60s' is not usable (empty or "
               "contains '=')", v->string);
      return bad(err, n, msg);
    }
    if (!cJSON_IsString(v)) {
      snprintf(msg, sizeof msg, "env '%.60s' must be a string", v->string);
      return bad(err, n, msg);
    }
    if (!(a->env[k++] = env_entry(v->string, v->valuestring)))
      return bad(err, n, "out of memory");
  }
  return 0;
}

static int opt_string(const cJSON *args, const char *key, const char **out,
                      char *err, size_t n) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(args, key);
  if (!v || cJSON_IsNull(v)) return 0;
  if (!cJSON_IsString(v)) {
    char msg[80];
    snprintf(msg, sizeof msg, "'%s' must be a string", key);
    return bad(err, n, msg);
  }
  *out = v->valuestring;
  return 0;
}

static int parse_fields(const cJSON *args, tg_command *a, char *err,
                        size_t n) {
  tg_proc_opts *o = &a->proc;
  if (!cJSON_IsObject(args)) return bad(err, n, "the args must be an object");
  if (opt_string(args, "command", &o->command, err, n) < 0 ||
      opt_string(args, "cwd", &o->cwd, err, n) < 0 ||
      opt_string(args, "stdin", &o->input, err, n) < 0)
    return -1;
  if (!o->command || !*o->command)
    return bad(err, n, "'command' is required: the shell command to run");
  if (o->input) o->input_len = strlen(o->input);
  int64_t ms;
  if (tg__json_int_arg(args, "exec", "timeout_ms", 1, TG_COMMAND_MAX_TIMEOUT_MS, 0, &ms,
                       err, n) < 0)
    return -1;
  a->timeout_ms = (uint64_t)ms; /* 0: not given */
  const cJSON *env = cJSON_GetObjectItemCaseSensitive(args, "env");
  if (env && !cJSON_IsNull(env) && parse_env(env, a, err, n) < 0) return -1;
  return 0;
}

int tg__command_parse(const tg_config *cfg, const cJSON *args,
                      tg_command *a,
                        char *err, size_t errlen) {
  memset(a, 0, sizeof *a);
  if (parse_fields(args, a, err, errlen) < 0) {
    tg__command_free(a);
    return -1;
  }
  a->proc.env = a->env;
  a->proc.cap = cfg->exec_output_cap ? cfg->exec_output_cap : DEFAULT_CAP;
  a->proc.kill_grace_ms =
      cfg->kill_grace_ms ? cfg->kill_grace_ms : DEFAULT_GRACE_MS;
  return 0;
}

void tg__command_free(tg_command *a) {
  for (size_t i = 0; a->env && a->env[i]; i++) free(a->env[i]);
  free(a->env);
  a->env = NULL;
}

