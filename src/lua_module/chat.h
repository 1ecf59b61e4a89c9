/*
 * chat.h — what the chat side's files share (chat.c: turns, chats,
 * routing, budgets, the clock; chat_layers.c: host layers; notify.c:
 * notifications and the progress manager): the per-runtime chat state
 * and the state-table fields they keep host functions in.
 *
 * Host code runs in two ways here. Subscribers (on_notification,
 * on_progress_change, a progress item's on_cancel) are callbacks like
 * on_event: an error they raise stops the loop and is raised again from
 * the method the host called. Layers are not: a layer that raises is
 * logged (a layer_error event) and skipped, so a turn never fails because
 * of one — that is what layers promise (toolgate.h, tg_layer).
 *
 * Ownership: what C keeps a pointer to (a layer's {r, id}, the clock's
 * time) is a userdata anchored in the runtime's state table, which
 * outlives the C runtime (runtime.c: close_now frees the runtime first).
 * Option tables are copied raw and read strictly (tg__lm_copy_opts).
 */
#ifndef TG_LUA_MODULE_CHAT_H
#define TG_LUA_MODULE_CHAT_H

#include "lua_module.h"

#define CHAT_FIELD "chat"               /* [1] = the lchat userdata */
#define LAYERS_FIELD "chat_layers"      /* id -> {hlayer, before_chat = fn, ...} */
#define NOTIFY_FIELD "notify_handlers"  /* id -> fn */
#define PROGRESS_FIELD "progress_handlers" /* id -> fn */
#define CANCEL_FIELD "progress_cancel"  /* item id -> on_cancel */

/* Per runtime, anchored in its state table. */
typedef struct {
  lrt *r;
  int64_t clock_ms;  /* rt:set_clock's time */
  int notify_sub, progress_sub;     /* our C subscriptions (0: none) */
  int next_notify, next_progress;   /* handler ids given out */
} lchat;

/* The runtime's chat state, made on first use. */
lchat *tg__lm_chat_of(lua_State *L, lrt *r);

#endif
