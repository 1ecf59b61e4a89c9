/* validate_stage.c — args against the tool's JSON Schema (validate.c). */
#include <stdio.h>
#include <stdlib.h>
#include "call.h"
#include "validate.h"

tg_step tg__stage_validate(tg_call *c) {
  if (c->has_short || !c->tool || !c->tool->schema) return TG_NEXT;
  char msg[1024];
  if (tg_schema_validate(c->tool->schema, c->args, msg, sizeof msg))
    return TG_NEXT;
  tg__call_fail(c, TG_STATUS_ERROR, TG_PHASE_VALIDATE, TG_E_INVALID_ARGS, 0,
                "invalid arguments for '%s': %s", c->tool_name, msg);
  c->error.suggestion =
      tg__strdup("fix the arguments to match the tool's input schema");
  if (tg__events_wanted(c->rt, c->gen)) {
    cJSON *d = cJSON_CreateObject();
    cJSON_AddStringToObject(d, "error", msg);
    tg__emit(c->rt, c->gen, "validation_failed", c->id, d);
  }
  return TG_END;
}
