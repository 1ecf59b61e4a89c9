/*
 * closer.h — closing the libuv handles an object owns, counted: libuv
 * calls back after uv_close, so an object may only be freed once the last
 * of its handles has called back. Every owner (a call, an attempt, a
 * process, a control connection, the folder watch) closes through here,
 * so that rule is kept in one place.
 */
#ifndef TG_CLOSER_H
#define TG_CLOSER_H

#include <stddef.h>
#include <uv.h>

typedef struct tg_closer {
  int closing;                          /* handles whose callback is due */
  void (*closed)(struct tg_closer *c);  /* after each callback that leaves
                                           none due: may free the owner */
} tg_closer;

/* The owner of closer field m. */
#define tg__owner_of(c, T, m) ((T *)(void *)((char *)(c) - offsetof(T, m)))

/* Closes h (nothing when it was never initialised or already closes);
 * heap: h was malloc'd and is freed after its callback. h->data is
 * taken over: no other callback of h runs after uv_close. */
void tg__close(tg_closer *c, uv_handle_t *h, int heap);

#endif
