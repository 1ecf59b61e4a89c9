/*
 * control_services.h — the runtime's narrow API for the control socket
 * (src/control/): the runtime keeps one control server and stops it when
 * it goes; a reload goes through the runtime's one reload path; an event
 * goes on the runtime's bus. The socket never sees the runtime's object.
 */
#ifndef TG_RUNTIME_CONTROL_SERVICES_H
#define TG_RUNTIME_CONTROL_SERVICES_H

#include <stddef.h>
#include <stdint.h>
#include <cjson/cJSON.h>
#include "toolgate.h"

/* The control server a runtime listens with (opaque to the runtime). */
typedef struct tg_control tg_control;

/* The runtime's control server, or NULL when it does not listen. */
tg_control *tg__control_get(tg_runtime *rt);
/* Hands the runtime its control server (NULL: none any more); stop is
 * called when the runtime is freed, before anything else goes. */
void tg__control_set(tg_runtime *rt, tg_control *ctl,
                     void (*stop)(tg_runtime *rt));

/* What a reload made. */
typedef struct {
  uint64_t generation;
  size_t files;
  double duration_ms;
} tg_control_reloaded;

/* Reloads the policies folder loaded last, as the control socket's
 * trigger ("control"): the runtime's one reload path. 0, or a negative
 * errno with err ("file:line: message"). */
int tg__control_reload(tg_runtime *rt, tg_control_reloaded *info,
                       char err[TG_ERRMSG]);
/* The policies folder the runtime loaded, or NULL. */
const char *tg__control_policies(tg_runtime *rt);
/* Emits a runtime event (no call's) of type with data (taken). */
void tg__control_emit(tg_runtime *rt, const char *type, cJSON *data);

#endif
