/*
 * read_approvals.c — a runtime without a database of its own looking
 * calls up in the remembered approvals of one it only reads, for
 * `toolgate explain --event`: explain's runtime records nothing, yet an
 * ask the hook's runtime would find covered by a user's "always" must be
 * an allow there too. The chain asks them as it asks its own store
 * (core.sink.approval_find, approve.c's tg__always_covers: the same
 * session, project, tool and args matching); nothing is stored, counted
 * or audited. The id of the approval that last covered a call is kept,
 * so explain can name it.
 */
#include <errno.h>
#include <stdio.h>
#include "runtime.h"
#include "runtime/front_api.h"
#include "store/store.h"

static int find(void *ud, tg_approval_query *q, int64_t *id) {
  tg_runtime *rt = ud;
  int hit = tg__approval_find(rt->read_approvals, q, id);
  if (hit) rt->read_approval_hit = *id;
  return hit;
}

int tg__runtime_read_approvals(tg_runtime *rt, tg_store *st,
                               char err[TG_ERRMSG]) {
  if (rt->store) {
    snprintf(err, TG_ERRMSG, "this runtime looks approvals up in its own "
             "database");
    return -EINVAL;
  }
  rt->read_approvals = st;
  rt->read_approval_hit = 0;
  rt->core.sink.ud = st ? rt : NULL;
  rt->core.sink.approval_find = st ? find : NULL;
  return 0;
}

int64_t tg__runtime_read_approval_hit(tg_runtime *rt) {
  int64_t id = rt->read_approval_hit;
  rt->read_approval_hit = 0;
  return id;
}
