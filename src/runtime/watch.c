/*
 * watch.c — reloading when the policies folder changes, and on a signal.
 *
 * The folder watch is one uv_fs_event on the folder itself (not recursive:
 * that is not portable, and only the folder's own *.lua files load; a
 * helper module in a subfolder is picked up with the next reload). Editors
 * save in many ways — in place, or a temp file renamed over the original,
 * or the original renamed to a backup first — so every event on a file
 * that matters, or with no file name at all, (re)starts a debounce timer,
 * and the folder is reloaded once it has been quiet for
 * TG_WATCH_DEBOUNCE_MS. The reload reads the whole folder again, so it
 * does not matter which events were merged or lost.
 *
 * When the folder itself is moved or deleted (an event named after the
 * folder), the watch is re-armed on the path after the quiet time; if
 * nothing is there the watch is "lost" and re-armed after the next reload
 * that succeeds (SIGHUP or `toolgate reload` once the folder is back).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "watch.h"
#include "base/closer.h"
#include "policy/generation.h"
#include "runtime.h"

struct tg_watch {
  uv_fs_event_t fs;
  uv_timer_t debounce;
  tg_runtime *rt;
  char *base;             /* the folder's own name, for events about it */
  tg_closer closer;       /* the struct goes with the last close */
  int folder_moved;       /* re-arm when the quiet time ends */
  int lost;               /* the folder is gone: not watching anything */
};

int tg__watch_name_matters(const char *n) {
  /* the loader's rule (policy_files.c): editor temp files and backups end
   * in something else or start with a dot; tests are not policies */
  return tg__is_policy_file(n);
}

/* "policies" for "/x/policies/" */
static char *base_name(const char *dir) {
  size_t len = strlen(dir);
  while (len > 1 && dir[len - 1] == '/') len--;
  size_t start = len;
  while (start > 0 && dir[start - 1] != '/') start--;
  return strndup(dir + start, len - start);
}

static void emit_watch_error(tg_runtime *rt, const char *fmt, const char *dir,
                             int code) {
  char msg[TG_ERRMSG];
  snprintf(msg, sizeof msg, fmt, dir, uv_strerror(code));
  cJSON *d = cJSON_CreateObject();
  cJSON_AddStringToObject(d, "error", msg);
  cJSON_AddNumberToObject(d, "generation", (double)tg_runtime_generation(rt));
  cJSON_AddStringToObject(d, "trigger", "watch");
  tg__emit(&rt->core, NULL, "policy_error", NULL, d);
}

static void debounce_cb(uv_timer_t *t) {
  tg_watch *w = t->data;
  tg_runtime *rt = w->rt;
  char err[TG_ERRMSG];
  if (w->folder_moved) {
    w->folder_moved = 0;
    tg__watch_rearm(rt);
  }
  /* The outcome is told by the policy_loaded / policy_error event. */
  tg__reload(rt, NULL, "watch", NULL, err);
}

static void fs_cb(uv_fs_event_t *h, const char *name, int events,
                  int status) {
  tg_watch *w = h->data;
  if (!w->rt) return;
  if (status < 0) {
    emit_watch_error(w->rt, "watching '%s' failed: %s", w->rt->policies_dir,
                     status);
    return;
  }
  int folder = name && (events & UV_RENAME) && strcmp(name, w->base) == 0;
  if (name && !folder && !tg__watch_name_matters(name)) return;
  if (folder) w->folder_moved = 1;
  /* restarting the timer is the debounce: it fires once things are quiet */
  uv_timer_start(&w->debounce, debounce_cb, TG_WATCH_DEBOUNCE_MS, 0);
}

static int arm(tg_watch *w, const char *dir) {
  char *b = base_name(dir);
  if (!b) return UV_ENOMEM;
  free(w->base);
  w->base = b;
  int rc = uv_fs_event_start(&w->fs, fs_cb, dir, 0);
  w->lost = rc < 0;
  return rc;
}

