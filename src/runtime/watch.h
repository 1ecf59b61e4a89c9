/*
 * watch.h — two of the reload triggers: a watch on the policies
 * folder (uv_fs_event, debounced with a uv_timer) and a signal (SIGHUP,
 * only when the host asks for it). Both call tg__reload on the loop, so a
 * reload never runs in the middle of a stage. The third trigger, the
 * control socket, is the control front (src/control/server.c).
 *
 * Their handles are unref'd: watching never keeps a loop alive on its
 * own, so a host's uv_run / rt:run() returns when no call is pending. A
 * host that wants to keep serving reloads keeps its loop running (the
 * `toolgate watch` command keeps a signal handle of its own for that).
 */
#ifndef TG_WATCH_H
#define TG_WATCH_H

#include <uv.h>
#include <cjson/cJSON.h>
#include "toolgate.h"

/* Quiet time after the last change before the folder is reloaded: an
 * editor's save is several events (temp file, rename, chmod); a burst of
 * saves is one reload. */
#define TG_WATCH_DEBOUNCE_MS 75

/* Is `name` (a file in the policies folder) one whose change matters?
 * *.lua files that are not dot files; editor temp files and backups
 * (.x.lua.swp, x.lua~, #x.lua#, 4913) are not. */
int tg__watch_name_matters(const char *name);

/* Stops watching and frees the watch (through the handles' close
 * callbacks, which touch only the watch). Safe when not watching. */
void tg__watch_stop(tg_runtime *rt);

/* Watches rt->policies_dir again: after the folder was replaced, moved
 * back, or a reload named another folder. Failures become policy_error
 * events; the watch tries again after the next successful reload. */
void tg__watch_rearm(tg_runtime *rt);

/* 1 when the folder went away under the watch and it is not re-armed. */
int tg__watch_lost(tg_runtime *rt);

/* Stops the reload signal handler. Safe when there is none. */
void tg__reload_signal_stop(tg_runtime *rt);

#endif
