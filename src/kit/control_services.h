/*
 * control_services.h — what the control socket front (src/control/) needs
 * beyond include/toolgate.h: the runtime's narrow API for it
 * (runtime/control_services.h: its server's slot, a reload, the policies
 * folder, an event) and the small helpers it builds with (closing uv
 * handles together, tg__errf, tg__strdup). The front includes this and
 * nothing of the layers below.
 */
#ifndef TG_KIT_CONTROL_SERVICES_H
#define TG_KIT_CONTROL_SERVICES_H

#include "toolgate.h"
#include "base/closer.h"
#include "base/util.h"
#include "runtime/control_services.h"

#endif
