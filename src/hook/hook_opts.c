/*
 * hook_opts.c — the runtime both the in-process answer and `toolgate
 * daemon` use, from the same options, so that the two judge alike.
 */
#include <stdio.h>
#include "hook.h"

tg_runtime *hook_runtime_new(const char *policies, const hook_sandbox *s,
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