void tg__watch_rearm(tg_runtime *rt) {
  tg_watch *w = rt->watch;
  if (!w || !rt->policies_dir) return;
  uv_fs_event_stop(&w->fs);
  int rc = arm(w, rt->policies_dir);
  /* a folder that is gone shows as the reload's own error */
  struct stat st;
  if (rc < 0 && stat(rt->policies_dir, &st) == 0)
    emit_watch_error(rt, "cannot watch '%s' again: %s", rt->policies_dir, rc);
}

int tg__watch_lost(tg_runtime *rt) { return rt->watch && rt->watch->lost; }

static void watch_closed(tg_closer *c) {
  tg_watch *w = tg__owner_of(c, tg_watch, closer);
  free(w->base);
  free(w);
}

void tg__watch_stop(tg_runtime *rt) {
  tg_watch *w = rt->watch;
  if (!w) return;
  rt->watch = NULL;
  w->rt = NULL;
  tg__close(&w->closer, (uv_handle_t *)&w->fs, 0);
  tg__close(&w->closer, (uv_handle_t *)&w->debounce, 0);
}

static int watch_start(tg_runtime *rt, char *err) {
  tg_watch *w = calloc(1, sizeof *w);
  if (!w) {
    tg__errf(err, TG_ERRMSG, "out of memory");
    return -ENOMEM;
  }
  w->rt = rt;
  uv_fs_event_init(rt->core.loop, &w->fs);
  uv_timer_init(rt->core.loop, &w->debounce);
  w->fs.data = w->debounce.data = w;
  w->closer.closed = watch_closed;
  rt->watch = w;
  int rc = arm(w, rt->policies_dir);
  if (rc < 0) {
    tg__errf(err, TG_ERRMSG,
             "cannot watch the policies folder '%s': %s%s", rt->policies_dir,
             uv_strerror(rc),
             rc == UV_ENOSPC ? " (the inotify watch limit is reached: raise "
                               "fs.inotify.max_user_watches)"
                             : "");
    tg__watch_stop(rt);
    return rc;
  }
  /* watching alone must not keep the host's loop running */
  uv_unref((uv_handle_t *)&w->fs);
  uv_unref((uv_handle_t *)&w->debounce);
  return 0;
}

int tg_runtime_watch(tg_runtime *rt, int on, char err[TG_ERRMSG]) {
  if (!on) {
    tg__watch_stop(rt);
    return 0;
  }
  if (rt->watch) return 0;
  if (rt->core.freeing) {
    tg__errf(err, TG_ERRMSG, "the runtime is shutting down");
    return -ESHUTDOWN;
  }
  if (!rt->policies_dir) {
    tg__errf(err, TG_ERRMSG, "there is no policies folder to watch: set "
             "policies_dir (or load a folder) first");
    return -EINVAL;
  }
  return watch_start(rt, err);
}

/* ---- the reload signal ---------------------------------------------- */

static void signal_cb(uv_signal_t *h, int signum) {
  char err[TG_ERRMSG];
  tg__reload(h->data, NULL, "signal", NULL, err);
}

static void signal_closed(uv_handle_t *h) { free(h); }

void tg__reload_signal_stop(tg_runtime *rt) {
  if (!rt->reload_signal) return;
  uv_close((uv_handle_t *)rt->reload_signal, signal_closed);
  rt->reload_signal = NULL;
}

int tg_runtime_reload_on_signal(tg_runtime *rt, int signum,
                                char err[TG_ERRMSG]) {
  tg__reload_signal_stop(rt);
  if (signum == 0) return 0;
  uv_signal_t *h = malloc(sizeof *h);
  if (!h) {
    tg__errf(err, TG_ERRMSG, "out of memory");
    return -ENOMEM;
  }
  uv_signal_init(rt->core.loop, h);
  h->data = rt;
  int rc = uv_signal_start(h, signal_cb, signum);
  if (rc < 0) {
    tg__errf(err, TG_ERRMSG, "cannot handle signal %d: %s", signum,
             uv_strerror(rc));
    uv_close((uv_handle_t *)h, signal_closed);
    return rc;
  }
  uv_unref((uv_handle_t *)h);
  rt->reload_signal = h;
  return 0;
}
