/*
 * hook_services.h — what the agent hooks front (src/hook/) needs beyond
 * include/toolgate.h: the runtime's narrow API for it
 * (runtime/hook_services.h: a call run with a strategy, the policy
 * sandbox, what is recorded), the strategy a call is run with
 * (chain/strategy.h) and the small helpers it builds with (closing uv
 * handles together, tg__errf, tg__strdup). The front includes this and
 * nothing of the layers below (but lua/).
 */
#ifndef TG_KIT_HOOK_SERVICES_H
#define TG_KIT_HOOK_SERVICES_H

#include "toolgate.h"
#include "base/closer.h"
#include "base/util.h"
#include "chain/strategy.h"
#include "runtime/hook_services.h"

#endif
