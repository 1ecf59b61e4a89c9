/*
 * mcp_services.h — what the MCP front needs from the runtime beyond the
 * public API (include/toolgate.h): a call that carries its own approver
 * (src/runtime/call_approver.h has what it does).
 */
#ifndef TOOLGATE_KIT_MCP_SERVICES_H
#define TOOLGATE_KIT_MCP_SERVICES_H

#include "toolgate.h"
#include "runtime/call_approver.h"

#endif
