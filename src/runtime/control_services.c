/*
 * control_services.c — the runtime's side of control_services.h: what
 * the control socket front asks of the runtime (its server's slot, a
 * reload, the policies folder, an event), answered from the runtime's
 * object so that the front never sees it.
 */
#include "runtime.h"
#include "control_services.h"

tg_control *tg__control_get(tg_runtime *rt) { return rt->control; }

void tg__control_set(tg_runtime *rt, tg_control *ctl,
                     void (*stop)(tg_runtime *rt)) {
  rt->control = ctl;
  rt->control_stop = ctl ? stop : NULL;
}

int tg__control_reload(tg_runtime *rt, tg_control_reloaded *info,
                       char err[TG_ERRMSG]) {
  tg_reload_info r;
  int rc = tg__reload(rt, NULL, "control", &r, err);
  if (rc == 0 && info)
    *info = (tg_control_reloaded){r.generation, r.files, r.duration_ms};
  return rc;
}

const char *tg__control_policies(tg_runtime *rt) { return rt->policies_dir; }

void tg__control_emit(tg_runtime *rt, const char *type, cJSON *data) {
  tg__emit(&rt->core, NULL, type, NULL, data);
}
