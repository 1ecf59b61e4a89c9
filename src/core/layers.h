/*
 * layers.h — the layers added from C (tg_layer_add): four optional
 * functions around model calls and tool calls. They run in
 * registration order; one that fails is told as a layer_error event and
 * the next runs — a layer never stops what it wraps. The policies' own
 * layers (tg.before_chat / tg.after_chat) are the policy layer's
 * (policy/chat_side.h): the runtime runs these first, then those.
 */
#ifndef TG_LAYERS_H
#define TG_LAYERS_H

#include "toolgate.h"

struct tg_core;

typedef enum {
  TG_LAYER_BEFORE_CHAT = 0,
  TG_LAYER_AFTER_CHAT,
  TG_LAYER_BEFORE_TOOL,
  TG_LAYER_AFTER_TOOL,
  TG_LAYER__COUNT
} tg_layer_kind;

/* "before_chat", ... */
const char *tg__layer_kind_name(tg_layer_kind k);

typedef struct {
  int id;                      /* 0: removed (compacted after the round) */
  char *name;
  tg_layer l;
} tg_layer_entry;

typedef struct tg_layers {
  tg_layer_entry *v;
  size_t n, cap;
  int next_id;
  int running;                 /* rounds under way: removals only mark */
  size_t count[TG_LAYER__COUNT]; /* live layers with each function */
} tg_layers;

int tg__layers_add(struct tg_core *core, const tg_layer *l, char err[TG_ERRMSG]);
void tg__layers_remove(struct tg_core *core, int id);

/* Is there a C layer of kind k? (the hot path of every call asks) */
static inline int tg__layers_any(const struct tg_layers *ls, tg_layer_kind k) {
  return ls && ls->count[k] != 0;
}

/* Runs the C layers of kind k, in registration order, on ctx. Layers
 * added meanwhile wait for the next round. */
void tg__layers_run(struct tg_core *core, tg_layer_kind k,
                    const tg_layer_ctx *ctx);

/* The layer_error event: layer k (where: "C layer 'name'", a policy's
 * file:line) failed with msg on ctx; under origin (NULL: current). */
void tg__layer_error(struct tg_core *core, void *origin, const char *layer,
                     const char *where, const char *msg,
                     const tg_layer_ctx *ctx);

void tg__layers_free(struct tg_core *core);

#endif
