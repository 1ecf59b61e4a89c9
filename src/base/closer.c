/* closer.c — counted closes of libuv handles (closer.h). */
#include <stdlib.h>
#include "closer.h"

static void called_back(uv_handle_t *h, int heap) {
  tg_closer *c = h->data;
  if (heap) free(h);
  if (--c->closing == 0 && c->closed) c->closed(c);
}

static void closed_embedded(uv_handle_t *h) { called_back(h, 0); }
static void closed_heap(uv_handle_t *h) { called_back(h, 1); }

void tg__close(tg_closer *c, uv_handle_t *h, int heap) {
  if (!h || !h->loop || uv_is_closing(h)) return;
  h->data = c;
  c->closing++;
  uv_close(h, heap ? closed_heap : closed_embedded);
}
