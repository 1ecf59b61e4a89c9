/*
 * call_approver.c — tg_call_start_approved (call_approver.h): hands the
 * chain the call and its approver, like api.c does for tg_call_start.
 */
#include "runtime.h"
#include "call_approver.h"

int tg_call_start_approved(tg_runtime *rt, const tg_call_request *req,
                           tg_approver_cb approver, void *approver_ud,
                           tg_done_cb done, void *ud, char err[TG_ERRMSG]) {
  return tg__chain_call_start_approved(&rt->chain, req, approver, approver_ud,
                                       done, ud, err);
}
