/* validate_stage.c — args against the tool's JSON Schema, compiled when
 * the tool was registered (base/schema*.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include "call.h"
#include "base/schema.h"

tg_step tg__stage_validate(tg_call *c) {
  if (c->has_short || !c->tool || !c->tool->validator) return TG_NEXT;
  char msg[1024];
  int rc = tg_schema_validate(c->tool->validator, c->args, msg, sizeof msg);
  if (rc == 0) return TG_NEXT;
  if (rc == -ENOMEM) {
    tg__call_fail(c, TG_STATUS_ERROR, TG_PHASE_INTERNAL, TG_E_NOMEM, 0,
                  "out of memory validating the arguments for '%s'",
                  c->tool_name);
    return TG_END;
  }
  tg__call_fail(c, TG_STATUS_ERROR, TG_PHASE_VALIDATE, TG_E_INVALID_ARGS, 0,
                "invalid arguments for '%s': %s", c->tool_name, msg);
  c->error.suggestion =
      tg__strdup("fix the arguments to match the tool's input schema");
  cJSON *d = tg__call_event_data(c); /* NULL: nobody listens */
  if (d) {
    cJSON_AddStringToObject(d, "error", msg);
  }
  tg__call_emit(c, "validation_failed", d);
  return TG_END;
}
