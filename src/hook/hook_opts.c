/*
 * hook_opts.c — the runtime both the in-process answer and `toolgate
 * daemon` use, from the same options, so that the two judge alike; and,
 * for the in-process answer, the last policies that loaded when the
 * folder does not load (policy/last_good.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "hook.h"

static tg_runtime *runtime_for(const char *policies, const hook_sandbox *s,
                               char err[TG_ERRMSG]) {
  tg_config cfg;
  tg_config_init(&cfg);
  cfg.policies_dir = policies;
  /* nobody to ask at a resident instance: a tool a policy runs for
   * context (agent.context_from) that needs approval is refused */
  cfg.approve_mode = TG_APPROVE_DENY;
  if (s && (sandbox_options_apply("hook", &s->sb, &cfg) < 0 ||
            db_options_apply("hook", &s->db, &cfg) < 0)) {
    snprintf(err, TG_ERRMSG, "bad policy sandbox options");
    return NULL;
  }
  return tg_runtime_new(&cfg, NULL, err);
}

tg_runtime *hook_runtime_new(const char *policies, const hook_sandbox *s,
                             char err[TG_ERRMSG]) {
  /* what is about to load, so that the copy kept is what loaded */
  uint8_t before[TG_SHA256_SIZE];
  int have = tg__policies_digest(policies, before) == 0;
  tg_runtime *rt = runtime_for(policies, s, err);
  /* best effort and quiet (a hook's stderr is for its answer): without a
   * state folder there is no copy to fall back on, and the answer stands */
  char why[TG_ERRMSG];
  if (rt && have) tg__last_good_keep(policies, before, NULL, NULL, why);
  return rt;
}

tg_runtime *hook_runtime_here(const char *policies, const hook_sandbox *s,
                              char err[TG_ERRMSG], char *note, size_t len) {
  note[0] = '\0';
  tg_runtime *rt = hook_runtime_new(policies, s, err);
  if (rt) return rt;
  /* only a folder that does not load falls back: one that loads is what
   * answers, a rule deleted from it included */
  char copy[4096], lerr[TG_ERRMSG];
  time_t when;
  if (tg__last_good_find(policies, copy, sizeof copy, &when) < 0) return NULL;
  tg_runtime *probe = runtime_for(NULL, s, lerr);
  int load_error = probe && tg_runtime_load_policies(probe, policies, lerr) == -EINVAL;
  tg_runtime_free(probe);
  if (!load_error) return NULL;
  rt = runtime_for(copy, s, lerr);
  if (!rt) return NULL; /* err says why the folder does not load */
  char stamp[32];
  struct tm tm;
  localtime_r(&when, &tm);
  strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S", &tm);
  snprintf(note, len, "answered by the policies as of %s (the last that "
           "loaded, kept in %s), because %s", stamp, copy, err);
  tg__last_good_log(policies, note);
  return rt;
}

/* Whether the copy loads, with the same sandbox and no database. */
static int copy_loads(const char *copy, void *ud) {
  hook_sandbox s = *(const hook_sandbox *)ud;
  s.db.db = NULL;
  s.db.no_db = 1;
  char err[TG_ERRMSG];
  tg_runtime *rt = runtime_for(copy, &s, err);
  tg_runtime_free(rt);
  return rt ? 0 : -1;
}

void hook_keep_last_good(const char *policies, const hook_sandbox *s) {
  char why[TG_ERRMSG];
  tg__last_good_keep(policies, NULL, copy_loads, (void *)s, why);
}
