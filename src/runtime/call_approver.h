/*
 * call_approver.h — a call that carries its own approver. A front that
 * starts calls for several askers at once (the MCP server: one call per
 * client request, each asked through its own client) gives each call the
 * approver that can ask for it, instead of one approver for the runtime
 * that must then find out whose call it is. The fronts reach this
 * through src/kit/mcp_services.h.
 */
#ifndef TOOLGATE_RUNTIME_CALL_APPROVER_H
#define TOOLGATE_RUNTIME_CALL_APPROVER_H

#include "toolgate.h"

/* tg_call_start, with approver (and approver_ud) answering this call's
 * asks in place of the runtime's approver (tg_runtime_set_approver).
 * The calls its tool makes (ctx.call) go to the runtime's approver. The
 * approver is not called after done. */
int tg_call_start_approved(tg_runtime *rt, const tg_call_request *req,
                           tg_approver_cb approver, void *approver_ud,
                           tg_done_cb done, void *ud, char err[TG_ERRMSG]);

#endif
