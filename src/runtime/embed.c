/*
 * embed.c — a host's loop turns the runtime's loop: it watches the backend
 * fd, keeps a timer of tg_runtime_timeout() ms and calls
 * tg_runtime_run_once() when either fires.
 *
 * libuv alone does not keep that contract when the loop is idle: the
 * reload triggers (the folder watch, the control socket) are unref'd so
 * that they never keep a loop alive, and with nothing else pending the
 * loop is "not alive": uv_run(UV_RUN_NOWAIT) returns without polling (the
 * fd stays readable: the host spins) and uv_backend_timeout() says 0 (the
 * host spins too). The pump, an active handle of our own, is ref'd only
 * while we ask libuv about the loop, so that libuv polls and counts the
 * timers as if something waited, and unref'd again so that tg_runtime_run
 * still returns when no call is pending. (An async handle: its eventfd is
 * a permanent watcher, so uv__io_poll never skips epoll_wait for want of
 * watchers and stale registrations are always drained.)
 *
 * A new fd (a process's pipe, a control connection) joins libuv's epoll
 * set only at its next poll; uv_backend_timeout() says 0 until then, so
 * the host turns the loop once more at once.
 */
#include <errno.h>
#include <stdlib.h>
#include "embed.h"
#include "base/closer.h"
#include "runtime.h"

struct tg_embed {
  uv_async_t pump;   /* never sent: only its being active counts */
  tg_closer closer;  /* the struct goes with the close callback */
};

static void pump_cb(uv_async_t *a) { (void)a; }

static void embed_closed(tg_closer *c) {
  free(tg__owner_of(c, tg_embed, closer));
}

/* The pump, made on first use: a runtime never embedded has none. */
static tg_embed *embed_of(tg_runtime *rt) {
  if (rt->embed) return rt->embed;
  tg_embed *e = calloc(1, sizeof *e);
  if (!e) return NULL;
  if (uv_async_init(rt->core.loop, &e->pump, pump_cb) < 0) {
    free(e);
    return NULL;
  }
  uv_unref((uv_handle_t *)&e->pump);
  e->closer.closed = embed_closed;
  rt->embed = e;
  return e;
}

void tg__embed_stop(tg_runtime *rt) {
  if (!rt->embed) return;
  tg__close(&rt->embed->closer, (uv_handle_t *)&rt->embed->pump, 0);
  rt->embed = NULL;
}

int tg_runtime_backend_fd(tg_runtime *rt) {
  if (!embed_of(rt)) return -ENOMEM;
  return uv_backend_fd(rt->core.loop);
}

int tg_runtime_timeout(tg_runtime *rt) {
  uv_loop_t *loop = rt->core.loop;
  tg_embed *e = embed_of(rt);
  if (!e) return 0;
  uv_ref((uv_handle_t *)&e->pump);
  uv_update_time(loop); /* the clock may be stale: counted from now */
  int ms = uv_backend_timeout(loop);
  uv_unref((uv_handle_t *)&e->pump);
  return ms;
}

int tg_runtime_run_once(tg_runtime *rt) {
  uv_loop_t *loop = rt->core.loop;
  tg_embed *e = embed_of(rt);
  if (e) uv_ref((uv_handle_t *)&e->pump);
  uv_run(loop, UV_RUN_NOWAIT);
  /* rt may be freed by now only if a callback freed it: not allowed */
  if (e) uv_unref((uv_handle_t *)&e->pump);
  return uv_loop_alive(loop);
}
